#include "checker/trace/render.h"

#include <cstdlib>
#include <fstream>

#include <doctest/doctest.h>

#include "checker/trace/build.h"
#include "checker/trace/msc.h"
#include "tests/support/compile.h"

namespace qpcheck::trace {
namespace {

// A two-endpoint toy: the server sends before the client has posted a receive.
const char* kSpec = R"(
type Ep = enum { C, S };
var rq: array[Ep] of 0..1;
var wire: queue[1] of Ep;
var hit: bool;
proc post_recv(e: Ep) verbs "ibv_post_recv" { rq[e] = 1; }
proc post_send(e: Ep) verbs "ibv_post_send" { push(wire, e); }
process client { post_recv(C); }
process server { post_send(S); }
rule deliver verbs "fabric: Send" when !empty(wire) { if rq[C] == 0 { hit = true; } pop(wire); }
invariant send_finds_recv: !hit;
)";

Trace make_trace() {
  auto c = testing::compile(kSpec);
  model::ModelSystem sys(*c->compiled.model);
  model::CheckResult r = explore::explore(sys, {});
  return build_trace(sys, r, "toy.qpspec", "bfs");
}

TEST_CASE("trace reconstruction: steps, actors, verbs calls and changes") {
  Trace t = make_trace();
  REQUIRE(t.verdict == "violated");
  CHECK(t.property == "send_finds_recv");
  CHECK(t.kind == "invariant");
  CHECK(t.shortest);
  CHECK(t.property_source.line == 11);
  REQUIRE(t.steps.size() == 2);
  CHECK(t.steps[0].actor == "server");
  CHECK(t.steps[0].source.text == "process server { post_send(S); }");
  REQUIRE(t.steps[0].calls.size() == 1);
  CHECK(t.steps[0].calls[0].verbs == "ibv_post_send");
  CHECK(t.steps[0].calls[0].args == std::vector<std::string>{"S"});
  REQUIRE(t.steps[0].changes.size() == 2);
  CHECK(t.steps[0].changes[0].name == "wire");
  CHECK(t.steps[0].changes[0].before == "[]");
  CHECK(t.steps[0].changes[0].after == "[S]");
  CHECK(t.steps[0].changes[1].name == "server@");
  CHECK(t.steps[0].changes[1].after == "end");
  CHECK(t.steps[1].is_rule);
  CHECK(t.steps[1].actor == "deliver");
  CHECK(t.steps[1].verbs == "fabric: Send");
  CHECK(t.steps[1].changes.back().name == "hit");
}

TEST_CASE("Mermaid: a control character in a label cannot end a statement early") {
  Trace t = make_trace();
  t.message = "tab\there\x1b[31m escape\rreturn\x7f";
  std::string m = to_mermaid(t);
  CHECK(m.find("VIOLATED tab here [31m escape return \n") != std::string::npos);
  for (char c : m) CHECK((c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f)));
}

TEST_CASE("control characters from spec text reach neither the terminal nor the SVG raw") {
  Trace t = make_trace();
  t.steps[0].source.text = "post_send(S); /* \x1b]0;title\x07 \x1b[2J */";
  t.message = "bad \xC2\x9B" "2J and \xff";
  std::string text = to_text(t);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
  CHECK(text.find("\\u001b]0;title\\u0007 \\u001b[2J") != std::string::npos);
  CHECK(text.find("bad \\u009b2J") != std::string::npos);  // C1 CSI
  std::string svg = to_svg(t);
  for (char c : svg) CHECK((c == '\n' || static_cast<unsigned char>(c) >= 0x20));
  CHECK(svg.find("\xEF\xBF\xBD") != std::string::npos);  // the ESC and the stray byte as U+FFFD
  CHECK(terminal_text("a\tb\nc\x1b") == "a\tb\nc\\u001b");
  CHECK(xml_escape("<a\x01&\xff>") == "&lt;a\xEF\xBF\xBD&amp;\xEF\xBF\xBD&gt;");
}

TEST_CASE("text report: every limit is named as the user can act on it") {
  Trace t = make_trace();
  t.verdict = "inconclusive";
  t.steps.clear();
  t.limit = "max-memory";
  CHECK(to_text(t).find("INCONCLUSIVE: stopped by --max-memory after") != std::string::npos);
  t.limit = "memory";  // an allocation failed below the limit: there is no option --memory
  CHECK(to_text(t).find("stopped by an allocation failure (out of memory; --max-memory bounds the search)") !=
        std::string::npos);
  CHECK(to_text(t).find("--memory") == std::string::npos);
  t.limit = "interrupted";
  CHECK(to_text(t).find("stopped by an interrupt (SIGINT or SIGTERM)") != std::string::npos);
}

TEST_CASE("a witness is listed step by step in the text report, with no claim about a JSON file") {
  auto c = testing::compile("var x: 0..2;\nproc inc() verbs \"ibv_post_send\" { x = x + 1; }\nprocess p { inc(); inc(); }\n");
  model::ModelSystem sys(*c->compiled.model);
  explore::Options o;
  o.witness = true;
  Trace t = build_trace(sys, explore::explore(sys, o), "w.qpspec", "bfs");
  REQUIRE(t.verdict == "holds");
  std::string text = to_text(t);
  CHECK(text.find("Witness: 2 steps to a terminal valid end (shortest: BFS)") != std::string::npos);
  CHECK(text.find("  2. p @line 3  [test.qpspec:3]") != std::string::npos);
  CHECK(text.find("JSON report") == std::string::npos);
  Msc m = build_msc(t);
  CHECK(m.title == "w.qpspec: witness (holds: a run to a terminal valid end)");
  CHECK(m.rows == 2);
  CHECK(m.violation.empty());
}

TEST_CASE("chart: a message flushed because its sender's QP went to ERR is drawn discarded, not delivered") {
  auto c = testing::compile(R"spec(
type Ep = enum { A, B };
type QpState = enum { RTS, ERR };
type Msg = enum { UNSOL };
var qp: array[Ep] of QpState;
var wire: array[Ep] of queue[1] of Msg;
var posted: bool;
proc post_send(e: Ep) verbs "ibv_post_send" { push(wire[B], UNSOL); }
proc post_recv(e: Ep) verbs "ibv_post_recv" { posted = true; }
process a { post_send(A); }
process b { post_recv(B); }
rule retry_exceeded verbs "fabric: RNR NAK (retries exhausted)" when !empty(wire[B]) { qp[A] = ERR; clear(wire[B]); }
rule deliver verbs "fabric: Send" when !empty(wire[B]) && qp[A] == RTS { pop(wire[B]); }
invariant no_flush: !(posted && qp[A] == ERR);
)spec");
  model::ModelSystem sys(*c->compiled.model);
  Trace t = build_trace(sys, explore::explore(sys, {}), "f.qpspec", "bfs");
  REQUIRE(t.verdict == "violated");
  Msc m = build_msc(t);
  REQUIRE(m.arrows.size() == 1);
  CHECK(m.arrows[0].label == "UNSOL");
  CHECK(m.arrows[0].discarded);
  CHECK(to_mermaid(t).find("-xL2: UNSOL (discarded)") != std::string::npos);
  CHECK(to_svg(t).find("discarded (its sender's QP went to an error state)") != std::string::npos);
}

TEST_CASE("chart: the parameter line wraps within the SVG's width instead of being clipped") {
  Trace t = make_trace();
  for (int i = 0; i < 30; ++i) t.params.emplace_back("parameter_" + std::to_string(i), "VALUE_" + std::to_string(i));
  std::string svg = to_svg(t);
  int width = std::stoi(svg.substr(svg.find("width=\"") + 7));
  size_t lines = 0;
  for (size_t p = 0; (p = svg.find("<text x=\"10\" y=\"", p)) != std::string::npos; ++p) {
    size_t b = svg.find('>', p) + 1, e = svg.find("</text>", b);
    std::string line = svg.substr(b, e - b);
    if (line.find("parameter_") == std::string::npos) continue;
    ++lines;
    CHECK(10 + static_cast<int>(line.size()) * 7 <= width);
  }
  CHECK(lines >= 3);
  CHECK(svg.find("VALUE_29") != std::string::npos);  // nothing cut off
}

TEST_CASE("text report: verdict, property line, numbered steps") {
  std::string text = to_text(make_trace());
  CHECK(text.find("toy.qpspec: VIOLATED: send_finds_recv") == 0);
  CHECK(text.find("Counterexample: 2 steps (shortest: BFS)") != std::string::npos);
  CHECK(text.find("  1. server @line 9  [test.qpspec:9]") != std::string::npos);
  CHECK(text.find("> ibv_post_send = post_send(S)") != std::string::npos);
  CHECK(text.find("wire: [] -> [S]") != std::string::npos);
}

TEST_CASE("JSON report: versioned schema round-trips; bad documents name the problem") {
  Trace t = make_trace();
  nlohmann::json j = to_json(t);
  CHECK(j["schema"] == "qpcheck.report");
  CHECK(j["version"] == 1);
  Trace back = from_json(nlohmann::json::parse(j.dump()));
  CHECK(to_json(back) == j);
  auto error = [](nlohmann::json doc) {
    try {
      from_json(doc);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  nlohmann::json v2 = j;
  v2["version"] = 2;  // version 2 is a lasso: it needs its cycle
  CHECK(error(v2) == "report version 2 without field 'cycle' (version 2 is a lasso)");
  nlohmann::json v3 = j;
  v3["version"] = 3;
  CHECK(error(v3) == "unsupported report version 3 (this qpcheck reads versions 1 and 2)");
  nlohmann::json v1_cycle = j;
  v1_cycle["cycle"] = {{"start", 1}, {"length", 0}};
  CHECK(error(v1_cycle) == "field 'cycle' (a lasso) needs report version 2, found version 1");
  nlohmann::json other = j;
  other["schema"] = "something.else";
  CHECK(error(other) == "field 'schema' is \"something.else\", expected \"qpcheck.report\"");
  nlohmann::json truncated = j;
  truncated["steps"][0].erase("changes");
  CHECK(error(truncated) == "missing field 'steps[0].changes'");
  CHECK(error(nlohmann::json::array()) == "not a JSON object");
}

TEST_CASE("printable and quoted: control characters escaped, long values cut at a character boundary") {
  CHECK(printable("a\x1b[31mb\nc\x7f") == "a\\u001b[31mb\\nc\\u007f");
  CHECK(printable(std::string("x\0y", 3)) == "x\\u0000y");
  CHECK(printable("abcdef", 3) == "abc... (6 bytes)");
  // C1 controls (CSI U+009B is an escape sequence on many terminals) and bytes that are not UTF-8 are escaped;
  // valid UTF-8 is kept
  CHECK(printable("a\xc2\x9b" "31mb") == "a\\u009b31mb");
  CHECK(printable("\xff\xc2x\xe0\x80\x80") == "\\xff\\xc2x\\xe0\\x80\\x80");  // a lone byte, a cut sequence, an overlong
  CHECK(printable("caf\xc3\xa9 \xe2\x86\x92") == "caf\xc3\xa9 \xe2\x86\x92");
  CHECK(printable("ab\u00e9", 3) == "ab... (4 bytes)");  // not half of the two-byte e-acute
  CHECK(quote_value("say \"hi\"\\") == "\"say \\\"hi\\\"\\\\\"");
  CHECK(quote_value(std::string(100, 'x')) == "\"" + std::string(80, 'x') + "\"... (100 bytes)");
}

TEST_CASE("from_json names the field and checks ranges and the chain of changes") {
  nlohmann::json j = to_json(make_trace());
  auto error = [](nlohmann::json doc) {
    try {
      from_json(doc);
    } catch (const ReportError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  nlohmann::json d = j;
  d["steps"][1]["source"]["col"] = -1;
  CHECK(error(d) == "field 'steps[1].source.col' must be an integer in 0..2147483647, found -1");
  d = j;
  d["stats"]["seconds"] = "fast";
  CHECK(error(d) == "field 'stats.seconds' must be a non-negative number, found \"fast\"");
  d = j;
  d["steps"][1]["changes"][0]["before"] = "[C]";
  CHECK(error(d) == "field 'steps[1].changes[0].before' is \"[C]\", but the steps before leave \"wire\" at \"[S]\" "
                    "(steps missing or out of order?)");
  d = j;
  d["steps"][0]["changes"][0]["name"] = "nowhere";
  CHECK(error(d) == "field 'steps[0].changes[0].name' is \"nowhere\", which is not in 'initial'");
  d = j;
  d["params"] = {{"n", 3}};
  CHECK(error(d) == "field 'params.n' must be a string, found 3");
  d = j;
  CHECK(j["length"] == 2);
  d["steps"].erase(1);  // a cut counterexample whose last step changes no program counter
  CHECK(error(d) == "field 'length' is 2, but 'steps' holds 1 (a truncated trace?)");
  d.erase("length");  // a report written before "length" existed
  CHECK(error(d) == "no error");
}

TEST_CASE("read_trace_file: the one reader of trace files") {
  std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  std::string path = dir + "/toy.json";
  nlohmann::json written = to_json(make_trace());
  std::ofstream(path) << dump_json(written);
  CHECK(to_json(read_trace_file(path)) == written);
  auto error = [](const std::string& p) {
    try {
      read_trace_file(p);
    } catch (const TraceFileError& e) {
      return "file: " + std::string(e.what());
    } catch (const ReportError& e) {
      return "report: " + std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error(dir) == "file: cannot read trace file '" + dir + "' (missing, unreadable or not a regular file)");
  CHECK(error("/dev/null") == "file: cannot read trace file '/dev/null' (missing, unreadable or not a regular file)");
  std::ofstream(dir + "/deep.json") << std::string(33, '[') << std::string(33, ']');
  CHECK(error(dir + "/deep.json") == "report: arrays and objects nest deeper than 32 levels (in field '[0][0][0][0][0]"
                                     "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]"
                                     "[0]'): not a qpcheck report");
  std::ofstream(dir + "/ok32.json") << std::string(32, '[') << std::string(32, ']');
  CHECK(error(dir + "/ok32.json") == "report: not a JSON object");  // 32 levels parse
  std::ofstream(dir + "/float.json") << R"({"schema": "qpcheck.report", "version": 1, "x": [1, 2, -1e999]})";
  CHECK(error(dir + "/float.json") ==
        "report: corrupt or truncated JSON at byte 61 (in field 'x[2]'): number overflow parsing '-1e999'");
}

}  // namespace
}  // namespace qpcheck::trace

namespace qpcheck::trace {
namespace {

TEST_CASE("a step is labelled with the line of the statement it executes, not of the if folded into it") {
  auto c = testing::compile(R"(var x: 0..2;
var y: bool;
process p {
  if x == 0 {
    x = 1;
  }
  L: if y {
    skip;
  } else {
    x = 2;
  }
}
invariant not_two: x != 2;
)");
  model::ModelSystem sys(*c->compiled.model);
  model::CheckResult r = explore::explore(sys, {});
  Trace t = build_trace(sys, r, "test.qpspec", "bfs");
  REQUIRE(t.steps.size() == 2);
  CHECK(t.steps[0].at == "line 5");   // the pc stands at the `if` on line 4; the step runs `x = 1;` on line 5
  CHECK(t.steps[0].source.line == 5);
  CHECK(t.steps[1].at == "L");        // a labelled pc keeps its label
  CHECK(t.steps[1].source.line == 10);
  // Where a process stands (not a step) is still its program counter: the `if` of line 4 until it moves.
  REQUIRE(t.final.size() == 1);
  CHECK(t.final[0].at == "end");
}

}  // namespace
}  // namespace qpcheck::trace
