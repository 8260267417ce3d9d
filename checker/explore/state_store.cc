#include "checker/explore/state_store.h"

#include <cstring>
#include <stdexcept>

namespace qpcheck::explore {

StateStore::StateStore(int words) : words_(words), table_(1 << 10, 0), mask_((1 << 10) - 1) {}

uint64_t StateStore::hash(const uint64_t* s) const {
  // Multiply-xorshift mixing per word (a 64-bit finaliser in the style of splitmix64).
  uint64_t h = 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(words_);
  for (int i = 0; i < words_; ++i) {
    uint64_t x = s[i] + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    h = x ^ (x >> 31);
  }
  return h;
}

void StateStore::grow() {
  std::vector<uint32_t> bigger(table_.size() * 2, 0);
  uint64_t mask = bigger.size() - 1;
  for (uint32_t id = 0; id < pred_.size(); ++id) {
    uint64_t i = hash(state(id)) & mask;
    while (bigger[i] != 0) i = (i + 1) & mask;
    bigger[i] = id + 1;
  }
  table_.swap(bigger);
  mask_ = mask;
}

std::pair<uint32_t, bool> StateStore::insert(const uint64_t* s, uint32_t predecessor, uint32_t action) {
  uint64_t i = hash(s) & mask_;
  const size_t bytes = sizeof(uint64_t) * words_;
  while (table_[i] != 0) {
    uint32_t id = table_[i] - 1;
    if (std::memcmp(state(id), s, bytes) == 0) return {id, false};
    i = (i + 1) & mask_;
  }
  if (pred_.size() >= UINT32_MAX - 2) throw std::length_error("state store full (2^32 states)");
  uint32_t id = static_cast<uint32_t>(pred_.size());
  rows_.insert(rows_.end(), s, s + words_);
  pred_.push_back(predecessor);
  action_.push_back(action);
  table_[i] = id + 1;
  if (pred_.size() * 2 > table_.size()) grow();
  return {id, true};
}

bool StateStore::contains(const uint64_t* s) const {
  uint64_t i = hash(s) & mask_;
  while (table_[i] != 0) {
    if (std::memcmp(state(table_[i] - 1), s, sizeof(uint64_t) * words_) == 0) return true;
    i = (i + 1) & mask_;
  }
  return false;
}

uint64_t StateStore::bytes() const {
  return rows_.capacity() * sizeof(uint64_t) + (pred_.capacity() + action_.capacity() + table_.capacity()) * 4;
}

}  // namespace qpcheck::explore
