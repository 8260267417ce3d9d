#include "checker/model/packed_action.h"

#include <algorithm>

namespace qpcheck::model::tier {

PackedTest PackedActions::packed_test_of(const SlotCondition& t) {
  PackedTest r;
  using K = SlotCondition::Kind;
  if (t.kind != K::kEq && t.kind != K::kNe && t.kind != K::kLt && t.kind != K::kLe && t.kind != K::kGt &&
      t.kind != K::kGe) {
    r.generic = static_cast<int32_t>(generic_.size());
    generic_.push_back(t);
    return r;
  }
  const StateLayout::Position& p = t.pos;
  r.word = static_cast<uint32_t>(p.word);
  r.shift = static_cast<uint32_t>(p.shift);
  r.mask = p.mask;
  // value in [a, b] <=> raw = value - lo in [a - lo, b - lo], clamped to the raw values 0..mask the field can hold
  using I = __int128;
  auto interval = [&](I a, I b) {
    I ra = std::max<I>(a - p.lo, 0), rb = std::min<I>(b - p.lo, static_cast<I>(p.mask));
    if (ra > rb) {
      r.mask = 0;  // never: raw is 0 and 0 - 1 > 0
      r.a = 1;
      r.span = 0;
    } else {
      r.a = static_cast<uint64_t>(ra);
      r.span = static_cast<uint64_t>(rb - ra);
    }
  };
  const I k = t.k, lo = INT64_MIN, hi = INT64_MAX;
  switch (t.kind) {
    case K::kEq: interval(k, k); break;
    case K::kNe: interval(k, k); r.neg = true; break;
    case K::kLt: interval(lo, k - 1); break;
    case K::kLe: interval(lo, k); break;
    case K::kGt: interval(k + 1, hi); break;
    default: interval(k, hi); break;  // kGe
  }
  return r;
}

void PackedActions::build(const std::vector<SpecialisedAction>& actions, const StateLayout& layout, bool no_slots) {
  restore_all_ = layout.words() > 64;
  actions_.resize(actions.size());
  for (size_t id = 0; id < actions.size(); ++id) {
    const SpecialisedAction& f = actions[id];
    PackedAction& h = actions_[id];
    h.test_begin = h.test_end = static_cast<uint32_t>(tests_.size());
    h.op_begin = h.op_end = static_cast<uint32_t>(ops_.size());
    if (!f.packed || no_slots) continue;  // kMachine
    for (size_t i = f.prefiltered ? 1 : 0; i < f.conds.size(); ++i) tests_.push_back(packed_test_of(f.conds[i]));
    h.test_end = static_cast<uint32_t>(tests_.size());
    auto mark = [&](int slot) {
      auto [w, m] = layout.field_bits(slot);
      if (m != 0 && w < 64) h.words |= uint64_t{1} << w;
    };
    // ops[i] starts at hot op at[i]; a jump target never merges with the op before it
    std::vector<uint32_t> at(f.ops.size() + 1);
    std::vector<uint8_t> target(f.ops.size() + 1, 0);
    for (const FlatOp& o : f.ops) {
      if (o.kind == FlatOp::Kind::kIf || o.kind == FlatOp::Kind::kJump) target[o.jump] = 1;
    }
    std::vector<PackedOp> ops;
    bool open_patch = false;  // ops.back() is a patch that the next constant write may join
    auto patch = [&](int slot, int64_t v) {
      auto [w, m] = layout.field_bits(slot);
      if (m == 0) return;  // a constant slot: v is its only value
      mark(slot);
      std::vector<uint64_t> one(layout.words(), 0);
      layout.set(one.data(), slot, v);
      // join the open patch only if it is for the same word (else start another; all are applied in order)
      if (!open_patch || ops.back().word != static_cast<uint32_t>(w)) {
        PackedOp p;
        p.kind = PackedOp::Kind::kPatch;
        p.word = static_cast<uint32_t>(w);
        ops.push_back(p);
        open_patch = true;
      }
      PackedOp& p = ops.back();
      p.clear |= m;
      p.bits = (p.bits & ~m) | one[w];
    };
    for (size_t i = 0; i < f.ops.size(); ++i) {
      const FlatOp& o = f.ops[i];
      if (target[i]) open_patch = false;
      at[i] = static_cast<uint32_t>(ops.size());
      if (o.kind == FlatOp::Kind::kSet) {
        patch(o.slot, o.k);
        at[i] = static_cast<uint32_t>(ops.size() - (open_patch && layout.field_bits(o.slot).second != 0 ? 1 : 0));
        continue;
      }
      open_patch = false;
      PackedOp x;
      x.slot = o.slot;
      x.k = o.k;
      x.lo = o.lo;
      x.hi = o.hi;
      x.jump = o.jump;
      switch (o.kind) {
        case FlatOp::Kind::kAdd:
          x.kind = PackedOp::Kind::kAdd;
          x.src = layout.position(o.src);
          x.dst = layout.position(o.slot);
          mark(o.slot);
          break;
        case FlatOp::Kind::kPush:
        case FlatOp::Kind::kPop:
        case FlatOp::Kind::kClear: {
          x.kind = o.kind == FlatOp::Kind::kPush  ? PackedOp::Kind::kPush
                   : o.kind == FlatOp::Kind::kPop ? PackedOp::Kind::kPop
                                                 : PackedOp::Kind::kClear;
          const int capacity = o.s->lhs->type->capacity;
          x.queue = static_cast<uint32_t>(queue_pos_.size());
          for (int e = 0; e <= capacity; ++e) {
            mark(o.slot + e);
            queue_pos_.push_back(layout.position(o.slot + e));
          }
          break;
        }
        case FlatOp::Kind::kAssert:
        case FlatOp::Kind::kRequire:
        case FlatOp::Kind::kIf:
          x.kind = o.kind == FlatOp::Kind::kAssert    ? PackedOp::Kind::kAssert
                   : o.kind == FlatOp::Kind::kRequire ? PackedOp::Kind::kRequire
                                                     : PackedOp::Kind::kIf;
          x.test = packed_test_of(o.test);
          break;
        case FlatOp::Kind::kJump: x.kind = PackedOp::Kind::kJump; break;
        default: break;  // kStmt: not packed
      }
      ops.push_back(x);
    }
    at[f.ops.size()] = static_cast<uint32_t>(ops.size());
    if (target[f.ops.size()]) open_patch = false;
    if (f.pc_slot >= 0) patch(f.pc_slot, f.next_pc);
    for (PackedOp& x : ops) {
      if (x.kind == PackedOp::Kind::kIf || x.kind == PackedOp::Kind::kJump) x.jump = static_cast<int32_t>(at[x.jump]);
    }
    if (restore_all_) h.words = ~uint64_t{0};
    h.kind = std::all_of(ops.begin(), ops.end(), [](const PackedOp& x) { return x.kind == PackedOp::Kind::kPatch; })
                 ? PackedAction::Kind::kPatch
                 : PackedAction::Kind::kOps;
    ops_.insert(ops_.end(), ops.begin(), ops.end());
    h.op_end = static_cast<uint32_t>(ops_.size());
  }
}

}  // namespace qpcheck::model::tier
