#include "checker/cli/synth.h"

#include <chrono>
#include <map>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <z3++.h>

#include "checker/cli/exit_codes.h"
#include "checker/cli/format_option.h"
#include "checker/cli/verify_symbolic.h"
#include "checker/symbolic/family.h"
#include "checker/symbolic/synth.h"
#include "checker/trace/build.h"
#include "checker/trace/render.h"

namespace qpcheck::cli {

void setup_synth(CLI::App& app, SynthOptions& opt) {
  app.add_option("file", opt.file, "the .qpspec file")->required();
  app.add_option("-p,--param", opt.params,
                 "NAME=* (every value of its declared domain), NAME=LO..HI or NAME=V1,V2: a symbolic parameter; "
                 "NAME=VALUE: a fixed one (repeatable)");
  app.add_option("--depth", opt.depth, "longest counterexample searched and largest k for k-induction (default 20)")
      ->check(depth_validator());
  app.add_option("--smt-timeout", opt.smt_timeout, "seconds per Z3 call; running out leaves values open")
      ->check(nonnegative_seconds());
  app.add_option("--smt-rlimit", opt.smt_rlimit, "Z3 resource limit per call (deterministic); 0 = none");
  app.add_option("--max-states", opt.max_states,
                 "states per value for the exhaustive explicit search of what Z3 left open; 0 = no explicit search");
  app.add_option("--lib-dir", opt.lib_dirs, "extra folder searched by import (repeatable)");
  app.add_flag("--no-deadlock", opt.no_deadlock, "do not check deadlocks");
  app.add_option("--format", opt.format, "report format on stdout: text or json")
      ->transform(format_names());
}

namespace {

std::string values_text(const symbolic::Family& fam, const std::vector<int>& members) {
  // One parameter: "rnr_retry=0,1,2"; several: "(a=1 b=true), (a=2 b=true)".
  std::string out;
  if (fam.params.size() == 1) {
    out = fam.params[0].name + "=";
    for (size_t i = 0; i < members.size(); ++i) out += (i ? "," : "") + fam.params[0].values[members[i]];
    return out;
  }
  for (size_t i = 0; i < members.size(); ++i) {
    out += i ? ", (" : "(";
    for (size_t p = 0; p < fam.params.size(); ++p) {
      out += fmt::format("{}{}={}", p ? " " : "", fam.params[p].name, fam.params[p].values[members[i]]);
    }
    out += ")";
  }
  return out;
}

const char* verdict_name(symbolic::Region::Verdict v) {
  switch (v) {
    case symbolic::Region::Verdict::kFails: return "fails";
    case symbolic::Region::Verdict::kHolds: return "holds";
    case symbolic::Region::Verdict::kOpen: return "open";
  }
  return "?";
}

}  // namespace

int run_synth(const SynthOptions& opt, std::ostream& out, std::ostream& err) {
  int rc = 0;
  std::unique_ptr<symbolic::LoadedSpec> spec = load_for_symbolic(opt.file, opt.lib_dirs, opt.params, err, rc);
  if (!spec) return rc;
  if (spec->family.params.empty()) {
    err << "qpcheck: error: synth needs at least one symbolic parameter: --param NAME=*, NAME=LO..HI or NAME=V1,V2\n";
    return code(ExitCode::kUsage);
  }
  symbolic::SynthOptions so;
  so.engine.depth = opt.depth;
  so.engine.smt_timeout = opt.smt_timeout;
  so.engine.smt_rlimit = opt.smt_rlimit;
  so.engine.check_deadlock = !opt.no_deadlock;
  so.explicit_max_states = opt.max_states;
  auto start = std::chrono::steady_clock::now();
  std::vector<symbolic::PropertyResult> results;
  try {
    results = symbolic::synthesize(spec->family, so);
  } catch (...) {
    return symbolic_failure(err);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  bool any_fail = false, any_open = false;
  std::string text;
  nlohmann::json j;
  j["schema"] = "qpcheck.synth";
  j["version"] = 1;
  j["spec"] = opt.file;
  j["depth"] = opt.depth;
  j["seconds"] = seconds;
  j["symbolic"] = nlohmann::json::array();
  for (const symbolic::SymbolicParam& p : spec->family.params) j["symbolic"].push_back({{"name", p.name}});
  std::string domain;
  for (const symbolic::SymbolicParam& p : spec->family.params) {
    domain += fmt::format("{}{} in {{", domain.empty() ? "" : ", ", p.name);
    std::vector<std::string> seen;
    for (const std::string& v : p.values) {
      if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
    }
    for (size_t i = 0; i < seen.size(); ++i) domain += (i ? "," : "") + seen[i];
    domain += "}";
  }
  text += fmt::format("{}: parameter synthesis over {} ({} combinations), depth {}\n", opt.file, domain,
                      spec->family.members.size(), opt.depth);
  j["properties"] = nlohmann::json::array();
  for (const symbolic::PropertyResult& pr : results) {
    text += fmt::format("\nproperty {}:\n", pr.property);
    nlohmann::json jp = {{"property", pr.property}, {"regions", nlohmann::json::array()}};
    for (const symbolic::Region& reg : pr.regions) {
      any_fail |= reg.verdict == symbolic::Region::Verdict::kFails;
      any_open |= reg.verdict == symbolic::Region::Verdict::kOpen;
      std::string values = values_text(spec->family, reg.members);
      nlohmann::json jr = {{"verdict", verdict_name(reg.verdict)}, {"how", reg.how}, {"values", nlohmann::json::array()}};
      for (int m : reg.members) {
        nlohmann::json v;
        for (const symbolic::SymbolicParam& p : spec->family.params) v[p.name] = p.values[m];
        jr["values"].push_back(v);
      }
      switch (reg.verdict) {
        case symbolic::Region::Verdict::kHolds:
          text += fmt::format("  HOLDS for {} ({})\n", values, reg.how);
          break;
        case symbolic::Region::Verdict::kOpen:
          text += fmt::format("  OPEN  for {} ({})\n", values, reg.how);
          break;
        case symbolic::Region::Verdict::kFails: {
          trace::Trace t = trace::build_trace(*spec->systems.at(reg.counterexample_member), reg.counterexample,
                                              opt.file, "bmc");
          text += reg.members.size() == 1
                      ? fmt::format("  FAILS for {} ({}):\n", values, reg.how)
                      : fmt::format("  FAILS for {} ({}); the same run violates it for each of these values, shown "
                                    "for {}:\n", values, reg.how, values_text(spec->family, {reg.counterexample_member}));
          for (const trace::Step& s : t.steps) {
            text += fmt::format("    {:>3}. {:<28} {}:{}: {}\n", s.index, s.actor, s.source.file, s.source.line,
                                s.source.text);
          }
          text += fmt::format("         ** {}\n", t.message);
          jr["counterexample"] = trace::to_json(t);
          break;
        }
      }
      jp["regions"].push_back(jr);
    }
    j["properties"].push_back(jp);
  }
  text += fmt::format("\nsynthesis: {:.2f} s, depth {}\n", seconds, opt.depth);
  if (opt.format == Format::kJson) out << trace::dump_json(j);
  else out << text;
  out.flush();
  if (any_open) return code(ExitCode::kInconclusive);
  return code(any_fail ? ExitCode::kViolated : ExitCode::kHolds);
}

}  // namespace qpcheck::cli
