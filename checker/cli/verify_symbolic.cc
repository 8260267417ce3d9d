#include "checker/cli/verify_symbolic.h"
#include "checker/cli/symbolic_run.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <z3++.h>

#include "checker/cli/atomic_file.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/format_option.h"
#include "checker/cli/interrupt.h"
#include "checker/cli/output_paths.h"
#include "checker/cli/progress.h"
#include "checker/gate/property_runs.h"
#include "checker/lang/properties.h"
#include "checker/symbolic/family.h"
#include "checker/trace/build.h"
#include "checker/trace/render.h"

namespace qpcheck::cli {

int symbolic_failure(std::ostream& err) {
  try {
    throw;
  } catch (const symbolic::NotSymbolic& e) {
    err << "qpcheck: error: " << e.what() << "\n";
    return code(ExitCode::kUsage);
  } catch (const symbolic::EncodingMismatch& e) {
    err << "qpcheck: internal error: " << e.what() << "\n";
    return code(ExitCode::kInternal);
  } catch (const z3::exception& e) {
    err << "qpcheck: internal error: Z3: " << e.msg() << "\n";
    return code(ExitCode::kInternal);
  }
}

bool split_params(const std::vector<std::string>& params, lang::ParamOverrides& fixed,
                  std::vector<std::pair<std::string, std::string>>& sets, std::ostream& err) {
  for (const std::string& p : params) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      err << fmt::format("qpcheck: error: --param {}: expected NAME=VALUE, NAME=*, NAME=LO..HI or NAME=V1,V2\n", p);
      return false;
    }
    std::string name = p.substr(0, eq), value = p.substr(eq + 1);
    if (frontend::is_symbolic_value(value)) sets.emplace_back(name, value);
    else fixed.emplace_back(name, value);
  }
  return true;
}

std::unique_ptr<symbolic::LoadedSpec> load_for_symbolic(const std::string& file,
                                                        const std::vector<std::string>& extra_lib_dirs,
                                                        const std::vector<std::string>& params, std::ostream& err,
                                                        int& rc) {
  lang::ParamOverrides fixed;
  std::vector<std::pair<std::string, std::string>> sets;
  if (!split_params(params, fixed, sets, err)) {
    rc = code(ExitCode::kUsage);
    return nullptr;
  }
  auto spec = std::make_unique<symbolic::LoadedSpec>();
  if (auto f = spec->spec.attempt(
          [&] { symbolic::load_spec_into(*spec, file, lang::default_search_path(extra_lib_dirs), fixed, sets); })) {
    err << f->text;
    rc = code(f->kind == frontend::Failure::Kind::kSpec ? ExitCode::kInvalidSpec : ExitCode::kUsage);
    return nullptr;
  }
  err << spec->spec.render(spec->warnings);
  rc = 0;
  return spec;
}

trace::Trace symbolic_trace(const symbolic::LoadedSpec& spec, const symbolic::Result& r, const std::string& file,
                            const std::string& engine, const std::vector<std::pair<std::string, std::string>>& sets) {
  int member = r.result.outcome == model::Outcome::kViolated ? r.member : 0;
  trace::Trace t = trace::build_trace(*spec.systems.at(member), r.result, file, engine);
  t.engine = engine;
  if (r.result.outcome != model::Outcome::kViolated) {
    for (auto& [name, value] : t.params) {
      for (const auto& [sname, set] : sets) {
        if (sname == name) value = set;
      }
    }
  }
  if (r.result.outcome != model::Outcome::kViolated) t.limit = r.reason;
  return t;
}

std::string cti_text(const trace::Trace& cti, int k) {
  std::string out = fmt::format(
      "\nCounterexample to induction (k={}): {} step{} through states that satisfy every property, from a state "
      "that need not be reachable, ending in a violation of {}. Strengthen an invariant to exclude its first state:\n",
      k, cti.steps.size(), cti.steps.size() == 1 ? "" : "s", cti.property);
  out += "  first state:\n";
  for (const trace::Change& c : cti.initial) out += fmt::format("    {} = {}\n", c.name, c.before);
  for (const trace::Step& s : cti.steps) {
    out += fmt::format("  {:>3}. {}{}  [{}:{}]\n", s.index, s.actor, !s.is_rule && !s.at.empty() ? " @" + s.at : "",
                       s.source.file, s.source.line);
    out += fmt::format("         {}\n", s.source.text);
    for (const trace::Change& c : s.changes) out += fmt::format("           {}: {} -> {}\n", c.name, c.before, c.after);
    if (s.failed) out += fmt::format("       ** this step violates {}: {}\n", cti.property, cti.message);
  }
  if (!cti.steps.empty() && !cti.steps.back().failed) out += fmt::format("       ** {}\n", cti.message);
  return out;
}

int run_verify_symbolic(const VerifyOptions& opt, std::ostream& out, std::ostream& err) {
  if (opt.engine == Engine::kExplicit) {
    err << "qpcheck: error: a --param value set (NAME=*, NAME=LO..HI, NAME=V1,V2) needs --engine bmc or kind "
           "(or qpcheck synth)\n";
    return code(ExitCode::kUsage);
  }
  int rc = 0;
  std::unique_ptr<symbolic::LoadedSpec> spec = load_for_symbolic(opt.file, opt.lib_dirs, opt.params, err, rc);
  if (!spec) return rc;
  lang::ParamOverrides fixed;
  std::vector<std::pair<std::string, std::string>> sets;
  split_params(opt.params, fixed, sets, err);
  lang::PropertyPlan plan;
  try {
    plan = lang::plan_properties(*spec->compiled.at(0).model, opt.properties, !opt.no_deadlock);
  } catch (const lang::UsageError& e) {
    err << "qpcheck: error: " << e.what() << "\n";
    return code(ExitCode::kUsage);
  }

  // As for the explicit engine: no output on a file the spec reads, and the file replaced only once complete.
  std::vector<std::pair<std::string, std::string>> inputs{{"spec", opt.file}};
  std::vector<std::string> read = spec->spec.files();
  for (size_t i = 1; i < read.size(); ++i) inputs.emplace_back("imported file", read[i]);
  if (std::string conflict = output_path_conflict({{"--trace-out", opt.trace_out}}, inputs, false); !conflict.empty()) {
    err << "qpcheck: error: " << conflict << "\n";
    return code(ExitCode::kUsage);
  }
  AtomicFile trace_file;
  if (!opt.trace_out.empty()) {
    if (std::string why = trace_file.open(opt.trace_out); !why.empty()) {
      err << fmt::format("qpcheck: error: cannot write --trace-out file '{}': {}\n",
                         trace::printable(opt.trace_out, 200), why);
      return code(ExitCode::kUsage);
    }
  }
  if (std::vector<std::string> live = plan.liveness_names(); !live.empty() && opt.properties.empty()) {
    // A spec with liveness properties: the Z3 engines decide its safety properties; say what they leave out.
    std::string names;
    for (const std::string& n : live) names += (names.empty() ? "" : ", ") + n;
    err << fmt::format("qpcheck: note: --engine {} checks safety properties only; not checked: {} (liveness: run "
                       "the explicit engine)\n", opt.engine == Engine::kBmc ? "bmc" : "kind", names);
  } else if (!live.empty()) {
    err << fmt::format("qpcheck: error: --engine {} cannot check liveness properties (--property {}): run the "
                       "explicit engine\n", opt.engine == Engine::kBmc ? "bmc" : "kind", live.front());
    return code(ExitCode::kUsage);
  }
  symbolic::Options so;
  so.mode = opt.engine == Engine::kBmc ? symbolic::Mode::kBmc : symbolic::Mode::kKind;
  so.depth = opt.depth;
  so.smt_timeout = opt.smt_timeout;
  so.smt_rlimit = opt.smt_rlimit;
  so.check_deadlock = plan.deadlock;
  if (!plan.everything) so.properties = plan.safety_names();
  so.notices = &err;
  so.interrupt = &install_interrupt_handlers();
  if (progress_enabled()) {
    so.progress = [](const symbolic::Progress& p) {
      progress_line(fmt::format("{}: depth {}/{}, {:.0f} s: {}", p.engine, p.depth, p.max_depth, p.seconds, p.event));
    };
  }
  std::string engine = opt.engine == Engine::kBmc ? "bmc" : "kind";
  symbolic::Result r;
  try {
    r = symbolic::check(spec->family, so);
  } catch (...) {
    clear_progress();
    return symbolic_failure(err);
  }
  clear_progress();
  trace::Trace t = symbolic_trace(*spec, r, opt.file, engine, sets);
  gate::note_properties(t, plan, spec->spec.sources());
  // The liveness properties were not decided by this engine: listed as not checked, never as checked.
  for (const std::string& name : plan.liveness_names()) {
    t.checked.erase(std::remove(t.checked.begin(), t.checked.end(), name), t.checked.end());
    t.not_checked.push_back(trace::PropertyNote{name, engine == "bmc" ? "--engine bmc" : "--engine kind", {},
                                                "a liveness property: the symbolic engines check safety only"});
  }
  nlohmann::json j = trace::to_json(t);
  std::string text = trace::to_text(trace::with_names(t, opt.names));
  if (r.cti && r.result.outcome == model::Outcome::kInconclusive) {
    model::CheckResult cr;
    cr.outcome = model::Outcome::kViolated;
    cr.violation = r.cti_violation;
    cr.path = *r.cti;
    trace::Trace ct = trace::build_trace(*spec->systems.at(r.cti_member), cr, opt.file, engine);
    text += cti_text(ct, static_cast<int>(r.cti->actions.size()) - 1);
    nlohmann::json cj = trace::to_json(ct);
    j["induction_counterexample"] = {{"k", r.depth}, {"property", ct.property}, {"message", ct.message},
                                     {"initial", cj["initial"]}, {"steps", cj["steps"]}};
  }
  if (opt.format == Format::kJson) out << trace::dump_json(j);
  else out << trace::terminal_text(text);
  out.flush();
  if (trace_file.is_open()) {
    trace_file.write(trace::dump_json(j));
    if (std::string why = trace_file.commit(); !why.empty()) {
      err << fmt::format("qpcheck: error: writing --trace-out file '{}' failed ({}); the report above is "
                         "complete\n", trace::printable(opt.trace_out, 200), why);
      return code(ExitCode::kInternal);
    }
  }
  return code(r.result.outcome);
}

}  // namespace qpcheck::cli
