#include "checker/explore/recent_states.h"

#include <doctest/doctest.h>

#include <random>
#include <set>
#include <vector>

namespace qpcheck::explore {
namespace {

using State = std::vector<uint64_t>;

TEST_CASE("RecentStates: sized to the L2 budget, never below kMinSlots") {
  const State z(1024, 0);
  CHECK(RecentStates(1, z.data()).slots() == RecentStates::kMaxSlots);
  CHECK(RecentStates(4, z.data()).slots() == RecentStates::kMaxSlots);  // 512 KiB
  CHECK(RecentStates(4, z.data()).bytes() == RecentStates::kMaxBytes);
  CHECK(RecentStates(8, z.data()).slots() == RecentStates::kMaxSlots / 2);
  CHECK(RecentStates(64, z.data()).slots() == 1024);
  CHECK(RecentStates(1024, z.data()).slots() == RecentStates::kMinSlots);
}

TEST_CASE("RecentStates: the fill state is a repeat from the start; a recorded state is one right after") {
  const State init = {7, 8, 9};
  RecentStates cache(3, init.data());
  CHECK(cache.seen_before(init.data()));
  const State a = {7, 8, 10};
  CHECK_FALSE(cache.seen_before(a.data()));
  CHECK(cache.seen_before(a.data()));
  CHECK(cache.seen_before(a.data()));
}

// Reports a repeat only for a state passed before (or the fill state), whichever word tells two states apart: states
// that differ only in their first word, only in their last, or anywhere, many more than there are slots, so slots are
// shared and states evicted. Against a std::set of every state passed so far.
TEST_CASE("RecentStates: exact, only true repeats, with collisions and evictions") {
  for (int words : {1, 2, 5, 64}) {
    for (int vary : {0, 1, 2}) {  // 0: first word only, 1: last word only, 2: every word
      CAPTURE(words);
      CAPTURE(vary);
      const State init(static_cast<size_t>(words), 0);
      RecentStates cache(words, init.data());
      std::set<State> passed = {init};
      std::mt19937_64 rng(static_cast<uint64_t>(words * 3 + vary));
      const uint64_t values = 3 * cache.slots();
      int repeats = 0;
      for (int n = 0; n < 40000; ++n) {
        State s(static_cast<size_t>(words), 5);
        const uint64_t v = rng() % values;
        if (vary == 0) s.front() = v;
        if (vary == 1) s.back() = v;
        if (vary == 2) {
          for (auto& w : s) w = v * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(&w - s.data());
        }
        const bool before = passed.count(s) > 0;
        const bool seen = cache.seen_before(s.data());
        if (seen) {
          REQUIRE(before);
          ++repeats;
        }
        passed.insert(s);
        REQUIRE(cache.seen_before(s.data()));  // just recorded (or already there)
      }
      CHECK(repeats > 0);
    }
  }
}

// What it is for: a working set that fits is caught almost entirely after its first pass.
TEST_CASE("RecentStates: a small working set repeats from the cache") {
  const State init = {0, 0, 0, 0};
  RecentStates cache(4, init.data());
  std::vector<State> set;
  for (uint64_t i = 1; i <= 200; ++i) set.push_back({i, i * 3, 0, i >> 2});
  for (const State& s : set) CHECK_FALSE(cache.seen_before(s.data()));
  int hits = 0;
  for (int pass = 0; pass < 5; ++pass) {
    for (const State& s : set) hits += cache.seen_before(s.data()) ? 1 : 0;
  }
  CHECK(hits >= 5 * 190);  // 200 states in 2^14 slots: a few may share one
}

}  // namespace
}  // namespace qpcheck::explore
