#include "checker/model/dispatch.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <tuple>

namespace qpcheck::model::tier {

void DispatchTables::add_action(SpecialisedAction& f, const Model& model, const StateLayout& layout) {
  SlotCondition t;  // kGeneral: no prefilter
  if (f.never && !model.slots.empty()) {
    t.kind = SlotCondition::Kind::kLt;  // st[0] < INT64_MIN: never
    t.slot = 0;
    t.k = INT64_MIN;
    locate(t, layout);
  } else if (!f.conds.empty() && f.conds[0].kind != SlotCondition::Kind::kGeneral) {
    t = f.conds[0];
    f.prefiltered = true;
  }
  first_test_.push_back(t);
  // Raw form: slot == k (or !=, or > lo / < hi ... only == and != here) compared in the packed word.
  Prefilter pre;
  if (!model.slots.empty() && (t.kind == SlotCondition::Kind::kEq || t.kind == SlotCondition::Kind::kNe)) {
    const SlotInfo& si = model.slots[t.slot];
    pre.kind = t.kind == SlotCondition::Kind::kEq ? Prefilter::Kind::kEqRaw : Prefilter::Kind::kNeRaw;
    pre.word = static_cast<uint32_t>(t.pos.word);
    if (t.k < si.lo || t.k > si.hi) {
      pre.mask = 0;  // the slot never holds k: == is false, != is true
      pre.value = 1;
    } else {
      pre.mask = t.pos.mask << t.pos.shift;
      pre.value = (static_cast<uint64_t>(t.k - t.pos.lo) << t.pos.shift) & pre.mask;
    }
  }
  prefilter_.push_back(pre);
}

void DispatchTables::build_blocks(Range& range, const std::vector<SpecialisedAction>& actions,
                                  const StateLayout& layout) {
  const uint32_t first = range.first, end = range.end;
  range.block_begin = static_cast<uint32_t>(blocks_.size());
  // The bits an action's prefilter reads: [lo, hi) of one word, if few enough for a table.
  struct Span {
    uint32_t word = 0, lo = 64, hi = 0;
    uint32_t bit = 0, key = 0;
  };
  auto span_of = [&](uint32_t id) -> std::optional<Span> {
    Span sp;
    auto add = [&](uint32_t word, uint64_t mask) {
      if (mask == 0) return true;  // a constant field: nothing read
      if (sp.hi > 0 && word != sp.word) return false;
      sp.word = word;
      sp.lo = std::min<uint32_t>(sp.lo, std::countr_zero(mask));
      sp.hi = std::max<uint32_t>(sp.hi, 64 - std::countl_zero(mask));
      return true;
    };
    const Prefilter& p = prefilter_[id];
    bool ok = true;
    if (p.kind != Prefilter::Kind::kTest) {
      ok = add(p.word, p.mask);
    } else {
      const SlotCondition& t = first_test_[id];
      auto slot = [&](int s) {
        auto [w, m] = layout.field_bits(s);
        ok = ok && add(static_cast<uint32_t>(w), m);
      };
      switch (t.kind) {
        case SlotCondition::Kind::kEq:
        case SlotCondition::Kind::kNe:
        case SlotCondition::Kind::kLt:
        case SlotCondition::Kind::kLe:
        case SlotCondition::Kind::kGt:
        case SlotCondition::Kind::kGe:
        case SlotCondition::Kind::kEq2: slot(t.slot); break;
        case SlotCondition::Kind::kDiff: slot(t.slot); slot(t.slot2); break;
        case SlotCondition::Kind::kContains:
          for (int i = 0; i <= t.e->a->type->capacity; ++i) slot(t.slot + i);
          break;
        default: return std::nullopt;
      }
    }
    if (!ok || sp.hi == 0 || sp.hi - sp.lo > kMaxKeyBits) return std::nullopt;
    return sp;
  };
  std::vector<uint64_t> scratch(layout.words(), 0);
  for (uint32_t b0 = first; b0 < end; b0 += 64) {
    Block b;
    b.first = b0;
    b.count = std::min<uint32_t>(64, end - b0);
    std::vector<Span> spans;
    for (uint32_t i = 0; i < b.count; ++i) {
      const uint32_t id = b0 + i;
      if (actions[id].never) continue;  // never enabled
      if (auto sp = span_of(id)) {
        sp->bit = i;
        spans.push_back(*sp);
      } else {
        b.test |= uint64_t{1} << i;
      }
    }
    // Neighbouring spans of one word share a key while the union stays small.
    std::vector<Span> order = spans;
    std::sort(order.begin(), order.end(),
              [](const Span& x, const Span& y) { return std::tie(x.word, x.lo, x.bit) < std::tie(y.word, y.lo, y.bit); });
    std::vector<DispatchKey> keys;
    std::vector<std::vector<uint32_t>> members;  // per key: bits
    uint32_t lo = 0, hi = 0;
    for (const Span& sp : order) {
      if (keys.empty() || sp.word != keys.back().word || std::max(hi, sp.hi) - lo > kMaxKeyBits) {
        keys.push_back(DispatchKey{sp.word, sp.lo, 0, 0});
        members.emplace_back();
        lo = sp.lo;
        hi = sp.hi;
      }
      hi = std::max(hi, sp.hi);
      keys.back().mask = (uint64_t{1} << (hi - lo)) - 1;
      members.back().push_back(sp.bit);
    }
    if (keys.size() >= spans.size()) {
      b.test = 0;  // no test saved: the plain loop
      blocks_.push_back(b);
      continue;
    }
    b.key_begin = static_cast<uint32_t>(keys_.size());
    for (size_t k = 0; k < keys.size(); ++k) {
      DispatchKey d = keys[k];
      d.table = static_cast<uint32_t>(key_table_.size());
      for (uint64_t raw = 0; raw <= d.mask; ++raw) {
        scratch[d.word] = raw << d.shift;
        uint64_t accept = 0;
        for (uint32_t bit : members[k]) {
          const uint32_t id = b0 + bit;
          const SlotCondition& t = first_test_[id];
          if (prefilter_[id].kind == Prefilter::Kind::kTest && t.kind == SlotCondition::Kind::kContains) {
            // a length beyond the capacity never occurs (and would read past the queue)
            int64_t len = layout.get(scratch.data(), t.slot);
            if (len < 0 || len > t.e->a->type->capacity) continue;
          }
          if (prefilter(id, scratch.data(), layout)) accept |= uint64_t{1} << bit;
        }
        key_table_.push_back(accept);
      }
      scratch[d.word] = 0;
      keys_.push_back(d);
    }
    b.key_end = static_cast<uint32_t>(keys_.size());
    blocks_.push_back(b);
  }
  range.block_end = static_cast<uint32_t>(blocks_.size());
  const bool keyed = std::any_of(blocks_.begin() + range.block_begin, blocks_.end(),
                                 [](const Block& b) { return b.key_begin != b.key_end; });
  if (!keyed) {
    blocks_.resize(range.block_begin);
    range.block_end = range.block_begin;
  }
}

uint64_t DispatchTables::keyed_actions(uint32_t k) const {
  uint64_t keyed = 0;
  for (uint64_t raw = 0; raw <= keys_[k].mask; ++raw) keyed |= key_table_[keys_[k].table + raw];
  return keyed;
}

}  // namespace qpcheck::model::tier
