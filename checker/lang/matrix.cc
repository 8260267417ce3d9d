#include "checker/lang/matrix.h"

#include <map>
#include <set>

#include <fmt/format.h>

namespace qpcheck::lang {

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Every property of the compiled model, in report order.
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
  if (check_deadlock && seen.insert("deadlock").second) out.push_back(PropertyInfo{"deadlock", "deadlock", {}});
  if (seen.insert("runtime_error").second) out.push_back(PropertyInfo{"runtime_error", "runtime_error", {}});
  return out;
}

}  // namespace

Matrix resolve_matrix(const Program& program, const SourceManager& sources, const model::Model& base,
                      bool check_deadlock) {
  Matrix mx;
  mx.properties = properties_of(base, check_deadlock);
  std::vector<std::string> declared;
  for (const auto& p : base.params) declared.push_back(p.first);

  const Decl* matrix = nullptr;
  std::vector<const Decl*> expects;
  for (const Decl* d : program.decls) {
    if (d->span.file != program.main_file) continue;  // a library's matrix or expectations are not the spec's
    if (d->kind == DeclKind::kMatrix) {
      if (matrix != nullptr) {
        throw SpecError(d->name.span, fmt::format("a spec has one matrix (the first is at {})",
                                                  sources.location(matrix->span)));
      }
      matrix = d;
    } else if (d->kind == DeclKind::kExpect) {
      expects.push_back(d);
    }
  }

  // Rows: parameter -> canonical values (as the model renders them) and the values as written.
  struct Row {
    std::string param;
    std::vector<std::string> written;
    std::vector<std::string> canonical;
    std::vector<Span> spans;
  };
  std::vector<Row> rows;
  auto canonical_value = [&](const Ident& param, const Ident& value) -> std::string {
    try {
      Compiled c = typecheck(program, sources, ParamOverrides{{param.name, value.name}});
      for (const auto& [name, rendered] : c.model->params) {
        if (name == param.name) return rendered;
      }
    } catch (const UsageError& e) {
      // "--param NAME=VALUE: why" -> the why, at the value.
      std::string why = e.what();
      size_t colon = why.find(": ");
      if (colon != std::string::npos) why = why.substr(colon + 2);
      throw SpecError(value.span, fmt::format("{} = {}: {}", param.name, value.name, why));
    }
    throw SpecError(param.span, fmt::format("unknown parameter '{}'", param.name));
  };
  auto known_param = [&](const Ident& param) {
    for (const std::string& n : declared) {
      if (n == param.name) return;
    }
    throw SpecError(param.span, fmt::format("unknown parameter '{}' (the spec declares: {})", param.name,
                                            declared.empty() ? "no parameters" : join_names(declared)));
  };
  if (matrix != nullptr) {
    std::map<std::string, Span> row_at;
    for (const ParamValues& pv : matrix->values) {
      known_param(pv.param);
      if (auto it = row_at.find(pv.param.name); it != row_at.end()) {
        throw SpecError(pv.param.span, fmt::format("duplicate configuration: parameter '{}' is already in the "
                                                   "matrix at {}", pv.param.name, sources.location(it->second)));
      }
      row_at[pv.param.name] = pv.param.span;
      Row row{pv.param.name, {}, {}, {}};
      for (const Ident& v : pv.values) {
        std::string c = canonical_value(pv.param, v);
        for (size_t k = 0; k < row.canonical.size(); ++k) {
          if (row.canonical[k] == c) {
            throw SpecError(v.span, fmt::format("duplicate configuration: {} = {} is already listed at {}",
                                                pv.param.name, v.name, sources.location(row.spans[k])));
          }
        }
        row.written.push_back(v.name);
        row.canonical.push_back(c);
        row.spans.push_back(v.span);
      }
      rows.push_back(std::move(row));
      mx.params.push_back(pv.param.name);
    }
  }

  // The cartesian product, first row slowest. value_index[c][r]: the value of row r in configuration c.
  std::vector<std::vector<size_t>> value_index{{}};
  for (const Row& row : rows) {
    std::vector<std::vector<size_t>> next;
    if (value_index.size() * row.written.size() > kMaxConfigurations) {
      throw SpecError(matrix->span, fmt::format("the matrix has more than {} configurations", kMaxConfigurations));
    }
    for (const auto& prefix : value_index) {
      for (size_t v = 0; v < row.written.size(); ++v) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    }
    value_index = std::move(next);
  }
  for (const auto& idx : value_index) {
    Configuration c;
    for (size_t r = 0; r < rows.size(); ++r) {
      c.params.emplace_back(rows[r].param, rows[r].written[idx[r]]);
      c.name += (c.name.empty() ? "" : " ") + rows[r].param + "=" + rows[r].canonical[idx[r]];
    }
    if (c.name.empty()) c.name = "default";
    mx.configurations.push_back(std::move(c));
  }
  mx.expected.assign(mx.configurations.size(), std::vector<Expectation>(mx.properties.size()));

  std::vector<std::string> property_names;
  for (const PropertyInfo& p : mx.properties) property_names.push_back(p.name);
  for (const Decl* d : expects) {
    size_t prop = mx.properties.size();
    for (size_t i = 0; i < mx.properties.size(); ++i) {
      if (mx.properties[i].name == d->name.name) prop = i;
    }
    if (prop == mx.properties.size()) {
      throw SpecError(d->name.span, fmt::format("unknown property '{}' (the spec's properties: {})", d->name.name,
                                                join_names(property_names)));
    }
    bool violated = false;
    if (d->verdict.name == "violated") violated = true;
    else if (d->verdict.name != "holds") {
      throw SpecError(d->verdict.span, fmt::format("unknown verdict '{}': expected holds or violated", d->verdict.name));
    }
    // The selector: for each matrix row it names, the set of allowed value indexes.
    std::vector<std::set<size_t>> allowed(rows.size());
    std::vector<bool> constrained(rows.size(), false);
    for (const ParamValues& pv : d->values) {
      size_t r = rows.size();
      for (size_t k = 0; k < rows.size(); ++k) {
        if (rows[k].param == pv.param.name) r = k;
      }
      if (r == rows.size()) {
        known_param(pv.param);
        throw SpecError(pv.param.span, fmt::format("'{}' is not a matrix parameter (the matrix has: {})",
                                                   pv.param.name, mx.params.empty() ? "none" : join_names(mx.params)));
      }
      if (constrained[r]) {
        throw SpecError(pv.param.span, fmt::format("'{}' appears twice in this expectation", pv.param.name));
      }
      constrained[r] = true;
      for (const Ident& v : pv.values) {
        std::string c = canonical_value(pv.param, v);
        size_t k = 0;
        while (k < rows[r].canonical.size() && rows[r].canonical[k] != c) ++k;
        if (k == rows[r].canonical.size()) {
          throw SpecError(v.span, fmt::format("{} = {} is not a configuration of the matrix ({} in {{ {} }})",
                                              pv.param.name, v.name, pv.param.name, join_names(rows[r].written)));
        }
        allowed[r].insert(k);
      }
    }
    for (size_t c = 0; c < mx.configurations.size(); ++c) {
      bool match = true;
      for (size_t r = 0; r < rows.size() && match; ++r) {
        if (constrained[r] && !allowed[r].count(value_index[c][r])) match = false;
      }
      if (!match) continue;
      Expectation& e = mx.expected[c][prop];
      if (e.span.file >= 0) {
        throw SpecError(d->span, fmt::format("duplicate configuration: property '{}' in configuration {} already has "
                                             "an expectation at {}", d->name.name, mx.configurations[c].name,
                                             sources.location(e.span)));
      }
      e = Expectation{violated, d->span};
    }
  }
  return mx;
}

}  // namespace qpcheck::lang
