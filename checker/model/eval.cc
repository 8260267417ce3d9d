#include "checker/model/eval.h"

#include <fmt/format.h>

namespace qpcheck::model {

std::string render_scalar(const Type* t, int64_t v) {
  if (t == nullptr) return std::to_string(v);
  if (t->kind == TypeKind::kBool) return v ? "true" : "false";
  if (t->kind == TypeKind::kEnum && v >= 0 && v < static_cast<int64_t>(t->constants.size())) return t->constants[v];
  return std::to_string(v);
}

std::string type_name(const Type* t) {
  switch (t->kind) {
    case TypeKind::kBool: return "bool";
    case TypeKind::kInt: return t->name.empty() ? fmt::format("{}..{}", t->lo, t->hi) : t->name;
    case TypeKind::kEnum: return t->name.empty() ? "enum" : t->name;
    case TypeKind::kRecord: return t->name.empty() ? "record" : t->name;
    case TypeKind::kArray: return fmt::format("array[{}] of {}", type_name(t->index), type_name(t->elem));
    case TypeKind::kQueue: return fmt::format("queue[{}] of {}", t->capacity, type_name(t->elem));
  }
  return "?";
}

void Machine::runtime_error(Span span, std::string message) {
  throw StepFailure{"runtime_error", std::move(message), span};
}

namespace {

// " (0..4 is set by param max_recv = 4: raise it with --param max_recv=N)" for a type whose bound a parameter set.
std::string bound_hint(const Type* t, const std::string& what) {
  return t->bound_note.empty() ? std::string() : fmt::format(" ({} is {})", what, t->bound_note);
}

}  // namespace

std::string Machine::unit_name(int64_t slot) const {
  // Units are in slot order; the one starting at or before `slot` holds it (a queue unit covers its elements).
  const std::vector<Unit>& units = model_.units;
  auto it = std::upper_bound(units.begin(), units.end(), slot,
                             [](int64_t s, const Unit& u) { return s < u.first_slot; });
  if (it == units.begin()) return "";
  --it;
  if (it->first_slot == slot || (it->type->kind == TypeKind::kQueue && slot < it->first_slot + it->type->slots)) {
    return it->name;
  }
  return "";
}

size_t Machine::bind_args(const std::vector<const Expr*>& args, const std::vector<const Type*>& types,
                          const std::vector<int>& frames, const std::string& callee, int64_t* vals) {
  // All arguments are evaluated before any is bound, so a nested call of the same callee stays correct.
  size_t n = args.size();
  for (size_t i = 0; i < n; ++i) vals[i] = eval(args[i]);
  for (size_t i = 0; i < n; ++i) {
    if (vals[i] < types[i]->lo || vals[i] > types[i]->hi) {
      runtime_error(args[i]->span, fmt::format("argument {} of {}() is {}, out of range {}{}", i + 1, callee, vals[i],
                                               type_name(types[i]), bound_hint(types[i], type_name(types[i]))));
    }
    frame[frames[i]] = vals[i];
  }
  return n;
}

int64_t Machine::loc_node(const Expr* e) {
  switch (e->op) {
    case Op::kSlot: return e->value;
    case Op::kField: return loc(e->a) + e->value;
    case Op::kIndex: {
      int64_t i = eval(e->b);
      if (i < e->lo || i >= e->lo + e->count) {
        const Type* index = e->a->type->kind == TypeKind::kArray ? e->a->type->index : nullptr;
        runtime_error(e->b->span, fmt::format("index {} out of range {}..{}{}", render_scalar(e->b->type, i), e->lo,
                                              e->lo + e->count - 1,
                                              index ? bound_hint(index, "the index type " + type_name(index)) : ""));
      }
      return loc(e->a) + (i - e->lo) * e->stride;
    }
    case Op::kHead: {
      int64_t q = loc(e->a);
      if (state[q] == 0) runtime_error(e->span, "head of an empty queue");
      return q + 1;
    }
    default: break;
  }
  runtime_error(e->span, "internal: expression is not a location");
}

int64_t Machine::eval_node(const Expr* e) {
  switch (e->op) {
    case Op::kConst: return e->value;
    case Op::kFrame: return frame[e->value];
    case Op::kSlot:
    case Op::kIndex:
    case Op::kField:
    case Op::kHead: return state[loc(e)];
    case Op::kNot: return !eval(e->a);
    case Op::kNeg:
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul: {
      // Checked 64-bit arithmetic: an overflow is a runtime error, never undefined behaviour.
      int64_t x = e->op == Op::kNeg ? 0 : eval(e->a);
      int64_t y = eval(e->op == Op::kNeg ? e->a : e->b);
      int64_t r;
      bool overflow = e->op == Op::kMul ? __builtin_mul_overflow(x, y, &r)
                      : e->op == Op::kAdd ? __builtin_add_overflow(x, y, &r)
                                          : __builtin_sub_overflow(x, y, &r);
      if (overflow) runtime_error(e->span, "integer overflow (results must fit in 64 bits)");
      return r;
    }
    case Op::kDiv:
    case Op::kMod: {
      int64_t x = eval(e->a), y = eval(e->b);
      if (y == 0) runtime_error(e->b->span, "division by zero");
      if (y == -1 && x == INT64_MIN) runtime_error(e->span, "integer overflow (results must fit in 64 bits)");
      if (e->op == Op::kDiv) return x / y;
      int64_t r = x % y;  // mathematical modulo: never negative for a positive divisor
      return (r < 0 && y > 0) ? r + y : r;
    }
    case Op::kEq:
    case Op::kNe: {
      bool eq;
      if (e->equal_composite) {
        int64_t x = loc(e->a), y = loc(e->b);
        eq = true;
        for (int i = 0; i < e->a->type->slots && eq; ++i) eq = state[x + i] == state[y + i];
      } else {
        eq = eval(e->a) == eval(e->b);
      }
      return e->op == Op::kEq ? eq : !eq;
    }
    case Op::kLt: return eval(e->a) < eval(e->b);
    case Op::kLe: return eval(e->a) <= eval(e->b);
    case Op::kGt: return eval(e->a) > eval(e->b);
    case Op::kGe: return eval(e->a) >= eval(e->b);
    case Op::kAnd: return eval(e->a) && eval(e->b);
    case Op::kOr: return eval(e->a) || eval(e->b);
    case Op::kImplies: return !eval(e->a) || eval(e->b);
    case Op::kTernary: return eval(e->a) ? eval(e->b) : eval(e->c);
    case Op::kCallFn: {
      poll();  // nested calls can take exponential time (f(a) = g(g(a)), ...)
      int64_t vals[16];
      bind_args(e->args, e->fn->param_types, e->fn->param_frames, e->fn->name, vals);
      int64_t r = eval(e->fn->body);
      if (e->type->scalar() && (r < e->type->lo || r > e->type->hi)) {
        runtime_error(e->span, fmt::format("{}() returned {}, out of its result type {}", e->fn->name, r,
                                           type_name(e->type)));
      }
      return r;
    }
    case Op::kAt: {
      int64_t pc_slot = e->stride;
      if (e->a != nullptr) {
        int64_t i = eval(e->a);
        if (i < e->lo || i >= e->lo + e->count) {
          runtime_error(e->a->span, fmt::format("process index {} out of range {}..{}", i, e->lo,
                                                e->lo + e->count - 1));
        }
        pc_slot += i - e->lo;
      }
      return state[pc_slot] == e->value;
    }
    case Op::kForall:
    case Op::kExists: {
      bool all = e->op == Op::kForall;
      for (int64_t v = e->lo; v < e->lo + e->count; ++v) {
        poll();
        frame[e->value] = v;
        bool b = eval(e->a) != 0;
        if (all && !b) return 0;
        if (!all && b) return 1;
      }
      return all ? 1 : 0;
    }
    case Op::kLen: return state[loc(e->a)];
    case Op::kEmpty: return state[loc(e->a)] == 0;
    case Op::kFull: return state[loc(e->a)] == e->a->type->capacity;
    case Op::kContains: {
      int64_t q = loc(e->a);
      int64_t v = eval(e->b);
      for (int64_t i = 0; i < state[q]; ++i) {
        if (state[q + 1 + i] == v) return 1;
      }
      return 0;
    }
  }
  runtime_error(e->span, "internal: unknown expression");
}

void Machine::store(int64_t slot, int64_t value, const Type* t, Span span) {
  if (value < t->lo || value > t->hi) {
    std::string unit = unit_name(slot);
    runtime_error(span, fmt::format("value {} out of range {} for the assignment{}{}", value, type_name(t),
                                    unit.empty() ? "" : " to " + unit, bound_hint(t, type_name(t))));
  }
  set(slot, value);
}

void Machine::copy(int64_t dst, int64_t src, const Type* t, Span span) {
  if (dst == src) return;
  int n = t->slots;
  if (dst < src) {
    for (int i = 0; i < n; ++i) set(dst + i, state[src + i]);
  } else {
    for (int i = n; i-- > 0;) set(dst + i, state[src + i]);
  }
}

void Machine::reset(int64_t first, const Type* t) {
  // Sets a value to its type's default: lowest scalar value, empty queue. Keeps states canonical after a pop.
  switch (t->kind) {
    case TypeKind::kBool:
    case TypeKind::kInt:
    case TypeKind::kEnum: set(first, t->lo); return;
    case TypeKind::kRecord:
      for (size_t i = 0; i < t->field_types.size(); ++i) reset(first + t->field_offsets[i], t->field_types[i]);
      return;
    case TypeKind::kArray:
      for (int64_t i = 0; i < t->index->count(); ++i) reset(first + i * t->elem->slots, t->elem);
      return;
    case TypeKind::kQueue:
      set(first, 0);
      for (int i = 0; i < t->capacity; ++i) reset(first + 1 + i * t->elem->slots, t->elem);
      return;
  }
}

bool Machine::exec(const std::vector<const Stmt*>& body) {
  for (const Stmt* s : body) {
    if (!exec_one(s)) return false;
  }
  return true;
}

bool Machine::exec_one(const Stmt* s) {
  switch (s->op) {
    case SOp::kSkip: return true;
    case SOp::kAssign: {
      const Type* t = s->lhs->type;
      if (t->scalar()) {
        int64_t v = eval(s->rhs);
        store(loc(s->lhs), v, t, s->rhs->span);
      } else {
        copy(loc(s->lhs), loc(s->rhs), t, s->span);
      }
      return true;
    }
    case SOp::kCall: {
      poll();
      int64_t vals[16];
      size_t n = bind_args(s->args, s->proc->param_types, s->proc->param_frames, s->proc->name, vals);
      if (calls == nullptr) return exec(s->proc->body);
      calls->push_back(CallRecord{s->proc, std::vector<int64_t>(vals, vals + n), {}});
      if (s->proc->replay.empty()) return exec(s->proc->body);
      // A refuse in this body (or a helper it calls) marks this call; popped on every exit, a throw included.
      struct Enclosing {
        std::vector<size_t>& v;
        ~Enclosing() { v.pop_back(); }
      } enclosing{replayed_};
      replayed_.push_back(calls->size() - 1);
      return exec(s->proc->body);
    }
    case SOp::kIf: return eval(s->rhs) ? exec(s->body) : exec(s->else_body);
    case SOp::kFor:
      for (int64_t v = s->lo; v <= s->hi; ++v) {
        poll();
        frame[s->frame] = v;
        if (!exec(s->body)) return false;
      }
      return true;
    case SOp::kRequire: return eval(s->rhs) != 0;
    case SOp::kFail: throw StepFailure{s->property, s->message, s->span};
    case SOp::kRefuse:
      if (calls != nullptr && !replayed_.empty()) (*calls)[replayed_.back()].refused = s->message;
      return true;
    case SOp::kAssert:
      if (!eval(s->rhs)) throw StepFailure{s->property, s->message, s->span};
      return true;
    case SOp::kPush: {
      const Type* qt = s->lhs->type;
      int64_t q = loc(s->lhs);
      if (state[q] >= qt->capacity) {
        std::string unit = unit_name(q);
        runtime_error(s->span, fmt::format("push onto the full queue {}(capacity {}{})", unit.empty() ? "" : unit + " ",
                                           qt->capacity, qt->bound_note.empty() ? "" : " " + qt->bound_note));
      }
      int64_t dst = q + 1 + state[q] * qt->elem->slots;
      if (qt->elem->scalar()) {
        store(dst, eval(s->rhs), qt->elem, s->rhs->span);
      } else {
        copy(dst, loc(s->rhs), qt->elem, s->span);
      }
      set(q, state[q] + 1);
      return true;
    }
    case SOp::kPop: {
      const Type* qt = s->lhs->type;
      int64_t q = loc(s->lhs);
      if (state[q] == 0) {
        std::string unit = unit_name(q);
        runtime_error(s->span, unit.empty() ? "pop from an empty queue" : "pop from the empty queue " + unit);
      }
      int es = qt->elem->slots;
      int64_t n = state[q];
      for (int64_t i = 0; i + 1 < n; ++i) {
        for (int k = 0; k < es; ++k) set(q + 1 + i * es + k, state[q + 1 + (i + 1) * es + k]);
      }
      reset(q + 1 + (n - 1) * es, qt->elem);
      set(q, n - 1);
      return true;
    }
    case SOp::kClear: reset(loc(s->lhs), s->lhs->type); return true;
  }
  return true;
}

}  // namespace qpcheck::model
