#include "checker/trace/render.h"

#include <doctest/doctest.h>

#include "checker/trace/build.h"
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
  explore::Result r = explore::explore(sys, {});
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
  v2["version"] = 2;
  CHECK(error(v2) == "unsupported report version 2 (this qpcheck reads version 1)");
  nlohmann::json other = j;
  other["schema"] = "something.else";
  CHECK(error(other) == "field 'schema' is \"something.else\", expected \"qpcheck.report\"");
  nlohmann::json truncated = j;
  truncated["steps"][0].erase("changes");
  CHECK(error(truncated) == "missing field 'changes'");
  CHECK(error(nlohmann::json::array()) == "not a JSON object");
}

}  // namespace
}  // namespace qpcheck::trace
