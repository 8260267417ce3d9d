// What the searches share (internal to checker/explore, not a public header): the result of a search in progress,
// the path rebuild from predecessor links, and the Searcher base (clock, limits, what was found, statistics). One
// file per search: sequential.cc (BFS/DFS, POR), sharded.cc (parallel BFS), partial.cc (hash compaction, bitstate);
// explorer.cc picks one (explore()).
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <barrier>
#include <chrono>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "checker/explore/explorer.h"
#include "checker/explore/state_store.h"  // kNoState
#include "checker/model/transition_system.h"

namespace qpcheck::explore::internal {

using model::Violation;

// Thrown by an allocation that the search's memory limit does not leave room for (the parallel search's messages):
// the search ends as inconclusive ("max-memory") with the statistics so far.
struct MemoryLimitReached {};

// What ended the search, before the path is rebuilt.
struct Found {
  Violation violation;
  uint32_t state = kNoState;       // the violating state (invariant, deadlock) or the failing step's source
  uint32_t failing_action = kNoState;  // step failures only
};

inline std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point start, double seconds) {
  return start +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

// The owner of `state` among `parts` partitions (the threaded search's shards, the distributed search's ranks): a
// hash of its first `words` words of its own, independent of the stores' (each owner then calls StateStore::insert,
// which packs and hashes once). One multiply per word plus a final xor-shift-multiply, so that every bit of every
// word reaches the high bits that pick the owner; it runs on every successor, so it is kept much cheaper than the
// store's hash.
inline int route_owner(const uint64_t* state, int words, int parts) {
  uint64_t h = 0x8C8E3A9B5D0F4E21ULL;
  for (int i = 0; i < words; ++i) h = (h ^ state[i]) * 0x9E3779B97F4A7C15ULL;
  h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ULL;
  return static_cast<int>(((h >> 32) * static_cast<uint64_t>(parts)) >> 32);
}

// The first action (in enumeration order) that leads from `from` to `to`: the one that first reached `to` when
// `from` was expanded, since a store keeps the first predecessor.
inline uint32_t action_between(model::TransitionSystem& sys, const std::vector<uint64_t>& from,
                        const std::vector<uint64_t>& to) {
  struct Match : model::SuccessorSink {
    const std::vector<uint64_t>* to;
    uint32_t action = kNoState;
    void successor(uint32_t a, const uint64_t* s) override {
      if (action == kNoState && std::equal(to->begin(), to->end(), s)) action = a;
    }
    void failure(uint32_t, const Violation&) override {}
  } m;
  m.to = &to;
  sys.set_deadline(std::chrono::steady_clock::time_point::max());
  sys.successors(from.data(), m);
  return m.action;
}

// The run from an initial state to state `last` of an exact search, rebuilt from predecessor links:
// load(id, out) writes state `id` (state_words() uint64), pred(id) is its predecessor (kNoState for an initial state).
template <class Load, class Pred>
model::Path rebuild_path(model::TransitionSystem& sys, uint32_t last, Load load, Pred pred) {
  model::Path p;
  std::vector<uint32_t> chain;
  for (uint32_t id = last; id != kNoState; id = pred(id)) chain.push_back(id);
  for (size_t i = chain.size(); i-- > 0;) {
    std::vector<uint64_t> s(sys.state_words());
    load(chain[i], s.data());
    if (i + 1 < chain.size()) p.actions.push_back(action_between(sys, p.states.back(), s));
    p.states.push_back(std::move(s));
  }
  return p;
}

// What every searcher shares: the clock, the time limit, the limit that ended the search, what was found, the
// statistics and the actions that fired; run() is the one wrapper that turns a deadline or an allocation failure in
// the middle of the search into an inconclusive result with the statistics so far.
class Searcher {
 public:
  Searcher(model::TransitionSystem& sys, const Options& opt)
      : sys_(sys), opt_(opt), start_(std::chrono::steady_clock::now()), fired_(sys.action_count(), 0) {}
  virtual ~Searcher() = default;

  model::CheckResult run() {
    if (opt_.limits.time_limit_seconds > 0) sys_.set_deadline(deadline());
    sys_.set_interrupt(opt_.interrupt);
    try {
      search();
    } catch (const model::DeadlineExceeded&) {
      limit_ = interrupted() ? "interrupted" : "time-limit";  // in the middle of one state's evaluation
    } catch (const MemoryLimitReached&) {
      limit_ = "max-memory";
    } catch (const std::bad_alloc&) {
      limit_ = "memory";  // the visited set could not grow: report what was explored, do not crash
    }
    sys_.set_interrupt(nullptr);
    return finish();
  }

 protected:
  virtual void search() = 0;
  virtual model::CheckResult finish() = 0;

  std::chrono::steady_clock::time_point deadline() const {
    return deadline_after(start_, opt_.limits.time_limit_seconds);
  }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  bool interrupted() const { return opt_.interrupt != nullptr && opt_.interrupt->load(std::memory_order_relaxed); }
  void fire(uint32_t action) {
    if (action >= fired_.size()) fired_.resize(action + 1, 0);
    fired_[action] = 1;
  }
  // model::SearchStats fields every searcher fills the same way at the end.
  void close_stats(uint64_t states, uint64_t store_bytes) {
    stats_.states = states;
    stats_.seconds = elapsed();
    stats_.store_bytes = store_bytes;
    stats_.peak_rss_bytes = peak_rss_bytes();
  }
  // The verdict of an exact search from found_ and limit_. `terminal`: the witness state (kNoState if none);
  // `shortest`: the counterexample is known to be a shortest one; `path_to(id)` rebuilds the run to state `id`.
  template <class PathTo>
  model::CheckResult exact_result(bool shortest, uint32_t terminal, PathTo path_to) {
    model::CheckResult r;
    r.limit = limit_;
    if (found_) {
      r.outcome = model::Outcome::kViolated;
      r.violation = found_->violation;
      r.shortest = opt_.strategy == Strategy::kBfs && shortest;
      r.path = path_to(found_->state);
      if (found_->failing_action != kNoState) r.path.actions.push_back(found_->failing_action);
    } else {
      r.outcome = limit_.empty() ? model::Outcome::kHolds : model::Outcome::kInconclusive;
      if (r.outcome == model::Outcome::kHolds && terminal != kNoState) {
        r.shortest = opt_.strategy == Strategy::kBfs;
        r.path = path_to(terminal);
      }
    }
    r.stats = stats_;
    r.action_fired = std::move(fired_);
    return r;
  }

  model::TransitionSystem& sys_;
  const Options& opt_;
  std::chrono::steady_clock::time_point start_;
  model::SearchStats stats_;
  std::optional<Found> found_;
  std::string limit_;
  std::vector<uint8_t> fired_;
};

// Successors stored per StateStore::stage() call; at most StateStore::kBoundInsertions, which Search's memory-limit
// check relies on. Why 128: docs/performance.md, "Tuning constants".
constexpr int kInsertBatch = 128;

// The searches, each in its file. Each returns its model::CheckResult; none
// throws for a limit (see Searcher::run).
model::CheckResult search_sequential(model::TransitionSystem& sys, const Options& opt);
model::CheckResult search_sharded(model::TransitionSystem& sys, const Options& opt,
                                  std::vector<std::unique_ptr<model::TransitionSystem>> workers);
model::CheckResult search_partial(model::TransitionSystem& sys, const Options& opt);
model::CheckResult search_distributed(model::TransitionSystem& sys, const Options& opt);

}  // namespace qpcheck::explore::internal
