// qpcheck verify with liveness properties, end to end: verdicts under and without fairness, the lasso in the text and
// JSON reports (version 2, "cycle"), the report read back, and the combinations that are refused. Exact product
// counts and lasso lengths of the corpus are in tests/corpus_test.cc (liveness_*.qpspec, spec/18, spec/19).
#include <fstream>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checker/cli/exit_codes.h"
#include "checker/cli/verify.h"
#include "checker/trace/msc.h"
#include "checker/trace/render.h"
#include "verbs_backend/conductor.h"

namespace qpcheck::cli {
namespace {

using nlohmann::json;

struct Run {
  int rc;
  std::string out, err;
};
Run run(VerifyOptions opt) {
  std::ostringstream out, err;
  int rc = run_verify(opt, out, err);
  return Run{rc, out.str(), err.str()};
}

VerifyOptions livelock(std::vector<std::string> params = {}) {
  VerifyOptions o;
  o.file = "spec/18_rnr_retry_livelock.qpspec";
  o.params = std::move(params);
  return o;
}

std::string tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

TEST_CASE("the RNR retry livelock: a lasso whose cycle is the fabric's RNR NAK, in text and JSON") {
  Run t = run(livelock());
  CHECK(t.rc == code(ExitCode::kViolated));
  CHECK(t.out.find("VIOLATED: sends_complete") != std::string::npos);
  CHECK(t.out.find("Counterexample (lasso): a prefix of 18 steps, then a cycle of 1 step repeated forever") !=
        std::string::npos);
  CHECK(t.out.find("--- cycle: steps 19..19 repeat forever ---") != std::string::npos);
  CHECK(t.out.find("fairness: weak client, server; weak deliver_send") != std::string::npos);  // own first

  VerifyOptions o = livelock();
  o.format = Format::kJson;
  o.trace_out = tmp("livelock.json");
  Run j = run(o);
  REQUIRE(j.rc == code(ExitCode::kViolated));
  json r = json::parse(j.out);
  CHECK(r["version"] == 2);
  CHECK(r["verdict"] == "violated");
  CHECK(r["violation"]["kind"] == "liveness");
  CHECK(r["violation"]["shortest"] == false);
  CHECK(r["cycle"]["start"] == 19);
  CHECK(r["cycle"]["length"] == 1);
  REQUIRE(r["steps"].size() == 19);
  // The step repeated for ever: the responder NAKs, the requester retries with its count unchanged (7: infinite), so
  // the step changes nothing and the cycle is a self-loop.
  CHECK(r["steps"][18]["actor"] == "rnr_nak(e=PASSIVE)");
  CHECK(r["steps"][18]["changes"].empty());
  CHECK(r["stats"]["states"] == 44);             // product states of the liveness search

  // The report reads back with its cycle (replay and diff read reports).
  trace::Trace back = trace::read_trace_file(o.trace_out);
  CHECK(back.cycle_start == 18);
  CHECK(back.steps.size() == 19);
  CHECK(back.kind == "liveness");
  CHECK(!back.fairness.empty());
  // The chart draws the cycle as a loop: a frame in the SVG, a `loop ... end` block in Mermaid.
  CHECK(trace::build_msc(back).cycle_start == 18);
  CHECK(trace::to_svg(back).find("loop: steps 19..19 repeat forever") != std::string::npos);
  std::string mermaid = trace::to_mermaid(back);
  size_t loop = mermaid.find("  loop steps 19..19 repeat forever\n");
  REQUIRE(loop != std::string::npos);
  CHECK(mermaid.find("19. fabric: RNR NAK", loop) != std::string::npos);
  CHECK(mermaid.find("  end\n", loop) != std::string::npos);
  CHECK(mermaid.find("19. fabric: RNR NAK") > loop);  // the cycle's step inside the loop, not before it
  // The replay plan keeps the cycle: prefix first, then the cycle repeated (replay_test runs it on the fake device).
  CHECK(verbs::make_plan(back).cycle_start == 18);
}

TEST_CASE("the livelock's neighbours: retries that run out, a receiver that re-posts, and fairness that matters") {
  CHECK(run(livelock({"verbs_rnr_retry=3"})).rc == code(ExitCode::kHolds));
  Run reposts = run(livelock({"repost=true"}));
  CHECK(reposts.rc == code(ExitCode::kHolds));
  CHECK(reposts.out.find("liveness sends_complete: holds on every fair run (78 product states") != std::string::npos);
  // Without fairness the server may be starved while the fabric NAKs for ever: the property needs fairness.
  VerifyOptions unfair = livelock({"repost=true"});
  unfair.no_fairness = true;
  Run u = run(unfair);
  CHECK(u.rc == code(ExitCode::kViolated));
  CHECK(u.out.find("a run that repeats steps") != std::string::npos);
  CHECK(u.out.find("fairness: none") != std::string::npos);
}

TEST_CASE("reductions unsound for cycles and engines without liveness are refused, naming the property") {
  for (int which = 0; which < 3; ++which) {
    VerifyOptions o = livelock();
    if (which == 0) o.por = true;
    if (which == 1) o.storage = explore::Storage::kHashCompaction;
    if (which == 2) o.storage = explore::Storage::kBitstate;
    Run r = run(o);
    INFO(which, ": ", r.err);
    CHECK(r.rc == code(ExitCode::kUsage));
    CHECK(r.err.find("cannot be combined with the liveness property sends_complete") != std::string::npos);
    CHECK(r.out.empty());
  }
  // Leaving the liveness property out makes the reduction usable again.
  VerifyOptions safety = livelock();
  safety.por = true;
  safety.properties = {"deadlock"};
  CHECK(run(safety).rc == code(ExitCode::kHolds));

  VerifyOptions bmc = livelock();
  bmc.engine = Engine::kBmc;
  bmc.properties = {"sends_complete"};
  Run b = run(bmc);
  CHECK(b.rc == code(ExitCode::kUsage));
  CHECK(b.err.find("--engine bmc cannot check liveness properties (--property sends_complete)") != std::string::npos);
}

TEST_CASE("a limit that stops the liveness search after the safety search held is INCONCLUSIVE, with both figures") {
  // x == 1 leads_to y: the monitor splits states (a pending P), so the product (9 states) outgrows the state space (8).
  std::string spec = tmp("grow.qpspec");
  std::ofstream(spec) << "var x: 0..3;\nvar y: bool;\nprocess a { while true { x = (x + 1) % 4; } }\n"
                         "process b { y = true; }\nfair weak a, b;\nliveness answered: x == 1 leads_to y;\n";
  VerifyOptions o;
  o.file = spec;
  Run whole = run(o);
  CHECK(whole.rc == code(ExitCode::kHolds));
  CHECK(whole.out.find("liveness answered: holds on every fair run (9 product states, 14 transitions") !=
        std::string::npos);
  o.max_states = 8;  // enough for the safety search, not for the product
  Run cut = run(o);
  CHECK(cut.rc == code(ExitCode::kInconclusive));
  CHECK(cut.out.find("INCONCLUSIVE: every invariant and assertion holds in all 8 reachable states, but a liveness "
                     "check was stopped by --max-states") != std::string::npos);
  CHECK(cut.out.find("liveness answered: INCONCLUSIVE: stopped by --max-states (8 product states") != std::string::npos);
  o.format = Format::kJson;
  json j = json::parse(run(o).out);
  CHECK(j["verdict"] == "inconclusive");
  CHECK(j["limit"] == "max-states");
  CHECK(j["liveness"][0]["verdict"] == "inconclusive");
  CHECK(j["stats"]["states"] == 8);
}

TEST_CASE("a liveness report that is not version 2, or a version 2 report without its cycle, is refused") {
  VerifyOptions o = livelock();
  o.format = Format::kJson;
  json r = json::parse(run(o).out);
  json v1 = r;
  v1["version"] = 1;
  CHECK_THROWS(trace::from_json(v1));
  json nocycle = r;
  nocycle.erase("cycle");
  CHECK_THROWS(trace::from_json(nocycle));
  json outside = r;
  outside["cycle"]["start"] = 40;  // past the end of the steps
  CHECK_THROWS(trace::from_json(outside));
  CHECK_NOTHROW(trace::from_json(r));
}

}  // namespace
}  // namespace qpcheck::cli
