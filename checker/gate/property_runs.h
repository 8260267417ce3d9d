// The runs that decide a model's properties one at a time (docs/gate.md, "What gate does"): one reachability run
// that sees every violation without stopping, then one BFS per violated property restricted to that property, so
// that each gets its own shortest counterexample. `qpcheck gate` and `diff` run them per configuration, `verify
// --all-violations` on its one configuration, and `verify --property` (or a spec's `check`) uses the restricted run
// alone. The one place a model is restricted to some of its properties.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checker/explore/explorer.h"
#include "checker/lang/properties.h"
#include "checker/lang/search_path.h"
#include "checker/model/model.h"
#include "checker/model/model_system.h"
#include "checker/trace/trace.h"

namespace qpcheck::gate {

struct Options {
  model::SearchLimits limits;  // per exploration (one reachability run + one per
                               // violated property)
  bool check_deadlock = true;
  bool coverage = true;                      // actions/statements never executed, vacuous properties
  lang::SearchPath search_path;              // import search path (after the importing file's folder)
  std::function<void(const model::SearchStats&)> progress;  // explore::Options::progress of every run
  // explore::Options::interrupt of every run: once set, each remaining search stops at once (limit "interrupted"),
  // so every configuration still gets a result, inconclusive where nothing was decided.
  const std::atomic<bool>* interrupt = nullptr;
};

// The specialiser's bounds for every system a run builds: a quarter of the memory limit, and none at all once
// interrupted (the searches then stop at once).
model::BuildLimits build_limits(const model::SearchLimits& limits, const std::atomic<bool>* interrupt);

// How an outcome compares with its expectation.
enum class Status {
  kAsExpected,        // holds as expected, or violated as expected
  kNewViolation,      // expected to hold, violated
  kNoLongerViolated,  // expected to be violated, holds
  kInconclusive,      // a limit ended the search before the property was decided
};
const char* status_name(Status s);  // "as-expected", "new-violation", "no-longer-violated", "inconclusive"

struct PropertyResult {
  std::string name;
  std::string kind;                 // "invariant", "fail", "deadlock", "runtime_error"
  trace::SourceRef source;          // the invariant / first fail statement; empty file for deadlock, runtime_error
  bool expected_violated = false;
  trace::SourceRef expected_at;     // the `expect` declaration; empty file: the default (holds)
  std::string actual;               // "holds", "violated", "inconclusive"
  // violated: a shortest counterexample for this property alone (BFS with the other properties ignored)
  std::optional<trace::Trace> counterexample;
  bool vacuous = false;             // holds, and nothing it talks about ever happens (docs/gate.md)
  std::string vacuity;              // why, when vacuous
  Status status() const;
};

struct Coverage {
  bool complete = false;            // the reachability run was exhaustive (no limit hit)
  uint64_t actions = 0;             // process statements x instances + rule instances
  uint64_t actions_fired = 0;
  std::vector<trace::SourceRef> statements_never_executed;  // process statements no instance ever executed
  std::vector<std::string> rules_never_fired;               // rule instances, "rnr_nak(e=PASSIVE)"
};

// What check_properties found.
struct PropertyCheck {
  std::vector<PropertyResult> properties;  // in the order asked (expectation fields left at their defaults)
  Coverage coverage;                       // empty unless Options::coverage
  trace::Stats stats;                      // of the reachability run
  std::string limit;                       // a limit that ended the reachability run, "" if none
};

// The reachability run over `m` and one restricted run per violated property of `properties` (each of them a
// property of `m`). `spec` is the path reports show. Never throws for a well-formed model; std::bad_alloc may escape.
PropertyCheck check_properties(model::Model& m, const std::vector<lang::PropertyInfo>& properties,
                               const Options& options, const std::string& spec);

// One search of `m` that checks only the properties named in `selected` (invariants, fail/assert properties,
// "runtime_error", "deadlock"): the other invariants are not evaluated, failing steps of the other properties are
// dropped (a failing step has no successor either way), deadlock only when selected (eo.check_deadlock is
// overridden). The model's invariant list is cut down for the run and restored before returning. `trace` is built
// when the search ends in a violation.
struct RestrictedRun {
  model::CheckResult result;
  std::optional<trace::Trace> trace;
  int state_bits = 0;
};
// `build` bounds the specialiser of the run's system (build_limits).
RestrictedRun run_restricted(model::Model& m, const std::vector<std::string>& selected, explore::Options eo,
                             const std::string& spec, const std::string& strategy, model::BuildLimits build = {});

// Records in `t` which properties were checked and which were not and why (docs/json-report.md, "properties").
void note_properties(trace::Trace& t, const lang::PropertyPlan& plan, const lang::SourceManager& sources);

}  // namespace qpcheck::gate
