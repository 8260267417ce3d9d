// The explicit-state explorer: BFS (shortest counterexamples) or DFS over a TransitionSystem, with limits that end
// in an "inconclusive" outcome and the statistics so far, never in silent truncation.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checker/model/transition_system.h"

namespace qpcheck::explore {

enum class Strategy { kBfs, kDfs };

// How the visited set records states. Only kExact can prove that a property holds; the others can miss states, so a
// search without violation ends as inconclusive ("no violation found in a partial search", limit = the storage name)
// with Result::omission_probability. Their counterexamples are genuine (replayed from the initial state) but not
// promised to be shortest. Partial storage runs BFS on one thread.
enum class Storage { kExact, kHashCompaction, kBitstate };

struct Limits {
  uint64_t max_states = 0;        // distinct states stored; 0 = no limit
  uint64_t max_depth = 0;         // steps from an initial state; 0 = no limit
  // Bytes held by the search, all in: the visited set, the parallel search's messages of a round, and what each
  // TransitionSystem holds (memory_bytes(): the specialised program, one per thread); 0 = no limit.
  uint64_t max_memory_bytes = 0;
  double time_limit_seconds = 0;  // wall clock; 0 = no limit
};

enum class Outcome { kHolds, kViolated, kInconclusive };

struct Stats {
  uint64_t states = 0;            // distinct states stored
  uint64_t transitions = 0;       // enabled actions taken (including to states seen before)
  uint64_t depth = 0;             // BFS: deepest layer reached; DFS: deepest state
  double seconds = 0;             // wall clock of the search
  uint64_t store_bytes = 0;       // visited set, all in
  uint64_t peak_rss_bytes = 0;    // whole process (VmHWM), 0 if unknown
  uint64_t queue = 0;             // states stored but not expanded yet (BFS queue / DFS stack); progress reports only
};

struct Options {
  Strategy strategy = Strategy::kBfs;
  Limits limits;
  bool check_deadlock = true;
  // When every property holds, also return (in Result::path) a run to a terminal state: every process at a valid
  // end and no action enabled. BFS: the shortest such run. A schedule to replay on a device (qpcheck replay).
  bool witness = false;
  // Called about once per second of search with the statistics so far (seconds: elapsed; store_bytes and queue
  // filled; peak_rss_bytes 0). Empty: no calls. Must not throw. Always called on the thread that called explore().
  std::function<void(const Stats&)> progress;
  // BFS threads (1 = sequential). With T > 1 the visited set is split into T shards by state hash, each owned by one
  // thread, and each BFS layer is expanded in rounds with an exchange of successors between the shards (Stern and
  // Dill, CAV 1997; see ShardedSearch in explorer.cc). The state and transition counts, the verdict, the violated
  // property and the counterexample length are those of one thread, and the counterexample is a shortest one; the
  // state ids, and so which shortest counterexample, depend on T and round_states but not on the run. Exception: a
  // deadlock ends the search at the end of a round, so the counts at a deadlock depend on T and round_states. Needs
  // TransitionSystem::clone() (else sequential); DFS and --por are always sequential.
  int threads = 1;
  // Parallel BFS: states expanded per round and thread, between two exchanges (0 = 32768). Smaller rounds hold fewer
  // messages and check limits sooner; larger ones synchronise less often.
  uint64_t round_states = 0;
  Storage storage = Storage::kExact;
  int bitstate_log2_bits = 30;    // kBitstate: the bit array holds 2^bitstate_log2_bits bits (2^30 = 128 MiB)
  int bitstate_hashes = 3;        // kBitstate: bits set per state (k)
  // Partial-order reduction (ample sets over TransitionSystem::independence() groups, with the cycle proviso). BFS on
  // one thread, exact storage; it keeps every deadlock and violation but the counterexample is not promised shortest.
  // Ignored when the system reports fewer than two groups.
  bool por = false;
  // When set, read at the points where the limits are checked (and polled inside long evaluations): once it is
  // true the search stops as inconclusive with limit "interrupted" and the statistics so far (SIGINT, SIGTERM).
  const std::atomic<bool>* interrupt = nullptr;
};

// A run from an initial state. actions[i] leads from states[i] to states[i+1]; for a step failure the last action
// has no successor state (actions.size() == states.size()).
struct Path {
  std::vector<std::vector<uint64_t>> states;
  std::vector<uint32_t> actions;
};

struct Result {
  Outcome outcome = Outcome::kHolds;
  std::optional<model::Violation> violation;
  Path path;                      // the counterexample when violated; the witness run (Options::witness) when holds
  bool shortest = false;          // true when the counterexample is known to be a shortest one (BFS, no limit hit)
  std::string limit;              // which limit ended the search ("max-states", ...), empty if none
  Stats stats;
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

// Explores every reachable state of `system` (or until a limit). Stops at the first violation; under BFS it finishes
// the current layer first so that the reported counterexample is a shortest one (a deadlock at depth d ends it at
// once: nothing shorter is left). Throws std::length_error only if the store would exceed 2^32 states. Limit names in
// Result::limit: "max-states", "max-depth", "max-memory", "time-limit", "interrupted", and "memory" when an
// allocation failed below the limit.
Result explore(model::TransitionSystem& system, const Options& options);

// Peak resident set size of this process in bytes (Linux VmHWM), 0 if unavailable.
uint64_t peak_rss_bytes();

}  // namespace qpcheck::explore
