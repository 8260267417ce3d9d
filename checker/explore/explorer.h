// The explicit-state explorer: BFS (shortest counterexamples) or DFS over a TransitionSystem, with limits that end
// in an "inconclusive" outcome and the statistics so far, never in silent truncation.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checker/model/check_result.h"
#include "checker/model/transition_system.h"

namespace qpcheck::explore {

class Transport;  // transport.h

enum class Strategy { kBfs, kDfs };

// How the visited set records states. Only kExact can prove that a property
// holds; the others can miss states, so a search without violation ends as
// inconclusive ("no violation found in a partial search", limit = the storage
// name) with model::CheckResult::omission_probability. Their counterexamples
// are genuine (replayed from the initial state) but not promised to be
// shortest. Partial storage runs BFS on one thread.
enum class Storage { kExact, kHashCompaction, kBitstate };

struct Options {
  Strategy strategy = Strategy::kBfs;
  model::SearchLimits limits;
  bool check_deadlock = true;
  // When every property holds, also return (in model::CheckResult::path) a run
  // to a terminal state: every process at a valid end and no action enabled.
  // BFS: the shortest such run. A schedule to replay on a device (qpcheck
  // replay).
  bool witness = false;
  // Called about once per second of search with the statistics so far (seconds: elapsed; store_bytes and queue
  // filled; peak_rss_bytes 0). Empty: no calls. Must not throw. Always called on the thread that called explore().
  std::function<void(const model::SearchStats &)> progress;
  // BFS threads (1 = sequential). With T > 1 the visited set is split into T shards by state hash, each owned by one
  // thread, and each BFS layer is expanded in rounds with an exchange of successors between the shards (Stern and
  // Dill, CAV 1997; see ShardedSearch in explorer.cc). The state and transition counts, the verdict, the violated
  // property and the counterexample length are those of one thread, and the counterexample is a shortest one; the
  // state ids, and so which shortest counterexample, depend on T and round_states but not on the run; a deadlock
  // finishes its layer like any other violation, so its counts are one thread's too. Needs
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
  // Distributed BFS over the transport's ranks (explore/transport.h; `qpcheck verify --distributed` under mpirun):
  // rank r stores and expands the states whose hash maps to it. Every rank calls explore() with the same system and
  // options; each returns the same verdict, counts and depth, and the same counterexample path (rebuilt on every
  // rank). Counts, verdict and counterexample length are those of one process (BFS, exact storage; threads,
  // storage, strategy and por are ignored). The time limit and interrupts are read between rounds of round_states
  // states per rank; max_states and max_memory_bytes are split evenly over the ranks.
  Transport* transport = nullptr;
  // Distributed: write a checkpoint to this folder at a layer boundary, at most every checkpoint_every seconds (0:
  // every layer), and resume from the one in resume_dir (written by as many ranks, for the same fingerprint: an
  // opaque text the caller derives from the model and the properties checked).
  std::string checkpoint_dir;
  double checkpoint_every = 60;
  std::string resume_dir;
  std::string fingerprint;
};

// Explores every reachable state of `system` (or until a limit). Stops at the
// first violation; under BFS it finishes the current layer first so that the
// reported counterexample is a shortest one (a deadlock at depth d ends it at
// once: nothing shorter is left). Throws std::length_error only if the store
// would exceed 2^32 states. Limit names in model::CheckResult::limit:
// "max-states", "max-depth", "max-memory", "time-limit", "interrupted", and
// "memory" when an allocation failed below the limit.
model::CheckResult explore(model::TransitionSystem &system, const Options &options);

// Peak resident set size of this process in bytes (Linux VmHWM), 0 if unavailable.
uint64_t peak_rss_bytes();

}  // namespace qpcheck::explore
