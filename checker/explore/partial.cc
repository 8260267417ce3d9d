// The partial search: BFS whose visited set keeps hashes only (hash compaction, bitstate).
#include <algorithm>
#include <atomic>
#include <bit>
#include <barrier>
#include <chrono>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "checker/explore/state_store.h"
#include "checker/explore/searcher.h"

namespace qpcheck::explore::internal {

namespace {

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
class PartialSearch : public Searcher, public model::SuccessorSink {
 public:
  PartialSearch(model::TransitionSystem& sys, const Options& opt)
      : Searcher(sys, opt),
        words_(sys.state_words()),
        bits_(opt.storage == Storage::kBitstate ? opt.bitstate_log2_bits : 6, opt.bitstate_hashes),
        buf_(words_) {}

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
    fire(action);
    if (opt_.limits.max_states && stored() >= opt_.limits.max_states) {
      limit_ = "max-states";
      return;
    }
    if (record(s)) add(s, current_, action);
  }
  void failure(uint32_t action, const Violation& v) override {
    ++stats_.transitions;
    fire(action);
    if (!found_) found_ = Found{v, current_, action};
  }
  bool limit_hit() {
    const model::SearchLimits& l = opt_.limits;
    if (!limit_.empty()) return true;
    if ((++tick_ & 1023) != 0) return false;
    if (interrupted()) { limit_ = "interrupted"; return true; }
    if (l.max_memory_bytes && bytes() + sys_.memory_bytes() >= l.max_memory_bytes) {
      limit_ = "max-memory";
      return true;
    }
    double now = elapsed();
    if (l.time_limit_seconds > 0 && now >= l.time_limit_seconds) { limit_ = "time-limit"; return true; }
    if (opt_.progress && now >= next_progress_) {
      next_progress_ = now + 1.0;
      model::SearchStats s = stats_;
      s.queue = queue_;
      s.states = stored();
      s.seconds = now;
      s.store_bytes = bytes();
      opt_.progress(s);
    }
    return false;
  }

  void search() override {
    auto inits = sys_.initial_states();
    for (size_t i = 0; i < inits.size(); ++i) {
      if (record(inits[i].data())) add(inits[i].data(), kNoState, static_cast<uint32_t>(i));
    }
    uint64_t depth = 0;
    std::optional<Found> deadlock;  // a deadlock at depth d finishes its layer (as in every engine) and beats d+1
    while (!found_ && !deadlock && !next_ids_.empty()) {
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
          if (!sys_.valid_end(buf_.data()) && !deadlock) deadlock = Found{model::deadlock(), current_, kNoState};
        }
        if (limit_hit()) return;
      }
      ++depth;
    }
    if (deadlock) found_ = deadlock;
  }

  // The successor of `from` by `action` (each action has at most one).
  std::vector<uint64_t> replay(const std::vector<uint64_t>& from, uint32_t action) {
    model::ActionOutcome o = model::successor_of(sys_, from.data(), action);
    if (!o.next) throw std::logic_error("partial search: a recorded action does not replay");
    return std::move(*o.next);
  }

  model::CheckResult finish() override {
    model::CheckResult r;
    close_stats(stored(), bytes());
    r.omission_probability = hc() ? fps_.omission_probability() : bits_.omission_probability();
    r.limit = limit_;
    if (found_) {
      r.outcome = model::Outcome::kViolated;
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
      r.outcome = model::Outcome::kInconclusive;
      if (r.limit.empty()) r.limit = hc() ? "hash-compaction" : "bitstate";
    }
    r.stats = stats_;
    r.action_fired = std::move(fired_);
    return r;
  }

  int words_;
  FingerprintSet fps_;
  Bitstate bits_;
  uint32_t current_ = kNoState;
  std::vector<uint64_t> buf_;
  std::vector<uint32_t> pred_, action_;   // per stored state id; a root's action is its initial-state index
  std::vector<uint64_t> cur_, next_;      // full states of the current and next BFS layer
  std::vector<uint32_t> cur_ids_, next_ids_;
  uint32_t tick_ = 0;
  uint64_t queue_ = 0;                    // progress reports: states stored but not expanded
  double next_progress_ = 1.0;
};

}  // namespace

model::CheckResult search_partial(model::TransitionSystem& sys, const Options& opt) {
  return PartialSearch(sys, opt).run();
}

}  // namespace qpcheck::explore::internal
