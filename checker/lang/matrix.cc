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

}  // namespace

Matrix resolve_matrix(const Program& program, const SourceManager& sources, const model::Model& base,
                      bool check_deadlock, const ReplayVocabulary& replay) {
  Matrix mx;
  mx.plan = plan_properties(base, {}, check_deadlock);
  mx.properties = mx.plan.checked;
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
  auto written = [](const Ident& id) { return id.module.empty() ? id.name : id.module + "::" + id.name; };
  // The param a row or selector names (as the model shows it: "max_recv", or "rdma::max_recv" when two files
  // declare one by that name) and the value, rendered: the program is compiled with it.
  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> resolved;  // (param, value) as written
  auto resolve_value = [&](const Ident& param, const Ident& value) -> std::pair<std::string, std::string> {
    if (auto it = resolved.find({written(param), value.name}); it != resolved.end()) return it->second;
    try {
      Compiled c = typecheck_params(program, sources, ParamOverrides{{written(param), value.name}}, replay);
      const std::string& shown = c.param_targets.at(0);
      for (const auto& [name, rendered] : c.model->params) {
        if (name == shown) return resolved[{written(param), value.name}] = {shown, rendered};
      }
    } catch (const UsageError& e) {
      std::string why = e.what();
      if (why.rfind("unknown parameter", 0) == 0) {
        throw SpecError(param.span, fmt::format("unknown parameter '{}' (the spec declares: {})", written(param),
                                                declared.empty() ? "no parameters" : join_names(declared)));
      }
      // "--param NAME=VALUE: why" -> the why, at the value (at the name when the name is the problem).
      size_t colon = why.find(": ");
      if (colon != std::string::npos) why = why.substr(colon + 2);
      bool name_problem = why.find("is retired") != std::string::npos || why.find("is ambiguous") != std::string::npos;
      throw SpecError(name_problem ? param.span : value.span,
                      name_problem ? why : fmt::format("{} = {}: {}", written(param), value.name, why));
    }
    throw SpecError(param.span, fmt::format("unknown parameter '{}'", written(param)));
  };
  auto canonical_value = [&](const Ident& param, const Ident& value) { return resolve_value(param, value).second; };
  auto param_name = [&](const ParamValues& pv) { return resolve_value(pv.param, pv.values.at(0)).first; };
  if (matrix != nullptr) {
    std::map<std::string, Span> row_at;
    for (const ParamValues& pv : matrix->values) {
      std::string name = param_name(pv);
      if (auto it = row_at.find(name); it != row_at.end()) {
        throw SpecError(pv.param.span, fmt::format("duplicate configuration: parameter '{}' is already in the "
                                                   "matrix at {}", written(pv.param), sources.location(it->second)));
      }
      row_at[name] = pv.param.span;
      Row row{name, {}, {}, {}};
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
      mx.params.push_back(name);
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
      for (const NotChecked& n : mx.plan.not_checked) {
        if (n.name != d->name.name) continue;
        std::string why = n.by == "disable" ? fmt::format("the spec disables it at {}", sources.location(n.at))
                          : n.by == "check" ? fmt::format("the spec's 'check' at {} does not name it",
                                                          sources.location(n.at))
                                            : "--no-deadlock is given";
        throw SpecError(d->name.span, fmt::format("expect {}: '{}' is not checked ({})", d->name.name, d->name.name,
                                                  why));
      }
      for (const model::Retired& r : base.retired) {
        if (r.name == d->name.name) {
          throw SpecError(d->name.span, fmt::format("'{}' is retired (at {}): {}", r.name, sources.location(r.span),
                                                    r.message));
        }
      }
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
      std::string name = param_name(pv);
      size_t r = rows.size();
      for (size_t k = 0; k < rows.size(); ++k) {
        if (rows[k].param == name) r = k;
      }
      if (r == rows.size()) {
        throw SpecError(pv.param.span, fmt::format("'{}' is not a matrix parameter (the matrix has: {})",
                                                   written(pv.param), mx.params.empty() ? "none" : join_names(mx.params)));
      }
      if (constrained[r]) {
        throw SpecError(pv.param.span, fmt::format("'{}' appears twice in this expectation", written(pv.param)));
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
