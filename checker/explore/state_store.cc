#include "checker/explore/state_store.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace qpcheck::explore {

namespace {

constexpr uint64_t kInitialTable = 1 << 10;

uint64_t mix(uint64_t x) {
  // splitmix64's finaliser
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

StateStore::StateStore(const std::vector<int>& word_bits) : word_bits_(word_bits), table_(kInitialTable, 0) {
  int bits = 0;
  for (int& b : word_bits_) {
    if (b <= 0) b = 1;  // an all-constant word still takes a bit; keeps rows non-empty
    bits += b;
  }
  row_bytes_ = (bits + 7) / 8;
  row_words_ = (bits + 63) / 64;
  scratch_.assign(row_words_ + 1, 0);
  grow_at_ = kInitialTable * 4 / 5;
}

void StateStore::compress(const uint64_t* state, uint64_t* row) const {
  for (int i = 0; i < row_words_; ++i) row[i] = 0;
  int pos = 0;
  for (size_t w = 0; w < word_bits_.size(); ++w) {
    int b = word_bits_[w];
    uint64_t x = b == 64 ? state[w] : (state[w] & ((1ULL << b) - 1));
    int i = pos >> 6, off = pos & 63;
    row[i] |= x << off;
    if (off + b > 64) row[i + 1] |= x >> (64 - off);
    pos += b;
  }
}

void StateStore::load(uint32_t id, uint64_t* out) const {
  uint64_t buf[64];
  std::vector<uint64_t> big;
  uint64_t* r = buf;
  if (row_words_ > 63) {
    big.assign(row_words_ + 1, 0);
    r = big.data();
  }
  r[row_words_ - 1] = 0;
  std::memcpy(r, row(id), row_bytes_);
  int pos = 0;
  for (size_t w = 0; w < word_bits_.size(); ++w) {
    int b = word_bits_[w];
    int i = pos >> 6, off = pos & 63;
    uint64_t x = r[i] >> off;
    if (off + b > 64) x |= r[i + 1] << (64 - off);
    out[w] = b == 64 ? x : (x & ((1ULL << b) - 1));
    pos += b;
  }
}

uint64_t StateStore::hash(const uint64_t* r) const {
  uint64_t h = 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(row_words_);
  for (int i = 0; i < row_words_; ++i) h = mix(h ^ (r[i] + 0x9E3779B97F4A7C15ULL + (h << 6)));
  return h;
}

uint64_t StateStore::find(const uint64_t* r, uint64_t h, bool* found) const {
  uint64_t i = slot_of(h);
  const uint64_t n = table_.size();
  while (table_[i] != 0) {
    if (std::memcmp(row(table_[i] - 1), r, row_bytes_) == 0) {
      *found = true;
      return i;
    }
    if (++i == n) i = 0;
  }
  *found = false;
  return i;
}

void StateStore::grow() {
  std::vector<uint32_t> bigger(table_.size() + table_.size() / 2, 0);
  table_.swap(bigger);
  const uint64_t n = table_.size();
  std::vector<uint64_t> r(row_words_ + 1, 0);
  for (uint32_t id = 0; id < size_; ++id) {
    r[row_words_ - 1] = 0;
    std::memcpy(r.data(), row(id), row_bytes_);
    uint64_t i = slot_of(hash(r.data()));
    while (table_[i] != 0) {
      if (++i == n) i = 0;
    }
    table_[i] = id + 1;
  }
  grow_at_ = n * 4 / 5;
}

std::pair<uint32_t, bool> StateStore::insert(const uint64_t* state, uint32_t predecessor) {
  uint64_t* r = scratch_.data();
  compress(state, r);
  return insert_prepared(r, hash(r), predecessor);
}

std::pair<uint32_t, bool> StateStore::insert_prepared(const uint64_t* r, uint64_t h, uint32_t predecessor) {
  bool found;
  uint64_t i = find(r, h, &found);
  if (found) return {table_[i] - 1, false};
  if (size_ >= UINT32_MAX - 2) throw std::length_error("state store full (2^32 states)");
  uint32_t id = static_cast<uint32_t>(size_);
  if ((id & kChunkMask) == 0) {
    rows_.emplace_back(new uint8_t[(static_cast<size_t>(kChunkMask) + 1) * row_bytes_]);
    pred_.emplace_back(new uint32_t[static_cast<size_t>(kChunkMask) + 1]);
  }
  std::memcpy(rows_.back().get() + static_cast<size_t>(id & kChunkMask) * row_bytes_, r, row_bytes_);
  pred_.back()[id & kChunkMask] = predecessor;
  table_[i] = id + 1;
  ++size_;
  if (size_ > grow_at_) grow();
  return {id, true};
}

bool StateStore::contains(const uint64_t* state, uint64_t* scratch) const {
  compress(state, scratch);
  bool found;
  find(scratch, hash(scratch), &found);
  return found;
}

bool StateStore::contains(const uint64_t* state) const {
  compress(state, scratch_.data());
  bool found;
  find(scratch_.data(), hash(scratch_.data()), &found);
  return found;
}

uint64_t StateStore::bytes() const {
  const uint64_t chunk = static_cast<uint64_t>(kChunkMask) + 1;
  return rows_.size() * chunk * (row_bytes_ + sizeof(uint32_t)) + table_.capacity() * sizeof(uint32_t);
}

FingerprintSet::FingerprintSet() : table_(1 << 10, 0) {}

bool FingerprintSet::insert(uint64_t f) {
  if (f == 0) f = 1;
  uint64_t mask = table_.size() - 1;
  uint64_t i = mix(f) & mask;
  while (table_[i] != 0) {
    if (table_[i] == f) return false;
    i = (i + 1) & mask;
  }
  table_[i] = f;
  if (++size_ * 4 > table_.size() * 3) grow();
  return true;
}

void FingerprintSet::grow() {
  std::vector<uint64_t> bigger(table_.size() * 2, 0);
  uint64_t mask = bigger.size() - 1;
  for (uint64_t f : table_) {
    if (f == 0) continue;
    uint64_t i = mix(f) & mask;
    while (bigger[i] != 0) i = (i + 1) & mask;
    bigger[i] = f;
  }
  table_.swap(bigger);
}

double FingerprintSet::omission_probability() const {
  double n = static_cast<double>(size_);
  return std::min(1.0, n * (n - 1) / 2 / 18446744073709551616.0);
}

Bitstate::Bitstate(int log2_bits, int hashes)
    : bits_(std::max<uint64_t>(1, (uint64_t{1} << log2_bits) / 64), 0),
      mask_((uint64_t{1} << log2_bits) - 1),
      hashes_(hashes) {}

bool Bitstate::insert(uint64_t h1, uint64_t h2) {
  h2 |= 1;  // odd: the k positions differ
  bool fresh = false;
  for (int i = 0; i < hashes_; ++i) {
    uint64_t b = (h1 + static_cast<uint64_t>(i) * h2) & mask_;
    uint64_t& w = bits_[b >> 6];
    uint64_t bit = uint64_t{1} << (b & 63);
    if (!(w & bit)) {
      fresh = true;
      w |= bit;
    }
  }
  if (fresh) ++size_;
  return fresh;
}

double Bitstate::omission_probability() const {
  double m = static_cast<double>(mask_) + 1;
  double fill = 1 - std::exp(-static_cast<double>(hashes_) * static_cast<double>(size_) / m);
  return std::pow(fill, hashes_);
}

}  // namespace qpcheck::explore
