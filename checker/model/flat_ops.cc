#include "checker/model/flat_ops.h"

#include <algorithm>

namespace qpcheck::model::tier {

void compile_flat_ops(const std::vector<const Stmt*>& body, const Model& model, std::vector<FlatOp>& out) {
  using K = FlatOp::Kind;
  auto scalar_slot = [](const Expr* x) { return x->op == Op::kSlot && x->type->scalar(); };
  auto in = [](int64_t v, const Type* t) { return v >= t->lo && v <= t->hi; };
  constexpr int64_t kSmall = int64_t{1} << 62;  // addends whose negation and sums cannot wrap silently
  for (const Stmt* s : body) {
    FlatOp o;
    o.s = s;
    switch (s->op) {
      case SOp::kSkip:
      case SOp::kRefuse: continue;
      case SOp::kAssign: {
        const Expr* l = s->lhs;
        const Expr* r = s->rhs;
        if (!scalar_slot(l)) break;
        const SlotInfo& si = model.slots[l->value];
        o.slot = static_cast<int32_t>(l->value);
        o.lo = std::max(l->type->lo, si.lo);
        o.hi = std::min(l->type->hi, si.hi);
        if (r->op == Op::kConst) {
          if (in(r->value, l->type) && r->value >= si.lo && r->value <= si.hi) {
            o.kind = K::kSet;
            o.k = r->value;
          }
        } else if (scalar_slot(r)) {
          o.kind = K::kAdd;
          o.src = static_cast<int32_t>(r->value);
        } else if ((r->op == Op::kAdd || r->op == Op::kSub) && scalar_slot(r->a) && r->b->op == Op::kConst &&
                   r->b->value > -kSmall && r->b->value < kSmall) {
          o.kind = K::kAdd;
          o.src = static_cast<int32_t>(r->a->value);
          o.k = r->op == Op::kAdd ? r->b->value : -r->b->value;
        }
        break;
      }
      case SOp::kPush: {
        const Type* qt = s->lhs->type;
        if (s->lhs->op != Op::kSlot || !qt->elem->scalar() || qt->elem->slots != 1 || s->rhs->op != Op::kConst ||
            !in(s->rhs->value, qt->elem)) {
          break;
        }
        o.kind = K::kPush;
        o.slot = static_cast<int32_t>(s->lhs->value);
        o.hi = qt->capacity;
        o.k = s->rhs->value;
        break;
      }
      case SOp::kPop: {
        const Type* qt = s->lhs->type;
        if (s->lhs->op != Op::kSlot || !qt->elem->scalar() || qt->elem->slots != 1) break;
        o.kind = K::kPop;
        o.slot = static_cast<int32_t>(s->lhs->value);
        o.lo = qt->elem->lo;
        break;
      }
      case SOp::kClear: {
        const Type* qt = s->lhs->type;
        if (s->lhs->op != Op::kSlot || qt->kind != TypeKind::kQueue || !qt->elem->scalar() || qt->elem->slots != 1) {
          break;
        }
        o.kind = K::kClear;
        o.slot = static_cast<int32_t>(s->lhs->value);
        o.hi = qt->capacity;
        o.lo = qt->elem->lo;
        break;
      }
      case SOp::kAssert:
      case SOp::kRequire:
        o.kind = s->op == SOp::kAssert ? K::kAssert : K::kRequire;
        o.test = make_op_test(s->rhs);
        break;
      case SOp::kIf: {
        o.kind = K::kIf;
        o.test = make_op_test(s->rhs);
        size_t at = out.size();
        out.push_back(o);
        compile_flat_ops(s->body, model, out);
        if (!s->else_body.empty()) {
          size_t jump = out.size();
          FlatOp j;
          j.kind = K::kJump;
          j.s = s;
          out.push_back(j);
          out[at].jump = static_cast<int32_t>(out.size());
          compile_flat_ops(s->else_body, model, out);
          out[jump].jump = static_cast<int32_t>(out.size());
        } else {
          out[at].jump = static_cast<int32_t>(out.size());
        }
        continue;
      }
      default: break;
    }
    out.push_back(o);
  }
}

}  // namespace qpcheck::model::tier
