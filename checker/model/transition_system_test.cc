#include "checker/model/model_system.h"

#include <doctest/doctest.h>

#include "tests/support/compile.h"

namespace qpcheck::model {
namespace {

TEST_CASE("state layout: each slot takes the fewest bits of its range and round-trips") {
  std::vector<SlotInfo> slots = {{0, 1, nullptr}, {-3, 4, nullptr}, {0, 0, nullptr}, {5, 5, nullptr},
                                 {0, (1LL << 40) - 1, nullptr}, {0, 2000000, nullptr}};
  StateLayout layout(slots);
  // 1 + 3 + 0 + 0 + 40 bits fit in one word; the 21-bit slot starts the second.
  CHECK(layout.bits() == 1 + 3 + 40 + 21);
  CHECK(layout.words() == 2);
  std::vector<int64_t> values = {1, -3, 0, 5, (1LL << 40) - 2, 999999};
  uint64_t packed[2];
  layout.pack(values, packed);
  std::vector<int64_t> back;
  layout.unpack(packed, back);
  CHECK(back == values);
  values[1] = 4;
  layout.pack(values, packed);
  layout.unpack(packed, back);
  CHECK(back[1] == 4);
}

TEST_CASE("compiled model: queue slots, pc slots and initial values") {
  auto c = testing::compile(R"(
    type M = enum { REQ, REP, RTU };
    var q: queue[2] of M;
    var a: array[0..2] of 1..3 = 2;
    process p { push(q, RTU); }
  )");
  const Model& m = *c->compiled.model;
  // q: length + 2 elements; a: 3 slots; p's program counter.
  REQUIRE(m.slots.size() == 3 + 3 + 1);
  CHECK(m.initial == std::vector<int64_t>{0, 0, 0, 2, 2, 2, 0});
  ModelSystem sys(m);
  CHECK(sys.layout().bits() == 2 + 2 + 2 + 3 * 2 + 1);
  struct Sink : SuccessorSink {
    std::vector<std::vector<int64_t>> next;
    ModelSystem* sys;
    void successor(uint32_t, const uint64_t* s) override { next.push_back(sys->unpack(s)); }
    void failure(uint32_t, const Violation&) override { FAIL("no failure expected"); }
  } sink;
  sink.sys = &sys;
  auto init = sys.initial_states();
  CHECK(sys.successors(init[0].data(), sink) == 1);
  REQUIRE(sink.next.size() == 1);
  CHECK(sink.next[0] == std::vector<int64_t>{1, 2, 0, 2, 2, 2, 1});
}

TEST_CASE("records, arrays of records and queues of records: fields, whole-value copies, FIFO order") {
  auto c = testing::compile(R"(
    type Ep = enum { A, B };
    type Wr = record { id: 0..7; len: 0..3; };
    var sq: array[Ep] of queue[2] of Wr;
    var last: Wr;
    var w: Wr;
    process p {
      w.id = 5; w.len = 2;
      push(sq[A], w);
      w.id = 6;
      push(sq[A], w);
      atomic { last = head(sq[A]); pop(sq[A]); }
      assert last.id == 5 && last.len == 2 && head(sq[A]).id == 6 && len(sq[A]) == 1 order "FIFO order";
      assert last == last order;
    }
  )");
  model::CheckResult r = testing::check(*c);
  CHECK(r.outcome == model::Outcome::kHolds);
  CHECK(r.stats.states == 9);  // the initial state and one per statement
  CHECK(c->compiled.model->slots.size() == 2 * (1 + 2 * 2) + 2 + 2 + 1);
}

TEST_CASE("execution: require disables a step; runtime errors are step failures") {
  auto c = testing::compile(R"(
    var x: 0..2;
    proc inc() { require x < 2; x = x + 1; }
    proc over() { x = x + 5; }
    process p { inc(); inc(); inc(); }
    process q { await x == 2; over(); }
  )");
  model::CheckResult r = testing::check(*c);
  REQUIRE(r.outcome == model::Outcome::kViolated);
  CHECK(r.violation->property == "runtime_error");
  CHECK(r.violation->message == "value 7 out of range 0..2 for the assignment to x");
  CHECK(r.path.actions.size() == 4);  // inc, inc, await, over (fails)
}

TEST_CASE("execution: 64-bit overflow and division by zero are runtime errors, not undefined behaviour") {
  auto c = testing::compile(R"(
    var x: 0..1;
    var big: 0..2147483647 = 2147483647;
    process p { x = big * big * big * big * 2 > 0 ? 1 : 0; }
  )");
  model::CheckResult r = testing::check(*c);
  REQUIRE(r.outcome == model::Outcome::kViolated);
  CHECK(r.violation->message == "integer overflow (results must fit in 64 bits)");
  auto d = testing::compile("var x: 0..1;\nprocess p { x = 1 / x; }\n");
  model::CheckResult rd = testing::check(*d);
  REQUIRE(rd.outcome == model::Outcome::kViolated);
  CHECK(rd.violation->message == "division by zero");
}

// f0..f25, each calling the one before twice: inlined, 2^25 statements (1.5 GiB before the specialiser was bounded).
std::string nested_procs() {
  std::string text = "var x: 0..1;\nproc f0() { x = 1; }\n";
  for (int k = 1; k <= 25; ++k) {
    text += "proc f" + std::to_string(k) + "() { f" + std::to_string(k - 1) + "(); f" + std::to_string(k - 1) +
            "(); }\n";
  }
  return text + "process p { f25(); }\n";
}

TEST_CASE("specialisation stays within BuildLimits::max_bytes; the model computes the same") {
  auto c = testing::compile(nested_procs());
  BuildLimits limits;
  limits.max_bytes = 1 << 20;
  ModelSystem sys(*c->compiled.model, limits);
  CHECK(sys.memory_bytes() > 0);
  CHECK(sys.memory_bytes() <= (1 << 20) + (64 << 10));  // the bound plus one copy of the last action's code
  model::CheckResult r = explore::explore(sys, {});
  CHECK(r.outcome == model::Outcome::kHolds);
  CHECK(r.stats.states == 2);
}

TEST_CASE("a deadline passed before the build leaves actions unspecialised, with the same results") {
  auto c = testing::compile(nested_procs());
  BuildLimits limits;
  limits.deadline = std::chrono::steady_clock::now();
  ModelSystem sys(*c->compiled.model, limits);
  CHECK(sys.memory_bytes() < (16 << 10));  // nothing inlined
  CHECK(ModelSystem(*c->compiled.model).memory_bytes() > (1 << 20));
  model::CheckResult r = explore::explore(sys, {});
  CHECK(r.outcome == model::Outcome::kHolds);
  CHECK(r.stats.states == 2);
}

TEST_CASE("nested calls: building is linear, and the time limit and an interrupt stop one long evaluation") {
  // f60(x) calls f0 2^60 times: the footprint analyses walk each body once; evaluating it polls the clock.
  std::string text = "var x: 0..3;\nfn f0(a: 0..3): 0..3 = a;\n";
  for (int k = 1; k <= 60; ++k) {
    text += "fn f" + std::to_string(k) + "(a: 0..3): 0..3 = f" + std::to_string(k - 1) + "(f" +
            std::to_string(k - 1) + "(a));\n";
  }
  text += "process p { x = 1; }\ninvariant i: f60(x) >= 0;\n";
  auto c = testing::compile(text);
  ModelSystem sys(*c->compiled.model);
  explore::Options o;
  o.limits.time_limit_seconds = 0.5;
  model::CheckResult r = explore::explore(sys, o);
  CHECK(r.outcome == model::Outcome::kInconclusive);
  CHECK(r.limit == "time-limit");
  std::atomic<bool> stop{true};
  explore::Options i;
  i.interrupt = &stop;
  model::CheckResult ri = explore::explore(sys, i);
  CHECK(ri.outcome == model::Outcome::kInconclusive);
  CHECK(ri.limit == "interrupted");
}

}  // namespace
}  // namespace qpcheck::model
