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

  // The same operations split for parallel callers: prepare() packs `state` into `row` (scratch_words() uint64)
  // and returns its hash; the *_prepared calls take that row and hash.
  uint64_t prepare(const uint64_t* state, uint64_t* row) const {
    compress(state, row);
    return hash(row);
  }
  bool contains_prepared(const uint64_t* row, uint64_t h) const {
    bool found;
    find(row, h, &found);
    return found;
  }
  std::pair<uint32_t, bool> insert_prepared(const uint64_t* row, uint64_t h, uint32_t predecessor);
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
  uint64_t find(const uint64_t* row, uint64_t h, bool* found) const;
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

// Hash compaction (Wolper and Leroy, "Reliable hashing without collision detection", CAV 1993): the visited set keeps
// a 64-bit fingerprint per state in an open-addressing table (grows x2 at 3/4 full; 8 bytes per slot). Two states with
// the same fingerprint count as one, so a state can be missed: with n states the probability that any was is at most
// n(n-1)/2 / 2^64.
class FingerprintSet {
 public:
  FingerprintSet();
  // True if `fingerprint` was not yet in the set (it is now).
  bool insert(uint64_t fingerprint);
  uint64_t size() const { return size_; }
  uint64_t bytes() const { return table_.capacity() * sizeof(uint64_t); }
  // Upper bound on the probability that some state was taken for another (birthday bound).
  double omission_probability() const;

 private:
  void grow();
  std::vector<uint64_t> table_;  // 0 = empty (fingerprint 0 is stored as 1)
  uint64_t size_ = 0;
};

// Bitstate hashing (supertrace; Holzmann, "An analysis of bitstate hashing", FMSD 1998): a state is recorded by
// setting k bits of a 2^log2_bits array, chosen by double hashing h1 + i*h2 (Kirsch and Mitzenmacher, ESA 2006); a
// state whose k bits are all set already counts as visited, so states can be missed.
class Bitstate {
 public:
  Bitstate(int log2_bits, int hashes);
  // True if at least one of the state's bits was clear (the state is new; its bits are set now).
  bool insert(uint64_t h1, uint64_t h2);
  uint64_t size() const { return size_; }
  uint64_t bytes() const { return bits_.size() * sizeof(uint64_t); }
  // After n insertions, the probability that a new state's k bits were all set already, (1 - e^(-kn/m))^k: the chance
  // that the last state stored would have been missed, an upper bound for any state of the search.
  double omission_probability() const;

 private:
  std::vector<uint64_t> bits_;
  uint64_t mask_;
  int hashes_;
  uint64_t size_ = 0;
};

}  // namespace qpcheck::explore
