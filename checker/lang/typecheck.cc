// The type checker's driver: typecheck() and the order of its passes. The jobs' files are listed in
// typecheck_internal.h.
#include "checker/lang/typecheck.h"

#include "checker/lang/typecheck_internal.h"

#include <fmt/format.h>

#include "checker/lang/nesting.h"

namespace qpcheck::lang::typecheck_internal {

// What the parameters do not need (run_params): vars, fns and everything with a body or a property.
static bool skipped_for_params(DeclKind k) {
  return k == DeclKind::kVar || k == DeclKind::kFn || k == DeclKind::kProc || k == DeclKind::kProcess ||
         k == DeclKind::kRule || k == DeclKind::kLiveness || k == DeclKind::kFair || k == DeclKind::kInvariant;
}

Compiled Checker::run(const Program& program) {
  graph_ = std::make_unique<ImportGraph>(program, sources_);
  names_.index(program, *graph_);
  for (const Decl* d : program.decls) {
    if (d->kind == DeclKind::kParam || d->kind == DeclKind::kRetired) params_.index(*d);
  }
  // `set` lines take effect before any declaration (a library's types may depend on its params); the command
  // line's --param values come after them and win. Each names the param its file sees by that name.
  params_.collect(program, param_overrides_, *graph_);
  collect_property_choices(program);
  collect_type_overrides(program);
  collect_symmetry(program);
  for (const Decl* d : program.decls) {
    if (params_only_ && skipped_for_params(d->kind)) continue;
    declare(d);
  }
  if (!params_only_) finish_symmetry();
  params_.check_retired_and_unknown_sets([this](int file, const std::string& name) {
    const Symbol* sym = names_.symbol_in(file, name);
    return sym && sym->kind == Symbol::Kind::kRetired
               ? std::optional<ParamSettings::Retirement>({sym->span, sym->message})
               : std::nullopt;
  });
  if (!params_only_) {
    if (m_->processes.empty() && m_->rules.empty()) {
      Span s{program.main_file, 0, 0};
      throw SpecError(s, "the spec declares no process and no rule: there is nothing to explore");
    }
    finish_property_choices(program);
    check_nesting(*m_);  // every later phase recurses through calls: bounded here once
  }
  Compiled c;
  c.param_targets = params_.targets(m_->params);
  c.model = std::move(m_);
  c.warnings = std::move(warnings_);
  return c;
}

void Checker::warn(Span span, std::string message) {
  for (const Diagnostic& w : warnings_) {
    if (w.span.file == span.file && w.span.begin == span.begin && w.message == message) return;
  }
  warnings_.push_back(Diagnostic{Severity::kWarning, span, std::move(message)});
}

Type* Checker::new_type(TypeKind k, int64_t lo, int64_t hi) {
  Type& t = m_->types.emplace_back();
  t.kind = k;
  t.lo = lo;
  t.hi = hi;
  return &t;
}

model::Expr* Checker::new_expr(Op op, const Type* type, Span span) {
  model::Expr& e = m_->exprs.emplace_back();
  e.op = op;
  e.type = type;
  e.span = span;
  return &e;
}

model::Expr* Checker::constant(int64_t v, const Type* type, Span span) {
  model::Expr* e = new_expr(Op::kConst, type, span);
  e->value = v;
  return e;
}

model::Stmt* Checker::new_stmt(SOp op, Span span) {
  model::Stmt& s = m_->stmts.emplace_back();
  s.op = op;
  s.span = span;
  return &s;
}

}  // namespace qpcheck::lang::typecheck_internal

namespace qpcheck::lang {

Compiled typecheck(const Program& program, const SourceManager& sources, const ParamOverrides& params,
                   const ReplayVocabulary& replay) {
  return typecheck_internal::Checker(sources, params, replay).run(program);
}

Compiled typecheck_params(const Program& program, const SourceManager& sources, const ParamOverrides& params,
                          const ReplayVocabulary& replay) {
  try {
    return typecheck_internal::Checker(sources, params, replay).run_params(program);
  } catch (const SpecError&) {
    // A declaration the parameters need was skipped (a const that calls a fn): the whole check decides.
    return typecheck(program, sources, params, replay);
  }
}

}  // namespace qpcheck::lang
