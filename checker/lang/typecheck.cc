#include "checker/lang/typecheck.h"

#include "checker/lang/control_flow.h"
#include "checker/lang/nesting.h"
#include "checker/model/eval.h"
#include "checker/lang/replay_clauses.h"
#include "checker/lang/replay_ops.h"
#include "checker/lang/resolve.h"
#include "checker/lang/typecheck_names.h"
#include "checker/lang/typecheck_params.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

namespace qpcheck::lang {

namespace {

using model::Op;
using model::SOp;
using model::Type;
using model::TypeKind;

struct ProcessInfo {
  std::string name;
  const Type* index_type = nullptr;  // nullptr: a single process
  int first_pc_slot = 0;
  int64_t count = 1;
  std::map<std::string, int> label_pc;  // label -> pc value (same for every instance)
};

class Checker : private StepChecker {
 public:
  Checker(const SourceManager& sources, const ParamOverrides& overrides, const ReplayVocabulary& vocabulary)
      : sources_(sources), param_overrides_(overrides), vocabulary_(vocabulary), m_(std::make_unique<model::Model>()) {
    m_->sources = &sources;
    bool_ = new_type(TypeKind::kBool, 0, 1);
    Type* i = new_type(TypeKind::kInt, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
    i->name = "int";  // the type of literals and arithmetic; ranges are checked when a value is stored
    int_ = i;
  }

  Compiled run(const Program& program) {
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
    for (const Decl* d : program.decls) declare(d);
    params_.check_retired_and_unknown_sets([this](int file, const std::string& name) {
      const Symbol* sym = names_.symbol_in(file, name);
      return sym && sym->kind == Symbol::Kind::kRetired
                 ? std::optional<ParamSettings::Retirement>({sym->span, sym->message})
                 : std::nullopt;
    });
    if (m_->processes.empty() && m_->rules.empty()) {
      Span s{program.main_file, 0, 0};
      throw SpecError(s, "the spec declares no process and no rule: there is nothing to explore");
    }
    finish_property_choices(program);
    Compiled c;
    c.param_targets = params_.targets(m_->params);
    check_nesting(*m_);  // every later phase recurses through calls: bounded here once
    c.model = std::move(m_);
    c.warnings = std::move(warnings_);
    return c;
  }

 private:
  // ---------------------------------------------------------------- helpers
  [[noreturn]] void error(Span span, std::string message) { throw SpecError(span, std::move(message)); }
  void warn(Span span, std::string message) override {
    for (const Diagnostic& w : warnings_) {
      if (w.span.file == span.file && w.span.begin == span.begin && w.message == message) return;
    }
    warnings_.push_back(Diagnostic{Severity::kWarning, span, std::move(message)});
  }
  Type* new_type(TypeKind k, int64_t lo, int64_t hi) {
    Type& t = m_->types.emplace_back();
    t.kind = k;
    t.lo = lo;
    t.hi = hi;
    return &t;
  }
  model::Expr* new_expr(Op op, const Type* type, Span span) {
    model::Expr& e = m_->exprs.emplace_back();
    e.op = op;
    e.type = type;
    e.span = span;
    return &e;
  }
  model::Expr* constant(int64_t v, const Type* type, Span span) {
    model::Expr* e = new_expr(Op::kConst, type, span);
    e->value = v;
    return e;
  }
  model::Stmt* new_stmt(SOp op, Span span) {
    model::Stmt& s = m_->stmts.emplace_back();
    s.op = op;
    s.span = span;
    return &s;
  }
  int new_frame() { return m_->frame_size++; }
  std::string where(Span s) const { return sources_.location(s); }

  static bool is_int(const Type* t) { return t->kind == TypeKind::kInt; }
  static bool is_bool(const Type* t) { return t->kind == TypeKind::kBool; }

  static bool same_type(const Type* a, const Type* b) {
    if (a == b) return true;
    if (a->kind != b->kind) return false;
    switch (a->kind) {
      case TypeKind::kBool: return true;
      case TypeKind::kInt: return a->lo == b->lo && a->hi == b->hi;
      case TypeKind::kEnum: return false;  // nominal
      case TypeKind::kRecord:
        if (a->field_names != b->field_names) return false;
        for (size_t i = 0; i < a->field_types.size(); ++i) {
          if (!same_type(a->field_types[i], b->field_types[i])) return false;
        }
        return true;
      case TypeKind::kArray: return same_type(a->index, b->index) && same_type(a->elem, b->elem);
      case TypeKind::kQueue: return a->capacity == b->capacity && same_type(a->elem, b->elem);
    }
    return false;
  }
  // Can a value of type `from` be stored in / passed as `to`? Integers of any range mix (checked at run time).
  static bool compatible(const Type* to, const Type* from) {
    if (to->scalar() && from->scalar()) {
      if (is_int(to)) return is_int(from);
      if (is_bool(to)) return is_bool(from);
      return to == from;
    }
    return same_type(to, from);
  }
  void expect_compatible(const Type* to, const model::Expr* e, const std::string& what) {
    if (!compatible(to, e->type)) {
      error(e->span, fmt::format("type mismatch: {} expects {}, but the expression has type {}", what,
                                 model::type_name(to), model::type_name(e->type)));
    }
    if (e->op == Op::kConst && to->scalar() && (e->value < to->lo || e->value > to->hi)) {
      error(e->span, fmt::format("value {} is out of range {} for {}", model::render_scalar(e->type, e->value),
                                 model::type_name(to), what));
    }
  }
  void expect_bool(const model::Expr* e, const char* what) {
    if (!is_bool(e->type)) {
      error(e->span, fmt::format("{} must be a bool, but has type {}", what, model::type_name(e->type)));
    }
  }
  void expect_int(const model::Expr* e, const char* what) {
    if (!is_int(e->type)) {
      error(e->span, fmt::format("{} must be an integer, but has type {}", what, model::type_name(e->type)));
    }
  }
  int64_t const_int(const Expr* ast, const char* what) {
    const model::Expr* e = expr(ast);
    expect_int(e, what);
    if (e->op != Op::kConst) error(ast->span, fmt::format("{} must be a constant expression", what));
    return e->value;
  }
  static bool is_location(const model::Expr* e) {
    return e->op == Op::kSlot || e->op == Op::kIndex || e->op == Op::kField || e->op == Op::kHead;
  }


  // ---------------------------------------------------------------- property choices (`disable`, `check`)
  void collect_property_choices(const Program& program) {
    for (const Decl* d : program.decls) {
      if (d->kind != DeclKind::kDisable) continue;
      for (const Ident& n : d->names) {
        if (!n.module.empty()) {
          error(n.span, fmt::format("property names are global: write '{}', not '{}'", n.name, qualified(n)));
        }
        auto [it, fresh] = disabled_.emplace(n.name, Disabled{d, n.span, ""});
        if (!fresh) {
          error(n.span, fmt::format("property '{}' is already disabled at {}", n.name, where(it->second.span)));
        }
        disabled_order_.push_back(n.name);
      }
    }
  }
  void note_disabled(const std::string& property, const char* kind) {
    auto it = disabled_.find(property);
    if (it != disabled_.end() && it->second.kind.empty()) it->second.kind = kind;
  }
  // The properties the program can violate, for "unknown property" messages.
  std::string known_properties() const {
    std::string out;
    for (const auto& [n, span] : invariant_spans_) out += (out.empty() ? "" : ", ") + n;
    for (const std::string& n : fail_names_) {
      if (!invariant_spans_.count(n)) out += (out.empty() ? "" : ", ") + n;
    }
    return out + (out.empty() ? "" : ", ") + "deadlock, runtime_error";
  }
  void check_property_name(const Ident& n, const char* what) {
    for (const model::Retired& r : m_->retired) {
      if (r.name == n.name) error(n.span, fmt::format("'{}' is retired (at {}): {}", n.name, where(r.span), r.message));
    }
    error(n.span, fmt::format("{} names unknown property '{}' (properties: {})", what, n.name, known_properties()));
  }
  void finish_property_choices(const Program& program) {
    for (const std::string& name : disabled_order_) {
      Disabled& d = disabled_.at(name);
      if (name == "deadlock") d.kind = "deadlock";
      if (name == "runtime_error") {
        error(d.span, "runtime_error cannot be disabled: a step that hits a runtime error has no next state (fix "
                      "the spec, or raise the bound the message names)");
      }
      if (d.kind.empty()) check_property_name(Ident{name, d.span, {}}, "disable");
      m_->disabled.push_back(model::PropertyChoice{name, d.kind, d.decl->span, d.decl->message});
    }
    for (const Decl* d : program.decls) {
      if (d->kind != DeclKind::kCheck) continue;
      for (const Ident& n : d->names) {
        if (!n.module.empty()) {
          error(n.span, fmt::format("property names are global: write '{}', not '{}'", n.name, qualified(n)));
        }
        if (auto it = disabled_.find(n.name); it != disabled_.end()) {
          error(n.span, fmt::format("property '{}' is disabled at {}: it cannot be checked too", n.name,
                                    where(it->second.span)));
        }
        std::string kind = invariant_spans_.count(n.name) ? "invariant"
                           : fail_names_.count(n.name)    ? "fail"
                           : n.name == "deadlock"         ? "deadlock"
                           : n.name == "runtime_error"    ? "runtime_error"
                                                          : "";
        if (kind.empty()) check_property_name(n, "check");
        m_->checks.push_back(model::PropertyChoice{n.name, kind, d->span, ""});
      }
    }
  }

  // ---------------------------------------------------------------- overrides
  void collect_type_overrides(const Program& program) {
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
  // The type expression a `type` declaration of the current file is checked with: its own, or the override's. An
  // enum may be replaced by an enum that keeps its constants, in order, and adds others after them, so that
  // every use in the imported file stays valid.
  const TypeExpr* replacement_type(const Decl* d) {
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
  void finish_type_override(const Decl* d) {
    if (!applied_type_overrides_.count(d)) {
      error(d->name.span, fmt::format("override type '{}' was not applied: its type is declared after this file",
                                      d->name.name));
    }
  }
  // The parameters of an override must be those of the original: same number, same types (names may differ).
  void bind_override_params(const Decl* d, const std::vector<const Type*>& types, const std::vector<int>& frames,
                            const char* what, Span original) {
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
      names_.bind_local(d->params[i].name, Local{Local::Kind::kFrame, types[i], frames[i], {}});
    }
  }
  // `override proc`: the imported procedure keeps its identity (every call of it, in any file, runs the new body)
  // and gets this body, and this verbs label and replay clause when given.
  void override_proc(const Decl* d) {
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
    bind_override_params(d, p->param_types, p->param_frames, "proc", p->span);
    target->compiling = true;
    std::vector<model::ReplayOp> replay;
    for (const ReplayCall& c : d->replay) replay.push_back(replay_op(c));
    std::vector<const model::Stmt*> body = atomic_block(d->body, "a procedure");
    target->compiling = false;
    m_->overrides.push_back(model::Override{"proc", p->name, p->span, d->span});
    replaced_.emplace(p, d->span);
    p->body = std::move(body);
    if (!d->verbs.empty()) p->verbs = d->verbs;
    if (!d->replay.empty()) p->replay = std::move(replay);
    p->span = d->span;
  }
  // `override rule`: the imported rule keeps its name, parameters and action ids, with this guard and body (and
  // verbs label when given); traces and coverage point at the override.
  void override_rule(const Decl* d) {
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
    bind_override_params(d, r->param_types, r->param_frames, "rule", r->span);
    const model::Expr* guard = nullptr;
    if (d->guard != nullptr) {
      guard = expr(d->guard);
      expect_bool(guard, "a rule's guard");
    }
    std::vector<const model::Stmt*> body = atomic_block(d->body, "a rule");
    m_->overrides.push_back(model::Override{"rule", r->name, r->span, d->span});
    replaced_rules_.emplace(r->name, d->span);
    r->guard = guard;
    r->body = std::move(body);
    if (!d->verbs.empty()) r->verbs = d->verbs;
    r->span = d->span;
  }
  void override_invariant(const Decl* d) {
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

  // The params whose values `x` (a constant expression, as written) is computed from: for the bound_note of a type.
  std::vector<std::string> params_in(const Expr* x) {
    std::vector<std::string> out;
    std::function<void(const Expr*)> walk = [&](const Expr* e) {
      if (e == nullptr) return;
      if (e->kind == ExprKind::kName && names_.find_local(e->name) == nullptr) {
        const Symbol* sym = nullptr;
        try {
          sym = names_.lookup(e->name);
        } catch (const SpecError&) {
          sym = nullptr;  // reported where the expression is checked
        }
        if (sym != nullptr) {
          for (const std::string& p : sym->from_params) {
            if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
          }
        }
      }
      walk(e->a);
      walk(e->b);
      walk(e->c);
      for (const Expr* a : e->args) walk(a);
    };
    walk(x);
    return out;
  }
  std::string bound_note(const std::vector<std::string>& params, bool raise) const {
    return params_.bound_note(params, raise);
  }

  // ---------------------------------------------------------------- types
  const Type* type(const TypeExpr* t, const std::string& name = "") {
    switch (t->kind) {
      case lang::TypeKind::kBool: return bool_;
      case lang::TypeKind::kRange: {
        int64_t lo = const_int(t->lo, "a range bound");
        int64_t hi = const_int(t->hi, "a range bound");
        if (hi < lo) error(t->span, fmt::format("empty range {}..{}: the upper bound is below the lower", lo, hi));
        if (hi - lo >= (int64_t{1} << 31) || lo < std::numeric_limits<int32_t>::min() ||
            hi > std::numeric_limits<int32_t>::max()) {
          error(t->span, fmt::format("range {}..{} is too large (at most 2^31 values within 32-bit integers)", lo, hi));
        }
        Type* r = new_type(TypeKind::kInt, lo, hi);
        std::vector<std::string> from_lo = params_in(t->lo), from_hi = params_in(t->hi);
        std::vector<std::string> from = from_hi;
        for (const std::string& p : from_lo) {
          if (std::find(from.begin(), from.end(), p) == from.end()) from.push_back(p);
        }
        r->bound_note = bound_note(from, from_lo.empty());
        return r;
      }
      case lang::TypeKind::kEnum: return enum_type(t, name);
      case lang::TypeKind::kRecord: {
        Type* r = new_type(TypeKind::kRecord, 0, 0);
        r->name = name;
        r->slots = 0;
        std::map<std::string, Span> seen;
        for (size_t i = 0; i < t->names.size(); ++i) {
          auto [it, fresh] = seen.emplace(t->names[i].name, t->names[i].span);
          if (!fresh) {
            error(t->names[i].span, fmt::format("duplicate field '{}' (first declared at {})", t->names[i].name,
                                                where(it->second)));
          }
          const Type* ft = type(t->fields[i]);
          r->field_names.push_back(t->names[i].name);
          r->field_types.push_back(ft);
          r->field_offsets.push_back(r->slots);
          r->slots += ft->slots;
        }
        return r;
      }
      case lang::TypeKind::kArray: {
        const Type* index = type(t->index);
        if (!index->scalar()) error(t->index->span, "an array index type must be a range, an enum or bool");
        const Type* elem = type(t->elem);
        Type* a = new_type(TypeKind::kArray, 0, 0);
        a->index = index;
        a->elem = elem;
        int64_t slots = index->count() * elem->slots;
        if (slots > static_cast<int64_t>(kMaxSlots)) {
          error(t->span, fmt::format("array has {} scalar slots; a state holds at most {}", slots, kMaxSlots));
        }
        a->slots = static_cast<int>(slots);
        return a;
      }
      case lang::TypeKind::kQueue: {
        int64_t cap = const_int(t->capacity, "a queue capacity");
        if (cap < 1 || cap > 1024) error(t->capacity->span, fmt::format("queue capacity {} must be 1..1024", cap));
        const Type* elem = type(t->elem);
        Type* q = new_type(TypeKind::kQueue, 0, 0);
        q->capacity = static_cast<int>(cap);
        q->bound_note = bound_note(params_in(t->capacity), true);
        q->elem = elem;
        q->slots = 1 + static_cast<int>(cap) * elem->slots;
        return q;
      }
      case lang::TypeKind::kNamed: {
        const Ident& id = t->names[0];
        const Symbol* sym = names_.lookup(id);
        if (sym == nullptr) error(id.span, fmt::format("unknown type '{}'", id.name));
        if (sym->kind != Symbol::Kind::kType) {
          error(id.span, fmt::format("'{}' is not a type (declared at {})", id.name, where(sym->span)));
        }
        return sym->type;
      }
    }
    error(t->span, "internal: unknown type form");
  }

  // An enum of plain constants, or of families indexed by one common type (`enum { ACTIVE[Conn], PASSIVE[Conn] }`):
  // the constants are F[i] for every family F and index value i, connection-major (ordinal (i - lo) * families +
  // family), so that an index type of one value gives the ordinals a plain enum of the family names would have.
  const Type* enum_type(const TypeExpr* t, const std::string& name) {
    const Type* index = nullptr;
    for (size_t i = 0; i < t->names.size(); ++i) {
      const TypeExpr* ix = i < t->fields.size() ? t->fields[i] : nullptr;
      if ((ix != nullptr) != (i == 0 ? ix != nullptr : index != nullptr)) {
        error(t->names[i].span, fmt::format("enum constant '{}': the constants of an enum are either all plain or all "
                                            "indexed (NAME[TYPE]) by the same type", t->names[i].name));
      }
      if (ix == nullptr) continue;
      const Type* it = type(ix);
      if (!it->scalar() || it->kind == TypeKind::kEnum) {
        error(ix->span, fmt::format("the index of enum constant '{}' must be an integer range or bool, found {}",
                                    t->names[i].name, model::type_name(it)));
      }
      if (index == nullptr) {
        index = it;
      } else if (!same_type(index, it)) {
        error(ix->span, fmt::format("enum constant '{}' is indexed by {}, but '{}' by {}: the families of an enum share "
                                    "one index type", t->names[i].name, model::type_name(it), t->names[0].name,
                                    model::type_name(index)));
      }
    }
    int64_t families = static_cast<int64_t>(t->names.size());
    int64_t per = index ? index->count() : 1;
    if (families * per > kMaxDomain) {
      error(t->span, fmt::format("enum has {} constants; at most {}", families * per, kMaxDomain));
    }
    Type* e = new_type(TypeKind::kEnum, 0, families * per - 1);
    e->name = name;
    e->family_index = index;
    for (int64_t v = 0; v < families * per; ++v) {
      const std::string& f = t->names[v % families].name;
      e->constants.push_back(index == nullptr || per == 1
                                 ? f
                                 : fmt::format("{}[{}]", f, model::render_scalar(index, index->lo + v / families)));
    }
    for (int64_t i = 0; i < families; ++i) {
      Symbol s;
      s.kind = index ? Symbol::Kind::kFamily : Symbol::Kind::kConst;
      s.type = e;
      s.value = i;
      names_.define(t->names[i], s);
      if (index) e->families.push_back(t->names[i].name);
    }
    return e;
  }

  // F[i] for an indexed family: a constant when i is, else a call of the family's constructor F(i: index): enum,
  // whose argument is range-checked at run time like any function argument.
  const model::Expr* family_value(const Symbol& fam, const std::string& name, const Expr* index_ast, Span span) {
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

  // index(x): the index i of the indexed constant F[i] that x holds.
  const model::Expr* index_of(const Expr* x) {
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

  // A fail/assert message with `{NAME}` replaced by the value of the param or const NAME, rendered as in traces
  // ("raise max_recv_wr (now {max_recv_wr})" -> "... (now 4)"); `{{` and `}}` are literal braces, and a brace that
  // does not enclose a name is kept as written. Values are fixed when the spec is compiled, so only params and consts
  // can be shown: any other name is a diagnostic.
  std::string interpolate(const std::string& text, Span span) {
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

  // ---------------------------------------------------------------- slots
  static constexpr size_t kMaxSlots = 1 << 16;  // scalar slots per state: bounds memory on hostile specs
  // Values a quantifier, a for loop or a rule's parameters range over: each is enumerated in every state.
  static constexpr int64_t kMaxDomain = 1 << 16;
  void check_domain(const Type* t, Span span, const char* what) {
    if (t->count() > kMaxDomain) {
      error(span, fmt::format("{} over {} values; at most {} (it is evaluated in every state)", what, t->count(),
                              kMaxDomain));
    }
  }
  // Allocates slots for a value of type t named `name`; `init` is a scalar broadcast to every leaf, or nullopt.
  int64_t allocate(const std::string& name, const Type* t, std::optional<int64_t> init, Span init_span) {
    int64_t first = static_cast<int64_t>(m_->slots.size());
    std::function<void(const std::string&, const Type*, bool)> leaf = [&](const std::string& n, const Type* ty,
                                                                           bool in_queue) {
      switch (ty->kind) {
        case TypeKind::kBool:
        case TypeKind::kInt:
        case TypeKind::kEnum: {
          int64_t v = ty->lo;
          if (init && !in_queue) {
            if (*init < ty->lo || *init > ty->hi) {
              error(init_span, fmt::format("initial value {} is out of range {} for '{}'", *init,
                                           model::type_name(ty), n));
            }
            v = *init;
          }
          if (!in_queue) m_->units.push_back(model::Unit{n, ty, static_cast<int>(m_->slots.size())});
          m_->slots.push_back(model::SlotInfo{ty->lo, ty->hi, ty});
          m_->initial.push_back(v);
          return;
        }
        case TypeKind::kRecord:
          for (size_t i = 0; i < ty->field_types.size(); ++i) {
            leaf(n + "." + ty->field_names[i], ty->field_types[i], in_queue);
          }
          return;
        case TypeKind::kArray:
          for (int64_t i = ty->index->lo; i <= ty->index->hi; ++i) {
            leaf(fmt::format("{}[{}]", n, model::render_scalar(ty->index, i)), ty->elem, in_queue);
          }
          return;
        case TypeKind::kQueue: {
          if (!in_queue) m_->units.push_back(model::Unit{n, ty, static_cast<int>(m_->slots.size())});
          m_->slots.push_back(model::SlotInfo{0, ty->capacity, int_});
          m_->initial.push_back(0);
          for (int i = 0; i < ty->capacity; ++i) leaf(n, ty->elem, true);
          return;
        }
      }
    };
    if (m_->slots.size() + t->slots > kMaxSlots) {
      error(init_span.file >= 0 ? init_span : current_decl_span_,
            fmt::format("'{}' would make the state vector exceed {} scalar slots", name, kMaxSlots));
    }
    leaf(name, t, false);
    return first;
  }

  // ---------------------------------------------------------------- declarations
  void declare(const Decl* d) {
    current_decl_span_ = d->name.span.file >= 0 ? d->name.span : d->span;
    names_.set_file(d->span.file);
    switch (d->kind) {
      case DeclKind::kImport:
      case DeclKind::kSet:      // applied before any declaration (run)
      case DeclKind::kDisable:  // likewise
      case DeclKind::kCheck:    // checked at the end (run)
      case DeclKind::kMatrix:   // checked by resolve_matrix (matrix.h)
      case DeclKind::kExpect: return;
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
      case DeclKind::kInvariant: {
        if (d->is_override) return override_invariant(d);
        // Property names are global (reports, expect, disable, --property): one invariant per name in the program.
        auto known = invariant_spans_.find(d->name.name);
        if (known != invariant_spans_.end()) {
          bool same_file = known->second.file == d->name.span.file;
          error(d->name.span, fmt::format("duplicate invariant '{}' (first declared at {}){}", d->name.name,
                                          where(known->second),
                                          same_file ? "" : ": property names are global; to replace that one write "
                                                           "'override invariant', or 'disable' it and give yours "
                                                           "another name"));
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

  void declare_param(const Decl* d) {
    const Type* t = type(d->type);
    if (!t->scalar()) error(d->type->span, "a parameter must have a scalar type (bool, a range or an enum)");
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

  void declare_params_as_frames(const std::vector<Param>& params, std::vector<std::string>* names,
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

  void declare_fn(const Decl* d) {
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

  void declare_proc(const Decl* d) {
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

  // One `replay OP(args)` clause, checked against the vocabulary typecheck() was handed (replay_clauses.h); its
  // arguments are expressions in the procedure's scope.
  model::ReplayOp replay_op(const ReplayCall& c) {
    return check_replay_clause(c, vocabulary_, [this](const Expr* a) { return expr(a); });
  }

  void declare_rule(const Decl* d) {
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

  // ---------------------------------------------------------------- processes
  void declare_process(const Decl* d) {
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
      compile_instance(d, process_infos_.back(), first_instance + static_cast<int>(k), index_values[k]);
    }
  }

  void compile_instance(const Decl* d, ProcessInfo& info, int instance, int64_t index_value) {
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

    compile_process_body(body, d->span, sources_, *this, *m_, pi, info.label_pc);
  }

  // ---------------------------------------------------------------- atomic statements
  // ---------------------------------------------------------------- StepChecker (control_flow.h)
  const model::Expr* condition(const Expr* e, const char* what) override {
    const model::Expr* c = expr(e);
    expect_bool(c, what);
    return c;
  }

  std::vector<const model::Stmt*> atomic_block(const std::vector<Stmt*>& stmts, const char* where) override {
    std::vector<const model::Stmt*> out;
    Names::Scope g(names_);
    for (const Stmt* s : stmts) out.push_back(atomic_stmt(s, where));
    return out;
  }

  const model::Stmt* atomic_stmt(const Stmt* s, const char* where_) override {
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

  const model::Stmt* call_stmt(const Stmt* s) {
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
    if (names_.find_local(call->name) == nullptr) {
      const Symbol* sym = names_.lookup(call->name);
      if (sym != nullptr && sym->kind == Symbol::Kind::kProc) {
        if (sym->compiling) {
          error(call->name.span, fmt::format("procedure '{}' calls itself; procedures may not recurse", name));
        }
        const model::Proc* p = sym->proc;
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

  // ---------------------------------------------------------------- expressions
  const model::Expr* fold(model::Expr* e) {
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
    return constant(v, is_int(e->type) ? int_ : e->type, e->span);
  }

  const model::Expr* expr(const Expr* x) {
    switch (x->kind) {
      case ExprKind::kInt: return constant(x->value, int_, x->span);
      case ExprKind::kBool: return constant(x->value, bool_, x->span);
      case ExprKind::kName: return name_expr(x);
      case ExprKind::kUnary: {
        const model::Expr* a = expr(x->a);
        model::Expr* e = new_expr(x->unop == UnOp::kNot ? Op::kNot : Op::kNeg, nullptr, x->span);
        if (x->unop == UnOp::kNot) { expect_bool(a, "the operand of '!'"); e->type = bool_; }
        else { expect_int(a, "the operand of unary '-'"); e->type = int_; }
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
        model::Expr* e = new_expr(Op::kTernary, is_int(a->type) ? int_ : a->type, x->span);
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

  const model::Expr* name_expr(const Expr* x) {
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

  const model::Expr* binary_expr(const Expr* x) {
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
        expect_int(a, fmt::format("the left operand of '{}'", sym).c_str());
        expect_int(b, fmt::format("the right operand of '{}'", sym).c_str());
        result = int_;
        break;
      case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe:
        expect_int(a, fmt::format("the left operand of '{}'", sym).c_str());
        expect_int(b, fmt::format("the right operand of '{}'", sym).c_str());
        break;
      case Op::kAnd: case Op::kOr: case Op::kImplies:
        expect_bool(a, fmt::format("the left operand of '{}'", sym).c_str());
        expect_bool(b, fmt::format("the right operand of '{}'", sym).c_str());
        break;
      default:  // == !=
        if (!compatible(a->type, b->type)) {
          error(x->span, fmt::format("cannot compare {} with {}", model::type_name(a->type),
                                     model::type_name(b->type)));
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

  const model::Expr* call_expr(const Expr* x) {
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

  const model::Expr* at_expr(const Expr* x) {
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
    auto lt = info.label_pc.find(x->name.name);
    if (lt == info.label_pc.end()) {
      std::string known;
      for (const auto& [l, pc] : info.label_pc) known += (known.empty() ? "" : ", ") + l;
      error(x->name.span, fmt::format("process '{}' has no label '{}' (labels: {})", info.name, x->name.name,
                                      known.empty() ? "none" : known));
    }
    model::Expr* e = new_expr(Op::kAt, bool_, x->span);
    e->value = lt->second;
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

  struct Disabled {
    const Decl* decl;
    Span span;            // the name in the `disable` declaration
    std::string kind;     // filled when the property is met: "invariant", "fail", "deadlock"
  };
  const SourceManager& sources_;
  const ParamOverrides& param_overrides_;
  const ReplayVocabulary& vocabulary_;
  ParamSettings params_{sources_};
  Span current_decl_span_;
  std::unique_ptr<ImportGraph> graph_;
  Names names_{sources_, [this](Span span, std::string message) { warn(span, std::move(message)); }};
  std::map<std::string, Disabled> disabled_;
  std::vector<std::string> disabled_order_;
  std::set<std::string> fail_names_;                     // every fail/assert property met
  std::map<std::string, Span> invariant_spans_;          // every invariant declared (disabled ones too)
  std::map<std::pair<int, std::string>, const Decl*> type_overrides_;  // (file, type) -> its override
  std::set<const Decl*> applied_type_overrides_;
  std::map<const model::Proc*, Span> replaced_;          // procs replaced by an override, and where
  std::map<std::string, Span> replaced_rules_;           // rules ("invariant N" for invariants) replaced
  std::unique_ptr<model::Model> m_;
  std::vector<Diagnostic> warnings_;
  const Type* bool_;
  const Type* int_;
  std::vector<ProcessInfo> process_infos_;
  std::map<const model::Fn*, const Type*> fn_result_;
  std::map<std::pair<const Type*, int64_t>, const model::Fn*> family_fns_;  // F(i) of each indexed family
  std::map<const Type*, const model::Fn*> index_fns_;                        // index(x) per indexed enum
};

}  // namespace

Compiled typecheck(const Program& program, const SourceManager& sources, const ParamOverrides& params) {
  // The replay vocabulary: today the table of replay_ops.h (issue 17 moves it beside its implementation in
  // verbs_backend, which will hand it in here).
  const ReplayVocabulary vocabulary{kReplayOps, kCmEventNames, kWcStatusNames, kWcOpcodeNames, kWrOpcodeNames,
                                    kQpStateNames};
  return Checker(sources, params, vocabulary).run(program);
}

}  // namespace qpcheck::lang
