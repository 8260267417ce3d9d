#include "checker/symbolic/family.h"

#include "checker/lang/numbers.h"
#include "checker/lang/resolve.h"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "checker/lang/source.h"
#include "checker/model/eval.h"

namespace qpcheck::symbolic {

namespace {

using model::Expr;
using model::Stmt;
using model::Type;

class Aligner {
 public:
  Aligner(const model::Model& a, const model::Model& b, int member, int members, std::string who, Aligned& out)
      : a_(a), b_(b), member_(member), members_(members), who_(std::move(who)), out_(out) {}

  void run() {
    if (a_.slots.size() != b_.slots.size()) {
      differ(fmt::format("the number of state slots ({} vs {}): it sizes an array, a queue or a process array",
                         a_.slots.size(), b_.slots.size()));
    }
    for (size_t i = 0; i < a_.slots.size(); ++i) {
      if (a_.slots[i].lo != b_.slots[i].lo || a_.slots[i].hi != b_.slots[i].hi) {
        differ(fmt::format("the range of state slot {} ({}..{} vs {}..{}): it bounds a range type", i, a_.slots[i].lo,
                           a_.slots[i].hi, b_.slots[i].lo, b_.slots[i].hi));
      }
      if (a_.initial[i] != b_.initial[i]) {
        auto it = initial_index_.find(static_cast<int>(i));
        if (it == initial_index_.end()) {
          it = initial_index_.emplace(static_cast<int>(i), out_.initial.size()).first;
          out_.initial.emplace_back(static_cast<int>(i), std::vector<int64_t>(members_, a_.initial[i]));
        }
        out_.initial[it->second].second[member_] = b_.initial[i];
      }
    }
    if (a_.frame_size != b_.frame_size) differ("the number of bound variables");
    if (a_.processes.size() != b_.processes.size()) differ("the number of process instances");
    for (size_t p = 0; p < a_.processes.size(); ++p) {
      const auto& pa = a_.processes[p];
      const auto& pb = b_.processes[p];
      if (pa.pc_slot != pb.pc_slot || pa.edges.size() != pb.edges.size() || pa.valid_end != pb.valid_end) {
        differ(fmt::format("the control flow of process {}", pa.name));
      }
      for (size_t pc = 0; pc < pa.edges.size(); ++pc) {
        if (pa.edges[pc].size() != pb.edges[pc].size()) differ(fmt::format("the steps of process {}", pa.name));
        for (size_t e = 0; e < pa.edges[pc].size(); ++e) {
          const auto& ea = pa.edges[pc][e];
          const auto& eb = pb.edges[pc][e];
          exprs(ea.conds, eb.conds);
          if (ea.step->next_pc != eb.step->next_pc) differ(fmt::format("the control flow of process {}", pa.name));
          expr(ea.step->guard, eb.step->guard);
          stmts(ea.step->body, eb.step->body);
        }
        if (pa.end_conds[pc].size() != pb.end_conds[pc].size()) differ(fmt::format("the end states of {}", pa.name));
        for (size_t k = 0; k < pa.end_conds[pc].size(); ++k) exprs(pa.end_conds[pc][k], pb.end_conds[pc][k]);
      }
    }
    if (a_.rules.size() != b_.rules.size()) differ("the rules");
    for (size_t r = 0; r < a_.rules.size(); ++r) {
      const auto& ra = a_.rules[r];
      const auto& rb = b_.rules[r];
      if (ra.instances != rb.instances || ra.param_frames != rb.param_frames) {
        differ(fmt::format("the parameter domains of rule {}", ra.name));
      }
      for (size_t i = 0; i < ra.param_types.size(); ++i) type(ra.param_types[i], rb.param_types[i], ra.span);
      expr(ra.guard, rb.guard);
      stmts(ra.body, rb.body);
    }
    if (a_.invariants.size() != b_.invariants.size()) differ("the invariants");
    for (size_t i = 0; i < a_.invariants.size(); ++i) expr(a_.invariants[i].expr, b_.invariants[i].expr);
  }

 private:
  [[noreturn]] void differ(const std::string& what, lang::Span span = {}) {
    std::string where;
    if (span.file >= 0 && a_.sources != nullptr) where = fmt::format(" at {}", a_.sources->location(span));
    throw NotSymbolic(fmt::format("{} cannot be symbolic: its values change {}{} (only parameters that appear as "
                                  "values in expressions and initial values can be symbolic)",
                                  who_, what, where));
  }

  void type(const Type* x, const Type* y, lang::Span span) {
    if (x == y) return;
    if (x == nullptr || y == nullptr || x->kind != y->kind || x->slots != y->slots || x->capacity != y->capacity ||
        (x->scalar() && (x->lo != y->lo || x->hi != y->hi)) || x->field_types.size() != y->field_types.size()) {
      differ(fmt::format("a type ({} vs {})", x ? model::type_name(x) : "none", y ? model::type_name(y) : "none"),
             span);
    }
    if (!seen_types_.insert(x).second) return;
    for (size_t i = 0; i < x->field_types.size(); ++i) type(x->field_types[i], y->field_types[i], span);
    type(x->index, y->index, span);
    type(x->elem, y->elem, span);
  }

  void exprs(const std::vector<const Expr*>& x, const std::vector<const Expr*>& y) {
    if (x.size() != y.size()) differ("the conditions of a step");
    for (size_t i = 0; i < x.size(); ++i) expr(x[i], y[i]);
  }

  void expr(const Expr* x, const Expr* y) {
    if (x == nullptr || y == nullptr) {
      if (x != y) differ("an expression", (x ? x : y)->span);
      return;
    }
    if (x->op != y->op) differ("the form of an expression", x->span);
    if (x->op == model::Op::kConst) {
      if (x->value != y->value) {
        auto it = out_.constants.find(x);
        if (it == out_.constants.end()) it = out_.constants.emplace(x, std::vector<int64_t>(members_, x->value)).first;
        it->second[member_] = y->value;
      }
      if ((x->type == nullptr) != (y->type == nullptr) ||
          (x->type != nullptr && x->type->kind != y->type->kind)) {
        differ("the type of a constant", x->span);
      }
      return;
    }
    if (x->value != y->value || x->lo != y->lo || x->count != y->count || x->stride != y->stride ||
        x->equal_composite != y->equal_composite) {
      differ("an expression", x->span);
    }
    type(x->type, y->type, x->span);
    expr(x->a, y->a);
    expr(x->b, y->b);
    expr(x->c, y->c);
    exprs(x->args, y->args);
    if ((x->fn == nullptr) != (y->fn == nullptr)) differ("a function call", x->span);
    if (x->fn != nullptr && seen_fns_.insert(x->fn).second) {
      if (x->fn->param_frames != y->fn->param_frames) differ("a function's parameters", x->span);
      for (size_t i = 0; i < x->fn->param_types.size(); ++i) type(x->fn->param_types[i], y->fn->param_types[i], x->span);
      expr(x->fn->body, y->fn->body);
    }
  }

  void stmts(const std::vector<const Stmt*>& x, const std::vector<const Stmt*>& y) {
    if (x.size() != y.size()) differ("a statement list", x.empty() ? lang::Span{} : x[0]->span);
    for (size_t i = 0; i < x.size(); ++i) stmt(x[i], y[i]);
  }

  void stmt(const Stmt* x, const Stmt* y) {
    if (x->op != y->op || x->frame != y->frame || x->lo != y->lo || x->hi != y->hi || x->property != y->property) {
      differ("a statement", x->span);
    }
    expr(x->lhs, y->lhs);
    expr(x->rhs, y->rhs);
    stmts(x->body, y->body);
    stmts(x->else_body, y->else_body);
    exprs(x->args, y->args);
    if ((x->proc == nullptr) != (y->proc == nullptr)) differ("a call", x->span);
    if (x->proc != nullptr && seen_procs_.insert(x->proc).second) {
      if (x->proc->param_frames != y->proc->param_frames) differ("a procedure's parameters", x->span);
      for (size_t i = 0; i < x->proc->param_types.size(); ++i) {
        type(x->proc->param_types[i], y->proc->param_types[i], x->span);
      }
      stmts(x->proc->body, y->proc->body);
    }
  }

  const model::Model& a_;
  const model::Model& b_;
  int member_, members_;
  std::string who_;
  Aligned& out_;
  std::unordered_map<int, size_t> initial_index_;
  std::set<const Type*> seen_types_;
  std::set<const model::Fn*> seen_fns_;
  std::set<const model::Proc*> seen_procs_;
};

}  // namespace

Aligned align_family(const Family& family) {
  Aligned out;
  if (family.members.size() <= 1) return out;
  const model::Model& base = family.members[0]->model();
  for (size_t i = 1; i < family.members.size(); ++i) {
    std::string who;
    for (const SymbolicParam& p : family.params) {
      if (p.values.at(i) != p.values.at(0)) who += (who.empty() ? "" : ", ") + p.name;
    }
    who = fmt::format("parameter{} {}", who.find(',') == std::string::npos ? "" : "s", who.empty() ? "?" : who);
    Aligner(base, family.members[i]->model(), static_cast<int>(i), static_cast<int>(family.members.size()), who, out)
        .run();
  }
  return out;
}

namespace {

const lang::TypeExpr* resolve(const lang::Program& program, const lang::TypeExpr* t, int hops = 0) {
  if (t == nullptr || t->kind != lang::TypeKind::kNamed || hops > 64) return t;
  for (const lang::Decl* d : program.decls) {
    if (d->kind == lang::DeclKind::kType && d->name.name == t->names.at(0).name) return resolve(program, d->type, hops + 1);
  }
  return t;
}

bool literal(const lang::Expr* e, int64_t& v) {
  if (e == nullptr) return false;
  if (e->kind == lang::ExprKind::kInt) { v = e->value; return true; }
  if (e->kind == lang::ExprKind::kUnary && e->unop == lang::UnOp::kNeg && literal(e->a, v)) { v = -v; return true; }
  return false;
}

int64_t parse_int(const std::string& name, const std::string& text) {
  std::optional<int64_t> v = lang::parse_int64(text);
  if (!v) throw lang::UsageError(fmt::format("--param {}: '{}' is not an integer", name, text));
  return *v;
}

}  // namespace

std::vector<std::string> param_values(const lang::Program& program, const std::string& name, const std::string& spec,
                                      size_t max_values) {
  std::vector<std::string> out;
  auto too_many = [&]() {
    throw lang::UsageError(fmt::format("--param {}={}: more than {} values to make symbolic", name, spec, max_values));
  };
  if (spec.find(',') != std::string::npos) {
    size_t start = 0;
    while (true) {
      size_t comma = spec.find(',', start);
      std::string v = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (v.empty()) throw lang::UsageError(fmt::format("--param {}={}: empty value in the list", name, spec));
      if (std::find(out.begin(), out.end(), v) != out.end()) {
        throw lang::UsageError(fmt::format("--param {}={}: value '{}' listed twice", name, spec, v));
      }
      out.push_back(v);
      if (out.size() > max_values) too_many();
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return out;
  }
  if (spec != "*") {
    size_t dots = spec.find("..");
    int64_t lo = 0, hi = 0;
    try {
      lo = parse_int(name, spec.substr(0, dots));
      hi = parse_int(name, spec.substr(dots + 2));
    } catch (const lang::UsageError& e) {
      throw lang::UsageError(fmt::format("{} (LO..HI is for integer parameters; for a bool or an enum list the values, "
                                         "{}=V1,V2, or give {}=*)", e.what(), name, name));
    }
    if (hi < lo) throw lang::UsageError(fmt::format("--param {}={}: empty range", name, spec));
    if (static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) >= max_values) too_many();
    for (int64_t v = lo; v <= hi; ++v) out.push_back(std::to_string(v));
    return out;
  }
  const lang::Decl* decl = nullptr;
  std::string plain = lang::split_qualified(name).second;
  for (const lang::Decl* d : program.decls) {
    if (d->kind == lang::DeclKind::kParam && d->name.name == plain && decl == nullptr) decl = d;
  }
  if (decl == nullptr) {
    throw lang::UsageError(fmt::format("unknown parameter '{}' in --param {}={}", name, name, spec));
  }
  const lang::TypeExpr* t = resolve(program, decl->type);
  switch (t->kind) {
    case lang::TypeKind::kBool: return {"false", "true"};
    case lang::TypeKind::kEnum:
      for (const lang::Ident& id : t->names) out.push_back(id.name);
      return out;
    case lang::TypeKind::kRange: {
      int64_t lo = 0, hi = 0;
      if (!literal(t->lo, lo) || !literal(t->hi, hi)) {
        throw lang::UsageError(fmt::format("--param {}=*: the declared range of {} is not given by literals; give the "
                                           "values explicitly: --param {}=LO..HI",
                                           name, name, name));
      }
      if (hi < lo || static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) >= max_values) too_many();
      for (int64_t v = lo; v <= hi; ++v) out.push_back(std::to_string(v));
      return out;
    }
    default: break;
  }
  throw lang::UsageError(fmt::format("--param {}=*: cannot enumerate the type of {}", name, name));
}

}  // namespace qpcheck::symbolic
