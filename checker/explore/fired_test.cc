// model::CheckResult::action_fired: 1 for every action that produced a
// transition (successor or failing step).
#include <doctest/doctest.h>

#include "checker/explore/explorer.h"
#include "tests/support/compile.h"

namespace qpcheck::explore {
namespace {

// Actions, in TransitionSystem order: p's three statements (0: x = 1, 1: the await never enabled, 2: x = 0 never
// reached), then the rule's two instances (3: bump(b=false), 4: bump(b=true), the latter never enabled).
const char* kSpec = R"(
var x: 0..3;
process p {
  x = 1;
  end w: await x == 3;
  x = 0;
}
rule bump(b: bool) when !b && x == 1 { x = 2; }
)";

TEST_CASE("action_fired marks exactly the actions that produced a transition") {
  auto c = testing::compile(kSpec);
  model::CheckResult r = testing::check(*c);
  CHECK(r.outcome == model::Outcome::kHolds);
  std::vector<uint8_t> fired = r.action_fired;
  fired.resize(5, 0);  // may end at the highest action that fired
  CHECK(fired == std::vector<uint8_t>{1, 0, 0, 1, 0});
}

TEST_CASE("a failing step counts as fired") {
  auto c = testing::compile(R"(
var x: 0..3;
process p { x = 1; assert x == 2 wrong "x is not 2"; }
)");
  model::CheckResult r = testing::check(*c);
  CHECK(r.outcome == model::Outcome::kViolated);
  REQUIRE(r.action_fired.size() == 2);
  CHECK(r.action_fired[0] == 1);
  CHECK(r.action_fired[1] == 1);
}

}  // namespace
}  // namespace qpcheck::explore
