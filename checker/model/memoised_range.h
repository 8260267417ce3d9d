// Tier "memoised ranges" of ModelSystem (docs/performance.md, "Resolved per-action code and memoised ranges");
// internal to checker/model.
//
// Contract: when every action of a range (dispatch.h) is packed (kPatch or kOps, packed_action.h) and the range has
// more than one constant patch or any ops, what the range reports from a state -- which actions have a successor,
// in which order, and the successor's bits in the words they can write -- is a function of the bits those actions
// read or write (the key, at most kMaxWords masked words): the successor is the source with its written bits
// replaced, since an action writes nothing else and computes what it writes from what it reads. So the first state
// with a given key runs the range normally and records that (begin_record / record / end_record); later states with
// the same key replay the record (lookup: kHit), which reports the same successors in the same order. A key whose
// run met an error path or the machine (spoil_record) is recorded as uncached: lookup says kUncached and the range
// always runs. A range with more than kMaxEntries keys, or whose next record would take all memos past
// kMaxArenaWords, is switched off (freed; it then always runs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "checker/model/dispatch.h"
#include "checker/model/packed_action.h"
#include "checker/model/specialised_action.h"
#include "checker/model/state_layout.h"

namespace qpcheck::model::tier {

struct MemoisedRange {
  // read on every visit
  uint32_t nk = 0;                  // key words (at most MemoisedRanges::kMaxWords)
  uint32_t mask = 63;               // slots.size() - 1
  bool off = false;
  uint32_t key_word[8];             // the key: these words, masked with key_mask
  uint64_t key_mask[8];
  std::vector<uint32_t> slots;      // open addressing by hash of the key: arena offset of its record + 1, 0 = empty
  // Per key, one record: its nk masked words; n = successors << 1 | cached; per successor, id << 32 | diffs, then
  // per diff the word and x (successor word = source word ^ x; x lies within the bits the range writes, so it is a
  // function of the key). Uncached: no successors.
  std::vector<uint64_t> arena;
  uint32_t entries = 0, uncached = 0;
  std::vector<uint32_t> out_word;   // the words any action of the range may write (recording)
};

enum class MemoLookup { kHit, kUncached, kMiss };

class MemoisedRanges {
 public:
  static constexpr int kMaxWords = 8;
  static constexpr uint32_t kMaxEntries = 4096;
  // All memos' arenas together hold at most this many words (16 MiB), so a model with many memoised ranges cannot
  // grow without bound.
  static constexpr size_t kMaxArenaWords = size_t{1} << 21;

  // Gives every range that qualifies (see above) a memo (sets Range::memo).
  void build(std::vector<Range>& pc_ranges, Range& rule_range, const std::vector<SpecialisedAction>& actions,
             const PackedActions& packed, const StateLayout& layout, bool no_slots);

  MemoisedRange& memo(int32_t i) { return memos_[i]; }
  const std::vector<MemoisedRange>& memos() const { return memos_; }

  static uint64_t hash(const uint64_t* key, size_t n) {
    // independent multiplies (no dependency chain), then the high bits mixed down: the low bits index the table
    static constexpr uint64_t kMul[8] = {0x9E3779B97F4A7C15ULL, 0xC2B2AE3D27D4EB4FULL, 0x165667B19E3779F9ULL,
                                         0xD6E8FEB86659FD93ULL, 0xFF51AFD7ED558CCDULL, 0xC4CEB9FE1A85EC53ULL,
                                         0x85EBCA77C2B2AE63ULL, 0x27D4EB2F165667C5ULL};
    uint64_t h = 0;
    for (size_t i = 0; i < n; ++i) h += key[i] * kMul[i];
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 32);
  }

  // Fills key[0..m.nk) from the source `src` and looks it up. kHit: report(id, d, diffs) was called for every
  // recorded successor in order, d[2k] a word and d[2k + 1] the xor that turns the source word into the successor's
  // (k < diffs). kUncached, kMiss: nothing reported. kNk > 0: the key has that many words (loops unrolled); 0: m.nk.
  template <uint32_t kNk, class Report>
  [[gnu::always_inline]] MemoLookup lookup(const MemoisedRange& m, const uint64_t* src, uint64_t* key,
                                           Report&& report) const {
    const uint32_t nk = kNk > 0 ? kNk : m.nk;
    // a local copy (kept in registers when kNk > 0), written to `key` for the caller
    uint64_t local[kMaxWords];
    for (uint32_t k = 0; k < nk; ++k) local[k] = key[k] = src[m.key_word[k]] & m.key_mask[k];
    const uint32_t* slots = m.slots.data();
    const uint64_t* arena = m.arena.data();
    for (size_t i = hash(local, nk) & m.mask;; i = (i + 1) & m.mask) {
      const uint32_t e = slots[i];
      if (e == 0) return MemoLookup::kMiss;
      const uint64_t* rec = arena + (e - 1);
      uint64_t differ = 0;
      for (uint32_t k = 0; k < nk; ++k) differ |= rec[k] ^ local[k];
      if (differ != 0) continue;
      const uint64_t n = rec[nk];
      if ((n & 1) == 0) return MemoLookup::kUncached;
      const uint64_t* x = rec + nk + 1;
      for (uint64_t s = n >> 1; s > 0; --s) {
        const uint32_t id = static_cast<uint32_t>(*x >> 32);
        const uint32_t diffs = static_cast<uint32_t>(*x & 0xFFFFFFFF);
        const uint64_t* d = x + 1;
        report(id, d, diffs);
        x = d + 2 * diffs;
      }
      return MemoLookup::kHit;
    }
  }

  // Recording the run of `m`'s range on a key not seen yet.
  void begin_record(MemoisedRange& m) {
    rec_memo_ = &m;
    rec_ok_ = true;
    rec_.clear();
    rec_n_ = 0;
  }
  // Action `id` reported the successor `work` of `src` (call only between begin_record and end_record).
  [[gnu::always_inline]] void record(uint32_t id, const uint64_t* work, const uint64_t* src) {
    const size_t head = rec_.size();
    rec_.push_back(uint64_t{id} << 32);
    for (uint32_t w : rec_memo_->out_word) {
      if (work[w] == src[w]) continue;
      rec_.push_back(w);
      rec_.push_back(work[w] ^ src[w]);
      ++rec_[head];
    }
    ++rec_n_;
  }
  // The run met an error path or the machine: the key is recorded uncached. Harmless when not recording.
  void spoil_record() { rec_ok_ = false; }
  // Stores the record under `key` (the words lookup() filled); abort_record() stores nothing.
  void end_record(const uint64_t* key) {
    MemoisedRange& m = *rec_memo_;
    rec_memo_ = nullptr;
    insert(m, key, rec_ok_);
  }
  void abort_record() { rec_memo_ = nullptr; }

 private:
  void insert(MemoisedRange& m, const uint64_t* key, bool cached);

  std::vector<MemoisedRange> memos_;
  size_t words_ = 0;                  // arena words of all memos
  // While a memoised range runs on a key not seen yet: what it reports (ids, out bits); rec_ok_ false once an error
  // path or the machine was met.
  MemoisedRange* rec_memo_ = nullptr;
  bool rec_ok_ = true;
  std::vector<uint64_t> rec_;         // the successors' part of the record being made (see MemoisedRange::arena)
  uint32_t rec_n_ = 0;                // successors in it
};

}  // namespace qpcheck::model::tier
