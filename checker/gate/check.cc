#include "checker/gate/check.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "checker/lang/matrix.h"
#include "checker/lang/parser.h"
#include "checker/lang/typecheck.h"
#include "checker/trace/build.h"

namespace qpcheck::gate {

namespace {

void check_config(const std::string& path, lang::Compiled& compiled, const lang::Matrix& mx, size_t ci,
                  const Options& opt, ConfigResult& out) {
  model::Model& m = *compiled.model;
  const lang::SourceManager& sources = *m.sources;
  out.params = m.params;
  PropertyCheck pc = check_properties(m, mx.properties, opt, path);
  out.coverage = std::move(pc.coverage);
  out.stats = pc.stats;
  out.limit = pc.limit;
  for (size_t pi = 0; pi < pc.properties.size(); ++pi) {
    PropertyResult& pr = pc.properties[pi];
    pr.expected_violated = mx.expected[ci][pi].violated;
    pr.expected_at = trace::source_ref(sources, mx.expected[ci][pi].span);
    out.properties.push_back(std::move(pr));
  }
}

}  // namespace

SpecResult check_spec(const std::string& path, const Options& opt) {
  SpecResult res;
  res.spec = path;
  lang::SourceManager sources;
  lang::Ast ast;
  auto diagnostics = [&](const lang::SpecError& e) {
    std::string text;
    for (const lang::Diagnostic& d : e.diagnostics()) text += lang::format_diagnostic(sources, d);
    return text;
  };
  lang::Program program;
  lang::Matrix mx;
  try {
    program = lang::load_program(sources, ast, path, opt.search_path);
    lang::Compiled base = lang::typecheck(program, sources, {});
    for (const lang::Diagnostic& w : base.warnings) res.warnings.push_back(lang::format_diagnostic(sources, w));
    mx = lang::resolve_matrix(program, sources, *base.model, opt.check_deadlock);
    for (const lang::NotChecked& n : mx.plan.not_checked) {
      res.not_checked.push_back(trace::PropertyNote{n.name, n.by, trace::source_ref(sources, n.at), n.reason});
    }
    for (const model::Override& o : base.model->overrides) {
      res.overrides.push_back(trace::OverrideNote{o.kind, o.name, trace::source_ref(sources, o.original),
                                                  trace::source_ref(sources, o.by)});
    }
  } catch (const lang::SpecError& e) {
    res.error_code = 3;
    res.error = diagnostics(e);
    return res;
  } catch (const lang::UsageError& e) {
    res.error_code = 4;
    res.error = fmt::format("qpcheck: error: {}\n", e.what());
    return res;
  }
  for (size_t c = 0; c < mx.configurations.size(); ++c) {
    ConfigResult cr;
    cr.name = mx.configurations[c].name;
    try {
      lang::Compiled compiled = lang::typecheck(program, sources, mx.configurations[c].params);
      check_config(path, compiled, mx, c, opt, cr);
    } catch (const lang::SpecError& e) {
      // A configuration can make the spec invalid (e.g. a library type that depends on the parameter).
      res.error_code = 3;
      res.error += fmt::format("configuration {}:\n{}", cr.name, diagnostics(e));
      continue;
    } catch (const lang::UsageError& e) {
      res.error_code = 3;
      res.error += fmt::format("configuration {}: {}\n", cr.name, e.what());
      continue;
    }
    res.configs.push_back(std::move(cr));
  }
  return res;
}

Counts count(const std::vector<SpecResult>& results) {
  Counts n;
  for (const SpecResult& s : results) {
    ++n.specs;
    if (s.error_code != 0) ++n.invalid_specs;
    for (const ConfigResult& c : s.configs) {
      ++n.configurations;
      for (const PropertyResult& p : c.properties) {
        ++n.checks;
        if (p.vacuous) ++n.vacuous;
        switch (p.status()) {
          case Status::kAsExpected: ++n.as_expected; break;
          case Status::kNewViolation: ++n.new_violations; break;
          case Status::kNoLongerViolated: ++n.no_longer_violated; break;
          case Status::kInconclusive: ++n.inconclusive; break;
        }
      }
    }
  }
  return n;
}

int exit_code(const Counts& n, const std::vector<SpecResult>& results) {
  for (const SpecResult& s : results) {
    if (s.error_code == 4) return 4;
  }
  if (n.invalid_specs > 0) return 3;
  if (n.new_violations + n.no_longer_violated > 0) return 1;
  if (n.inconclusive > 0) return 2;
  return 0;
}

}  // namespace qpcheck::gate
