// The explicit engine's visited set: every distinct packed state once, in insertion order, with the predecessor and
// the action that first reached it (traces are rebuilt from these links; compare TLC's TLCTrace).
//
// Layout: states are fixed-width rows of `words` uint64 in one arena; row i is state id i. A linear-probing table of
// uint32 (id + 1; 0 = empty) indexes the rows by hash, kept at most half full. Bytes per state, all in:
// 8*words (row) + 8 (predecessor and action) + 4/load (table), i.e. 24-32 bytes for one-word states.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qpcheck::explore {

inline constexpr uint32_t kNoState = UINT32_MAX;

class StateStore {
 public:
  explicit StateStore(int words);

  // Inserts `state` if it is new. Returns {id, true} for a new state, {existing id, false} otherwise.
  // Ids are dense: the n-th distinct state inserted has id n-1. At most 2^32-2 states.
  std::pair<uint32_t, bool> insert(const uint64_t* state, uint32_t predecessor, uint32_t action);

  uint64_t size() const { return pred_.size(); }
  bool contains(const uint64_t* state) const;
  const uint64_t* state(uint32_t id) const { return &rows_[static_cast<size_t>(id) * words_]; }
  uint32_t predecessor(uint32_t id) const { return pred_[id]; }
  uint32_t action(uint32_t id) const { return action_[id]; }
  int words() const { return words_; }
  // Bytes held by the arena, the links and the table (capacity, not size).
  uint64_t bytes() const;

 private:
  uint64_t hash(const uint64_t* state) const;
  void grow();

  int words_;
  std::vector<uint64_t> rows_;
  std::vector<uint32_t> pred_;
  std::vector<uint32_t> action_;
  std::vector<uint32_t> table_;
  uint64_t mask_;
};

}  // namespace qpcheck::explore
