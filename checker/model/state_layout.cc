#include "checker/model/state_layout.h"

#include <algorithm>
#include <bit>

namespace qpcheck::model {

StateLayout::StateLayout(const std::vector<SlotInfo>& slots) {
  int word = 0, used = 0;
  for (const SlotInfo& s : slots) {
    uint64_t range = static_cast<uint64_t>(s.hi - s.lo);
    int width = range == 0 ? 0 : 64 - std::countl_zero(range);
    if (used + width > 64) { ++word; used = 0; }
    fields_.push_back(Field{word, used, width, s.lo, width == 0 ? 0 : width == 64 ? ~0ULL : ((1ULL << width) - 1)});
    used += width;
    bits_ += width;
  }
  words_ = (slots.empty() || (word == 0 && used == 0)) ? 1 : word + 1;
}

void StateLayout::pack(const std::vector<int64_t>& values, uint64_t* out) const {
  for (int w = 0; w < words_; ++w) out[w] = 0;
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    if (f.width == 0) continue;
    out[f.word] |= static_cast<uint64_t>(values[i] - f.lo) << f.shift;
  }
}

void StateLayout::unpack(const uint64_t* in, std::vector<int64_t>& values) const {
  if (values.size() != fields_.size()) values.resize(fields_.size());
  int64_t* out = values.data();
  const Field* f = fields_.data();
  for (size_t i = 0, n = fields_.size(); i < n; ++i) {
    out[i] = static_cast<int64_t>((in[f[i].word] >> f[i].shift) & f[i].mask) + f[i].lo;
  }
}

std::vector<int> StateLayout::word_bits() const {
  std::vector<int> used(words_, 0);
  for (const Field& f : fields_) {
    if (f.width > 0) used[f.word] = std::max(used[f.word], f.shift + f.width);
  }
  return used;
}

}  // namespace qpcheck::model
