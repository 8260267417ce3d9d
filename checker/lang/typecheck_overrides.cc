// Overrides (typecheck_internal.h): `override type` (resolved before any declaration), `override proc`,
// `override rule`, `override invariant`.
#include "checker/lang/typecheck_internal.h"

#include <algorithm>

#include <fmt/format.h>

namespace qpcheck::lang::typecheck_internal {

void Checker::collect_type_overrides(const Program& program) {
  for (const Decl* d : program.decls) {
    if (d->kind != DeclKind::kType || !d->is_override) continue;
    names_.set_file(d->span.file);
    const std::vector<int>& all = names_.type_files(d->name.name);
    if (d->name.module.empty() && std::find(all.begin(), all.end(), names_.file()) != all.end()) {
      error(d->name.span, fmt::format("'override type' replaces a type of an imported file, but '{}' is declared in "
                                      "this file: change that declaration instead", d->name.name));
    }
    std::vector<int> files;
    for (int f : all) {
      if (f != names_.file()) files.push_back(f);
    }
    int target = graph_->resolve(d->name, names_.file(), files, [&](int f) { return sources_.file(f).path; });
    if (target < 0) {
      error(d->name.span, fmt::format("override type '{}': no type '{}' in the files this one imports",
                                      qualified(d->name), d->name.name));
    }
    auto [it, fresh] = type_overrides_.emplace(std::make_pair(target, d->name.name), d);
    if (!fresh) {
      error(d->name.span, fmt::format("type '{}' is already replaced by the override at {}", d->name.name,
                                      where(it->second->span)));
    }
  }
}

const TypeExpr* Checker::replacement_type(const Decl* d) {
  auto it = type_overrides_.find({names_.file(), d->name.name});
  if (it == type_overrides_.end()) return d->type;
  const Decl* ov = it->second;
  const TypeExpr* a = d->type;
  const TypeExpr* b = ov->type;
  auto constants = [&](const TypeExpr* t) {
    std::string out;
    for (size_t i = 0; i < t->names.size(); ++i) {
      out += (i ? ", " : "") + t->names[i].name;
      if (i < t->fields.size() && t->fields[i] != nullptr) out += fmt::format("[{}]", sources_.text(t->fields[i]->span));
    }
    return out;
  };
  if (a->kind != lang::TypeKind::kEnum || b->kind != lang::TypeKind::kEnum) {
    error(ov->type->span, fmt::format("override type '{}': only an enum can be replaced, by an enum that keeps its "
                                      "constants and adds others (the original at {} is not an enum, or this is "
                                      "not one)", d->name.name, where(d->name.span)));
  }
  bool keeps = b->names.size() >= a->names.size();
  for (size_t i = 0; keeps && i < a->names.size(); ++i) {
    bool ai = i < a->fields.size() && a->fields[i] != nullptr, bi = i < b->fields.size() && b->fields[i] != nullptr;
    keeps = a->names[i].name == b->names[i].name && ai == bi &&
            (!ai || sources_.text(a->fields[i]->span) == sources_.text(b->fields[i]->span));
  }
  if (!keeps) {
    error(ov->type->span, fmt::format("override type '{}' must keep the original's constants first, in order "
                                      "({}, at {}), and may add others after them", d->name.name, constants(a),
                                      where(d->name.span)));
  }
  applied_type_overrides_.insert(ov);
  m_->overrides.push_back(model::Override{"type", d->name.name, d->name.span, ov->span});
  return b;
}

void Checker::finish_type_override(const Decl* d) {
  if (!applied_type_overrides_.count(d)) {
    error(d->name.span, fmt::format("override type '{}' was not applied: its type is declared after this file",
                                    d->name.name));
  }
}

std::vector<int> Checker::bind_override_params(const Decl* d, const std::vector<const Type*>& types, const char* what,
                                               Span original) {
  std::vector<int> frames;
  if (d->params.size() != types.size()) {
    error(d->name.span, fmt::format("override {} '{}' has {} parameter{}; the original at {} has {} (an override "
                                    "keeps the signature)", what, d->name.name, d->params.size(),
                                    d->params.size() == 1 ? "" : "s", where(original), types.size()));
  }
  for (size_t i = 0; i < d->params.size(); ++i) {
    const Type* t = type(d->params[i].type);
    if (!same_type(t, types[i])) {
      error(d->params[i].type->span, fmt::format("parameter {} ('{}') of override {} '{}' has type {}; the "
                                                 "original's (at {}) is {}", i + 1, d->params[i].name.name, what,
                                                 d->name.name, model::type_name(t), where(original),
                                                 model::type_name(types[i])));
    }
    frames.push_back(new_frame());
    names_.bind_local(d->params[i].name, Local{Local::Kind::kFrame, types[i], frames[i], {}});
  }
  return frames;
}

const model::Proc* Checker::original_proc(Span at) {
  if (!overriding_) return nullptr;
  Overriding& o = *overriding_;
  if (o.made == nullptr) {
    model::Proc& p = m_->procs.emplace_back();
    p.name = o.name;
    p.verbs = o.verbs;      // no replay clause: the override's step records the replaced declaration's operations once
    p.span = o.span;
    p.param_names = o.param_names;
    p.param_frames = o.param_frames;
    p.param_types = o.param_types;
    p.body = o.body;
    o.made = &p;
  }
  (void)at;
  return o.made;
}

void Checker::override_proc(const Decl* d) {
  Symbol* target = names_.lookup_imported(d->name, "proc");
  if (target->kind != Symbol::Kind::kProc) {
    error(d->name.span, fmt::format("override proc '{}': '{}' (at {}) is a {}, not a procedure", d->name.name,
                                    d->name.name, where(target->span), kind_name(*target)));
  }
  model::Proc* p = target->proc;
  if (auto it = replaced_.find(p); it != replaced_.end()) {
    error(d->name.span, fmt::format("procedure '{}' is already replaced by the override at {}", d->name.name,
                                    where(it->second)));
  }
  Names::Scope g(names_);
  std::vector<int> frames = bind_override_params(d, p->param_types, "proc", p->span);
  target->compiling = true;
  std::vector<model::ReplayOp> replay;
  for (const ReplayCall& c : d->replay) replay.push_back(replay_op(c));
  overriding_ = Overriding{"proc", p->name, p->span, p->param_names, p->param_frames, p->param_types, p->verbs,
                           p->body, nullptr};
  std::vector<const model::Stmt*> body = atomic_block(d->body, "a procedure");
  overriding_.reset();
  target->compiling = false;
  if (d->replay.empty()) {
    // The original's replay clause stays; its arguments name the original's parameters: point them at the
    // override's frames.
    for (model::ReplayOp& op : p->replay) {
      for (const model::Expr*& a : op.args) {
        if (a->op != Op::kFrame) continue;
        for (size_t k = 0; k < p->param_frames.size() && k < frames.size(); ++k) {
          if (p->param_frames[k] != a->value) continue;
          model::Expr* x = new_expr(Op::kFrame, a->type, a->span);
          x->value = frames[k];
          a = x;
          break;
        }
      }
    }
  }
  p->param_frames = std::move(frames);  // every call binds the override's own frames from now on
  m_->overrides.push_back(model::Override{"proc", p->name, p->span, d->span});
  replaced_.emplace(p, d->span);
  p->body = std::move(body);
  if (!d->verbs.empty()) p->verbs = d->verbs;
  if (!d->replay.empty()) p->replay = std::move(replay);
  p->span = d->span;
}

void Checker::override_rule(const Decl* d) {
  model::Rule* r = nullptr;
  for (model::Rule& x : m_->rules) {
    if (x.name == d->name.name) r = &x;
  }
  if (r == nullptr || r->span.file == names_.file() ||
      !graph_->sees(d->name.module.empty() ? names_.file() : graph_->module_file(d->name), r->span.file)) {
    error(d->name.span, fmt::format("override rule '{}': no rule '{}' in the files this one imports{}",
                                    qualified(d->name), d->name.name,
                                    r != nullptr && r->span.file == names_.file()
                                        ? fmt::format(" (it is declared in this file, at {})", where(r->span))
                                        : ""));
  }
  if (auto it = replaced_rules_.find(r->name); it != replaced_rules_.end()) {
    error(d->name.span, fmt::format("rule '{}' is already replaced by the override at {}", d->name.name,
                                    where(it->second)));
  }
  Names::Scope g(names_);
  std::vector<int> frames = bind_override_params(d, r->param_types, "rule", r->span);
  const model::Expr* guard = nullptr;
  if (d->guard != nullptr) {
    guard = expr(d->guard);
    expect_bool(guard, "a rule's guard");
  }
  overriding_ = Overriding{"rule", r->name, r->span, r->param_names, r->param_frames, r->param_types, r->verbs,
                           r->body, nullptr};
  std::vector<const model::Stmt*> body = atomic_block(d->body, "a rule");
  overriding_.reset();
  r->param_frames = std::move(frames);
  m_->overrides.push_back(model::Override{"rule", r->name, r->span, d->span});
  replaced_rules_.emplace(r->name, d->span);
  r->guard = guard;
  r->body = std::move(body);
  if (!d->verbs.empty()) r->verbs = d->verbs;
  r->span = d->span;
}

void Checker::override_invariant(const Decl* d) {
  auto known = invariant_spans_.find(d->name.name);
  if (known == invariant_spans_.end() || known->second.file == names_.file() ||
      !graph_->sees(names_.file(), known->second.file)) {
    error(d->name.span, fmt::format("override invariant '{}': no invariant '{}' in the files this one imports",
                                    d->name.name, d->name.name));
  }
  if (auto it = replaced_rules_.find("invariant " + d->name.name); it != replaced_rules_.end()) {
    error(d->name.span, fmt::format("invariant '{}' is already replaced by the override at {}", d->name.name,
                                    where(it->second)));
  }
  const model::Expr* e = expr(d->value);
  expect_bool(e, "an invariant");
  if (disabled_.count(d->name.name)) {
    error(d->name.span, fmt::format("invariant '{}' is disabled at {}: an override of it would not be checked",
                                    d->name.name, where(disabled_.at(d->name.name).span)));
  }
  replaced_rules_.emplace("invariant " + d->name.name, d->span);
  for (model::Invariant& inv : m_->invariants) {
    if (inv.name != d->name.name) continue;
    m_->overrides.push_back(model::Override{"invariant", inv.name, inv.span, d->span});
    inv.expr = e;
    inv.span = d->name.span;
  }
}

}  // namespace qpcheck::lang::typecheck_internal
