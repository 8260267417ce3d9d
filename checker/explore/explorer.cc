#include "checker/explore/explorer.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <thread>
#include <new>
#include <fstream>
#include <string>

#include "checker/explore/state_store.h"

namespace qpcheck::explore {

uint64_t peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

namespace {

using model::Violation;

// What ended the search, before the path is rebuilt.
struct Found {
  Violation violation;
  uint32_t state = kNoState;       // the violating state (invariant, deadlock) or the failing step's source
  uint32_t failing_action = kNoState;  // step failures only
};

class Search : public model::SuccessorSink {
 public:
  Search(model::TransitionSystem& sys, const Options& opt)
      : sys_(sys),
        opt_(opt),
        store_(sys.word_bits()),
        buf_(sys.state_words()),
        new_buf_(sys.state_words()),
        start_(std::chrono::steady_clock::now()),
        fired_(sys.action_count(), 0) {}

  Result run() {
    if (opt_.limits.time_limit_seconds > 0) {
      sys_.set_deadline(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(opt_.limits.time_limit_seconds)));
    }
    try {
      search();
    } catch (const model::DeadlineExceeded&) {
      limit_ = "time-limit";  // in the middle of one state's evaluation
    } catch (const std::bad_alloc&) {
      limit_ = "memory";  // the visited set could not grow: report what was explored, do not crash
    }
    return finish();
  }

  void search() {
    for (const auto& init : sys_.initial_states()) {
      auto [id, fresh] = store_.insert(init.data(), kNoState);
      if (fresh) {
        if (opt_.strategy == Strategy::kDfs) { stack_.push_back(id); depth_of_.push_back(0); }
        check_new(id);
      }
    }
    if (opt_.strategy == Strategy::kDfs) {
      dfs();
    } else if (opt_.threads > 1 && make_workers()) {
      bfs_parallel();
    } else {
      bfs();
    }
  }

 private:
  void fire(uint32_t action) {
    if (action >= fired_.size()) fired_.resize(action + 1, 0);
    fired_[action] = 1;
  }
  void successor(uint32_t action, const uint64_t* state) override {
    ++stats_.transitions;
    fire(action);
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
    check_new(id);
  }
  void failure(uint32_t action, const Violation& v) override {
    ++stats_.transitions;
    fire(action);
    if (!found_) found_ = Found{v, current_, action};
  }

  void check_new(uint32_t id, const std::optional<Violation>* known = nullptr) {
    if (found_) return;
    if (known != nullptr) {
      if (*known) found_ = Found{**known, id, kNoState};
      return;
    }
    store_.load(id, new_buf_.data());
    if (auto v = sys_.check_invariants(new_buf_.data())) found_ = Found{*v, id, kNoState};
  }

  // Expands `id`; returns false when it is a deadlock (recorded in found_).
  void expand(uint32_t id) {
    current_ = id;
    store_.load(id, buf_.data());
    int enabled = sys_.successors(buf_.data(), *this);
    if (enabled == 0 && opt_.check_deadlock && (store_.load(id, buf_.data()), !sys_.valid_end(buf_.data()))) {
      deadlock_ = Found{Violation{Violation::Kind::kDeadlock, "deadlock",
                                  "no process can move and not every process is at a valid end state", {}},
                        id, kNoState};
    }
  }

  bool limit_hit() {
    const Limits& l = opt_.limits;
    if (!limit_.empty()) return true;  // max-states, set while inserting
    if (opt_.progress && (++progress_tick_ & 1023) == 0) {
      double now = elapsed();
      if (now >= next_progress_) {
        next_progress_ = now + 1.0;
        Stats s = stats_;
        s.states = store_.size();
        s.seconds = now;
        s.store_bytes = store_.bytes();
        opt_.progress(s);
      }
    }
    if (l.max_memory_bytes && store_.bytes() >= l.max_memory_bytes) { limit_ = "max-memory"; return true; }
    if (l.time_limit_seconds > 0 && elapsed() >= l.time_limit_seconds) {
      limit_ = "time-limit";
      return true;
    }
    return false;
  }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  void bfs() {
    if (found_) return;  // an initial state violates an invariant
    uint64_t head = 0, layer_end = store_.size(), depth = 0;
    while (head < store_.size()) {
      if (head == layer_end) {
        if (found_) return;  // the layer that found it is complete: the counterexample is a shortest one
        ++depth;
        layer_end = store_.size();
        if (opt_.limits.max_depth && depth >= opt_.limits.max_depth) {
          stats_.depth = depth;  // this layer is stored but not expanded
          limit_ = "max-depth";
          break;
        }
      }
      stats_.depth = depth;
      expand(static_cast<uint32_t>(head++));
      if (deadlock_) { found_ = deadlock_; return; }  // depth d beats anything found at depth d+1
      if (limit_hit()) break;
    }
    if (found_ && !limit_.empty()) shortest_known_ = false;
  }

  // ---- parallel BFS (Options::threads > 1) ----

  // What a worker found while expanding one state of a slice.
  struct Expansion {
    uint32_t id;
    uint32_t first, end;            // its candidates in Slice::cand_*
    uint64_t transitions = 0;
    std::optional<Found> failure;   // its first step failure
    bool deadlock = false;
  };
  struct Slice {
    std::vector<uint64_t> states;   // candidate successors not in the store when the round began (words each)
    std::vector<uint32_t> actions;
    std::vector<std::pair<uint32_t, Violation>> violations;  // candidate index -> invariant it violates
    std::vector<Expansion> expansions;
    std::vector<uint8_t> fired;
  };

  bool make_workers() {
    for (int t = 1; t < opt_.threads; ++t) {
      std::unique_ptr<model::TransitionSystem> w = sys_.clone();
      if (!w) { workers_.clear(); return false; }
      if (opt_.limits.time_limit_seconds > 0) {
        w->set_deadline(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(opt_.limits.time_limit_seconds)));
      }
      workers_.push_back(std::move(w));
    }
    return true;
  }

  // Expands ids [lo, hi) with `sys` into `out`; reads the store only (no thread inserts during a round).
  void expand_slice(model::TransitionSystem& sys, uint64_t lo, uint64_t hi, Slice& out) {
    const int words = store_.words();
    std::vector<uint64_t> buf(words), scratch(store_.scratch_words());
    struct Sink : model::SuccessorSink {
      Slice* out;
      Expansion* x;
      const StateStore* store;
      model::TransitionSystem* sys;
      uint64_t* scratch;
      int words;
      void mark(uint32_t a) {
        if (a >= out->fired.size()) out->fired.resize(a + 1, 0);
        out->fired[a] = 1;
      }
      void successor(uint32_t action, const uint64_t* state) override {
        ++x->transitions;
        mark(action);
        if (store->contains(state, scratch)) return;
        uint32_t index = static_cast<uint32_t>(out->actions.size());
        out->states.insert(out->states.end(), state, state + words);
        out->actions.push_back(action);
        if (auto v = sys->check_invariants(state)) out->violations.emplace_back(index, *v);
      }
      void failure(uint32_t action, const Violation& v) override {
        ++x->transitions;
        mark(action);
        if (!x->failure) x->failure = Found{v, x->id, action};
      }
    } sink;
    sink.out = &out;
    sink.store = &store_;
    sink.sys = &sys;
    sink.scratch = scratch.data();
    sink.words = words;
    for (uint64_t id = lo; id < hi; ++id) {
      Expansion& x = out.expansions.emplace_back();
      x.id = static_cast<uint32_t>(id);
      x.first = static_cast<uint32_t>(out.actions.size());
      sink.x = &x;
      store_.load(x.id, buf.data());
      int enabled = sys.successors(buf.data(), sink);
      if (enabled == 0 && opt_.check_deadlock) {
        store_.load(x.id, buf.data());
        x.deadlock = !sys.valid_end(buf.data());
      }
      x.end = static_cast<uint32_t>(out.actions.size());
    }
  }

  void bfs_parallel() {
    if (found_) return;  // an initial state violates an invariant
    const int threads = opt_.threads;
    const uint64_t kPerThread = 1 << 13;  // states each thread expands per round
    const int words = store_.words();
    std::vector<Slice> slices(threads);
    uint64_t head = 0, layer_end = store_.size(), depth = 0;
    while (head < store_.size()) {
      if (head == layer_end) {
        if (found_) return;  // the layer that found it is complete: the counterexample is a shortest one
        ++depth;
        layer_end = store_.size();
        if (opt_.limits.max_depth && depth >= opt_.limits.max_depth) {
          stats_.depth = depth;
          limit_ = "max-depth";
          break;
        }
      }
      stats_.depth = depth;
      uint64_t end = std::min(layer_end, head + kPerThread * threads);
      uint64_t per = (end - head + threads - 1) / threads;
      std::vector<std::thread> pool;
      std::vector<std::exception_ptr> errors(threads);
      auto job = [&](int t) {
        uint64_t lo = std::min(end, head + per * t), hi = std::min(end, lo + per);
        slices[t] = Slice{};
        try {
          expand_slice(t == 0 ? sys_ : *workers_[t - 1], lo, hi, slices[t]);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      };
      for (int t = 1; t < threads; ++t) pool.emplace_back(job, t);
      job(0);
      for (std::thread& th : pool) th.join();
      for (auto& e : errors) {
        if (e) std::rethrow_exception(e);
      }
      // Merge in id order: the same insertions, in the same order, as the sequential search.
      bool stop = false;
      for (int t = 0; t < threads && !stop; ++t) {
        Slice& sl = slices[t];
        if (fired_.size() < sl.fired.size()) fired_.resize(sl.fired.size(), 0);
        for (size_t a = 0; a < sl.fired.size(); ++a) fired_[a] |= sl.fired[a];
        size_t next_violation = 0;
        for (const Expansion& x : sl.expansions) {
          current_ = x.id;
          stats_.transitions += x.transitions;
          for (uint32_t c = x.first; c < x.end; ++c) {
            const uint64_t* st = &sl.states[static_cast<size_t>(c) * words];
            while (next_violation < sl.violations.size() && sl.violations[next_violation].first < c) ++next_violation;
            std::optional<Violation> inv;
            if (next_violation < sl.violations.size() && sl.violations[next_violation].first == c) {
              inv = sl.violations[next_violation].second;
            }
            insert_known(sl.actions[c], st, inv);
          }
          if (x.failure && !found_) found_ = x.failure;
          head = x.id + 1;
          if (x.deadlock) {
            found_ = Found{Violation{Violation::Kind::kDeadlock, "deadlock",
                                     "no process can move and not every process is at a valid end state", {}},
                           x.id, kNoState};
            return;
          }
          if (limit_hit()) { stop = true; break; }
        }
      }
      if (stop) break;
    }
    if (found_ && !limit_.empty()) shortest_known_ = false;
  }

  // successor() for a candidate whose invariant check was done by a worker.
  void insert_known(uint32_t action, const uint64_t* state, const std::optional<Violation>& inv) {
    if (opt_.limits.max_states && store_.size() >= opt_.limits.max_states) {
      if (!store_.contains(state)) limit_ = "max-states";
      return;
    }
    auto [id, fresh] = store_.insert(state, current_);
    if (fresh) check_new(id, &inv);
  }

  void dfs() {
    shortest_known_ = false;
    while (!stack_.empty() && !found_) {
      uint32_t id = stack_.back();
      stack_.pop_back();
      if (opt_.limits.max_depth && depth_of_[id] >= opt_.limits.max_depth) { depth_truncated_ = true; continue; }
      expand(id);
      if (deadlock_) { found_ = deadlock_; break; }
      if (limit_hit()) break;
    }
    if (depth_truncated_ && limit_.empty()) limit_ = "max-depth";
  }

  // The first action (in enumeration order) that leads from `from` to `to`: the one that first reached `to` when
  // `from` was expanded, since the store keeps the first predecessor.
  uint32_t action_between(const std::vector<uint64_t>& from, const std::vector<uint64_t>& to) {
    struct Match : model::SuccessorSink {
      const std::vector<uint64_t>* to;
      uint32_t action = kNoState;
      void successor(uint32_t a, const uint64_t* s) override {
        if (action == kNoState && std::equal(to->begin(), to->end(), s)) action = a;
      }
      void failure(uint32_t, const Violation&) override {}
    } m;
    m.to = &to;
    sys_.set_deadline(std::chrono::steady_clock::time_point::max());
    sys_.successors(from.data(), m);
    return m.action;
  }

  Result finish() {
    Result r;
    stats_.states = store_.size();
    stats_.seconds = elapsed();
    stats_.store_bytes = store_.bytes();
    stats_.peak_rss_bytes = peak_rss_bytes();
    r.limit = limit_;
    if (found_) {
      r.outcome = Outcome::kViolated;
      r.violation = found_->violation;
      r.shortest = opt_.strategy == Strategy::kBfs && shortest_known_;
      std::vector<uint32_t> chain;
      for (uint32_t id = found_->state; id != kNoState; id = store_.predecessor(id)) chain.push_back(id);
      for (size_t i = chain.size(); i-- > 0;) {
        std::vector<uint64_t> s(store_.words());
        store_.load(chain[i], s.data());
        if (i + 1 < chain.size()) r.path.actions.push_back(action_between(r.path.states.back(), s));
        r.path.states.push_back(std::move(s));
      }
      if (found_->failing_action != kNoState) r.path.actions.push_back(found_->failing_action);
    } else {
      r.outcome = limit_.empty() ? Outcome::kHolds : Outcome::kInconclusive;
    }
    r.stats = stats_;
    r.action_fired = std::move(fired_);
    return r;
  }

  model::TransitionSystem& sys_;
  const Options& opt_;
  StateStore store_;
  std::vector<std::unique_ptr<model::TransitionSystem>> workers_;  // parallel BFS: threads 1..n-1
  std::vector<uint64_t> buf_;       // the state being expanded
  std::vector<uint64_t> new_buf_;   // a new state being checked (while buf_ is expanded)
  std::chrono::steady_clock::time_point start_;
  Stats stats_;
  std::optional<Found> found_;
  std::optional<Found> deadlock_;
  uint32_t current_ = kNoState;
  std::vector<uint32_t> stack_;     // DFS
  std::vector<uint32_t> depth_of_;  // DFS: depth of each state id
  bool depth_truncated_ = false;
  bool shortest_known_ = true;
  std::string limit_;
  std::vector<uint8_t> fired_;
  uint32_t progress_tick_ = 0;
  double next_progress_ = 1.0;
};

}  // namespace

Result explore(model::TransitionSystem& system, const Options& options) { return Search(system, options).run(); }

}  // namespace qpcheck::explore
