#include "checker/explore/explorer.h"

#include <algorithm>
#include <optional>

#include <doctest/doctest.h>

#include "checker/model/model_system.h"
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

// The symmetric variant: every philosopher takes its left fork first, so all can hold one and deadlock.
const char* kSymmetricPhilosophers = R"(
param N: 2..8 = 3;
var fork: array[0..N-1] of bool;
process phil[i in 0..N-1] {
  end think: when !fork[i] { fork[i] = true; }
  when !fork[(i + 1) % N] { fork[(i + 1) % N] = true; }
  atomic { fork[i] = false; fork[(i + 1) % N] = false; }
  goto think;
}
)";

TEST_CASE("BFS: philosophers N=16 has exactly 1,136,689 states and 11,639,232 transitions") {
  auto c = testing::compile(kPhilosophers);
  model::CheckResult r = testing::check(*c);
  CHECK(r.outcome == model::Outcome::kHolds);
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
  model::CheckResult a = testing::check(*c, bfs);
  model::CheckResult b = testing::check(*c, dfs);
  CHECK(a.outcome == model::Outcome::kHolds);
  CHECK(b.outcome == model::Outcome::kHolds);
  CHECK(a.stats.states == b.stats.states);
  CHECK(a.stats.transitions == b.stats.transitions);
}

TEST_CASE("the symmetric variant deadlocks; BFS finds the shortest deadlock") {
  auto c = testing::compile(kSymmetricPhilosophers);
  model::CheckResult r = testing::check(*c);
  REQUIRE(r.outcome == model::Outcome::kViolated);
  CHECK(r.violation->property == "deadlock");
  CHECK(r.shortest);
  CHECK(r.path.actions.size() == 3);  // every philosopher takes its left fork
  Options no_deadlock;
  no_deadlock.check_deadlock = false;
  CHECK(testing::check(*c, no_deadlock).outcome == model::Outcome::kHolds);
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
    model::CheckResult r = testing::check(*c);
    CHECK(r.outcome == model::Outcome::kHolds);
  }
  // ... but one blocked inside its loop is deadlocked.
  auto c = testing::compile("var x: 0..3;\nprocess p { while x < 2 { await x > 5; } }\n");
  model::CheckResult r = testing::check(*c);
  REQUIRE(r.outcome == model::Outcome::kViolated);
  CHECK(r.violation->property == "deadlock");
}

TEST_CASE("limits end in inconclusive with the statistics so far") {
  auto c = testing::compile(kPhilosophers, {{"N", "10"}});
  Options o;
  o.limits.max_states = 1000;
  model::CheckResult r = testing::check(*c, o);
  CHECK(r.outcome == model::Outcome::kInconclusive);
  CHECK(r.limit == "max-states");
  CHECK(r.stats.states == 1000);
  Options d;
  d.limits.max_depth = 3;
  model::CheckResult rd = testing::check(*c, d);
  CHECK(rd.outcome == model::Outcome::kInconclusive);
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
  model::CheckResult r = testing::check(*c, o);
  CHECK(r.outcome == model::Outcome::kInconclusive);
  CHECK(r.limit == "time-limit");
}

TEST_CASE("parallel BFS: a round's messages count against --max-memory before they are allocated") {
  // 4096 one-step processes: a state has up to 4096 successors of 520 bytes, so one round of 32768 states per thread
  // would send ~70 GB of messages (6.7 GiB RSS before the outboxes drew from the limit).
  auto c = testing::compile("process zz[k in 0..4095] { skip; }\n");
  Options o;
  o.threads = 2;
  o.limits.max_states = 20000;
  o.limits.max_memory_bytes = 50 << 20;
  o.limits.time_limit_seconds = 600;
  model::CheckResult r = testing::check(*c, o);
  CHECK(r.outcome == model::Outcome::kInconclusive);
  CHECK(r.limit == "max-memory");
  CHECK(r.stats.states <= 20000);
}

TEST_CASE("an interrupt stops every search as inconclusive, with the statistics so far") {
  auto c = testing::compile(kPhilosophers, {{"N", "10"}});
  std::atomic<bool> stop{true};
  for (int threads : {1, 2}) {
    Options o;
    o.threads = threads;
    o.interrupt = &stop;
    model::CheckResult r = testing::check(*c, o);
    CHECK(r.outcome == model::Outcome::kInconclusive);
    CHECK(r.limit == "interrupted");
    CHECK(r.stats.states >= 1);
  }
  Options p;
  p.storage = Storage::kHashCompaction;
  p.interrupt = &stop;
  model::CheckResult rp = testing::check(*c, p);
  CHECK(rp.limit == "interrupted");
}

TEST_CASE("BFS counterexamples are shortest; the path is rebuilt from predecessor links") {
  // x climbs by 1 or 2; the invariant x != 7 first fails after 4 steps (2+2+2+1).
  auto c = testing::compile(R"(
    var x: 0..9;
    process p { while true { choose { when x < 9 { x = x + 1; } } or { when x < 8 { x = x + 2; } } } }
    invariant not_seven: x != 7;
  )");
  model::CheckResult r = testing::check(*c);
  REQUIRE(r.outcome == model::Outcome::kViolated);
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
  model::CheckResult r = testing::check(*c);
  REQUIRE(r.outcome == model::Outcome::kViolated);
  CHECK(r.path.actions.empty());
  CHECK(r.stats.states == 1);
}

// True when every action of `p` leads from its state to the next one (the last may be a failing step).
bool replays(model::TransitionSystem& sys, const model::Path& p) {
  struct Find : model::SuccessorSink {
    uint32_t action = 0;
    const std::vector<uint64_t>* to = nullptr;
    bool hit = false;
    void successor(uint32_t a, const uint64_t* s) override {
      if (a == action && to != nullptr && std::equal(to->begin(), to->end(), s)) hit = true;
    }
    void failure(uint32_t a, const model::Violation&) override {
      if (a == action && to == nullptr) hit = true;
    }
  };
  if (p.states.empty() || p.actions.size() + 1 < p.states.size()) return false;
  for (size_t i = 0; i < p.actions.size(); ++i) {
    Find f;
    f.action = p.actions[i];
    f.to = i + 1 < p.states.size() ? &p.states[i + 1] : nullptr;
    sys.successors(p.states[i].data(), f);
    if (!f.hit) return false;
  }
  return true;
}

Options with_threads(int threads, uint64_t round_states = 0) {
  Options o;
  o.threads = threads;
  o.round_states = round_states;
  return o;
}

// BFS without POR or max-states stores successors in batches (StateStore::stage); a max-states limit beyond reach
// keeps the one-at-a-time path. Both must give the same counts, verdict, property and counterexample, also where a
// failing step follows a new state that violates an invariant in the same expansion, at a deadlock and at a memory
// limit reached in the middle of a layer.
void check_batched_as_single(testing::CompiledSpec& c, const Options& o) {
  Options single = o;
  single.limits.max_states = uint64_t{1} << 40;
  model::CheckResult a = testing::check(c, o), b = testing::check(c, single);
  CHECK(a.outcome == b.outcome);
  CHECK(a.limit == b.limit);
  CHECK(a.stats.states == b.stats.states);
  CHECK(a.stats.transitions == b.stats.transitions);
  CHECK(a.stats.depth == b.stats.depth);
  CHECK(a.stats.store_bytes == b.stats.store_bytes);
  CHECK(a.action_fired == b.action_fired);
  REQUIRE(a.violation.has_value() == b.violation.has_value());
  if (a.violation) {
    CHECK(a.violation->kind == b.violation->kind);
    CHECK(a.violation->property == b.violation->property);
  }
  CHECK(a.path.states == b.path.states);
  CHECK(a.path.actions == b.path.actions);
}

TEST_CASE("batched BFS stores, checks and stops exactly as one-at-a-time insertion") {
  auto phil = testing::compile(kPhilosophers, {{"N", "10"}});
  check_batched_as_single(*phil, {});
  // From x = 0 the first action makes a new state that violates the invariant, the second fails: the invariant was
  // found first.
  auto order = testing::compile(R"(
    var x: 0..9;
    process p {
      choose { when x == 0 { x = 5; } }
      or { when x == 0 { assert x != 0 wrong "zero"; } }
    }
    invariant not_five: x != 5;
  )");
  Options single;
  single.limits.max_states = uint64_t{1} << 40;
  model::CheckResult first = testing::check(*order, single);
  REQUIRE(first.violation.has_value());
  REQUIRE(first.violation->property == "not_five");
  check_batched_as_single(*order, {});
  auto deadlock = testing::compile(kSymmetricPhilosophers, {{"N", "5"}});
  check_batched_as_single(*deadlock, {});
  // A memory limit reached in the middle of the search, at each of a few sizes.
  model::CheckResult full = testing::check(*phil);
  for (uint64_t part : {3, 5, 8}) {
    Options m;
    m.limits.max_memory_bytes = full.stats.store_bytes * part / 10;
    model::CheckResult r = testing::check(*phil, m);
    CHECK(r.limit == "max-memory");
    CHECK(r.stats.states < full.stats.states);
    check_batched_as_single(*phil, m);
  }
}

TEST_CASE("parallel BFS: the same states, transitions, depth and fired actions as one thread") {
  auto c = testing::compile(kPhilosophers, {{"N", "10"}});
  model::CheckResult one = testing::check(*c);
  CHECK(one.outcome == model::Outcome::kHolds);
  // Round sizes from one state per round (many exchanges per layer) to whole layers per round.
  for (int threads : {2, 3}) {
    for (uint64_t round : {uint64_t{1}, uint64_t{37}, uint64_t{0}}) {
      INFO("threads ", threads, " round_states ", round);
      model::CheckResult r = testing::check(*c, with_threads(threads, round));
      CHECK(r.outcome == model::Outcome::kHolds);
      CHECK(r.stats.states == one.stats.states);
      CHECK(r.stats.transitions == one.stats.transitions);
      CHECK(r.stats.depth == one.stats.depth);
      CHECK(r.action_fired == one.action_fired);
    }
  }
}

// The philosophers (N=8) with one more invariant: two philosophers that are not neighbours may not eat at once,
// violated after 4 steps (each takes two forks).
const std::string kFarApart =
    std::string(kPhilosophers) + "invariant far_apart_not_both: !(phil[1]@eat && phil[5]@eat);\n";

TEST_CASE("parallel BFS: an invariant violation has the same length, property and counts; deterministic") {
  auto c = testing::compile(kFarApart, {{"N", "8"}});
  model::CheckResult one = testing::check(*c);
  REQUIRE(one.outcome == model::Outcome::kViolated);
  CHECK(one.path.actions.size() == 4);
  model::ModelSystem sys(*c->compiled.model);
  for (int threads : {2, 3}) {
    for (uint64_t round : {uint64_t{3}, uint64_t{0}}) {
      INFO("threads ", threads, " round_states ", round);
      model::CheckResult r = testing::check(*c, with_threads(threads, round));
      REQUIRE(r.outcome == model::Outcome::kViolated);
      CHECK(r.violation->property == "far_apart_not_both");
      CHECK(r.shortest);
      CHECK(r.path.actions.size() == one.path.actions.size());
      CHECK(r.stats.states == one.stats.states);  // the layer is finished either way
      CHECK(r.stats.transitions == one.stats.transitions);
      CHECK(replays(sys, r.path));
      CHECK(sys.check_invariants(r.path.states.back().data()).has_value());
      model::CheckResult again = testing::check(*c, with_threads(threads, round));
      CHECK(again.path.states == r.path.states);
      CHECK(again.path.actions == r.path.actions);
    }
  }
}

TEST_CASE("parallel BFS: a failing step and a deadlock are found at the same (shortest) depth as one thread") {
  // x climbs by 1 or 2 from 0; the assertion fails when it reaches 7 (4 steps, then the failing one).
  auto f = testing::compile(R"(
    var x: 0..9;
    process p {
      while true {
        choose { when x < 9 { x = x + 1; } }
        or { when x < 8 { x = x + 2; } }
        or { when x == 7 { assert x != 7 wrong "seven"; } }
      }
    }
  )");
  model::CheckResult one_f = testing::check(*f);
  REQUIRE(one_f.outcome == model::Outcome::kViolated);
  CHECK(one_f.violation->kind == model::Violation::Kind::kStepFailure);
  model::ModelSystem fsys(*f->compiled.model);
  // The symmetric philosophers deadlock after 3 steps (every philosopher holds its left fork).
  auto d = testing::compile(kSymmetricPhilosophers, {{"N", "4"}});
  model::CheckResult one_d = testing::check(*d);
  REQUIRE(one_d.outcome == model::Outcome::kViolated);
  CHECK(one_d.path.actions.size() == 4);
  model::ModelSystem dsys(*d->compiled.model);
  for (int threads : {2, 3}) {
    for (uint64_t round : {uint64_t{1}, uint64_t{0}}) {
      INFO("threads ", threads, " round_states ", round);
      model::CheckResult rf = testing::check(*f, with_threads(threads, round));
      REQUIRE(rf.outcome == model::Outcome::kViolated);
      CHECK(rf.violation->property == one_f.violation->property);
      CHECK(rf.shortest);
      CHECK(rf.path.actions.size() == one_f.path.actions.size());
      CHECK(rf.path.states.size() == one_f.path.states.size());
      CHECK(rf.stats.states == one_f.stats.states);
      CHECK(rf.stats.transitions == one_f.stats.transitions);
      CHECK(replays(fsys, rf.path));
      model::CheckResult rd = testing::check(*d, with_threads(threads, round));
      REQUIRE(rd.outcome == model::Outcome::kViolated);
      CHECK(rd.violation->property == "deadlock");
      CHECK(rd.shortest);
      CHECK(rd.path.actions.size() == 4);
      CHECK(replays(dsys, rd.path));
      CHECK(rd.path.states.back() == one_d.path.states.back());  // the only deadlock
      model::CheckResult again = testing::check(*d, with_threads(threads, round));
      CHECK(again.path.actions == rd.path.actions);
      CHECK(again.stats.states == rd.stats.states);
    }
  }
}

// A layer is expanded in the order its states were found, whatever the round size cuts it into, and what a chunk
// finds is kept per shard: so with T threads the reported failure, its counterexample and the witness are the same for
// every round size (a chunk that kept only its first finding lost a lower shard's behind a higher one's).
TEST_CASE("parallel BFS: the failure and the witness reported do not depend on the round size") {
  // At depth 7, each of the eight states with a + b == 7 fails an assertion. (7 rather than 6: with these hashes a
  // higher shard's failing state then comes first in a chunk, which a chunk that kept only its first finding got
  // wrong.)
  auto f = testing::compile(R"(
    var a: 0..7;
    var b: 0..7;
    process p {
      while true {
        choose { when a < 7 { a = a + 1; } }
        or { when a + b == 7 { assert a != b wrong "even split"; } }
        or { when a + b == 7 { assert a == b wrong "uneven split"; } }
      }
    }
    process q { while true { when b < 7 { b = b + 1; } } }
  )");
  // Twelve terminal states at depth 3.
  auto e = testing::compile(R"(
    var a: 0..3;
    var b: 0..3;
    var c: 0..2;
    process p { choose { a = 1; } or { a = 2; } or { a = 3; } }
    process q { choose { b = 1; } or { b = 2; } }
    process r { choose { c = 1; } or { c = 2; } }
  )");
  model::ModelSystem fsys(*f->compiled.model);
  model::ModelSystem esys(*e->compiled.model);
  for (int threads : {2, 3}) {
    std::optional<model::CheckResult> first_f, first_e;
    for (uint64_t round : {uint64_t{1}, uint64_t{2}, uint64_t{5}, uint64_t{0}}) {
      INFO("threads ", threads, " round_states ", round);
      model::CheckResult rf = testing::check(*f, with_threads(threads, round));
      REQUIRE(rf.outcome == model::Outcome::kViolated);
      CHECK(rf.path.actions.size() == 8);
      CHECK(replays(fsys, rf.path));
      Options w = with_threads(threads, round);
      w.witness = true;
      model::CheckResult re = testing::check(*e, w);
      REQUIRE(re.outcome == model::Outcome::kHolds);
      CHECK(re.path.actions.size() == 3);
      CHECK(esys.valid_end(re.path.states.back().data()));
      if (!first_f) {
        first_f = rf;
        first_e = re;
        continue;
      }
      CHECK(rf.violation->message == first_f->violation->message);
      CHECK(rf.path.states == first_f->path.states);
      CHECK(rf.path.actions == first_f->path.actions);
      CHECK(re.path.states == first_e->path.states);
    }
  }
}

TEST_CASE("parallel BFS: limits, the witness run and action_fired") {
  auto c = testing::compile(kPhilosophers, {{"N", "10"}});
  for (int threads : {2, 3}) {
    INFO("threads ", threads);
    Options o = with_threads(threads, 16);
    o.limits.max_states = 1000;
    model::CheckResult r = testing::check(*c, o);
    CHECK(r.outcome == model::Outcome::kInconclusive);
    CHECK(r.limit == "max-states");
    CHECK(r.stats.states == 1000);  // exactly, across the shards
    Options d = with_threads(threads);
    d.limits.max_depth = 3;
    model::CheckResult rd = testing::check(*c, d);
    CHECK(rd.limit == "max-depth");
    CHECK(rd.stats.depth == 3);
    CHECK(rd.stats.states == testing::check(*c, [] { Options s; s.limits.max_depth = 3; return s; }()).stats.states);
    Options m = with_threads(threads);
    m.limits.max_memory_bytes = 1;
    CHECK(testing::check(*c, m).limit == "max-memory");
  }
  // Witness: the shortest run to a terminal state (p: 3 steps, q: 1).
  auto e = testing::compile(R"(
    var a: 0..3;
    var b: 0..3;
    process p { a = 1; while a < 3 { a = a + 1; } }
    process q { choose { b = 1; } or { b = 2; b = 3; } }
  )");
  model::ModelSystem esys(*e->compiled.model);
  Options w1;
  w1.witness = true;
  model::CheckResult rw1 = testing::check(*e, w1);
  REQUIRE(rw1.outcome == model::Outcome::kHolds);
  CHECK(rw1.path.actions.size() == 4);
  for (int threads : {2, 3}) {
    Options w = with_threads(threads, 1);
    w.witness = true;
    model::CheckResult rw = testing::check(*e, w);
    CHECK(rw.outcome == model::Outcome::kHolds);
    CHECK(rw.shortest);
    CHECK(rw.path.actions.size() == rw1.path.actions.size());
    CHECK(replays(esys, rw.path));
    CHECK(esys.valid_end(rw.path.states.back().data()));
  }
  auto slow = testing::compile(R"(
    var x: 0..3;
    process p { x = 1; x = 2; x = 3; }
    invariant i: forall k in 0..65535: forall j in 0..65535: k + j >= 0;
  )");
  Options t = with_threads(2);
  t.limits.time_limit_seconds = 1e-9;
  model::CheckResult rt = testing::check(*slow, t);
  CHECK(rt.outcome == model::Outcome::kInconclusive);
  CHECK(rt.limit == "time-limit");
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
  model::CheckResult full = testing::check(*c);
  model::CheckResult reduced = testing::check(*c, por);
  CHECK(full.outcome == model::Outcome::kHolds);
  CHECK(full.stats.states == 16);
  CHECK(reduced.outcome == model::Outcome::kHolds);
  CHECK(reduced.por_groups == 2);
  CHECK(reduced.stats.states == 7);  // p runs to its end (4 states), then q (3 more)
  // A deadlock of one process is still found.
  auto d = testing::compile(R"(
    var a: 0..3;
    var b: 0..3;
    process p { a = 1; await a == 0; }
    process q { b = 1; b = 2; }
  )");
  model::CheckResult dr = testing::check(*d, por);
  REQUIRE(dr.outcome == model::Outcome::kViolated);
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
  model::CheckResult vr = testing::check(*v, por);
  CHECK(vr.outcome == model::Outcome::kHolds);
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
  for (int threads : {1, 2, 3}) {
    Options o;
    o.threads = threads;
    o.check_deadlock = false;
    model::CheckResult r = testing::check(*c, o);
    model::ModelSystem sys(*c->compiled.model);
    REQUIRE(r.action_fired.size() == sys.action_count());
    int fired = 0;
    for (uint8_t f : r.action_fired) fired += f;
    CHECK(fired == 2);  // p: x = 1; q: x = 3 (await x == 2 never holds)
  }
}

// A ModelSystem whose successors carry a stray bit above word_bits (bit 63 of word 0; the model leaves bits 62 and
// 63 unused): outside TransitionSystem's contract, which the store tolerates by reading only the used bits.
struct Dirty : model::TransitionSystem {
  std::unique_ptr<model::ModelSystem> m;
  explicit Dirty(const model::Model& mod) : m(std::make_unique<model::ModelSystem>(mod)) {}
  int state_words() const override { return m->state_words(); }
  std::vector<std::vector<uint64_t>> initial_states() override { return m->initial_states(); }
  int successors(const uint64_t* state, model::SuccessorSink& sink) override {
    struct F : model::SuccessorSink {
      model::SuccessorSink* out;
      std::vector<uint64_t> buf;
      void successor(uint32_t a, const uint64_t* s) override {
        std::copy(s, s + buf.size(), buf.begin());
        buf[0] |= uint64_t{1} << 63;
        out->successor(a, buf.data());
      }
      void failure(uint32_t a, const model::Violation& v) override { out->failure(a, v); }
    } f;
    f.out = &sink;
    f.buf.resize(static_cast<size_t>(m->state_words()));
    return m->successors(state, f);
  }
  std::optional<model::Violation> check_invariants(const uint64_t* s) override { return m->check_invariants(s); }
  std::optional<model::Violation> check_invariants_after(uint32_t a, const uint64_t* s) override {
    return m->check_invariants_after(a, s);
  }
  bool valid_end(const uint64_t* s) override { return m->valid_end(s); }
  void set_deadline(std::chrono::steady_clock::time_point d) override { m->set_deadline(d); }
  uint32_t action_count() const override { return m->action_count(); }
  std::vector<int> word_bits() const override { return m->word_bits(); }
  std::unique_ptr<model::TransitionSystem> clone() const override { return std::make_unique<Dirty>(m->model()); }
};

TEST_CASE("parallel BFS: a stray bit above word_bits does not reach the action a message carries there") {
  auto c = testing::compile(R"(
    var a: 0..2147483647;
    var b: 0..2147483647;
    process p {
      while true {
        choose { when a < 40 { a = a + 1; } }
        or { when a < 30 { a = a + 3; } }
        or { when b < 20 { b = b + 2; } }
        or { when b < 20 { b = b + 1; } }
      }
    }
    invariant A: a < 37;
    invariant B: b < 100;
  )");
  Dirty d(*c->compiled.model);
  REQUIRE(d.word_bits() == std::vector<int>{62});  // room for the 4 actions' 2 bits at the top, bit 63 among them
  REQUIRE(d.action_count() == 4);
  model::CheckResult one = explore(d, Options{});
  model::CheckResult two = explore(d, with_threads(2));
  REQUIRE(one.violation);
  CHECK(one.violation->property == "A");
  REQUIRE(two.violation);
  CHECK(two.violation->property == one.violation->property);
  CHECK(two.outcome == one.outcome);
  CHECK(two.stats.states == one.stats.states);
  CHECK(two.path.actions.size() == one.path.actions.size());
}

}  // namespace
}  // namespace qpcheck::explore
