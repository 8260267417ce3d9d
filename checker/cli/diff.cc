#include "checker/cli/diff.h"

#include <iostream>
#include <map>

#include <fmt/format.h>

#include "checker/cli/exit_codes.h"
#include "checker/cli/format_option.h"
#include "checker/cli/interrupt.h"
#include "checker/cli/progress.h"
#include "checker/trace/render.h"

namespace qpcheck::cli {

using nlohmann::json;

void setup_diff(CLI::App& app, DiffOptions& opt) {
  app.add_option("old", opt.old_spec, "the spec before the change")->required();
  app.add_option("new", opt.new_spec, "the spec after the change")->required();
  app.add_option("--format", opt.format, "text (Markdown) or json")
      ->transform(format_names());
  app.add_flag("--no-deadlock", opt.no_deadlock, "do not check deadlocks");
  app.add_option("--max-states", opt.max_states, "per search: stop (inconclusive) after this many states")
      ->check(count_validator());
  app.add_option("--time-limit", opt.time_limit, "per search: seconds")->check(seconds_validator());
  app.add_option("--lib-dir", opt.lib_dirs, "extra folder searched by import (repeatable)");
}

namespace {

std::string key_of(const gate::ConfigResult& c) {
  std::string k;
  for (const auto& [name, value] : c.params) k += (k.empty() ? "" : " ") + name + "=" + value;
  return k;
}

// Every parameter with its value, as an object (the gate's JSON summary writes "params" the same way).
json params_of(const gate::ConfigResult& c) {
  json o = json::object();
  for (const auto& [name, value] : c.params) o[name] = value;
  return o;
}

json outcome(const gate::PropertyResult& p) {
  json o = {{"verdict", p.actual}};
  o["steps"] = p.counterexample ? json(p.counterexample->steps.size()) : json(nullptr);
  return o;
}

}  // namespace

json diff_json(const gate::SpecResult& a, const gate::SpecResult& b) {
  std::map<std::string, const gate::ConfigResult*> old_by_key, new_by_key;
  for (const auto& c : a.configs) old_by_key[key_of(c)] = &c;
  for (const auto& c : b.configs) new_by_key[key_of(c)] = &c;
  json changes = json::array(), only_old = json::array(), only_new = json::array();
  int unchanged = 0;
  bool inconclusive = false;
  for (const auto& c : b.configs) {
    auto it = old_by_key.find(key_of(c));
    if (it == old_by_key.end()) {
      only_new.push_back({{"configuration", c.name}, {"params", params_of(c)}});
      continue;
    }
    const gate::ConfigResult& o = *it->second;
    for (const gate::PropertyResult& np : c.properties) {
      const gate::PropertyResult* op = nullptr;
      for (const auto& p : o.properties) {
        if (p.name == np.name) op = &p;
      }
      if (np.actual == "inconclusive" || (op && op->actual == "inconclusive")) inconclusive = true;
      if (op != nullptr && op->actual == np.actual) { ++unchanged; continue; }
      json ch = {{"configuration", c.name}, {"old_configuration", o.name}, {"params", params_of(c)},
                 {"property", np.name}, {"old", op ? outcome(*op) : json(nullptr)}, {"new", outcome(np)}};
      if (np.counterexample) ch["counterexample"] = trace::to_json(*np.counterexample);
      changes.push_back(std::move(ch));
    }
    for (const gate::PropertyResult& op : o.properties) {
      bool still = false;
      for (const auto& p : c.properties) still = still || p.name == op.name;
      if (!still) {
        changes.push_back({{"configuration", c.name}, {"old_configuration", o.name}, {"params", params_of(c)},
                           {"property", op.name}, {"old", outcome(op)}, {"new", nullptr}});
      }
    }
  }
  for (const auto& c : a.configs) {
    if (!new_by_key.count(key_of(c))) only_old.push_back({{"configuration", c.name}, {"params", params_of(c)}});
  }
  // Version 2: "params" is an object {name: value} (version 1 wrote the string "name=value ...").
  return {{"schema", "qpcheck.diff"}, {"version", 2}, {"old", a.spec}, {"new", b.spec}, {"changes", changes},
          {"unchanged", unchanged}, {"inconclusive", inconclusive}, {"only_in_old", only_old},
          {"only_in_new", only_new}};
}

std::string diff_text(const json& d) {
  auto verdict = [](const json& o) -> std::string {
    if (o.is_null()) return "(absent)";
    std::string v = o["verdict"].get<std::string>();
    if (v == "violated" && !o["steps"].is_null()) return fmt::format("**violated** ({} steps)", o["steps"].get<size_t>());
    return v;
  };
  std::string out = fmt::format("### qpcheck diff: `{}` -> `{}`\n\n", d["old"].get<std::string>(),
                                d["new"].get<std::string>());
  if (d["changes"].empty() && d["unchanged"].get<int>() == 0) {
    out += "Nothing compared: the two specs have no configuration in common (configurations are matched by every "
           "parameter's value).\n";
  } else if (d["changes"].empty()) {
    out += fmt::format("No verdict changes ({} property verdicts compared).\n", d["unchanged"].get<int>());
  } else {
    out += fmt::format("{} verdict change{} ({} unchanged):\n\n| configuration | property | before | after |\n"
                       "|---|---|---|---|\n",
                       d["changes"].size(), d["changes"].size() == 1 ? "" : "s", d["unchanged"].get<int>());
    for (const json& c : d["changes"]) {
      out += fmt::format("| {} | {} | {} | {} |\n", c["configuration"].get<std::string>(),
                         c["property"].get<std::string>(), verdict(c["old"]), verdict(c["new"]));
    }
  }
  auto list = [&](const char* key, const char* what) {
    if (d[key].empty()) return;
    out += fmt::format("\nConfigurations {}: ", what);
    bool first = true;
    for (const json& c : d[key]) {
      out += fmt::format("{}`{}`", first ? "" : ", ", c["configuration"].get<std::string>());
      first = false;
    }
    out += "\n";
  };
  list("only_in_old", "only in the old spec (not compared)");
  list("only_in_new", "only in the new spec (not compared)");
  return out;
}

int run_diff(const DiffOptions& opt, std::ostream& out, std::ostream& err) {
  gate::Options go;
  go.check_deadlock = !opt.no_deadlock;
  go.coverage = false;
  go.limits.max_states = opt.max_states;
  go.limits.time_limit_seconds = opt.time_limit;
  go.limits.max_memory_bytes = default_memory_limit();
  go.search_path = lang::default_search_path(opt.lib_dirs);
  go.progress = progress_printer();
  go.interrupt = &install_interrupt_handlers();
  gate::SpecResult a = gate::check_spec(opt.old_spec, go);
  gate::SpecResult b = gate::check_spec(opt.new_spec, go);
  clear_progress();
  for (const gate::SpecResult* s : {&a, &b}) {
    if (s->error_code != 0) {
      err << s->error;
      return s->error_code;
    }
  }
  json d = diff_json(a, b);
  if (opt.format == Format::kJson) out << trace::dump_json(d);
  else out << diff_text(d);
  if (interrupt_flag().load()) {
    err << fmt::format("qpcheck: interrupted (signal {}): the searches stopped where they were; their verdicts are "
                       "inconclusive\n", interrupt_signal());
  }
  if (!d["changes"].empty()) return code(ExitCode::kViolated);
  if (d["inconclusive"].get<bool>()) return code(ExitCode::kInconclusive);
  // No configuration in common: "no verdict changed" would claim what was never checked.
  if (d["unchanged"].get<int>() == 0) return code(ExitCode::kInconclusive);
  return code(ExitCode::kHolds);
}

}  // namespace qpcheck::cli
