// Tier "slot conditions" of ModelSystem (docs/performance.md, "Guards as slot conditions"); internal to checker/model.
//
// Contract: make_test() recognises a boolean condition of a specialised action or invariant that is one compare (or
// a short loop) over static slots -- `slot <cmp> k`, `slot == k || slot == k2`, `!x`, `empty(q)`, `full(q)`,
// `len(q) <cmp> k`, `contains(q, k)` of a static queue of scalars, `x - y <cmp> k` of two small scalars, `P[k]@L`
// after specialisation -- none of which can raise a runtime error. holds() and holds_packed() compute exactly what
// Machine::eval computes for it, on the unpacked or the packed state. Any other condition is kGeneral: the caller
// falls back to Machine::eval(e). make_op_test() adds `head(q) <cmp> k` (kHead), which fails on an empty queue: the
// caller must check the queue's length first and leave that case to the tree evaluator.
#pragma once

#include <cstdint>
#include <vector>

#include "checker/model/model.h"
#include "checker/model/state_layout.h"

namespace qpcheck::model::tier {

// A condition in a quick form: `state[slot] <cmp> k`, `state[slot] == k || state[slot] == k2`, `contains(q, k)`
// of a static queue of scalars (slot = its length), `state[slot] - state[slot2] <cmp> k`, `head(q) <cmp> k`
// (statement conditions only: the caller checks q is not empty first), or a general expression.
struct SlotCondition {
  enum class Kind : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kEq2, kContains, kDiff, kHead, kGeneral };
  Kind kind = Kind::kGeneral;
  Kind cmp = Kind::kEq;             // kDiff, kHead: the comparison (kEq..kGe)
  int32_t slot = 0, slot2 = 0;
  int64_t k = 0, k2 = 0;
  StateLayout::Position pos;        // where `slot` lies in the packed state (set by locate())
  const Expr* e = nullptr;          // the condition itself
};

// The quick form of `e`, or kGeneral.
SlotCondition make_test(const Expr* e);
// make_test, plus head(q) <cmp> k (statements only).
SlotCondition make_op_test(const Expr* e);
// Sets t.pos for holds_packed().
inline void locate(SlotCondition& t, const StateLayout& layout) { t.pos = layout.position(t.slot); }
// Bits of the packed state `t` reads (ORed into `bits`, one word per state word).
void test_bits(const SlotCondition& t, const StateLayout& layout, std::vector<uint64_t>& bits);

inline bool compare(SlotCondition::Kind cmp, int64_t v, int64_t k) {
  switch (cmp) {
    case SlotCondition::Kind::kEq: return v == k;
    case SlotCondition::Kind::kNe: return v != k;
    case SlotCondition::Kind::kLt: return v < k;
    case SlotCondition::Kind::kLe: return v <= k;
    case SlotCondition::Kind::kGt: return v > k;
    case SlotCondition::Kind::kGe: return v >= k;
    default: return true;
  }
}

// The value of a quick test (not kGeneral) on the unpacked state `st` (one int64 per slot).
inline bool holds(const SlotCondition& t, const int64_t* st) {
  switch (t.kind) {
    case SlotCondition::Kind::kEq: return st[t.slot] == t.k;
    case SlotCondition::Kind::kNe: return st[t.slot] != t.k;
    case SlotCondition::Kind::kLt: return st[t.slot] < t.k;
    case SlotCondition::Kind::kLe: return st[t.slot] <= t.k;
    case SlotCondition::Kind::kGt: return st[t.slot] > t.k;
    case SlotCondition::Kind::kGe: return st[t.slot] >= t.k;
    case SlotCondition::Kind::kEq2: return st[t.slot] == t.k || st[t.slot] == t.k2;
    case SlotCondition::Kind::kDiff: return compare(t.cmp, st[t.slot] - st[t.slot2], t.k);
    case SlotCondition::Kind::kHead: return compare(t.cmp, st[t.slot + 1], t.k);
    case SlotCondition::Kind::kContains: {
      const int64_t* q = st + t.slot;
      for (int64_t i = 0; i < q[0]; ++i) {
        if (q[1 + i] == t.k) return true;
      }
      return false;
    }
    default: return true;
  }
}

// holds() on the packed state `w` (t located).
[[gnu::always_inline]] inline bool holds_packed(const SlotCondition& t, const uint64_t* w, const StateLayout& layout) {
  const int64_t v = static_cast<int64_t>((w[t.pos.word] >> t.pos.shift) & t.pos.mask) + t.pos.lo;
  switch (t.kind) {
    case SlotCondition::Kind::kEq: return v == t.k;
    case SlotCondition::Kind::kNe: return v != t.k;
    case SlotCondition::Kind::kLt: return v < t.k;
    case SlotCondition::Kind::kLe: return v <= t.k;
    case SlotCondition::Kind::kGt: return v > t.k;
    case SlotCondition::Kind::kGe: return v >= t.k;
    case SlotCondition::Kind::kEq2: return v == t.k || v == t.k2;
    case SlotCondition::Kind::kDiff: return compare(t.cmp, v - layout.get(w, t.slot2), t.k);
    case SlotCondition::Kind::kHead: return compare(t.cmp, layout.get(w, t.slot + 1), t.k);
    case SlotCondition::Kind::kContains: {
      for (int64_t i = 0; i < v; ++i) {
        if (layout.get(w, t.slot + 1 + static_cast<int>(i)) == t.k) return true;
      }
      return false;
    }
    default: return true;
  }
}

}  // namespace qpcheck::model::tier
