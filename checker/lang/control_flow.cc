#include "checker/lang/control_flow.h"

#include <set>
#include <utility>

#include <fmt/format.h>

namespace qpcheck::lang {

namespace {

using model::Op;

// Process control-flow graph node (before folding into steps).
struct Node {
  enum class K { kStep, kBranch, kChoice, kJump, kEnd } k = K::kEnd;
  Span span;
  model::Step* step = nullptr;  // kStep
  int next = -1;                // kStep: next node; kJump: target
  const model::Expr* cond = nullptr;  // kBranch
  int then_n = -1, else_n = -1;       // kBranch
  std::vector<int> alts;              // kChoice
  std::string goto_label;             // kJump with an unresolved label
  Span goto_span;
};

// The graph of one process instance's body, built back to front, then folded into the instance's steps.
class ProcessBody {
 public:
  ProcessBody(const SourceManager& sources, StepChecker& checker, model::Model& m)
      : sources_(sources), checker_(checker), m_(m) {}

  void compile(const std::vector<const Stmt*>& body, Span end_span, const model::Expr* until,
               model::ProcessInstance& pi, std::map<std::string, int>& label_pc, std::set<std::string>& never_at,
               int& end_pc) {
    std::map<std::string, Span> seen_labels;
    check_labels(body, seen_labels);
    int end = add_node(Node{Node::K::kEnd, end_span});
    int entry = block(body, end, -1);
    for (Node& n : nodes_) {
      if (n.k == Node::K::kJump && !n.goto_label.empty()) {
        auto it = labels_.find(n.goto_label);
        if (it == labels_.end()) error(n.goto_span, fmt::format("goto to unknown label '{}'", n.goto_label));
        n.next = it->second;
      }
    }
    // Stored program counters: the entry, every step's continuation, every label; jumps resolved away.
    std::vector<int> pc_of(nodes_.size(), -1);
    std::vector<int> pc_node;
    auto pc = [&](int node) {
      int c = canonical(node);
      if (pc_of[c] < 0) {
        pc_of[c] = static_cast<int>(pc_node.size());
        pc_node.push_back(c);
      }
      return pc_of[c];
    };
    end_nodes_.clear();
    for (int n : end_label_nodes_) end_nodes_.insert(canonical(n));
    int entry_pc = pc(entry);
    for (const auto& [name, node] : labels_) label_pc[name] = pc(node);
    // pc_node grows while edges are expanded: every continuation becomes a stored program counter.
    std::set<int> stood_at{entry_pc};  // program counters a process can be at: the entry and every continuation
    for (size_t i = 0; i < pc_node.size(); ++i) {
      std::vector<const model::Expr*> conds;
      std::set<int> visiting;
      std::vector<model::Edge> edges;
      std::vector<std::vector<const model::Expr*>> ends;
      expand(pc_node[i], conds, visiting, edges, ends);
      if (until != nullptr) {
        // `until U`: no step once U holds, and a state where it holds is a valid end wherever the process stands.
        const model::Expr* not_until = negate(until);
        for (model::Edge& e : edges) e.conds.insert(e.conds.begin(), not_until);
        ends.push_back({until});
      }
      for (model::Edge& e : edges) {
        model::Step* st = const_cast<model::Step*>(e.step);
        st->next_pc = pc(step_next_[st]);
        stood_at.insert(st->next_pc);
      }
      pi.edges.push_back(std::move(edges));
      bool always = false;
      for (const auto& c : ends) always = always || c.empty();
      pi.valid_end.push_back(always);
      pi.end_conds.push_back(always ? decltype(ends){} : std::move(ends));
    }
    pi.pc_names.assign(pc_node.size(), "");
    for (size_t i = 0; i < pc_node.size(); ++i) {
      const Node& n = nodes_[pc_node[i]];
      pi.pc_spans.push_back(n.span);
      if (n.k == Node::K::kEnd) pi.pc_names[i] = "end";
      else pi.pc_names[i] = fmt::format("line {}", sources_.line_col(n.span).first);
    }
    for (const auto& [name, node] : labels_) {
      pi.pc_names[pc_of[canonical(node)]] = name;
      if (!stood_at.count(pc_of[canonical(node)])) never_at.insert(name);
    }
    int end_at = pc_of[canonical(end)];
    end_pc = end_at >= 0 && stood_at.count(end_at) ? end_at : -1;
    m_.slots[pi.pc_slot].hi = static_cast<int64_t>(pc_node.size()) - 1;
    m_.initial[pi.pc_slot] = entry_pc;
  }

 private:
  [[noreturn]] void error(Span span, std::string message) { throw SpecError(span, std::move(message)); }
  std::string where(Span s) const { return sources_.location(s); }

  // Duplicate labels, reported at the second one in source order (the graph is built back to front).
  void check_labels(const std::vector<const Stmt*>& stmts, std::map<std::string, Span>& seen) {
    for (const Stmt* s : stmts) {
      if (s->kind == StmtKind::kLabel) {
        auto [it, fresh] = seen.emplace(s->name.name, s->name.span);
        if (!fresh) {
          error(s->name.span, fmt::format("duplicate label '{}' (first at {})", s->name.name, where(it->second)));
        }
      }
      check_labels(std::vector<const Stmt*>(s->body.begin(), s->body.end()), seen);
      check_labels(std::vector<const Stmt*>(s->else_body.begin(), s->else_body.end()), seen);
      for (const auto& alt : s->alternatives) check_labels(std::vector<const Stmt*>(alt.begin(), alt.end()), seen);
    }
  }

  int add_node(Node n) {
    nodes_.push_back(std::move(n));
    return static_cast<int>(nodes_.size()) - 1;
  }

  int canonical(int node) {
    std::set<int> seen;
    while (nodes_[node].k == Node::K::kJump) {
      if (!seen.insert(node).second) error(nodes_[node].span, "a loop of gotos/breaks that never takes a step");
      node = nodes_[node].next;
    }
    return node;
  }

  // Collects the steps enabled at `node`, folding branch conditions into each edge.
  // Also records in `ends` the conditions under which control reaches the end of the body or an `end` label: a
  // process standing here while one of them holds has terminated (or is at a valid end state).
  void expand(int node, std::vector<const model::Expr*>& conds, std::set<int>& visiting,
              std::vector<model::Edge>& out, std::vector<std::vector<const model::Expr*>>& ends) {
    node = canonical(node);
    const Node& n = nodes_[node];
    if (n.k == Node::K::kEnd || end_nodes_.count(node)) ends.push_back(conds);
    switch (n.k) {
      case Node::K::kEnd: return;
      case Node::K::kStep: out.push_back(model::Edge{conds, n.step}); return;
      case Node::K::kJump: return;
      case Node::K::kBranch:
      case Node::K::kChoice: {
        if (!visiting.insert(node).second) {
          error(n.span, "this loop can go round without taking a step (add an await or a statement)");
        }
        if (n.k == Node::K::kBranch) {
          conds.push_back(n.cond);
          expand(n.then_n, conds, visiting, out, ends);
          conds.back() = negate(n.cond);
          expand(n.else_n, conds, visiting, out, ends);
          conds.pop_back();
        } else {
          for (int a : n.alts) expand(a, conds, visiting, out, ends);
        }
        visiting.erase(node);
        return;
      }
    }
  }

  const model::Expr* negate(const model::Expr* c) {
    // A condition has the model's bool type (the type checker makes one).
    model::Expr& e = m_.exprs.emplace_back();
    e.type = c->type;
    e.span = c->span;
    if (c->op == Op::kConst) {
      e.op = Op::kConst;
      e.value = !c->value;
    } else {
      e.op = Op::kNot;
      e.a = c;
    }
    return &e;
  }

  // Compiles a process-level statement list ending at node `next`; returns the entry node.
  int block(const std::vector<const Stmt*>& stmts, int next, int break_target) {
    // Unreachable: a statement right after goto/break that is not labelled.
    for (size_t i = 0; i + 1 < stmts.size(); ++i) {
      if ((stmts[i]->kind == StmtKind::kGoto || stmts[i]->kind == StmtKind::kBreak) &&
          stmts[i + 1]->kind != StmtKind::kLabel) {
        checker_.warn(stmts[i + 1]->span, "unreachable statement: it follows a goto/break and has no label");
      }
    }
    int entry = next;
    for (size_t i = stmts.size(); i-- > 0;) entry = statement(stmts[i], entry, break_target);
    return entry;
  }
  int block(const std::vector<Stmt*>& stmts, int next, int break_target) {
    return block(std::vector<const Stmt*>(stmts.begin(), stmts.end()), next, break_target);
  }

  int step_node(const Stmt* s, const model::Expr* guard, std::vector<const model::Stmt*> body, int next) {
    model::Step& st = m_.steps.emplace_back();
    st.span = s->span;
    st.guard = guard;
    st.body = std::move(body);
    step_next_[&st] = next;
    Node n{Node::K::kStep, s->span};
    n.step = &st;
    n.next = next;
    return add_node(n);
  }

  int statement(const Stmt* s, int next, int break_target) {
    switch (s->kind) {
      case StmtKind::kLabel: {
        // Duplicates were rejected by check_labels; gotos are resolved after the whole body is built.
        int inner = statement(s->body[0], next, break_target);
        labels_[s->name.name] = inner;
        if (s->end_label) end_label_nodes_.insert(inner);
        return inner;
      }
      case StmtKind::kAwait: {
        const model::Expr* c = checker_.condition(s->expr, "an await condition");
        return step_node(s, c, {}, next);
      }
      case StmtKind::kWhen: {
        const model::Expr* c = nullptr;
        if (s->expr != nullptr) {
          c = checker_.condition(s->expr, "a when condition");
        }
        return step_node(s, c, checker_.atomic_block(s->body, "a when/atomic block"), next);
      }
      case StmtKind::kIf: {
        const model::Expr* c = checker_.condition(s->expr, "an if condition");
        Node n{Node::K::kBranch, s->span};
        n.cond = c;
        n.then_n = block(s->body, next, break_target);
        n.else_n = block(s->else_body, next, break_target);
        return add_node(n);
      }
      case StmtKind::kWhile: {
        const model::Expr* c = checker_.condition(s->expr, "a while condition");
        int w = add_node(Node{Node::K::kBranch, s->span});
        int body = block(s->body, w, next);
        nodes_[w].cond = c;
        nodes_[w].then_n = body;
        nodes_[w].else_n = next;
        return w;
      }
      case StmtKind::kChoose: {
        Node n{Node::K::kChoice, s->span};
        for (const auto& alt : s->alternatives) n.alts.push_back(block(alt, next, break_target));
        return add_node(n);
      }
      case StmtKind::kGoto: {
        Node n{Node::K::kJump, s->span};
        n.goto_label = s->name.name;
        n.goto_span = s->name.span;
        return add_node(n);
      }
      case StmtKind::kBreak: {
        if (break_target < 0) error(s->span, "break outside a while loop");
        Node n{Node::K::kJump, s->span};
        n.next = break_target;
        return add_node(n);
      }
      case StmtKind::kRequire:
        error(s->span, "require is only allowed in atomic bodies (proc, rule, when, atomic); a process uses await");
      case StmtKind::kFor:
        error(s->span, "for loops are atomic; put this one inside a when/atomic block, a proc or a rule");
      case StmtKind::kVar:
        error(s->span, "local variables are declared at the start of a process body");
      default:
        return step_node(s, nullptr, {checker_.atomic_stmt(s, "a process")}, next);
    }
  }

  const SourceManager& sources_;
  StepChecker& checker_;
  model::Model& m_;
  std::vector<Node> nodes_;
  std::map<std::string, int> labels_;
  std::set<int> end_label_nodes_;
  std::set<int> end_nodes_;  // canonical nodes of end labels
  std::map<const model::Step*, int> step_next_;
};

}  // namespace

void compile_process_body(const std::vector<const Stmt*>& body, Span end_span, const SourceManager& sources,
                          StepChecker& checker, model::Model& m, model::ProcessInstance& instance,
                          const model::Expr* until, std::map<std::string, int>& label_pc,
                          std::set<std::string>& never_at, int& end_pc) {
  ProcessBody(sources, checker, m).compile(body, end_span, until, instance, label_pc, never_at, end_pc);
}

}  // namespace qpcheck::lang
