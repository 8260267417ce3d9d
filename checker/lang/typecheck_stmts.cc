// Statements (typecheck_internal.h): atomic statements (proc, rule and when bodies, and each plain statement of a
// process), procedure calls and the queue statements, and fail/assert messages.
#include "checker/lang/typecheck_internal.h"

#include <algorithm>
#include <cctype>

#include <functional>
#include <set>

#include <fmt/format.h>

namespace qpcheck::lang::typecheck_internal {

std::string Checker::interpolate(const std::string& text, Span span) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    size_t close = c == '{' ? text.find('}', i + 1) : std::string::npos;
    std::string name = close == std::string::npos ? "" : text.substr(i + 1, close - i - 1);
    // A name, or MODULE::NAME (resolve.h): resolved from the file the message is written in.
    auto [module, plain] = split_qualified(name);
    auto is_ident = [](const std::string& n) {
      return !n.empty() && n.size() <= 256 && !std::isdigit(static_cast<unsigned char>(n[0])) &&
             std::all_of(n.begin(), n.end(),
                         [](char k) { return std::isalnum(static_cast<unsigned char>(k)) || k == '_'; });
    };
    if (!is_ident(plain) || (!module.empty() && !is_ident(module))) {
      out += c;
      continue;
    }
    const Symbol* sym = nullptr;
    if (module.empty() && names_.find_local(plain) != nullptr) {
      sym = nullptr;
    } else {
      sym = names_.lookup(Ident{plain, span, module});
    }
    if (sym == nullptr || sym->kind != Symbol::Kind::kConst) {
      error(span, fmt::format("'{{{}}}' in a message: only a param or a const can be shown (its value is fixed when "
                              "the spec is compiled)", name));
    }
    out += model::render_scalar(sym->type, sym->value);
    i = close;
  }
  return out;
}

// A for loop over a symmetric type runs its iterations in the type's order, which a permutation does not keep. Its
// effect is the same in every order when each iteration writes only what the loop variable indexes: every
// assignment, push, pop and clear in the body (nested ifs and loops included) must write through an index that is
// the loop variable, and the body may call no procedure (qpcheck does not look into what a call writes).
void Checker::symmetric_loop(const std::vector<const model::Stmt*>& body, int frame, const Stmt* loop,
                             const Type* t) {
  auto indexed_by_frame = [&](const model::Expr* e) {
    for (; e != nullptr; e = e->a) {
      if (e->op == Op::kIndex && e->b->op == Op::kFrame && e->b->value == frame) return true;
      if (e->op != Op::kIndex && e->op != Op::kField && e->op != Op::kHead) return false;
    }
    return false;
  };
  // The variables the body writes (by the slot at the root of each written location), for the reads below.
  std::function<const model::Expr*(const model::Expr*)> root = [&](const model::Expr* e) {
    while (e != nullptr && (e->op == Op::kIndex || e->op == Op::kField || e->op == Op::kHead)) e = e->a;
    return e;
  };
  std::set<int64_t> written;
  std::function<void(const std::vector<const model::Stmt*>&)> writes = [&](const std::vector<const model::Stmt*>& b) {
    for (const model::Stmt* st : b) {
      if (st->lhs != nullptr) {
        if (const model::Expr* r = root(st->lhs); r != nullptr && r->op == Op::kSlot) written.insert(r->value);
      }
      writes(st->body);
      writes(st->else_body);
    }
  };
  writes(body);
  // Every read of a written variable must go through the loop variable too: x[c] = x[d] + 1 reads, at c == d, what
  // an earlier iteration wrote, which depends on the order.
  std::function<void(const model::Expr*)> reads = [&](const model::Expr* e) {
    if (e == nullptr) return;
    if (e->op == Op::kIndex || e->op == Op::kField || e->op == Op::kHead || e->op == Op::kSlot) {
      const model::Expr* r = root(e);
      if (r != nullptr && r->op == Op::kSlot && written.count(r->value) && !indexed_by_frame(e)) {
        error(e->span, fmt::format("a for loop over {} (symmetric: {}) reads here a variable it writes, not through "
                                   "its variable '{}', so what it reads would depend on the order of the values",
                                   model::type_name(t), symmetric_where(), loop->name.name));
      }
      for (const model::Expr* l = e; l != nullptr && l->op != Op::kSlot; l = l->a) {
        if (l->op == Op::kIndex) reads(l->b);  // the location's indexes are reads; its base is this location
      }
      return;
    }
    reads(e->a);
    reads(e->b);
    reads(e->c);
    for (const model::Expr* x : e->args) reads(x);
  };
  std::function<void(const std::vector<const model::Stmt*>&)> read_all = [&](const std::vector<const model::Stmt*>& b) {
    for (const model::Stmt* st : b) {
      reads(st->rhs);
      for (const model::Expr* x : st->args) reads(x);
      if (st->lhs != nullptr) {  // the indexes of a written location are reads
        for (const model::Expr* e = st->lhs; e != nullptr && e->op != Op::kSlot; e = e->a) {
          if (e->op == Op::kIndex) reads(e->b);
        }
      }
      read_all(st->body);
      read_all(st->else_body);
    }
  };
  read_all(body);
  const std::string sym = t->symmetric ? t->name : t->family_index->name;
  for (const model::Stmt* st : body) {
    switch (st->op) {
      case SOp::kAssign: case SOp::kPush: case SOp::kPop: case SOp::kClear:
        if (!indexed_by_frame(st->lhs)) {
          error(st->span, fmt::format("a for loop over {} (symmetric: {}) writes here what its variable '{}' does not "
                                      "index, so its effect would depend on the order of the values; write "
                                      "only x[{}]-like locations in it, or use a rule or process parameter",
                                      model::type_name(t), symmetric_where(), loop->name.name, loop->name.name));
        }
        break;
      case SOp::kCall:
        error(st->span, fmt::format("a call inside a for loop over {} (symmetric: {}): qpcheck cannot show that "
                                    "its effect does not depend on the order of the values", model::type_name(t),
                                    symmetric_where()));
      case SOp::kIf:
        symmetric_loop(st->body, frame, loop, t);
        symmetric_loop(st->else_body, frame, loop, t);
        break;
      case SOp::kFor:
        symmetric_loop(st->body, frame, loop, t);
        break;
      default: break;
    }
  }
}

const model::Expr* Checker::condition(const Expr* e, const char* what) {
  const model::Expr* c = expr(e);
  expect_bool(c, what);
  return c;
}

std::vector<const model::Stmt*> Checker::atomic_block(const std::vector<Stmt*>& stmts, const char* where) {
  std::vector<const model::Stmt*> out;
  Names::Scope g(names_);
  for (const Stmt* s : stmts) out.push_back(atomic_stmt(s, where));
  return out;
}

const model::Stmt* Checker::atomic_stmt(const Stmt* s, const char* where_) {
  auto not_here = [&](const char* what) -> const model::Stmt* {
    error(s->span, fmt::format("{} is not allowed inside {}: its body runs as one atomic step", what, where_));
  };
  switch (s->kind) {
    case StmtKind::kSkip: return new_stmt(SOp::kSkip, s->span);
    case StmtKind::kAssign: {
      const model::Expr* lhs = expr(s->lhs);
      if (!is_location(lhs)) error(s->lhs->span, "the left side of '=' must be a variable, an element or a field");
      const model::Expr* rhs = expr(s->expr);
      expect_compatible(lhs->type, rhs, "this assignment");
      if (!lhs->type->scalar() && !is_location(rhs)) error(s->expr->span, "a composite value must be a variable");
      model::Stmt* st = new_stmt(SOp::kAssign, s->span);
      st->lhs = lhs;
      st->rhs = rhs;
      return st;
    }
    case StmtKind::kCall: return call_stmt(s);
    case StmtKind::kIf: {
      model::Stmt* st = new_stmt(SOp::kIf, s->span);
      st->rhs = expr(s->expr);
      expect_bool(st->rhs, "an if condition");
      st->body = atomic_block(s->body, where_);
      st->else_body = atomic_block(s->else_body, where_);
      return st;
    }
    case StmtKind::kFor: {
      Names::Scope g(names_);
      const Type* t = type(s->type);
      if (!t->scalar()) error(s->type->span, "a for loop ranges over a range, an enum or bool");
      check_domain(t, s->type->span, "a for loop");
      model::Stmt* st = new_stmt(SOp::kFor, s->span);
      st->frame = new_frame();
      st->lo = t->lo;
      st->hi = t->hi;
      names_.bind_local(s->name, Local{Local::Kind::kFrame, t, st->frame, {}});
      st->body = atomic_block(s->body, where_);
      if (t->symmetric || (t->family_index != nullptr && t->family_index->symmetric)) {
        symmetric_loop(st->body, st->frame, s, t);
      }
      return st;
    }
    case StmtKind::kRequire: {
      if (std::string(where_) == "a process") return not_here("require (use await)");
      model::Stmt* st = new_stmt(SOp::kRequire, s->span);
      st->rhs = expr(s->expr);
      expect_bool(st->rhs, "a require condition");
      return st;
    }
    // A disabled property's fail/assert does nothing (docs/language.md, "Properties"): the step goes on.
    case StmtKind::kFail: {
      if (!s->name.name.empty()) reserve_property_name(s->name, "a fail property");
      std::string property = s->name.name.empty() ? "assertion" : s->name.name;
      fail_names_.insert(property);
      if (disabled_.count(property)) {
        note_disabled(property, "fail");
        return new_stmt(SOp::kSkip, s->span);
      }
      model::Stmt* st = new_stmt(SOp::kFail, s->span);
      st->property = property;
      st->message = interpolate(s->message, s->span);
      return st;
    }
    case StmtKind::kAssert: {
      const model::Expr* cond = expr(s->expr);
      expect_bool(cond, "an assertion");
      if (!s->name.name.empty()) reserve_property_name(s->name, "an assert property");
      std::string property = s->name.name.empty() ? "assertion" : s->name.name;
      fail_names_.insert(property);
      if (disabled_.count(property)) {
        note_disabled(property, "fail");
        return new_stmt(SOp::kSkip, s->span);
      }
      model::Stmt* st = new_stmt(SOp::kAssert, s->span);
      st->rhs = cond;
      st->property = property;
      st->message = s->message.empty() ? std::string(sources_.text(s->expr->span)) : interpolate(s->message, s->span);
      return st;
    }
    // The call being made fails: the device returns an error, and the call changes what the body around it says.
    case StmtKind::kRefuse: {
      if (std::string(where_) != "a procedure") {
        error(s->span, "refuse marks the verbs/CM call a procedure models as failing (the device returns an error): "
                       "it belongs in a proc body (docs/language.md, \"Refused calls\")");
      }
      model::Stmt* st = new_stmt(SOp::kRefuse, s->span);
      st->message = interpolate(s->message, s->span);
      return st;
    }
    case StmtKind::kAwait: return not_here("await");
    case StmtKind::kWhen: return not_here("when/atomic");
    case StmtKind::kWhile: return not_here("while (use a bounded for)");
    case StmtKind::kChoose: return not_here("choose");
    case StmtKind::kGoto: return not_here("goto");
    case StmtKind::kBreak: return not_here("break");
    case StmtKind::kLabel: return not_here("a label");
    case StmtKind::kVar: return not_here("a variable declaration");
  }
  error(s->span, "internal: unknown statement");
}

const model::Stmt* Checker::call_stmt(const Stmt* s) {
  const Expr* call = s->expr;
  const std::string& name = call->name.name;
  if (call->name.module.empty() && (name == "push" || name == "pop" || name == "clear")) {
    size_t want = name == "push" ? 2 : 1;
    if (call->args.size() != want) {
      error(call->span, fmt::format("{}() takes {} argument{}, {} given", name, want, want == 1 ? "" : "s",
                                    call->args.size()));
    }
    const model::Expr* q = expr(call->args[0]);
    if (name != "clear" && q->type->kind != TypeKind::kQueue) {
      error(call->args[0]->span, fmt::format("{}() needs a queue, but the argument has type {}", name,
                                             model::type_name(q->type)));
    }
    if (!is_location(q)) error(call->args[0]->span, fmt::format("{}() needs a variable", name));
    model::Stmt* st = new_stmt(name == "push" ? SOp::kPush : name == "pop" ? SOp::kPop : SOp::kClear, s->span);
    st->lhs = q;
    if (name == "push") {
      st->rhs = expr(call->args[1]);
      expect_compatible(q->type->elem, st->rhs, "push()");
      if (!q->type->elem->scalar() && !is_location(st->rhs)) {
        error(call->args[1]->span, "a composite value must be a variable");
      }
    }
    return st;
  }
  // `original(ARGS)` in an override's body: the declaration it replaces (typecheck_internal.h original_proc).
  const model::Proc* original = call->name.module.empty() && name == "original" && names_.find_local(call->name) ==
                                nullptr ? original_proc(call->name.span) : nullptr;
  if (original == nullptr && call->name.module.empty() && name == "original" && !overriding_ &&
      names_.find_local(call->name) == nullptr && names_.lookup(call->name) == nullptr) {
    error(call->name.span, "original(...) runs the declaration an override replaces: it exists only in the body of "
                           "'override proc' or 'override rule' (docs/language.md, \"Replacing a library declaration\")");
  }
  if (original != nullptr || names_.find_local(call->name) == nullptr) {
    const Symbol* sym = original ? nullptr : names_.lookup(call->name);
    if (original != nullptr || (sym != nullptr && sym->kind == Symbol::Kind::kProc)) {
      if (sym != nullptr && sym->compiling) {
        error(call->name.span, fmt::format("procedure '{}' calls itself; procedures may not recurse{}", name,
                                           overriding_ ? " (in an override, original(...) runs the declaration it "
                                                         "replaces)" : ""));
      }
      const model::Proc* p = original ? original : sym->proc;
      if (call->args.size() != p->param_types.size()) {
        error(call->span, fmt::format("procedure '{}' takes {} argument{}, {} given", name, p->param_types.size(),
                                      p->param_types.size() == 1 ? "" : "s", call->args.size()));
      }
      model::Stmt* st = new_stmt(SOp::kCall, s->span);
      st->proc = p;
      for (size_t i = 0; i < call->args.size(); ++i) {
        const model::Expr* a = expr(call->args[i]);
        expect_compatible(p->param_types[i], a, fmt::format("argument {} ('{}') of '{}'", i + 1,
                                                            p->param_names[i], name));
        st->args.push_back(a);
      }
      return st;
    }
    if (sym != nullptr && sym->kind == Symbol::Kind::kFn) {
      error(call->name.span, fmt::format("'{}' is a function (pure); calling it as a statement has no effect", name));
    }
    if (sym != nullptr) {
      error(call->name.span, fmt::format("'{}' is a {} (declared at {}), not a procedure", qualified(call->name),
                                         kind_name(*sym), where(sym->span)));
    }
  }
  error(call->name.span, fmt::format("unknown procedure '{}'", qualified(call->name)));
}

}  // namespace qpcheck::lang::typecheck_internal
