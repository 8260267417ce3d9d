#include "checker/trace/render.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
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

std::string where(const SourceRef& s) { return s.file.empty() ? std::string() : fmt::format("{}:{}", s.file, s.line); }

// The report's header lines: what was not checked and what the spec replaced (empty when nothing was).
std::string header_notes(const Trace& t) {
  std::string out;
  // One line per reason, listing the properties it left out: "not checked (disabled at my.qpspec:3): a, b".
  std::vector<std::pair<std::string, std::string>> groups;  // why, names
  for (const PropertyNote& n : t.not_checked) {
    std::string why = n.by == "disable"      ? fmt::format("disabled at {}", where(n.at))
                      : n.by == "check"      ? fmt::format("not named by the check at {}", where(n.at))
                      : n.by == "--property" ? "not selected by --property"
                                             : n.by;
    if (!n.reason.empty()) why += ": " + n.reason;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == why; });
    if (it == groups.end()) groups.emplace_back(why, n.name);
    else it->second += ", " + n.name;
  }
  for (const auto& [why, names] : groups) out += fmt::format("  not checked ({}): {}\n", why, names);
  for (const OverrideNote& o : t.overrides) {
    out += fmt::format("  replaced: {} {} of {} by {}\n", o.kind, o.name, where(o.original), where(o.by));
  }
  return out;
}


// Length of the UTF-8 sequence starting at s[i], 0 if it is not valid UTF-8.
size_t utf8_len(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return 0;
  }
  return n;
}

// What a limit name in a report means, for the text report ("--max-states", "an interrupt (SIGINT or SIGTERM)").
std::string limit_text(const std::string& limit) {
  if (limit == "memory") return "an allocation failure (out of memory; --max-memory bounds the search)";
  if (limit == "interrupted") return "an interrupt (SIGINT or SIGTERM)";
  if (limit.empty()) return "a limit";
  return "--" + limit;
}

// The numbered steps of a counterexample or witness: actor, statement, calls, changes.
void append_steps(const Trace& t, std::string& out) {
  for (const Step& s : t.steps) {
    if (t.cycle_start >= 0 && s.index == t.cycle_start + 1) {
      out += fmt::format("  --- cycle: steps {}..{} repeat forever ---\n", s.index, t.steps.size());
    }
    std::string head = fmt::format("{:>3}. {}", s.index, s.actor);
    if (!s.is_rule && !s.at.empty()) head += fmt::format(" @{}", s.at);
    std::string loc = s.source.file.empty() ? "" : fmt::format("{}:{}", s.source.file, s.source.line);
    out += fmt::format("{}  [{}]\n", head, loc);
    out += fmt::format("       {}\n", s.source.text);
    std::vector<std::string> verbs;
    if (!s.verbs.empty()) verbs.push_back(s.verbs);
    for (const Call& c : s.calls) {
      verbs.push_back(c.verbs.empty() ? call_text(c) : fmt::format("{} = {}", c.verbs, call_text(c)));
      if (!c.replay.empty() && !c.replay.back().refused.empty()) {
        verbs.back() += fmt::format("  -> fails: {}", c.replay.back().refused);
      }
    }
    for (const std::string& v : verbs) out += fmt::format("       > {}\n", v);
    if (!s.observed.empty()) out += fmt::format("       = observed: {}\n", s.observed);
    for (const Change& c : s.changes) out += fmt::format("         {}: {} -> {}\n", c.name, c.before, c.after);
    if (s.failed) out += fmt::format("       ** this step violates {}: {}\n", t.property, t.message);
  }
  if (t.cycle_start >= 0 && static_cast<size_t>(t.cycle_start) < t.steps.size()) {
    out += fmt::format("  --- back to the state before step {}: the cycle repeats ---\n", t.cycle_start + 1);
  } else if (t.cycle_start >= 0) {
    out += "  --- nothing is enabled here: the run stays in this state forever ---\n";
  }
}

// The fairness line of a liveness report.
std::string fairness_text(const Trace& t) {
  if (t.fairness.empty()) return "  fairness: none (any process or rule may be starved by the others)\n";
  std::string f;
  for (const std::string& x : t.fairness) f += (f.empty() ? "" : "; ") + x;
  return fmt::format("  fairness: {}\n", f);
}

// One line per liveness property checked (with its figures), then the fairness; "" when there is none.
std::string liveness_lines(const Trace& t) {
  if (t.liveness.empty()) return "";
  std::string out;
  for (const Trace::LivenessResult& l : t.liveness) {
    out += fmt::format("  liveness {}: {} ({} product states, {} transitions, {:.3f} s)\n", l.property,
                       l.verdict == "holds" ? (t.fairness.empty() ? "holds on every run" : "holds on every fair run")
                                            : "INCONCLUSIVE: stopped by " + limit_text(l.limit),
                       l.states, l.transitions, l.seconds);
  }
  return out + fairness_text(t);
}

std::string to_text_unescaped(const Trace& t);

}  // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8_len(text, i);
    if (n == 0) { out += "\xEF\xBF\xBD"; ++i; continue; }
    if (n == 1) {
      char c = text[i];
      switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&apos;"; break;
        default:
          if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') out += "\xEF\xBF\xBD";
          else out += c;
      }
    } else {
      out.append(text, i, n);
    }
    i += n;
  }
  return out;
}

std::string terminal_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += fmt::format("\\u{:04x}", c);
    } else if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[++i]));  // a C1 control (CSI is U+009B)
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Spec text (comments, strings, file names) may hold control characters: the report shows them escaped.
std::string to_text(const Trace& t) { return terminal_text(to_text_unescaped(t)); }

namespace {

std::string to_text_unescaped(const Trace& t) {
  std::string out;
  std::string params;
  for (const auto& [k, v] : t.params) params += fmt::format("{}{}={}", params.empty() ? "" : " ", k, v);
  bool symbolic = t.engine != "explicit";  // the Z3 engines (bmc, kind): no state count, a depth and a reason
  std::string every = t.not_checked.empty() ? "every invariant and assertion" : "every checked property";
  if (t.verdict == "holds" && symbolic) {
    out += fmt::format("{}: HOLDS: {} holds in every reachable state ({} engine: {})\n", t.spec, every, t.engine,
                       t.limit);
    out += header_notes(t);
  } else if (t.verdict == "inconclusive" && symbolic) {
    out += fmt::format("{}: INCONCLUSIVE ({} engine): {}\n", t.spec, t.engine, t.limit);
    out += header_notes(t);
  } else if (t.verdict == "holds") {
    out += fmt::format("{}: HOLDS: {} holds in all {} reachable states\n", t.spec, every, t.stats.states);
    out += header_notes(t);
    out += liveness_lines(t);
    if (!t.steps.empty()) {
      out += fmt::format("\nWitness: {} step{} to a terminal valid end{}\n", t.steps.size(),
                         t.steps.size() == 1 ? "" : "s", t.shortest ? " (shortest: BFS)" : "");
      append_steps(t, out);
    }
  } else if (t.verdict == "inconclusive" && (t.limit == "hash-compaction" || t.limit == "bitstate")) {
    out += fmt::format("{}: INCONCLUSIVE: no violation found in a partial search (--storage {}, {} states stored; "
                       "states may have been missed)\n", t.spec, t.limit, t.stats.states);
    out += header_notes(t);
  } else if (t.verdict == "inconclusive" && !t.liveness.empty()) {
    // The safety search held; a liveness search (docs/liveness.md) was stopped.
    out += fmt::format("{}: INCONCLUSIVE: {} holds in all {} reachable states, but a liveness check was stopped by "
                       "{}\n", t.spec, every, t.stats.states, limit_text(t.limit));
    out += header_notes(t);
    out += liveness_lines(t);
  } else if (t.verdict == "inconclusive") {
    out += fmt::format("{}: INCONCLUSIVE: stopped by {} after {} states; no violation found so far\n", t.spec,
                       limit_text(t.limit), t.stats.states);
    out += header_notes(t);
  } else {
    out += fmt::format("{}: VIOLATED: {}\n", t.spec, t.property);
    out += fmt::format("  {}\n", t.message);
    if (!t.property_source.file.empty()) {
      out += fmt::format("  {}:{}:{}: {}\n", t.property_source.file, t.property_source.line, t.property_source.col,
                         t.property_source.text);
    }
    out += header_notes(t);
    if (t.kind == "liveness") out += fairness_text(t);
    if (t.cycle_start >= 0) {
      out += fmt::format("\nCounterexample (lasso): a prefix of {} step{}, then {}\n", t.cycle_start,
                         t.cycle_start == 1 ? "" : "s",
                         static_cast<size_t>(t.cycle_start) == t.steps.size()
                             ? std::string("no step is enabled: the run stays there (prefix shortest: BFS)")
                             : fmt::format("a cycle of {} step{} repeated forever (prefix shortest: BFS; cycle not "
                                           "necessarily shortest)", t.steps.size() - t.cycle_start,
                                           t.steps.size() - t.cycle_start == 1 ? "" : "s"));
    } else {
      out += fmt::format("\nCounterexample: {} step{}{}\n", t.steps.size(), t.steps.size() == 1 ? "" : "s",
                         t.shortest ? (symbolic ? " (shortest: every shorter length refuted by Z3)" : " (shortest: BFS)")
                                     : " (not necessarily shortest)");
    }
    append_steps(t, out);
    if (t.kind == "liveness" && t.cycle_start < 0) {
      out += fmt::format("       ** {} cannot be evaluated in the resulting state\n", t.property);
    } else if (!t.steps.empty() && !t.steps.back().failed && t.kind != "deadlock" && t.kind != "liveness") {
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
  std::string checked;
  for (const std::string& p : t.checked) checked += (checked.empty() ? "" : ", ") + p;
  std::string properties = checked.empty() ? "" : fmt::format("properties checked: {}\n", checked);
  if (symbolic) {
    out += fmt::format("\nparams: {}\n{}statistics: {} engine, depth {}, {:.3f} s, {} bits/state, peak RSS {}\n",
                       params.empty() ? "(none)" : params, properties, t.engine, t.stats.depth, t.stats.seconds,
                       t.stats.state_bits, human_bytes(t.stats.peak_rss_bytes));
    return out;
  }
  out += fmt::format(
      "\nparams: {}\n{}statistics: {} states, {} transitions, depth {}, {:.3f} s, {:.0f} states/s, "
      "{} bits/state packed, visited set {} ({:.1f} bytes/state), peak RSS {}\n",
      params.empty() ? "(none)" : params, properties, t.stats.states, t.stats.transitions, t.stats.depth, t.stats.seconds,
      t.stats.states_per_second(), t.stats.state_bits, human_bytes(t.stats.store_bytes), t.stats.bytes_per_state(),
      human_bytes(t.stats.peak_rss_bytes));
  return out;
}

nlohmann::json source_json(const SourceRef& s) {
  return {{"file", s.file}, {"line", s.line}, {"col", s.col}, {"text", s.text}};
}
nlohmann::json change_json(const Change& c) { return {{"name", c.name}, {"before", c.before}, {"after", c.after}}; }

}  // namespace

std::string dump_json(const nlohmann::json& doc) {
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

nlohmann::json to_json(const Trace& t) {
  nlohmann::json j;
  j["schema"] = kJsonSchema;
  j["version"] = t.cycle_start >= 0 ? kJsonLassoVersion : kJsonVersion;
  j["spec"] = t.spec;
  j["params"] = nlohmann::json::object();
  for (const auto& [k, v] : t.params) j["params"][k] = v;
  j["engine"] = t.engine;
  j["strategy"] = t.strategy;
  j["verdict"] = t.verdict;
  if (!t.checked.empty() || !t.not_checked.empty()) {
    nlohmann::json nc = nlohmann::json::array();
    for (const PropertyNote& n : t.not_checked) {
      nc.push_back({{"name", n.name}, {"by", n.by},
                    {"at", n.at.file.empty() ? nlohmann::json(nullptr) : source_json(n.at)}, {"reason", n.reason}});
    }
    j["properties"] = {{"checked", t.checked}, {"not_checked", nc}};
  }
  j["overrides"] = nlohmann::json::array();
  for (const OverrideNote& o : t.overrides) {
    j["overrides"].push_back({{"kind", o.kind}, {"name", o.name}, {"original", source_json(o.original)},
                              {"by", source_json(o.by)}});
  }
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
      if (!s.observed.empty()) js["observed"] = s.observed;
      if (!s.verbs.empty()) js["verbs"] = s.verbs;
      if (!s.is_rule) js["at"] = s.at;
      js["calls"] = nlohmann::json::array();
      for (const Call& c : s.calls) {
        nlohmann::json jc = {{"proc", c.proc}, {"args", c.args}, {"verbs", c.verbs}};
        if (!c.replay.empty()) {
          jc["replay"] = nlohmann::json::array();
          for (const ReplayStep& r : c.replay) {
            nlohmann::json jr = {{"op", r.op}, {"args", r.args}};
            if (!r.refused.empty()) jr["refused"] = r.refused;
            jc["replay"].push_back(jr);
          }
        }
        js["calls"].push_back(jc);
      }
      js["changes"] = nlohmann::json::array();
      for (const Change& c : s.changes) js["changes"].push_back(change_json(c));
      steps.push_back(js);
    }
    j["steps"] = steps;
    j["length"] = t.steps.size();  // checked by from_json: a cut "steps" array is refused
    nlohmann::json fin = nlohmann::json::array();
    for (const Position& p : t.final) {
      fin.push_back({{"process", p.process}, {"at", p.at}, {"source", source_json(p.source)}, {"blocked", p.blocked}});
    }
    j["final"] = fin;
    if (t.cycle_start >= 0) {
      j["cycle"] = {{"start", t.cycle_start + 1}, {"length", t.steps.size() - t.cycle_start}};
    }
  }
  if (!t.fairness.empty()) j["fairness"] = t.fairness;
  if (!t.liveness.empty()) {
    j["liveness"] = nlohmann::json::array();
    for (const Trace::LivenessResult& l : t.liveness) {
      nlohmann::json jl = {{"property", l.property}, {"verdict", l.verdict}, {"states", l.states},
                           {"transitions", l.transitions}, {"seconds", l.seconds}};
      if (!l.limit.empty()) jl["limit"] = l.limit;
      j["liveness"].push_back(jl);
    }
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

namespace {

// The escaped form of at most `max` bytes of `text` (a UTF-8 sequence is not cut in two); *cut when some was left out.
std::string escaped_prefix(std::string_view text, size_t max, bool quote, bool* cut) {
  std::string out;
  size_t n = std::min(max, text.size());
  while (n < text.size() && n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      // UTF-8: a valid sequence is kept, except the C1 controls U+0080..U+009F (CSI is U+009B); any other byte is
      // shown as \xNN (a terminal must never see an escape sequence or a broken one).
      size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
      bool ok = len > 0 && i + len <= n;
      for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
      if (ok && len >= 3) {
        unsigned char d = static_cast<unsigned char>(text[i + 1]);
        ok = !(c == 0xE0 && d < 0xA0) && !(c == 0xED && d >= 0xA0) && !(c == 0xF0 && d < 0x90) &&
             !(c == 0xF4 && d >= 0x90);  // overlong, surrogate, beyond U+10FFFF
      }
      if (!ok) {
        out += fmt::format("\\x{:02x}", c);
      } else if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
        out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
        i += 1;
      } else {
        out.append(text.substr(i, len));
        i += len - 1;
      }
      continue;
    }
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\u{:04x}", c);
        else if (quote && (c == '"' || c == '\\')) out += {'\\', static_cast<char>(c)};
        else out += static_cast<char>(c);
    }
  }
  *cut = n < text.size();
  return out;
}

}  // namespace

std::string printable(std::string_view text, size_t max) {
  bool cut = false;
  std::string out = escaped_prefix(text, max, false, &cut);
  return cut ? out + fmt::format("... ({} bytes)", text.size()) : out;
}

std::string quote_value(std::string_view text) {
  bool cut = false;
  std::string out = "\"" + escaped_prefix(text, 80, true, &cut) + "\"";
  return cut ? out + fmt::format("... ({} bytes)", text.size()) : out;
}

namespace {

// A value in an error message: never dumped whole (a deep value would recurse, a long one would flood the terminal).
std::string shown(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::string: return trace::quote_value(v.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: return fmt::format("an array of {} elements", v.size());
    case nlohmann::json::value_t::object: return fmt::format("an object of {} fields", v.size());
    case nlohmann::json::value_t::null: return "null";
    default: return v.dump();  // numbers and booleans
  }
}

// One JSON object of the report with its path ("steps[2].source"): typed, range-checked accessors whose errors
// name the field.
class Fields {
 public:
  Fields(const nlohmann::json& obj, std::string path) : obj_(obj), path_(std::move(path)) {
    if (!obj_.is_object()) {
      throw ReportError(path_.empty() ? "not a JSON object"
                                      : fmt::format("field '{}' must be an object, found {}", path_, shown(obj_)));
    }
  }
  std::string name(std::string_view field) const {
    return path_.empty() ? std::string(field) : fmt::format("{}.{}", path_, field);
  }
  bool has(const char* field) const { return obj_.contains(field); }
  const nlohmann::json& at(const char* field) const {
    auto it = obj_.find(field);
    if (it == obj_.end()) throw ReportError(fmt::format("missing field '{}'", name(field)));
    return *it;
  }
  [[noreturn]] void bad(const char* field, const std::string& want) const {
    throw ReportError(fmt::format("field '{}' must be {}, found {}", name(field), want, shown(at(field))));
  }
  std::string str(const char* field) const {
    if (!at(field).is_string()) bad(field, "a string");
    return at(field).get<std::string>();
  }
  std::string str_or_empty(const char* field) const { return has(field) ? str(field) : std::string(); }
  std::string one_of(const char* field, std::initializer_list<const char*> names) const {
    std::string v = str(field), want;
    for (const char* n : names) {
      if (v == n) return v;
      want += fmt::format("{}\"{}\"", want.empty() ? "" : " or ", n);
    }
    bad(field, want);
  }
  bool boolean(const char* field) const {
    if (!at(field).is_boolean()) bad(field, "true or false");
    return at(field).get<bool>();
  }
  int64_t integer(const char* field, int64_t lo, int64_t hi) const {
    const nlohmann::json& v = at(field);
    std::string want = fmt::format("an integer in {}..{}", lo, hi);
    if (v.is_number_unsigned()) {
      uint64_t u = v.get<uint64_t>();  // a non-negative JSON integer is unsigned: check both ends here too
      if (u > static_cast<uint64_t>(hi) || (lo > 0 && u < static_cast<uint64_t>(lo))) bad(field, want);
      return static_cast<int64_t>(v.get<uint64_t>());
    }
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi) bad(field, want);
    return v.get<int64_t>();
  }
  uint64_t count(const char* field) const {
    const nlohmann::json& v = at(field);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
      bad(field, "a non-negative integer");
    }
    return v.get<uint64_t>();
  }
  double seconds(const char* field) const {
    const nlohmann::json& v = at(field);
    if (!v.is_number() || !(v.get<double>() >= 0)) bad(field, "a non-negative number");
    return v.get<double>();
  }
  const nlohmann::json& array(const char* field) const {
    if (!at(field).is_array()) bad(field, "an array");
    return at(field);
  }
  Fields object(const char* field) const { return Fields(at(field), name(field)); }
  Fields element(const char* field, size_t i) const {
    return Fields(array(field)[i], fmt::format("{}[{}]", name(field), i));
  }
  std::vector<std::string> strings(const char* field) const {
    std::vector<std::string> out;
    const nlohmann::json& a = array(field);
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_string()) {
        throw ReportError(fmt::format("field '{}[{}]' must be a string, found {}", name(field), i, shown(a[i])));
      }
      out.push_back(a[i].get<std::string>());
    }
    return out;
  }
  const nlohmann::json& json() const { return obj_; }
  const std::string& path() const { return path_; }

 private:
  const nlohmann::json& obj_;
  std::string path_;
};

SourceRef source_from(const Fields& f) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  return SourceRef{f.str("file"), static_cast<int>(f.integer("line", 0, kMax)),
                   static_cast<int>(f.integer("col", 0, kMax)), f.str("text")};
}

}  // namespace

Trace from_json(const nlohmann::json& j) {
  Fields doc(j, "");
  if (!doc.at("schema").is_string() || doc.str("schema") != kJsonSchema) {
    throw ReportError(fmt::format("field 'schema' is {}, expected \"{}\"", shown(doc.at("schema")), kJsonSchema));
  }
  const nlohmann::json& version = doc.at("version");
  const bool v1 = version.is_number_integer() && version.get<int64_t>() == kJsonVersion &&
                  !(version.is_number_unsigned() && version.get<uint64_t>() != static_cast<uint64_t>(kJsonVersion));
  const bool v2 = version.is_number_integer() && version.get<int64_t>() == kJsonLassoVersion &&
                  !(version.is_number_unsigned() &&
                    version.get<uint64_t>() != static_cast<uint64_t>(kJsonLassoVersion));
  if (!v1 && !v2) {
    throw ReportError(fmt::format("unsupported report version {} (this qpcheck reads versions {} and {})",
                                  shown(version), kJsonVersion, kJsonLassoVersion));
  }
  Trace t;
  t.spec = doc.str("spec");
  Fields params = doc.object("params");
  for (const auto& [k, v] : params.json().items()) {
    if (!v.is_string())
      throw ReportError(fmt::format("field 'params.{}' must be a string, found {}", printable(k, 80), shown(v)));
    t.params.emplace_back(k, v.get<std::string>());
  }
  t.engine = doc.str("engine");
  t.strategy = doc.str("strategy");
  t.verdict = doc.one_of("verdict", {"holds", "violated", "inconclusive"});
  t.limit = doc.str_or_empty("limit");
  if (t.verdict == "violated") {
    Fields v = doc.object("violation");
    t.property = v.str("property");
    t.kind = v.one_of("kind", {"invariant", "fail", "runtime_error", "deadlock", "liveness"});
    t.message = v.str("message");
    t.property_source = source_from(v.object("source"));
    t.shortest = v.boolean("shortest");
  }
  if (t.verdict == "violated" || doc.has("steps")) {
    // the values the steps start from; each change must start where the previous steps left its unit
    std::map<std::string, std::string> value;
    const nlohmann::json& initial = doc.array("initial");
    for (size_t i = 0; i < initial.size(); ++i) {
      Fields c = doc.element("initial", i);
      std::string val = c.str("value");
      t.initial.push_back(Change{c.str("name"), val, val});
      value[t.initial.back().name] = val;
    }
    const nlohmann::json& steps = doc.array("steps");
    for (size_t i = 0; i < steps.size(); ++i) {
      Fields js = doc.element("steps", i);
      Step s;
      int64_t index = js.integer("index", 1, std::numeric_limits<int>::max());
      if (index != static_cast<int64_t>(i) + 1) {
        throw ReportError(fmt::format("field '{}' is {}, expected {} (steps are numbered 1..n in order)",
                                      js.name("index"), index, i + 1));
      }
      s.index = static_cast<int>(index);
      s.actor = js.str("actor");
      s.is_rule = js.one_of("kind", {"process", "rule"}) == "rule";
      s.verbs = js.str_or_empty("verbs");
      s.at = js.str_or_empty("at");
      s.source = source_from(js.object("source"));
      s.failed = js.boolean("failed");
      s.observed = js.str_or_empty("observed");
      if (s.failed && (t.verdict != "violated" || i + 1 != steps.size())) {
        throw ReportError(fmt::format("field '{}' is true, but only the last step of a violated trace can fail",
                                      js.name("failed")));
      }
      const nlohmann::json& calls = js.array("calls");
      for (size_t k = 0; k < calls.size(); ++k) {
        Fields c = js.element("calls", k);
        Call call{c.str("proc"), c.strings("args"), c.str("verbs"), {}};
        if (c.has("replay")) {
          const nlohmann::json& replay = c.array("replay");
          for (size_t r = 0; r < replay.size(); ++r) {
            Fields op = c.element("replay", r);
            call.replay.push_back(ReplayStep{op.str("op"), op.strings("args"), op.str_or_empty("refused")});
          }
        }
        s.calls.push_back(std::move(call));
      }
      const nlohmann::json& changes = js.array("changes");
      for (size_t k = 0; k < changes.size(); ++k) {
        Fields c = js.element("changes", k);
        Change ch{c.str("name"), c.str("before"), c.str("after")};
        auto it = value.find(ch.name);
        if (it == value.end()) {
          throw ReportError(fmt::format("field '{}' is {}, which is not in 'initial'", c.name("name"), trace::quote_value(ch.name)));
        }
        if (it->second != ch.before) {
          throw ReportError(fmt::format("field '{}' is {}, but the steps before leave {} at {} (steps missing or out "
                                        "of order?)", c.name("before"), trace::quote_value(ch.before), trace::quote_value(ch.name),
                                        trace::quote_value(it->second)));
        }
        it->second = ch.after;
        s.changes.push_back(std::move(ch));
      }
      t.steps.push_back(std::move(s));
    }
    // "length" (added in version 1; older reports lack it) says how many steps were written
    if (doc.has("length")) {
      int64_t length = doc.integer("length", 0, std::numeric_limits<int>::max());
      if (length != static_cast<int64_t>(t.steps.size())) {
        throw ReportError(fmt::format("field 'length' is {}, but 'steps' holds {} (a truncated trace?)", length,
                                      t.steps.size()));
      }
    }
    const nlohmann::json& fin = doc.array("final");
    for (size_t i = 0; i < fin.size(); ++i) {
      Fields p = doc.element("final", i);
      Position pos{p.str("process"), p.str("at"), source_from(p.object("source")), p.boolean("blocked")};
      // the last state's program counters, as the steps leave them
      auto it = value.find(pos.process + "@");
      if (it != value.end() && it->second != pos.at) {
        throw ReportError(fmt::format("field '{}' is {}, but the steps leave {} at {} (a truncated trace?)",
                                      p.name("at"), trace::quote_value(pos.at), trace::quote_value(pos.process), trace::quote_value(it->second)));
      }
      t.final.push_back(std::move(pos));
    }
    if (doc.has("cycle")) {
      if (!v2) throw ReportError("field 'cycle' (a lasso) needs report version 2, found version 1");
      Fields c = doc.object("cycle");
      int64_t n = static_cast<int64_t>(t.steps.size());
      int64_t start = c.integer("start", 1, n + 1);
      int64_t length = c.integer("length", 0, n);
      if (start + length != n + 1) {
        throw ReportError(fmt::format("field 'cycle' says steps {}..{} but the report has {} steps (a truncated "
                                      "trace?)", start, start + length - 1, n));
      }
      if (t.verdict != "violated" || t.kind != "liveness") {
        throw ReportError(fmt::format("field 'cycle' (a lasso) belongs to a violated liveness property, but the "
                                      "report's verdict is {} and its violation kind {}",
                                      trace::quote_value(t.verdict), trace::quote_value(t.kind)));
      }
      // The cycle must close: the state after the last step is the state before step `start`, so every variable the
      // cycle changes ends where it was (the first change's `before` is the last change's `after`).
      std::map<std::string, std::pair<std::string, std::string>> net;  // name -> (first before, last after)
      for (size_t i = static_cast<size_t>(start - 1); i < t.steps.size(); ++i) {
        for (const Change& c : t.steps[i].changes) {
          auto [it, fresh] = net.try_emplace(c.name, c.before, c.after);
          if (!fresh) it->second.second = c.after;
        }
      }
      for (const auto& [name, ends] : net) {
        if (ends.first != ends.second) {
          throw ReportError(fmt::format("field 'cycle' says steps {}..{} repeat, but they change '{}' from {} to {}: "
                                        "the cycle does not return to the state before step {}",
                                        start, n, trace::printable(name, 80), trace::quote_value(ends.first),
                                        trace::quote_value(ends.second), start));
        }
      }
      t.cycle_start = static_cast<int>(start - 1);
    } else if (v2) {
      throw ReportError("report version 2 without field 'cycle' (version 2 is a lasso)");
    }
    bool ends_failing = !t.steps.empty() && t.steps.back().failed;
    if ((t.kind == "fail" || t.kind == "runtime_error") && !t.steps.empty() && !ends_failing) {
      throw ReportError(fmt::format("the {} violation's last step ({}) does not fail: a truncated counterexample?",
                                    t.kind, t.steps.size()));
    }
    if (t.kind == "deadlock" || (t.verdict == "holds" && !t.steps.empty())) {
      for (size_t i = 0; i < t.final.size(); ++i) {
        if (!t.final[i].blocked) {
          throw ReportError(fmt::format("field 'final[{}].blocked' is false, but the trace ends in a {} (a truncated "
                                        "trace?)", i, t.kind == "deadlock" ? "deadlock" : "terminal state"));
        }
      }
    }
  }
  if (doc.has("fairness")) t.fairness = doc.strings("fairness");
  Fields st = doc.object("stats");
  t.stats.states = st.count("states");
  t.stats.transitions = st.count("transitions");
  t.stats.depth = st.count("depth");
  t.stats.seconds = st.seconds("seconds");
  t.stats.state_bits = static_cast<int>(st.integer("state_bits", 0, std::numeric_limits<int>::max()));
  t.stats.store_bytes = st.count("store_bytes");
  t.stats.peak_rss_bytes = st.count("peak_rss_bytes");
  return t;
}

namespace {

// Builds the document from nlohmann's SAX events, so that nesting is bounded (kMaxTraceDepth) before a deep value
// exists, and a syntax error or an out-of-range number ("version": 1e400) names the field it is in.
class BoundedBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  nlohmann::json root;

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return put(v); }
  bool number_unsigned(number_unsigned_t v) override { return put(v); }
  bool number_float(number_float_t v, const string_t&) override { return put(v); }
  bool string(string_t& v) override { return put(std::move(v)); }
  bool binary(binary_t& v) override { return put(nlohmann::json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(nlohmann::json::object()); }
  bool key(string_t& k) override {
    open_.back().key = std::move(k);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(nlohmann::json::array()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    std::string what = ex.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
    if (size_t b = what.find("] "); b != std::string::npos) what = what.substr(b + 2);
    std::string field = where();
    throw ReportError(fmt::format("corrupt or truncated JSON at byte {}{}: {}", position,
                                  field.empty() ? "" : fmt::format(" (in field '{}')", field), printable(what, 200)));
  }

 private:
  struct Open {
    nlohmann::json* value;
    std::string key;  // objects: the key being read
  };

  nlohmann::json* slot() {
    if (open_.empty()) return &root;
    Open& o = open_.back();
    if (o.value->is_array()) {
      o.value->push_back(nullptr);
      return &o.value->back();
    }
    return &(*o.value)[o.key];
  }
  bool put(nlohmann::json v) {
    *slot() = std::move(v);
    return true;
  }
  bool open(nlohmann::json v) {
    if (static_cast<int>(open_.size()) >= kMaxTraceDepth) {
      throw ReportError(fmt::format("arrays and objects nest deeper than {} levels (in field '{}'): not a qpcheck "
                                    "report", kMaxTraceDepth, where()));
    }
    nlohmann::json* s = slot();
    *s = std::move(v);
    open_.push_back(Open{s, {}});
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }
  // "steps[3].calls[0].args", the field being read
  std::string where() const {
    std::string out;
    for (const Open& o : open_) {
      // the innermost array's next element is being read; an outer one's last element is open
      bool inner = &o == &open_.back();
      if (o.value->is_array()) out += fmt::format("[{}]", o.value->size() - (inner || o.value->empty() ? 0 : 1));
      else if (!o.key.empty()) out += (out.empty() ? "" : ".") + printable(o.key, 80);
      if (out.size() > 120) return out.substr(0, 120) + "...";
    }
    return out;
  }

  std::vector<Open> open_;
};

}  // namespace

Trace read_trace_file(const std::string& path) {
  std::error_code ec;
  // Only regular files: a FIFO would block forever, a device (/dev/zero) never ends, a directory reads as nothing.
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw TraceFileError(fmt::format("cannot read trace file '{}' (missing, unreadable or not a regular file)",
                                     printable(path, 200)));
  }
  std::ifstream in(path, std::ios::binary);
  // at most one byte past the limit (the file may grow while it is read)
  uintmax_t size = std::filesystem::file_size(path, ec);
  std::string text(std::min<uintmax_t>(ec ? kMaxTraceBytes : size, kMaxTraceBytes) + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (!in && !in.eof()) {
    throw TraceFileError(fmt::format("cannot read trace file '{}' (missing, unreadable or not a regular file)",
                                     printable(path, 200)));
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxTraceBytes) {
    throw TraceFileError(fmt::format("trace file '{}' is larger than {} MiB", printable(path, 200),
                                     kMaxTraceBytes >> 20));
  }
  BoundedBuilder builder;
  nlohmann::json::sax_parse(text, &builder);
  text = std::string();
  return from_json(builder.root);
}

}  // namespace qpcheck::trace
