// Property choices (typecheck_internal.h): `disable` (collected before any declaration, checked at the end) and
// `check`.
#include "checker/lang/typecheck_internal.h"

#include <fmt/format.h>

namespace qpcheck::lang::typecheck_internal {

void Checker::collect_property_choices(const Program& program) {
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

void Checker::note_disabled(const std::string& property, const char* kind) {
  auto it = disabled_.find(property);
  if (it != disabled_.end() && it->second.kind.empty()) it->second.kind = kind;
}

std::string Checker::known_properties() const {
  std::string out;
  for (const auto& [n, span] : invariant_spans_) out += (out.empty() ? "" : ", ") + n;
  for (const auto& [n, span] : liveness_spans_) out += (out.empty() ? "" : ", ") + n;
  for (const std::string& n : fail_names_) {
    if (!invariant_spans_.count(n)) out += (out.empty() ? "" : ", ") + n;
  }
  return out + (out.empty() ? "" : ", ") + "deadlock, runtime_error";
}

void Checker::check_property_name(const Ident& n, const char* what) {
  for (const model::Retired& r : m_->retired) {
    if (r.name == n.name) error(n.span, fmt::format("'{}' is retired (at {}): {}", n.name, where(r.span), r.message));
  }
  error(n.span, fmt::format("{} names unknown property '{}' (properties: {})", what, n.name, known_properties()));
}

void Checker::reserve_property_name(const Ident& n, const char* what) {
  if (n.name == "deadlock" || n.name == "runtime_error") {
    error(n.span, fmt::format("'{}' is a built-in property (deadlock, runtime_error): {} needs a name of its own",
                              n.name, what));
  }
}

void Checker::finish_property_choices(const Program& program) {
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
                         : liveness_spans_.count(n.name) ? "liveness"
                         : fail_names_.count(n.name)    ? "fail"
                         : n.name == "deadlock"         ? "deadlock"
                         : n.name == "runtime_error"    ? "runtime_error"
                                                        : "";
      if (kind.empty()) check_property_name(n, "check");
      m_->checks.push_back(model::PropertyChoice{n.name, kind, d->span, ""});
    }
  }
}

}  // namespace qpcheck::lang::typecheck_internal
