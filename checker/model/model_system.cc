#include "checker/model/model_system.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <optional>
#include <tuple>
#include <type_traits>
#include <unordered_map>

#include <fmt/format.h>

namespace qpcheck::model {

ModelSystem::ModelSystem(const Model& model, BuildLimits limits)
    : model_(model),
      layout_(model.slots),
      build_limits_(limits),
      machine_(model),
      inv_machine_(model),
      simplifier_(model),
      packed_(layout_.words()) {
  first_action_.resize(model.processes.size());
  for (size_t p = 0; p < model.processes.size(); ++p) {
    const ProcessInstance& pi = model.processes[p];
    for (size_t pc = 0; pc < pi.edges.size(); ++pc) {
      first_action_[p].push_back(static_cast<uint32_t>(actions_.size()));
      for (size_t e = 0; e < pi.edges[pc].size(); ++e) {
        actions_.push_back(Action{static_cast<int>(p), static_cast<int>(pc), static_cast<int>(e), -1, 0});
      }
    }
  }
  for (size_t r = 0; r < model.rules.size(); ++r) {
    rule_first_action_.push_back(static_cast<uint32_t>(actions_.size()));
    for (int64_t t = 0; t < model.rules[r].instances; ++t) actions_.push_back(Action{-1, 0, 0, static_cast<int>(r), t});
  }
  machine_.state = model.initial;
  machine_.track_writes();
  inv_machine_.state = model.initial;
  build_fast();
  build_invariant_deps();
}

void ModelSystem::build_fast() {
  // Rules are specialised per parameter tuple unless that would make too many copies.
  constexpr int64_t kMaxSpecialised = 1 << 16;
  int64_t rule_instances = 0;
  for (const Rule& r : model_.rules) rule_instances += r.instances;
  Simplifier& s = simplifier_;
  s.set_max_bytes(build_limits_.max_bytes);
  fast_.resize(actions_.size());
  for (size_t id = 0; id < actions_.size(); ++id) {
    const Action& a = actions_[id];
    Fast& f = fast_[id];
    // Past the deadline (or an interrupt), or with the specialised program at its size bound, an action is kept as
    // written: a rule's parameters are then bound at run time, like those of a rule with too many tuples.
    if ((id & 63) == 0 && !s.exhausted() &&
        ((build_limits_.deadline && std::chrono::steady_clock::now() >= *build_limits_.deadline) ||
         (build_limits_.interrupt != nullptr && build_limits_.interrupt->load(std::memory_order_relaxed)))) {
      s.exhaust();
    }
    const bool specialise = !s.exhausted();
    std::vector<const Expr*> conds;
    const std::vector<const Stmt*>* body;
    std::vector<std::pair<int, int64_t>> bound;
    if (a.process >= 0) {
      const ProcessInstance& pi = model_.processes[a.process];
      const Edge& e = pi.edges[a.pc][a.edge];
      conds = e.conds;
      if (e.step->guard != nullptr) conds.push_back(e.step->guard);
      body = &e.step->body;
      f.pc_slot = pi.pc_slot;
      f.next_pc = e.step->next_pc;
    } else {
      const Rule& r = model_.rules[a.rule];
      if (r.guard != nullptr) conds.push_back(r.guard);
      body = &r.body;
      if (rule_instances <= kMaxSpecialised && specialise) {
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
    for (const Expr* c : conds) split(specialise ? s.expr(c) : c);
    for (const Expr* x : flat) {
      if (x->op == Op::kConst) {
        if (x->value == 0) { f.never = true; break; }
        continue;
      }
      f.conds.push_back(make_test(x));
    }
    if (!f.never) {
      if (specialise) s.stmts(*body, f.body);
      else f.body = *body;
    }
    for (auto [frame, v] : bound) s.unbind(frame);
    compile_ops(f.body, f.ops);
    f.constant = f.rule < 0 && !f.never &&
                 std::all_of(f.ops.begin(), f.ops.end(), [](const Instr& o) { return o.kind == Instr::Kind::kSet; });
    if (f.constant) {
      // Apply the writes in order to a scratch word set, remembering which bits they cover.
      std::vector<uint64_t> bits(layout_.words(), 0), clear(layout_.words(), 0);
      auto write = [&](int slot, int64_t v) {
        auto [w, m] = layout_.field_bits(slot);
        layout_.set(bits.data(), slot, v);
        clear[w] |= m;
      };
      for (const Instr& o : f.ops) write(o.slot, o.k);
      if (f.pc_slot >= 0) write(f.pc_slot, f.next_pc);
      for (int w = 0; w < layout_.words(); ++w) {
        if (clear[w] != 0) f.patch.push_back(Fast::Patch{w, clear[w], bits[w]});
      }
    }
  }
  for (size_t p = 0; p < model_.processes.size(); ++p) {
    proc_pc_slot_.push_back(model_.processes[p].pc_slot);
    proc_range_base_.push_back(static_cast<uint32_t>(pc_range_.size()));
    for (size_t pc = 0; pc < model_.processes[p].edges.size(); ++pc) {
      uint32_t first = first_action_[p][pc];
      pc_range_.push_back(Range{first, first + static_cast<uint32_t>(model_.processes[p].edges[pc].size())});
    }
  }
  for (Fast& f : fast_) {
    // Packed-state execution: quick tests and direct ops only, with every value written inside its slot's range
    // (StateLayout::set keeps only the field's bits).
    auto slot_range = [&](int64_t slot, int64_t lo, int64_t hi) {
      return model_.slots[slot].lo <= lo && hi <= model_.slots[slot].hi;
    };
    bool packed = f.rule < 0 && !f.never;
    for (const Test& t : f.conds) packed = packed && t.kind != Test::Kind::kGeneral;
    for (const Instr& o : f.ops) {
      switch (o.kind) {
        case Instr::Kind::kSet:
        case Instr::Kind::kAdd:
        case Instr::Kind::kJump: break;
        case Instr::Kind::kPush:
        case Instr::Kind::kPop:
        case Instr::Kind::kClear: {
          const Type* qt = o.s->lhs->type;
          packed = packed && slot_range(o.slot, 0, qt->capacity);
          for (int i = 0; i < qt->capacity; ++i) {
            packed = packed && slot_range(o.slot + 1 + i, qt->elem->lo, qt->elem->hi);
          }
          break;
        }
        case Instr::Kind::kAssert:
        case Instr::Kind::kRequire:
        case Instr::Kind::kIf: packed = packed && o.test.kind != Test::Kind::kGeneral; break;
        case Instr::Kind::kStmt: packed = false; break;
      }
    }
    f.packed = packed;
    if (!model_.slots.empty()) {
      for (Test& c : f.conds) locate(c);
      for (Instr& o : f.ops) locate(o.test);
    }
    Test t;  // kGeneral: no prefilter
    if (f.never && !model_.slots.empty()) {
      t.kind = Test::Kind::kLt;  // st[0] < INT64_MIN: never
      t.slot = 0;
      t.k = INT64_MIN;
      locate(t);
    } else if (!f.conds.empty() && f.conds[0].kind != Test::Kind::kGeneral) {
      t = f.conds[0];
      f.prefiltered = true;
    }
    first_test_.push_back(t);
    // Raw form: slot == k (or !=, or > lo / < hi ... only == and != here) compared in the packed word.
    Prefilter pre;
    if (!model_.slots.empty() && (t.kind == Test::Kind::kEq || t.kind == Test::Kind::kNe)) {
      const SlotInfo& si = model_.slots[t.slot];
      pre.kind = t.kind == Test::Kind::kEq ? Prefilter::Kind::kEqRaw : Prefilter::Kind::kNeRaw;
      pre.word = static_cast<uint32_t>(t.pos.word);
      if (t.k < si.lo || t.k > si.hi) {
        pre.mask = 0;  // the slot never holds k: == is false, != is true
        pre.value = 1;
      } else {
        pre.mask = t.pos.mask << t.pos.shift;
        pre.value = (static_cast<uint64_t>(t.k - t.pos.lo) << t.pos.shift) & pre.mask;
      }
    }
    prefilter_.push_back(pre);
  }
  for (Range& r : pc_range_) build_blocks(r);
  if (!rule_first_action_.empty()) {
    rule_range_ = Range{rule_first_action_[0], static_cast<uint32_t>(actions_.size())};
    build_blocks(rule_range_);
  }
  build_hot();
  build_memos();
  for (const Invariant& inv : model_.invariants) fast_invariants_.push_back(s.expr(inv.expr));
  fast_end_conds_.resize(model_.processes.size());
  for (size_t p = 0; p < model_.processes.size(); ++p) {
    for (const auto& lists : model_.processes[p].end_conds) {
      auto& out = fast_end_conds_[p].emplace_back();
      for (const auto& conds : lists) {
        auto& l = out.emplace_back();
        for (const Expr* c : conds) l.push_back(s.expr(c));
      }
    }
  }
}

void ModelSystem::build_blocks(Range& range) {
  const uint32_t first = range.first, end = range.end;
  range.block_begin = static_cast<uint32_t>(blocks_.size());
  // The bits an action's prefilter reads: [lo, hi) of one word, if few enough for a table.
  struct Span {
    uint32_t word = 0, lo = 64, hi = 0;
    uint32_t bit = 0, key = 0;
  };
  auto span_of = [&](uint32_t id) -> std::optional<Span> {
    Span sp;
    auto add = [&](uint32_t word, uint64_t mask) {
      if (mask == 0) return true;  // a constant field: nothing read
      if (sp.hi > 0 && word != sp.word) return false;
      sp.word = word;
      sp.lo = std::min<uint32_t>(sp.lo, std::countr_zero(mask));
      sp.hi = std::max<uint32_t>(sp.hi, 64 - std::countl_zero(mask));
      return true;
    };
    const Prefilter& p = prefilter_[id];
    bool ok = true;
    if (p.kind != Prefilter::Kind::kTest) {
      ok = add(p.word, p.mask);
    } else {
      const Test& t = first_test_[id];
      auto slot = [&](int s) {
        auto [w, m] = layout_.field_bits(s);
        ok = ok && add(static_cast<uint32_t>(w), m);
      };
      switch (t.kind) {
        case Test::Kind::kEq:
        case Test::Kind::kNe:
        case Test::Kind::kLt:
        case Test::Kind::kLe:
        case Test::Kind::kGt:
        case Test::Kind::kGe:
        case Test::Kind::kEq2: slot(t.slot); break;
        case Test::Kind::kDiff: slot(t.slot); slot(t.slot2); break;
        case Test::Kind::kContains:
          for (int i = 0; i <= t.e->a->type->capacity; ++i) slot(t.slot + i);
          break;
        default: return std::nullopt;
      }
    }
    if (!ok || sp.hi == 0 || sp.hi - sp.lo > kMaxKeyBits) return std::nullopt;
    return sp;
  };
  std::vector<uint64_t> scratch(layout_.words(), 0);
  for (uint32_t b0 = first; b0 < end; b0 += 64) {
    Block b;
    b.first = b0;
    b.count = std::min<uint32_t>(64, end - b0);
    std::vector<Span> spans;
    for (uint32_t i = 0; i < b.count; ++i) {
      const uint32_t id = b0 + i;
      if (fast_[id].never) continue;  // never enabled
      if (auto sp = span_of(id)) {
        sp->bit = i;
        spans.push_back(*sp);
      } else {
        b.test |= uint64_t{1} << i;
      }
    }
    // Neighbouring spans of one word share a key while the union stays small.
    std::vector<Span> order = spans;
    std::sort(order.begin(), order.end(),
              [](const Span& x, const Span& y) { return std::tie(x.word, x.lo, x.bit) < std::tie(y.word, y.lo, y.bit); });
    std::vector<DispatchKey> keys;
    std::vector<std::vector<uint32_t>> members;  // per key: bits
    uint32_t lo = 0, hi = 0;
    for (const Span& sp : order) {
      if (keys.empty() || sp.word != keys.back().word || std::max(hi, sp.hi) - lo > kMaxKeyBits) {
        keys.push_back(DispatchKey{sp.word, sp.lo, 0, 0});
        members.emplace_back();
        lo = sp.lo;
        hi = sp.hi;
      }
      hi = std::max(hi, sp.hi);
      keys.back().mask = (uint64_t{1} << (hi - lo)) - 1;
      members.back().push_back(sp.bit);
    }
    if (keys.size() >= spans.size()) {
      b.test = 0;  // no test saved: the plain loop
      blocks_.push_back(b);
      continue;
    }
    b.key_begin = static_cast<uint32_t>(keys_.size());
    for (size_t k = 0; k < keys.size(); ++k) {
      DispatchKey d = keys[k];
      d.table = static_cast<uint32_t>(key_table_.size());
      for (uint64_t raw = 0; raw <= d.mask; ++raw) {
        scratch[d.word] = raw << d.shift;
        uint64_t accept = 0;
        for (uint32_t bit : members[k]) {
          const uint32_t id = b0 + bit;
          const Test& t = first_test_[id];
          if (prefilter_[id].kind == Prefilter::Kind::kTest && t.kind == Test::Kind::kContains) {
            // a length beyond the capacity never occurs (and would read past the queue)
            int64_t len = layout_.get(scratch.data(), t.slot);
            if (len < 0 || len > t.e->a->type->capacity) continue;
          }
          if (prefilter(id, scratch.data())) accept |= uint64_t{1} << bit;
        }
        key_table_.push_back(accept);
      }
      scratch[d.word] = 0;
      keys_.push_back(d);
    }
    b.key_end = static_cast<uint32_t>(keys_.size());
    blocks_.push_back(b);
  }
  range.block_end = static_cast<uint32_t>(blocks_.size());
  const bool keyed = std::any_of(blocks_.begin() + range.block_begin, blocks_.end(),
                                 [](const Block& b) { return b.key_begin != b.key_end; });
  if (!keyed) {
    blocks_.resize(range.block_begin);
    range.block_end = range.block_begin;
  }
}

ModelSystem::MemoStats ModelSystem::memo_stats() const {
  MemoStats st;
  for (const Memo& m : memos_) {
    ++st.ranges;
    st.off += m.off;
    st.entries += static_cast<int>(m.entries);
    st.uncached += static_cast<int>(m.uncached);
  }
  return st;
}

ModelSystem::DispatchStats ModelSystem::dispatch_stats() const {
  DispatchStats st;
  for (const Range& r : pc_range_) st.plain_ranges += r.block_begin == r.block_end;
  st.plain_ranges += rule_range_.first < rule_range_.end && rule_range_.block_begin == rule_range_.block_end;
  for (const Block& b : blocks_) {
    ++st.blocks;
    if (b.key_begin == b.key_end) continue;
    ++st.keyed_blocks;
    st.keys += static_cast<int>(b.key_end - b.key_begin);
    uint64_t keyed = 0;
    for (uint32_t k = b.key_begin; k < b.key_end; ++k) {
      for (uint64_t raw = 0; raw <= keys_[k].mask; ++raw) keyed |= key_table_[keys_[k].table + raw];
    }
    st.keyed_actions += std::popcount(keyed);
  }
  return st;
}

ModelSystem::Test ModelSystem::make_test(const Expr* e) {
  Test t;
  t.e = e;
  using K = Test::Kind;
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
      Test x = make_test(e->a), y = make_test(e->b);
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

ModelSystem::Test ModelSystem::make_op_test(const Expr* e) const {
  Test t = make_test(e);
  if (t.kind != Test::Kind::kGeneral) return t;
  using K = Test::Kind;
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

bool ModelSystem::conds_hold(const Fast& f) {
  if (f.never) return false;
  if (f.rule >= 0) bind_rule_tuple(model_.rules[f.rule], f.tuple);
  const int64_t* st = machine_.state.data();
  for (size_t i = f.prefiltered ? 1 : 0, n = f.conds.size(); i < n; ++i) {
    const Test& t = f.conds[i];
    if (!(t.kind == Test::Kind::kGeneral ? machine_.eval(t.e) != 0 : quick(t, st))) return false;
  }
  return true;
}

void ModelSystem::compile_ops(const std::vector<const Stmt*>& body, std::vector<Instr>& out) {
  using K = Instr::Kind;
  auto scalar_slot = [](const Expr* x) { return x->op == Op::kSlot && x->type->scalar(); };
  auto in = [](int64_t v, const Type* t) { return v >= t->lo && v <= t->hi; };
  constexpr int64_t kSmall = int64_t{1} << 62;  // addends whose negation and sums cannot wrap silently
  for (const Stmt* s : body) {
    Instr o;
    o.s = s;
    switch (s->op) {
      case SOp::kSkip: continue;
      case SOp::kAssign: {
        const Expr* l = s->lhs;
        const Expr* r = s->rhs;
        if (!scalar_slot(l)) break;
        const SlotInfo& si = model_.slots[l->value];
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
        compile_ops(s->body, out);
        if (!s->else_body.empty()) {
          size_t jump = out.size();
          Instr j;
          j.kind = K::kJump;
          j.s = s;
          out.push_back(j);
          out[at].jump = static_cast<int32_t>(out.size());
          compile_ops(s->else_body, out);
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

ModelSystem::RawTest ModelSystem::raw_test_of(const Test& t) {
  RawTest r;
  using K = Test::Kind;
  if (t.kind != K::kEq && t.kind != K::kNe && t.kind != K::kLt && t.kind != K::kLe && t.kind != K::kGt &&
      t.kind != K::kGe) {
    r.generic = static_cast<int32_t>(raw_generic_.size());
    raw_generic_.push_back(t);
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

void ModelSystem::build_hot() {
  restore_all_ = layout_.words() > 64;
  work_.assign(layout_.words(), 0);
  hot_.resize(fast_.size());
  for (size_t id = 0; id < fast_.size(); ++id) {
    const Fast& f = fast_[id];
    Hot& h = hot_[id];
    h.test_begin = h.test_end = static_cast<uint32_t>(hot_tests_.size());
    h.op_begin = h.op_end = static_cast<uint32_t>(hot_ops_.size());
    if (!f.packed || model_.slots.empty()) continue;  // kMachine
    for (size_t i = f.prefiltered ? 1 : 0; i < f.conds.size(); ++i) hot_tests_.push_back(raw_test_of(f.conds[i]));
    h.test_end = static_cast<uint32_t>(hot_tests_.size());
    auto mark = [&](int slot) {
      auto [w, m] = layout_.field_bits(slot);
      if (m != 0 && w < 64) h.words |= uint64_t{1} << w;
    };
    // ops[i] starts at hot op at[i]; a jump target never merges with the op before it
    std::vector<uint32_t> at(f.ops.size() + 1);
    std::vector<uint8_t> target(f.ops.size() + 1, 0);
    for (const Instr& o : f.ops) {
      if (o.kind == Instr::Kind::kIf || o.kind == Instr::Kind::kJump) target[o.jump] = 1;
    }
    std::vector<HotOp> ops;
    bool open_patch = false;  // ops.back() is a patch that the next constant write may join
    auto patch = [&](int slot, int64_t v) {
      auto [w, m] = layout_.field_bits(slot);
      if (m == 0) return;  // a constant slot: v is its only value
      mark(slot);
      std::vector<uint64_t> one(layout_.words(), 0);
      layout_.set(one.data(), slot, v);
      // join the open patch only if it is for the same word (else start another; all are applied in order)
      if (!open_patch || ops.back().word != static_cast<uint32_t>(w)) {
        HotOp p;
        p.kind = HotOp::Kind::kPatch;
        p.word = static_cast<uint32_t>(w);
        ops.push_back(p);
        open_patch = true;
      }
      HotOp& p = ops.back();
      p.clear |= m;
      p.bits = (p.bits & ~m) | one[w];
    };
    for (size_t i = 0; i < f.ops.size(); ++i) {
      const Instr& o = f.ops[i];
      if (target[i]) open_patch = false;
      at[i] = static_cast<uint32_t>(ops.size());
      if (o.kind == Instr::Kind::kSet) {
        patch(o.slot, o.k);
        at[i] = static_cast<uint32_t>(ops.size() - (open_patch && layout_.field_bits(o.slot).second != 0 ? 1 : 0));
        continue;
      }
      open_patch = false;
      HotOp x;
      x.slot = o.slot;
      x.k = o.k;
      x.lo = o.lo;
      x.hi = o.hi;
      x.jump = o.jump;
      switch (o.kind) {
        case Instr::Kind::kAdd:
          x.kind = HotOp::Kind::kAdd;
          x.src = layout_.position(o.src);
          x.dst = layout_.position(o.slot);
          mark(o.slot);
          break;
        case Instr::Kind::kPush:
        case Instr::Kind::kPop:
        case Instr::Kind::kClear: {
          x.kind = o.kind == Instr::Kind::kPush  ? HotOp::Kind::kPush
                   : o.kind == Instr::Kind::kPop ? HotOp::Kind::kPop
                                                 : HotOp::Kind::kClear;
          const int capacity = o.s->lhs->type->capacity;
          x.queue = static_cast<uint32_t>(hot_pos_.size());
          for (int e = 0; e <= capacity; ++e) {
            mark(o.slot + e);
            hot_pos_.push_back(layout_.position(o.slot + e));
          }
          break;
        }
        case Instr::Kind::kAssert:
        case Instr::Kind::kRequire:
        case Instr::Kind::kIf:
          x.kind = o.kind == Instr::Kind::kAssert    ? HotOp::Kind::kAssert
                   : o.kind == Instr::Kind::kRequire ? HotOp::Kind::kRequire
                                                     : HotOp::Kind::kIf;
          x.test = raw_test_of(o.test);
          break;
        case Instr::Kind::kJump: x.kind = HotOp::Kind::kJump; break;
        default: break;  // kStmt: not packed
      }
      ops.push_back(x);
    }
    at[f.ops.size()] = static_cast<uint32_t>(ops.size());
    if (target[f.ops.size()]) open_patch = false;
    if (f.pc_slot >= 0) patch(f.pc_slot, f.next_pc);
    for (HotOp& x : ops) {
      if (x.kind == HotOp::Kind::kIf || x.kind == HotOp::Kind::kJump) x.jump = static_cast<int32_t>(at[x.jump]);
    }
    if (restore_all_) h.words = ~uint64_t{0};
    h.kind = std::all_of(ops.begin(), ops.end(), [](const HotOp& x) { return x.kind == HotOp::Kind::kPatch; })
                 ? Hot::Kind::kPatch
                 : Hot::Kind::kOps;
    hot_ops_.insert(hot_ops_.end(), ops.begin(), ops.end());
    h.op_end = static_cast<uint32_t>(hot_ops_.size());
  }
}

void ModelSystem::test_bits(const Test& t, std::vector<uint64_t>& bits) const {
  auto field = [&](int slot) {
    auto [w, m] = layout_.field_bits(slot);
    bits[w] |= m;
  };
  switch (t.kind) {
    case Test::Kind::kDiff: field(t.slot); field(t.slot2); break;
    case Test::Kind::kHead: field(t.slot); field(t.slot + 1); break;
    case Test::Kind::kContains:
      for (int i = 0; i <= t.e->a->type->capacity; ++i) field(t.slot + i);
      break;
    default: field(t.slot); break;
  }
}

void ModelSystem::build_memos() {
  if (model_.slots.empty()) return;
  const int words = layout_.words();
  auto build = [&](Range& r) {
    std::vector<uint64_t> rw(words, 0), wr(words, 0);
    int live = 0;
    bool ops = false;
    for (uint32_t id = r.first; id < r.end; ++id) {
      const Fast& f = fast_[id];
      if (f.never) continue;
      if (hot_[id].kind == Hot::Kind::kMachine) return;
      ++live;
      ops = ops || hot_[id].kind == Hot::Kind::kOps;
      for (const Test& t : f.conds) test_bits(t, rw);
      auto write = [&](int slot) {
        auto [w, m] = layout_.field_bits(slot);
        wr[w] |= m;
      };
      for (const Instr& o : f.ops) {
        switch (o.kind) {
          case Instr::Kind::kSet: write(o.slot); break;
          case Instr::Kind::kAdd: {
            write(o.slot);
            auto [w, m] = layout_.field_bits(o.src);
            rw[w] |= m;
            break;
          }
          case Instr::Kind::kPush:
          case Instr::Kind::kPop:
          case Instr::Kind::kClear:
            for (int e = 0; e <= o.s->lhs->type->capacity; ++e) write(o.slot + e);
            break;
          case Instr::Kind::kAssert:
          case Instr::Kind::kRequire:
          case Instr::Kind::kIf: test_bits(o.test, rw); break;
          case Instr::Kind::kJump: break;
          case Instr::Kind::kStmt: return;  // not packed (cannot happen)
        }
      }
      if (f.pc_slot >= 0) write(f.pc_slot);
    }
    // one constant patch (the philosophers' steps) costs less than a lookup
    if (live < 2 && !ops) return;
    Memo m;
    for (int w = 0; w < words; ++w) {
      const uint64_t key = rw[w] | wr[w];
      if (key != 0) {
        if (m.nk == kMaxMemoWords) return;  // too wide a key
        m.key_word[m.nk] = static_cast<uint32_t>(w);
        m.key_mask[m.nk++] = key;
      }
      if (wr[w] != 0) m.out_word.push_back(static_cast<uint32_t>(w));
    }
    if (m.nk == 0) return;
    m.slots.assign(m.mask + 1, 0);
    r.memo = static_cast<int32_t>(memos_.size());
    memos_.push_back(std::move(m));
  };
  for (Range& r : pc_range_) build(r);
  if (rule_range_.first < rule_range_.end) build(rule_range_);
}

void ModelSystem::memo_insert(Memo& m, const uint64_t* key, bool cached) {
  const uint32_t nk = m.nk;
  const size_t words = nk + 1 + (cached ? rec_.size() : 0);
  if (m.entries >= kMaxMemoEntries || memo_words_ + words > kMaxMemoArenaWords) {
    m.off = true;  // too many keys: switch off and free
    memo_words_ -= m.arena.size();
    m.slots = {};
    m.arena = {};
    return;
  }
  memo_words_ += words;
  ++m.entries;
  m.uncached += !cached;
  const uint32_t at = static_cast<uint32_t>(m.arena.size());
  m.arena.insert(m.arena.end(), key, key + nk);
  if (cached) {
    m.arena.push_back(uint64_t{rec_n_} << 1 | 1);
    m.arena.insert(m.arena.end(), rec_.begin(), rec_.end());
  } else {
    m.arena.push_back(0);
  }
  auto place = [&](uint32_t record) {
    size_t i = memo_hash(m.arena.data() + record, nk) & m.mask;
    while (m.slots[i] != 0) i = (i + 1) & m.mask;
    m.slots[i] = record + 1;
  };
  if (2 * m.entries <= m.slots.size()) return place(at);
  // at most half full: grow and place every record again (walking the arena)
  m.slots.assign(m.slots.size() * 2, 0);
  m.mask = static_cast<uint32_t>(m.slots.size() - 1);
  for (uint32_t x = 0; x < m.arena.size();) {
    place(x);
    const uint64_t n = m.arena[x + nk];
    x += nk + 1;
    for (uint64_t k = 0; k < (n >> 1); ++k) x += 1 + 2 * static_cast<uint32_t>(m.arena[x] & 0xFFFFFFFF);
  }
}

ModelSystem::PackedRun ModelSystem::run_hot(const Hot& h, uint64_t* w) const {
  using K = HotOp::Kind;
  const HotOp* ops = hot_ops_.data() + h.op_begin;
  for (int32_t i = 0, n = static_cast<int32_t>(h.op_end - h.op_begin); i < n;) {
    const HotOp& o = ops[i];
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
        const StateLayout::Position* q = hot_pos_.data() + o.queue;
        int64_t len = pget(w, q[0]);
        if (len >= o.hi || len < 0) return PackedRun::kSlow;
        pset(w, q[1 + len], o.k);
        pset(w, q[0], len + 1);
        break;
      }
      case K::kPop: {
        const StateLayout::Position* q = hot_pos_.data() + o.queue;
        int64_t len = pget(w, q[0]);
        if (len <= 0) return PackedRun::kSlow;
        for (int64_t k = 0; k + 1 < len; ++k) pset(w, q[1 + k], pget(w, q[2 + k]));
        pset(w, q[len], o.lo);
        pset(w, q[0], len - 1);
        break;
      }
      case K::kClear: {
        const StateLayout::Position* q = hot_pos_.data() + o.queue;
        pset(w, q[0], 0);
        for (int64_t k = 0; k < o.hi; ++k) pset(w, q[1 + k], o.lo);
        break;
      }
      case K::kAssert:
        if (raw_empty_head(o.test, w) || !raw_test(o.test, w)) return PackedRun::kSlow;
        break;
      case K::kRequire:
        if (raw_empty_head(o.test, w)) return PackedRun::kSlow;
        if (!raw_test(o.test, w)) return PackedRun::kDisabled;
        break;
      case K::kIf:
        if (raw_empty_head(o.test, w)) return PackedRun::kSlow;
        if (!raw_test(o.test, w)) {
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

bool ModelSystem::run_ops(const std::vector<Instr>& ops) {
  using K = Instr::Kind;
  Machine& m = machine_;
  const int64_t* st = m.state.data();
  // An error path (overflow, range, full or empty queue, false assert) runs the statement itself, which raises the
  // error exactly as Machine::exec would (or, should the fast check be wrong, simply does the statement).
  for (size_t i = 0, n = ops.size(); i < n;) {
    const Instr& o = ops[i];
    switch (o.kind) {
      case K::kSet: m.set(o.slot, o.k); break;
      case K::kAdd: {
        int64_t v;
        if (__builtin_add_overflow(st[o.src], o.k, &v) || v < o.lo || v > o.hi) {
          if (!m.exec_stmt(o.s)) return false;
          break;
        }
        m.set(o.slot, v);
        break;
      }
      case K::kPush: {
        int64_t len = st[o.slot];
        if (len >= o.hi || len < 0) {
          if (!m.exec_stmt(o.s)) return false;
          break;
        }
        m.set(o.slot + 1 + len, o.k);
        m.set(o.slot, len + 1);
        break;
      }
      case K::kPop: {
        int64_t len = st[o.slot];
        if (len <= 0) {
          if (!m.exec_stmt(o.s)) return false;
          break;
        }
        for (int64_t k = 0; k + 1 < len; ++k) m.set(o.slot + 1 + k, st[o.slot + 2 + k]);
        m.set(o.slot + len, o.lo);
        m.set(o.slot, len - 1);
        break;
      }
      case K::kClear:
        m.set(o.slot, 0);
        for (int k = 0; k < o.hi; ++k) m.set(o.slot + 1 + k, o.lo);
        break;
      case K::kAssert:
        if (!test(o.test) && !m.exec_stmt(o.s)) return false;
        break;
      case K::kRequire:
        if (!test(o.test)) return false;
        break;
      case K::kIf:
        if (!test(o.test)) {
          i = o.jump;
          continue;
        }
        break;
      case K::kJump: i = o.jump; continue;
      case K::kStmt:
        if (!m.exec_stmt(o.s)) return false;
        break;
    }
    ++i;
  }
  return true;
}

namespace {

// Collects the state slots an expression or statement can touch, as half-open ranges; `all` when unknown (an
// unknown location, or nesting deeper than kMaxDepth counting called bodies). A called function's or procedure's
// body is walked once and its footprint reused at every call (`memo`): a body that calls another twice, nested 60
// times, would otherwise be walked 2^60 times.
struct Footprint {
  static constexpr int kMaxDepth = 200;
  struct Summary {
    std::vector<std::pair<int64_t, int64_t>> touched, written;
    bool all = false;
    int depth = 0;                    // the deepest level its walk reached
  };
  using Memo = std::unordered_map<const void*, Summary>;

  const Model& m;
  Memo* memo;
  std::vector<std::pair<int64_t, int64_t>> touched;  // [first, last)
  std::vector<std::pair<int64_t, int64_t>> written;
  bool all = false;
  int depth = 0;
  int max_depth = 0;

  bool enter() {
    max_depth = std::max(max_depth, ++depth);
    if (depth > kMaxDepth) { all = true; return false; }
    return true;
  }
  // Adds the footprint of a called body (fn body or proc statements) as if walked here, at the current depth.
  template <class Walk>
  void call(const void* key, Walk walk) {
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

  // The slots a location expression may designate.
  void location(const Expr* e, bool write) {
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
  void expr(const Expr* e) {
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
  void stmts(const std::vector<const Stmt*>& body) {
    for (const Stmt* s : body) stmt(s);
  }
  void stmt(const Stmt* s) {
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
      case SOp::kSkip: break;
    }
    --depth;
  }
};

}  // namespace

TransitionSystem::Independence ModelSystem::independence() const {
  const size_t n = fast_.size();
  const int64_t slots = static_cast<int64_t>(model_.slots.size());
  // Union-find over actions: two actions that touch a common slot are in one group.
  std::vector<int> parent(n);
  for (size_t i = 0; i < n; ++i) parent[i] = static_cast<int>(i);
  std::function<int(int)> root = [&](int x) { return parent[x] == x ? x : parent[x] = root(parent[x]); };
  std::vector<int> owner(slots, -1);  // first action touching each slot
  std::vector<uint8_t> inv_read(slots, 0);
  Footprint::Memo memo;
  Footprint inv{model_, &memo};
  for (const Expr* e : fast_invariants_) inv.expr(e);
  for (auto [a, b] : inv.touched) {
    for (int64_t x = std::max<int64_t>(a, 0); x < std::min(b, slots); ++x) inv_read[x] = 1;
  }
  Independence ind;
  ind.visible.assign(n, 0);
  for (size_t id = 0; id < n; ++id) {
    const Fast& f = fast_[id];
    Footprint fp{model_, &memo};
    for (const Test& t : f.conds) {
      if (t.kind == Test::Kind::kGeneral) fp.expr(t.e);
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

void ModelSystem::build_invariant_deps() {
  Footprint::Memo memo;
  const int64_t slots = static_cast<int64_t>(model_.slots.size());
  // `a && b` is false iff a is false, or a is true and b is false; evaluated left to right, so an invariant's value
  // (and its first runtime error) is that of the first conjunct in this order that is false (or fails).
  std::function<void(int, const Expr*)> split = [&](int inv, const Expr* x) {
    if (x->op == Op::kAnd) {
      split(inv, x->a);
      split(inv, x->b);
      return;
    }
    conjuncts_.push_back(Conjunct{inv, x});
  };
  for (size_t i = 0; i < fast_invariants_.size(); ++i) split(static_cast<int>(i), fast_invariants_[i]);
  for (const Conjunct& c : conjuncts_) {
    QuickConj& q = conj_quick_.emplace_back();
    if (!model_.slots.empty()) q.root = compile_quick(c.e);
    if (q.root >= 0) tabulate(q);
  }
  // Which conjuncts read each slot; conjuncts whose footprint is unknown read every slot.
  std::vector<std::vector<uint32_t>> readers(slots);
  std::vector<std::vector<int64_t>> reads(conjuncts_.size());
  for (size_t c = 0; c < conjuncts_.size(); ++c) {
    Footprint fp{model_, &memo};
    fp.expr(conjuncts_[c].e);
    std::vector<uint8_t> mark(slots, 0);
    auto add = [&](int64_t a, int64_t b) {
      for (int64_t x = std::max<int64_t>(a, 0); x < std::min(b, slots); ++x) mark[x] = 1;
    };
    if (fp.all) add(0, slots);
    for (auto [a, b] : fp.touched) add(a, b);
    for (int64_t x = 0; x < slots; ++x) {
      if (mark[x]) {
        readers[x].push_back(static_cast<uint32_t>(c));
        reads[c].push_back(x);
      }
    }
  }
  const size_t n = fast_.size();
  after_full_.assign(n, 0);
  after_begin_.assign(1, 0);
  after_slot_begin_.assign(1, 0);
  std::vector<uint8_t> conj_mark(conjuncts_.size()), slot_mark(slots);
  for (size_t id = 0; id < n; ++id) {
    const Fast& f = fast_[id];
    // Only writes matter: conditions and reads do not change the state.
    Footprint fp{model_, &memo};
    fp.stmts(f.body);
    if (f.pc_slot >= 0) fp.written.emplace_back(f.pc_slot, f.pc_slot + 1);
    if (fp.all || f.rule >= 0) {
      after_full_[id] = 1;
    } else {
      std::fill(conj_mark.begin(), conj_mark.end(), 0);
      for (auto [a, b] : fp.written) {
        for (int64_t x = std::max<int64_t>(a, 0); x < std::min(b, slots); ++x) {
          for (uint32_t c : readers[x]) conj_mark[c] = 1;
        }
      }
      std::fill(slot_mark.begin(), slot_mark.end(), 0);
      for (size_t c = 0; c < conjuncts_.size(); ++c) {
        if (!conj_mark[c]) continue;
        after_conj_.push_back(static_cast<uint32_t>(c));
        if (conj_quick_[c].root >= 0) continue;  // read from the packed state
        for (int64_t x : reads[c]) slot_mark[x] = 1;
      }
      for (int64_t x = 0; x < slots; ++x) {
        if (slot_mark[x]) after_slot_.push_back(static_cast<uint32_t>(x));
      }
    }
    after_begin_.push_back(static_cast<uint32_t>(after_conj_.size()));
    after_slot_begin_.push_back(static_cast<uint32_t>(after_slot_.size()));
  }
}

int32_t ModelSystem::compile_quick(const Expr* e) {
  QNode q;
  Test t = make_test(e);
  if (t.kind != Test::Kind::kGeneral) {
    q.kind = QNode::Kind::kTest;
    q.t = t;
    locate(q.t);
  } else if (e->op == Op::kConst) {
    q.kind = QNode::Kind::kConst;
    q.value = e->value != 0;
  } else if (e->op == Op::kNot || e->op == Op::kAnd || e->op == Op::kOr || e->op == Op::kImplies) {
    // operands are booleans; with leaves that cannot fail, evaluation order and short circuits do not matter
    q.a = compile_quick(e->a);
    if (q.a < 0) return -1;
    if (e->op != Op::kNot) {
      q.b = compile_quick(e->b);
      if (q.b < 0) return -1;
    }
    q.kind = e->op == Op::kNot ? QNode::Kind::kNot
             : e->op == Op::kAnd ? QNode::Kind::kAnd
             : e->op == Op::kOr  ? QNode::Kind::kOr
                                 : QNode::Kind::kImplies;
  } else {
    return -1;
  }
  qnodes_.push_back(q);
  return static_cast<int32_t>(qnodes_.size() - 1);
}

void ModelSystem::tabulate(QuickConj& q) {
  uint32_t word = 0, lo = 64, hi = 0;
  bool ok = true;
  auto field = [&](int slot) {
    auto [w, m] = layout_.field_bits(slot);
    if (m == 0) return;  // a constant slot: nothing read
    if (hi > 0 && static_cast<uint32_t>(w) != word) ok = false;
    word = static_cast<uint32_t>(w);
    lo = std::min<uint32_t>(lo, std::countr_zero(m));
    hi = std::max<uint32_t>(hi, 64 - std::countl_zero(m));
  };
  std::function<void(int32_t)> visit = [&](int32_t n) {
    const QNode& x = qnodes_[n];
    if (x.a >= 0) visit(x.a);
    if (x.b >= 0) visit(x.b);
    if (x.kind != QNode::Kind::kTest) return;
    switch (x.t.kind) {
      case Test::Kind::kDiff: field(x.t.slot); field(x.t.slot2); break;
      case Test::Kind::kContains: ok = false; break;  // reads elements by a length no table value may bound
      default: field(x.t.slot); break;
    }
  };
  visit(q.root);
  if (!ok || hi - std::min(lo, hi) > kMaxTableBits) return;
  if (hi == 0) lo = 0;  // reads only constants
  q.tabled = true;
  q.word = word;
  q.shift = lo;
  q.mask = (uint64_t{1} << (hi - lo)) - 1;
  q.table = static_cast<uint32_t>(qtable_.size());
  qtable_.resize(qtable_.size() + (q.mask >> 6) + 1, 0);
  std::vector<uint64_t> scratch(layout_.words(), 0);
  for (uint64_t raw = 0; raw <= q.mask; ++raw) {
    scratch[word] = raw << lo;
    if (eval_quick(q.root, scratch.data())) qtable_[q.table + (raw >> 6)] |= uint64_t{1} << (raw & 63);
  }
}

std::vector<int64_t> ModelSystem::unpack(const uint64_t* state) const {
  std::vector<int64_t> v;
  layout_.unpack(state, v);
  return v;
}

std::vector<std::vector<uint64_t>> ModelSystem::initial_states() {
  std::vector<uint64_t> s(layout_.words());
  layout_.pack(model_.initial, s.data());
  return {s};
}

void ModelSystem::bind_rule_tuple(const Rule& r, int64_t tuple) {
  // Lexicographic order: the last parameter varies fastest.
  for (size_t i = r.param_types.size(); i-- > 0;) {
    const Type* t = r.param_types[i];
    machine_.bind(r.param_frames[i], t->lo + tuple % t->count());
    tuple /= t->count();
  }
}

bool ModelSystem::holds(const std::vector<const Expr*>& conds) { return holds(machine_, conds); }

bool ModelSystem::holds(Machine& m, const std::vector<const Expr*>& conds) {
  for (const Expr* c : conds) {
    if (!m.eval(c)) return false;
  }
  return true;
}

bool ModelSystem::run(const Action& a) {
  if (a.process >= 0) {
    const ProcessInstance& pi = model_.processes[a.process];
    const Edge& e = pi.edges[a.pc][a.edge];
    if (!holds(e.conds)) return false;
    if (e.step->guard != nullptr && !machine_.eval(e.step->guard)) return false;
    if (!machine_.exec(e.step->body)) return false;
    machine_.state[pi.pc_slot] = e.step->next_pc;
    return true;
  }
  const Rule& r = model_.rules[a.rule];
  bind_rule_tuple(r, a.tuple);
  if (r.guard != nullptr && !machine_.eval(r.guard)) return false;
  return machine_.exec(r.body);
}

void ModelSystem::attempt_machine(uint32_t id, const uint64_t* src, SuccessorSink& sink, int& enabled,
                                  bool& unpacked) {
  const Fast& f = fast_[id];
  const int words = layout_.words();
  rec_ok_ = false;  // not memoised: the machine may report a failure, and its writes are not tracked here
  if (!unpacked) {
    layout_.unpack(src, base_);
    machine_.state = base_;
    unpacked = true;
  }
  auto undo = [&]() {
    for (int32_t slot : machine_.written()) machine_.state[slot] = base_[slot];
  };
  bool ok;
  try {
    if (!conds_hold(f)) return;  // conditions only read: nothing to undo
    if (f.constant) {
      ++enabled;
      for (int w = 0; w < words; ++w) packed_[w] = src[w];
      for (const Fast::Patch& p : f.patch) packed_[p.word] = (packed_[p.word] & ~p.clear) | p.bits;
      sink.successor(id, packed_.data());
      return;
    }
    machine_.begin_step();
    ok = run_ops(f.ops);
    if (ok && f.pc_slot >= 0) machine_.set(f.pc_slot, f.next_pc);
  } catch (const StepFailure& e) {
    undo();
    ++enabled;
    sink.failure(id, step_failure(e));
    return;
  } catch (...) {
    undo();
    throw;
  }
  if (!ok) { undo(); return; }
  ++enabled;
  for (int w = 0; w < words; ++w) packed_[w] = src[w];
  for (int32_t slot : machine_.written()) layout_.set(packed_.data(), slot, machine_.state[slot]);
  undo();
  sink.successor(id, packed_.data());
}

int ModelSystem::successors(const uint64_t* state, SuccessorSink& sink) {
  // Packed actions (quick tests, direct ops) patch work_, a copy of the source, and restore the words they wrote
  // after the sink has seen the successor. The others (and a packed action's error path) run on the machine
  // (attempt_machine): the source is unpacked into machine_.state once, when the first such action is met.
  // `state` may live in the caller's store, which can move while the sink inserts: keep a copy.
  const int words = layout_.words();
  source_.assign(state, state + words);
  const uint64_t* src = source_.data();
  uint64_t* work = work_.data();
  for (int w = 0; w < words; ++w) work[w] = src[w];
  bool unpacked = false;
  int enabled = 0;
  auto restore = [&](const Hot& h) __attribute__((always_inline)) {
    if (restore_all_) [[unlikely]] {
      for (int w = 0; w < words; ++w) work[w] = src[w];
      return;
    }
    for (uint64_t m = h.words; m != 0; m &= m - 1) {
      const int w = std::countr_zero(m);
      work[w] = src[w];
    }
  };
  // `rec` (std::true_type or std::false_type): record what the action reports for the memo (rec_) of its range.
  auto record = [&](uint32_t id) __attribute__((always_inline)) {
    const size_t head = rec_.size();
    rec_.push_back(uint64_t{id} << 32);
    for (uint32_t w : rec_memo_->out_word) {
      if (work[w] == src[w]) continue;
      rec_.push_back(w);
      rec_.push_back(work[w] ^ src[w]);
      ++rec_[head];
    }
    ++rec_n_;
  };
  auto attempt = [&](uint32_t id, auto rec) __attribute__((always_inline)) {
    const Hot& h = hot_[id];
    if (h.kind == Hot::Kind::kMachine) [[unlikely]] return attempt_machine(id, src, sink, enabled, unpacked);
    for (uint32_t t = h.test_begin; t < h.test_end; ++t) {
      if (!raw_test(hot_tests_[t], src)) return;
    }
    if (h.kind == Hot::Kind::kPatch) {
      for (uint32_t i = h.op_begin; i < h.op_end; ++i) {
        const HotOp& o = hot_ops_[i];
        work[o.word] = (work[o.word] & ~o.clear) | o.bits;
      }
      ++enabled;
      if constexpr (decltype(rec)::value) record(id);
      sink.successor(id, work);
      restore(h);
      return;
    }
    const PackedRun r = run_hot(h, work);
    if (r == PackedRun::kDone) {
      ++enabled;
      if constexpr (decltype(rec)::value) record(id);
      sink.successor(id, work);
      restore(h);
      return;
    }
    restore(h);
    // kSlow: an error path; the machine reproduces the exact failure.
    if (r == PackedRun::kSlow) attempt_machine(id, src, sink, enabled, unpacked);
  };
  // The prefilter rejects most disabled actions with one test, before any call; keyed blocks find the candidates
  // with one table lookup per key.
  auto run_range = [&](const Range& r, auto rec) __attribute__((always_inline)) {
    if (r.block_begin == r.block_end) {
      for (uint32_t id = r.first; id < r.end; ++id) {
        if (prefilter(id, src)) attempt(id, rec);
      }
      return;
    }
    for (uint32_t k = r.block_begin; k < r.block_end; ++k) {
      const Block& b = blocks_[k];
      if (b.key_begin == b.key_end) {
        for (uint32_t id = b.first, end = b.first + b.count; id < end; ++id) {
          if (prefilter(id, src)) attempt(id, rec);
        }
        continue;
      }
      for (uint64_t c = candidates(b, src); c != 0; c &= c - 1) {
        const int i = std::countr_zero(c);
        if (((b.test >> i) & 1) && !prefilter(b.first + i, src)) continue;
        attempt(b.first + i, rec);
      }
    }
  };
  // A memoised range: look its key up; a cached entry reports the recorded successors (patching work and restoring
  // it as above), an uncached one runs the range, a new key runs it and records what it reports.
  // memo_lookup: kHit (the recorded successors were reported), kUncached or kMiss (key[] holds the key). kNk > 0: the
  // key has that many words (loops unrolled); 0: m.nk.
  enum class Lookup { kHit, kUncached, kMiss };
  uint64_t key[kMaxMemoWords];
  auto memo_lookup = [&](Memo& m, auto nkc) __attribute__((always_inline)) {
    constexpr uint32_t kNk = decltype(nkc)::value;
    const uint32_t nk = kNk > 0 ? kNk : m.nk;
    for (uint32_t k = 0; k < nk; ++k) key[k] = src[m.key_word[k]] & m.key_mask[k];
    const uint32_t* slots = m.slots.data();
    const uint64_t* arena = m.arena.data();
    for (size_t i = memo_hash(key, nk) & m.mask;; i = (i + 1) & m.mask) {
      const uint32_t e = slots[i];
      if (e == 0) return Lookup::kMiss;
      const uint64_t* rec = arena + (e - 1);
      uint64_t differ = 0;
      for (uint32_t k = 0; k < nk; ++k) differ |= rec[k] ^ key[k];
      if (differ != 0) continue;
      const uint64_t n = rec[nk];
      if ((n & 1) == 0) return Lookup::kUncached;
      const uint64_t* x = rec + nk + 1;
      for (uint64_t s = n >> 1; s > 0; --s) {
        const uint32_t id = static_cast<uint32_t>(*x >> 32);
        const uint32_t diffs = static_cast<uint32_t>(*x & 0xFFFFFFFF);
        const uint64_t* d = x + 1;
        for (uint32_t k = 0; k < diffs; ++k) work[d[2 * k]] ^= d[2 * k + 1];
        ++enabled;
        sink.successor(id, work);
        for (uint32_t k = 0; k < diffs; ++k) work[d[2 * k]] = src[d[2 * k]];
        x = d + 2 * diffs;
      }
      return Lookup::kHit;
    }
  };
  auto memo_visit = [&](const Range& r) __attribute__((always_inline)) {
    Memo& m = memos_[r.memo];
    Lookup found;
    switch (m.nk) {
      case 1: found = memo_lookup(m, std::integral_constant<uint32_t, 1>{}); break;
      case 2: found = memo_lookup(m, std::integral_constant<uint32_t, 2>{}); break;
      case 3: found = memo_lookup(m, std::integral_constant<uint32_t, 3>{}); break;
      case 4: found = memo_lookup(m, std::integral_constant<uint32_t, 4>{}); break;
      default: found = memo_lookup(m, std::integral_constant<uint32_t, 0>{}); break;
    }
    if (found == Lookup::kHit) return;
    if (found == Lookup::kUncached) return run_range(r, std::false_type{});
    rec_memo_ = &m;
    rec_ok_ = true;
    rec_.clear();
    rec_n_ = 0;
    try {
      run_range(r, std::true_type{});
    } catch (...) {
      rec_memo_ = nullptr;
      throw;
    }
    rec_memo_ = nullptr;
    memo_insert(m, key, rec_ok_);
  };
  auto visit = [&](const Range& r) __attribute__((always_inline)) {
    if (r.memo >= 0 && !memos_[r.memo].off) return memo_visit(r);
    run_range(r, std::false_type{});
  };
  for (size_t p = 0; p < proc_pc_slot_.size(); ++p) {
    int64_t pc = layout_.get(src, proc_pc_slot_[p]);
    visit(pc_range_[proc_range_base_[p] + static_cast<uint32_t>(pc)]);
  }
  visit(rule_range_);
  return enabled;
}

int ModelSystem::reference_successors(const uint64_t* state, SuccessorSink& sink) {
  std::vector<int64_t> base;
  layout_.unpack(state, base);
  std::vector<uint64_t> packed(layout_.words());
  int enabled = 0;
  auto attempt = [&](uint32_t id) {
    machine_.state = base;
    bool ok;
    try {
      ok = run(actions_[id]);
    } catch (const StepFailure& f) {
      ++enabled;
      sink.failure(id, step_failure(f));
      return;
    }
    if (!ok) return;
    ++enabled;
    layout_.pack(machine_.state, packed.data());
    sink.successor(id, packed.data());
  };
  for (size_t p = 0; p < model_.processes.size(); ++p) {
    int pc = static_cast<int>(base[model_.processes[p].pc_slot]);
    for (size_t e = 0; e < model_.processes[p].edges[pc].size(); ++e) attempt(first_action_[p][pc] + e);
  }
  for (size_t r = 0; r < model_.rules.size(); ++r) {
    for (int64_t t = 0; t < model_.rules[r].instances; ++t) attempt(rule_first_action_[r] + static_cast<uint32_t>(t));
  }
  machine_.state = base;
  return enabled;
}

std::optional<Violation> ModelSystem::check_invariants(const uint64_t* state) {
  if (model_.invariants.empty()) return std::nullopt;
  layout_.unpack(state, inv_machine_.state);
  for (size_t i = 0; i < model_.invariants.size(); ++i) {
    const Invariant& inv = model_.invariants[i];
    try {
      if (!inv_machine_.eval(fast_invariants_[i])) {
        return invariant_false(inv);
      }
    } catch (const StepFailure& f) {
      return invariant_unevaluable(inv, f);
    }
  }
  return std::nullopt;
}

std::optional<Violation> ModelSystem::check_conjunct(int i, const Expr* conj) {
  const Invariant& inv = model_.invariants[i];
  try {
    if (!inv_machine_.eval(conj)) {
      return invariant_false(inv);
    }
  } catch (const StepFailure& f) {
    return invariant_unevaluable(inv, f);
  }
  return std::nullopt;
}

std::optional<Violation> ModelSystem::check_invariants_after(uint32_t action, const uint64_t* state) {
  if (model_.invariants.empty()) return std::nullopt;
  if (action >= after_full_.size() || after_full_[action]) return check_invariants(state);
  // Only the slots the selected conjuncts read are unpacked; the others keep stale values nothing reads.
  int64_t* st = inv_machine_.state.data();
  for (uint32_t k = after_slot_begin_[action], e = after_slot_begin_[action + 1]; k < e; ++k) {
    st[after_slot_[k]] = layout_.get(state, static_cast<int>(after_slot_[k]));
  }
  for (uint32_t k = after_begin_[action], e = after_begin_[action + 1]; k < e; ++k) {
    const uint32_t ci = after_conj_[k];
    const Conjunct& c = conjuncts_[ci];
    if (conj_quick_[ci].root >= 0) {
      if (conj_holds(conj_quick_[ci], state)) continue;
      const Invariant& inv = model_.invariants[c.invariant];
      return invariant_false(inv);
    }
    if (auto v = check_conjunct(c.invariant, c.e)) return v;
  }
  return std::nullopt;
}

bool ModelSystem::valid_end(const uint64_t* state) {
  layout_.unpack(state, inv_machine_.state);
  for (size_t p = 0; p < model_.processes.size(); ++p) {
    const ProcessInstance& pi = model_.processes[p];
    int64_t pc = inv_machine_.state[pi.pc_slot];
    if (pi.valid_end[pc]) continue;
    bool ended = false;
    for (const auto& conds : fast_end_conds_[p][pc]) {
      try {
        if (holds(inv_machine_, conds)) { ended = true; break; }
      } catch (const StepFailure&) {
        // reported by successors() for the same state; not an end
      }
    }
    if (!ended) return false;
  }
  return true;
}

bool ModelSystem::process_enabled(const uint64_t* state, int p) {
  layout_.unpack(state, base_);
  const ProcessInstance& pi = model_.processes.at(p);
  int pc = static_cast<int>(base_[pi.pc_slot]);
  for (size_t e = 0; e < pi.edges[pc].size(); ++e) {
    machine_.state = base_;
    try {
      if (run(actions_[first_action_[p][pc] + e])) return true;
    } catch (const StepFailure&) {
      return true;
    }
  }
  return false;
}

ActionInfo ModelSystem::describe(const uint64_t* state, uint32_t action, std::vector<CallRecord>* calls) {
  ActionInfo info;
  const Action& a = actions_.at(action);
  layout_.unpack(state, base_);
  machine_.state = base_;
  machine_.calls = calls;
  try {
    run(a);
  } catch (const StepFailure&) {
  }
  machine_.calls = nullptr;
  if (a.process >= 0) {
    const ProcessInstance& pi = model_.processes[a.process];
    info.actor = pi.name;
    info.span = pi.edges[a.pc][a.edge].step->span;
    info.pc_before = pi.pc_names[a.pc];
  } else {
    const Rule& r = model_.rules[a.rule];
    info.is_rule = true;
    info.span = r.span;
    info.verbs = r.verbs;
    std::string args;
    int64_t tuple = a.tuple;
    std::vector<std::string> vals(r.param_types.size());
    for (size_t i = r.param_types.size(); i-- > 0;) {
      const Type* t = r.param_types[i];
      vals[i] = render_scalar(t, t->lo + tuple % t->count());
      tuple /= t->count();
    }
    for (size_t i = 0; i < vals.size(); ++i) args += (i ? ", " : "") + r.param_names[i] + "=" + vals[i];
    info.actor = r.param_types.empty() ? r.name : fmt::format("{}({})", r.name, args);
  }
  return info;
}

}  // namespace qpcheck::model
