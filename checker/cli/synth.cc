#include "checker/cli/synth.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <z3++.h>

#include "checker/cli/exit_codes.h"
#include "checker/cli/format_option.h"
#include "checker/cli/interrupt.h"
#include "checker/cli/progress.h"
#include "checker/cli/symbolic_run.h"
#include "checker/cli/verify_symbolic.h"
#include "checker/lang/numbers.h"
#include "checker/symbolic/family.h"
#include "checker/symbolic/synth.h"
#include "checker/trace/build.h"
#include "checker/trace/render.h"

namespace qpcheck::cli {

namespace {

// Values in their domain's order, runs of consecutive integers written LO..HI: "0..3,5", "IB,IWARP".
std::string compact(const std::vector<std::string>& values, const std::vector<std::string>& domain) {
  std::vector<std::string> ordered;
  for (const std::string& d : domain) {
    if (std::find(values.begin(), values.end(), d) != values.end() &&
        std::find(ordered.begin(), ordered.end(), d) == ordered.end()) {
      ordered.push_back(d);
    }
  }
  auto number = [](const std::string& v, int64_t* n) {
    std::optional<int64_t> parsed = lang::parse_int64(v);
    if (parsed) *n = *parsed;
    return parsed.has_value();
  };
  std::string out;
  for (size_t i = 0; i < ordered.size();) {
    int64_t a = 0, b = 0;
    size_t j = i;
    if (number(ordered[i], &a)) {
      while (j + 1 < ordered.size() && number(ordered[j + 1], &b) && b == a + static_cast<int64_t>(j + 1 - i)) ++j;
    }
    out += (out.empty() ? "" : ",") + (j >= i + 2 ? ordered[i] + ".." + ordered[j]
                                                 : j == i + 1 ? ordered[i] + "," + ordered[j] : ordered[i]);
    i = j + 1;
  }
  return out;
}

// The distinct values of parameter p, in the order the family enumerates them.
std::vector<std::string> domain_of(const symbolic::Family& fam, size_t p) {
  std::vector<std::string> out;
  for (const std::string& v : fam.params[p].values) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

std::string values_text(const symbolic::Family& fam, const std::vector<int>& members) {
  // One parameter: "rnr_retry=0..2,5". Several: the product when the members are one ("a=IB,IWARP b=0..6"),
  // else grouped by the first parameter ("a=IB: b=0..6; a=IWARP: b=0,1").
  if (members.empty()) return "-";
  size_t np = fam.params.size();
  auto values_of = [&](size_t p, const std::vector<int>& ms) {
    std::vector<std::string> v;
    for (int m : ms) v.push_back(fam.params[p].values[m]);
    return v;
  };
  if (np == 1) return fam.params[0].name + "=" + compact(values_of(0, members), domain_of(fam, 0));
  size_t product = 1;
  std::string joint;
  for (size_t p = 0; p < np; ++p) {
    std::vector<std::string> v = values_of(p, members);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    product *= v.size();
    joint += fmt::format("{}{}={}", p ? " " : "", fam.params[p].name, compact(v, domain_of(fam, p)));
  }
  if (product == members.size()) return joint;
  std::string out;
  for (const std::string& first : domain_of(fam, 0)) {
    std::vector<int> group;
    for (int m : members) {
      if (fam.params[0].values[m] == first) group.push_back(m);
    }
    if (group.empty()) continue;
    out += fmt::format("{}{}={}:", out.empty() ? "" : "; ", fam.params[0].name, first);
    for (size_t p = 1; p < np; ++p) {
      out += fmt::format(" {}={}", fam.params[p].name, compact(values_of(p, group), domain_of(fam, p)));
    }
  }
  return out;
}

// A command that shows the counterexample of one value in full.
std::string verify_command(const SynthOptions& opt, const symbolic::Family& fam, int member) {
  std::string cmd = "qpcheck verify " + opt.file;
  for (const std::string& p : opt.params) {
    size_t eq = p.find('=');
    if (eq != std::string::npos && !frontend::is_symbolic_value(p.substr(eq + 1))) cmd += " --param " + p;
  }
  for (const symbolic::SymbolicParam& p : fam.params) cmd += fmt::format(" --param {}={}", p.name, p.values[member]);
  return cmd;
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
  so.only = opt.properties;
  so.engine.interrupt = &install_interrupt_handlers();
  if (progress_enabled()) {
    so.progress = [](const symbolic::SynthProgress& p) {
      std::string where = p.phase == "explicit"
                              ? fmt::format("explicit search of {}: {} states", p.value, p.states)
                              : fmt::format("depth {}/{}", p.depth, p.max_depth);
      progress_line(fmt::format("synth: property {}/{} {}: {}, {} of {} values undecided, {:.0f} s",
                                p.property_index, p.properties, p.property, where, p.undecided, p.members,
                                p.seconds));
    };
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<symbolic::PropertyResult> results;
  try {
    results = symbolic::synthesize(spec->family, so);
  } catch (...) {
    clear_progress();
    return symbolic_failure(err);
  }
  clear_progress();
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
  // The closing summary: one row per property, the values for which it fails, holds or stays open (Markdown).
  std::string summary = "| property | fails for | holds for | open for | how |\n|---|---|---|---|---|\n";
  for (const symbolic::PropertyResult& pr : results) {
    std::vector<int> fails, holds, open;
    std::vector<std::string> hows;
    for (const symbolic::Region& reg : pr.regions) {
      std::vector<int>& into = reg.verdict == symbolic::Region::Verdict::kFails   ? fails
                               : reg.verdict == symbolic::Region::Verdict::kHolds ? holds
                                                                                  : open;
      into.insert(into.end(), reg.members.begin(), reg.members.end());
      std::string how = reg.verdict == symbolic::Region::Verdict::kFails
                            ? fmt::format("{}: {}", values_text(spec->family, reg.members), reg.how)
                            : reg.how;
      if (std::find(hows.begin(), hows.end(), how) == hows.end()) hows.push_back(how);
    }
    for (std::vector<int>* v : {&fails, &holds, &open}) std::sort(v->begin(), v->end());
    std::string how;
    for (const std::string& h : hows) how += (how.empty() ? "" : "; ") + h;
    summary += fmt::format("| `{}` | {} | {} | {} | {} |\n", pr.property, values_text(spec->family, fails),
                           values_text(spec->family, holds), values_text(spec->family, open), how);
  }
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
                      ? fmt::format("  FAILS for {} ({})\n", values, reg.how)
                      : fmt::format("  FAILS for {} ({}); one run violates it for each of these values\n", values,
                                    reg.how);
          if (opt.counterexamples) {
            text += fmt::format("    shown for {}:\n", values_text(spec->family, {reg.counterexample_member}));
            for (const trace::Step& s : t.steps) {
              text += fmt::format("    {:>3}. {:<28} {}:{}: {}\n", s.index, s.actor, s.source.file, s.source.line,
                                  s.source.text);
            }
          } else if (!t.steps.empty()) {
            const trace::Step& last = t.steps.back();
            text += fmt::format("    last of {} steps: {} {}:{}: {}\n", t.steps.size(), last.actor, last.source.file,
                                last.source.line, last.source.text);
          }
          text += fmt::format("    ** {}\n", t.message);
          if (!opt.counterexamples) {
            text += fmt::format("    every step: {}\n", verify_command(opt, spec->family, reg.counterexample_member));
          }
          jr["counterexample"] = trace::to_json(t);
          break;
        }
      }
      jp["regions"].push_back(jr);
    }
    j["properties"].push_back(jp);
  }
  text += fmt::format("\nsummary ({} values, depth {}, {:.2f} s):\n\n{}", spec->family.members.size(), opt.depth,
                      seconds, summary);
  if (interrupt_flag().load()) j["interrupted"] = true;
  if (opt.format == Format::kJson) out << trace::dump_json(j);
  else out << text;
  out.flush();
  if (interrupt_flag().load()) {
    err << fmt::format("qpcheck: interrupted (signal {}): the synthesis stopped where it was; what it had not decided "
                       "is open\n", interrupt_signal());
  }
  if (any_open) return code(ExitCode::kInconclusive);
  return code(any_fail ? ExitCode::kViolated : ExitCode::kHolds);
}

}  // namespace qpcheck::cli
