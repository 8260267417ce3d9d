#include "checker/gate/liveness_runs.h"

#include <map>

#include <fmt/format.h>

#include "checker/trace/build.h"

namespace qpcheck::gate {

std::vector<std::string> fairness_notes(const model::Model& m) {
  // The spec's own declarations first (the main file is the first one loaded), then the imported library's.
  std::vector<std::string> own, imported;
  for (const model::Fairness& f : m.fairness) {
    std::string names;
    for (const std::string& n : f.names) names += (names.empty() ? "" : ", ") + n;
    (f.span.file == 0 ? own : imported).push_back(fmt::format("{} {}", f.strong ? "strong" : "weak", names));
  }
  own.insert(own.end(), imported.begin(), imported.end());
  return own;
}

const model::Liveness* find_liveness(const model::Model& m, const std::string& name) {
  for (const model::Liveness& l : m.liveness) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

namespace {

// Per action, its fairness unit (a process instance, or a rule's parameter tuple) if a `fair` declaration names it;
// a unit named by a weak and a strong declaration is strong.
void fairness_units(model::ModelSystem& system, explore::LivenessQuery& q) {
  const model::Model& m = system.model();
  std::map<int, bool> procs;   // process instance -> strong
  std::map<int, bool> rules;   // rule -> strong
  for (const model::Fairness& f : m.fairness) {
    for (int p : f.processes) procs[p] = procs[p] || f.strong;
    for (int r : f.rules) rules[r] = rules[r] || f.strong;
  }
  std::map<std::pair<int, int64_t>, int32_t> ids;  // (process, -1) or (-1 - rule, tuple) -> unit
  q.unit_of.assign(system.action_count(), -1);
  for (uint32_t a = 0; a < system.action_count(); ++a) {
    model::ModelSystem::ActionOwner o = system.owner(a);
    std::pair<int, int64_t> key;
    bool strong = false;
    if (o.process >= 0) {
      auto it = procs.find(o.process);
      if (it == procs.end()) continue;
      key = {o.process, -1};
      strong = it->second;
    } else {
      auto it = rules.find(o.rule);
      if (it == rules.end()) continue;
      key = {-1 - o.rule, o.tuple};
      strong = it->second;
    }
    auto [it, fresh] = ids.emplace(key, static_cast<int32_t>(q.strong.size()));
    if (fresh) q.strong.push_back(strong ? 1 : 0);
    q.unit_of[a] = it->second;
  }
}

std::string describe(const model::Liveness& l, const lang::SourceManager* sources) {
  auto text = [&](const model::Expr* e) {
    return sources ? std::string(sources->text(e->span)) : std::string("P");
  };
  switch (l.kind) {
    case model::Liveness::Kind::kEventually: return "eventually " + text(l.p);
    case model::Liveness::Kind::kAlwaysEventually: return "always eventually " + text(l.p);
    case model::Liveness::Kind::kLeadsTo: return text(l.p) + " leads_to " + text(l.q);
  }
  return "";
}

}  // namespace

LivenessRun run_liveness(model::ModelSystem& system, const model::Liveness& l, const explore::Options& eo,
                         const std::string& spec) {
  explore::LivenessQuery q;
  q.property = l.name;
  q.kind = l.kind == model::Liveness::Kind::kEventually         ? explore::LivenessQuery::Kind::kEventually
           : l.kind == model::Liveness::Kind::kAlwaysEventually ? explore::LivenessQuery::Kind::kAlwaysEventually
                                                                : explore::LivenessQuery::Kind::kLeadsTo;
  q.p = [&system, &l](const uint64_t* s) { return system.holds_in(l.p, s); };
  if (l.q != nullptr) q.q = [&system, &l](const uint64_t* s) { return system.holds_in(l.q, s); };
  fairness_units(system, q);
  LivenessRun run;
  run.result = explore::check_liveness(system, q, eo, &run.stats);
  const model::Model& m = system.model();
  run.trace = trace::build_trace(system, run.result, spec, "bfs");
  run.trace.fairness = fairness_notes(m);
  if (run.result.outcome == model::Outcome::kViolated) {
    trace::Trace& t = run.trace;
    t.kind = "liveness";
    t.property_source = trace::source_ref(*m.sources, l.span);
    std::string what = describe(l, m.sources);
    if (!run.result.cycle_start) {
      // A state expression that cannot be evaluated: the message says why; the path ends in that state.
    } else if (static_cast<size_t>(t.cycle_start) == t.steps.size()) {
      t.message = fmt::format("{}: a run that ends after {} step{} in a state where nothing is enabled, {}", what,
                              t.steps.size(), t.steps.size() == 1 ? "" : "s",
                              l.kind == model::Liveness::Kind::kLeadsTo ? "its P met and its Q never after"
                                                                        : "the state expression false");
    } else {
      t.message = fmt::format("{}: a {}run that repeats steps {}..{} forever, {}", what, m.fairness.empty() ? "" : "fair ", t.cycle_start + 1,
                              t.steps.size(),
                              l.kind == model::Liveness::Kind::kEventually         ? "never reaching it"
                              : l.kind == model::Liveness::Kind::kAlwaysEventually ? "the state expression false "
                                                                                     "throughout the loop"
                                                                                   : "its P met and its Q never "
                                                                                     "after");
    }
  }
  return run;
}

}  // namespace qpcheck::gate
