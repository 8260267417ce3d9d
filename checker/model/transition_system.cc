#include "checker/model/transition_system.h"

#include <algorithm>
#include <bit>
#include <functional>

#include <fmt/format.h>

namespace qpcheck::model {

StateLayout::StateLayout(const std::vector<SlotInfo>& slots) {
  int word = 0, used = 0;
  for (const SlotInfo& s : slots) {
    uint64_t range = static_cast<uint64_t>(s.hi - s.lo);
    int width = range == 0 ? 0 : 64 - std::countl_zero(range);
    if (used + width > 64) { ++word; used = 0; }
    fields_.push_back(Field{word, used, width, s.lo, width == 0 ? 0 : width == 64 ? ~0ULL : ((1ULL << width) - 1)});
    used += width;
    bits_ += width;
  }
  words_ = (slots.empty() || (word == 0 && used == 0)) ? 1 : word + 1;
}

void StateLayout::pack(const std::vector<int64_t>& values, uint64_t* out) const {
  for (int w = 0; w < words_; ++w) out[w] = 0;
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    if (f.width == 0) continue;
    out[f.word] |= static_cast<uint64_t>(values[i] - f.lo) << f.shift;
  }
}

void StateLayout::unpack(const uint64_t* in, std::vector<int64_t>& values) const {
  if (values.size() != fields_.size()) values.resize(fields_.size());
  int64_t* out = values.data();
  const Field* f = fields_.data();
  for (size_t i = 0, n = fields_.size(); i < n; ++i) {
    out[i] = static_cast<int64_t>((in[f[i].word] >> f[i].shift) & f[i].mask) + f[i].lo;
  }
}

std::vector<int> StateLayout::word_bits() const {
  std::vector<int> used(words_, 0);
  for (const Field& f : fields_) {
    if (f.width > 0) used[f.word] = std::max(used[f.word], f.shift + f.width);
  }
  return used;
}

ModelSystem::ModelSystem(const Model& model)
    : model_(model),
      layout_(model.slots),
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
  build_fast();
}

void ModelSystem::build_fast() {
  // Rules are specialised per parameter tuple unless that would make too many copies.
  constexpr int64_t kMaxSpecialised = 1 << 16;
  int64_t rule_instances = 0;
  for (const Rule& r : model_.rules) rule_instances += r.instances;
  Simplifier& s = simplifier_;
  fast_.resize(actions_.size());
  for (size_t id = 0; id < actions_.size(); ++id) {
    const Action& a = actions_[id];
    Fast& f = fast_[id];
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
      if (rule_instances <= kMaxSpecialised) {
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
    for (const Expr* c : conds) split(s.expr(c));
    for (const Expr* x : flat) {
      if (x->op == Op::kConst) {
        if (x->value == 0) { f.never = true; break; }
        continue;
      }
      f.conds.push_back(make_test(x));
    }
    if (!f.never) s.stmts(*body, f.body);
    for (auto [frame, v] : bound) s.unbind(frame);
  }
  for (const Fast& f : fast_) {
    Test t;  // kGeneral: no prefilter
    if (f.never) {
      t.kind = Test::Kind::kLt;  // st[0] < INT64_MIN: never
      t.slot = 0;
      t.k = INT64_MIN;
    } else if (!f.conds.empty() && f.conds[0].kind != Test::Kind::kGeneral) {
      t = f.conds[0];
    }
    first_test_.push_back(t);
  }
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
      break;
    }
    default: break;
  }
  return t;
}

bool ModelSystem::conds_hold(const Fast& f) {
  if (f.never) return false;
  if (f.rule >= 0) bind_rule_tuple(model_.rules[f.rule], f.tuple);
  const int64_t* st = machine_.state.data();
  for (const Test& t : f.conds) {
    bool ok;
    switch (t.kind) {
      case Test::Kind::kEq: ok = st[t.slot] == t.k; break;
      case Test::Kind::kNe: ok = st[t.slot] != t.k; break;
      case Test::Kind::kLt: ok = st[t.slot] < t.k; break;
      case Test::Kind::kLe: ok = st[t.slot] <= t.k; break;
      case Test::Kind::kGt: ok = st[t.slot] > t.k; break;
      case Test::Kind::kGe: ok = st[t.slot] >= t.k; break;
      default: ok = machine_.eval(t.e) != 0; break;
    }
    if (!ok) return false;
  }
  return true;
}

namespace {

// Collects the state slots an expression or statement can touch, as half-open ranges; `all` when unknown.
struct Footprint {
  const Model& m;
  std::vector<std::pair<int64_t, int64_t>> touched;  // [first, last)
  std::vector<std::pair<int64_t, int64_t>> written;
  bool all = false;
  int depth = 0;

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
    if (++depth > 200) { all = true; return; }
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
        expr(e->fn->body);
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
    if (++depth > 200) { all = true; return; }
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
        stmts(s->proc->body);
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
  Footprint inv{model_};
  for (const Expr* e : fast_invariants_) inv.expr(e);
  for (auto [a, b] : inv.touched) {
    for (int64_t x = std::max<int64_t>(a, 0); x < std::min(b, slots); ++x) inv_read[x] = 1;
  }
  Independence ind;
  ind.visible.assign(n, 0);
  for (size_t id = 0; id < n; ++id) {
    const Fast& f = fast_[id];
    Footprint fp{model_};
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

int ModelSystem::successors(const uint64_t* state, SuccessorSink& sink) {
  // machine_.state holds the unpacked source state; each action's writes are tracked, patched into a copy of the
  // packed source (incremental repacking) and undone from base_.
  // `state` may live in the caller's store, which can move while the sink inserts: keep a copy.
  const int words = layout_.words();
  source_.assign(state, state + words);
  layout_.unpack(state, base_);
  machine_.state = base_;
  int enabled = 0;
  auto undo = [&]() {
    for (int32_t slot : machine_.written()) machine_.state[slot] = base_[slot];
  };
  auto attempt = [&](uint32_t id) {
    const Fast& f = fast_[id];
    bool ok;
    try {
      if (!conds_hold(f)) return;  // conditions only read: nothing to undo
      machine_.begin_step();
      ok = machine_.exec(f.body);
      if (ok && f.pc_slot >= 0) machine_.set(f.pc_slot, f.next_pc);
    } catch (const StepFailure& f) {
      undo();
      ++enabled;
      sink.failure(id, Violation{Violation::Kind::kStepFailure, f.property, f.message, f.span});
      return;
    } catch (...) {
      undo();
      throw;
    }
    if (!ok) { undo(); return; }
    ++enabled;
    for (int w = 0; w < words; ++w) packed_[w] = source_[w];
    for (int32_t slot : machine_.written()) layout_.set(packed_.data(), slot, machine_.state[slot]);
    undo();
    sink.successor(id, packed_.data());
  };
  // The prefilter rejects most disabled actions with one compare, before any call.
  const int64_t* st = base_.data();
  for (size_t p = 0; p < model_.processes.size(); ++p) {
    int pc = static_cast<int>(st[model_.processes[p].pc_slot]);
    uint32_t first = first_action_[p][pc];
    uint32_t n = static_cast<uint32_t>(model_.processes[p].edges[pc].size());
    for (uint32_t id = first; id < first + n; ++id) {
      if (quick(first_test_[id], st)) attempt(id);
    }
  }
  for (size_t r = 0; r < model_.rules.size(); ++r) {
    uint32_t first = rule_first_action_[r];
    uint32_t n = static_cast<uint32_t>(model_.rules[r].instances);
    for (uint32_t id = first; id < first + n; ++id) {
      if (quick(first_test_[id], st)) attempt(id);
    }
  }
  return enabled;
}

std::optional<Violation> ModelSystem::check_invariants(const uint64_t* state) {
  if (model_.invariants.empty()) return std::nullopt;
  layout_.unpack(state, inv_machine_.state);
  for (size_t i = 0; i < model_.invariants.size(); ++i) {
    const Invariant& inv = model_.invariants[i];
    try {
      if (!inv_machine_.eval(fast_invariants_[i])) {
        return Violation{Violation::Kind::kInvariant, inv.name, fmt::format("invariant {} is false", inv.name),
                         inv.span};
      }
    } catch (const StepFailure& f) {
      return Violation{Violation::Kind::kInvariant, "runtime_error",
                       fmt::format("invariant {} cannot be evaluated: {}", inv.name, f.message), f.span};
    }
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
