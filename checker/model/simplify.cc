#include "checker/model/simplify.h"

namespace qpcheck::model {

namespace {

// Unrolling and inlining bounds: keep the specialised program small (it is built once per action).
constexpr int64_t kMaxUnroll = 64;
constexpr int kMaxInlineDepth = 16;

bool is_const(const Expr* e) { return e != nullptr && e->op == Op::kConst; }

}  // namespace

Simplifier::Simplifier(const Model& model) : model_(model), scratch_(model), env_(model.frame_size) {}

const Expr* Simplifier::constant(int64_t v, const Expr* like) {
  const Expr*& made = made_[{like->type, like->span, Op::kConst, v}];
  if (made != nullptr) return made;
  Expr& n = new_expr(Expr{});
  n.op = Op::kConst;
  n.type = like->type;
  n.span = like->span;
  n.value = v;
  return made = &n;
}

const Expr* Simplifier::slot(int64_t index, const Expr* like, const Expr* slot_expr) {
  const Expr*& made = made_[{like->type, like->span, Op::kSlot, index}];
  if (made != nullptr) return made;
  Expr& n = new_expr(*slot_expr);
  n.type = like->type;
  n.span = like->span;
  n.value = index;
  return made = &n;
}

const Expr* Simplifier::copy(const Expr* e, const Expr* a, const Expr* b, const Expr* c) {
  if (a == e->a && b == e->b && c == e->c) return e;
  Expr& n = new_expr(*e);
  n.a = a;
  n.b = b;
  n.c = c;
  return &n;
}

const Expr* Simplifier::fold(const Expr* e) {
  try {
    return constant(scratch_.eval(e), e);
  } catch (const StepFailure&) {
    return nullptr;  // e.g. division by zero: left to run time, where it is reported with the state
  }
}

const Expr* Simplifier::expr(const Expr* e) {
  if (e == nullptr) return nullptr;
  switch (e->op) {
    case Op::kConst:
    case Op::kSlot: return e;
    case Op::kFrame: return env_[e->value] ? constant(*env_[e->value], e) : e;
    case Op::kField: {
      const Expr* a = expr(e->a);
      if (a->op == Op::kSlot) return slot(a->value + e->value, e, a);
      return copy(e, a, nullptr, nullptr);
    }
    case Op::kIndex: {
      const Expr* a = expr(e->a);
      const Expr* b = expr(e->b);
      if (a->op == Op::kSlot && is_const(b) && b->value >= e->lo && b->value < e->lo + e->count) {
        return slot(a->value + (b->value - e->lo) * e->stride, e, a);
      }
      return copy(e, a, b, nullptr);
    }
    case Op::kHead:
    case Op::kLen:
    case Op::kEmpty:
    case Op::kFull: return copy(e, expr(e->a), nullptr, nullptr);
    case Op::kContains: return copy(e, expr(e->a), expr(e->b), nullptr);
    case Op::kNot:
    case Op::kNeg: {
      const Expr* a = expr(e->a);
      const Expr* n = copy(e, a, nullptr, nullptr);
      if (is_const(a)) {
        if (const Expr* f = fold(n)) return f;
      }
      return n;
    }
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kDiv:
    case Op::kMod:
    case Op::kLt:
    case Op::kLe:
    case Op::kGt:
    case Op::kGe:
    case Op::kEq:
    case Op::kNe: {
      const Expr* a = expr(e->a);
      const Expr* b = expr(e->b);
      const Expr* n = copy(e, a, b, nullptr);
      if (!e->equal_composite && is_const(a) && is_const(b)) {
        if (const Expr* f = fold(n)) return f;
      }
      return n;
    }
    case Op::kAnd:
    case Op::kOr:
    case Op::kImplies: {
      const Expr* a = expr(e->a);
      if (is_const(a)) {
        bool av = a->value != 0;
        // and: false -> 0; or: true -> 1; implies: false -> 1. Otherwise the value is the right operand's.
        if (e->op == Op::kAnd && !av) return constant(0, e);
        if (e->op == Op::kOr && av) return constant(1, e);
        if (e->op == Op::kImplies && !av) return constant(1, e);
        const Expr* b = expr(e->b);
        if (is_const(b)) return constant(b->value != 0, e);
        return b;  // a bool-typed operand is already 0 or 1
      }
      const Expr* b = expr(e->b);
      return copy(e, a, b, nullptr);
    }
    case Op::kTernary: {
      const Expr* a = expr(e->a);
      if (is_const(a)) return expr(a->value ? e->b : e->c);
      return copy(e, a, expr(e->b), expr(e->c));
    }
    case Op::kAt: {
      if (e->a == nullptr) return e;
      const Expr* a = expr(e->a);
      if (is_const(a) && a->value >= e->lo && a->value < e->lo + e->count) {
        Expr& n = new_expr(*e);
        n.a = nullptr;
        n.stride = static_cast<int>(e->stride + (a->value - e->lo));
        return &n;
      }
      return copy(e, a, nullptr, nullptr);
    }
    case Op::kCallFn: {
      std::vector<const Expr*> args;
      bool all_const = true;
      for (size_t i = 0; i < e->args.size(); ++i) {
        args.push_back(expr(e->args[i]));
        all_const = all_const && is_const(args.back()) && in_range(args.back()->value, e->fn->param_types[i]);
      }
      if (all_const && depth_ < kMaxInlineDepth && !exhausted()) {
        std::vector<std::optional<int64_t>> saved;
        for (size_t i = 0; i < args.size(); ++i) {
          saved.push_back(env_[e->fn->param_frames[i]]);
          env_[e->fn->param_frames[i]] = args[i]->value;
        }
        ++depth_;
        const Expr* body = expr(e->fn->body);
        --depth_;
        for (size_t i = args.size(); i-- > 0;) env_[e->fn->param_frames[i]] = saved[i];
        if (is_const(body) && (!e->type->scalar() || in_range(body->value, e->type))) return constant(body->value, e);
      }
      Expr& n = new_expr(*e);
      n.args = std::move(args);
      return &n;
    }
    case Op::kForall:
    case Op::kExists: {
      bool all = e->op == Op::kForall;
      int frame = static_cast<int>(e->value);
      std::optional<int64_t> saved = env_[frame];
      if (e->count <= kMaxUnroll && !exhausted()) {
        // forall: a && b && ...; exists: a || b || ... (left to right, as the loop evaluates them)
        const Expr* acc = nullptr;
        bool decided = false;
        for (int64_t v = e->lo; v < e->lo + e->count && !decided; ++v) {
          env_[frame] = v;
          const Expr* b = expr(e->a);
          if (is_const(b)) {
            if ((b->value != 0) != all) {  // decides the whole quantifier from here on
              const Expr* k = constant(all ? 0 : 1, e);
              if (acc == nullptr) {
                acc = k;
              } else {
                Expr& n = new_expr(*e);
                n.op = all ? Op::kAnd : Op::kOr;
                n.a = acc;
                n.b = k;
                n.args.clear();
                acc = &n;
              }
              decided = true;
            }
            continue;  // a neutral operand
          }
          if (acc == nullptr) {
            acc = b;
          } else {
            Expr& n = new_expr(*e);
            n.op = all ? Op::kAnd : Op::kOr;
            n.a = acc;
            n.b = b;
            acc = &n;
          }
        }
        env_[frame] = saved;
        return acc != nullptr ? acc : constant(all ? 1 : 0, e);
      }
      env_[frame].reset();
      const Expr* a = expr(e->a);
      env_[frame] = saved;
      return copy(e, a, nullptr, nullptr);
    }
  }
  return e;
}

void Simplifier::stmts(const std::vector<const Stmt*>& body, std::vector<const Stmt*>& out) {
  for (const Stmt* s : body) stmt(s, out);
}

void Simplifier::stmt(const Stmt* s, std::vector<const Stmt*>& out) {
  auto copy_stmt = [&]() -> Stmt& { return new_stmt(*s); };
  switch (s->op) {
    case SOp::kSkip:
    case SOp::kRefuse: return;  // no state: only describe() (the unsimplified model) reports it
    case SOp::kAssign:
    case SOp::kPush: {
      Stmt& n = copy_stmt();
      n.lhs = expr(s->lhs);
      n.rhs = expr(s->rhs);
      out.push_back(&n);
      return;
    }
    case SOp::kPop:
    case SOp::kClear: {
      Stmt& n = copy_stmt();
      n.lhs = expr(s->lhs);
      out.push_back(&n);
      return;
    }
    case SOp::kCall: {
      std::vector<const Expr*> args;
      bool all_const = true;
      for (size_t i = 0; i < s->args.size(); ++i) {
        args.push_back(expr(s->args[i]));
        all_const = all_const && is_const(args.back()) && in_range(args.back()->value, s->proc->param_types[i]);
      }
      if (all_const && depth_ < kMaxInlineDepth && !exhausted()) {
        std::vector<std::optional<int64_t>> saved;
        for (size_t i = 0; i < args.size(); ++i) {
          saved.push_back(env_[s->proc->param_frames[i]]);
          env_[s->proc->param_frames[i]] = args[i]->value;
        }
        ++depth_;
        stmts(s->proc->body, out);
        --depth_;
        for (size_t i = args.size(); i-- > 0;) env_[s->proc->param_frames[i]] = saved[i];
        return;
      }
      Stmt& n = copy_stmt();
      n.args = std::move(args);
      out.push_back(&n);
      return;
    }
    case SOp::kIf: {
      const Expr* c = expr(s->rhs);
      if (is_const(c)) {
        stmts(c->value ? s->body : s->else_body, out);
        return;
      }
      Stmt& n = copy_stmt();
      n.rhs = c;
      n.body.clear();
      n.else_body.clear();
      stmts(s->body, n.body);
      stmts(s->else_body, n.else_body);
      out.push_back(&n);
      return;
    }
    case SOp::kFor: {
      std::optional<int64_t> saved = env_[s->frame];
      if (s->hi - s->lo + 1 <= kMaxUnroll && !exhausted()) {
        for (int64_t v = s->lo; v <= s->hi; ++v) {
          env_[s->frame] = v;
          stmts(s->body, out);
        }
        env_[s->frame] = saved;
        return;
      }
      env_[s->frame].reset();
      Stmt& n = copy_stmt();
      n.body.clear();
      stmts(s->body, n.body);
      env_[s->frame] = saved;
      out.push_back(&n);
      return;
    }
    case SOp::kRequire:
    case SOp::kAssert: {
      const Expr* c = expr(s->rhs);
      if (is_const(c) && c->value != 0) return;  // always holds
      Stmt& n = copy_stmt();
      n.rhs = c;
      out.push_back(&n);
      return;
    }
    case SOp::kFail: out.push_back(s); return;
  }
}

}  // namespace qpcheck::model
