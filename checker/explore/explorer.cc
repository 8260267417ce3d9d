#include "checker/explore/explorer.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
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
    if (opt_.por && opt_.strategy == Strategy::kBfs && opt_.threads <= 1) por_ = sys_.independence();
    if (opt_.strategy == Strategy::kDfs) {
      dfs();
    } else if (por_.groups > 1) {
      bfs();
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
    int enabled = por_.groups > 1 ? expand_reduced() : sys_.successors(buf_.data(), *this);
    if (enabled == 0 && (opt_.witness || opt_.check_deadlock)) {
      store_.load(id, buf_.data());
      bool end = sys_.valid_end(buf_.data());
      if (end && opt_.witness && terminal_ == kNoState) terminal_ = id;
      if (!end && opt_.check_deadlock) {
        deadlock_ = Found{Violation{Violation::Kind::kDeadlock, "deadlock",
                                    "no process can move and not every process is at a valid end state", {}},
                          id, kNoState};
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

  // Calls Options::progress about once per second (the clock is read every 1024 expansions).
  void report_progress(uint64_t queue) {
    if (!opt_.progress || (++expansions_ & 1023) != 0) return;
    double now = elapsed();
    if (now < next_progress_) return;
    next_progress_ = now + 1.0;
    Stats s = stats_;
    s.states = store_.size();
    s.seconds = now;
    s.store_bytes = store_.bytes();
    s.queue = queue;
    opt_.progress(s);
  }

  bool limit_hit() {
    const Limits& l = opt_.limits;
    if (!limit_.empty()) return true;  // max-states, set while inserting
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
      report_progress(store_.size() - head);
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
    uint32_t failure_at = 0;        // ... reported before candidate failure_at (order matters for found_)
    bool deadlock = false;
    bool terminal = false;          // no action enabled, every process at a valid end (Options::witness)
  };
  struct Slice {
    std::vector<uint64_t> rows;     // candidate successors not in the store when the round began, packed as the
                                    // store packs them (scratch_words each), each once per slice
    std::vector<uint64_t> hashes;
    std::vector<uint32_t> actions;
    std::vector<uint32_t> seen;     // open addressing over candidate index + 1 (this slice's duplicates)
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
    out.seen.assign(1 << 12, 0);
    struct Sink : model::SuccessorSink {
      Slice* out;
      Expansion* x;
      const StateStore* store;
      model::TransitionSystem* sys;
      uint64_t* scratch;
      int words;
      int rw;
      // A candidate equal to an earlier one of this slice adds nothing: the merge would find it stored.
      bool duplicate(uint64_t h) {
        std::vector<uint32_t>& seen = out->seen;
        uint64_t mask = seen.size() - 1;
        for (uint64_t i = h & mask;; i = (i + 1) & mask) {
          uint32_t c = seen[i];
          if (c == 0) {
            seen[i] = static_cast<uint32_t>(out->hashes.size()) + 1;
            return false;
          }
          if (out->hashes[c - 1] == h &&
              std::equal(scratch, scratch + rw, out->rows.begin() + static_cast<size_t>(c - 1) * rw)) {
            return true;
          }
        }
      }
      void grow_seen() {
        std::vector<uint32_t>& seen = out->seen;
        seen.assign(seen.size() * 2, 0);
        uint64_t mask = seen.size() - 1;
        for (uint32_t c = 0; c < out->hashes.size(); ++c) {
          uint64_t i = out->hashes[c] & mask;
          while (seen[i] != 0) i = (i + 1) & mask;
          seen[i] = c + 1;
        }
      }
      void mark(uint32_t a) {
        if (a >= out->fired.size()) out->fired.resize(a + 1, 0);
        out->fired[a] = 1;
      }
      void successor(uint32_t action, const uint64_t* state) override {
        ++x->transitions;
        mark(action);
        uint64_t h = store->prepare(state, scratch);
        if (store->contains_prepared(scratch, h) || duplicate(h)) return;
        uint32_t index = static_cast<uint32_t>(out->actions.size());
        out->rows.insert(out->rows.end(), scratch, scratch + rw);
        out->hashes.push_back(h);
        out->actions.push_back(action);
        if (out->hashes.size() * 2 > out->seen.size()) grow_seen();
        if (auto v = sys->check_invariants_after(action, state)) out->violations.emplace_back(index, *v);
      }
      void failure(uint32_t action, const Violation& v) override {
        ++x->transitions;
        mark(action);
        if (!x->failure) {
          x->failure = Found{v, x->id, action};
          x->failure_at = static_cast<uint32_t>(out->actions.size());
        }
      }
    } sink;
    sink.out = &out;
    sink.store = &store_;
    sink.sys = &sys;
    sink.scratch = scratch.data();
    sink.words = words;
    sink.rw = store_.scratch_words();
    for (uint64_t id = lo; id < hi; ++id) {
      Expansion& x = out.expansions.emplace_back();
      x.id = static_cast<uint32_t>(id);
      x.first = static_cast<uint32_t>(out.actions.size());
      sink.x = &x;
      store_.load(x.id, buf.data());
      int enabled = sys.successors(buf.data(), sink);
      if (enabled == 0 && (opt_.check_deadlock || opt_.witness)) {
        store_.load(x.id, buf.data());
        bool end = sys.valid_end(buf.data());
        x.deadlock = !end && opt_.check_deadlock;
        x.terminal = end;
      }
      x.end = static_cast<uint32_t>(out.actions.size());
    }
  }

  void bfs_parallel() {
    if (found_) return;  // an initial state violates an invariant
    const int threads = opt_.threads;
    const uint64_t kPerThread = 1 << 13;  // states each thread expands per round
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
      const int rw = store_.scratch_words();
      for (int t = 0; t < threads && !stop; ++t) {
        Slice& sl = slices[t];
        if (fired_.size() < sl.fired.size()) fired_.resize(sl.fired.size(), 0);
        for (size_t a = 0; a < sl.fired.size(); ++a) fired_[a] |= sl.fired[a];
        size_t next_violation = 0;
        for (const Expansion& x : sl.expansions) {
          current_ = x.id;
          stats_.transitions += x.transitions;
          for (uint32_t c = x.first; c < x.end; ++c) {
            if (x.failure && c == x.failure_at && !found_) found_ = x.failure;
            const uint64_t* row = &sl.rows[static_cast<size_t>(c) * rw];
            while (next_violation < sl.violations.size() && sl.violations[next_violation].first < c) ++next_violation;
            std::optional<Violation> inv;
            if (next_violation < sl.violations.size() && sl.violations[next_violation].first == c) {
              inv = sl.violations[next_violation].second;
            }
            insert_known(row, sl.hashes[c], inv);
          }
          if (x.failure && !found_) found_ = x.failure;
          if (x.terminal && opt_.witness && terminal_ == kNoState) terminal_ = x.id;
          head = x.id + 1;
          report_progress(store_.size() - head);
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

  // successor() for a candidate prepared (and invariant-checked) by a worker.
  void insert_known(const uint64_t* row, uint64_t h, const std::optional<Violation>& inv) {
    if (opt_.limits.max_states && store_.size() >= opt_.limits.max_states) {
      if (!store_.contains_prepared(row, h)) limit_ = "max-states";
      return;
    }
    auto [id, fresh] = store_.insert_prepared(row, h, current_);
    if (fresh) check_new(id, &inv);
  }

  void dfs() {
    shortest_known_ = false;
    while (!stack_.empty() && !found_) {
      uint32_t id = stack_.back();
      stack_.pop_back();
      if (opt_.limits.max_depth && depth_of_[id] >= opt_.limits.max_depth) { depth_truncated_ = true; continue; }
      report_progress(stack_.size());
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
    auto path_to = [&](uint32_t last) {
      std::vector<uint32_t> chain;
      for (uint32_t id = last; id != kNoState; id = store_.predecessor(id)) chain.push_back(id);
      for (size_t i = chain.size(); i-- > 0;) {
        std::vector<uint64_t> s(store_.words());
        store_.load(chain[i], s.data());
        if (i + 1 < chain.size()) r.path.actions.push_back(action_between(r.path.states.back(), s));
        r.path.states.push_back(std::move(s));
      }
    };
    if (found_) {
      r.outcome = Outcome::kViolated;
      r.violation = found_->violation;
      r.shortest = opt_.strategy == Strategy::kBfs && shortest_known_;
      path_to(found_->state);
      if (found_->failing_action != kNoState) r.path.actions.push_back(found_->failing_action);
    } else {
      r.outcome = limit_.empty() ? Outcome::kHolds : Outcome::kInconclusive;
      if (r.outcome == Outcome::kHolds && terminal_ != kNoState) {
        r.shortest = opt_.strategy == Strategy::kBfs;
        path_to(terminal_);
      }
    }
    r.stats = stats_;
    r.action_fired = std::move(fired_);
    r.por_groups = opt_.por ? por_.groups : 0;
    r.por_reduced_states = reduced_states_;
    if (por_.groups > 1) r.shortest = false;
    return r;
  }

  model::TransitionSystem& sys_;
  const Options& opt_;
  model::TransitionSystem::Independence por_;
  uint64_t reduced_states_ = 0;
  std::vector<uint32_t> failed_;    // POR: actions that failed in the current expansion
  Collect collect_;
  StateStore store_;
  std::vector<std::unique_ptr<model::TransitionSystem>> workers_;  // parallel BFS: threads 1..n-1
  std::vector<uint64_t> buf_;       // the state being expanded
  std::vector<uint64_t> new_buf_;   // a new state being checked (while buf_ is expanded)
  std::chrono::steady_clock::time_point start_;
  Stats stats_;
  std::optional<Found> found_;
  std::optional<Found> deadlock_;
  uint32_t current_ = kNoState;
  uint32_t terminal_ = kNoState;    // Options::witness: the first terminal valid-end state expanded
  std::vector<uint32_t> stack_;     // DFS
  std::vector<uint32_t> depth_of_;  // DFS: depth of each state id
  bool depth_truncated_ = false;
  bool shortest_known_ = true;
  std::string limit_;
  std::vector<uint8_t> fired_;
  uint64_t expansions_ = 0;
  double next_progress_ = 1.0;      // no progress report in the first second
};

uint64_t hash_words(const uint64_t* s, int words, uint64_t seed) {
  uint64_t h = seed;
  for (int i = 0; i < words; ++i) {
    uint64_t x = s[i] + h + 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    h = x ^ (x >> 31);
  }
  return h;
}

// BFS with partial storage (hash compaction or bitstate): the visited set keeps no states, so the search keeps the
// full states of the current and next layer only, plus a predecessor id and action per stored state; a counterexample
// is rebuilt by replaying those actions from the initial state.
class PartialSearch : public model::SuccessorSink {
 public:
  PartialSearch(model::TransitionSystem& sys, const Options& opt)
      : sys_(sys),
        opt_(opt),
        words_(sys.state_words()),
        bits_(opt.storage == Storage::kBitstate ? opt.bitstate_log2_bits : 6, opt.bitstate_hashes),
        start_(std::chrono::steady_clock::now()),
        fired_(sys.action_count(), 0),
        buf_(words_) {}

  Result run() {
    if (opt_.limits.time_limit_seconds > 0) {
      sys_.set_deadline(start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(opt_.limits.time_limit_seconds)));
    }
    try {
      search();
    } catch (const model::DeadlineExceeded&) {
      limit_ = "time-limit";
    } catch (const std::bad_alloc&) {
      limit_ = "memory";
    }
    return finish();
  }

 private:
  bool hc() const { return opt_.storage == Storage::kHashCompaction; }
  uint64_t stored() const { return hc() ? fps_.size() : bits_.size(); }
  uint64_t bytes() const {
    return (hc() ? fps_.bytes() : bits_.bytes()) + (pred_.capacity() + action_.capacity()) * sizeof(uint32_t) +
           (cur_.capacity() + next_.capacity()) * sizeof(uint64_t) +
           (cur_ids_.capacity() + next_ids_.capacity()) * sizeof(uint32_t);
  }
  bool record(const uint64_t* s) {
    uint64_t h1 = hash_words(s, words_, 0x5851F42D4C957F2DULL);
    if (hc()) return fps_.insert(h1);
    return bits_.insert(h1, hash_words(s, words_, 0x14057B7EF767814FULL));
  }
  void add(const uint64_t* s, uint32_t pred, uint32_t action) {
    if (pred_.size() >= UINT32_MAX - 2) throw std::length_error("partial store full (2^32 states)");
    uint32_t id = static_cast<uint32_t>(pred_.size());
    pred_.push_back(pred);
    action_.push_back(action);
    next_.insert(next_.end(), s, s + words_);
    next_ids_.push_back(id);
    if (!found_) {
      if (auto v = sys_.check_invariants(s)) found_ = Found{*v, id, kNoState};
    }
  }
  void successor(uint32_t action, const uint64_t* s) override {
    ++stats_.transitions;
    fired(action);
    if (opt_.limits.max_states && stored() >= opt_.limits.max_states) {
      limit_ = "max-states";
      return;
    }
    if (record(s)) add(s, current_, action);
  }
  void failure(uint32_t action, const Violation& v) override {
    ++stats_.transitions;
    fired(action);
    if (!found_) found_ = Found{v, current_, action};
  }
  void fired(uint32_t a) {
    if (a >= fired_.size()) fired_.resize(a + 1, 0);
    fired_[a] = 1;
  }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  bool limit_hit() {
    const Limits& l = opt_.limits;
    if (!limit_.empty()) return true;
    if ((++tick_ & 1023) != 0) return false;
    if (l.max_memory_bytes && bytes() >= l.max_memory_bytes) { limit_ = "max-memory"; return true; }
    double now = elapsed();
    if (l.time_limit_seconds > 0 && now >= l.time_limit_seconds) { limit_ = "time-limit"; return true; }
    if (opt_.progress && now >= next_progress_) {
      next_progress_ = now + 1.0;
      Stats s = stats_;
      s.queue = queue_;
      s.states = stored();
      s.seconds = now;
      s.store_bytes = bytes();
      opt_.progress(s);
    }
    return false;
  }

  void search() {
    auto inits = sys_.initial_states();
    for (size_t i = 0; i < inits.size(); ++i) {
      if (record(inits[i].data())) add(inits[i].data(), kNoState, static_cast<uint32_t>(i));
    }
    uint64_t depth = 0;
    while (!found_ && !next_ids_.empty()) {
      cur_.swap(next_);
      cur_ids_.swap(next_ids_);
      next_.clear();
      next_ids_.clear();
      if (depth > 0 && opt_.limits.max_depth && depth >= opt_.limits.max_depth) {
        limit_ = "max-depth";
        break;
      }
      stats_.depth = depth;
      for (size_t k = 0; k < cur_ids_.size(); ++k) {
        current_ = cur_ids_[k];
        queue_ = (cur_ids_.size() - k) + next_ids_.size();
        std::copy(&cur_[k * words_], &cur_[(k + 1) * words_], buf_.begin());
        int enabled = sys_.successors(buf_.data(), *this);
        if (enabled == 0 && opt_.check_deadlock) {
          std::copy(&cur_[k * words_], &cur_[(k + 1) * words_], buf_.begin());
          if (!sys_.valid_end(buf_.data())) {
            found_ = Found{Violation{Violation::Kind::kDeadlock, "deadlock",
                                     "no process can move and not every process is at a valid end state", {}},
                           current_, kNoState};
            return;
          }
        }
        if (limit_hit()) return;
      }
      ++depth;
    }
  }

  // The successor of `from` by `action` (each action has at most one).
  std::vector<uint64_t> replay(const std::vector<uint64_t>& from, uint32_t action) {
    struct Pick : model::SuccessorSink {
      uint32_t action;
      std::vector<uint64_t> out;
      int words;
      void successor(uint32_t a, const uint64_t* s) override {
        if (a == action && out.empty()) out.assign(s, s + words);
      }
      void failure(uint32_t, const Violation&) override {}
    } pick;
    pick.action = action;
    pick.words = words_;
    sys_.successors(from.data(), pick);
    if (pick.out.empty()) throw std::logic_error("partial search: a recorded action does not replay");
    return pick.out;
  }

  Result finish() {
    Result r;
    stats_.states = stored();
    stats_.seconds = elapsed();
    stats_.store_bytes = bytes();
    stats_.peak_rss_bytes = peak_rss_bytes();
    r.omission_probability = hc() ? fps_.omission_probability() : bits_.omission_probability();
    r.limit = limit_;
    if (found_) {
      r.outcome = Outcome::kViolated;
      r.violation = found_->violation;
      r.shortest = false;  // a missed state may have led to a shorter one
      std::vector<uint32_t> chain;
      for (uint32_t id = found_->state; id != kNoState; id = pred_[id]) chain.push_back(id);
      sys_.set_deadline(std::chrono::steady_clock::time_point::max());
      auto inits = sys_.initial_states();
      r.path.states.push_back(inits.at(action_[chain.back()]));
      for (size_t i = chain.size() - 1; i-- > 0;) {
        r.path.actions.push_back(action_[chain[i]]);
        r.path.states.push_back(replay(r.path.states.back(), action_[chain[i]]));
      }
      if (found_->failing_action != kNoState) r.path.actions.push_back(found_->failing_action);
    } else {
      r.outcome = Outcome::kInconclusive;
      if (r.limit.empty()) r.limit = hc() ? "hash-compaction" : "bitstate";
    }
    r.stats = stats_;
    r.action_fired = std::move(fired_);
    return r;
  }

  model::TransitionSystem& sys_;
  const Options& opt_;
  int words_;
  FingerprintSet fps_;
  Bitstate bits_;
  std::chrono::steady_clock::time_point start_;
  Stats stats_;
  std::optional<Found> found_;
  uint32_t current_ = kNoState;
  std::string limit_;
  std::vector<uint8_t> fired_;
  std::vector<uint64_t> buf_;
  std::vector<uint32_t> pred_, action_;   // per stored state id; a root's action is its initial-state index
  std::vector<uint64_t> cur_, next_;      // full states of the current and next BFS layer
  std::vector<uint32_t> cur_ids_, next_ids_;
  uint32_t tick_ = 0;
  uint64_t queue_ = 0;                    // progress reports: states stored but not expanded
  double next_progress_ = 1.0;
};

}  // namespace

Result explore(model::TransitionSystem& system, const Options& options) {
  if (options.storage != Storage::kExact) return PartialSearch(system, options).run();
  return Search(system, options).run();
}

}  // namespace qpcheck::explore
