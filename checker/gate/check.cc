#include "checker/gate/check.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "checker/frontend/frontend.h"
#include "checker/lang/matrix.h"
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
  frontend::Spec spec;
  const lang::SourceManager& sources = spec.sources();
  lang::Matrix mx;
  std::optional<frontend::Failure> failed = spec.attempt([&] {
    spec.read(path, opt.search_path);
    lang::Compiled base = spec.compile();
    for (const lang::Diagnostic& w : base.warnings) res.warnings.push_back(spec.render({w}));
    mx = spec.matrix(*base.model, opt.check_deadlock);
    for (const lang::NotChecked& n : mx.plan.not_checked) {
      res.not_checked.push_back(trace::PropertyNote{n.name, n.by, trace::source_ref(sources, n.at), n.reason});
    }
    for (const model::Override& o : base.model->overrides) {
      res.overrides.push_back(trace::OverrideNote{o.kind, o.name, trace::source_ref(sources, o.original),
                                                  trace::source_ref(sources, o.by)});
    }
  });
  if (failed) {
    res.error_code = failed->kind == frontend::Failure::Kind::kSpec ? 3 : 4;
    res.error = failed->text;
    return res;
  }
  for (size_t c = 0; c < mx.configurations.size(); ++c) {
    ConfigResult cr;
    cr.name = mx.configurations[c].name;
    // A configuration can make the spec invalid (e.g. a library type that depends on the parameter).
    if (auto f = spec.attempt([&] {
          lang::Compiled compiled = spec.compile(mx.configurations[c].params);
          check_config(path, compiled, mx, c, opt, cr);
        })) {
      res.error_code = 3;
      res.error += f->kind == frontend::Failure::Kind::kSpec ? fmt::format("configuration {}:\n{}", cr.name, f->text)
                                                             : fmt::format("configuration {}: {}\n", cr.name, f->message);
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
