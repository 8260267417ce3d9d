// The packed state vector of a model: where each slot lies in the fixed-width words that engines store and hash.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "checker/model/model.h"

namespace qpcheck::model {

// Bit layout of a packed state: each slot stores (value - lo) in the fewest bits that hold its range. A field never
// straddles two words; a slot whose range is one value takes no bits (mask 0).
class StateLayout {
 public:
  explicit StateLayout(const std::vector<SlotInfo>& slots);
  int words() const { return words_; }
  int bits() const { return bits_; }
  void pack(const std::vector<int64_t>& values, uint64_t* out) const;
  void unpack(const uint64_t* in, std::vector<int64_t>& values) const;
  // Overwrites slot `slot` of the packed state `out` with `value`.
  void set(uint64_t* out, int slot, int64_t value) const {
    const Field& f = fields_[slot];
    uint64_t mask = f.mask << f.shift;
    out[f.word] = (out[f.word] & ~mask) | ((static_cast<uint64_t>(value - f.lo) << f.shift) & mask);
  }
  // The word holding slot `slot` and the bits it occupies there (none for a constant slot).
  std::pair<int, uint64_t> field_bits(int slot) const {
    const Field& f = fields_[slot];
    return {f.word, f.mask << f.shift};
  }
  // Where slot `slot` lies: value = ((in[word] >> shift) & mask) + lo.
  struct Position {
    int32_t word = 0, shift = 0;
    uint64_t mask = 0;
    int64_t lo = 0;
  };
  Position position(int slot) const {
    const Field& f = fields_[slot];
    return Position{f.word, f.shift, f.mask, f.lo};
  }
  // Value of slot `slot` in the packed state `in`.
  int64_t get(const uint64_t* in, int slot) const {
    const Field& f = fields_[slot];
    return static_cast<int64_t>((in[f.word] >> f.shift) & f.mask) + f.lo;
  }
  // Bits used in each word (fields never straddle words); a store may keep only these.
  std::vector<int> word_bits() const;

 private:
  struct Field {
    int word, shift, width;
    int64_t lo;
    uint64_t mask;                    // (1 << width) - 1; 0 for a constant slot
  };
  std::vector<Field> fields_;
  int words_ = 0;
  int bits_ = 0;
};

}  // namespace qpcheck::model
