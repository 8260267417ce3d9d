#include "checker/explore/explorer.h"

#include <doctest/doctest.h>

#include "tests/support/compile.h"

namespace qpcheck::explore {
namespace {

// Dining philosophers, deadlock-free variant of ../shared/bench/phil.pml: the last philosopher takes its right fork
// first. SPIN and Rumur agree on 1,136,689 states and 11,639,232 transitions for N=16.
const char* kPhilosophers = R"(
param N: 2..16 = 16;
var fork: array[0..N-1] of bool = false;
fn first(i: 0..N-1): 0..N-1  = i == N-1 ? (i + 1) % N : i;
fn second(i: 0..N-1): 0..N-1 = i == N-1 ? i : (i + 1) % N;
process phil[i in 0..N-1] {
  end think:
    when !fork[first(i)] { fork[first(i)] = true; }
    when !fork[second(i)] { fork[second(i)] = true; }
  eat:
    atomic { fork[first(i)] = false; fork[second(i)] = false; }
    goto think;
}
invariant neighbours_never_both_eat: forall k in 0..N-1: !(phil[k]@eat && phil[(k + 1) % N]@eat);
)";

TEST_CASE("BFS: philosophers N=16 has exactly 1,136,689 states and 11,639,232 transitions") {
  auto c = testing::compile(kPhilosophers);
  Result r = testing::check(*c);
  CHECK(r.outcome == Outcome::kHolds);
  CHECK(r.stats.states == 1136689);
  CHECK(r.stats.transitions == 11639232);
  CHECK(r.stats.depth == 16);
  // The store keeps exactly the bits in use (48 per state) plus a predecessor link: <= 16 bytes per state, all in.
  CHECK(static_cast<double>(r.stats.store_bytes) / r.stats.states <= 16.0);
}

TEST_CASE("DFS visits the same states as BFS") {
  auto c = testing::compile(kPhilosophers, {{"N", "8"}});
  Options bfs;
  Options dfs;
  dfs.strategy = Strategy::kDfs;
  Result a = testing::check(*c, bfs);
  Result b = testing::check(*c, dfs);
  CHECK(a.outcome == Outcome::kHolds);
  CHECK(b.outcome == Outcome::kHolds);
  CHECK(a.stats.states == b.stats.states);
  CHECK(a.stats.transitions == b.stats.transitions);
}

TEST_CASE("the symmetric variant deadlocks; BFS finds the shortest deadlock") {
  auto c = testing::compile(R"(
    param N: 2..8 = 3;
    var fork: array[0..N-1] of bool;
    process phil[i in 0..N-1] {
      end think: when !fork[i] { fork[i] = true; }
      when !fork[(i + 1) % N] { fork[(i + 1) % N] = true; }
      atomic { fork[i] = false; fork[(i + 1) % N] = false; }
      goto think;
    }
  )");
  Result r = testing::check(*c);
  REQUIRE(r.outcome == Outcome::kViolated);
  CHECK(r.violation->property == "deadlock");
  CHECK(r.shortest);
  CHECK(r.path.actions.size() == 3);  // every philosopher takes its left fork
  Options no_deadlock;
  no_deadlock.check_deadlock = false;
  CHECK(testing::check(*c, no_deadlock).outcome == Outcome::kHolds);
}

TEST_CASE("a process that leaves its body through a loop exit, an if or a choose has terminated: no deadlock") {
  const char* specs[] = {
      "var x: 0..3;\nprocess p { while x < 2 { x = x + 1; } }\n",
      "var x: 0..3;\nprocess p { if x > 5 { x = 1; } }\n",
      "var x: bool;\nprocess p { choose { } or { await x; } }\n",
      "var x: 0..3;\nprocess p { while true { if x == 3 { break; } x = x + 1; } }\n",
  };
  for (const char* text : specs) {
    INFO(text);
    auto c = testing::compile(text);
    Result r = testing::check(*c);
    CHECK(r.outcome == Outcome::kHolds);
  }
  // ... but one blocked inside its loop is deadlocked.
  auto c = testing::compile("var x: 0..3;\nprocess p { while x < 2 { await x > 5; } }\n");
  Result r = testing::check(*c);
  REQUIRE(r.outcome == Outcome::kViolated);
  CHECK(r.violation->property == "deadlock");
}

TEST_CASE("limits end in inconclusive with the statistics so far") {
  auto c = testing::compile(kPhilosophers, {{"N", "10"}});
  Options o;
  o.limits.max_states = 1000;
  Result r = testing::check(*c, o);
  CHECK(r.outcome == Outcome::kInconclusive);
  CHECK(r.limit == "max-states");
  CHECK(r.stats.states == 1000);
  Options d;
  d.limits.max_depth = 3;
  Result rd = testing::check(*c, d);
  CHECK(rd.outcome == Outcome::kInconclusive);
  CHECK(rd.limit == "max-depth");
  CHECK(rd.stats.depth == 3);  // layer 3 is stored, not expanded
  Options m;
  m.limits.max_memory_bytes = 1;
  CHECK(testing::check(*c, m).limit == "max-memory");
}

TEST_CASE("the time limit also interrupts one long evaluation (nested quantifiers), ending inconclusive") {
  auto c = testing::compile(R"(
    var x: 0..1;
    process p { x = 1; }
    invariant i: forall k in 0..65535: forall j in 0..65535: k + j >= 0;
  )");
  Options o;
  o.limits.time_limit_seconds = 1e-9;
  Result r = testing::check(*c, o);
  CHECK(r.outcome == Outcome::kInconclusive);
  CHECK(r.limit == "time-limit");
}

TEST_CASE("BFS counterexamples are shortest; the path is rebuilt from predecessor links") {
  // x climbs by 1 or 2; the invariant x != 7 first fails after 4 steps (2+2+2+1).
  auto c = testing::compile(R"(
    var x: 0..9;
    process p { while true { choose { when x < 9 { x = x + 1; } } or { when x < 8 { x = x + 2; } } } }
    invariant not_seven: x != 7;
  )");
  Result r = testing::check(*c);
  REQUIRE(r.outcome == Outcome::kViolated);
  CHECK(r.violation->property == "not_seven");
  CHECK(r.shortest);
  CHECK(r.path.actions.size() == 4);
  CHECK(r.path.states.size() == 5);
  model::ModelSystem sys(*c->compiled.model);
  CHECK(sys.unpack(r.path.states.back().data())[0] == 7);
  CHECK(sys.unpack(r.path.states.front().data())[0] == 0);
}

TEST_CASE("an initial state that violates an invariant is a zero-step counterexample") {
  auto c = testing::compile("var x: 0..1 = 1;\nprocess p { x = 0; }\ninvariant zero: x == 0;\n");
  Result r = testing::check(*c);
  REQUIRE(r.outcome == Outcome::kViolated);
  CHECK(r.path.actions.empty());
  CHECK(r.stats.states == 1);
}

TEST_CASE("parallel BFS: same states, transitions, depth, path and actions as one thread") {
  auto c = testing::compile(kPhilosophers, {{"N", "10"}});
  Options two;
  two.threads = 2;
  Result a = testing::check(*c);
  Result b = testing::check(*c, two);
  CHECK(b.outcome == Outcome::kHolds);
  CHECK(a.stats.states == b.stats.states);
  CHECK(a.stats.transitions == b.stats.transitions);
  CHECK(a.stats.depth == b.stats.depth);
  CHECK(a.action_fired == b.action_fired);
  // A counterexample: the symmetric philosophers deadlock after 3 steps with either thread count.
  auto d = testing::compile(R"(
    param N: 2..8 = 3;
    var fork: array[0..N-1] of bool;
    process phil[i in 0..N-1] {
      end think: when !fork[i] { fork[i] = true; }
      when !fork[(i + 1) % N] { fork[(i + 1) % N] = true; }
      atomic { fork[i] = false; fork[(i + 1) % N] = false; }
      goto think;
    }
  )");
  Result one_d = testing::check(*d);
  Result two_d = testing::check(*d, two);
  REQUIRE(two_d.outcome == Outcome::kViolated);
  CHECK(two_d.violation->property == "deadlock");
  CHECK(two_d.shortest);
  CHECK(two_d.path.actions == one_d.path.actions);
  CHECK(two_d.path.states == one_d.path.states);
  CHECK(two_d.stats.states == one_d.stats.states);
}

TEST_CASE("partial-order reduction: independent processes run one after the other; verdicts kept") {
  auto c = testing::compile(R"(
    var a: 0..3;
    var b: 0..3;
    process p { a = 1; a = 2; a = 3; }
    process q { b = 1; b = 2; b = 3; }
  )");
  Options por;
  por.por = true;
  Result full = testing::check(*c);
  Result reduced = testing::check(*c, por);
  CHECK(full.outcome == Outcome::kHolds);
  CHECK(full.stats.states == 16);
  CHECK(reduced.outcome == Outcome::kHolds);
  CHECK(reduced.por_groups == 2);
  CHECK(reduced.stats.states == 7);  // p runs to its end (4 states), then q (3 more)
  // A deadlock of one process is still found.
  auto d = testing::compile(R"(
    var a: 0..3;
    var b: 0..3;
    process p { a = 1; await a == 0; }
    process q { b = 1; b = 2; }
  )");
  Result dr = testing::check(*d, por);
  REQUIRE(dr.outcome == Outcome::kViolated);
  CHECK(dr.violation->property == "deadlock");
  CHECK_FALSE(dr.shortest);
  // An invariant over both variables makes every action visible: no reduction, same count.
  auto v = testing::compile(R"(
    var a: 0..3;
    var b: 0..3;
    process p { a = 1; a = 2; a = 3; }
    process q { b = 1; b = 2; b = 3; }
    invariant sum: a + b <= 6;
  )");
  Result vr = testing::check(*v, por);
  CHECK(vr.outcome == Outcome::kHolds);
  CHECK(vr.stats.states == 16);
  CHECK(vr.por_reduced_states == 0);
}

TEST_CASE("action_fired: 1 exactly for the actions that produced a transition") {
  // p's second statement is never enabled; its first and third are.
  auto c = testing::compile(R"(
    var x: 0..3;
    process p { x = 1; await x == 2; }
    process q { x = 3; }
  )");
  for (int threads : {1, 2}) {
    Options o;
    o.threads = threads;
    o.check_deadlock = false;
    Result r = testing::check(*c, o);
    model::ModelSystem sys(*c->compiled.model);
    REQUIRE(r.action_fired.size() == sys.action_count());
    int fired = 0;
    for (uint8_t f : r.action_fired) fired += f;
    CHECK(fired == 2);  // p: x = 1; q: x = 3 (await x == 2 never holds)
  }
}

}  // namespace
}  // namespace qpcheck::explore
