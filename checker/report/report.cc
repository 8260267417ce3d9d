#include "checker/report/report.h"

#include <fmt/format.h>

#include "checker/trace/render.h"

namespace qpcheck::report {

namespace {

using nlohmann::json;

std::string config_label(const gate::SpecResult& s, const gate::ConfigResult& c) {
  return fmt::format("{} [{}]", s.spec, c.name);
}

std::string steps_word(const gate::PropertyResult& p) {
  if (!p.counterexample) return "no counterexample";
  const trace::Trace& t = *p.counterexample;
  size_t n = t.steps.size();
  if (t.cycle_start >= 0) {  // a lasso (docs/liveness.md)
    size_t k = static_cast<size_t>(t.cycle_start);
    return k == n ? fmt::format("a lasso: {} step{}, then nothing enabled", n, n == 1 ? "" : "s")
                  : fmt::format("a lasso: a prefix of {} step{}, then a cycle of {} step{} repeated forever", k,
                                k == 1 ? "" : "s", n - k, n - k == 1 ? "" : "s");
  }
  return fmt::format("{} step{}", n, n == 1 ? "" : "s");
}

std::string where(const trace::SourceRef& r) {
  return r.file.empty() ? std::string("(default: holds)") : fmt::format("{}:{}:{}", r.file, r.line, r.col);
}

}  // namespace

std::string xml_escape(const std::string& text) { return trace::xml_escape(text); }

std::string to_junit(const std::vector<gate::SpecResult>& results) {
  gate::Counts n = gate::count(results);
  double total_seconds = 0;
  for (const auto& s : results) {
    for (const auto& c : s.configs) total_seconds += c.stats.seconds;
  }
  int errors = n.invalid_specs;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"qpcheck gate\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
                     "time=\"{:.6f}\">\n",
                     n.checks + errors, n.new_violations + n.no_longer_violated, errors, n.inconclusive,
                     total_seconds);
  for (const gate::SpecResult& s : results) {
    if (s.error_code != 0) {
      out += fmt::format("  <testsuite name=\"{}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" "
                         "time=\"0\">\n", xml_escape(s.spec));
      out += fmt::format("    <testcase name=\"spec\" classname=\"{}\" time=\"0\">\n", xml_escape(s.spec));
      out += fmt::format("      <error message=\"{}\" type=\"{}\">{}</error>\n",
                         s.error_code == 3 ? "invalid spec" : "unreadable spec",
                         s.error_code == 3 ? "invalid-spec" : "usage", xml_escape(s.error));
      out += "    </testcase>\n  </testsuite>\n";
    }
    for (const gate::ConfigResult& c : s.configs) {
      int failures = 0, skipped = 0;
      for (const auto& p : c.properties) {
        gate::Status st = p.status();
        if (st == gate::Status::kNewViolation || st == gate::Status::kNoLongerViolated) ++failures;
        if (st == gate::Status::kInconclusive) ++skipped;
      }
      std::string suite = config_label(s, c);
      out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
                         "time=\"{:.6f}\">\n",
                         xml_escape(suite), c.properties.size(), failures, skipped, c.stats.seconds);
      out += "    <properties>\n";
      for (const auto& [k, v] : c.params) {
        out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml_escape(k), xml_escape(v));
      }
      out += "    </properties>\n";
      for (const gate::PropertyResult& p : c.properties) {
        double seconds = p.counterexample ? p.counterexample->stats.seconds : 0;
        out += fmt::format("    <testcase name=\"{}\" classname=\"{}\" time=\"{:.6f}\">\n", xml_escape(p.name),
                           xml_escape(suite), seconds);
        switch (p.status()) {
          case gate::Status::kNewViolation:
            out += fmt::format("      <failure message=\"{}\" type=\"new-violation\">{}</failure>\n",
                               xml_escape(fmt::format("new violation of {} ({}); expected to hold", p.name,
                                                      steps_word(p))),
                               xml_escape(p.counterexample ? trace::to_text(*p.counterexample) : ""));
            break;
          case gate::Status::kNoLongerViolated:
            out += fmt::format("      <failure message=\"{}\" type=\"no-longer-violated\">{}</failure>\n",
                               xml_escape(fmt::format("{} is expected to be violated but holds", p.name)),
                               xml_escape(fmt::format("expectation: {}\nThe search was exhaustive: no reachable "
                                                      "state or step violates {}. Update the expectation if the "
                                                      "change fixed it.\n", where(p.expected_at), p.name)));
            break;
          case gate::Status::kInconclusive:
            out += fmt::format("      <skipped message=\"{}\"/>\n",
                               xml_escape(fmt::format("inconclusive: limit {} hit", c.limit)));
            break;
          case gate::Status::kAsExpected:
            if (p.counterexample) {
              out += fmt::format("      <system-out>{}</system-out>\n",
                                 xml_escape("expected violation:\n" + trace::to_text(*p.counterexample)));
            }
            break;
        }
        out += "    </testcase>\n";
      }
      out += "  </testsuite>\n";
    }
  }
  out += "</testsuites>\n";
  return out;
}

namespace {

json physical(const trace::SourceRef& r) {
  json region = {{"startLine", std::max(1, r.line)}};
  if (r.col > 0) region["startColumn"] = r.col;
  if (!r.text.empty()) region["snippet"] = {{"text", r.text}};
  return {{"physicalLocation", {{"artifactLocation", {{"uri", r.file}}}, {"region", region}}}};
}

json location_of(const trace::SourceRef& r) { return physical(r); }

}  // namespace

json to_sarif(const std::vector<gate::SpecResult>& results) {
  json rules = json::array();
  std::map<std::string, size_t> rule_index;
  auto rule = [&](const std::string& id, const std::string& text) -> size_t {
    auto it = rule_index.find(id);
    if (it != rule_index.end()) return it->second;
    rules.push_back({{"id", id}, {"shortDescription", {{"text", text}}}});
    return rule_index[id] = rules.size() - 1;
  };
  json out_results = json::array();
  auto add = [&](const std::string& rule_id, const std::string& rule_text, const std::string& level,
                 const std::string& message, const trace::SourceRef& at, json extra) {
    json r = {{"ruleId", rule_id}, {"ruleIndex", rule(rule_id, rule_text)}, {"level", level},
              {"message", {{"text", message}}}};
    if (!at.file.empty()) r["locations"] = json::array({location_of(at)});
    for (auto it = extra.begin(); it != extra.end(); ++it) r[it.key()] = it.value();
    out_results.push_back(std::move(r));
  };
  for (const gate::SpecResult& s : results) {
    if (s.error_code != 0) {
      trace::SourceRef at;
      at.file = s.spec;
      // "file:line:col: error: ..." -> the location of the first diagnostic when it names one
      int line = 0, col = 0;
      size_t p = s.error.find(": error: ");
      if (p != std::string::npos) {
        std::string head = s.error.substr(0, p);
        size_t c2 = head.rfind(':'), c1 = c2 == std::string::npos ? c2 : head.rfind(':', c2 - 1);
        if (c1 != std::string::npos) {
          try {
            line = std::stoi(head.substr(c1 + 1, c2 - c1 - 1));
            col = std::stoi(head.substr(c2 + 1));
            at.file = head.substr(0, c1);
          } catch (...) {
          }
        }
      }
      at.line = line;
      at.col = col;
      add("invalid-spec", "The spec does not parse or type-check", "error", s.error, at, json::object());
      continue;
    }
    for (const gate::ConfigResult& c : s.configs) {
      for (const gate::PropertyResult& p : c.properties) {
        json props = {{"spec", s.spec}, {"configuration", c.name},
                      {"expected", p.expected_violated ? "violated" : "holds"}, {"actual", p.actual},
                      {"status", gate::status_name(p.status())}};
        std::string rule_text = p.kind == "invariant" ? fmt::format("invariant {}: {}", p.name, p.source.text)
                                : p.kind == "fail"    ? fmt::format("property {} (fail/assert)", p.name)
                                : p.kind == "liveness" ? p.source.text
                                                      : p.name;
        if (p.actual == "violated") {
          bool unexpected = p.status() == gate::Status::kNewViolation;
          trace::SourceRef at = p.source;
          json extra = {{"properties", props}};
          if (p.counterexample) {
            const trace::Trace& t = *p.counterexample;
            if (!t.property_source.file.empty()) at = t.property_source;
            else if (!t.steps.empty()) at = t.steps.back().source;
            json locs = json::array();
            for (const trace::Step& st : t.steps) {
              std::string what = st.actor;
              for (const trace::Call& call : st.calls) {
                if (!call.verbs.empty()) { what += ": " + call.verbs; break; }
              }
              if (!st.verbs.empty()) what += ": " + st.verbs;
              json loc = physical(st.source);
              bool in_cycle = t.cycle_start >= 0 && st.index > t.cycle_start;  // a lasso's cycle, repeated forever
              loc["message"] = {{"text", fmt::format("step {}{}: {}", st.index, in_cycle ? " (cycle)" : "", what)}};
              locs.push_back({{"location", loc}, {"executionOrder", st.index}});
            }
            if (!locs.empty()) extra["codeFlows"] = json::array({{{"threadFlows", json::array({{{"locations", locs}}})}}});
          }
          add(p.name, rule_text, unexpected ? "error" : "note",
              fmt::format("{}{} is violated in configuration {} of {} ({}){}", unexpected ? "new violation: " : "",
                          p.name, c.name, s.spec, steps_word(p), unexpected ? "" : "; expected"),
              at, extra);
        } else if (p.status() == gate::Status::kNoLongerViolated) {
          add(p.name, rule_text, "error",
              fmt::format("{} is expected to be violated in configuration {} of {} but holds", p.name, c.name,
                          s.spec),
              p.expected_at.file.empty() ? p.source : p.expected_at, {{"properties", props}});
        }
        if (p.vacuous) {
          add("vacuous-property", "A property holds vacuously: nothing it talks about ever happens", "warning",
              fmt::format("{} holds vacuously in configuration {} of {}: {}", p.name, c.name, s.spec, p.vacuity),
              p.source, {{"properties", props}});
        }
      }
      for (const trace::SourceRef& r : c.coverage.statements_never_executed) {
        add("statement-never-executed", "A process statement is never executed in any reachable state", "note",
            fmt::format("never executed in configuration {} of {}: {}", c.name, s.spec, r.text), r,
            {{"properties", {{"spec", s.spec}, {"configuration", c.name}}}});
      }
    }
  }
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({{{"tool", {{"driver", {{"name", "qpcheck"}, {"rules", rules}}}}},
                                 {"results", out_results}}})}};
}

json to_summary(const std::vector<gate::SpecResult>& results) {
  gate::Counts n = gate::count(results);
  int code = gate::exit_code(n, results);
  json specs = json::array();
  for (const gate::SpecResult& s : results) {
    json js = {{"spec", s.spec}};
    js["error"] = s.error_code ? json(s.error) : json(nullptr);
    js["warnings"] = s.warnings;
    auto source = [](const trace::SourceRef& r) {
      return r.file.empty() ? json(nullptr) : json{{"file", r.file}, {"line", r.line}, {"col", r.col}, {"text", r.text}};
    };
    js["not_checked"] = json::array();
    for (const trace::PropertyNote& n : s.not_checked) {
      js["not_checked"].push_back({{"name", n.name}, {"by", n.by}, {"at", source(n.at)}, {"reason", n.reason}});
    }
    js["overrides"] = json::array();
    for (const trace::OverrideNote& o : s.overrides) {
      js["overrides"].push_back({{"kind", o.kind}, {"name", o.name}, {"original", source(o.original)},
                                 {"by", source(o.by)}});
    }
    json configs = json::array();
    for (const gate::ConfigResult& c : s.configs) {
      json params = json::object();
      for (const auto& [k, v] : c.params) params[k] = v;
      json props = json::array();
      for (const gate::PropertyResult& p : c.properties) {
        json jp = {{"name", p.name}, {"kind", p.kind}, {"expected", p.expected_violated ? "violated" : "holds"},
                   {"actual", p.actual}, {"status", gate::status_name(p.status())}, {"vacuous", p.vacuous}};
        jp["source"] = p.source.file.empty() ? json(nullptr)
                                             : json{{"file", p.source.file}, {"line", p.source.line},
                                                    {"col", p.source.col}, {"text", p.source.text}};
        jp["expected_at"] = p.expected_at.file.empty()
                                ? json(nullptr)
                                : json{{"file", p.expected_at.file}, {"line", p.expected_at.line},
                                       {"col", p.expected_at.col}};
        if (p.vacuous) jp["vacuity"] = p.vacuity;
        jp["counterexample"] = p.counterexample ? trace::to_json(*p.counterexample) : json(nullptr);
        props.push_back(std::move(jp));
      }
      json cov = nullptr;
      if (c.coverage.actions > 0) {
        json stmts = json::array();
        for (const auto& r : c.coverage.statements_never_executed) {
          stmts.push_back({{"file", r.file}, {"line", r.line}, {"col", r.col}, {"text", r.text}});
        }
        cov = {{"complete", c.coverage.complete}, {"actions", c.coverage.actions},
               {"actions_fired", c.coverage.actions_fired}, {"statements_never_executed", stmts},
               {"rules_never_fired", c.coverage.rules_never_fired}};
      }
      json jc = {{"name", c.name}, {"params", params}, {"properties", props}, {"coverage", cov},
                 {"stats", {{"states", c.stats.states}, {"transitions", c.stats.transitions},
                            {"depth", c.stats.depth}, {"seconds", c.stats.seconds}}}};
      jc["limit"] = c.limit.empty() ? json(nullptr) : json(c.limit);
      configs.push_back(std::move(jc));
    }
    js["configurations"] = configs;
    specs.push_back(std::move(js));
  }
  const char* verdict = code == 0 ? "pass" : code == 1 ? "fail" : code == 2 ? "inconclusive" : "error";
  return {{"schema", kSummarySchema}, {"version", kSummaryVersion}, {"verdict", verdict}, {"exit_code", code},
          {"counts", {{"specs", n.specs}, {"invalid_specs", n.invalid_specs}, {"configurations", n.configurations},
                      {"checks", n.checks}, {"as_expected", n.as_expected}, {"new_violations", n.new_violations},
                      {"no_longer_violated", n.no_longer_violated}, {"inconclusive", n.inconclusive},
                      {"vacuous", n.vacuous}}},
          {"specs", specs}};
}

std::string to_text(const std::vector<gate::SpecResult>& results, bool coverage) {
  std::string out;
  size_t wspec = 4, wconf = 13;
  for (const auto& s : results) {
    wspec = std::max(wspec, s.spec.size());
    for (const auto& c : s.configs) wconf = std::max(wconf, c.name.size());
  }
  out += fmt::format("{:<{}}  {:<{}}  {:<8}  {}\n", "spec", wspec, "configuration", wconf, "result", "violated");
  std::string details;
  for (const gate::SpecResult& s : results) {
    if (s.error_code != 0) {
      out += fmt::format("{:<{}}  {:<{}}  {:<8}  {}\n", s.spec, wspec, "-", wconf, "ERROR",
                         s.error_code == 3 ? "invalid spec" : "unreadable spec");
      details += fmt::format("\n{}: {}\n{}", s.spec, s.error_code == 3 ? "invalid spec" : "unreadable", s.error);
    }
    for (const gate::ConfigResult& c : s.configs) {
      std::string violated;
      bool bad = false, unknown = false;
      for (const gate::PropertyResult& p : c.properties) {
        gate::Status st = p.status();
        if (st == gate::Status::kNewViolation || st == gate::Status::kNoLongerViolated) bad = true;
        if (st == gate::Status::kInconclusive) unknown = true;
        if (p.actual == "violated") {
          violated += fmt::format("{}{} ({}{})", violated.empty() ? "" : ", ", p.name, steps_word(p),
                                  p.expected_violated ? "" : ", NEW");
        }
        if (st == gate::Status::kNewViolation) {
          details += fmt::format("\nNEW VIOLATION: {} in {} [{}]\n{}", p.name, s.spec, c.name,
                                 p.counterexample ? trace::to_text(*p.counterexample) : "");
        } else if (st == gate::Status::kNoLongerViolated) {
          details += fmt::format("\nNO LONGER VIOLATED: {} in {} [{}] holds; expected violated at {}\n", p.name,
                                 s.spec, c.name, where(p.expected_at));
        }
      }
      if (violated.empty()) violated = "-";
      out += fmt::format("{:<{}}  {:<{}}  {:<8}  {}\n", s.spec, wspec, c.name, wconf,
                         bad ? "FAIL" : unknown ? "UNKNOWN" : "ok", violated);
      if (&c == &s.configs.front()) {
        for (const trace::PropertyNote& n : s.not_checked) {
          out += fmt::format("    not checked: {} ({}{}{})\n", n.name,
                             n.by == "disable" ? "disabled at " + where(n.at)
                             : n.by == "check" ? "not named by the check at " + where(n.at)
                                               : n.by,
                             n.reason.empty() ? "" : ": ", n.reason);
        }
        for (const trace::OverrideNote& o : s.overrides) {
          out += fmt::format("    replaced: {} {} of {} by {}\n", o.kind, o.name, where(o.original), where(o.by));
        }
      }
      if (coverage) {
        for (const gate::PropertyResult& p : c.properties) {
          if (p.vacuous) out += fmt::format("    vacuous: {}: {}\n", p.name, p.vacuity);
        }
        if (!c.coverage.statements_never_executed.empty() || !c.coverage.rules_never_fired.empty()) {
          std::string stmts;
          const auto& never = c.coverage.statements_never_executed;
          for (size_t k = 0; k < never.size() && k < 4; ++k) {
            stmts += fmt::format("{}{}:{}", stmts.empty() ? "" : ", ", never[k].file, never[k].line);
          }
          if (never.size() > 4) stmts += fmt::format(" and {} more", never.size() - 4);
          out += fmt::format("    coverage: {}/{} actions fired; never executed: {}; rules never fired: {}\n",
                             c.coverage.actions_fired, c.coverage.actions, stmts.empty() ? "-" : stmts,
                             c.coverage.rules_never_fired.size());
        }
      }
    }
  }
  out += details;
  gate::Counts n = gate::count(results);
  int code = gate::exit_code(n, results);
  out += fmt::format("\ngate: {} spec{}, {} configuration{}, {} checks: {} as expected, {} new violation{}, {} no "
                     "longer violated, {} inconclusive, {} invalid spec{}, {} vacuous -> {}\n",
                     n.specs, n.specs == 1 ? "" : "s", n.configurations, n.configurations == 1 ? "" : "s", n.checks,
                     n.as_expected, n.new_violations, n.new_violations == 1 ? "" : "s", n.no_longer_violated,
                     n.inconclusive, n.invalid_specs, n.invalid_specs == 1 ? "" : "s", n.vacuous,
                     code == 0 ? "PASS" : code == 1 ? "FAIL" : code == 2 ? "INCONCLUSIVE" : "ERROR");
  return out;
}

}  // namespace qpcheck::report
