// Declarations (typecheck_internal.h): each top-level declaration kind, in program order.
#include "checker/lang/typecheck_internal.h"

#include <algorithm>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

namespace qpcheck::lang::typecheck_internal {

void Checker::declare(const Decl* d) {
  current_decl_span_ = d->name.span.file >= 0 ? d->name.span : d->span;
  names_.set_file(d->span.file);
  switch (d->kind) {
    case DeclKind::kImport:
    case DeclKind::kSet:      // applied before any declaration (run)
    case DeclKind::kDisable:  // likewise
    case DeclKind::kCheck:    // checked at the end (run)
    case DeclKind::kMatrix:   // checked by resolve_matrix (matrix.h)
    case DeclKind::kExpect:
    case DeclKind::kSymmetric: return;  // collect_symmetry
    case DeclKind::kRetired: {
      Symbol s;
      s.kind = Symbol::Kind::kRetired;
      s.message = d->message;
      names_.define(d->name, s);
      m_->retired.push_back(model::Retired{d->name.name, d->message, d->name.span});
      return;
    }
    case DeclKind::kParam: return declare_param(d);
    case DeclKind::kConst: {
      const model::Expr* e = expr(d->value);
      if (e->op != Op::kConst) error(d->value->span, "a const needs a constant expression");
      Symbol s;
      s.kind = Symbol::Kind::kConst;
      s.type = is_int(e->type) ? int_ : e->type;
      s.value = e->value;
      s.from_params = params_in(d->value);
      names_.define(d->name, s);
      return;
    }
    case DeclKind::kType: {
      if (d->is_override) return finish_type_override(d);
      if (names_.declared_here(d->name.name)) {
        error(d->name.span, fmt::format("duplicate declaration of '{}' (first declared at {})", d->name.name,
                                        where(names_.here(d->name.name).span)));
      }
      Symbol s;
      s.kind = Symbol::Kind::kType;
      s.type = type(replacement_type(d), d->name.name);
      if (d == symmetric_type_decl_) mark_symmetric(d, const_cast<Type*>(s.type));
      names_.define(d->name, s);
      return;
    }
    case DeclKind::kVar: {
      const Type* t = type(d->type);
      std::optional<int64_t> init;
      Span init_span;
      if (d->value != nullptr) {
        const model::Expr* e = expr(d->value);
        init_span = d->value->span;
        if (e->op != Op::kConst) error(d->value->span, "an initial value must be a constant expression");
        const Type* leaf = t;
        while (!leaf->scalar()) {
          if (leaf->kind == TypeKind::kArray) leaf = leaf->elem;
          else if (leaf->kind == TypeKind::kQueue) error(d->value->span, "a queue starts empty; it takes no initial value");
          else if (leaf->field_types.size() == 1) leaf = leaf->field_types[0];
          else { leaf = nullptr; break; }
        }
        if (leaf == nullptr) {
          // A record with several fields: every field must accept the broadcast value.
          std::function<void(const Type*)> check = [&](const Type* ty) {
            if (ty->scalar()) { expect_compatible(ty, e, fmt::format("the initial value of '{}'", d->name.name)); return; }
            if (ty->kind == TypeKind::kArray) return check(ty->elem);
            if (ty->kind == TypeKind::kQueue) return;
            for (const Type* f : ty->field_types) check(f);
          };
          check(t);
        } else {
          expect_compatible(leaf, e, fmt::format("the initial value of '{}'", d->name.name));
        }
        init = e->value;
      }
      Symbol s;
      s.kind = Symbol::Kind::kVar;
      s.type = t;
      if (names_.declared_here(d->name.name)) names_.define(d->name, s);  // reports the duplicate
      s.slot = allocate(names_.display("var", d->name.name), t, init, init_span);
      names_.define(d->name, s);
      return;
    }
    case DeclKind::kFn: return declare_fn(d);
    case DeclKind::kProc: return d->is_override ? override_proc(d) : declare_proc(d);
    case DeclKind::kProcess: return declare_process(d);
    case DeclKind::kRule: return d->is_override ? override_rule(d) : declare_rule(d);
    case DeclKind::kLiveness: return declare_liveness(d);
    case DeclKind::kFair: return declare_fair(d);
    case DeclKind::kInvariant: {
      if (d->is_override) return override_invariant(d);
      // Property names are global (reports, expect, disable, --property): one invariant per name in the program,
      // and none named like a built-in property.
      reserve_property_name(d->name, "an invariant");
      auto known = invariant_spans_.find(d->name.name);
      if (known != invariant_spans_.end()) {
        bool same_file = known->second.file == d->name.span.file;
        error(d->name.span, fmt::format("duplicate invariant '{}' (first declared at {}){}", d->name.name,
                                        where(known->second),
                                        same_file ? "" : ": property names are global; to replace that one write "
                                                         "'override invariant', or 'disable' it and give yours "
                                                         "another name"));
      }
      if (auto l = liveness_spans_.find(d->name.name); l != liveness_spans_.end()) {
        error(d->name.span, fmt::format("'{}' is already a liveness property (declared at {}): property names are "
                                        "global", d->name.name, where(l->second)));
      }
      invariant_spans_.emplace(d->name.name, d->name.span);
      const model::Expr* e = expr(d->value);
      expect_bool(e, "an invariant");
      if (disabled_.count(d->name.name)) {
        note_disabled(d->name.name, "invariant");
        return;
      }
      m_->invariants.push_back(model::Invariant{d->name.name, d->name.span, e});
      return;
    }
  }
}

void Checker::declare_liveness(const Decl* d) {
  reserve_property_name(d->name, "a liveness property");
  const Span* known = nullptr;
  if (auto it = invariant_spans_.find(d->name.name); it != invariant_spans_.end()) known = &it->second;
  if (auto it = liveness_spans_.find(d->name.name); it != liveness_spans_.end()) known = &it->second;
  if (known != nullptr) {
    error(d->name.span, fmt::format("duplicate property '{}' (first declared at {}): invariant and liveness "
                                    "property names are global; give this one another name", d->name.name,
                                    where(*known)));
  }
  liveness_spans_.emplace(d->name.name, d->name.span);
  model::Liveness l;
  l.name = d->name.name;
  l.span = d->name.span;
  l.kind = d->temporal == "eventually"          ? model::Liveness::Kind::kEventually
           : d->temporal == "always_eventually" ? model::Liveness::Kind::kAlwaysEventually
                                                : model::Liveness::Kind::kLeadsTo;
  l.p = expr(d->value);
  expect_bool(l.p, "a liveness property's state expression");
  if (d->guard != nullptr) {
    l.q = expr(d->guard);
    expect_bool(l.q, "a liveness property's state expression");
  }
  if (disabled_.count(d->name.name)) {
    note_disabled(d->name.name, "liveness");
    return;
  }
  m_->liveness.push_back(l);
}

void Checker::declare_fair(const Decl* d) {
  model::Fairness f;
  f.strong = d->temporal == "strong";
  f.span = d->span;
  for (const Ident& n : d->names) {
    f.names.push_back(qualified(n));
    const Symbol* sym = names_.lookup(n);
    if (sym != nullptr && sym->kind == Symbol::Kind::kProcess) {
      const ProcessInfo& info = process_infos_[sym->process];
      bool warned = false;  // once per name, not per instance
      for (size_t i = 0; i < m_->processes.size(); ++i) {
        int pc = m_->processes[i].pc_slot;
        if (pc < info.first_pc_slot || pc >= info.first_pc_slot + info.count) continue;
        if (std::find(f.processes.begin(), f.processes.end(), static_cast<int>(i)) != f.processes.end()) {
          error(n.span, fmt::format("fair names the process '{}' twice", qualified(n)));
        }
        for (const model::Fairness& other : m_->fairness) {
          if (!warned && other.strong == f.strong &&
              std::find(other.processes.begin(), other.processes.end(), static_cast<int>(i)) != other.processes.end()) {
            warned = true;
            warn(n.span, fmt::format("the process '{}' is already {} fair (at {}): this adds nothing", qualified(n),
                                      other.strong ? "strongly" : "weakly", where(other.span)));
          }
        }
        f.processes.push_back(static_cast<int>(i));
      }
      continue;
    }
    // Rule names are global (one declaration each); `module::rule` also names the file it is declared in.
    int rule = -1;
    for (size_t r = 0; r < m_->rules.size(); ++r) {
      const model::Rule& ru = m_->rules[r];
      if (ru.name != n.name) continue;
      if (!n.module.empty() &&
          std::filesystem::path(sources_.file(ru.span.file).path).stem().string() != n.module) {
        continue;
      }
      rule = static_cast<int>(r);
    }
    if (rule >= 0) {
      if (std::find(f.rules.begin(), f.rules.end(), rule) != f.rules.end()) {
        error(n.span, fmt::format("fair names the rule '{}' twice", qualified(n)));
      }
      for (const model::Fairness& other : m_->fairness) {
        // The same kind twice is a mistake; weak and strong may both name it (strong is the stronger).
        if (other.strong == f.strong && std::find(other.rules.begin(), other.rules.end(), rule) != other.rules.end()) {
          warn(n.span, fmt::format("the rule '{}' is already {} fair (at {}): this adds nothing", qualified(n),
                                    other.strong ? "strongly" : "weakly", where(other.span)));
        }
      }
      f.rules.push_back(rule);
      continue;
    }
    std::string known;
    for (const ProcessInfo& p : process_infos_) known += (known.empty() ? "" : ", ") + p.name;
    for (const model::Rule& r : m_->rules) known += (known.empty() ? "" : ", ") + r.name;
    error(n.span, fmt::format("fair names '{}', which is not a process or rule declared before it{} (declared so far: "
                              "{})", qualified(n),
                              sym != nullptr ? fmt::format(" (it is declared at {})", where(sym->span)) : "",
                              known.empty() ? "none" : known));
  }
  m_->fairness.push_back(std::move(f));
}

void Checker::declare_param(const Decl* d) {
  const Type* t = type(d->type);
  if (!t->scalar()) error(d->type->span, "a parameter must have a scalar type (bool, a range or an enum)");
  if (t->symmetric || (t->family_index != nullptr && t->family_index->symmetric)) {
    error(d->type->span, fmt::format("a parameter of type {} would name one of its values, and {} is symmetric ({})",
                                     model::type_name(t), t->symmetric ? t->name : t->family_index->name,
                                     symmetric_where()));
  }
  const model::Expr* def = expr(d->value);
  if (def->op != Op::kConst) error(d->value->span, "a parameter's default must be a constant expression");
  expect_compatible(t, def, fmt::format("parameter '{}'", d->name.name));
  std::string shown = names_.display("param", d->name.name);
  int64_t v = params_.value(*d, names_.file(), shown, t, def->value);
  Symbol s;
  s.kind = Symbol::Kind::kConst;
  s.is_param = true;
  s.type = is_int(t) ? int_ : t;
  s.value = v;
  s.from_params.push_back(shown);
  names_.define(d->name, s);
  m_->params.emplace_back(shown, model::render_scalar(t, v));
}

void Checker::declare_params_as_frames(const std::vector<Param>& params, std::vector<std::string>* names,
                                       std::vector<int>* frames, std::vector<const Type*>* types, const char* what) {
  if (params.size() > 16) error(params[16].name.span, "at most 16 parameters");
  for (const Param& p : params) {
    const Type* t = type(p.type);
    if (!t->scalar()) {
      error(p.type->span, fmt::format("{} parameters must be scalars (bool, a range or an enum)", what));
    }
    int f = new_frame();
    names_.bind_local(p.name, Local{Local::Kind::kFrame, t, f, {}});
    if (names) names->push_back(p.name.name);
    frames->push_back(f);
    types->push_back(t);
  }
}

void Checker::declare_fn(const Decl* d) {
  model::Fn& fn = m_->fns.emplace_back();
  fn.name = d->name.name;
  Symbol s;
  s.kind = Symbol::Kind::kFn;
  s.fn = &fn;
  s.compiling = true;
  names_.define(d->name, s);
  Names::Scope g(names_);
  declare_params_as_frames(d->params, nullptr, &fn.param_frames, &fn.param_types, "function");
  const Type* result = type(d->type);
  if (!result->scalar()) error(d->type->span, "a function must return a scalar (bool, a range or an enum)");
  const model::Expr* body = expr(d->value);
  expect_compatible(result, body, fmt::format("the result of '{}'", fn.name));
  // The call expression's type is the declared result type; a body value outside it is a runtime error.
  fn_result_[&fn] = result;
  fn.body = body;
  names_.here(d->name.name).compiling = false;
}

void Checker::declare_proc(const Decl* d) {
  model::Proc& p = m_->procs.emplace_back();
  p.name = names_.display("proc", d->name.name);
  p.verbs = d->verbs;
  p.span = d->span;
  Symbol s;
  s.kind = Symbol::Kind::kProc;
  s.proc = &p;
  s.compiling = true;
  names_.define(d->name, s);
  Names::Scope g(names_);
  declare_params_as_frames(d->params, &p.param_names, &p.param_frames, &p.param_types, "procedure");
  for (const ReplayCall& c : d->replay) p.replay.push_back(replay_op(c));
  p.body = atomic_block(d->body, "a procedure");
  names_.here(d->name.name).compiling = false;
}

model::ReplayOp Checker::replay_op(const ReplayCall& c) {
  return check_replay_clause(c, vocabulary_, [this](const Expr* a) { return expr(a); });
}

void Checker::declare_rule(const Decl* d) {
  for (const model::Rule& r : m_->rules) {
    if (r.name == d->name.name) {
      // Rule names are global (actions in traces and coverage).
      error(d->name.span, fmt::format("duplicate rule '{}' (first declared at {}){}", r.name, where(r.span),
                                      r.span.file == names_.file()
                                          ? ""
                                          : ": rule names are global; to replace that rule write 'override rule "
                                            + r.name + "', to add one give it another name"));
    }
  }
  model::Rule r;
  r.name = d->name.name;
  r.verbs = d->verbs;
  r.span = d->span;
  Names::Scope g(names_);
  declare_params_as_frames(d->params, &r.param_names, &r.param_frames, &r.param_types, "rule");
  for (const Type* t : r.param_types) {
    r.instances *= t->count();
    if (r.instances > kMaxDomain) {
      error(d->span, fmt::format("a rule may have at most {} parameter tuples", kMaxDomain));
    }
  }
  if (d->guard != nullptr) {
    r.guard = expr(d->guard);
    expect_bool(r.guard, "a rule's guard");
  }
  r.body = atomic_block(d->body, "a rule");
  m_->rules.push_back(std::move(r));
}

void Checker::declare_process(const Decl* d) {
  ProcessInfo info;
  info.name = names_.display("process", d->name.name);
  std::vector<int64_t> index_values = {0};
  if (d->index_type != nullptr) {
    info.index_type = type(d->index_type);
    if (!info.index_type->scalar()) error(d->index_type->span, "a process array is indexed by a range or an enum");
    if (info.index_type->count() > 4096) error(d->index_type->span, "at most 4096 instances of one process");
    index_values.clear();
    for (int64_t v = info.index_type->lo; v <= info.index_type->hi; ++v) index_values.push_back(v);
  }
  info.count = static_cast<int64_t>(index_values.size());
  info.first_pc_slot = static_cast<int>(m_->slots.size());
  // Program counters of all instances are contiguous (P[i]@L indexes them); their ranges are fixed below.
  int first_instance = static_cast<int>(m_->processes.size());
  for (int64_t v : index_values) {
    model::ProcessInstance pi;
    pi.process = info.name;
    pi.name = info.index_type ? fmt::format("{}[{}]", info.name, model::render_scalar(info.index_type, v))
                              : info.name;
    pi.pc_slot = static_cast<int>(m_->slots.size());
    if (auto at = sym_instance(info, v)) sym_slot(at->first + "@", {at->second}, pi.pc_slot);
    m_->units.push_back(model::Unit{pi.name + "@", int_, pi.pc_slot, static_cast<int>(m_->processes.size())});
    m_->slots.push_back(model::SlotInfo{0, 0, int_});
    m_->initial.push_back(0);
    m_->processes.push_back(std::move(pi));
  }
  Symbol s;
  s.kind = Symbol::Kind::kProcess;
  s.process = static_cast<int>(process_infos_.size());
  names_.define(d->name, s);
  process_infos_.push_back(info);
  for (size_t k = 0; k < index_values.size(); ++k) {
    sym_instance_ = sym_instance(info, index_values[k]);
    compile_instance(d, process_infos_.back(), first_instance + static_cast<int>(k), index_values[k]);
    sym_instance_.reset();
  }
}

void Checker::compile_instance(const Decl* d, ProcessInfo& info, int instance, int64_t index_value) {
  Names::Scope g(names_);
  if (info.index_type != nullptr) {
    names_.bind_local(d->index, Local{Local::Kind::kConst, info.index_type, index_value, {}});
  }
  model::ProcessInstance& pi = m_->processes[instance];
  // Local variables: declarations at the start of the body.
  size_t first_stmt = 0;
  for (; first_stmt < d->body.size() && d->body[first_stmt]->kind == StmtKind::kVar; ++first_stmt) {
    const Stmt* v = d->body[first_stmt];
    const Type* t = type(v->type);
    std::optional<int64_t> init;
    if (v->expr != nullptr) {
      const model::Expr* e = expr(v->expr);
      if (e->op != Op::kConst) error(v->expr->span, "an initial value must be a constant expression");
      if (t->scalar()) expect_compatible(t, e, fmt::format("the initial value of '{}'", v->name.name));
      init = e->value;
    }
    int64_t slot = allocate(pi.name + "." + v->name.name, t, init, v->expr ? v->expr->span : v->span);
    names_.bind_local(v->name, Local{Local::Kind::kSlot, t, slot, {}});
  }
  std::vector<const Stmt*> body(d->body.begin() + first_stmt, d->body.end());

  const model::Expr* until = d->guard != nullptr ? condition(d->guard, "a process's until condition") : nullptr;
  compile_process_body(body, d->span, sources_, *this, *m_, pi, until, info.label_pc, info.label_never_at,
                       info.end_pc);
}

}  // namespace qpcheck::lang::typecheck_internal
