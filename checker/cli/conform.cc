#include "checker/cli/conform.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>
#include <tuple>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checker/cli/atomic_file.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/format_option.h"
#include "checker/cli/interrupt.h"
#include "checker/cli/output_paths.h"
#include "checker/conform/conform.h"
#include "checker/frontend/frontend.h"
#include "checker/model/model_system.h"
#include "checker/trace/build.h"
#include "checker/trace/msc.h"
#include "checker/trace/render.h"
#include "verbs_backend/call_log.h"
#include "verbs_backend/replay_ops.h"

namespace qpcheck::cli {

namespace {

using conform::ConformResult;
using nlohmann::json;

std::string op_text(const std::string& op, const std::vector<std::string>& args) {
  std::string s = op + "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ")";
}

// An operation the spec allows, marked when the spec has the device refuse it ("connect(...) (refused)").
std::string op_text(const trace::ReplayStep& s) {
  return op_text(s.op, s.args) + (s.refused.empty() ? "" : " (refused)");
}

const char* verdict_name(ConformResult::Verdict v) {
  switch (v) {
    case ConformResult::Verdict::kConforms: return "CONFORMS";
    case ConformResult::Verdict::kDeviates: return "DEVIATES";
    case ConformResult::Verdict::kViolates: return "VIOLATES";
    case ConformResult::Verdict::kInconclusive: return "INCONCLUSIVE";
    case ConformResult::Verdict::kPrefix: return "PREFIX";
  }
  return "?";
}

// ConformResult::limit as a phrase.
std::string limit_text(const std::string& limit) {
  if (limit == "max-states") return "the --max-states bound was reached";
  if (limit == "time-limit") return "the --time-limit ran out";
  if (limit == "interrupted") return "interrupted (SIGINT or SIGTERM)";
  if (limit == "lost-records") return "the recorder lost records, so the logs are incomplete";
  return limit;
}


int exit_of(ConformResult::Verdict v) {
  switch (v) {
    case ConformResult::Verdict::kConforms: return code(ExitCode::kConforms);
    case ConformResult::Verdict::kDeviates: return code(ExitCode::kDeviates);
    case ConformResult::Verdict::kViolates: return code(ExitCode::kConformViolates);
    case ConformResult::Verdict::kInconclusive: return code(ExitCode::kConformInconclusive);
    case ConformResult::Verdict::kPrefix: return code(ExitCode::kConformPrefix);
  }
  return code(ExitCode::kInternal);
}

json observation_json(const conform::Observation& o, size_t index) {
  json j{{"event", index + 1}, {"op", o.op},         {"args", o.args}, {"failed", o.failed},
         {"call", o.call},     {"source", o.source}, {"t", o.t_ns},    {"tid", o.tid}};
  for (const conform::Observation::Form& f : o.alternatives) j["or"].push_back(json{{"op", f.op}, {"args", f.args}});
  return j;
}

// The observation's operation, and the other forms it may stand for.
std::string forms_text(const conform::Observation& o) {
  std::string s = op_text(o.op, o.args);
  for (const conform::Observation::Form& f : o.alternatives) s += " or " + op_text(f.op, f.args);
  return s;
}

// One line per step of the matched run: the observation it matched, or "hidden".
struct RunStep {
  std::string actor;
  trace::SourceRef at;
  int event = -1;  // 0-based observation, -1 hidden
};

std::vector<RunStep> run_steps(model::ModelSystem& system, const ConformResult& r) {
  std::vector<RunStep> out;
  const lang::SourceManager& sources = *system.model().sources;
  for (size_t i = 0; i < r.path.actions.size(); ++i) {
    model::ActionInfo info = system.describe(r.path.states[i].data(), r.path.actions[i], nullptr);
    out.push_back(RunStep{info.actor, trace::source_ref(sources, info.span), r.matched[i]});
  }
  return out;
}

std::string observation_text(const std::vector<conform::Observation>& obs, size_t i) {
  const conform::Observation& o = obs[i];
  // the log's file name and line (the folder is in the report's list of logs)
  return fmt::format("event {}: {} {}{}", i + 1, std::filesystem::path(o.source).filename().string(), o.call,
                     o.failed ? " (failed)" : "");
}

// The spec's run as a report for the pictures: each step with the recorded calls it matched, the verdict as the title
// and, where the run stops (a deviation, a limit), the reason on the red line.
trace::Trace run_picture(model::ModelSystem& system, const ConformResult& r, const verbs::Observed& observed,
                         const std::string& spec) {
  const std::vector<conform::Observation>& obs = observed.observations;
  model::CheckResult cr;
  cr.path = r.path;
  if (r.verdict == ConformResult::Verdict::kViolates) {
    cr.outcome = model::Outcome::kViolated;
    cr.violation = r.violation;
  }
  trace::Trace t = trace::build_trace(system, cr, spec, "bfs");
  t.engine = "conform";
  for (size_t i = 0; i < t.steps.size() && i < r.matched.size(); ++i) {
    if (r.matched[i] < 0) continue;
    size_t first = static_cast<size_t>(r.matched[i]);
    size_t n = 0;
    for (const trace::Call& c : t.steps[i].calls) {
      for (const trace::ReplayStep& op : c.replay) {
        const lang::ReplayOpSpec* spec_op = verbs::replay_vocabulary().find(op.op, static_cast<int>(op.args.size()));
        n += spec_op && spec_op->host;
      }
    }
    std::string text;
    for (size_t k = first; k < first + std::max<size_t>(n, 1) && k < obs.size(); ++k) {
      text += (text.empty() ? "" : "; ") + observation_text(obs, k);
    }
    t.steps[i].observed = text;
  }
  switch (r.verdict) {
    case ConformResult::Verdict::kConforms:
      t.title = fmt::format("{}: the recorded run CONFORMS ({} observations)", spec, obs.size());
      break;
    case ConformResult::Verdict::kViolates:
      t.title = fmt::format("{}: the recorded run VIOLATES {} at event {}", spec, r.violation->property, r.event + 1);
      break;
    case ConformResult::Verdict::kDeviates: {
      t.title = fmt::format("{}: the recorded run DEVIATES at event {}", spec, r.event + 1);
      std::string allowed;
      for (const conform::Allowed& a : r.allowed) {
        for (const trace::ReplayStep& s : a.ops) allowed += (allowed.empty() ? "" : ", ") + op_text(s);
      }
      t.message = r.event < obs.size()
                      ? fmt::format("DEVIATES at {}: {}; the spec allowed: {}", observation_text(obs, r.event),
                                    op_text(obs[r.event].op, obs[r.event].args), allowed.empty() ? "nothing" : allowed)
                      : fmt::format("DEVIATES at the end of the log; the spec still had to make: {}", allowed);
      break;
    }
    case ConformResult::Verdict::kInconclusive:
      t.title = fmt::format("{}: INCONCLUSIVE: {} (matched {} of {} observations)", spec, limit_text(r.limit), r.event,
                            obs.size());
      break;
    case ConformResult::Verdict::kPrefix:
      t.title = fmt::format("{}: the recorded run is a PREFIX of a run of the spec, cut inside its last step ({} of its "
                            "{} calls made)", spec, r.cut_ops, r.step_ops);
      break;
  }
  return t;
}

}  // namespace

// --map LOG=EP[,EP...] into the endpoints of each log's plain-verbs QPs; "" or what is wrong with an entry.
static std::string plain_qp_map(const std::vector<std::string>& maps, const std::vector<std::string>& logs,
                         std::vector<std::vector<std::string>>& out) {
  for (const std::string& m : maps) {
    size_t eq = m.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == m.size()) {
      return fmt::format("--map '{}': expected LOG=ENDPOINT[,ENDPOINT...]", trace::printable(m, 200));
    }
    std::string log = m.substr(0, eq);
    std::vector<size_t> hits;
    for (size_t i = 0; i < logs.size(); ++i) {
      if (logs[i] == log) hits = {i};
    }
    if (hits.empty()) {
      for (size_t i = 0; i < logs.size(); ++i) {
        if (std::filesystem::path(logs[i]).filename() == log) hits.push_back(i);
      }
    }
    if (hits.size() != 1) {
      return fmt::format("--map '{}': '{}' is {} of the logs given", trace::printable(m, 200),
                         trace::printable(log, 200), hits.empty() ? "none" : "more than one");
    }
    std::vector<std::string>& names = out[hits[0]];
    if (!names.empty()) return fmt::format("--map: the log '{}' is mapped twice", trace::printable(log, 200));
    std::stringstream list(m.substr(eq + 1));
    for (std::string ep; std::getline(list, ep, ',');) {
      std::string name = verbs::endpoint_name(ep);
      if (name.empty()) {
        return fmt::format("--map '{}': '{}' is not an endpoint (ACTIVE, PASSIVE, ACTIVE[1], ...)",
                           trace::printable(m, 200), trace::printable(ep, 100));
      }
      names.push_back(name);
    }
  }
  return "";
}

void setup_conform(CLI::App& app, ConformOptions& opt) {
  app.add_option("spec", opt.spec, "the .qpspec the program is said to follow")->required();
  app.add_option("logs", opt.logs, "the call logs of the run, one per process (LD_PRELOAD recorder, "
                                   "docs/record-log.md)")
      ->required();
  app.add_option("--param", opt.params, "override a parameter: NAME=VALUE (repeatable)");
  app.add_option("--lib-dir", opt.lib_dirs, "extra folder searched by import (repeatable)");
  app.add_option("--format", opt.format, "output: text (default) or json")
      ->transform(enum_names<Format>({{"text", Format::kText}, {"json", Format::kJson}}));
  app.add_option("--max-states", opt.max_states, "model states held over the whole check (0: no bound)")
      ->check(count_validator())
      ->capture_default_str();
  app.add_option("--time-limit", opt.time_limit, "stop after this many seconds (0: none)")->check(seconds_validator());
  app.add_option("--svg", opt.svg, "write the spec's run as a message sequence chart with the observed calls "
                                   "beside its steps (SVG)")
      ->check(path_validator());
  app.add_option("--map", opt.maps, "LOG=ENDPOINT[,ENDPOINT...]: the endpoints of the QPs LOG creates with "
                                    "ibv_create_qp (plain verbs, no cm_id), in order (repeatable)");
  app.add_option("--html", opt.html, "the same chart in a standalone HTML page with the steps")->check(path_validator());
}

int run_conform(const ConformOptions& opt, std::ostream& out, std::ostream& err) {
  auto start = std::chrono::steady_clock::now();
  // No picture may overwrite an input (a log, the spec) or the other picture.
  {
    std::vector<std::pair<std::string, std::string>> inputs =
        spec_inputs({opt.spec}, lang::default_search_path(opt.lib_dirs));
    for (const std::string& l : opt.logs) inputs.emplace_back("log", l);
    if (std::string conflict = output_path_conflict({{"--svg", opt.svg}, {"--html", opt.html}}, inputs, false);
        !conflict.empty()) {
      err << "qpcheck: error: " << conflict << "\n";
      return code(ExitCode::kUsage);
    }
  }
  AtomicFile svg_file, html_file;
  for (auto [path, file] : {std::pair{&opt.svg, &svg_file}, std::pair{&opt.html, &html_file}}) {
    if (path->empty()) continue;
    if (std::string why = file->open(*path); !why.empty()) {
      err << fmt::format("qpcheck: error: cannot write '{}': {}\n", trace::printable(*path, 200), why);
      return code(ExitCode::kUsage);
    }
  }
  // The logs first: a bad log is named with its line and field before the spec is compiled.
  // One log per process: the same file twice (by inode, through any link) would be read as two processes.
  for (size_t i = 0; i < opt.logs.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {
      std::error_code ec;
      if (std::filesystem::equivalent(opt.logs[i], opt.logs[k], ec) && !ec) {
        err << fmt::format("qpcheck: error: the log '{}' is given twice (also as '{}'): give one log per process\n",
                           trace::printable(opt.logs[i], 200), trace::printable(opt.logs[k], 200));
        return code(ExitCode::kUsage);
      }
    }
  }
  std::vector<verbs::CallLog> logs;
  for (const std::string& path : opt.logs) {
    try {
      logs.push_back(verbs::read_call_log(path));
    } catch (const verbs::CallLogFileError& e) {
      err << "qpcheck: error: " << e.what() << "\n";
      return code(ExitCode::kUsage);
    } catch (const verbs::CallLogError& e) {
      err << trace::printable(e.what(), 400) << ": error: not a valid call log\n";
      return code(ExitCode::kUsage);
    }
  }
  frontend::Spec spec;
  lang::Compiled compiled;
  if (auto f = spec.attempt([&] {
        lang::ParamOverrides overrides = frontend::parse_param_assignments(opt.params);
        spec.read(opt.spec, lang::default_search_path(opt.lib_dirs));
        compiled = spec.compile(overrides);
      })) {
    err << f->text;
    return code(f->kind == frontend::Failure::Kind::kSpec ? ExitCode::kInvalidSpec : ExitCode::kUsage);
  }
  err << spec.render(compiled.warnings);
  const model::Model& m = *compiled.model;
  std::vector<std::string> ops = conform::replay_ops_used(m);
  std::vector<std::vector<std::string>> plain_qps(logs.size());
  if (std::string why = plain_qp_map(opt.maps, opt.logs, plain_qps); !why.empty()) {
    err << "qpcheck: error: " << why << "\n";
    return code(ExitCode::kUsage);
  }
  verbs::Observed observed;
  try {
    observed = verbs::observe(logs, ops, plain_qps);
  } catch (const verbs::CallLogError& e) {
    err << trace::printable(e.what(), 400) << ": error: the log cannot be read as a run of this spec\n";
    return code(ExitCode::kUsage);
  }

  conform::ConformLimits limits;
  limits.max_states = opt.max_states;
  if (opt.time_limit > 0) {
    limits.deadline = deadline_after(start, opt.time_limit);
  }
  limits.interrupt = &install_interrupt_handlers();
  model::BuildLimits build;
  build.deadline = limits.deadline;
  build.interrupt = limits.interrupt;
  model::ModelSystem system(m, build);
  ConformResult r = conform::check_conformance(system, verbs::replay_vocabulary(), observed.observations,
                                               observed.ended, limits);
  // A log the recorder could not write completely decides nothing: a deviation may be a lost call, a conforming
  // run may have lost the call that deviates (the verdict without the lost records is kept in the message).
  int64_t lost = 0;
  for (const verbs::CallLog& l : logs) lost += l.lost;
  if (lost > 0 && r.verdict != ConformResult::Verdict::kInconclusive) {
    observed.notes.push_back(fmt::format("the recorder lost {} record{}: without {}, the verdict would be {} at event {}",
                                         lost, lost == 1 ? "" : "s", lost == 1 ? "it" : "them",
                                         verdict_name(r.verdict),
                                         r.verdict == ConformResult::Verdict::kConforms ? r.event : r.event + 1));
    r.limit = "lost-records";
    r.verdict = ConformResult::Verdict::kInconclusive;
  }
  const std::vector<conform::Observation>& obs = observed.observations;
  std::vector<RunStep> steps = run_steps(system, r);
  const lang::SourceManager& sources = *m.sources;
  if (!opt.svg.empty() || !opt.html.empty()) {
    trace::Trace t = run_picture(system, r, observed, opt.spec);
    for (auto [path, file, render] : {std::tuple{&opt.svg, &svg_file, &trace::to_svg},
                                      std::tuple{&opt.html, &html_file, &trace::to_html}}) {
      if (path->empty()) continue;
      file->write(render(t));
      if (std::string why = file->commit(); !why.empty()) {
        err << fmt::format("qpcheck: error: writing '{}' failed ({}); the previous file is unchanged\n",
                           trace::printable(*path, 200), why);
        return code(ExitCode::kInternal);
      }
    }
  }

  if (opt.format == Format::kJson) {
    json j;
    j["conform_report"] = 1;
    j["spec"] = opt.spec;
    j["logs"] = opt.logs;
    j["params"] = json::array();
    for (const auto& [k, v] : m.params) j["params"].push_back(json{{"name", k}, {"value", v}});
    j["verdict"] = verdict_name(r.verdict);
    // 1-based; CONFORMS: the number of observations; a deviation at the end of the log: one past the last
    const bool all = r.verdict == ConformResult::Verdict::kConforms || r.verdict == ConformResult::Verdict::kPrefix;
    j["event"] = all ? r.event : r.event + 1;
    if (r.verdict == ConformResult::Verdict::kPrefix) j["cut"] = json{{"made", r.cut_ops}, {"of", r.step_ops}};
    if (r.event < obs.size()) j["observed"] = observation_json(obs[r.event], r.event);
    if (r.verdict == ConformResult::Verdict::kViolates) {
      j["property"] = r.violation->property;
      j["message"] = r.violation->message;
      j["refused"] = r.refused;
    }
    if (!r.limit.empty()) j["limit"] = r.limit;
    j["allowed"] = json::array();
    for (const conform::Allowed& a : r.allowed) {
      json ops_j = json::array();
      for (const trace::ReplayStep& s : a.ops) ops_j.push_back(op_text(s));
      trace::SourceRef at = trace::source_ref(sources, a.span);
      j["allowed"].push_back(json{{"actor", a.actor},
                                  {"ops", ops_j},
                                  {"at", json{{"file", at.file}, {"line", at.line}, {"text", at.text}}},
                                  {"fails", a.fails}});
    }
    j["observations"] = json::array();
    for (size_t i = 0; i < obs.size(); ++i) j["observations"].push_back(observation_json(obs[i], i));
    j["run"] = json::array();
    for (const RunStep& s : steps) {
      json st{{"actor", s.actor}, {"at", json{{"file", s.at.file}, {"line", s.at.line}, {"text", s.at.text}}}};
      if (s.event >= 0) st["event"] = s.event + 1;
      j["run"].push_back(st);
    }
    j["skipped"] = json::array();
    for (const conform::Skipped& s : observed.skipped) {
      j["skipped"].push_back(json{{"call", s.call}, {"why", s.why}, {"count", s.count}});
    }
    j["notes"] = observed.notes;
    j["stats"] = json{{"observations", obs.size()}, {"states", r.states}, {"widest", r.widest},
                      {"seconds", r.seconds}};
    out << j.dump(2) << "\n";
    return exit_of(r.verdict);
  }

  size_t calls = 0;
  for (const verbs::CallLog& l : logs) calls += l.calls.size();
  int skipped = 0;
  for (const conform::Skipped& s : observed.skipped) skipped += s.count;
  out << fmt::format("conform: {} against {} log{}: {} calls, {} observations, {} calls skipped\n",
                     trace::printable(opt.spec, 200), logs.size(), logs.size() == 1 ? "" : "s", calls, obs.size(),
                     skipped);
  for (const std::string& n : observed.notes) out << "note: " << trace::printable(n, 400) << "\n";
  auto show_obs = [&](size_t i) {
    const conform::Observation& o = obs[i];
    return fmt::format("event {} {}: {}{} <- {}", i + 1, trace::printable(o.source, 200),
                       trace::printable(forms_text(o), 200), o.failed ? " (failed)" : "", o.call);
  };
  switch (r.verdict) {
    case ConformResult::Verdict::kConforms:
      out << fmt::format("CONFORMS: all {} observations are steps of the spec{}\n", obs.size(),
                         observed.ended ? ", and its run can end where the program ended" : "");
      break;
    case ConformResult::Verdict::kViolates:
      out << fmt::format("VIOLATES at {}\n  the spec's step for this call fails {}: {}\n  {}\n", show_obs(r.event),
                         r.violation->property, trace::printable(r.violation->message, 400),
                         r.refused ? "the call failed: the device refused it, as the spec says"
                                   : "the call succeeded: the device let it pass (the spec forbids it all the same)");
      if (r.event + 1 < obs.size()) {
        out << fmt::format("  (the spec's runs end there: the {} later observations are not checked)\n",
                           obs.size() - r.event - 1);
      }
      break;
    case ConformResult::Verdict::kDeviates:
      if (r.event < obs.size()) {
        out << fmt::format("DEVIATES at {}\n", show_obs(r.event));
      } else {
        out << fmt::format("DEVIATES at the end of the log: the program exited, but every run of the spec that "
                           "matches the {} observations still has to make a call\n",
                           obs.size());
      }
      out << (r.allowed.empty() ? "  the spec allows no further call there\n" : "  the spec allowed there:\n");
      for (const conform::Allowed& a : r.allowed) {
        std::string ops_text;
        for (const trace::ReplayStep& s : a.ops) ops_text += (ops_text.empty() ? "" : ", ") + op_text(s);
        trace::SourceRef at = trace::source_ref(sources, a.span);
        out << fmt::format("    {:<12} {}{}   {}:{}: {}\n", a.actor, ops_text, a.fails.empty() ? "" : " (fails " + a.fails + ")",
                           at.file, at.line, trace::printable(at.text, 120));
      }
      break;
    case ConformResult::Verdict::kInconclusive:
      out << fmt::format("INCONCLUSIVE: {} (matched {} of {} observations)\n", limit_text(r.limit), r.event,
                         obs.size());
      break;
    case ConformResult::Verdict::kPrefix:
      out << fmt::format("PREFIX: the log ends without its trailer inside a step of the spec: all {} observations are "
                         "steps of the spec, the last {} of them the first {} of the {} calls of its last step (the "
                         "program stopped before it made the rest)\n",
                         obs.size(), r.cut_ops, r.cut_ops, r.step_ops);
      break;
  }
  out << fmt::format("the spec's run ({} steps: {} observed, {} hidden):\n", steps.size(),
                     std::count_if(steps.begin(), steps.end(), [](const RunStep& s) { return s.event >= 0; }),
                     std::count_if(steps.begin(), steps.end(), [](const RunStep& s) { return s.event < 0; }));
  for (size_t i = 0; i < steps.size(); ++i) {
    const RunStep& s = steps[i];
    std::string what = s.event >= 0 ? show_obs(static_cast<size_t>(s.event)) : "(hidden)";
    out << fmt::format("  {:>3} {:<14} {}:{}  {}\n", i + 1, s.actor, s.at.file, s.at.line, what);
  }
  if (!observed.skipped.empty()) {
    out << "skipped calls (no operation of the spec stands for them):\n";
    for (const conform::Skipped& s : observed.skipped) {
      // the call's name comes from the log as written: never raw control characters to the terminal
      out << fmt::format("  {:<20} x{:<4} {}\n", trace::printable(s.call, 80), s.count, trace::printable(s.why, 200));
    }
  }
  out << fmt::format("{} model states, widest {}, {:.3f} s\n", r.states, r.widest, r.seconds);
  return exit_of(r.verdict);
}

}  // namespace qpcheck::cli
