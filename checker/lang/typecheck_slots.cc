// Slots (typecheck_internal.h): the state vector's scalar slots, their units and initial values, and the bounds
// that keep a hostile spec's state small.
#include "checker/lang/typecheck_internal.h"

#include <functional>

#include <fmt/format.h>

namespace qpcheck::lang::typecheck_internal {

void Checker::check_domain(const Type* t, Span span, const char* what) {
  if (t->count() > kMaxDomain) {
    error(span, fmt::format("{} over {} values; at most {} (it is evaluated in every state)", what, t->count(),
                            kMaxDomain));
  }
}

int64_t Checker::allocate(const std::string& name, const Type* t, std::optional<int64_t> init, Span init_span) {
  int64_t first = static_cast<int64_t>(m_->slots.size());
  // With a symmetric type (typecheck_symmetry.cc): `key` names the slot's class (the path with the symmetric
  // coordinates left out), `coords` its coordinates.
  std::vector<int64_t> coords;
  std::string key = sym_instance_ ? sym_instance_->first + "." + name.substr(name.find('.') + 1) : name;
  if (sym_instance_) coords.push_back(sym_instance_->second);
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
        if (symmetric_ != nullptr && !coords.empty()) sym_slot(key, coords, static_cast<int>(m_->slots.size()));
        m_->slots.push_back(model::SlotInfo{ty->lo, ty->hi, ty});
        m_->initial.push_back(v);
        return;
      }
      case TypeKind::kRecord:
        for (size_t i = 0; i < ty->field_types.size(); ++i) {
          const size_t k = key.size();
          key += "." + ty->field_names[i];
          leaf(n + "." + ty->field_names[i], ty->field_types[i], in_queue);
          key.resize(k);
        }
        return;
      case TypeKind::kArray: {
        // An index of the symmetric type, or of an enum family indexed by it, is a coordinate: F[i] is family F at
        // coordinate i.
        const Type* ix = ty->index;
        const bool sym = symmetric_ != nullptr && (ix == symmetric_ || ix->family_index == symmetric_);
        const int64_t fams = ix->family_index == symmetric_ && sym ? static_cast<int64_t>(ix->families.size()) : 1;
        for (int64_t i = ix->lo; i <= ix->hi; ++i) {
          const size_t k = key.size();
          if (sym) {
            coords.push_back((i - ix->lo) / fams);
            key += fams > 1 ? fmt::format("[{}[*]]", ix->families[static_cast<size_t>((i - ix->lo) % fams)]) : "[*]";
          } else {
            key += fmt::format("[{}]", i);
          }
          leaf(fmt::format("{}[{}]", n, model::render_scalar(ix, i)), ty->elem, in_queue);
          key.resize(k);
          if (sym) coords.pop_back();
        }
        return;
      }
      case TypeKind::kQueue: {
        if (!in_queue) m_->units.push_back(model::Unit{n, ty, static_cast<int>(m_->slots.size())});
        const size_t k = key.size();
        key += "#len";
        if (symmetric_ != nullptr && !coords.empty()) sym_slot(key, coords, static_cast<int>(m_->slots.size()));
        key.resize(k);
        const int len_slot = static_cast<int>(m_->slots.size());
        m_->slots.push_back(model::SlotInfo{0, ty->capacity, int_});
        m_->initial.push_back(0);
        for (int i = 0; i < ty->capacity; ++i) {
          key += fmt::format("#{}", i);
          const size_t from = m_->slots.size();
          leaf(n, ty->elem, true);
          // Element i's slots belong to this queue, unless a queue inside the element claimed them already.
          for (size_t s = from; s < m_->slots.size(); ++s) {
            if (m_->slots[s].queue_len < 0) {
              m_->slots[s].queue_len = len_slot;
              m_->slots[s].queue_pos = i;
            }
          }
          key.resize(k);
        }
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

}  // namespace qpcheck::lang::typecheck_internal
