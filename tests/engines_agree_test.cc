// One semantics across the engines (issue 17): the explicit explorer, BMC, k-induction, synth and the gate name the
// same property, with the same message, for the same violation. The case that once differed: an invariant that
// cannot be evaluated in a reachable state was "runtime_error" to the explorer and BMC but the invariant itself to
// synth and the gate (model::invariant_unevaluable is now the one constructor).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checker/cli/exit_codes.h"
#include "checker/cli/gate.h"
#include "checker/cli/synth.h"
#include "checker/cli/verify.h"

namespace qpcheck::cli {
namespace {

namespace fs = std::filesystem;

// `top` bounds the index: a[i] with i = 3 is out of range (the array is 0..2), so top >= 3 reaches a state where the
// invariant cannot be evaluated.
const char kSpec[] =
    "param top: 1..5 = 4;\n"
    "var a: array[0..2] of 0..3;\n"
    "var i: 0..5;\n"
    "process p { while i < top { i = i + 1; } }\n"
    "invariant small: a[i] < 3;\n";

fs::path write_spec() {
  const char* t = std::getenv("TEST_TMPDIR");
  fs::path d = fs::path(t ? t : "/tmp") / "engines_agree";
  fs::create_directories(d);
  std::ofstream(d / "unevaluable.qpspec") << kSpec;
  return d / "unevaluable.qpspec";
}

nlohmann::json verify_json(const fs::path& spec, Engine engine, int& rc) {
  VerifyOptions o;
  o.file = spec.string();
  o.engine = engine;
  o.depth = 8;
  o.format = Format::kJson;
  std::ostringstream out, err;
  rc = run_verify(o, out, err);
  INFO(err.str());
  return nlohmann::json::parse(out.str());
}

TEST_CASE("an invariant that cannot be evaluated violates that invariant, in every engine, with one message") {
  fs::path spec = write_spec();
  const std::string message = "invariant small cannot be evaluated: index 3 out of range 0..2";
  for (Engine e : {Engine::kExplicit, Engine::kBmc, Engine::kKind}) {
    int rc = 0;
    nlohmann::json j = verify_json(spec, e, rc);
    INFO("engine ", static_cast<int>(e));
    CHECK(rc == code(ExitCode::kViolated));
    CHECK(j["violation"]["property"] == "small");
    CHECK(j["violation"]["kind"] == "invariant");
    CHECK(j["violation"]["message"] == message);
  }

  // --property small reports it; --property runtime_error (failing steps only) does not evaluate the invariant.
  VerifyOptions only;
  only.file = spec.string();
  only.format = Format::kJson;
  only.properties = {"small"};
  std::ostringstream o1, e1;
  CHECK(run_verify(only, o1, e1) == code(ExitCode::kViolated));
  CHECK(nlohmann::json::parse(o1.str())["violation"]["property"] == "small");
  only.properties = {"runtime_error"};
  std::ostringstream o2, e2;
  CHECK(run_verify(only, o2, e2) == code(ExitCode::kHolds));

  // The gate: the per-property run of `small` finds it violated, and its counterexample names `small` too.
  GateOptions g;
  g.paths = {spec.string()};
  g.format = Format::kJson;
  std::ostringstream go, ge;
  CHECK(run_gate(g, go, ge) == 1);  // an unexpected (not declared) violation
  nlohmann::json gj = nlohmann::json::parse(go.str());
  bool found = false;
  for (const auto& p : gj["specs"][0]["configurations"][0]["properties"]) {
    INFO(p.dump());
    if (p["name"] == "small") {
      found = true;
      CHECK(p["actual"] == "violated");
      CHECK(p["counterexample"]["violation"]["property"] == "small");
      CHECK(p["counterexample"]["violation"]["message"] == message);
    } else {
      CHECK(p["actual"] == "holds");  // deadlock, runtime_error: the failure is the invariant's alone
    }
  }
  CHECK(found);

  // synth over top: 1 and 2 keep the index in range; 3, 4 and 5 fail `small`, with the same message.
  SynthOptions so;
  so.file = spec.string();
  so.params = {"top=*"};
  so.depth = 8;
  so.format = Format::kJson;
  std::ostringstream sout, serr;
  CHECK(run_synth(so, sout, serr) == code(ExitCode::kViolated));
  nlohmann::json sj = nlohmann::json::parse(sout.str());
  std::vector<std::string> names;
  for (const auto& p : sj["properties"]) names.push_back(p["property"]);
  CHECK(names == std::vector<std::string>{"small", "deadlock", "runtime_error"});  // lang::properties_of's order
  for (const auto& p : sj["properties"]) {
    if (p["property"] != "small") continue;
    for (const auto& r : p["regions"]) {
      if (r["verdict"] != "fails") continue;
      CHECK(r["counterexample"]["violation"]["property"] == "small");
      CHECK(r["counterexample"]["violation"]["message"] == message);
    }
  }
}

}  // namespace
}  // namespace qpcheck::cli
