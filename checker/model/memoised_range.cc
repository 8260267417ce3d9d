#include "checker/model/memoised_range.h"

#include <utility>

namespace qpcheck::model::tier {

void MemoisedRanges::build(std::vector<Range>& pc_ranges, Range& rule_range,
                           const std::vector<SpecialisedAction>& actions, const PackedActions& packed,
                           const StateLayout& layout, bool no_slots) {
  if (no_slots) return;
  const int words = layout.words();
  auto build = [&](Range& r) {
    std::vector<uint64_t> rw(words, 0), wr(words, 0);
    int live = 0;
    bool ops = false;
    for (uint32_t id = r.first; id < r.end; ++id) {
      const SpecialisedAction& f = actions[id];
      if (f.never) continue;
      if (packed.action(id).kind == PackedAction::Kind::kMachine) return;
      ++live;
      ops = ops || packed.action(id).kind == PackedAction::Kind::kOps;
      for (const SlotCondition& t : f.conds) test_bits(t, layout, rw);
      auto write = [&](int slot) {
        auto [w, m] = layout.field_bits(slot);
        wr[w] |= m;
      };
      for (const FlatOp& o : f.ops) {
        switch (o.kind) {
          case FlatOp::Kind::kSet: write(o.slot); break;
          case FlatOp::Kind::kAdd: {
            write(o.slot);
            auto [w, m] = layout.field_bits(o.src);
            rw[w] |= m;
            break;
          }
          case FlatOp::Kind::kPush:
          case FlatOp::Kind::kPop:
          case FlatOp::Kind::kClear:
            for (int e = 0; e <= o.s->lhs->type->capacity; ++e) write(o.slot + e);
            break;
          case FlatOp::Kind::kAssert:
          case FlatOp::Kind::kRequire:
          case FlatOp::Kind::kIf: test_bits(o.test, layout, rw); break;
          case FlatOp::Kind::kJump: break;
          case FlatOp::Kind::kStmt: return;  // not packed (cannot happen)
        }
      }
      if (f.pc_slot >= 0) write(f.pc_slot);
    }
    // one constant patch (the philosophers' steps) costs less than a lookup
    if (live < 2 && !ops) return;
    MemoisedRange m;
    for (int w = 0; w < words; ++w) {
      const uint64_t key = rw[w] | wr[w];
      if (key != 0) {
        if (m.nk == kMaxWords) return;  // too wide a key
        m.key_word[m.nk] = static_cast<uint32_t>(w);
        m.key_mask[m.nk++] = key;
      }
      if (wr[w] != 0) m.out_word.push_back(static_cast<uint32_t>(w));
    }
    if (m.nk == 0) return;
    m.slots.assign(m.mask + 1, 0);
    r.memo = static_cast<int32_t>(memos_.size());
    memos_.push_back(std::move(m));
  };
  for (Range& r : pc_ranges) build(r);
  if (rule_range.first < rule_range.end) build(rule_range);
}

void MemoisedRanges::insert(MemoisedRange& m, const uint64_t* key, bool cached) {
  const uint32_t nk = m.nk;
  const size_t words = nk + 1 + (cached ? rec_.size() : 0);
  if (m.entries >= kMaxEntries || words_ + words > kMaxArenaWords) {
    m.off = true;  // too many keys: switch off and free
    words_ -= m.arena.size();
    m.slots = {};
    m.arena = {};
    return;
  }
  words_ += words;
  ++m.entries;
  m.uncached += !cached;
  const uint32_t at = static_cast<uint32_t>(m.arena.size());
  m.arena.insert(m.arena.end(), key, key + nk);
  if (cached) {
    m.arena.push_back(uint64_t{rec_n_} << 1 | 1);
    m.arena.insert(m.arena.end(), rec_.begin(), rec_.end());
  } else {
    m.arena.push_back(0);
  }
  auto place = [&](uint32_t record) {
    size_t i = hash(m.arena.data() + record, nk) & m.mask;
    while (m.slots[i] != 0) i = (i + 1) & m.mask;
    m.slots[i] = record + 1;
  };
  if (2 * m.entries <= m.slots.size()) return place(at);
  // at most half full: grow and place every record again (walking the arena)
  m.slots.assign(m.slots.size() * 2, 0);
  m.mask = static_cast<uint32_t>(m.slots.size() - 1);
  for (uint32_t x = 0; x < m.arena.size();) {
    place(x);
    const uint64_t n = m.arena[x + nk];
    x += nk + 1;
    for (uint64_t k = 0; k < (n >> 1); ++k) x += 1 + 2 * static_cast<uint32_t>(m.arena[x] & 0xFFFFFFFF);
  }
}

}  // namespace qpcheck::model::tier
