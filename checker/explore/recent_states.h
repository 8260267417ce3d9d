// A small cache of recently generated successors in front of the visited set, so that a successor generated again
// soon after is dropped before it is packed, hashed and looked up. In a BFS most successors are states seen before
// (rdma_cm N=4 M=3: 16.4 M of 20.1 M), and many are repeats from nearby expansions: the two orders of independent
// steps (s -a-> s1 -b-> t and s -b-> s2 -a-> t) meet at t from two states stored one after the other. A CPU-cache-like
// table of full states catches most of them (one thread: rdma_cm N=4 M=3 72 % of all successors, 88 % of its repeats;
// philosophers N=16 56 %) for one hash and one compare, where the visited set pays the packing, the hashing and two
// dependent cache misses (index slot, then row).
//
// Exact: a slot holds a whole state and a hit compares every word, so only a true repeat is reported; a collision
// just evicts. The cache never answers "new": a miss is handed on to the visited set as before.
//
// The caller's rule. Dropping a successor that seen_before() reports is correct only if every state recorded earlier
// is (or will be) inserted into the visited set before this successor would have been: the earlier copy then takes
// the id, the predecessor link and the invariant check, and the dropped copy would have been found stored, which
// changes nothing. So ids, links and counts are those of a search without the cache (but a caller that reads how
// many successors it sent, e.g. to size buffers or to cut work, sees a number that depends on what the cache held).
// Every slot starts as `fill`, which must be a state stored before any successor (an initial state), so that no slot
// needs a valid bit.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace qpcheck::explore {

class RecentStates {
 public:
  // Slots: the largest power of two with at most kMaxSlots and at most kMaxBytes of states (words uint64 each), at
  // least kMinSlots. 2^14 slots of 4 words (512 KiB) fit a core's L2 next to the rest of the search (the sizes
  // measured: docs/performance.md, "Tuning constants").
  static constexpr size_t kMaxSlots = size_t{1} << 14;
  static constexpr size_t kMinSlots = size_t{1} << 8;
  static constexpr size_t kMaxBytes = size_t{512} << 10;

  // `words` (>= 1): uint64 per state; `fill`: `words` uint64, a state stored before any successor.
  RecentStates(int words, const uint64_t* fill) : words_(static_cast<size_t>(words)) {
    size_t slots = kMaxSlots;
    while (slots > kMinSlots && slots * words_ * sizeof(uint64_t) > kMaxBytes) slots /= 2;
    shift_ = 64 - std::countr_zero(slots);
    table_.resize(slots * words_);
    for (size_t i = 0; i < table_.size(); i += words_) std::copy(fill, fill + words_, &table_[i]);
  }

  // True if `state` (words uint64) is the state its slot holds: a repeat of one recorded earlier. Otherwise records
  // it there (evicting the previous one) and returns false.
  bool seen_before(const uint64_t* state) {
    uint64_t h = 0x8C8E3A9B5D0F4E21ULL;
    for (size_t i = 0; i < words_; ++i) h = (h ^ state[i]) * 0x9E3779B97F4A7C15ULL;
    uint64_t* slot = &table_[(h >> shift_) * words_];
    bool same = true;
    for (size_t i = 0; i < words_; ++i) same &= slot[i] == state[i];
    if (same) return true;
    std::copy(state, state + words_, slot);
    return false;
  }

  size_t slots() const { return table_.size() / words_; }
  uint64_t bytes() const { return table_.size() * sizeof(uint64_t); }

 private:
  size_t words_;
  int shift_;                      // slot = hash >> shift_ (the hash's high bits)
  std::vector<uint64_t> table_;    // slots() states of words_ uint64
};

}  // namespace qpcheck::explore
