#include "checker/model/footprints.h"

#include <algorithm>
#include <functional>

namespace qpcheck::model::tier {

bool Footprint::enter() {
  max_depth = std::max(max_depth, ++depth);
  if (depth > kMaxDepth) { all = true; return false; }
  return true;
}

template <class Walk>
void Footprint::call(const void* key, Walk walk) {
  auto it = memo->find(key);
  if (it == memo->end()) {
    Footprint sub{m, memo};
    walk(sub);
    for (auto* v : {&sub.touched, &sub.written}) {  // a body calling another twice must not double its ranges
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    it = memo->emplace(key, Summary{std::move(sub.touched), std::move(sub.written), sub.all, sub.max_depth}).first;
  }
  const Summary& sum = it->second;
  if (sum.all || depth + sum.depth > kMaxDepth) { all = true; return; }
  max_depth = std::max(max_depth, depth + sum.depth);
  touched.insert(touched.end(), sum.touched.begin(), sum.touched.end());
  written.insert(written.end(), sum.written.begin(), sum.written.end());
}

void Footprint::location(const Expr* e, bool write) {
  auto add = [&](int64_t first, int64_t n) {
    touched.emplace_back(first, first + n);
    if (write) written.emplace_back(first, first + n);
  };
  switch (e->op) {
    case Op::kSlot: add(e->value, e->type->slots); return;
    case Op::kField:
    case Op::kHead:
      location(e->a, write);  // the whole record / queue
      return;
    case Op::kIndex:
      location(e->a, write);  // the whole array
      expr(e->b);
      return;
    default: all = true; return;
  }
}

void Footprint::expr(const Expr* e) {
  if (e == nullptr || all) return;
  if (!enter()) return;
  switch (e->op) {
    case Op::kConst:
    case Op::kFrame: break;
    case Op::kSlot:
    case Op::kIndex:
    case Op::kField:
    case Op::kHead: location(e, false); break;
    case Op::kAt:
      touched.emplace_back(e->stride, e->stride + (e->a == nullptr ? 1 : e->count));
      expr(e->a);
      break;
    case Op::kCallFn:
      for (const Expr* a : e->args) expr(a);
      call(e->fn, [&](Footprint& sub) { sub.expr(e->fn->body); });
      break;
    case Op::kLen:
    case Op::kEmpty:
    case Op::kFull: location(e->a, false); break;
    case Op::kContains: location(e->a, false); expr(e->b); break;
    case Op::kEq:
    case Op::kNe:
      if (e->equal_composite) { location(e->a, false); location(e->b, false); break; }
      expr(e->a);
      expr(e->b);
      break;
    default:
      expr(e->a);
      expr(e->b);
      expr(e->c);
      for (const Expr* a : e->args) expr(a);
      break;
  }
  --depth;
}

void Footprint::stmts(const std::vector<const Stmt*>& body) {
  for (const Stmt* s : body) stmt(s);
}

void Footprint::stmt(const Stmt* s) {
  if (all) return;
  if (!enter()) return;
  switch (s->op) {
    case SOp::kAssign:
      location(s->lhs, true);
      if (s->lhs->type->scalar()) expr(s->rhs); else location(s->rhs, false);
      break;
    case SOp::kPush:
      location(s->lhs, true);
      if (s->lhs->type->elem->scalar()) expr(s->rhs); else location(s->rhs, false);
      break;
    case SOp::kPop:
    case SOp::kClear: location(s->lhs, true); break;
    case SOp::kCall:
      for (const Expr* a : s->args) expr(a);
      call(s->proc, [&](Footprint& sub) { sub.stmts(s->proc->body); });
      break;
    case SOp::kIf: expr(s->rhs); stmts(s->body); stmts(s->else_body); break;
    case SOp::kFor: stmts(s->body); break;
    case SOp::kRequire:
    case SOp::kAssert: expr(s->rhs); break;
    case SOp::kFail:
    case SOp::kRefuse:
    case SOp::kSkip: break;
  }
  --depth;
}

TransitionSystem::Independence independence_of(const Model& model, const std::vector<SpecialisedAction>& actions,
                                               const std::vector<const Expr*>& invariants) {
  using Independence = TransitionSystem::Independence;
  const size_t n = actions.size();
  const int64_t slots = static_cast<int64_t>(model.slots.size());
  // Union-find over actions: two actions that touch a common slot are in one group.
  std::vector<int> parent(n);
  for (size_t i = 0; i < n; ++i) parent[i] = static_cast<int>(i);
  std::function<int(int)> root = [&](int x) { return parent[x] == x ? x : parent[x] = root(parent[x]); };
  std::vector<int> owner(slots, -1);  // first action touching each slot
  std::vector<uint8_t> inv_read(slots, 0);
  Footprint::Memo memo;
  Footprint inv{model, &memo};
  for (const Expr* e : invariants) inv.expr(e);
  for (auto [a, b] : inv.touched) {
    for (int64_t x = std::max<int64_t>(a, 0); x < std::min(b, slots); ++x) inv_read[x] = 1;
  }
  Independence ind;
  ind.visible.assign(n, 0);
  for (size_t id = 0; id < n; ++id) {
    const SpecialisedAction& f = actions[id];
    Footprint fp{model, &memo};
    for (const SlotCondition& t : f.conds) {
      if (t.kind == SlotCondition::Kind::kGeneral) fp.expr(t.e);
      else fp.touched.emplace_back(t.slot, t.slot + 1);
    }
    fp.stmts(f.body);
    if (f.rule >= 0) fp.all = true;  // parameters bound at run time: no static footprint kept
    if (f.pc_slot >= 0) {
      fp.touched.emplace_back(f.pc_slot, f.pc_slot + 1);
      fp.written.emplace_back(f.pc_slot, f.pc_slot + 1);
    }
    if (fp.all || inv.all) return {};  // unknown footprint: no reduction
    for (auto [a, b] : fp.touched) {
      for (int64_t x = std::max<int64_t>(a, 0); x < std::min(b, slots); ++x) {
        if (owner[x] < 0) owner[x] = static_cast<int>(id);
        else parent[root(static_cast<int>(id))] = root(owner[x]);
      }
    }
    for (auto [a, b] : fp.written) {
      for (int64_t x = std::max<int64_t>(a, 0); x < std::min(b, slots); ++x) {
        if (inv_read[x]) ind.visible[id] = 1;
      }
    }
  }
  std::vector<int> number(n, -1);
  ind.group.resize(n);
  for (size_t id = 0; id < n; ++id) {
    int r = root(static_cast<int>(id));
    if (number[r] < 0) number[r] = ind.groups++;
    ind.group[id] = number[r];
  }
  return ind;
}

}  // namespace qpcheck::model::tier
