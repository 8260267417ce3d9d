// Tier "dispatch" of ModelSystem (docs/performance.md, "Guards as slot tests" and "Dispatch tables"); internal to
// checker/model.
//
// Contract: per action, a prefilter -- its first condition when that is a SlotCondition, in raw form when it is `==` or
// `!=` a constant (one load, and, compare on the packed word) -- that successors() tests before anything else; an
// action without one is always a candidate (its prefilter holds). Per range (a process's edges at one pc, or every
// rule instance), blocks of up to 64 actions in which an action whose prefilter reads only a few adjacent bits of one
// word is selected by one table lookup per key: candidates(b, w) has bit i set iff action b.first + i may pass its
// prefilter in w, and for the bits also in b.test the caller must still call prefilter(). The tables are computed by
// calling prefilter() itself on every raw value, so the candidates are exactly the actions whose prefilter holds;
// they are visited in bit (= id = declaration) order, and constantly false actions are left out. A range whose
// table would save no test keeps no blocks: the caller loops over its actions with prefilter().
#pragma once

#include <cstdint>
#include <vector>

#include "checker/model/model.h"
#include "checker/model/slot_condition.h"
#include "checker/model/specialised_action.h"
#include "checker/model/state_layout.h"

namespace qpcheck::model::tier {

// Actions first..end-1 (a process's edges at one pc, or all rule instances) and their dispatch blocks
// [block_begin, block_end) in DispatchTables; no blocks: a plain loop over the actions with prefilter() (no table
// would save a test, e.g. one edge per pc).
struct Range {
  uint32_t first = 0, end = 0, block_begin = 0, block_end = 0;
  int32_t memo = -1;                // the range's MemoisedRange (memoised_range.h), or -1
};

// The prefilter of one action in raw form: kEqRaw: (w[word] & mask) == value; kNeRaw: !=; kTest: holds_packed(
// first_test(id)). Equality tests against a constant, the commonest guards, become one load, and and compare.
struct Prefilter {
  enum class Kind : uint8_t { kEqRaw, kNeRaw, kTest } kind = Kind::kTest;
  uint32_t word = 0;
  uint64_t mask = 0, value = 0;
};

// One table lookup: table[(w[word] >> shift) & mask] is the set of a block's actions whose prefilter accepts those
// bits.
struct DispatchKey {
  uint32_t word = 0, shift = 0;
  uint64_t mask = 0;
  uint32_t table = 0;               // index in the key table of raw value 0
};

// Dispatch of up to 64 consecutive actions; the actions not selected by a key are prefiltered one by one (`test`).
struct Block {
  uint32_t first = 0, count = 0;    // actions first..first+count-1 (count <= 64)
  uint32_t key_begin = 0, key_end = 0;  // keys; none: a plain loop over the actions with prefilter()
  uint64_t test = 0;                // bit i: action first+i is a candidate, tested with prefilter()
};

class DispatchTables {
 public:
  // A key reads at most this many bits (a table of 2^kMaxKeyBits sets).
  static constexpr int kMaxKeyBits = 6;

  // Appends the prefilter of the next action id, `f` (its SlotConditions located): its first condition if quick, a
  // constantly false test if it is never enabled; sets f.prefiltered when conds[0] is that test.
  void add_action(SpecialisedAction& f, const Model& model, const StateLayout& layout);
  // Builds the blocks of r's actions (ids in enumeration order, every one added), or none (sets r.block_*).
  void build_blocks(Range& r, const std::vector<SpecialisedAction>& actions, const StateLayout& layout);

  [[gnu::always_inline]] bool prefilter(uint32_t id, const uint64_t* w, const StateLayout& layout) const {
    const Prefilter& p = prefilter_[id];
    switch (p.kind) {
      case Prefilter::Kind::kEqRaw: return (w[p.word] & p.mask) == p.value;
      case Prefilter::Kind::kNeRaw: return (w[p.word] & p.mask) != p.value;
      default: return holds_packed(first_test_[id], w, layout);
    }
  }
  [[gnu::always_inline]] uint64_t candidates(const Block& b, const uint64_t* w) const {
    uint64_t c = b.test;
    for (uint32_t k = b.key_begin; k < b.key_end; ++k) {
      const DispatchKey& d = keys_[k];
      c |= key_table_[d.table + ((w[d.word] >> d.shift) & d.mask)];
    }
    return c;
  }
  const Block& block(uint32_t k) const { return blocks_[k]; }
  const std::vector<Block>& blocks() const { return blocks_; }
  // Every action some value of key `k` selects (a bit set).
  uint64_t keyed_actions(uint32_t k) const;
  // The prefilter's test of action `id` (kGeneral: none).
  const SlotCondition& first_test(uint32_t id) const { return first_test_[id]; }

 private:
  std::vector<Prefilter> prefilter_;  // per action
  std::vector<SlotCondition> first_test_;  // per action: its first condition if quick (else kGeneral), for a prefilter
  std::vector<DispatchKey> keys_;
  std::vector<uint64_t> key_table_;
  std::vector<Block> blocks_;
};

}  // namespace qpcheck::model::tier
