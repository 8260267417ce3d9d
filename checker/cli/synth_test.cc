// The symbolic engines through the command line: verify --engine bmc|kind, symbolic --param values, synth.
#include <algorithm>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checker/cli/exit_codes.h"
#include "checker/cli/synth.h"
#include "checker/cli/verify.h"

namespace qpcheck::cli {
namespace {

struct Run {
  int rc;
  std::string out, err;
};

Run verify(VerifyOptions o) {
  std::ostringstream out, err;
  int rc = run_verify(o, out, err);
  return Run{rc, out.str(), err.str()};
}

TEST_CASE("verify --engine bmc: the same JSON report and counterexample as the explicit engine") {
  VerifyOptions o;
  o.file = "spec/03_patch_passive_first_ib.qpspec";
  o.format = Format::kJson;
  Run ex = verify(o);
  o.engine = Engine::kBmc;
  o.depth = 12;
  Run bmc = verify(o);
  INFO(bmc.err);
  CHECK(bmc.rc == code(ExitCode::kViolated));
  auto a = nlohmann::json::parse(ex.out), b = nlohmann::json::parse(bmc.out);
  CHECK(b["engine"] == "bmc");
  CHECK(b["violation"]["property"] == a["violation"]["property"]);
  CHECK(b["steps"].size() == a["steps"].size());
  CHECK(b["steps"].back()["actor"] == "rnr_retry_exceeded(e=ACTIVE)");
  // Progress goes to a terminal only (symbolic/engine_test.cc checks what it reports); this stderr is a string.
  CHECK(bmc.err.find("depth") == std::string::npos);
}

TEST_CASE("verify --engine bmc without a violation up to K is inconclusive (exit 2), never holds") {
  VerifyOptions o;
  o.file = "spec/01_linux_today.qpspec";
  o.engine = Engine::kBmc;
  o.depth = 6;
  Run r = verify(o);
  CHECK(r.rc == code(ExitCode::kInconclusive));
  CHECK(r.out.find("INCONCLUSIVE (bmc engine): no violation up to depth 6") != std::string::npos);
  o.engine = Engine::kKind;
  o.format = Format::kJson;
  Run k = verify(o);
  CHECK(k.rc == code(ExitCode::kInconclusive));
  auto j = nlohmann::json::parse(k.out);
  CHECK(j["verdict"] == "inconclusive");
  // k = 6: 7 steps through states that satisfy every property, then (Z3's choice here) a step that fails.
  CHECK(j["induction_counterexample"]["steps"].size() >= 7);
  CHECK(j["induction_counterexample"]["steps"].size() <= 8);
}

TEST_CASE("Z3 unknown (resource limit) is inconclusive with its reason") {
  VerifyOptions o;
  o.file = "tests/corpus/philosophers.qpspec";
  o.params = {"N=16"};
  o.engine = Engine::kBmc;
  o.depth = 12;
  o.smt_rlimit = 20000;
  Run r = verify(o);
  CHECK(r.rc == code(ExitCode::kInconclusive));
  CHECK(r.out.find("solver returned unknown at depth") != std::string::npos);
  CHECK(r.out.find("--smt-rlimit 20000") != std::string::npos);
}

TEST_CASE("symbolic parameters: a value set needs a Z3 engine; layout parameters are refused by name") {
  VerifyOptions o;
  o.file = "spec/03_patch_passive_first_ib.qpspec";
  o.params = {"connect_rnr_retry=*"};
  Run r = verify(o);
  CHECK(r.rc == code(ExitCode::kUsage));
  CHECK(r.err.find("needs --engine bmc or kind") != std::string::npos);
  o.engine = Engine::kBmc;
  o.params = {"max_send_wr=1..2"};
  Run m = verify(o);
  CHECK(m.rc == code(ExitCode::kUsage));
  CHECK(m.err.find("parameter max_send_wr cannot be symbolic") != std::string::npos);
  o.params = {"connect_rnr_retry=5..7"};
  o.depth = 12;
  o.format = Format::kJson;
  Run v = verify(o);
  CHECK(v.rc == code(ExitCode::kViolated));
  // The report names the one value the counterexample runs with, not the set.
  std::string value = nlohmann::json::parse(v.out)["params"]["connect_rnr_retry"];
  CHECK((value == "5" || value == "6" || value == "7"));
}

TEST_CASE("synth: spec 03, which connect_rnr_retry values keep no_fatal_qp_error") {
  SynthOptions o;
  o.file = "spec/03_patch_passive_first_ib.qpspec";
  o.params = {"connect_rnr_retry=*"};
  // Depth 10 finds 0's 10-step counterexample by BMC; 1..6 (11 to 16 steps) and 7 (holds) are decided by the explicit
  // search per value, with the same verdicts and shortest counterexamples as at depth 12, in two thirds of the CPU time.
  o.depth = 10;
  o.properties = {"no_fatal_qp_error"};  // the others are synthesised by the other cases; this one is the slow one
  o.format = Format::kJson;
  std::ostringstream out, err;
  int rc = run_synth(o, out, err);
  INFO(err.str());
  CHECK(rc == code(ExitCode::kViolated));
  auto j = nlohmann::json::parse(out.str());
  bool found = false;
  for (const auto& p : j["properties"]) {
    if (p["property"] != "no_fatal_qp_error") continue;
    found = true;
    std::vector<std::string> fails, holds;
    for (const auto& r : p["regions"]) {
      for (const auto& v : r["values"]) (r["verdict"] == "fails" ? fails : holds).push_back(v["connect_rnr_retry"]);
      if (r["verdict"] == "fails") CHECK(r.contains("counterexample"));
    }
    CHECK(fails == std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6"});
    CHECK(holds == std::vector<std::string>{"7"});
    // connect_rnr_retry r needs r RNR NAKs before the retries are exhausted: 10 + r steps.
    CHECK(p["regions"][0]["counterexample"]["steps"].size() == 10);
    CHECK(p["regions"][2]["counterexample"]["steps"].size() == 12);
  }
  CHECK(found);
  SynthOptions none = o;
  none.params = {};
  std::ostringstream o2, e2;
  CHECK(run_synth(none, o2, e2) == code(ExitCode::kUsage));
}

}  // namespace
}  // namespace qpcheck::cli

namespace qpcheck::cli {
namespace {

TEST_CASE("synth: a value listed twice and LO..HI on an enum are usage errors naming the value") {
  auto synth = [](std::vector<std::string> params) {
    SynthOptions o;
    o.file = "spec/01_linux_today.qpspec";
    o.params = std::move(params);
    o.depth = 2;
    std::ostringstream out, err;
    int rc = run_synth(o, out, err);
    return Run{rc, out.str(), err.str()};
  };
  Run twice = synth({"p2p=true,false,true"});
  CHECK(twice.rc == code(ExitCode::kUsage));
  CHECK(twice.err == "qpcheck: error: --param p2p=true,false,true: value 'true' listed twice\n");
  CHECK(twice.out.empty());
  // hi - lo does not fit an int64: counted without overflow (UBSan: signed overflow before).
  Run wide = synth({"connect_rnr_retry=-9223372036854775808..9223372036854775807"});
  CHECK(wide.rc == code(ExitCode::kUsage));
  CHECK(wide.err == "qpcheck: error: --param connect_rnr_retry=-9223372036854775808..9223372036854775807: more than 4096 values "
                    "to make symbolic\n");
  Run range = synth({"transport=IB..IWARP"});
  CHECK(range.rc == code(ExitCode::kUsage));
  CHECK(range.err == "qpcheck: error: --param transport: 'IB' is not an integer (LO..HI is for integer parameters; for a "
                     "bool or an enum list the values, transport=V1,V2, or give transport=*)\n");
}

}  // namespace
}  // namespace qpcheck::cli

#include <filesystem>
#include <fstream>

namespace qpcheck::cli {
namespace {

TEST_CASE("synth: two parameters; compact value sets, one line per region and a closing summary table") {
  std::filesystem::path dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  std::filesystem::path file = dir / "two_params.qpspec";
  std::ofstream(file) << "param a: 0..3 = 0;\nparam b: bool = false;\nvar x: 0..3;\nprocess p { x = a; }\n"
                         "invariant small: !(b && x >= 2);\n";
  SynthOptions o;
  o.file = file.string();
  o.params = {"a=*", "b=*"};
  o.depth = 4;
  o.no_deadlock = true;
  std::ostringstream out, err;
  int rc = run_synth(o, out, err);
  INFO(out.str(), err.str());
  CHECK(rc == code(ExitCode::kViolated));
  std::string text = out.str();
  CHECK(text.find("  FAILS for a=2,3 b=true (bmc, shortest counterexample: 1 steps); one run violates it for each "
                  "of these values\n") != std::string::npos);
  // The counterexample is Z3's pick among a=2 and a=3; the command shows that one.
  CHECK((text.find("    every step: qpcheck verify " + file.string() + " --param a=2 --param b=true\n") !=
             std::string::npos ||
         text.find("    every step: qpcheck verify " + file.string() + " --param a=3 --param b=true\n") !=
             std::string::npos));
  CHECK(text.find("summary (8 values, depth 4") != std::string::npos);
  CHECK(text.find("| property | fails for | holds for | open for | how |\n|---|---|---|---|---|\n") !=
        std::string::npos);
  CHECK(text.find("| `small` | a=2,3 b=true | a=0: b=false,true; a=1: b=false,true; a=2: b=false; a=3: b=false | - |")
        != std::string::npos);
  CHECK(text.find("| `runtime_error` | - | a=0..3 b=false,true | - |") != std::string::npos);
  // Few lines: a header, per property a title and one or three lines per region, the table.
  CHECK(std::count(text.begin(), text.end(), '\n') < 30);
  // --property chooses; --counterexamples prints every step.
  o.properties = {"small"};
  o.counterexamples = true;
  std::ostringstream out2, err2;
  run_synth(o, out2, err2);
  CHECK(out2.str().find("property runtime_error") == std::string::npos);
  CHECK((out2.str().find("    shown for a=2 b=true:\n") != std::string::npos ||
         out2.str().find("    shown for a=3 b=true:\n") != std::string::npos));
  CHECK(out2.str().find("      1. p") != std::string::npos);
}

}  // namespace
}  // namespace qpcheck::cli
