#include "checker/trace/render.h"

#include <stdexcept>

#include <fmt/format.h>

namespace qpcheck::trace {

namespace {

std::string human_bytes(uint64_t b) {
  if (b >= (1ULL << 30)) return fmt::format("{:.2f} GiB", b / double(1ULL << 30));
  if (b >= (1ULL << 20)) return fmt::format("{:.1f} MiB", b / double(1ULL << 20));
  if (b >= 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

std::string call_text(const Call& c) {
  std::string args;
  for (size_t i = 0; i < c.args.size(); ++i) args += (i ? ", " : "") + c.args[i];
  return fmt::format("{}({})", c.proc, args);
}

}  // namespace

std::string to_text(const Trace& t) {
  std::string out;
  std::string params;
  for (const auto& [k, v] : t.params) params += fmt::format("{}{}={}", params.empty() ? "" : " ", k, v);
  bool symbolic = t.engine != "explicit";  // the Z3 engines (bmc, kind): no state count, a depth and a reason
  if (t.verdict == "holds" && symbolic) {
    out += fmt::format("{}: HOLDS: every invariant and assertion holds in every reachable state ({} engine: {})\n",
                       t.spec, t.engine, t.limit);
  } else if (t.verdict == "inconclusive" && symbolic) {
    out += fmt::format("{}: INCONCLUSIVE ({} engine): {}\n", t.spec, t.engine, t.limit);
  } else if (t.verdict == "holds") {
    out += fmt::format("{}: HOLDS: every invariant and assertion holds in all {} reachable states\n", t.spec,
                       t.stats.states);
    if (!t.steps.empty()) {
      out += fmt::format("witness: a {}run of {} steps to a terminal valid end is in the JSON report (qpcheck "
                         "replay drives it on a device)\n", t.shortest ? "shortest " : "", t.steps.size());
    }
  } else if (t.verdict == "inconclusive" && (t.limit == "hash-compaction" || t.limit == "bitstate")) {
    out += fmt::format("{}: INCONCLUSIVE: no violation found in a partial search (--storage {}, {} states stored; "
                       "states may have been missed)\n", t.spec, t.limit, t.stats.states);
  } else if (t.verdict == "inconclusive") {
    out += fmt::format("{}: INCONCLUSIVE: stopped by --{} after {} states; no violation found so far\n", t.spec,
                       t.limit, t.stats.states);
  } else {
    out += fmt::format("{}: VIOLATED: {}\n", t.spec, t.property);
    out += fmt::format("  {}\n", t.message);
    if (!t.property_source.file.empty()) {
      out += fmt::format("  {}:{}:{}: {}\n", t.property_source.file, t.property_source.line, t.property_source.col,
                         t.property_source.text);
    }
    out += fmt::format("\nCounterexample: {} step{}{}\n", t.steps.size(), t.steps.size() == 1 ? "" : "s",
                       t.shortest ? (symbolic ? " (shortest: every shorter length refuted by Z3)" : " (shortest: BFS)")
                                   : " (not necessarily shortest)");
    for (const Step& s : t.steps) {
      std::string head = fmt::format("{:>3}. {}", s.index, s.actor);
      if (!s.is_rule && !s.at.empty()) head += fmt::format(" @{}", s.at);
      std::string loc = s.source.file.empty() ? "" : fmt::format("{}:{}", s.source.file, s.source.line);
      out += fmt::format("{}  [{}]\n", head, loc);
      out += fmt::format("       {}\n", s.source.text);
      std::vector<std::string> verbs;
      if (!s.verbs.empty()) verbs.push_back(s.verbs);
      for (const Call& c : s.calls) {
        verbs.push_back(c.verbs.empty() ? call_text(c) : fmt::format("{} = {}", c.verbs, call_text(c)));
      }
      for (const std::string& v : verbs) out += fmt::format("       > {}\n", v);
      for (const Change& c : s.changes) out += fmt::format("         {}: {} -> {}\n", c.name, c.before, c.after);
      if (s.failed) out += fmt::format("       ** this step violates {}: {}\n", t.property, t.message);
    }
    if (!t.steps.empty() && !t.steps.back().failed && t.kind != "deadlock") {
      out += fmt::format("       ** {} is false in the resulting state\n", t.property);
    }
    if (t.kind == "deadlock") out += "       ** no process or rule can move: deadlock\n";
    if (!t.final.empty()) {
      out += t.steps.empty() || t.steps.back().failed ? "\nProcesses when it happens:\n" : "\nProcesses in the last state:\n";
      for (const Position& p : t.final) {
        if (p.source.file.empty()) {
          out += fmt::format("  {:<12} {}\n", p.process, p.at);
        } else {
          out += fmt::format("  {:<12} {} [{}:{}]{}: {}\n", p.process, p.at, p.source.file, p.source.line,
                             p.blocked ? " blocked" : "", p.source.text);
        }
      }
    }
  }
  if (symbolic) {
    out += fmt::format("\nparams: {}\nstatistics: {} engine, depth {}, {:.3f} s, {} bits/state, peak RSS {}\n",
                       params.empty() ? "(none)" : params, t.engine, t.stats.depth, t.stats.seconds,
                       t.stats.state_bits, human_bytes(t.stats.peak_rss_bytes));
    return out;
  }
  out += fmt::format(
      "\nparams: {}\nstatistics: {} states, {} transitions, depth {}, {:.3f} s, {:.0f} states/s, "
      "{} bits/state packed, visited set {} ({:.1f} bytes/state), peak RSS {}\n",
      params.empty() ? "(none)" : params, t.stats.states, t.stats.transitions, t.stats.depth, t.stats.seconds,
      t.stats.states_per_second(), t.stats.state_bits, human_bytes(t.stats.store_bytes), t.stats.bytes_per_state(),
      human_bytes(t.stats.peak_rss_bytes));
  return out;
}

namespace {

nlohmann::json source_json(const SourceRef& s) {
  return {{"file", s.file}, {"line", s.line}, {"col", s.col}, {"text", s.text}};
}
SourceRef source_from(const nlohmann::json& j) {
  return SourceRef{j.at("file").get<std::string>(), j.at("line").get<int>(), j.at("col").get<int>(),
                   j.at("text").get<std::string>()};
}
nlohmann::json change_json(const Change& c) { return {{"name", c.name}, {"before", c.before}, {"after", c.after}}; }

}  // namespace

std::string dump_json(const nlohmann::json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

nlohmann::json to_json(const Trace& t) {
  nlohmann::json j;
  j["schema"] = kJsonSchema;
  j["version"] = kJsonVersion;
  j["spec"] = t.spec;
  j["params"] = nlohmann::json::object();
  for (const auto& [k, v] : t.params) j["params"][k] = v;
  j["engine"] = t.engine;
  j["strategy"] = t.strategy;
  j["verdict"] = t.verdict;
  if (!t.limit.empty()) j["limit"] = t.limit;
  if (t.verdict == "violated") {
    j["violation"] = {{"property", t.property}, {"kind", t.kind}, {"message", t.message},
                      {"source", source_json(t.property_source)}, {"shortest", t.shortest}};
  }
  if (t.verdict == "violated" || !t.steps.empty()) {  // a counterexample, or a witness schedule (verify --witness)
    nlohmann::json init = nlohmann::json::array();
    for (const Change& c : t.initial) init.push_back({{"name", c.name}, {"value", c.after}});
    j["initial"] = init;
    nlohmann::json steps = nlohmann::json::array();
    for (const Step& s : t.steps) {
      nlohmann::json js = {{"index", s.index}, {"actor", s.actor}, {"kind", s.is_rule ? "rule" : "process"},
                           {"source", source_json(s.source)}, {"failed", s.failed}};
      if (!s.verbs.empty()) js["verbs"] = s.verbs;
      if (!s.is_rule) js["at"] = s.at;
      js["calls"] = nlohmann::json::array();
      for (const Call& c : s.calls) {
        nlohmann::json jc = {{"proc", c.proc}, {"args", c.args}, {"verbs", c.verbs}};
        if (!c.replay.empty()) {
          jc["replay"] = nlohmann::json::array();
          for (const ReplayStep& r : c.replay) jc["replay"].push_back({{"op", r.op}, {"args", r.args}});
        }
        js["calls"].push_back(jc);
      }
      js["changes"] = nlohmann::json::array();
      for (const Change& c : s.changes) js["changes"].push_back(change_json(c));
      steps.push_back(js);
    }
    j["steps"] = steps;
    nlohmann::json fin = nlohmann::json::array();
    for (const Position& p : t.final) {
      fin.push_back({{"process", p.process}, {"at", p.at}, {"source", source_json(p.source)}, {"blocked", p.blocked}});
    }
    j["final"] = fin;
  }
  j["stats"] = {{"states", t.stats.states},
                {"transitions", t.stats.transitions},
                {"depth", t.stats.depth},
                {"seconds", t.stats.seconds},
                {"states_per_second", t.stats.states_per_second()},
                {"state_bits", t.stats.state_bits},
                {"store_bytes", t.stats.store_bytes},
                {"bytes_per_state", t.stats.bytes_per_state()},
                {"peak_rss_bytes", t.stats.peak_rss_bytes}};
  return j;
}

Trace from_json(const nlohmann::json& j) {
  auto field = [&](const nlohmann::json& obj, const char* name) -> const nlohmann::json& {
    if (!obj.is_object() || !obj.contains(name)) throw std::runtime_error(fmt::format("missing field '{}'", name));
    return obj.at(name);
  };
  if (!j.is_object()) throw std::runtime_error("not a JSON object");
  if (field(j, "schema") != kJsonSchema) {
    throw std::runtime_error(fmt::format("field 'schema' is {}, expected \"{}\"", field(j, "schema").dump(), kJsonSchema));
  }
  if (!field(j, "version").is_number_integer() || field(j, "version").get<int>() != kJsonVersion) {
    throw std::runtime_error(fmt::format("unsupported report version {} (this qpcheck reads version {})",
                                         field(j, "version").dump(), kJsonVersion));
  }
  Trace t;
  try {
    t.spec = field(j, "spec").get<std::string>();
    for (const auto& [k, v] : field(j, "params").items()) t.params.emplace_back(k, v.get<std::string>());
    t.engine = field(j, "engine").get<std::string>();
    t.strategy = field(j, "strategy").get<std::string>();
    t.verdict = field(j, "verdict").get<std::string>();
    if (j.contains("limit")) t.limit = j.at("limit").get<std::string>();
    if (t.verdict == "violated") {
      const auto& v = field(j, "violation");
      t.property = field(v, "property").get<std::string>();
      t.kind = field(v, "kind").get<std::string>();
      t.message = field(v, "message").get<std::string>();
      t.property_source = source_from(field(v, "source"));
      t.shortest = field(v, "shortest").get<bool>();
    }
    if (t.verdict == "violated" || j.contains("steps")) {
      for (const auto& c : field(j, "initial")) {
        std::string val = field(c, "value").get<std::string>();
        t.initial.push_back(Change{field(c, "name").get<std::string>(), val, val});
      }
      for (const auto& js : field(j, "steps")) {
        Step s;
        s.index = field(js, "index").get<int>();
        s.actor = field(js, "actor").get<std::string>();
        s.is_rule = field(js, "kind").get<std::string>() == "rule";
        if (js.contains("verbs")) s.verbs = js.at("verbs").get<std::string>();
        if (js.contains("at")) s.at = js.at("at").get<std::string>();
        s.source = source_from(field(js, "source"));
        s.failed = field(js, "failed").get<bool>();
        for (const auto& c : field(js, "calls")) {
          Call call{field(c, "proc").get<std::string>(), field(c, "args").get<std::vector<std::string>>(),
                    field(c, "verbs").get<std::string>(), {}};
          if (c.contains("replay")) {
            for (const auto& r : c.at("replay")) {
              call.replay.push_back(
                  ReplayStep{field(r, "op").get<std::string>(), field(r, "args").get<std::vector<std::string>>()});
            }
          }
          s.calls.push_back(std::move(call));
        }
        for (const auto& c : field(js, "changes")) {
          s.changes.push_back(Change{field(c, "name").get<std::string>(), field(c, "before").get<std::string>(),
                                     field(c, "after").get<std::string>()});
        }
        t.steps.push_back(std::move(s));
      }
      for (const auto& p : field(j, "final")) {
        t.final.push_back(Position{field(p, "process").get<std::string>(), field(p, "at").get<std::string>(),
                                   source_from(field(p, "source")), field(p, "blocked").get<bool>()});
      }
    }
    const auto& st = field(j, "stats");
    t.stats.states = field(st, "states").get<uint64_t>();
    t.stats.transitions = field(st, "transitions").get<uint64_t>();
    t.stats.depth = field(st, "depth").get<uint64_t>();
    t.stats.seconds = field(st, "seconds").get<double>();
    t.stats.state_bits = field(st, "state_bits").get<int>();
    t.stats.store_bytes = field(st, "store_bytes").get<uint64_t>();
    t.stats.peak_rss_bytes = field(st, "peak_rss_bytes").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("malformed report: {}", e.what()));
  }
  return t;
}

}  // namespace qpcheck::trace
