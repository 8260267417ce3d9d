// Expressions (typecheck_internal.h): every expression form, built-in functions, indexed enum constants and
// index(), and constant folding.
#include "checker/lang/typecheck_internal.h"

#include <fmt/format.h>

#include "checker/model/eval.h"

namespace qpcheck::lang::typecheck_internal {

const model::Expr* Checker::family_value(const Symbol& fam, const std::string& name, const Expr* index_ast, Span span) {
  const Type* et = fam.type;
  const Type* it = et->family_index;
  int64_t families = static_cast<int64_t>(et->families.size());
  const model::Expr* i = expr(index_ast);
  expect_compatible(it, i, fmt::format("the index of '{}'", name));
  if (i->op == Op::kConst) return constant((i->value - it->lo) * families + fam.value, et, span);
  auto key = std::make_pair(et, fam.value);
  auto found = family_fns_.find(key);
  if (found == family_fns_.end()) {
    model::Fn& fn = m_->fns.emplace_back();
    fn.name = name;
    int f = new_frame();
    fn.param_frames.push_back(f);
    fn.param_types.push_back(it);
    model::Expr* arg = new_expr(Op::kFrame, it, span);
    arg->value = f;
    model::Expr* off = new_expr(Op::kSub, int_, span);
    off->a = arg;
    off->b = constant(it->lo, int_, span);
    model::Expr* mul = new_expr(Op::kMul, int_, span);
    mul->a = off;
    mul->b = constant(families, int_, span);
    model::Expr* add = new_expr(Op::kAdd, int_, span);
    add->a = mul;
    add->b = constant(fam.value, int_, span);
    fn.body = add;
    fn_result_[&fn] = et;
    found = family_fns_.emplace(key, &fn).first;
  }
  model::Expr* e = new_expr(Op::kCallFn, et, span);
  e->fn = found->second;
  e->args.push_back(i);
  return e;
}

void Checker::expect_unordered(const model::Expr* e, const char* what) {
  if (!e->type->symmetric) return;
  error(e->span, fmt::format("{} on a value of type {}: {} is symmetric ({}), and its values are only compared with "
                             "== and != (arithmetic or order would tell them apart)",
                             what, e->type->name, e->type->name, symmetric_where()));
}

const model::Expr* Checker::index_of(const Expr* x) {
  if (x->args.size() != 1) {
    error(x->span, fmt::format("index() takes 1 argument, {} given", x->args.size()));
  }
  const model::Expr* v = expr(x->args[0]);
  const Type* et = v->type;
  if (et->kind != TypeKind::kEnum || et->family_index == nullptr) {
    error(x->args[0]->span, fmt::format("index() needs a value of an enum with indexed constants (enum {{ F[T], ... }}), "
                                        "found {}", model::type_name(et)));
  }
  const Type* it = et->family_index;
  int64_t families = static_cast<int64_t>(et->families.size());
  if (v->op == Op::kConst) return constant(it->lo + v->value / families, it, x->span);
  auto found = index_fns_.find(et);
  if (found == index_fns_.end()) {
    model::Fn& fn = m_->fns.emplace_back();
    fn.name = "index";
    int f = new_frame();
    fn.param_frames.push_back(f);
    fn.param_types.push_back(et);
    model::Expr* arg = new_expr(Op::kFrame, et, x->span);
    arg->value = f;
    model::Expr* div = new_expr(Op::kDiv, int_, x->span);
    div->a = arg;
    div->b = constant(families, int_, x->span);
    model::Expr* add = new_expr(Op::kAdd, int_, x->span);
    add->a = div;
    add->b = constant(it->lo, int_, x->span);
    fn.body = add;
    fn_result_[&fn] = it;
    found = index_fns_.emplace(et, &fn).first;
  }
  model::Expr* e = new_expr(Op::kCallFn, it, x->span);
  e->fn = found->second;
  e->args.push_back(v);
  return e;
}

const model::Expr* Checker::fold(model::Expr* e) {
  // Constant folding over kConst operands, so that ranges, initial values and params are compile-time constants.
  auto is_c = [](const model::Expr* x) { return x != nullptr && x->op == Op::kConst; };
  bool foldable = false;
  switch (e->op) {
    case Op::kNot: case Op::kNeg: foldable = is_c(e->a); break;
    case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kMod: case Op::kEq: case Op::kNe:
    case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe: case Op::kAnd: case Op::kOr: case Op::kImplies:
      foldable = is_c(e->a) && is_c(e->b) && !e->equal_composite;
      break;
    case Op::kTernary: foldable = is_c(e->a) && is_c(e->b) && is_c(e->c); break;
    default: break;
  }
  if (!foldable) return e;
  model::Machine m(*m_);
  int64_t v;
  try {
    v = m.eval(e);
  } catch (const model::StepFailure& f) {
    error(f.span, f.message);
  }
  return constant(v, is_int(e->type) && !e->type->symmetric ? int_ : e->type, e->span);
}

const model::Expr* Checker::expr(const Expr* x) {
  switch (x->kind) {
    case ExprKind::kInt: return constant(x->value, int_, x->span);
    case ExprKind::kBool: return constant(x->value, bool_, x->span);
    case ExprKind::kName: return name_expr(x);
    case ExprKind::kUnary: {
      const model::Expr* a = expr(x->a);
      model::Expr* e = new_expr(x->unop == UnOp::kNot ? Op::kNot : Op::kNeg, nullptr, x->span);
      if (x->unop == UnOp::kNot) { expect_bool(a, "the operand of '!'"); e->type = bool_; }
      else {
        expect_int(a, "the operand of unary '-'");
        expect_unordered(a, "unary '-'");
        e->type = int_;
      }
      e->a = a;
      return fold(e);
    }
    case ExprKind::kBinary: return binary_expr(x);
    case ExprKind::kTernary: {
      const model::Expr* c = expr(x->a);
      expect_bool(c, "the condition of '?:'");
      const model::Expr* a = expr(x->b);
      const model::Expr* b = expr(x->c);
      if (!a->type->scalar() || !compatible(a->type, b->type)) {
        error(x->span, fmt::format("the branches of '?:' have incompatible types {} and {}",
                                   model::type_name(a->type), model::type_name(b->type)));
      }
      model::Expr* e = new_expr(Op::kTernary, is_int(a->type) && !a->type->symmetric ? int_ : a->type, x->span);
      e->a = c;
      e->b = a;
      e->c = b;
      return fold(e);
    }
    case ExprKind::kIndex: {
      if (x->a->kind == ExprKind::kName && names_.find_local(x->a->name) == nullptr) {
        const Symbol* fam = names_.lookup(x->a->name);
        if (fam != nullptr && fam->kind == Symbol::Kind::kFamily) {
          return family_value(*fam, x->a->name.name, x->b, x->span);
        }
      }
      const model::Expr* base = expr(x->a);
      if (base->type->kind != TypeKind::kArray) {
        error(x->a->span, fmt::format("cannot index a value of type {} (not an array)", model::type_name(base->type)));
      }
      const model::Expr* idx = expr(x->b);
      expect_compatible(base->type->index, idx, "the array index");
      model::Expr* e = new_expr(Op::kIndex, base->type->elem, x->span);
      e->a = base;
      e->b = idx;
      e->lo = base->type->index->lo;
      e->count = base->type->index->count();
      e->stride = base->type->elem->slots;
      // A constant index into a static location is a static location.
      if (base->op == Op::kSlot && idx->op == Op::kConst) {
        model::Expr* s = new_expr(Op::kSlot, e->type, x->span);
        s->value = base->value + (idx->value - e->lo) * e->stride;
        return s;
      }
      return e;
    }
    case ExprKind::kField: {
      const model::Expr* base = expr(x->a);
      if (base->type->kind != TypeKind::kRecord) {
        error(x->name.span, fmt::format("cannot take field '{}' of a value of type {} (not a record)", x->name.name,
                                        model::type_name(base->type)));
      }
      const Type* rt = base->type;
      for (size_t i = 0; i < rt->field_names.size(); ++i) {
        if (rt->field_names[i] != x->name.name) continue;
        if (base->op == Op::kSlot) {
          model::Expr* s = new_expr(Op::kSlot, rt->field_types[i], x->span);
          s->value = base->value + rt->field_offsets[i];
          return s;
        }
        model::Expr* e = new_expr(Op::kField, rt->field_types[i], x->span);
        e->a = base;
        e->value = rt->field_offsets[i];
        return e;
      }
      std::string fields;
      for (const std::string& f : rt->field_names) fields += (fields.empty() ? "" : ", ") + f;
      error(x->name.span, fmt::format("record has no field '{}' (fields: {})", x->name.name, fields));
    }
    case ExprKind::kCall: return call_expr(x);
    case ExprKind::kAt: return at_expr(x);
    case ExprKind::kForall:
    case ExprKind::kExists: {
      Names::Scope g(names_);
      const Type* t = type(x->domain);
      if (!t->scalar()) error(x->domain->span, "a quantifier ranges over a range, an enum or bool");
      check_domain(t, x->domain->span, "a quantifier");
      model::Expr* e = new_expr(x->kind == ExprKind::kForall ? Op::kForall : Op::kExists, bool_, x->span);
      e->value = new_frame();
      e->lo = t->lo;
      e->count = t->count();
      names_.bind_local(x->name, Local{Local::Kind::kFrame, t, e->value, {}});
      e->a = expr(x->a);
      expect_bool(e->a, "a quantifier's body");
      return e;
    }
  }
  error(x->span, "internal: unknown expression");
}

const model::Expr* Checker::name_expr(const Expr* x) {
  const std::string& n = x->name.name;
  if (const Local* l = names_.find_local(x->name)) {
    switch (l->kind) {
      case Local::Kind::kConst: return constant(l->value, l->type, x->span);
      case Local::Kind::kFrame: {
        model::Expr* e = new_expr(Op::kFrame, l->type, x->span);
        e->value = l->value;
        return e;
      }
      case Local::Kind::kSlot: {
        model::Expr* e = new_expr(Op::kSlot, l->type, x->span);
        e->value = l->value;
        return e;
      }
    }
  }
  const Symbol* found = names_.lookup(x->name);
  if (found == nullptr) error(x->span, fmt::format("unknown name '{}'", qualified(x->name)));
  const Symbol& s = *found;
  switch (s.kind) {
    case Symbol::Kind::kConst: return constant(s.value, s.type, x->span);
    case Symbol::Kind::kFamily: {
      const Type* ix = s.type->family_index;
      if (ix->count() != 1) {
        error(x->span, fmt::format("'{}' is a family of enum constants indexed by {}: write {}[i]", n,
                                   model::type_name(ix), n));
      }
      return constant(s.value, s.type, x->span);
    }
    case Symbol::Kind::kVar: {
      model::Expr* e = new_expr(Op::kSlot, s.type, x->span);
      e->value = s.slot;
      return e;
    }
    case Symbol::Kind::kType: error(x->span, fmt::format("'{}' is a type, not a value", n));
    case Symbol::Kind::kFn:
    case Symbol::Kind::kProc: error(x->span, fmt::format("'{}' must be called with arguments: {}(...)", n, n));
    case Symbol::Kind::kProcess:
      error(x->span, fmt::format("'{}' is a process; use {}@LABEL to ask where it stands", n, n));
    case Symbol::Kind::kRetired: break;  // Names::lookup() reported it
  }
  error(x->span, "internal: unknown symbol");
}

const model::Expr* Checker::binary_expr(const Expr* x) {
  const model::Expr* a = expr(x->a);
  const model::Expr* b = expr(x->b);
  Op op = Op::kAdd;
  const Type* result = bool_;
  switch (x->binop) {
    case BinOp::kAdd: op = Op::kAdd; break;
    case BinOp::kSub: op = Op::kSub; break;
    case BinOp::kMul: op = Op::kMul; break;
    case BinOp::kDiv: op = Op::kDiv; break;
    case BinOp::kMod: op = Op::kMod; break;
    case BinOp::kEq: op = Op::kEq; break;
    case BinOp::kNe: op = Op::kNe; break;
    case BinOp::kLt: op = Op::kLt; break;
    case BinOp::kLe: op = Op::kLe; break;
    case BinOp::kGt: op = Op::kGt; break;
    case BinOp::kGe: op = Op::kGe; break;
    case BinOp::kAnd: op = Op::kAnd; break;
    case BinOp::kOr: op = Op::kOr; break;
    case BinOp::kImplies: op = Op::kImplies; break;
  }
  model::Expr* e = new_expr(op, bool_, x->span);
  e->a = a;
  e->b = b;
  static const char* names[] = {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "=>"};
  const char* sym = names[static_cast<int>(x->binop)];
  switch (op) {
    case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kDiv: case Op::kMod:
    case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe:
      expect_int(a, fmt::format("the left operand of '{}'", sym).c_str());
      expect_int(b, fmt::format("the right operand of '{}'", sym).c_str());
      expect_unordered(a, fmt::format("'{}'", sym).c_str());
      expect_unordered(b, fmt::format("'{}'", sym).c_str());
      if (op == Op::kAdd || op == Op::kSub || op == Op::kMul || op == Op::kDiv || op == Op::kMod) result = int_;
      break;
    case Op::kAnd: case Op::kOr: case Op::kImplies:
      expect_bool(a, fmt::format("the left operand of '{}'", sym).c_str());
      expect_bool(b, fmt::format("the right operand of '{}'", sym).c_str());
      break;
    default:  // == !=
      if (!compatible(a->type, b->type)) {
        const Type* sym = a->type->symmetric ? a->type : b->type->symmetric ? b->type : nullptr;
        error(x->span, fmt::format("cannot compare {} with {}{}", model::type_name(a->type),
                                   model::type_name(b->type),
                                   sym == nullptr ? std::string()
                                                  : fmt::format(": {} is symmetric ({}), so a value of it is only "
                                                                "compared with another value of {}", sym->name,
                                                                symmetric_where(), sym->name)));
      }
      if (!a->type->scalar()) {
        if (!is_location(a) || !is_location(b)) error(x->span, "composite values are compared as variables");
        e->equal_composite = true;
      }
      break;
  }
  e->type = result;
  return fold(e);
}

const model::Expr* Checker::call_expr(const Expr* x) {
  const std::string& n = x->name.name;
  auto nargs = [&](size_t want) {
    if (x->args.size() != want) {
      error(x->span, fmt::format("{}() takes {} argument{}, {} given", n, want, want == 1 ? "" : "s",
                                 x->args.size()));
    }
  };
  auto queue_arg = [&]() {
    const model::Expr* q = expr(x->args[0]);
    if (q->type->kind != TypeKind::kQueue) {
      error(x->args[0]->span, fmt::format("{}() needs a queue, but the argument has type {}", n,
                                          model::type_name(q->type)));
    }
    if (!is_location(q)) error(x->args[0]->span, fmt::format("{}() needs a variable", n));
    return q;
  };
  const Symbol* callee = names_.find_local(x->name) == nullptr ? names_.lookup(x->name) : nullptr;
  if (names_.find_local(x->name) == nullptr && callee == nullptr) {
    if (!x->name.module.empty()) error(x->name.span, fmt::format("unknown function '{}'", qualified(x->name)));
    if (n == "len" || n == "empty" || n == "full") {
      nargs(1);
      const model::Expr* q = queue_arg();
      model::Expr* e = new_expr(n == "len" ? Op::kLen : n == "empty" ? Op::kEmpty : Op::kFull,
                                n == "len" ? int_ : bool_, x->span);
      e->a = q;
      return e;
    }
    if (n == "head") {
      nargs(1);
      const model::Expr* q = queue_arg();
      model::Expr* e = new_expr(Op::kHead, q->type->elem, x->span);
      e->a = q;
      return e;
    }
    if (n == "contains") {
      nargs(2);
      const model::Expr* q = queue_arg();
      if (!q->type->elem->scalar()) error(x->args[0]->span, "contains() needs a queue of scalars");
      const model::Expr* v = expr(x->args[1]);
      expect_compatible(q->type->elem, v, "contains()");
      model::Expr* e = new_expr(Op::kContains, bool_, x->span);
      e->a = q;
      e->b = v;
      return e;
    }
    if (n == "index") return index_of(x);
    if (n == "push" || n == "pop" || n == "clear") {
      error(x->span, fmt::format("{}() changes the state: it is a statement, not an expression", n));
    }
    error(x->name.span, fmt::format("unknown function '{}'", n));
  }
  if (callee == nullptr || (callee->kind != Symbol::Kind::kFn && callee->kind != Symbol::Kind::kProc)) {
    error(x->name.span, callee == nullptr ? fmt::format("'{}' is not a function", n)
                                          : fmt::format("'{}' is a {} (declared at {}), not a function", n,
                                                        kind_name(*callee), where(callee->span)));
  }
  if (callee->kind == Symbol::Kind::kProc) {
    error(x->name.span, fmt::format("'{}' is a procedure: it is a statement, not an expression", n));
  }
  if (callee->compiling) error(x->name.span, fmt::format("function '{}' calls itself; functions may not recurse", n));
  const model::Fn* fn = callee->fn;
  if (x->args.size() != fn->param_types.size()) {
    error(x->span, fmt::format("function '{}' takes {} argument{}, {} given", n, fn->param_types.size(),
                               fn->param_types.size() == 1 ? "" : "s", x->args.size()));
  }
  model::Expr* e = new_expr(Op::kCallFn, fn_result_.at(fn), x->span);
  e->fn = fn;
  for (size_t i = 0; i < x->args.size(); ++i) {
    const model::Expr* a = expr(x->args[i]);
    expect_compatible(fn->param_types[i], a, fmt::format("argument {} of '{}'", i + 1, n));
    e->args.push_back(a);
  }
  return e;
}

const model::Expr* Checker::at_expr(const Expr* x) {
  const Expr* p = x->a;
  const Expr* index = nullptr;
  if (p->kind == ExprKind::kIndex) {
    index = p->b;
    p = p->a;
  }
  if (p->kind != ExprKind::kName) error(p->span, "the left side of '@' must be a process name or P[index]");
  const Symbol* sym = names_.lookup(p->name);
  if (sym == nullptr) error(p->span, fmt::format("unknown process '{}'", qualified(p->name)));
  if (sym->kind != Symbol::Kind::kProcess) {
    error(p->span, fmt::format("'{}' is not a process (declared at {})", p->name.name, where(sym->span)));
  }
  const ProcessInfo& info = process_infos_[sym->process];
  int pc_value = -1;
  if (x->name.name == "end") {  // P@end: the process has finished
    if (info.end_pc < 0) {
      error(x->name.span, fmt::format("process '{}' never finishes (no run reaches the end of its body), so "
                                      "'{}@end' could never be true", info.name, info.name));
    }
    pc_value = info.end_pc;
  } else {
    auto lt = info.label_pc.find(x->name.name);
    if (lt == info.label_pc.end()) {
      std::string known;
      for (const auto& [l, pc] : info.label_pc) known += (known.empty() ? "" : ", ") + l;
      error(x->name.span, fmt::format("process '{}' has no label '{}' (labels: {}; or end)", info.name, x->name.name,
                                      known.empty() ? "none" : known));
    }
    if (info.label_never_at.count(x->name.name)) {
      error(x->name.span, fmt::format("process '{}' never stands at label '{}': it labels the first statement of an "
                                      "if, while or choose branch, which runs in the same step as the branch's test, "
                                      "so '{}@{}' could never be true; label the if/while/choose itself, or a "
                                      "statement of its own before it", info.name, x->name.name, info.name,
                                      x->name.name));
    }
    pc_value = lt->second;
  }
  model::Expr* e = new_expr(Op::kAt, bool_, x->span);
  e->value = pc_value;
  e->stride = info.first_pc_slot;
  if (info.index_type != nullptr) {
    if (index == nullptr) {
      error(p->span, fmt::format("'{}' is an array of processes: say which one, {}[i]@{}", info.name, info.name,
                                 x->name.name));
    }
    const model::Expr* i = expr(index);
    expect_compatible(info.index_type, i, "the process index");
    e->a = i;
    e->lo = info.index_type->lo;
    e->count = info.count;
  } else if (index != nullptr) {
    error(index->span, fmt::format("'{}' is a single process, not an array", info.name));
  }
  return e;
}

}  // namespace qpcheck::lang::typecheck_internal
