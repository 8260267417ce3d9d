#include "checker/model/slot_condition.h"

namespace qpcheck::model::tier {

SlotCondition make_test(const Expr* e) {
  SlotCondition t;
  t.e = e;
  using K = SlotCondition::Kind;
  // A scalar read of a static slot: the slot itself, or a queue's length.
  auto slot_of = [](const Expr* x) -> int {
    if (x->op == Op::kSlot && x->type->scalar()) return static_cast<int>(x->value);
    if (x->op == Op::kLen && x->a->op == Op::kSlot) return static_cast<int>(x->a->value);
    return -1;
  };
  auto set = [&](K kind, int slot, int64_t k) {
    t.kind = kind;
    t.slot = slot;
    t.k = k;
  };
  int sa = -1;
  switch (e->op) {
    case Op::kOr: {
      // slot == k || slot == k2 (both sides quick, so neither can fail)
      SlotCondition x = make_test(e->a), y = make_test(e->b);
      if (x.kind == K::kEq && y.kind == K::kEq && x.slot == y.slot) {
        set(K::kEq2, x.slot, x.k);
        t.k2 = y.k;
      }
      break;
    }
    case Op::kContains:
      if (e->a->op == Op::kSlot && e->b->op == Op::kConst) set(K::kContains, static_cast<int>(e->a->value), e->b->value);
      break;
    case Op::kSlot:
      if ((sa = slot_of(e)) >= 0) set(K::kNe, sa, 0);
      break;
    case Op::kNot:
      if ((sa = slot_of(e->a)) >= 0) set(K::kEq, sa, 0);
      else if (e->a->op == Op::kEmpty && e->a->a->op == Op::kSlot) set(K::kNe, static_cast<int>(e->a->a->value), 0);
      else if (e->a->op == Op::kFull && e->a->a->op == Op::kSlot) {
        set(K::kNe, static_cast<int>(e->a->a->value), e->a->a->type->capacity);
      }
      break;
    case Op::kEmpty:
      if (e->a->op == Op::kSlot) set(K::kEq, static_cast<int>(e->a->value), 0);
      break;
    case Op::kAt:
      // P[const]@L after specialisation: that instance's pc slot == L
      if (e->a == nullptr) set(K::kEq, e->stride, e->value);
      break;
    case Op::kFull:
      if (e->a->op == Op::kSlot) set(K::kEq, static_cast<int>(e->a->value), e->a->type->capacity);
      break;
    case Op::kEq:
    case Op::kNe:
    case Op::kLt:
    case Op::kLe:
    case Op::kGt:
    case Op::kGe: {
      if (e->equal_composite) break;
      K kinds[] = {K::kEq, K::kNe, K::kLt, K::kLe, K::kGt, K::kGe};
      K mirrored[] = {K::kEq, K::kNe, K::kGt, K::kGe, K::kLt, K::kLe};
      int i = static_cast<int>(e->op) - static_cast<int>(Op::kEq);
      if ((sa = slot_of(e->a)) >= 0 && e->b->op == Op::kConst) set(kinds[i], sa, e->b->value);
      else if ((sa = slot_of(e->b)) >= 0 && e->a->op == Op::kConst) set(mirrored[i], sa, e->a->value);
      else if (e->a->op == Op::kSub && e->b->op == Op::kConst) {
        // x - y <cmp> k over two static slots whose values are small enough that the difference cannot overflow
        const Expr* x = e->a->a;
        const Expr* y = e->a->b;
        constexpr int64_t kSmall = int64_t{1} << 61;
        auto small = [&](const Expr* v) {
          return v->op == Op::kSlot && v->type->scalar() && v->type->lo > -kSmall && v->type->hi < kSmall;
        };
        if (small(x) && small(y)) {
          set(K::kDiff, static_cast<int>(x->value), e->b->value);
          t.slot2 = static_cast<int32_t>(y->value);
          t.cmp = kinds[i];
        }
      }
      break;
    }
    default: break;
  }
  return t;
}

SlotCondition make_op_test(const Expr* e) {
  SlotCondition t = make_test(e);
  if (t.kind != SlotCondition::Kind::kGeneral) return t;
  using K = SlotCondition::Kind;
  // head(q) <cmp> k, q a static queue of scalars
  if (e->op >= Op::kEq && e->op <= Op::kGe && !e->equal_composite && e->a->op == Op::kHead &&
      e->a->a->op == Op::kSlot && e->a->type->scalar() && e->b->op == Op::kConst) {
    K kinds[] = {K::kEq, K::kNe, K::kLt, K::kLe, K::kGt, K::kGe};
    t.kind = K::kHead;
    t.cmp = kinds[static_cast<int>(e->op) - static_cast<int>(Op::kEq)];
    t.slot = static_cast<int32_t>(e->a->a->value);
    t.k = e->b->value;
  }
  return t;
}

void test_bits(const SlotCondition& t, const StateLayout& layout, std::vector<uint64_t>& bits) {
  auto field = [&](int slot) {
    auto [w, m] = layout.field_bits(slot);
    bits[w] |= m;
  };
  switch (t.kind) {
    case SlotCondition::Kind::kDiff: field(t.slot); field(t.slot2); break;
    case SlotCondition::Kind::kHead: field(t.slot); field(t.slot + 1); break;
    case SlotCondition::Kind::kContains:
      for (int i = 0; i <= t.e->a->type->capacity; ++i) field(t.slot + i);
      break;
    default: field(t.slot); break;
  }
}

}  // namespace qpcheck::model::tier
