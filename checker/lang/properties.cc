#include "checker/lang/properties.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace qpcheck::lang {

std::vector<PropertyInfo> properties_of(const model::Model& m, bool check_deadlock) {
  std::vector<PropertyInfo> out;
  std::set<std::string> seen;
  for (const model::Invariant& inv : m.invariants) {
    if (seen.insert(inv.name).second) out.push_back(PropertyInfo{inv.name, "invariant", inv.span});
  }
  for (const model::Stmt& s : m.stmts) {
    if (s.op != model::SOp::kFail && s.op != model::SOp::kAssert) continue;
    if (seen.insert(s.property).second) out.push_back(PropertyInfo{s.property, "fail", s.span});
  }
  if (check_deadlock && !m.deadlock_disabled() && seen.insert("deadlock").second) {
    out.push_back(PropertyInfo{"deadlock", "deadlock", {}});
  }
  if (seen.insert("runtime_error").second) out.push_back(PropertyInfo{"runtime_error", "runtime_error", {}});
  for (const model::Liveness& l : m.liveness) {
    if (seen.insert(l.name).second) out.push_back(PropertyInfo{l.name, "liveness", l.span});
  }
  return out;
}

bool PropertyPlan::checks(const std::string& name) const {
  return std::any_of(checked.begin(), checked.end(), [&](const PropertyInfo& p) { return p.name == name; });
}

std::vector<std::string> PropertyPlan::checked_names() const {
  std::vector<std::string> out;
  for (const PropertyInfo& p : checked) out.push_back(p.name);
  return out;
}

std::vector<std::string> PropertyPlan::safety_names() const {
  std::vector<std::string> out;
  for (const PropertyInfo& p : checked) {
    if (p.kind != "liveness") out.push_back(p.name);
  }
  return out;
}

std::vector<std::string> PropertyPlan::liveness_names() const {
  std::vector<std::string> out;
  for (const PropertyInfo& p : checked) {
    if (p.kind == "liveness") out.push_back(p.name);
  }
  return out;
}

PropertyPlan plan_properties(const model::Model& m, const std::vector<std::string>& selected, bool check_deadlock) {
  PropertyPlan plan;
  for (const model::PropertyChoice& d : m.disabled) {
    plan.not_checked.push_back(NotChecked{d.name, d.kind, "disable", d.by, d.reason});
  }
  std::vector<PropertyInfo> all = properties_of(m, true);
  std::string known;
  for (const PropertyInfo& p : all) known += (known.empty() ? "" : ", ") + p.name;
  for (const std::string& name : selected) {
    if (std::any_of(all.begin(), all.end(), [&](const PropertyInfo& p) { return p.name == name; })) {
      if (name == "deadlock" && !check_deadlock) {
        throw UsageError("--property deadlock and --no-deadlock contradict each other");
      }
      continue;
    }
    for (const model::Retired& r : m.retired) {
      if (r.name == name) throw UsageError(fmt::format("--property {}: '{}' is retired: {}", name, name, r.message));
    }
    for (const model::PropertyChoice& d : m.disabled) {
      if (d.name == name) {
        throw UsageError(fmt::format("--property {}: the spec disables it ({}); remove that declaration to check it",
                                     name, m.sources ? m.sources->location(d.by) : "disable"));
      }
    }
    throw UsageError(fmt::format("--property {}: unknown property (the spec's properties: {})", name, known));
  }
  auto chosen = [&](const std::string& name, std::string* by, Span* at) {
    if (!selected.empty()) {
      *by = "--property";
      return std::find(selected.begin(), selected.end(), name) != selected.end();
    }
    if (!m.checks.empty()) {
      *by = "check";
      *at = m.checks.front().by;
      return std::any_of(m.checks.begin(), m.checks.end(), [&](const model::PropertyChoice& c) { return c.name == name; });
    }
    return true;
  };
  for (const PropertyInfo& p : all) {
    std::string by;
    Span at;
    if (p.name == "deadlock" && !check_deadlock) {
      plan.not_checked.push_back(NotChecked{p.name, p.kind, "--no-deadlock", {}, ""});
      plan.everything = false;
      continue;
    }
    if (chosen(p.name, &by, &at)) {
      plan.checked.push_back(p);
    } else {
      plan.not_checked.push_back(NotChecked{p.name, p.kind, by, at, ""});
      if (p.kind != "liveness") plan.everything = false;  // a liveness property is not part of the safety model
    }
  }
  plan.deadlock = plan.checks("deadlock");
  return plan;
}

}  // namespace qpcheck::lang
