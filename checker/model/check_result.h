// The result of checking a model, shared by every engine and every consumer: the outcome, the violation and its
// counterexample path, the statistics, and the limits a search runs under. Neutral ground: engines (explore/,
// symbolic/) produce it, trace/, gate/ and the CLI read it, and none of them depends on another engine for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/model/transition_system.h"

namespace qpcheck::model {

// Bounds on one search, the same for every engine (explicit: states, depth, memory, time; Z3: time). A search
// that reaches one ends as Outcome::kInconclusive with CheckResult::limit naming it.
struct SearchLimits {
  uint64_t max_states = 0;        // distinct states stored; 0 = no limit
  uint64_t max_depth = 0;         // steps from an initial state; 0 = no limit
  // Bytes held by the search, all in: the visited set, the parallel search's messages of a round, and what each
  // TransitionSystem holds (memory_bytes(): the specialised program, one per thread); 0 = no limit.
  uint64_t max_memory_bytes = 0;
  double time_limit_seconds = 0;  // wall clock; 0 = no limit
};

// kHolds: the search was exhaustive and found no violation (an exact proof); kViolated: CheckResult::violation
// and a counterexample; kInconclusive: a limit or a partial search ended it first (CheckResult::limit says which).
enum class Outcome { kHolds, kViolated, kInconclusive };

// What a search did, so far or in all.
struct SearchStats {
  uint64_t states = 0;            // distinct states stored
  uint64_t transitions = 0;       // enabled actions taken (including to states seen before)
  uint64_t depth = 0;             // BFS: deepest layer reached; DFS: deepest state
  double seconds = 0;             // wall clock of the search
  uint64_t store_bytes = 0;       // visited set, all in
  uint64_t peak_rss_bytes = 0;    // whole process (VmHWM), 0 if unknown
  uint64_t queue = 0;             // states stored but not expanded yet (BFS queue / DFS stack); progress reports only
};

// A run from an initial state. actions[i] leads from states[i] to states[i+1]; for a step failure the last action
// has no successor state (actions.size() == states.size()).
struct Path {
  std::vector<std::vector<uint64_t>> states;
  std::vector<uint32_t> actions;
};

// What every engine returns: the explicit explorer (explore::explore), BMC and k-induction (symbolic::check), the
// gate's per-property runs. Consumers (trace::build, the reports, replay) take this type.
struct CheckResult {
  Outcome outcome = Outcome::kHolds;
  std::optional<Violation> violation;
  Path path;                      // the counterexample when violated; the witness run (explore::Options::witness)
                                  // when holds
  bool shortest = false;          // true when the counterexample is known to be a shortest one (BFS, no limit hit)
  // A liveness counterexample (explore::check_liveness) is a lasso: the run repeats path.actions[*cycle_start..]
  // forever, path.states.back() being path.states[*cycle_start]. When *cycle_start == path.actions.size() the cycle
  // is empty: nothing is enabled in the last state and the run stays there. nullopt for every other result.
  std::optional<size_t> cycle_start;
  std::string limit;              // which limit ended the search ("max-states", ...), empty if none
  SearchStats stats;
  // Indexed by action id (TransitionSystem numbering): 1 if the action produced at least one transition (a
  // successor or a failure) during the search, else 0. Sized TransitionSystem::action_count() when the system
  // reports it (else it ends at the highest action that fired): a missing entry is 0. Complete only when the search
  // was exhaustive; under --por only the explored (reduced) transitions count.
  std::vector<uint8_t> action_fired;
  // Partial storage (hash compaction, bitstate): an upper bound on the probability that a reachable state was
  // missed (see FingerprintSet and Bitstate in state_store.h); 0 for exact storage.
  double omission_probability = 0;
  // --por: independence groups found (0 without --por) and expanded states that used an ample set.
  int por_groups = 0;
  uint64_t por_reduced_states = 0;
};

}  // namespace qpcheck::model
