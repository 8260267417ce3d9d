#include "checker/explore/random_walk.h"

#include <set>

#include <doctest/doctest.h>

#include "checker/model/model_system.h"
#include "tests/support/compile.h"

namespace qpcheck::explore {
namespace {

// Two processes of two steps each: C(4,2) = 6 interleavings; `bad` is reachable only by taking a's second step
// before b's first, which the walks must avoid (the invariant would be violated).
const char* kTwoByTwo = R"(
var x: 0..3 = 0;
var y: 0..3 = 0;
process a { x = 1; x = 2; }
process b { y = 1; y = 2; }
invariant bad: !(x == 2 && y == 0);
)";

TEST_CASE("every safe schedule up to a length, and random walks among them") {
  auto c = testing::compile(kTwoByTwo);
  model::ModelSystem system(*c->compiled.model);
  bool complete = false;
  std::vector<model::Path> all = all_schedules(system, 10, 0, &complete);
  CHECK(complete);
  // 6 interleavings, minus the 1 that takes a, a first (x == 2, y == 0)
  CHECK(all.size() == 5);
  std::set<std::vector<uint32_t>> distinct;
  for (const model::Path& p : all) {
    CHECK(p.actions.size() == 4);
    CHECK(p.states.size() == 5);
    for (const auto& s : p.states) CHECK(!system.check_invariants(s.data()));
    distinct.insert(p.actions);
  }
  CHECK(distinct.size() == 5);
  // cut short
  CHECK(all_schedules(system, 10, 3, &complete).size() == 3);
  CHECK(!complete);
  // at most 2 steps: the safe prefixes of length 2 (a b, b a, b b), each cut there
  CHECK(all_schedules(system, 2, 0).size() == 3);
  // walks are deterministic per seed, always one of the safe schedules, and 40 seeds find every one of them
  std::set<std::vector<uint32_t>> walked;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    model::Path p = random_walk(system, WalkOptions{seed, 100});
    CHECK(p.actions == random_walk(system, WalkOptions{seed, 100}).actions);
    CHECK(distinct.count(p.actions) == 1);
    walked.insert(p.actions);
  }
  CHECK(walked.size() == 5);
  CHECK(random_walk(system, WalkOptions{7, 1}).actions.size() == 1);
}

}  // namespace
}  // namespace qpcheck::explore
