// The explicit engine's visited set: every distinct packed state once, in insertion order, with the predecessor that
// first reached it (traces are rebuilt from these links and by re-running the predecessor's actions to find the one
// that leads to the state; compare TLC's TLCTrace).
//
// Layout (exact storage, no state is ever lost):
//  - rows: each state is stored as the concatenation of the used bits of its words (StateLayout never lets a field
//    straddle a word, so words have unused high bits), rounded up to whole bytes: `row_bytes` per state, in chunks of
//    2^16 rows allocated as needed (no doubling slack);
//  - predecessor links: one uint32 per state, chunked the same way;
//  - an open-addressing table of uint32 (id + 1; 0 = empty) with linear probing, indexed by a 64-bit hash of the
//    row mapped onto the table by multiply-shift (any table size, so it grows by 1.5x and stays 53-80% full).
// Bytes per state, all in: row_bytes + 4 + 4/load. Ids are dense: the n-th distinct state inserted has id n-1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace qpcheck::explore {

inline constexpr uint32_t kNoState = UINT32_MAX;

class StateStore {
 public:
  // `word_bits[i]`: bits used in word i of a packed state (1..64); words = word_bits.size().
  explicit StateStore(const std::vector<int>& word_bits);

  // Inserts `state` (words() uint64) if it is new. Returns {id, true} for a new state, {existing id, false}
  // otherwise. At most 2^32-2 states (std::length_error beyond).
  std::pair<uint32_t, bool> insert(const uint64_t* state, uint32_t predecessor);

  uint64_t size() const { return size_; }
  bool contains(const uint64_t* state) const;
  // Thread-safe variant while no thread inserts: `scratch` holds scratch_words() uint64.
  bool contains(const uint64_t* state, uint64_t* scratch) const;
  int scratch_words() const { return row_words_ + 1; }
  // Writes state `id` (words() uint64) to `out`.
  void load(uint32_t id, uint64_t* out) const;
  uint32_t predecessor(uint32_t id) const { return pred_[id >> kChunkShift][id & kChunkMask]; }
  int words() const { return static_cast<int>(word_bits_.size()); }
  int row_bytes() const { return row_bytes_; }
  // Bytes held by the rows, the links and the table (allocated, not used).
  uint64_t bytes() const;

 private:
  static constexpr int kChunkShift = 16;
  static constexpr uint32_t kChunkMask = (1u << kChunkShift) - 1;

  // Packs `state` into `row` (row_words_ uint64, zero padded).
  void compress(const uint64_t* state, uint64_t* row) const;
  const uint8_t* row(uint32_t id) const {
    return rows_[id >> kChunkShift].get() + static_cast<size_t>(id & kChunkMask) * row_bytes_;
  }
  uint64_t hash(const uint64_t* row) const;
  uint64_t slot_of(uint64_t h) const { return static_cast<uint64_t>((static_cast<__uint128_t>(h) * table_.size()) >> 64); }
  // Finds `row` (compressed): the table position holding it, or the empty position where it would go.
  uint64_t find(const uint64_t* row, bool* found) const;
  void grow();

  std::vector<int> word_bits_;
  int row_bytes_ = 0;
  int row_words_ = 0;
  uint64_t size_ = 0;
  std::vector<std::unique_ptr<uint8_t[]>> rows_;
  std::vector<std::unique_ptr<uint32_t[]>> pred_;
  std::vector<uint32_t> table_;
  uint64_t grow_at_ = 0;
  mutable std::vector<uint64_t> scratch_;  // compressed candidate row
};

}  // namespace qpcheck::explore
