// The sequential search: BFS (with optional partial-order reduction) and DFS over one StateStore.
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

#include "checker/explore/recent_states.h"
#include "checker/explore/state_store.h"
#include "checker/explore/searcher.h"

namespace qpcheck::explore::internal {

namespace {

// Sequential BFS (with optional partial-order reduction) and DFS over one StateStore.
class Search : public Searcher, public model::SuccessorSink {
 public:
  Search(model::TransitionSystem& sys, const Options& opt)
      : Searcher(sys, opt), store_(sys.word_bits()), buf_(sys.state_words()), new_buf_(sys.state_words()) {
    batched_ = opt.strategy == Strategy::kBfs && !opt.por && opt.limits.max_states == 0;
    if (batched_) {
      pend_states_.resize(static_cast<size_t>(kBatch) * store_.words());
      pend_preds_.resize(kBatch);
      pend_actions_.resize(kBatch);
    }
  }

 private:
  void search() override {
    const std::vector<std::vector<uint64_t>> inits = sys_.initial_states();
    if (batched_ && !inits.empty()) recent_.emplace(store_.words(), inits[0].data());
    for (const auto& init : inits) {
      auto [id, fresh] = store_.insert(init.data(), kNoState);
      if (fresh) {
        if (opt_.strategy == Strategy::kDfs) { stack_.push_back(id); depth_of_.push_back(0); }
        check_new(id);
      }
    }
    if (opt_.por && opt_.strategy == Strategy::kBfs) por_ = sys_.independence();
    if (opt_.strategy == Strategy::kDfs) {
      dfs();
    } else {
      bfs();
    }
  }

  void successor(uint32_t action, const uint64_t* state) override {
    ++stats_.transitions;
    fire(action);
    if (batched_) {
      // Every state recent_ holds is stored or pending ahead of this one (see RecentStates).
      if (recent_->seen_before(state)) return;
      const int w = store_.words();
      std::copy(state, state + w, &pend_states_[static_cast<size_t>(pending_) * w]);
      pend_preds_[pending_] = current_;
      pend_actions_[pending_] = action;
      if (++pending_ == kBatch) flush();
      return;
    }
    if (opt_.limits.max_states && store_.size() >= opt_.limits.max_states) {
      if (!store_.contains(state)) limit_ = "max-states";  // the store stays at exactly max_states
      return;
    }
    auto [id, fresh] = store_.insert(state, current_);
    if (!fresh) return;
    if (opt_.strategy == Strategy::kDfs) {
      uint32_t d = depth_of_[current_] + 1;
      depth_of_.push_back(d);
      stack_.push_back(id);
      if (d > stats_.depth) stats_.depth = d;
    }
    if (!found_) {
      // current_ passed its own check (the search stops at the first violation), so only what `action` changed
      // needs checking.
      if (auto v = sys_.check_invariants_after(action, state)) found_ = Found{*v, id, kNoState};
    }
  }
  void failure(uint32_t action, const Violation& v) override {
    ++stats_.transitions;
    fire(action);
    if (por_.groups > 1) failed_.push_back(action);
    if (!found_) flush();  // a successor enumerated before this failure may violate an invariant
    if (!found_) found_ = Found{v, current_, action};
  }

  // Batched BFS (no POR, no max-states): successors wait in pend_* and are stored kBatch at a time through the
  // store's prefetch pipeline (StateStore::stage), in the order they were enumerated, each new one's invariants
  // checked right after its insertion, so ids, counts, found_ and every result are those of storing each successor
  // at once. flush() runs before anything reads the store or found_: a failure, the end of a layer or of the
  // search, a deadlock, a limit that may have been reached, a progress report. A time limit or an allocation failure
  // that interrupts the search drops the buffered tail, which leaves, as without batching, a prefix of the
  // insertion order stored.
  void flush() {
    const int n = pending_;
    if (n == 0) return;
    pending_ = 0;
    const int w = store_.words();
    store_.stage(pend_states_.data(), static_cast<size_t>(w), n);
    for (int i = 0; i < n; ++i) {
      auto [id, fresh] = store_.insert_staged(i, pend_preds_[i]);
      if (fresh && !found_) {
        const uint64_t* state = &pend_states_[static_cast<size_t>(i) * w];
        if (auto v = sys_.check_invariants_after(pend_actions_[i], state)) found_ = Found{*v, id, kNoState};
      }
    }
  }

  void check_new(uint32_t id) {
    if (found_) return;
    store_.load(id, new_buf_.data());
    if (auto v = sys_.check_invariants(new_buf_.data())) found_ = Found{*v, id, kNoState};
  }

  // Expands `id`; returns false when it is a deadlock (recorded in found_).
  void expand(uint32_t id) {
    current_ = id;
    store_.load(id, buf_.data());
    int enabled = por_.groups > 1 ? expand_reduced() : sys_.successors(buf_.data(), *this);
    if (enabled == 0 && (opt_.witness || opt_.check_deadlock)) {
      store_.load(id, buf_.data());
      bool end = sys_.valid_end(buf_.data());
      if (end && opt_.witness && terminal_ == kNoState) terminal_ = id;
      if (!end && opt_.check_deadlock && !deadlock_) {
        deadlock_ = Found{model::deadlock(), id, kNoState};
      }
    }
  }

  // Partial-order reduction (ample sets; Peled, CAV 1993; Clarke, Grumberg, Peled, "Model Checking", ch. 10): of the
  // enabled actions of buf_, explore only those of the first independence group that (C1) has an enabled action --
  // all of that group's enabled actions are taken, and the other groups' actions touch disjoint slots, so they can
  // neither enable nor disable them nor be affected by them --, (C2) has no enabled action that writes a slot an
  // invariant reads, and (C3, cycle proviso) leads only to states not stored yet, so every cycle of the reduced graph
  // has a fully expanded state. Otherwise expand fully. Step failures of every enabled action are still reported.
  // Preserves deadlocks, invariant violations and assertion failures; not the shortest counterexample.
  struct Collect : model::SuccessorSink {
    Search* self = nullptr;
    std::vector<uint32_t> actions;
    std::vector<uint64_t> states;
    int words = 0;
    void successor(uint32_t a, const uint64_t* s) override {
      actions.push_back(a);
      states.insert(states.end(), s, s + words);
    }
    void failure(uint32_t a, const Violation& v) override { self->failure(a, v); }
  };
  int expand_reduced() {
    Collect& c = collect_;
    c.self = this;
    c.words = store_.words();
    c.actions.clear();
    c.states.clear();
    int enabled = sys_.successors(buf_.data(), c);
    const std::vector<int>& group = por_.group;
    int chosen = -1;
    // Groups in order of their first enabled action; a failing action's group is ineligible too (it is visible).
    for (size_t i = 0; i < c.actions.size() && chosen < 0; ++i) {
      int g = group[c.actions[i]];
      bool seen_before = false;
      for (size_t k = 0; k < i; ++k) seen_before = seen_before || group[c.actions[k]] == g;
      if (seen_before) continue;
      bool ok = c.actions.size() > 1;
      for (size_t k = i; k < c.actions.size() && ok; ++k) {
        if (group[c.actions[k]] != g) continue;
        ok = !por_.visible[c.actions[k]] && !store_.contains(&c.states[k * c.words]);
      }
      for (uint32_t f : failed_) ok = ok && group[f] != g;
      if (ok) chosen = g;
    }
    failed_.clear();
    bool reduced = false;
    for (size_t k = 0; k < c.actions.size(); ++k) {
      if (chosen >= 0 && group[c.actions[k]] != chosen) { reduced = true; continue; }
      successor(c.actions[k], &c.states[k * c.words]);
    }
    if (reduced) ++reduced_states_;
    return enabled;
  }

  // Calls Options::progress about once per second (the clock is read every 1024 expansions); queue() gives the
  // states stored but not expanded.
  template <class Queue>
  void report_progress(const Queue& queue) {
    if (!opt_.progress || (++expansions_ & 1023) != 0) return;
    double now = elapsed();
    if (now < next_progress_) return;
    next_progress_ = now + 1.0;
    flush();
    model::SearchStats s = stats_;
    s.states = store_.size();
    s.seconds = now;
    s.store_bytes = store_.bytes();
    s.queue = queue();
    opt_.progress(s);
  }

  bool limit_hit() {
    const model::SearchLimits& l = opt_.limits;
    if (!limit_.empty()) return true;  // max-states, set while inserting
    if (interrupted()) {
      flush();
      limit_ = "interrupted";
      return true;
    }
    if (l.max_memory_bytes) {
      // Batched: unless the buffered successors cannot bring the store to the limit (then neither is it now), store
      // them first.
      const uint64_t held = sys_.memory_bytes();
      if (pending_ > 0 && store_.bytes_bound(pending_) + held >= l.max_memory_bytes) flush();
      if (pending_ == 0 && store_.bytes() + held >= l.max_memory_bytes) { limit_ = "max-memory"; return true; }
    }
    if (l.time_limit_seconds > 0 && elapsed() >= l.time_limit_seconds) {
      flush();
      limit_ = "time-limit";
      return true;
    }
    return false;
  }
  void bfs() {
    if (found_) return;  // an initial state violates an invariant
    uint64_t head = 0, layer_end = store_.size(), depth = 0;
    for (;;) {
      if (head == layer_end || head == store_.size()) flush();  // what follows reads the store's size and found_
      if (head >= store_.size()) break;
      if (head == layer_end) {
        // The layer that found it is complete: the counterexample is a shortest one. A deadlock at depth d beats
        // anything found at depth d+1; finishing its layer too makes the state count the same in every engine.
        if (deadlock_) found_ = deadlock_;
        if (found_) return;
        ++depth;
        layer_end = store_.size();
        if (opt_.limits.max_depth && depth >= opt_.limits.max_depth) {
          stats_.depth = depth;  // this layer is stored but not expanded
          limit_ = "max-depth";
          break;
        }
      }
      stats_.depth = depth;
      report_progress([&] { return store_.size() - head; });
      expand(static_cast<uint32_t>(head++));
      if (limit_hit()) break;
    }
    flush();
    if (deadlock_) found_ = deadlock_;
    if (found_ && !limit_.empty()) shortest_known_ = false;
  }

  void dfs() {
    shortest_known_ = false;
    while (!stack_.empty() && !found_) {
      uint32_t id = stack_.back();
      stack_.pop_back();
      if (opt_.limits.max_depth && depth_of_[id] >= opt_.limits.max_depth) { depth_truncated_ = true; continue; }
      report_progress([&] { return stack_.size(); });
      expand(id);
      if (deadlock_) { found_ = deadlock_; break; }
      if (limit_hit()) break;
    }
    if (depth_truncated_ && limit_.empty()) limit_ = "max-depth";
  }

  model::CheckResult finish() override {
    close_stats(store_.size(), store_.bytes());
    model::CheckResult r = exact_result(shortest_known_, terminal_, [&](uint32_t last) {
      return rebuild_path(
          sys_, last, [&](uint32_t id, uint64_t* out) { store_.load(id, out); },
          [&](uint32_t id) { return store_.predecessor(id); });
    });
    r.por_groups = opt_.por ? por_.groups : 0;
    r.por_reduced_states = reduced_states_;
    if (por_.groups > 1) r.shortest = false;
    return r;
  }

  model::TransitionSystem::Independence por_;
  uint64_t reduced_states_ = 0;
  std::vector<uint32_t> failed_;    // POR: actions that failed in the current expansion
  Collect collect_;
  StateStore store_;
  static constexpr int kBatch = kInsertBatch;
  bool batched_ = false;
  int pending_ = 0;
  std::optional<RecentStates> recent_;  // batched BFS: repeats dropped before they are staged
  std::vector<uint64_t> pend_states_;  // kBatch states of words() uint64
  std::vector<uint32_t> pend_preds_, pend_actions_;
  std::vector<uint64_t> buf_;       // the state being expanded
  std::vector<uint64_t> new_buf_;   // a new state being checked (while buf_ is expanded)
  std::optional<Found> deadlock_;
  uint32_t current_ = kNoState;
  uint32_t terminal_ = kNoState;    // Options::witness: the first terminal valid-end state expanded
  std::vector<uint32_t> stack_;     // DFS
  std::vector<uint32_t> depth_of_;  // DFS: depth of each state id
  bool depth_truncated_ = false;
  bool shortest_known_ = true;
  uint64_t expansions_ = 0;
  double next_progress_ = 1.0;      // no progress report in the first second
};

}  // namespace

model::CheckResult search_sequential(model::TransitionSystem& sys, const Options& opt) {
  return Search(sys, opt).run();
}

}  // namespace qpcheck::explore::internal
