// The model's fast paths against their reference, on every shipped spec and corpus model and on specs written to
// reach every error path, for every reachable state in which every invariant holds (up to a bound per spec):
// - ModelSystem::successors (specialised actions, prefilters, flat ops, constant patches) reports exactly what
//   reference_successors (the original model on the tree evaluator) reports: same actions in the same order, same
//   successor states, same failures (property, message, span);
// - check_invariants_after(action, successor) returns exactly check_invariants(successor): none, or the same
//   invariant, message, span and kind (violations and runtime errors included).
#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "checker/frontend/frontend.h"
#include "checker/model/model_system.h"
#include "tests/support/compile.h"
#include "tests/support/corpus_header.h"

namespace qpcheck {
namespace {

namespace fs = std::filesystem;
using model::ModelSystem;
using model::Violation;

lang::ParamOverrides header_params(const fs::path& file) { return testing::read_corpus_header(file).overrides(); }

struct Counts {
  size_t states = 0;      // states whose successors were compared with the reference
  size_t failures = 0;    // step failures among them
  std::set<std::string> failure_messages;
  size_t checked = 0;     // (action, successor) pairs compared
  size_t violations = 0;  // of which the full check reports a violation
  size_t runtime_errors = 0;
};

bool same(const std::optional<Violation>& a, const std::optional<Violation>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->kind == b->kind && a->property == b->property && a->message == b->message &&
         a->span.file == b->span.file && a->span.begin == b->span.begin && a->span.end == b->span.end;
}

struct Sink : model::SuccessorSink {
  std::vector<std::pair<uint32_t, std::vector<uint64_t>>> next;
  std::vector<std::pair<uint32_t, Violation>> failed;
  std::vector<uint32_t> order;  // every reported action, in order
  int words = 0;
  void successor(uint32_t action, const uint64_t* s) override {
    next.emplace_back(action, std::vector(s, s + words));
    order.push_back(action);
  }
  void failure(uint32_t action, const Violation& v) override {
    failed.emplace_back(action, v);
    order.push_back(action);
  }
  void clear() {
    next.clear();
    failed.clear();
    order.clear();
  }
};

// BFS over at most `max_states` states, expanding only states that satisfy every invariant (the precondition of
// check_invariants_after); compares successors with the reference and both invariant checks on every successor.
void compare_checks(ModelSystem& sys, size_t max_states, Counts& counts) {
  Sink sink, ref;
  sink.words = ref.words = sys.state_words();
  std::set<std::vector<uint64_t>> seen;
  std::deque<std::vector<uint64_t>> queue;
  for (auto& s : sys.initial_states()) {
    if (seen.insert(s).second) queue.push_back(s);
  }
  while (!queue.empty()) {
    std::vector<uint64_t> s = std::move(queue.front());
    queue.pop_front();
    if (sys.check_invariants(s.data())) continue;
    sink.clear();
    ref.clear();
    int n = sys.successors(s.data(), sink);
    int n_ref = sys.reference_successors(s.data(), ref);
    ++counts.states;
    counts.failures += ref.failed.size();
    for (const auto& f : ref.failed) counts.failure_messages.insert(f.second.message);
    REQUIRE(n == n_ref);
    REQUIRE(sink.order == ref.order);
    REQUIRE(sink.next == ref.next);
    REQUIRE(sink.failed.size() == ref.failed.size());
    for (size_t i = 0; i < ref.failed.size(); ++i) {
      INFO("failure: ", ref.failed[i].second.message);
      CHECK(same(sink.failed[i].second, ref.failed[i].second));
    }
    for (auto& [action, t] : sink.next) {
      std::optional<Violation> full = sys.check_invariants(t.data());
      std::optional<Violation> after = sys.check_invariants_after(action, t.data());
      ++counts.checked;
      if (full) {
        ++counts.violations;
        if (full->message.find("cannot be evaluated") != std::string::npos) ++counts.runtime_errors;  // model::invariant_unevaluable
      }
      if (!same(full, after)) {
        INFO("action ", action, " full: ", full ? full->message : "holds", " after: ", after ? after->message : "holds");
        FAIL("check_invariants_after differs from check_invariants");
      }
      if (seen.size() < max_states && seen.insert(t).second) queue.push_back(std::move(t));
    }
  }
}

TEST_CASE("successors and check_invariants_after agree with their references on every corpus spec") {
  std::vector<fs::path> files;
  for (const char* dir : {"spec", "tests/corpus"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".qpspec") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 25);
  Counts total;
  int with_invariants = 0;
  for (const fs::path& f : files) {
    INFO("spec: ", f.string());
    frontend::Spec spec;
    spec.read(f.string(), {});
    lang::Compiled compiled = spec.compile(header_params(f));
    ModelSystem sys(*compiled.model);
    if (!compiled.model->invariants.empty()) ++with_invariants;
    compare_checks(sys, 20000, total);
  }
  CHECK(with_invariants >= 8);
  CHECK(total.checked > 100000);
  CHECK(total.violations > 0);  // comm_est_reachable and the shipped specs that violate an invariant
  CHECK(total.failures > 0);    // the rdma_cm variants whose assertions fail
}

TEST_CASE("flat ops: every shape and every error path agrees with the tree evaluator") {
  // Constant stores, x = y +/- k (in and out of range), push/pop/clear (full and empty queues), queues of records
  // (tree path), assert/require/if on quick and general conditions, head() of a possibly empty queue, x - y tests,
  // if/else chains, a rule whose parameter stays a frame in an index.
  auto c = testing::compile(R"(
    type M = enum { A, B, C };
    type R = record { m: M; n: 0..3; };
    var q: queue[2] of M;
    var rq: queue[2] of R;
    var x: 0..5;
    var y: -2..3;
    var b: bool;
    var arr: array[0..3] of 0..3;
    var w: R;
    rule setw { w.n = (w.n + 1) % 4; }
    rule push_a when !b { push(q, A); }
    rule push_b { push(q, B); x = x + 2; }
    rule pop_q when x != 1 { pop(q); y = y - 1; }
    rule rec { push(rq, w); }
    rule rec_pop when len(rq) > 0 { pop(rq); }
    rule chain when contains(q, B) || x == 4 {
      if x == 0 { y = 3; } else if x > 3 { y = -2; b = true; } else { y = y + 1; }
      require y != 0;
      assert x != 5 x_not_5 "x reached 5";
    }
    rule cmp when x == 2 || x == 3 { b = !b; arr[x] = x; }
    rule idx(i: 0..3) when arr[i] < 3 && contains(q, C) == false { arr[i] = arr[(i + 1) % 4] + 1; }
    rule general when x - y > 4 { x = 0; }
    rule hd when !empty(q) { if head(q) == A { x = 1; } else if head(q) != B { require x - y < 3; clear(q); } }
    rule hd_empty when x == 3 { assert head(q) != B hd_b "B at the head"; }
    rule clr when x == 0 && b { clear(q); clear(rq); }
  )");
  ModelSystem sys(*c->compiled.model);
  Counts counts;
  compare_checks(sys, 50000, counts);
  CHECK(counts.states > 1000);
  CHECK(counts.failures > 0);
  CHECK(counts.failure_messages.count("head of an empty queue"));
  CHECK(counts.failure_messages.count("B at the head"));
  // The messages name the queue (checker/model/eval.cc).
  CHECK(counts.failure_messages.count("push onto the full queue q (capacity 2)"));
  CHECK(counts.failure_messages.count("pop from the empty queue q"));
  CHECK(counts.failure_messages.count("x reached 5"));
}

TEST_CASE("dispatch tables: keyed, merged, tested and never-enabled actions keep the declared order") {
  // One process location with 70 edges (two blocks of 64 and 6) whose first conditions are tests on one field
  // (==, !=, <, ==||==), on adjacent fields (a queue's length and element, x - y), general conditions and constantly
  // false ones; 70 rule instances on adjacent bools (keys merged over neighbouring fields) spanning two blocks; a
  // second process with one edge per location (plain loops). Every successor, failure and order is compared with the
  // tree evaluator.
  std::string branches;
  const char* conds[] = {"ph == {0}", "ph != {0}", "ph < {0}", "ph == {0} || ph == {1}", "contains(q, B)",
                         "x - y > {2}", "x * y == {2}", "ph == {0} && {1} == 9", "!empty(r) && x != {2}",
                         "len(r) < 2 && ph >= {0}"};
  for (int k = 0; k < 70; ++k) {
    std::string c = conds[k % 10];
    auto sub = [&](const std::string& from, const std::string& to) {
      for (size_t at; (at = c.find(from)) != std::string::npos;) c.replace(at, from.size(), to);
    };
    sub("{0}", std::to_string(k % 7));
    sub("{1}", std::to_string((k + 3) % 7));
    sub("{2}", std::to_string(k % 4));
    std::string body;
    switch (k % 5) {
      case 0: body = fmt::format("ph = {};", (k + 1) % 7); break;
      case 1: body = "x = x + 1;"; break;
      case 2: body = "push(r, A); y = (y + 1) % 4;"; break;
      case 3: body = "if !empty(q) { pop(q); } else { push(q, B); } ph = (ph + 2) % 7;"; break;
      case 4: body = "x = 0; y = 3 - y;"; break;
    }
    branches += fmt::format("{} {{ when {} {{ {} }} }}\n", k == 0 ? "choose" : "or", c, body);
  }
  auto c = testing::compile(R"(
    type M = enum { A, B, C };
    var q: queue[1] of M;
    var r: queue[2] of M;
    var ph: 0..6;
    var x: 0..3;
    var y: 0..3;
    var flags: array[0..69] of bool;
    process p { loop: while true { )" + branches + R"( } }
    process s[i in 0..1] {
      a: when x == i { ph = 2; }
      b: when ph == 2 { pop(r); }
      goto a;
    }
    rule set_flag(j: 0..69) when !flags[j] && x == j % 4 { flags[j] = true; }
    rule clear_flag(j: 0..69) when flags[j] && j % 3 == 0 { flags[j] = false; }
  )");
  ModelSystem sys(*c->compiled.model);
  ModelSystem::DispatchStats st = sys.dispatch_stats();
  CHECK(st.keyed_blocks >= 3);
  CHECK(st.keys > 0);
  CHECK(st.keyed_actions > 2 * st.keys);
  CHECK(st.blocks >= 5);              // 70 edges: 64 + 6; 140 rule instances: 64 + 64 + 12
  CHECK(st.plain_ranges >= 2);        // the single-edge locations stay plain loops
  Counts counts;
  compare_checks(sys, 20000, counts);
  CHECK(counts.states >= 20000);
  CHECK(counts.checked > 100000);
  CHECK(counts.failures > 0);
}

TEST_CASE("memoised ranges: replayed successors agree with the runs they replace, error paths are not cached") {
  // p's edges are all packed (quick tests, direct ops), so its range is memoised on the bits they read or write:
  // a conditional write of a slot nothing in p reads (y), a write of a slot other processes change (z), adds that
  // overflow (an error path: uncached), a failing assert, queue ops, an if/else on head(). q changes what p reads and
  // writes behind its back; r cycles t, which p and q do not touch, so their keys repeat.
  auto c = testing::compile(R"(
    type M = enum { A, B, C };
    var ch: queue[2] of M;
    var ph: 0..3;
    var x: 0..3;
    var y: 0..3;
    var z: 0..3;
    var t: 0..3;
    process p {
      loop: while true {
        choose {
          when ph == 0 { if x > 1 { y = 3; } ph = 1; }
        } or {
          when ph == 1 && !full(ch) { push(ch, B); z = 0; ph = 2; }
        } or {
          when ph == 2 { x = x + 1; ph = 0; }
        } or {
          when !empty(ch) { if head(ch) == B { pop(ch); } else { clear(ch); } }
        } or {
          when ph == 3 && z == 1 { assert x != 2 x_not_2 "x is 2"; z = 0; ph = 0; }
        }
      }
    }
    process q {
      loop: while true {
        choose {
          when y > 0 { y = y - 1; }
        } or {
          when z < 3 { z = z + 1; push(ch, A); }
        } or {
          when x > 0 { x = x - 1; ph = 3; }
        }
      }
    }
    process r {
      loop: while true { choose { when t < 3 { t = t + 1; } } or { when t == 3 { t = 0; } } }
    }
  )");
  ModelSystem sys(*c->compiled.model);
  CHECK(sys.memo_stats().ranges == 3);
  Counts counts;
  compare_checks(sys, 20000, counts);
  ModelSystem::MemoStats st = sys.memo_stats();
  CHECK(counts.states > 100);
  CHECK(counts.failure_messages.count("x is 2"));
  CHECK(counts.failure_messages.count("push onto the full queue ch (capacity 2)"));
  CHECK(st.off == 0);
  CHECK(st.entries < static_cast<int>(counts.states));  // keys repeat: states replayed
  CHECK(st.uncached > 0);
  CHECK(st.entries - st.uncached > 10);

  // Two counters of 0..127: more keys than a range may keep, so the memo switches off and the range runs normally.
  auto w = testing::compile(R"(
    var u: 0..127;
    var v: 0..127;
    process wide {
      loop: while true {
        choose { when u < 127 { u = u + 1; } } or { when v < 127 && u - v > 0 { v = v + 1; } } or { when u == 127 { u = 0; } }
      }
    }
  )");
  ModelSystem wide(*w->compiled.model);
  CHECK(wide.memo_stats().ranges == 1);
  Counts wide_counts;
  compare_checks(wide, 20000, wide_counts);
  CHECK(wide_counts.states > 8000);
  CHECK(wide.memo_stats().off == 1);
}

TEST_CASE("check_invariants_after: several invariants, runtime errors, dynamic indexes, calls and loops kept") {
  // Invariants with conjuncts that read a dynamic index (whole array), call a function that is not inlined, a
  // quantifier too large to unroll, and one that can fail at run time (division by zero, index out of range).
  auto c = testing::compile(R"(
    var a: array[0..3] of 0..3;
    var i: 0..4;
    var d: 0..2 = 1;
    var big: array[0..99] of 0..1;
    var k: 0..99;
    fn f(x: 0..4): 0..9 = a[x % 4] + x;
    rule inc_a(j: 0..3) when a[j] < 3 { a[j] = a[j] + 1; }
    rule step_i when i < 4 { i = i + 1; }
    rule dec_d when d > 0 { d = d - 1; }
    rule flip(j: 0..99) when k == j && j < 99 { big[j] = 1 - big[j]; k = k + 1; }
    invariant inv_a: a[0] <= 3 && a[i % 4] < 3 && f(i) < 9;
    invariant inv_div: 6 / d >= 3 && a[1] != 2;
    invariant inv_big: forall m in 0..99: big[m] == 0 || m < 50;
    invariant inv_idx: a[i] <= 3;
  )");
  ModelSystem sys(*c->compiled.model);
  Counts counts;
  compare_checks(sys, 100000, counts);
  CHECK(counts.checked > 1000);
  CHECK(counts.violations > 0);
  CHECK(counts.runtime_errors > 0);
}

}  // namespace
}  // namespace qpcheck
