// Schedules drawn from a model, for driving a device with many runs of a spec instead of one (the library against
// the devices: docs/conform.md, "Schedules from the model"). Not a proof: a walk is one run, chosen at random.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "checker/model/check_result.h"
#include "checker/model/transition_system.h"

namespace qpcheck::explore {

struct WalkOptions {
  uint64_t seed = 1;          // the same seed gives the same walk (std::mt19937_64, uniform choice per state)
  size_t max_length = 200;    // steps; a walk still moving there ends there
};

// A run from the system's first initial state: at each state one of the enabled actions whose step does not fail
// and whose successor satisfies every invariant (a schedule of the spec's safe behaviour), chosen uniformly; it
// ends where no such action exists (a terminal valid end, or a state whose only moves are violations or none) or
// after max_length steps. path.states has one state more than path.actions.
model::Path random_walk(model::TransitionSystem& system, const WalkOptions& options);

// Every safe run (as random_walk chooses from) of at most `max_length` steps that cannot be extended within that
// length, depth-first in the order successors() reports actions; at most `limit` of them (0: no bound). `complete`
// is set to false when the limit cut the enumeration short.
std::vector<model::Path> all_schedules(model::TransitionSystem& system, size_t max_length, size_t limit,
                                       bool* complete = nullptr);

// The same enumeration, each schedule handed to `visit` as it is found (nothing is kept); `visit` returns false to
// stop. Returns true when every schedule was visited.
bool for_each_schedule(model::TransitionSystem& system, size_t max_length,
                       const std::function<bool(const model::Path&)>& visit);

}  // namespace qpcheck::explore
