#include "checker/lang/nesting.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

namespace qpcheck::lang {

namespace {

using model::Expr;
using model::Op;
using model::SOp;
using model::Stmt;

class DepthCheck {
 public:
  void fn(const model::Fn& f) { fn_depth_[&f] = expr(f.body); }
  void proc(const model::Proc& p) { proc_depth_[&p] = stmts(p.body); }

  // Depth of `e` through calls. The walk itself recurses only on the tree of `e` (its height is bounded by the
  // parser); a called function contributes its recorded depth.
  int expr(const Expr* e) {
    if (e == nullptr) return 0;
    if (e->a == nullptr && e->args.empty()) return 1;  // a leaf (kConst, kSlot, kFrame, kAt of a single process)
    if (auto it = expr_depth_.find(e); it != expr_depth_.end()) return it->second;  // shared subtrees: once each
    int d = std::max({expr(e->a), expr(e->b), expr(e->c)});
    for (const Expr* a : e->args) d = std::max(d, expr(a));
    if (e->op == Op::kCallFn) {
      auto it = fn_depth_.find(e->fn);
      d = std::max(d, it == fn_depth_.end() ? 0 : it->second);
    }
    return expr_depth_[e] = bound(d + 1, e->span);
  }
  int stmts(const std::vector<const Stmt*>& body) {
    int d = 0;
    for (const Stmt* s : body) d = std::max(d, stmt(s));
    return d;
  }
  int stmt(const Stmt* s) {
    int d = std::max({expr(s->lhs), expr(s->rhs), stmts(s->body), stmts(s->else_body)});
    for (const Expr* a : s->args) d = std::max(d, expr(a));
    if (s->op == SOp::kCall) {
      auto it = proc_depth_.find(s->proc);
      d = std::max(d, it == proc_depth_.end() ? 0 : it->second);
    }
    return bound(d + 1, s->span);
  }

 private:
  static int bound(int d, Span span) {
    if (d > kMaxCallDepth) {
      throw SpecError(span, fmt::format("nested more than {} levels deep counting the functions and procedures it "
                                        "calls; split it up",
                                        kMaxCallDepth));
    }
    return d;
  }
  std::unordered_map<const Expr*, int> expr_depth_;
  std::unordered_map<const model::Fn*, int> fn_depth_;
  std::unordered_map<const model::Proc*, int> proc_depth_;
};

}  // namespace

void check_nesting(const model::Model& model) {
  DepthCheck c;
  for (const model::Fn& f : model.fns) c.fn(f);  // declaration order: callees first
  for (const model::Proc& p : model.procs) c.proc(p);
  for (const model::Step& st : model.steps) {
    c.expr(st.guard);
    c.stmts(st.body);
  }
  for (const model::ProcessInstance& pi : model.processes) {
    for (const auto& edges : pi.edges) {
      for (const model::Edge& e : edges) {
        for (const Expr* x : e.conds) c.expr(x);
      }
    }
    for (const auto& lists : pi.end_conds) {
      for (const auto& list : lists) {
        for (const Expr* x : list) c.expr(x);
      }
    }
  }
  for (const model::Rule& r : model.rules) {
    c.expr(r.guard);
    c.stmts(r.body);
  }
  for (const model::Invariant& inv : model.invariants) c.expr(inv.expr);
}

}  // namespace qpcheck::lang
