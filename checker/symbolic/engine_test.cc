#include "checker/symbolic/engine.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <doctest/doctest.h>
#include <z3++.h>

#include "checker/symbolic/family.h"
#include "checker/symbolic/interrupt_watch.h"
#include "tests/support/compile.h"

namespace qpcheck::symbolic {
namespace {

struct One {
  std::unique_ptr<testing::CompiledSpec> spec;
  std::unique_ptr<model::ModelSystem> sys;
  Family fam;
};

One one(const std::string& text, const lang::ParamOverrides& params = {}) {
  One o;
  o.spec = testing::compile(text, params);
  o.sys = std::make_unique<model::ModelSystem>(*o.spec->compiled.model);
  o.fam.members.push_back(o.sys.get());
  return o;
}

Result run(One& o, Mode mode, int depth, bool deadlock = true) {
  Options opt;
  opt.mode = mode;
  opt.depth = depth;
  opt.check_deadlock = deadlock;
  return check(o.fam, opt);
}

// Every runtime error of eval.cc, found by BMC with the explicit engine's property and counterexample length.
TEST_CASE("runtime errors: BMC agrees with the explicit engine") {
  const char* cases[] = {
      "var q: queue[2] of 0..3; process p { while true { push(q, 1); } }",                      // overflow
      "var q: queue[2] of 0..3; var x: 0..3; process p { pop(q); }",                            // underflow
      "var x: 0..3; process p { while true { x = x + 1; } }",                                    // range
      "var x: 0..3; var y: 0..9; process p { x = 2; y = 6 / (x - 2); }",                        // division by zero
      "var a: array[0..2] of bool; var i: 0..7; process p { i = 3; a[i] = true; }",             // index
      "var q: queue[1] of 0..3; var x: 0..3; process p { x = head(q); }",                       // head of empty
      "var x: 0..3; process p { x = 1; assert x == 2 mine \"x is not 2\"; }",                   // assert
      "var x: 0..3; fn f(v: 0..3): 0..2 = v; process p { x = 3; x = f(x); }",                  // fn result range
  };
  for (const char* text : cases) {
    INFO(std::string(text));
    One o = one(text);
    model::CheckResult ex = testing::check(*o.spec);
    REQUIRE(ex.outcome == model::Outcome::kViolated);
    Result r = run(o, Mode::kBmc, 8);
    REQUIRE(r.result.outcome == model::Outcome::kViolated);
    CHECK(r.result.violation->property == ex.violation->property);
    CHECK(r.result.path.actions.size() == ex.path.actions.size());
    CHECK(r.result.path.states.size() == ex.path.states.size());
  }
}

// tests/corpus/first_failure_wins.qpspec: the interpreter stops at a step's first failure, so `take` from the empty
// queue is a runtime error, not a violation of `took` (the encoder once counted both, and BMC for `took` returned a
// one-step path that failed concretely with "head of an empty queue": an internal error).
TEST_CASE("a step's first failure is the only one it reports: one property's search walks past the other's") {
  One o = one(R"spec(
    var q: queue[1] of 0..1;
    var filled: bool;
    var never: bool;
    rule fill when !filled { push(q, 1); filled = true; }
    rule take { if head(q) == 1 { skip; } fail took "take ran past head(q)"; }
    rule drain { pop(q); require never; }
  )spec");
  for (Mode mode : {Mode::kBmc, Mode::kKind}) {
    Options opt;
    opt.mode = mode;
    opt.depth = 4;
    opt.properties = {"took"};
    Result r = check(o.fam, opt);
    REQUIRE(r.result.outcome == model::Outcome::kViolated);
    CHECK(r.result.violation->property == "took");
    CHECK(r.result.path.actions == std::vector<uint32_t>{0, 1});  // fill, take
    opt.properties = {"runtime_error"};
    r = check(o.fam, opt);
    REQUIRE(r.result.outcome == model::Outcome::kViolated);
    CHECK(r.result.violation->message == "head of an empty queue");
    CHECK(r.result.path.actions == std::vector<uint32_t>{1});  // take
  }
}

TEST_CASE("records, arrays with computed indices, queues of records, quantifiers, for loops") {
  One o = one(R"(
type R = record { a: 0..3; b: bool; };
var q: queue[3] of R;
var r: R;
var arr: array[0..3] of 0..3;
var i: 0..3;
rule put when !full(q) { r.a = (r.a + 1) % 4; r.b = !r.b; push(q, r); }
rule take when !empty(q) { arr[head(q).a] = arr[head(q).a] + 1 > 3 ? 0 : arr[head(q).a] + 1; pop(q); }
rule bump { for k in 0..3 { if arr[k] == 3 { arr[k] = 0; } } i = (i + 1) % 4; }
invariant small: forall k in 0..3: arr[k] + i < 4 || exists j in 0..3: arr[j] == 0 && j != k;
)");
  model::CheckResult ex = testing::check(*o.spec);
  REQUIRE(ex.outcome == model::Outcome::kViolated);
  Result r = run(o, Mode::kBmc, 12);
  REQUIRE(r.result.outcome == model::Outcome::kViolated);
  CHECK(r.result.path.actions.size() == ex.path.actions.size());
  CHECK(r.result.violation->property == "small");
}

TEST_CASE("deadlock: found at the same depth as BFS, and not reported with --no-deadlock") {
  const char* text = "var x: bool; process p { await x; } process q { x = false; }";
  One o = one(text);
  Result r = run(o, Mode::kBmc, 5);
  REQUIRE(r.result.outcome == model::Outcome::kViolated);
  CHECK(r.result.violation->property == "deadlock");
  CHECK(r.result.path.actions.size() == 1);
  Result nd = run(o, Mode::kBmc, 5, false);
  CHECK(nd.result.outcome == model::Outcome::kInconclusive);
}

TEST_CASE("k-induction proves an inductive invariant; BMC alone stays inconclusive") {
  // Tokens move between two places; their sum is invariant (inductive at k=0). No state is a deadlock.
  One o = one(R"(
var x: 0..10 = 10;
var y: 0..10 = 0;
rule move when x > 0 { x = x - 1; y = y + 1; }
rule back when y > 1 { y = y - 2; x = x + 2; }
invariant sum: x + y == 10;
)");
  Result b = run(o, Mode::kBmc, 6);
  CHECK(b.result.outcome == model::Outcome::kInconclusive);
  Result k = run(o, Mode::kKind, 6);
  INFO(k.reason);
  CHECK(k.result.outcome == model::Outcome::kHolds);
  CHECK(k.induction_k == 0);
}

TEST_CASE("k-induction: a violation is found by its base case; a counterexample to induction when the step fails") {
  One o = one(R"(
var x: 0..3;
process p { x = 1; x = 2; }
rule leak when x == 2 { x = 3; }
invariant not3: x != 3;
)");
  model::CheckResult ex = testing::check(*o.spec);
  REQUIRE(ex.outcome == model::Outcome::kViolated);
  Result k = run(o, Mode::kKind, 6);
  REQUIRE(k.result.outcome == model::Outcome::kViolated);
  CHECK(k.result.path.actions.size() == ex.path.actions.size());

  // x cycles 0,1,2,3,0: x == 4 satisfies below5 and steps to 5 (a counterexample to induction at k=0), but no state
  // steps to 4, so with k=1 the step holds.
  One safe = one(R"(
var x: 0..7;
process p { while true { x = x == 3 ? 0 : x + 1; } }
invariant below5: x < 5;
)");
  Result c = run(safe, Mode::kKind, 0);
  CHECK(c.result.outcome == model::Outcome::kInconclusive);
  REQUIRE(c.cti.has_value());
  CHECK(c.cti_violation->property == "below5");
  CHECK(c.cti->actions.size() == 1);
  CHECK(safe.sys->unpack(c.cti->states[0].data())[0] == 4);
  Result proof = run(safe, Mode::kKind, 3);
  CHECK(proof.result.outcome == model::Outcome::kHolds);
  CHECK(proof.induction_k == 1);
}

TEST_CASE("unknown from Z3 is inconclusive with its reason, never holds") {
  One o = one(R"(
param N: 2..16 = 12;
var fork: array[0..N-1] of bool = false;
fn first(i: 0..N-1): 0..N-1  = i == N-1 ? (i + 1) % N : i;
fn second(i: 0..N-1): 0..N-1 = i == N-1 ? i : (i + 1) % N;
process phil[i in 0..N-1] {
  think:
    when !fork[first(i)] { fork[first(i)] = true; }
    when !fork[second(i)] { fork[second(i)] = true; }
  eat:
    atomic { fork[first(i)] = false; fork[second(i)] = false; }
    goto think;
}
)");
  Options opt;
  opt.depth = 12;
  opt.smt_rlimit = 20000;  // deterministic: Z3 counts its own operations
  Result r = check(o.fam, opt);
  INFO(r.reason);
  CHECK(r.result.outcome == model::Outcome::kInconclusive);
  CHECK(r.reason.find("unknown") != std::string::npos);
  CHECK(r.reason.find("--smt-rlimit 20000") != std::string::npos);
  opt.mode = Mode::kKind;
  Result k = check(o.fam, opt);
  CHECK(k.result.outcome == model::Outcome::kInconclusive);
  CHECK(k.reason.find("--smt-rlimit 20000") != std::string::npos);
}

TEST_CASE("symbolic parameters: a family of models aligned on their constants; layout parameters refused") {
  const char* text = R"(
param limit: 0..3 = 0;
param cap: 1..3 = 2;
var x: 0..7;
var q: queue[cap] of bool;
process p { while x < 7 { x = x + 1; } }
invariant under: x <= limit + 4;
)";
  std::vector<std::unique_ptr<testing::CompiledSpec>> specs;
  std::vector<std::unique_ptr<model::ModelSystem>> systems;
  Family fam;
  fam.params.push_back(SymbolicParam{"limit", {}});
  for (int v = 0; v <= 3; ++v) {
    specs.push_back(testing::compile(text, {{"limit", std::to_string(v)}}));
    systems.push_back(std::make_unique<model::ModelSystem>(*specs.back()->compiled.model));
    fam.members.push_back(systems.back().get());
    fam.params[0].values.push_back(std::to_string(v));
  }
  Options opt;
  opt.depth = 10;
  Result r = check(fam, opt);
  REQUIRE(r.result.outcome == model::Outcome::kViolated);
  CHECK(r.result.path.actions.size() == 5);   // limit 0: x reaches 5 after 5 steps: the shortest over the family
  CHECK(r.member == 0);
  Result rest = check(fam, opt, {3});          // limit 3: x <= 7 always
  CHECK(rest.result.outcome == model::Outcome::kInconclusive);
  opt.mode = Mode::kKind;
  Result proved = check(fam, opt, {3});
  CHECK(proved.result.outcome == model::Outcome::kHolds);

  Family bad;
  bad.params.push_back(SymbolicParam{"cap", {"1", "2"}});
  auto s1 = testing::compile(text, {{"cap", "1"}});
  auto s2 = testing::compile(text, {{"cap", "2"}});
  model::ModelSystem m1(*s1->compiled.model), m2(*s2->compiled.model);
  bad.members = {&m1, &m2};
  try {
    check(bad, Options{});
    FAIL("a parameter that sizes a queue was made symbolic");
  } catch (const NotSymbolic& e) {
    CHECK(std::string(e.what()).find("parameter cap cannot be symbolic") != std::string::npos);
  }
}

}  // namespace
}  // namespace qpcheck::symbolic

namespace qpcheck::symbolic {
namespace {

TEST_CASE("progress: one call per depth refuted, with the depth reached and the deepest asked for") {
  One o = one("var x: 0..7; process p { while x < 5 { x = x + 1; } }\ninvariant small: x < 4;");
  Options opt;
  opt.mode = Mode::kBmc;
  opt.depth = 10;
  std::vector<Progress> seen;
  opt.progress = [&](const Progress& p) { seen.push_back(p); };
  Result r = check(o.fam, opt);
  REQUIRE(r.result.outcome == model::Outcome::kViolated);
  REQUIRE(r.result.path.actions.size() == 4);
  // Depths 0..3 refuted, then the counterexample of length 4.
  REQUIRE(seen.size() == 5);
  for (int k = 0; k < 4; ++k) {
    CHECK(seen[k].depth == k);
    CHECK(seen[k].event.rfind("no counterexample of length " + std::to_string(k), 0) == 0);
  }
  CHECK(seen[4].depth == 4);
  CHECK(seen[4].event == "counterexample of length 4");
  for (const Progress& p : seen) {
    CHECK(p.max_depth == 10);
    CHECK(std::string(p.engine) == "bmc");
    CHECK(p.seconds >= 0);
  }
}

TEST_CASE("properties: a run restricted to some properties sees only their violations") {
  One o = one("var x: 0..7; process p { x = 1; x = 2; fail late \"x reached 2\"; }\n"
              "invariant not_one: x != 1;\ninvariant not_two: x != 2;");
  Options opt;
  opt.depth = 6;
  opt.properties = {"not_two"};
  Result r = check(o.fam, opt);
  REQUIRE(r.result.outcome == model::Outcome::kViolated);
  CHECK(r.result.violation->property == "not_two");
  CHECK(r.result.path.actions.size() == 2);
  opt.properties = {"late", "not_two"};
  r = check(o.fam, opt);
  REQUIRE(r.result.outcome == model::Outcome::kViolated);
  CHECK(r.result.violation->property == "not_two");  // the shorter of the two
  opt.properties = {"late"};
  r = check(o.fam, opt);
  REQUIRE(r.result.outcome == model::Outcome::kViolated);
  CHECK(r.result.violation->property == "late");
  CHECK(r.result.path.actions.size() == 3);
}

TEST_CASE("InterruptWatch: a set flag stops a solver call in progress (unknown), which would run for minutes") {
  // The pigeonhole principle for 14 pigeons in 13 holes as clauses: unsatisfiable, and exponential for resolution
  // (Z3 4.8.12 here: 9 holes 1.5 s, 10 holes 8 s, 11 over 60 s). Without the watch this test meets its timeout.
  z3::context ctx;
  z3::solver s(ctx);
  const int holes = 13;
  std::vector<std::vector<z3::expr>> x(holes + 1);
  for (int p = 0; p <= holes; ++p) {
    z3::expr_vector some(ctx);
    for (int h = 0; h < holes; ++h) {
      x[p].push_back(ctx.bool_const(("x" + std::to_string(p) + "_" + std::to_string(h)).c_str()));
      some.push_back(x[p][h]);
    }
    s.add(z3::mk_or(some));
  }
  for (int h = 0; h < holes; ++h) {
    for (int p = 0; p <= holes; ++p) {
      for (int q = p + 1; q <= holes; ++q) s.add(!x[p][h] || !x[q][h]);
    }
  }
  std::atomic<bool> flag{false};
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    flag.store(true);
  });
  z3::check_result r;
  {
    InterruptWatch watch(ctx, &flag);
    r = s.check();
  }
  signaller.join();
  CHECK(r == z3::unknown);
  INFO("reason: ", s.reason_unknown());
  CHECK(s.reason_unknown() == "interrupted");
  InterruptWatch none(ctx, nullptr);  // no flag: no thread
}

}  // namespace
}  // namespace qpcheck::symbolic
