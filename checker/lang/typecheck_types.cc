// Types (typecheck_internal.h): type expressions, enums and families of indexed constants, compatibility,
// the bound notes that name the params a range or capacity comes from.
#include "checker/lang/typecheck_internal.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace qpcheck::lang::typecheck_internal {

bool Checker::same_type(const Type* a, const Type* b) {
  if (a == b) return true;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case TypeKind::kBool: return true;
    case TypeKind::kInt: return !a->symmetric && !b->symmetric && a->lo == b->lo && a->hi == b->hi;
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

bool Checker::compatible(const Type* to, const Type* from) {
  if (to->scalar() && from->scalar()) {
    if (to->symmetric || from->symmetric) return to == from;  // nominal: no integer mixes with it
    if (is_int(to)) return is_int(from);
    if (is_bool(to)) return is_bool(from);
    return to == from;
  }
  return same_type(to, from);
}

// Does a value of `t` hold a value of a symmetric type (t itself, an element, a field, an index)?
static bool mentions_symmetric(const Type* t) {
  if (t == nullptr) return false;
  if (t->symmetric) return true;
  for (const Type* f : t->field_types) {
    if (mentions_symmetric(f)) return true;
  }
  return mentions_symmetric(t->index) || mentions_symmetric(t->elem);
}

void Checker::expect_compatible(const Type* to, const model::Expr* e, const std::string& what) {
  if (!compatible(to, e->type) && !to->scalar() && (mentions_symmetric(to) || mentions_symmetric(e->type))) {
    error(e->span, fmt::format("type mismatch: {} expects {}, but the expression has type {} (a symmetric type, {}, "
                               "matches only itself, inside arrays, records and queues too)",
                               what, model::type_name(to), model::type_name(e->type), symmetric_where()));
  }
  if (!compatible(to, e->type) && to->scalar() && e->type->scalar() && (to->symmetric || e->type->symmetric)) {
    const Type* sym = to->symmetric ? to : e->type;
    error(e->span, fmt::format("{} expects {}, but the expression has type {}: {} is symmetric ({}), so only a "
                               "value of type {} fits here (a constant or an integer would tell its values apart, "
                               "and a value of {} cannot become an integer)",
                               what, model::type_name(to), model::type_name(e->type), sym->name,
                               symmetric_where(), sym->name, sym->name));
  }
  if (!compatible(to, e->type)) {
    error(e->span, fmt::format("type mismatch: {} expects {}, but the expression has type {}", what,
                               model::type_name(to), model::type_name(e->type)));
  }
  if (e->op == Op::kConst && to->scalar() && (e->value < to->lo || e->value > to->hi)) {
    error(e->span, fmt::format("value {} is out of range {} for {}", model::render_scalar(e->type, e->value),
                               model::type_name(to), what));
  }
}

void Checker::expect_bool(const model::Expr* e, const char* what) {
  if (!is_bool(e->type)) {
    error(e->span, fmt::format("{} must be a bool, but has type {}", what, model::type_name(e->type)));
  }
}

void Checker::expect_int(const model::Expr* e, const char* what) {
  if (!is_int(e->type)) {
    error(e->span, fmt::format("{} must be an integer, but has type {}", what, model::type_name(e->type)));
  }
}

int64_t Checker::const_int(const Expr* ast, const char* what) {
  const model::Expr* e = expr(ast);
  expect_int(e, what);
  if (e->op != Op::kConst) error(ast->span, fmt::format("{} must be a constant expression", what));
  return e->value;
}

bool Checker::is_location(const model::Expr* e) {
  return e->op == Op::kSlot || e->op == Op::kIndex || e->op == Op::kField || e->op == Op::kHead;
}

std::vector<std::string> Checker::params_in(const Expr* x) {
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

std::string Checker::bound_note(const std::vector<std::string>& params, bool raise) const {
  return params_.bound_note(params, raise);
}

const Type* Checker::type(const TypeExpr* t, const std::string& name) {
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

const Type* Checker::enum_type(const TypeExpr* t, const std::string& name) {
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

}  // namespace qpcheck::lang::typecheck_internal
