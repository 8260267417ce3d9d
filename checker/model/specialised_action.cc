#include "checker/model/specialised_action.h"

#include <algorithm>
#include <functional>
#include <utility>

namespace qpcheck::model::tier {

SpecialisedAction specialise_action(const Model& model, const StateLayout& layout, Simplifier& s,
                                    const ActionSite& a, bool fold, bool bind_params) {
  SpecialisedAction f;
  std::vector<const Expr*> conds;
  const std::vector<const Stmt*>* body;
  std::vector<std::pair<int, int64_t>> bound;
  if (a.process >= 0) {
    const ProcessInstance& pi = model.processes[a.process];
    const Edge& e = pi.edges[a.pc][a.edge];
    conds = e.conds;
    if (e.step->guard != nullptr) conds.push_back(e.step->guard);
    body = &e.step->body;
    f.pc_slot = pi.pc_slot;
    f.next_pc = e.step->next_pc;
  } else {
    const Rule& r = model.rules[a.rule];
    if (r.guard != nullptr) conds.push_back(r.guard);
    body = &r.body;
    if (bind_params && fold) {
      int64_t tuple = a.tuple;
      for (size_t i = r.param_types.size(); i-- > 0;) {
        const Type* t = r.param_types[i];
        bound.emplace_back(r.param_frames[i], t->lo + tuple % t->count());
        tuple /= t->count();
      }
    } else {
      f.rule = a.rule;
      f.tuple = a.tuple;
    }
  }
  for (auto [frame, v] : bound) s.bind(frame, v);
  // Conjunctions are split: `a && b` holds iff a holds and then b holds, evaluated in the same order.
  std::vector<const Expr*> flat;
  std::function<void(const Expr*)> split = [&](const Expr* x) {
    if (x->op == Op::kAnd) { split(x->a); split(x->b); return; }
    flat.push_back(x);
  };
  for (const Expr* c : conds) split(fold ? s.expr(c) : c);
  for (const Expr* x : flat) {
    if (x->op == Op::kConst) {
      if (x->value == 0) { f.never = true; break; }
      continue;
    }
    f.conds.push_back(make_test(x));
  }
  if (!f.never) {
    if (fold) s.stmts(*body, f.body);
    else f.body = *body;
  }
  for (auto [frame, v] : bound) s.unbind(frame);
  compile_flat_ops(f.body, model, f.ops);
  f.constant = f.rule < 0 && !f.never &&
               std::all_of(f.ops.begin(), f.ops.end(), [](const FlatOp& o) { return o.kind == FlatOp::Kind::kSet; });
  if (f.constant) {
    // Apply the writes in order to a scratch word set, remembering which bits they cover.
    std::vector<uint64_t> bits(layout.words(), 0), clear(layout.words(), 0);
    auto write = [&](int slot, int64_t v) {
      auto [w, m] = layout.field_bits(slot);
      layout.set(bits.data(), slot, v);
      clear[w] |= m;
    };
    for (const FlatOp& o : f.ops) write(o.slot, o.k);
    if (f.pc_slot >= 0) write(f.pc_slot, f.next_pc);
    for (int w = 0; w < layout.words(); ++w) {
      if (clear[w] != 0) f.patch.push_back(SpecialisedAction::Patch{w, clear[w], bits[w]});
    }
  }
  return f;
}

bool packable(const SpecialisedAction& f, const Model& model) {
  // Packed-state execution: quick tests and direct ops only, with every value written inside its slot's range
  // (StateLayout::set keeps only the field's bits).
  auto slot_range = [&](int64_t slot, int64_t lo, int64_t hi) {
    return model.slots[slot].lo <= lo && hi <= model.slots[slot].hi;
  };
  bool packed = f.rule < 0 && !f.never;
  for (const SlotCondition& t : f.conds) packed = packed && t.kind != SlotCondition::Kind::kGeneral;
  for (const FlatOp& o : f.ops) {
    switch (o.kind) {
      case FlatOp::Kind::kSet:
      case FlatOp::Kind::kAdd:
      case FlatOp::Kind::kJump: break;
      case FlatOp::Kind::kPush:
      case FlatOp::Kind::kPop:
      case FlatOp::Kind::kClear: {
        const Type* qt = o.s->lhs->type;
        packed = packed && slot_range(o.slot, 0, qt->capacity);
        for (int i = 0; i < qt->capacity; ++i) {
          packed = packed && slot_range(o.slot + 1 + i, qt->elem->lo, qt->elem->hi);
        }
        break;
      }
      case FlatOp::Kind::kAssert:
      case FlatOp::Kind::kRequire:
      case FlatOp::Kind::kIf: packed = packed && o.test.kind != SlotCondition::Kind::kGeneral; break;
      case FlatOp::Kind::kStmt: packed = false; break;
    }
  }
  return packed;
}

}  // namespace qpcheck::model::tier
