// Symmetry (typecheck_internal.h): `symmetric TYPE;` and the slot classes of Model::symmetry.
//
// What makes the declaration sound is checked where each expression is typed: a symmetric type is nominal
// (compatible(): no integer, constant or other range mixes with it), refuses arithmetic and order
// (expect_unordered), and an array or enum family indexed by it can only be indexed by a value of it
// (expect_compatible). A value of the type therefore only ever comes from a variable, a parameter or quantifier over
// the type, an instance of a process array indexed by it, or index() of an enum family indexed by it, and is only
// compared for equality or used as an index: renaming all of them by one permutation renames the whole run (Ip and
// Dill, "Better verification through symmetry", FMSD 1996: the scalarset conditions).
#include "checker/lang/typecheck_internal.h"

#include <fmt/format.h>

namespace qpcheck::lang::typecheck_internal {

void Checker::collect_symmetry(const Program& program) {
  for (const Decl* d : program.decls) {
    if (d->kind != DeclKind::kSymmetric) continue;
    const Ident& n = d->names[0];
    const std::vector<int>& files = names_.type_files(n.name);
    const int file = graph_->resolve(n, d->span.file, files, [&](int f) {
      for (const Decl* t : program.decls) {
        if (t->kind == DeclKind::kType && t->span.file == f && t->name.name == n.name) return where(t->span);
      }
      return std::string("?");
    });
    if (file < 0) error(n.span, fmt::format("symmetric: unknown type '{}'", n.module.empty() ? n.name : n.module + "::" + n.name));
    const Decl* target = nullptr;
    for (const Decl* t : program.decls) {
      if (t->kind == DeclKind::kType && !t->is_override && t->span.file == file && t->name.name == n.name) target = t;
    }
    if (target == nullptr) error(n.span, fmt::format("symmetric: unknown type '{}'", n.name));
    if (symmetric_decl_ != nullptr && target != symmetric_type_decl_) {
      error(d->span, fmt::format("a second symmetric type: one type per spec can be symmetric (the first is at {})",
                                 where(symmetric_decl_->span)));
    }
    if (symmetric_decl_ == nullptr) symmetric_decl_ = d;  // a repeat of the same type changes nothing
    symmetric_type_decl_ = target;
  }
}

void Checker::mark_symmetric(const Decl* type_decl, Type* t) {
  if (t->kind != TypeKind::kInt) {
    error(symmetric_decl_->names[0].span,
          fmt::format("symmetric: '{}' is {}, not a range type (declared at {}); an enum family indexed by a "
                      "symmetric range is renamed with it", type_decl->name.name, model::type_name(t),
                      where(type_decl->span)));
  }
  if (t->count() > kMaxSymmetricValues) {
    error(symmetric_decl_->names[0].span,
          fmt::format("symmetric: '{}' has {} values; at most {} (each state's canonical form sorts them)",
                      type_decl->name.name, t->count(), kMaxSymmetricValues));
  }
  t->symmetric = true;
  t->name = type_decl->name.name;
  symmetric_ = t;
}

std::string Checker::symmetric_where() const {
  return symmetric_decl_ == nullptr ? std::string("declared symmetric")
                                    : fmt::format("declared symmetric at {}", where(symmetric_decl_->span));
}

std::optional<std::pair<std::string, int64_t>> Checker::sym_instance(const ProcessInfo& p, int64_t v) const {
  const Type* ix = p.index_type;
  if (symmetric_ == nullptr || ix == nullptr) return std::nullopt;
  if (ix == symmetric_) return std::make_pair(p.name + "[*]", v - ix->lo);
  if (ix->family_index != symmetric_) return std::nullopt;
  const auto f = static_cast<int64_t>(ix->families.size());
  return std::make_pair(fmt::format("{}[{}[*]]", p.name, ix->families[static_cast<size_t>((v - ix->lo) % f)]),
                        (v - ix->lo) / f);
}

void Checker::sym_slot(const std::string& key, const std::vector<int64_t>& coords, int slot) {
  auto [it, fresh] = sym_class_ids_.emplace(key, static_cast<int>(sym_classes_.size()));
  if (fresh) {
    sym_classes_.push_back(SymClassBuild{key, static_cast<int>(coords.size()), {}});
  }
  SymClassBuild& c = sym_classes_[static_cast<size_t>(it->second)];
  if (c.dims != static_cast<int>(coords.size())) {
    error(current_decl_span_, fmt::format("internal: slot class {} with {} and {} coordinates", key, c.dims,
                                          coords.size()));
  }
  c.slot_at[coords] = slot;
}

void Checker::finish_symmetry() {
  if (symmetric_decl_ == nullptr) return;
  if (symmetric_ == nullptr) error(symmetric_decl_->span, "symmetric: the type it names was never declared");
  model::Symmetry s;
  s.type = symmetric_;
  s.name = symmetric_->name;
  s.span = symmetric_decl_->span;
  s.count = symmetric_->count();
  const int64_t n = s.count;
  for (const SymClassBuild& b : sym_classes_) {
    if (b.dims > 2) {
      error(symmetric_decl_->span, fmt::format("symmetric {}: '{}' is indexed by {} {} times; at most 2 are supported",
                                               s.name, b.name, s.name, b.dims));
    }
    model::Symmetry::Class c;
    c.name = b.name;
    c.dims = b.dims;
    const int64_t size = b.dims == 1 ? n : n * n;
    if (static_cast<int64_t>(b.slot_at.size()) != size) {
      error(symmetric_decl_->span, fmt::format("internal: slot class {} has {} of {} slots", b.name,
                                               b.slot_at.size(), size));
    }
    for (const auto& [coords, slot] : b.slot_at) c.slots.push_back(slot);  // map order: i, or (i, j) row-major
    s.classes.push_back(std::move(c));
  }
  s.rename.assign(m_->slots.size(), 0);
  s.families.assign(m_->slots.size(), 1);
  for (size_t i = 0; i < m_->slots.size(); ++i) {
    const Type* t = m_->slots[i].type;
    if (t == symmetric_) {
      s.rename[i] = 1;
    } else if (t != nullptr && t->kind == TypeKind::kEnum && t->family_index == symmetric_) {
      s.rename[i] = 2;
      s.families[i] = static_cast<int64_t>(t->families.size());
    }
  }
  for (const ProcessInfo& p : process_infos_) {
    if (p.index_type == symmetric_) s.processes.emplace_back(p.name, 1);
    if (p.index_type != nullptr && p.index_type->family_index == symmetric_) {
      s.processes.emplace_back(p.name, static_cast<int64_t>(p.index_type->families.size()));
    }
  }
  m_->symmetry = std::move(s);
}

}  // namespace qpcheck::lang::typecheck_internal
