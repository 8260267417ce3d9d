#include "checker/cli/properties.h"

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checker/cli/exit_codes.h"
#include "checker/cli/progress.h"
#include "checker/gate/property_runs.h"
#include "checker/trace/render.h"

namespace qpcheck::cli {

int report_all_violations(model::Model& m, const lang::PropertyPlan& plan, const std::string& spec,
                          const explore::Options& eo, bool json, std::ostream& out, std::ostream& err,
                          AtomicFile* trace_file, const std::string& trace_path, trace::Names names) {
  gate::Options go;
  go.limits = eo.limits;
  go.check_deadlock = plan.deadlock;
  go.coverage = false;
  go.progress = eo.progress;
  go.interrupt = eo.interrupt;
  gate::PropertyCheck pc = gate::check_properties(m, plan.checked, go, spec);
  clear_progress();

  int violated = 0, open = 0;
  for (const gate::PropertyResult& p : pc.properties) {
    violated += p.actual == "violated";
    open += p.actual == "inconclusive";
  }
  // The report's body: the first violated property's counterexample (so that show and replay read it as any
  // verify report), else the reachability run's verdict.
  trace::Trace head;
  for (const gate::PropertyResult& p : pc.properties) {
    if (p.counterexample) {
      head = *p.counterexample;
      break;
    }
  }
  if (violated == 0) {
    head.spec = spec;
    head.params = m.params;
    head.verdict = open > 0 ? "inconclusive" : "holds";
    head.limit = pc.limit;
    head.stats = pc.stats;
    for (const model::Override& o : m.overrides) {
      head.overrides.push_back(trace::OverrideNote{o.kind, o.name, trace::SourceRef{}, trace::SourceRef{}});
    }
  }
  gate::note_properties(head, plan, *m.sources);
  std::vector<trace::Trace> counterexamples;
  for (const gate::PropertyResult& p : pc.properties) {
    if (!p.counterexample) continue;
    counterexamples.push_back(*p.counterexample);
    gate::note_properties(counterexamples.back(), plan, *m.sources);
  }
  // One event often breaks several properties (a Send to an empty receive queue is no_send_to_empty_rq and, from a
  // passive side, passive_send_after_peer_recv): a counterexample whose steps are an earlier one's is shown once,
  // the later property naming the first (same_as: property -> the property whose counterexample it repeats).
  std::map<std::string, std::string> same_as;
  {
    std::vector<std::pair<std::string, nlohmann::json>> seen;
    for (const trace::Trace& t : counterexamples) {
      nlohmann::json steps = trace::to_json(t)["steps"];
      for (const auto& [name, earlier] : seen) {
        if (earlier == steps) {
          same_as[t.property] = name;
          break;
        }
      }
      if (!same_as.count(t.property)) seen.emplace_back(t.property, std::move(steps));
    }
  }

  nlohmann::json j = trace::to_json(head);
  j["all_violations"] = true;
  j["results"] = nlohmann::json::array();
  for (const gate::PropertyResult& p : pc.properties) {
    nlohmann::json r = {{"property", p.name}, {"kind", p.kind}, {"verdict", p.actual},
                        {"length", p.counterexample ? nlohmann::json(p.counterexample->steps.size())
                                                    : nlohmann::json(nullptr)}};
    if (auto it = same_as.find(p.name); it != same_as.end()) r["same_counterexample_as"] = it->second;
    j["results"].push_back(std::move(r));
  }
  j["violations"] = nlohmann::json::array();
  for (const trace::Trace& t : counterexamples) j["violations"].push_back(trace::to_json(t));
  if (!pc.limit.empty()) j["limit"] = pc.limit;
  j["stats"]["states"] = pc.stats.states;
  j["stats"]["transitions"] = pc.stats.transitions;
  j["stats"]["depth"] = pc.stats.depth;

  if (json) {
    out << trace::dump_json(j);
  } else {
    std::string text = fmt::format("{}: {}: {} of {} checked properties violated{} (every reachable state explored: "
                                   "{} states; each violation with its own shortest counterexample)\n",
                                   spec, violated ? "VIOLATED" : open ? "INCONCLUSIVE" : "HOLDS", violated,
                                   pc.properties.size(), open ? fmt::format(", {} undecided", open) : "",
                                   pc.stats.states);
    if (!pc.limit.empty()) text += fmt::format("  stopped by --{}: not every state was explored\n", pc.limit);
    size_t width = 8;
    for (const gate::PropertyResult& p : pc.properties) width = std::max(width, p.name.size());
    for (const gate::PropertyResult& p : pc.properties) {
      std::string what = p.actual;
      if (p.actual == "violated" && p.counterexample) {
        size_t n = p.counterexample->steps.size();
        int k = p.counterexample->cycle_start;  // a lasso (docs/liveness.md): its prefix and cycle
        std::string same;
        if (auto it = same_as.find(p.name); it != same_as.end()) same = ", the counterexample of " + it->second;
        what = k < 0 ? fmt::format("violated ({} step{}{})", n, n == 1 ? "" : "s", same)
                     : fmt::format("violated (a lasso: {} step{} of prefix, then a cycle of {}{})", k,
                                   k == 1 ? "" : "s", n - static_cast<size_t>(k), same);
      }
      text += fmt::format("  {:<{}}  {}\n", p.name, width, what);
    }
    trace::Trace notes = head;
    notes.checked.clear();
    std::string header = trace::to_text(notes);
    // The "not checked" and "replaced" lines of the header (the first lines after the verdict).
    for (size_t pos = 0; pos < header.size();) {
      size_t nl = header.find('\n', pos);
      std::string line = header.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
      if (line.rfind("  not checked: ", 0) == 0 || line.rfind("  replaced: ", 0) == 0) text += line + "\n";
      if (nl == std::string::npos) break;
      pos = nl + 1;
    }
    for (const trace::Trace& t : counterexamples) {
      text += fmt::format("\n=== {} ===\n", t.property);
      std::string body = trace::to_text(trace::with_names(t, names));
      if (auto it = same_as.find(t.property); it != same_as.end()) {
        // the verdict and the violated property's place, then a pointer instead of the repeated steps
        size_t cut = body.find("\nCounterexample:");
        body = fmt::format("{}\nCounterexample: the {} steps of {} above, whose last state violates this property "
                           "too\n", body.substr(0, cut), t.steps.size(), it->second);
      }
      text += body;
    }
    out << text;
  }
  out.flush();
  if (trace_file != nullptr) {
    trace_file->write(trace::dump_json(j));
    if (std::string why = trace_file->commit(); !why.empty()) {
      err << fmt::format("qpcheck: error: writing --trace-out file '{}' failed ({}); the report above is "
                         "complete\n", trace::printable(trace_path, 200), why);
      return code(ExitCode::kInternal);
    }
  }
  if (violated) return code(ExitCode::kViolated);
  if (open) return code(ExitCode::kInconclusive);
  return code(ExitCode::kHolds);
}

}  // namespace qpcheck::cli
