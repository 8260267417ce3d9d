#include "checker/explore/state_store.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

namespace qpcheck::explore {
namespace {

using State = std::vector<uint64_t>;

// A fixed scramble of a small choice, so few values per word still spread over all its bits.
uint64_t mix_for_test(uint64_t x, size_t word) {
  x = (x + 1) * 0x9E3779B97F4A7C15ULL + word;
  return x ^ (x >> 29);
}

uint64_t mask(int bits) { return bits >= 64 ? ~0ULL : (1ULL << bits) - 1; }

// Inserts `states` (with repeats) into a store and into a std::map reference, checking every answer: fresh exactly
// when the reference has not seen the state, ids dense in insertion order, predecessors kept, load() round trips,
// contains() and the prepared calls agree. Returns the store's bytes per state.
double check_against_reference(const std::vector<int>& bits, const std::vector<State>& states, bool expect_tree,
                              int partitions = 1) {
  StateStore store(bits, StateStore::kMaxStates, partitions);
  CHECK(store.tree() == expect_tree);
  CHECK(store.words() == static_cast<int>(bits.size()));
  std::map<State, uint32_t> ref;
  std::vector<const State*> by_id;
  std::vector<uint32_t> preds;
  std::vector<uint64_t> row(store.scratch_words()), row2(store.scratch_words()), out(bits.size());
  for (size_t k = 0; k < states.size(); ++k) {
    const State& s = states[k];
    auto it = ref.find(s);
    // contains and contains_prepared before the insertion
    uint64_t h = store.prepare(s.data(), row.data());
    REQUIRE(store.contains(s.data()) == (it != ref.end()));
    REQUIRE(store.contains_prepared(row.data(), h) == (it != ref.end()));
    uint32_t pred = static_cast<uint32_t>(k * 7919);
    auto [id, fresh] = (k % 2 == 0) ? store.insert(s.data(), pred) : store.insert_prepared(row.data(), h, pred);
    if (it == ref.end()) {
      REQUIRE(fresh);
      REQUIRE(id == ref.size());  // dense ids in insertion order
      ref.emplace(s, id);
      by_id.push_back(&states[k]);
      preds.push_back(pred);
    } else {
      REQUIRE_FALSE(fresh);
      REQUIRE(id == it->second);
    }
    REQUIRE(store.size() == ref.size());
    // prepare is a pure function of the state
    REQUIRE(store.prepare(s.data(), row2.data()) == h);
    REQUIRE(row == row2);
  }
  // every state loads back exactly, with its first predecessor, after all the grows and re-encodings
  for (uint32_t id = 0; id < by_id.size(); ++id) {
    store.load(id, out.data());
    REQUIRE(out == *by_id[id]);
    REQUIRE(store.predecessor(id) == preds[id]);
    REQUIRE(store.contains(by_id[id]->data()));
  }
  return static_cast<double>(store.bytes()) / static_cast<double>(store.size());
}

// Random states of layout `bits`, each word drawn from `choices` values per word (0: any value in its bits); a third
// of the draws repeat an earlier state.
std::vector<State> random_states(const std::vector<int>& bits, size_t n, uint64_t choices, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<State> out;
  for (size_t k = 0; k < n; ++k) {
    if (!out.empty() && rng() % 3 == 0) {
      out.push_back(out[rng() % out.size()]);
      continue;
    }
    State s(bits.size());
    for (size_t w = 0; w < bits.size(); ++w) {
      uint64_t x = choices ? mix_for_test(rng() % choices, w) : rng();
      s[w] = x & mask(bits[w]);
    }
    out.push_back(s);
  }
  return out;
}

TEST_CASE("StateStore, narrow layout (one word, 48 bits): random states against a std::map, across grows") {
  std::vector<int> bits = {48};
  double bps = check_against_reference(bits, random_states(bits, 60000, 0, 1), false);
  CHECK(bps > 6);
}

TEST_CASE("StateStore, two words of 64 and 64 bits stay flat (a 16-byte row)") {
  std::vector<int> bits = {64, 64};
  check_against_reference(bits, random_states(bits, 20000, 0, 2), false);
  StateStore s(bits);
  CHECK(s.row_bytes() == 16);
}

TEST_CASE("StateStore, odd widths pack across word boundaries of the row") {
  std::vector<int> bits = {1, 63, 5, 40};
  check_against_reference(bits, random_states(bits, 20000, 0, 3), false);
  StateStore s(bits);
  CHECK(s.row_bytes() == 14);  // 109 bits
}

TEST_CASE("StateStore, wide layout (204 bits like rdma_cm): tree compression, random halves") {
  std::vector<int> bits = {64, 64, 64, 12};
  // all words random: every half is new, so the children grow as fast as the root and re-encode often
  check_against_reference(bits, random_states(bits, 30000, 0, 4), true);
}

TEST_CASE("StateStore, wide layout with repeating halves: rows are pairs of small ids") {
  std::vector<int> bits = {64, 64, 64, 12};
  // 300 distinct left halves x 300 distinct right halves, in random order with repeats
  std::mt19937_64 rng(5);
  std::vector<State> lefts, rights, states;
  for (int i = 0; i < 300; ++i) lefts.push_back({rng(), rng()});
  for (int i = 0; i < 300; ++i) rights.push_back({rng(), rng() & mask(12)});
  for (int i = 0; i < 300; ++i) {
    for (int j = 0; j < 300; ++j) states.push_back({lefts[i][0], lefts[i][1], rights[j][0], rights[j][1]});
  }
  std::shuffle(states.begin(), states.end(), rng);
  for (int k = 0; k < 20000; ++k) states.push_back(states[rng() % 90000]);
  double bps = check_against_reference(bits, states, true);
  // a flat store would take 26 (row) + 4 (link) + >= 5 (table) bytes per state; here 18 bits + 4 + table, with rows and
  // links in chunks of 2^14
  CHECK(bps < 16.0);
  StateStore s(bits);
  for (const State& x : states) s.insert(x.data(), kNoState);
  CHECK(s.size() == 90000);
  CHECK(s.row_bytes() == 3);  // 9 + 9 bits of child ids
}

TEST_CASE("StateStore, tree: states that share one half are told apart by the other (tag collisions)") {
  // A known state is found top-down: a root entry whose tag matches is compared by following its child ids to the
  // leaves. With one half fixed, every tag collision in the root's index (hash bits beyond the slot; many thousands of
  // probes here) pairs two states with the same left (then right) half, so only a comparison of both halves is right.
  std::vector<int> bits = {64, 64, 64, 12};
  for (int fixed : {0, 1}) {
    CAPTURE(fixed);
    std::vector<State> states = random_states(bits, 200000, 0, 41 + fixed);
    for (State& x : states) {
      x[2 * fixed] = 0x0123456789ABCDEFULL;
      x[2 * fixed + 1] = 0xFEDULL;
    }
    check_against_reference(bits, states, true);
  }
}

TEST_CASE("StateStore, deeper trees (7 words, 420 bits) with few values per word") {
  std::vector<int> bits = {64, 60, 64, 64, 40, 64, 64};
  check_against_reference(bits, random_states(bits, 40000, 5, 6), true);
  check_against_reference(bits, random_states(bits, 10000, 0, 7), true);
}

TEST_CASE("StateStore, constant words (0 bits used) and a single state") {
  std::vector<int> bits = {0, 0, 0};
  StateStore s(bits);
  State zero(3, 0);
  CHECK(s.insert(zero.data(), kNoState) == std::pair<uint32_t, bool>{0, true});
  CHECK(s.insert(zero.data(), 5) == std::pair<uint32_t, bool>{0, false});
  CHECK(s.predecessor(0) == kNoState);
  State out(3, 9);
  s.load(0, out.data());
  CHECK(out == zero);
}

TEST_CASE("StateStore: a new state beyond max_states throws std::length_error; known states are still found") {
  for (std::vector<int> bits : {std::vector<int>{16}, std::vector<int>{64, 64, 64}}) {
    StateStore s(bits, 5);
    std::vector<State> states;
    for (uint64_t i = 0; i < 6; ++i) states.push_back(State(bits.size(), i + 1));
    for (int i = 0; i < 5; ++i) CHECK(s.insert(states[i].data(), kNoState).second);
    CHECK_THROWS_AS(s.insert(states[5].data(), kNoState), std::length_error);
    CHECK(s.size() == 5);
    CHECK(s.insert(states[2].data(), kNoState) == std::pair<uint32_t, bool>{2, false});
    CHECK_FALSE(s.contains(states[5].data()));
  }
}


// Inserts `states` into one store one at a time and into another in batches (stage + insert_staged) of varying sizes
// 1..97, read from a buffer with one junk word after each state (stride words + 1), and checks that every answer, the
// sizes, the loaded states and the links are the same. Batches hold repeats of states staged in the same batch.
void check_batches_against_single(const std::vector<int>& bits, const std::vector<State>& states, bool expect_tree) {
  StateStore one(bits), batched(bits);
  CHECK(batched.tree() == expect_tree);
  const size_t w = bits.size(), stride = w + 1;
  std::mt19937_64 rng(99);
  std::vector<uint64_t> buf;
  std::vector<uint32_t> preds;
  std::vector<std::pair<uint32_t, bool>> out;
  size_t k = 0;
  bool use_batch_call = false;
  while (k < states.size()) {
    const size_t n = std::min<size_t>(states.size() - k, 1 + rng() % 97);
    buf.assign(n * stride, 0);
    preds.assign(n, 0);
    for (size_t i = 0; i < n; ++i) {
      std::copy(states[k + i].begin(), states[k + i].end(), &buf[i * stride]);
      buf[i * stride + w] = rng();  // junk between states
      preds[i] = static_cast<uint32_t>(k + i);
    }
    out.assign(n, {kNoState, false});
    if (use_batch_call) {
      batched.insert_batch(buf.data(), stride, preds.data(), static_cast<int>(n), out.data());
    } else {
      batched.stage(buf.data(), stride, static_cast<int>(n));
      buf.assign(buf.size(), ~0ULL);  // stage() copies what it needs
      for (size_t i = 0; i < n; ++i) out[i] = batched.insert_staged(static_cast<int>(i), preds[i]);
    }
    use_batch_call = !use_batch_call;
    for (size_t i = 0; i < n; ++i) {
      REQUIRE(out[i] == one.insert(states[k + i].data(), preds[i]));
    }
    REQUIRE(batched.size() == one.size());
    k += n;
  }
  CHECK(batched.bytes() == one.bytes());
  std::vector<uint64_t> a(w), b(w);
  for (uint32_t id = 0; id < one.size(); ++id) {
    one.load(id, a.data());
    batched.load(id, b.data());
    REQUIRE(a == b);
    REQUIRE(batched.predecessor(id) == one.predecessor(id));
  }
}

// `states` with every state repeated at once about one time in four (a duplicate inside the same batch).
std::vector<State> with_close_repeats(std::vector<State> states, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<State> out;
  for (const State& s : states) {
    out.push_back(s);
    if (rng() % 4 == 0) out.push_back(s);
  }
  return out;
}

TEST_CASE("StateStore batches (stage, insert_staged, insert_batch) answer exactly as one-at-a-time insertion") {
  SUBCASE("flat, 48 bits, across grows") {
    std::vector<int> bits = {48};
    check_batches_against_single(bits, with_close_repeats(random_states(bits, 60000, 0, 11), 1), false);
  }
  SUBCASE("flat, odd widths") {
    std::vector<int> bits = {1, 63, 5, 40};
    check_batches_against_single(bits, with_close_repeats(random_states(bits, 20000, 0, 12), 2), false);
  }
  SUBCASE("tree, random halves: the children grow and the root re-encodes often") {
    std::vector<int> bits = {64, 64, 64, 12};
    check_batches_against_single(bits, with_close_repeats(random_states(bits, 30000, 0, 13), 3), true);
  }
  SUBCASE("tree, few values per word: rows of small child ids") {
    std::vector<int> bits = {64, 64, 64, 12};
    check_batches_against_single(bits, with_close_repeats(random_states(bits, 40000, 7, 14), 4), true);
  }
  SUBCASE("deeper tree, 7 words") {
    std::vector<int> bits = {64, 60, 64, 64, 40, 64, 64};
    check_batches_against_single(bits, with_close_repeats(random_states(bits, 40000, 5, 15), 5), true);
  }
}

TEST_CASE("StateStore batches: a new state beyond max_states throws at the same state as insert()") {
  for (std::vector<int> bits : {std::vector<int>{16}, std::vector<int>{64, 64, 64}}) {
    StateStore s(bits, 5);
    const size_t w = bits.size();
    std::vector<uint64_t> buf;
    for (uint64_t i : {1, 2, 1, 3, 4, 5, 2, 6, 7}) {
      for (size_t k = 0; k < w; ++k) buf.push_back(i);
    }
    s.stage(buf.data(), w, 9);
    for (int i = 0; i < 7; ++i) s.insert_staged(i, kNoState);  // states 1-5, with repeats
    CHECK(s.size() == 5);
    CHECK_THROWS_AS(s.insert_staged(7, kNoState), std::length_error);
    CHECK(s.size() == 5);
    CHECK(s.insert_staged(1, kNoState) == std::pair<uint32_t, bool>{1, false});
  }
}

TEST_CASE("StateStore::bytes_bound bounds bytes() after up to kBoundInsertions more insertions") {
  for (std::vector<int> bits : {std::vector<int>{48}, std::vector<int>{64, 64, 64, 12}, std::vector<int>{12, 12, 12}}) {
    for (uint64_t choices : {uint64_t{0}, uint64_t{9}}) {
      StateStore s(bits);
      std::vector<State> states = random_states(bits, 150000, choices, 21);
      std::mt19937_64 rng(22);
      size_t k = 0;
      while (k < states.size()) {
        const int more = 1 + static_cast<int>(rng() % StateStore::kBoundInsertions);
        const uint64_t bound = s.bytes_bound(more);
        CHECK(bound >= s.bytes());
        for (int i = 0; i < more && k < states.size(); ++i, ++k) s.insert(states[k].data(), kNoState);
        REQUIRE(s.bytes() <= bound);
      }
      CHECK(s.bytes_bound(0) == s.bytes());
      CHECK_THROWS_AS(s.bytes_bound(StateStore::kBoundInsertions + 1), std::invalid_argument);
    }
  }
}

TEST_CASE("StateStore::reserve grows the root index ahead of insertions and changes no answer") {
  for (std::vector<int> bits : {std::vector<int>{48}, std::vector<int>{64, 64, 64, 12}}) {
    CAPTURE(bits.size());
    const std::vector<State> states = random_states(bits, 120000, 0, 31);
    StateStore plain(bits), reserved(bits), other(bits);
    std::vector<uint64_t> out(bits.size()), out2(bits.size());
    size_t k = 0;
    uint64_t step = 700;
    while (k < states.size()) {
      const uint64_t target = reserved.size() + step;
      const uint64_t before = reserved.index_capacity();
      reserved.reserve(target);
      const uint64_t cap = reserved.index_capacity();
      CHECK(cap >= before);
      // A store of other states that reserves the same number reaches the same capacity (the parallel search keeps
      // its shards' indexes in step this way).
      other.reserve(target);
      CHECK(other.index_capacity() == cap);
      // Up to `target` states, insertions never grow the reserved index; every answer is the plain store's.
      while (k < states.size() && reserved.size() < target) {
        auto a = plain.insert(states[k].data(), static_cast<uint32_t>(k));
        auto b = reserved.insert(states[k].data(), static_cast<uint32_t>(k));
        REQUIRE(a == b);
        REQUIRE(reserved.index_capacity() == cap);
        ++k;
      }
      step = step * 3 / 2;
    }
    CHECK(reserved.index_capacity() > 1024);  // it did grow, ahead of the insertions
    const uint64_t cap = reserved.index_capacity();
    reserved.reserve(reserved.size() / 2);  // nothing to do
    CHECK(reserved.index_capacity() == cap);
    for (uint32_t id = 0; id < reserved.size(); ++id) {
      plain.load(id, out.data());
      reserved.load(id, out2.data());
      REQUIRE(out == out2);
      REQUIRE(reserved.predecessor(id) == plain.predecessor(id));
    }
  }
}

TEST_CASE("StateStore partitions: each index is 1/partitions of one store's, with the same answers") {
  for (std::vector<int> bits : {std::vector<int>{48}, std::vector<int>{64, 64, 64, 12}}) {
    CAPTURE(bits.size());
    std::vector<State> states;  // distinct, in their first order
    std::set<State> seen;
    for (State& st : random_states(bits, 30000, 0, 7)) {
      if (seen.insert(st).second) states.push_back(std::move(st));
    }
    StateStore whole(bits), half(bits, StateStore::kMaxStates, 2);
    CHECK(half.index_capacity() * 2 == whole.index_capacity());
    std::vector<uint64_t> out(bits.size()), out2(bits.size());
    for (size_t k = 0; k < states.size(); ++k) {
      auto a = whole.insert(states[k].data(), static_cast<uint32_t>(k));
      if (k % 2 == 0) {  // half the states: the partition's index stays half of the whole's at every grow
        auto b = half.insert(states[k].data(), static_cast<uint32_t>(k));
        REQUIRE((a.second && b.second));
        REQUIRE(b.first == static_cast<uint32_t>(k / 2));
      } else {
        REQUIRE(half.index_capacity() * 2 == whole.index_capacity());
      }
    }
    CHECK(whole.index_capacity() > 16384);  // it grew several times
    for (uint32_t id = 0; id < half.size(); ++id) {
      whole.load(2 * id, out.data());
      half.load(id, out2.data());
      REQUIRE(out == out2);
    }
  }
  CHECK_THROWS_AS(StateStore(std::vector<int>{8}, StateStore::kMaxStates, 0), std::invalid_argument);
}

TEST_CASE("StateStore reads only each word's used bits: insert, contains and stage ignore bits above word_bits") {
  for (std::vector<int> bits : {std::vector<int>{48}, std::vector<int>{1, 63, 5, 40}, std::vector<int>{64, 64, 64, 12},
                                std::vector<int>{12, 12, 12}, std::vector<int>{0, 3}, std::vector<int>{64, 60, 64, 64, 40, 64, 64}}) {
    CAPTURE(bits.size());
    std::vector<State> clean = random_states(bits, 20000, 5, 77);
    std::mt19937_64 rng(78);
    StateStore a(bits), b(bits), c(bits, StateStore::kMaxStates, 2);
    const size_t w = bits.size();
    std::vector<uint64_t> dirty(clean.size() * (w + 1));
    for (size_t k = 0; k < clean.size(); ++k) {
      for (size_t i = 0; i < w; ++i) {
        const int bb = std::max(bits[i], 1);
        dirty[k * (w + 1) + i] = clean[k][i] | (bb >= 64 ? 0 : (rng() << bb));
      }
      dirty[k * (w + 1) + w] = rng();
    }
    for (size_t k0 = 0; k0 < clean.size(); k0 += 64) {
      const int n = static_cast<int>(std::min<size_t>(64, clean.size() - k0));
      c.stage(&dirty[k0 * (w + 1)], w + 1, n);
      for (int i = 0; i < n; ++i) {
        const size_t k = k0 + static_cast<size_t>(i);
        REQUIRE(b.contains(&dirty[k * (w + 1)]) == a.contains(clean[k].data()));
        auto x = a.insert(clean[k].data(), 1);
        auto y = b.insert(&dirty[k * (w + 1)], 1);
        auto z = c.insert_staged(i, 1);
        REQUIRE(x == y);
        REQUIRE(x == z);
      }
    }
    State out(w);
    for (uint32_t id = 0; id < b.size(); ++id) {
      b.load(id, out.data());
      State o2(w);
      a.load(id, o2.data());
      REQUIRE(out == o2);
    }
  }
}

TEST_CASE("StateStore partitions (first indexes down to 16, 24, 36 slots) against the reference") {
  for (int parts : {3, 64, 100, 256}) {
    CAPTURE(parts);
    std::vector<int> b1 = {48};
    check_against_reference(b1, random_states(b1, 20000, 0, 1), false, parts);
    std::vector<int> b2 = {64, 64, 64, 12};
    check_against_reference(b2, random_states(b2, 20000, 0, 4), true, parts);
    check_against_reference(b2, random_states(b2, 20000, 7, 14), true, parts);
    std::vector<int> b3 = {64, 60, 64, 64, 40, 64, 64};
    check_against_reference(b3, random_states(b3, 20000, 5, 6), true, parts);
    std::vector<int> b4 = {3};
    check_against_reference(b4, random_states(b4, 200, 0, 9), false, parts);
  }
}

TEST_CASE("StateStore::bytes_bound holds with partitions (their small first indexes grow several times)") {
  for (int parts : {2, 3, 64}) {
    for (std::vector<int> bits : {std::vector<int>{48}, std::vector<int>{64, 64, 64, 12}, std::vector<int>{12, 12, 12},
                                  std::vector<int>{64, 60, 64, 64, 40, 64, 64}}) {
      for (uint64_t choices : {uint64_t{0}, uint64_t{9}}) {
        StateStore s(bits, StateStore::kMaxStates, parts);
        std::vector<State> states = random_states(bits, 60000, choices, 21);
        std::mt19937_64 rng(22);
        size_t k = 0;
        while (k < states.size()) {
          const int more = 1 + static_cast<int>(rng() % StateStore::kBoundInsertions);
          const uint64_t bound = s.bytes_bound(more);
          for (int i = 0; i < more && k < states.size(); ++i, ++k) s.insert(states[k].data(), kNoState);
          REQUIRE(s.bytes() <= bound);
        }
      }
    }
  }
}

}  // namespace
}  // namespace qpcheck::explore
