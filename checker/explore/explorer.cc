#include "checker/explore/explorer.h"

#include <chrono>
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
      : sys_(sys), opt_(opt), store_(sys.state_words()), start_(std::chrono::steady_clock::now()) {}

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
      auto [id, fresh] = store_.insert(init.data(), kNoState, kNoState);
      if (fresh) {
        if (opt_.strategy == Strategy::kDfs) { stack_.push_back(id); depth_of_.push_back(0); }
        check_new(id);
      }
    }
    if (opt_.strategy == Strategy::kBfs) bfs(); else dfs();
  }

 private:
  void successor(uint32_t action, const uint64_t* state) override {
    ++stats_.transitions;
    mark_fired(action);
    if (opt_.limits.max_states && store_.size() >= opt_.limits.max_states) {
      if (!store_.contains(state)) limit_ = "max-states";  // the store stays at exactly max_states
      return;
    }
    auto [id, fresh] = store_.insert(state, current_, action);
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
    mark_fired(action);
    if (!found_) found_ = Found{v, current_, action};
  }

  void mark_fired(uint32_t action) {
    if (action >= fired_.size()) fired_.resize(action + 1, 0);
    fired_[action] = 1;
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

  void check_new(uint32_t id) {
    if (found_) return;
    if (auto v = sys_.check_invariants(store_.state(id))) found_ = Found{*v, id, kNoState};
  }

  // Expands `id`; returns false when it is a deadlock (recorded in found_).
  void expand(uint32_t id) {
    current_ = id;
    int enabled = sys_.successors(store_.state(id), *this);
    if (enabled == 0 && opt_.witness && terminal_ == kNoState && sys_.valid_end(store_.state(id))) terminal_ = id;
    if (enabled == 0 && opt_.check_deadlock && !sys_.valid_end(store_.state(id))) {
      deadlock_ = Found{Violation{Violation::Kind::kDeadlock, "deadlock",
                                  "no process can move and not every process is at a valid end state", {}},
                        id, kNoState};
    }
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
        const uint64_t* s = store_.state(chain[i]);
        r.path.states.emplace_back(s, s + store_.words());
        if (i + 1 < chain.size()) r.path.actions.push_back(store_.action(chain[i]));
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
    return r;
  }

  model::TransitionSystem& sys_;
  const Options& opt_;
  StateStore store_;
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
  std::vector<uint8_t> fired_;      // Result::action_fired
  uint64_t expansions_ = 0;
  double next_progress_ = 1.0;      // no progress report in the first second
};

}  // namespace

Result explore(model::TransitionSystem& system, const Options& options) { return Search(system, options).run(); }

}  // namespace qpcheck::explore
