// The liveness check: is there a fair run of a TransitionSystem that violates a property of runs (eventually P,
// always eventually P, P leads_to Q)? An exact, explicit check over the product of the reachable states with a
// one-bit monitor, by strongly connected components (Tarjan) with weak and strong fairness per unit (Emerson and
// Lei's refinement for strong fairness; docs/liveness.md). The counterexample is a lasso: a prefix from an initial
// state and a cycle repeated forever, or a prefix ending in a state where nothing is enabled (the run stays there).
// The engine knows nothing of the spec language: the property is two state predicates and the fairness is a unit
// per action (checker/gate/liveness_runs.h builds both from a compiled model).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "checker/explore/explorer.h"
#include "checker/model/check_result.h"
#include "checker/model/transition_system.h"

namespace qpcheck::explore {

struct LivenessQuery {
  enum class Kind { kEventually, kAlwaysEventually, kLeadsTo };
  Kind kind = Kind::kEventually;
  std::string property;                 // the property's name (for the violation)
  // State predicates over a packed state (TransitionSystem::state_words() words); q for kLeadsTo only. They may
  // throw model::StepFailure (cannot be evaluated): the property is then violated at that state, with no cycle.
  std::function<bool(const uint64_t*)> p, q;
  // Fairness: per action id, the fairness unit it belongs to (0..units-1), or -1 when it belongs to no fair unit.
  // A unit is enabled in a state when one of its actions is (a failing step counts) and is taken on an edge that
  // one of its actions labels.
  std::vector<int32_t> unit_of;
  std::vector<uint8_t> strong;          // per unit: 1 strong fairness, 0 weak
};

struct LivenessStats {
  uint64_t components = 0;              // non-trivial strongly connected components of monitor states examined
  uint64_t refinements = 0;             // sub-components searched after removing states of unfairly treated units
  uint64_t edges_bytes = 0;             // the product graph's edges held in memory (8 bytes per transition)
};

// Checks `query` on `system` under `options.limits` (max-states, max-memory, time-limit) and `options.interrupt`;
// other options are ignored (the search is breadth-first on one thread with exact storage). Violated: the result's
// path is the lasso, CheckResult::cycle_start says where its cycle begins; the prefix is a shortest one to any
// state on a fair violating cycle (BFS over the product), the cycle is not promised shortest. Holds: no fair run
// violates the property. Inconclusive: a limit ended it (CheckResult::limit). Stats count product states (a system
// state with its monitor bit). Never throws for a limit.
model::CheckResult check_liveness(model::TransitionSystem& system, const LivenessQuery& query, const Options& options,
                                  LivenessStats* stats = nullptr);

}  // namespace qpcheck::explore
