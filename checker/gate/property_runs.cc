#include "checker/gate/property_runs.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "checker/gate/liveness_runs.h"
#include "checker/model/eval.h"
#include "checker/model/property_subset.h"
#include "checker/model/model_system.h"
#include "checker/trace/build.h"

namespace qpcheck::gate {

const char* status_name(Status s) {
  switch (s) {
    case Status::kAsExpected: return "as-expected";
    case Status::kNewViolation: return "new-violation";
    case Status::kNoLongerViolated: return "no-longer-violated";
    case Status::kInconclusive: return "inconclusive";
  }
  return "?";
}

Status PropertyResult::status() const {
  if (actual == "violated") return expected_violated ? Status::kAsExpected : Status::kNewViolation;
  if (actual == "holds") return expected_violated ? Status::kNoLongerViolated : Status::kAsExpected;
  return Status::kInconclusive;
}

namespace {

using trace::source_ref;

// An invariant `forall x in T: ... A => B` is vacuous when A is false for every binding in every reachable state.
struct Antecedent {
  const model::Expr* expr = nullptr;          // nullptr: the invariant is not an implication (never vacuous)
  std::vector<const model::Expr*> binders;    // enclosing foralls, outermost first
  bool triggered = false;
};

Antecedent antecedent_of(const model::Invariant& inv) {
  Antecedent a;
  const model::Expr* e = inv.expr;
  uint64_t bindings = 1;
  while (e->op == model::Op::kForall) {
    a.binders.push_back(e);
    bindings *= static_cast<uint64_t>(e->count);
    if (bindings > 65536) return Antecedent{};
    e = e->a;
  }
  if (e->op == model::Op::kImplies) a.expr = e->a;
  return a;
}

// The reachability run: explores every reachable state with no property stopping the search, and records which
// properties are violated somewhere, which actions fire (including failing steps) and which antecedents ever hold.
class Observer : public model::TransitionSystem, public model::SuccessorSink {
 public:
  Observer(model::ModelSystem& sys, const model::Model& m, bool check_deadlock)
      : sys_(sys), model_(m), machine_(m), check_deadlock_(check_deadlock) {
    for (const model::Invariant& inv : m.invariants) antecedents_.push_back(antecedent_of(inv));
    // `P leads_to Q` is vacuous, as `A => B` is, when P is false in every reachable state.
    for (const model::Liveness& l : m.liveness) {
      Antecedent a;
      if (l.kind == model::Liveness::Kind::kLeadsTo) a.expr = l.p;
      leads_to_.push_back(a);
    }
  }

  int state_words() const override { return sys_.state_words(); }
  std::vector<std::vector<uint64_t>> initial_states() override { return sys_.initial_states(); }
  void set_interrupt(const std::atomic<bool>* flag) override {
    sys_.set_interrupt(flag);
    machine_.interrupt = flag;
  }
  uint64_t memory_bytes() const override { return sys_.memory_bytes(); }
  void set_deadline(std::chrono::steady_clock::time_point d) override {
    sys_.set_deadline(d);
    machine_.deadline = d;
  }
  bool valid_end(const uint64_t* state) override { return sys_.valid_end(state); }

  int successors(const uint64_t* state, model::SuccessorSink& sink) override {
    outer_ = &sink;
    int n = sys_.successors(state, *this);
    if (n == 0 && check_deadlock_ && !sys_.valid_end(state)) violated.insert("deadlock");
    return n;
  }
  void successor(uint32_t action, const uint64_t* state) override { outer_->successor(action, state); }
  // A failing step is recorded, not reported: the search goes on (the step itself has no successor).
  void failure(uint32_t action, const model::Violation& v) override {
    violated.insert(v.property);
    failed_actions.insert(action);
  }

  std::optional<model::Violation> check_invariants(const uint64_t* state) override {
    machine_.state = sys_.unpack(state);
    for (size_t i = 0; i < model_.invariants.size(); ++i) {
      const model::Invariant& inv = model_.invariants[i];
      if (!violated.count(inv.name)) {
        try {
          if (!machine_.eval(inv.expr)) violated.insert(inv.name);
        } catch (const model::StepFailure&) {
          violated.insert(inv.name);  // cannot be evaluated: a violation of this invariant
        }
      }
      Antecedent& a = antecedents_[i];
      if (a.expr != nullptr && !a.triggered) a.triggered = any_binding(a, 0);
    }
    for (Antecedent& a : leads_to_) {
      if (a.expr != nullptr && !a.triggered) a.triggered = any_binding(a, 0);
    }
    return std::nullopt;
  }

  std::set<std::string> violated;
  std::set<uint32_t> failed_actions;
  const std::vector<Antecedent>& antecedents() const { return antecedents_; }
  const std::vector<Antecedent>& leads_to() const { return leads_to_; }  // per Model::liveness

 private:
  bool any_binding(const Antecedent& a, size_t k) {
    if (k == a.binders.size()) {
      try {
        return machine_.eval(a.expr) != 0;
      } catch (const model::StepFailure&) {
        return true;  // evaluated to an error: not vacuous
      }
    }
    const model::Expr* q = a.binders[k];
    for (int64_t v = q->lo; v < q->lo + q->count; ++v) {
      machine_.bind(static_cast<int>(q->value), v);
      if (any_binding(a, k + 1)) return true;
    }
    return false;
  }

  model::ModelSystem& sys_;
  const model::Model& model_;
  model::Machine machine_;
  bool check_deadlock_;
  model::SuccessorSink* outer_ = nullptr;
  std::vector<Antecedent> antecedents_;
  std::vector<Antecedent> leads_to_;
};

// Properties a statement list can fail with (through procedure calls too).
void failable(const std::vector<const model::Stmt*>& body, std::set<std::string>& out,
              std::set<const model::Proc*>& seen) {
  for (const model::Stmt* s : body) {
    if (s->op == model::SOp::kFail || s->op == model::SOp::kAssert) out.insert(s->property);
    failable(s->body, out, seen);
    failable(s->else_body, out, seen);
    if (s->op == model::SOp::kCall && s->proc != nullptr && seen.insert(s->proc).second) {
      failable(s->proc->body, out, seen);
    }
  }
}

}  // namespace

model::BuildLimits build_limits(const model::SearchLimits& limits, const std::atomic<bool>* interrupt) {
  model::BuildLimits b;
  if (limits.max_memory_bytes) b.max_bytes = std::min(b.max_bytes, limits.max_memory_bytes / 4);
  b.interrupt = interrupt;
  return b;
}

PropertyCheck check_properties(model::Model& m, const std::vector<lang::PropertyInfo>& properties,
                               const Options& opt, const std::string& path) {
  PropertyCheck out;
  const lang::SourceManager& sources = *m.sources;
  explore::Options eo;
  eo.strategy = explore::Strategy::kBfs;
  eo.limits = opt.limits;
  eo.check_deadlock = false;  // the observer decides deadlocks itself
  eo.progress = opt.progress;
  eo.interrupt = opt.interrupt;
  const model::BuildLimits build = build_limits(opt.limits, opt.interrupt);

  model::ModelSystem reach_sys(m, build);
  Observer observer(reach_sys, m, opt.check_deadlock);
  model::CheckResult reach = explore::explore(observer, eo);
  out.limit = reach.limit;
  out.stats = trace::trace_stats(reach.stats, reach_sys.layout().bits());
  bool exhaustive = reach.limit.empty();

  // Coverage: which actions fired, grouped into statements (process steps) and rule instances.
  model::ModelSystem describer(m, build);
  std::vector<uint64_t> init = describer.initial_states().at(0);
  uint32_t actions = describer.action_count();
  std::vector<bool> fired(actions, false);
  for (uint32_t a = 0; a < actions; ++a) {
    fired[a] = (a < reach.action_fired.size() && reach.action_fired[a]) || observer.failed_actions.count(a);
  }
  std::set<std::string> talked_about;  // fail/assert properties some fired action can fail with
  using Key = std::tuple<int, uint32_t, uint32_t>;
  auto key = [](const lang::Span& s) { return Key{s.file, s.begin, s.end}; };
  std::map<Key, const std::vector<const model::Stmt*>*> body_of;  // statement or rule span -> its body
  for (const model::Step& st : m.steps) body_of.emplace(key(st.span), &st.body);
  for (const model::Rule& r : m.rules) body_of.emplace(key(r.span), &r.body);
  std::set<Key> scanned;  // bodies already searched for fail/assert properties
  std::map<Key, size_t> statement_index;
  std::vector<std::pair<lang::Span, bool>> statements;  // process statements: executed by any instance?
  out.coverage.complete = exhaustive;
  out.coverage.actions = actions;
  for (uint32_t a = 0; a < actions; ++a) {
    model::ActionInfo info = describer.describe(init.data(), a, nullptr);
    if (fired[a]) {
      ++out.coverage.actions_fired;
      auto it = body_of.find(key(info.span));
      if (it != body_of.end() && scanned.insert(it->first).second) {
        std::set<const model::Proc*> seen;
        failable(*it->second, talked_about, seen);
      }
    }
    if (info.is_rule) {
      if (!fired[a]) out.coverage.rules_never_fired.push_back(info.actor);
      continue;
    }
    auto [it, fresh] = statement_index.emplace(key(info.span), statements.size());
    if (fresh) statements.emplace_back(info.span, false);
    if (fired[a]) statements[it->second].second = true;
  }
  std::sort(statements.begin(), statements.end(), [](const auto& a, const auto& b) {
    return a.first.file != b.first.file ? a.first.file < b.first.file : a.first.begin < b.first.begin;
  });
  for (const auto& [span, executed] : statements) {
    if (!executed) out.coverage.statements_never_executed.push_back(source_ref(sources, span));
  }

  for (const lang::PropertyInfo& info : properties) {
    PropertyResult pr;
    pr.name = info.name;
    pr.kind = info.kind;
    pr.source = source_ref(sources, info.span);
    if (info.kind == "liveness") {
      const model::Liveness* l = find_liveness(m, info.name);
      LivenessRun lr = run_liveness(reach_sys, *l, eo, path);
      pr.actual = lr.result.outcome == model::Outcome::kViolated ? "violated"
                  : lr.result.outcome == model::Outcome::kHolds  ? "holds"
                                                                 : "inconclusive";
      if (pr.actual == "violated") pr.counterexample = std::move(lr.trace);
      size_t k = static_cast<size_t>(l - m.liveness.data());
      const Antecedent& a = observer.leads_to()[k];
      if (pr.actual == "holds" && exhaustive && opt.coverage && a.expr != nullptr && !a.triggered) {
        pr.vacuous = true;
        pr.vacuity = fmt::format("its P '{}' is false in every reachable state", sources.text(a.expr->span));
      }
      out.properties.push_back(std::move(pr));
      continue;
    }
    bool violated = observer.violated.count(info.name) > 0;
    pr.actual = violated ? "violated" : exhaustive ? "holds" : "inconclusive";
    if (violated) {
      // A shortest counterexample for this property alone.
      RestrictedRun r = run_restricted(m, {info.name}, eo, path, "bfs", build);
      pr.counterexample = std::move(r.trace);
    } else if (exhaustive && opt.coverage) {
      if (info.kind == "invariant") {
        for (size_t k = 0; k < m.invariants.size(); ++k) {
          const Antecedent& a = observer.antecedents()[k];
          if (m.invariants[k].name == info.name && a.expr != nullptr && !a.triggered) {
            pr.vacuous = true;
            pr.vacuity = fmt::format("its antecedent '{}' is false in every reachable state",
                                     sources.text(a.expr->span));
          }
        }
      } else if (info.kind == "fail" && !talked_about.count(info.name)) {
        pr.vacuous = true;
        pr.vacuity = "no statement or rule that can fail with it was ever executed";
      }
    }
    out.properties.push_back(std::move(pr));
  }
  if (!opt.coverage) out.coverage = Coverage{};
  return out;
}


RestrictedRun run_restricted(model::Model& m, const std::vector<std::string>& selected, explore::Options eo,
                             const std::string& spec, const std::string& strategy, model::BuildLimits build) {
  model::ScopedInvariantSubset cut(m, selected);
  RestrictedRun out;
  model::ModelSystem sys(m, build);
  model::PropertySubset only(sys, selected);
  eo.check_deadlock = only.checks_deadlock();
  out.result = explore::explore(only, eo);
  out.state_bits = sys.layout().bits();
  if (out.result.outcome == model::Outcome::kViolated) out.trace = trace::build_trace(sys, out.result, spec, strategy);
  return out;
}

void note_properties(trace::Trace& t, const lang::PropertyPlan& plan, const lang::SourceManager& sources) {
  t.checked = plan.checked_names();
  t.not_checked.clear();
  for (const lang::NotChecked& n : plan.not_checked) {
    t.not_checked.push_back(trace::PropertyNote{n.name, n.by, source_ref(sources, n.at), n.reason});
  }
}

}  // namespace qpcheck::gate
