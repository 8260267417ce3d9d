// Tier "packed actions" of ModelSystem (docs/performance.md, "Flat ops on the packed state" and "Resolved per-action
// code"); internal to checker/model.
//
// Contract: PackedActions::build() compiles once more every action that packable() accepts (specialised_action.h)
// into a flat record on the packed state: its conditions after the prefilter as PackedTests, its ops as PackedOps
// with every field position looked up and consecutive constant writes (the pc update included) merged into per-word
// patches. run() applied to a copy of the source state computes the action's successor exactly as the machine
// would, or reports kSlow on any error path (overflow, out of range, full or empty queue, false assert, head of an
// empty queue): the copy is then garbage and the caller reruns the action on the machine (flat_ops.h), which raises
// the failure with the tree's message and span. An action that is not packed is kMachine: the machine runs it.
#pragma once

#include <cstdint>
#include <vector>

#include "checker/model/slot_condition.h"
#include "checker/model/specialised_action.h"
#include "checker/model/state_layout.h"

namespace qpcheck::model::tier {

// A test on the packed state: ((w[word] >> shift) & mask) - a <= span (unsigned), negated if `neg` -- every
// `slot <cmp> k` (the value interval mapped to raw bits, clamped to the field); other forms (generic >= 0) are
// holds_packed() of a located SlotCondition kept aside.
struct PackedTest {
  uint32_t word = 0, shift = 0;
  uint64_t mask = 0, a = 0, span = 0;
  bool neg = false;
  int32_t generic = -1;
};

// An op of a packed action, resolved: kPatch w[word] = (w[word] & ~clear) | bits (one or more consecutive constant
// writes, the pc update included); kAdd dst = src + k checked against lo..hi; queue ops and tests as FlatOp.
struct PackedOp {
  enum class Kind : uint8_t { kPatch, kAdd, kPush, kPop, kClear, kAssert, kRequire, kIf, kJump } kind = Kind::kPatch;
  uint32_t word = 0;
  int32_t slot = 0, jump = 0;       // jump: an index among the action's ops
  uint64_t clear = 0, bits = 0;
  StateLayout::Position src, dst;
  int64_t k = 0, lo = 0, hi = 0;
  uint32_t queue = 0;               // queue ops: queue_pos(queue..) is where its length and elements 0.. lie
  PackedTest test;
};

// One action's record: tests [test_begin, test_end) and ops [op_begin, op_end) in PackedActions.
struct PackedAction {
  // kPatch: constant writes (ops are kPatch only); kOps: run(); kMachine: not packed, the machine runs it
  enum class Kind : uint8_t { kPatch, kOps, kMachine } kind = Kind::kMachine;
  uint32_t test_begin = 0, test_end = 0;  // the conditions after the prefilter
  uint32_t op_begin = 0, op_end = 0;
  uint64_t words = 0;                     // bit w: word w may be written (restored from the source afterwards)
};

// kDisabled: a `require` failed; kDone: the successor is in `w`; kSlow: an error path was met (`w` is garbage).
enum class PackedRun { kDisabled, kDone, kSlow };

class PackedActions {
 public:
  // One record per action of `actions` (kMachine for those not packed, and for all when the model has no slots).
  void build(const std::vector<SpecialisedAction>& actions, const StateLayout& layout, bool no_slots);

  const PackedAction& action(uint32_t id) const { return actions_[id]; }
  const PackedTest& test_at(uint32_t i) const { return tests_[i]; }
  const PackedOp& op_at(uint32_t i) const { return ops_[i]; }
  // More than 64 words: PackedAction::words cannot name them, every word is restored.
  bool restore_all() const { return restore_all_; }

  [[gnu::always_inline]] bool test(const PackedTest& t, const uint64_t* w, const StateLayout& layout) const {
    if (t.generic >= 0) [[unlikely]] return holds_packed(generic_[t.generic], w, layout);
    return ((((w[t.word] >> t.shift) & t.mask) - t.a) <= t.span) != t.neg;
  }
  // head(q) of an empty queue in a generic test: an error path, left to the machine.
  bool empty_head(const PackedTest& t, const uint64_t* w, const StateLayout& layout) const {
    if (t.generic < 0) return false;
    const SlotCondition& g = generic_[t.generic];
    return g.kind == SlotCondition::Kind::kHead && layout.get(w, g.slot) == 0;
  }
  // Runs a kOps action's ops (its pc update included) on `w`, a copy of the source.
  PackedRun run(const PackedAction& h, uint64_t* w, const StateLayout& layout) const;

 private:
  PackedTest packed_test_of(const SlotCondition& t);
  static int64_t pget(const uint64_t* w, const StateLayout::Position& p) {
    return static_cast<int64_t>((w[p.word] >> p.shift) & p.mask) + p.lo;
  }
  static void pset(uint64_t* w, const StateLayout::Position& p, int64_t v) {
    const uint64_t m = p.mask << p.shift;
    w[p.word] = (w[p.word] & ~m) | ((static_cast<uint64_t>(v - p.lo) << p.shift) & m);
  }

  std::vector<PackedAction> actions_;         // per action id
  std::vector<PackedTest> tests_;
  std::vector<PackedOp> ops_;
  std::vector<SlotCondition> generic_;             // PackedTest::generic
  std::vector<StateLayout::Position> queue_pos_;
  bool restore_all_ = false;
};

inline PackedRun PackedActions::run(const PackedAction& h, uint64_t* w, const StateLayout& layout) const {
  using K = PackedOp::Kind;
  const PackedOp* ops = ops_.data() + h.op_begin;
  for (int32_t i = 0, n = static_cast<int32_t>(h.op_end - h.op_begin); i < n;) {
    const PackedOp& o = ops[i];
    switch (o.kind) {
      case K::kPatch: w[o.word] = (w[o.word] & ~o.clear) | o.bits; break;
      case K::kAdd: {
        int64_t v;
        const int64_t x = static_cast<int64_t>((w[o.src.word] >> o.src.shift) & o.src.mask) + o.src.lo;
        if (__builtin_add_overflow(x, o.k, &v) || v < o.lo || v > o.hi) return PackedRun::kSlow;
        const uint64_t m = o.dst.mask << o.dst.shift;
        w[o.dst.word] = (w[o.dst.word] & ~m) | ((static_cast<uint64_t>(v - o.dst.lo) << o.dst.shift) & m);
        break;
      }
      case K::kPush: {
        const StateLayout::Position* q = queue_pos_.data() + o.queue;
        int64_t len = pget(w, q[0]);
        if (len >= o.hi || len < 0) return PackedRun::kSlow;
        pset(w, q[1 + len], o.k);
        pset(w, q[0], len + 1);
        break;
      }
      case K::kPop: {
        const StateLayout::Position* q = queue_pos_.data() + o.queue;
        int64_t len = pget(w, q[0]);
        if (len <= 0) return PackedRun::kSlow;
        for (int64_t k = 0; k + 1 < len; ++k) pset(w, q[1 + k], pget(w, q[2 + k]));
        pset(w, q[len], o.lo);
        pset(w, q[0], len - 1);
        break;
      }
      case K::kClear: {
        const StateLayout::Position* q = queue_pos_.data() + o.queue;
        pset(w, q[0], 0);
        for (int64_t k = 0; k < o.hi; ++k) pset(w, q[1 + k], o.lo);
        break;
      }
      case K::kAssert:
        if (empty_head(o.test, w, layout) || !test(o.test, w, layout)) return PackedRun::kSlow;
        break;
      case K::kRequire:
        if (empty_head(o.test, w, layout)) return PackedRun::kSlow;
        if (!test(o.test, w, layout)) return PackedRun::kDisabled;
        break;
      case K::kIf:
        if (empty_head(o.test, w, layout)) return PackedRun::kSlow;
        if (!test(o.test, w, layout)) {
          i = o.jump;
          continue;
        }
        break;
      case K::kJump: i = o.jump; continue;
    }
    ++i;
  }
  return PackedRun::kDone;
}

}  // namespace qpcheck::model::tier
