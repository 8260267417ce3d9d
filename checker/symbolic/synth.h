// Parameter synthesis: for each property of a spec and each value (combination of values) of its symbolic
// parameters, does the property hold? Violations come from BMC over the whole family (shortest first, one
// counterexample per failing region: the values for which that same run violates the property); "holds" only where
// proved, by k-induction over the remaining values or, failing that, by an exhaustive explicit search of each value
// restricted to the property. Anything else is "no violation up to depth K".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "checker/explore/explorer.h"
#include "checker/symbolic/engine.h"

namespace qpcheck::symbolic {

struct Region {
  enum class Verdict { kFails, kHolds, kOpen };
  Verdict verdict = Verdict::kOpen;
  std::vector<int> members;       // family members (value combinations) in this region
  std::string how;                // "bmc", "k-induction (k=3)", "explicit exhaustive search (18 states)", ...
  model::CheckResult counterexample;  // kFails: a run that violates the property
                                      // for every member of the region
  int counterexample_member = 0;  // the member whose ModelSystem renders it
};

struct PropertyResult {
  std::string property;
  std::vector<Region> regions;
};

// Where a synthesis stands, for a progress line (docs/symbolic.md, "Progress").
struct SynthProgress {
  std::string property;
  int property_index = 0;         // 1-based
  int properties = 0;
  std::string phase;              // "kind": BMC and k-induction over the undecided values; "explicit": one value
  int depth = 0, max_depth = 0;   // kind: the depth reached
  int undecided = 0, members = 0; // values (combinations) not decided yet, and in all
  std::string value;              // explicit: the value searched ("rnr_retry=3")
  uint64_t states = 0;            // explicit: states stored so far
  double seconds = 0;             // since the synthesis started
};

struct SynthOptions {
  Options engine;                 // depth, timeouts, deadlock; mode and properties are set per call
  uint64_t explicit_max_states = 1000000;  // per value; 0 = no explicit fallback
  // Non-empty: synthesise only these properties (in lang::properties_of order). The spec's `check` declarations apply
  // when this is empty.
  std::vector<std::string> only;
  std::function<void(const SynthProgress&)> progress;  // empty: none
};

// Synthesises per property. Throws as check() does.
std::vector<PropertyResult> synthesize(const Family& family, const SynthOptions& options);

// Re-runs `path` (actions from member `from`'s counterexample) on `system` from its initial state; returns the
// violation of `property` it ends in, if it does. Exposed for tests.
std::optional<model::Violation> replays_violation(model::ModelSystem &system, const model::Path &path,
                                                  const std::string &property);

}  // namespace qpcheck::symbolic
