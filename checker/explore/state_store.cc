#include "checker/explore/state_store.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <sys/mman.h>

namespace qpcheck::explore {

static_assert(std::endian::native == std::endian::little, "rows are stored as little-endian byte strings");

namespace {

constexpr uint64_t kInitialTable = 1 << 10;
constexpr uint64_t kMinPartitionTable = 16;  // a partition's first index holds at least this many slots
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ULL;
constexpr int kLeafBits = 128;     // a part of the state this wide or narrower is stored flat
constexpr int kChunkShift = 14;    // rows per chunk: 2^14 (the last chunk, partly used, costs at most 2^14 rows)
constexpr uint32_t kChunkMask = (1u << kChunkShift) - 1;
constexpr size_t kChunkRows = size_t{1} << kChunkShift;

uint64_t mix(uint64_t x) {
  // splitmix64's finaliser
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A leaf's hash (leaves are one or two words): splitmix's finaliser, a bijection for one word; one multiply more for
// the second.
inline uint64_t hash_words(const uint64_t* r, int n) {
  uint64_t h = r[0];
  if (n == 2) h = std::rotl(h * 0xC2B2AE3D27D4EB4FULL, 31) ^ r[1];
  return mix(h + kGolden);
}

// The hash of an inner node's content from the high halves of its children's hashes. It depends on the state only,
// not on the child ids or on how a row encodes them, so an index survives re-encoding and the root's hash is known
// before any lookup; each child keeps the high half of every entry's hash, so a parent grows without re-reading rows.
uint64_t combine(uint64_t l, uint64_t r) { return mix(((l >> 32) << 32 | (r >> 32)) + kGolden); }

uint64_t load8(const uint8_t* p) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  return x;
}

// Writes a row of `width` bytes as whole 8-byte words: the bytes beyond it land on the next row (not written yet,
// rows are appended in id order) or on the chunk's 8 bytes of padding, and every read masks them off.
void store_row(uint8_t* p, const uint64_t* r, int width) {
  for (int k = 0; 8 * k < width; ++k) std::memcpy(p + 8 * k, r + k, 8);
}

// A read prefetch into all cache levels. The empty asm is a side effect: without it GCC deems a function that only
// reads memory and prefetches pure (ipa-pure-const) and deletes its calls, prefetches and all.
inline void prefetch_line(const void* p) {
  __builtin_prefetch(p);
  asm volatile("" : : "r"(p));
}

uint64_t low_mask(int bits) { return bits >= 64 ? ~0ULL : (1ULL << bits) - 1; }

// A zero-filled array of uint32 straight from mmap: pages are zeroed by the kernel when first touched (no memset
// pass), and large tables ask for transparent huge pages, which cuts the TLB misses of random probes.
struct Unmap {
  size_t bytes = 0;
  void operator()(uint32_t* p) const { munmap(p, bytes); }
};
using Slots = std::unique_ptr<uint32_t[], Unmap>;

Slots allocate_zeroed(uint64_t n) {
  constexpr size_t kHuge = size_t{2} << 20;
  size_t bytes = static_cast<size_t>(n) * sizeof(uint32_t);
  if (bytes < kHuge) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return Slots(static_cast<uint32_t*>(p), Unmap{bytes});
  }
  // Whole 2 MiB pages, 2 MiB aligned: map one page more and trim the ends.
  bytes = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  uintptr_t a = reinterpret_cast<uintptr_t>(p), aligned = (a + kHuge - 1) / kHuge * kHuge;
  if (aligned > a) munmap(p, aligned - a);
  if (aligned + bytes < a + bytes + kHuge) munmap(reinterpret_cast<void*>(aligned + bytes), a + kHuge - aligned);
  madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);  // advisory; failure is harmless
  return Slots(reinterpret_cast<uint32_t*>(aligned), Unmap{bytes});
}

// Open-addressing index from a 64-bit hash to a dense id whose key lives elsewhere (linear probing; multiply-shift
// onto any capacity; grows by 1.5x beyond 80 % full). Entry = tag | (id + 1), 0 = empty; the id takes the low
// bit_width(capacity) bits, the tag (bits of the hash that the slot does not use) the rest.
class Index {
 public:
  explicit Index(uint64_t capacity = kInitialTable) { reset(capacity); }
  uint64_t bytes() const { return cap_ * sizeof(uint32_t); }
  bool needs_grow(uint64_t count) const { return count > grow_at_; }
  uint64_t capacity() const { return cap_; }

  // Probes for a key with hash `h`; `eq(id)` compares the stored key of `id`. True and `*id` if found; otherwise
  // `*pos` is the empty slot where the key goes.
  template <class Eq>
  bool find(uint64_t h, const Eq& eq, uint64_t* pos, uint32_t* id) const {
    const uint32_t want = tag(h);
    const uint32_t* s = slots_.get();
    for (uint64_t i = slot(h);;) {
      uint32_t e = s[i];
      if (e == 0) {
        *pos = i;
        return false;
      }
      if ((e & ~idmask_) == want && eq((e & idmask_) - 1)) {
        *id = (e & idmask_) - 1;
        return true;
      }
      if (++i == cap_) i = 0;
    }
  }
  // The empty slot for a key known to be absent.
  uint64_t find_empty(uint64_t h) const {
    uint64_t i = slot(h);
    while (slots_[i] != 0) {
      if (++i == cap_) i = 0;
    }
    return i;
  }
  void prefetch(uint64_t h) const { prefetch_line(slots_.get() + slot(h)); }
  void put(uint64_t pos, uint64_t h, uint32_t id) { slots_[pos] = tag(h) | (id + 1); }
  // Rebuilds a 1.5x larger table from the ids 0..count-1 and their hashes.
  template <class HashOf>
  void grow(uint64_t count, const HashOf& hash_of) { grow_to(cap_ + cap_ / 2, count, hash_of); }
  // The capacity after as many 1.5x grows as it takes for `count` entries not to need one (the current one if none).
  uint64_t capacity_for(uint64_t count) const {
    uint64_t cap = cap_;
    while (count > cap * 4 / 5) cap += cap / 2;
    return cap;
  }
  // Rebuilds the table with capacity `cap` (> the current one) from the ids 0..count-1 and their hashes.
  template <class HashOf>
  void grow_to(uint64_t cap, uint64_t count, const HashOf& hash_of) {
    reset(cap);
    // Write one slot per 4 KiB page first (storing the 0 it holds): a fresh page's first access is then a write,
    // which maps a zeroed page once (or a 2 MiB one), instead of a read that maps the shared zero page and a write
    // that must replace it and flush every CPU's TLB of it (an inter-processor interrupt while other threads run).
    for (uint64_t i = 0; i < cap_; i += 4096 / sizeof(uint32_t)) slots_[i] = 0;
    // The new table is as large as the old and its slots are random: the hash of the entry kAhead places on is
    // computed and its slot prefetched first, so that many misses are in flight (the ring holds those hashes).
    constexpr uint64_t kAhead = 16;
    uint64_t ring[kAhead];
    for (uint64_t id = 0; id < count && id < kAhead; ++id) {
      ring[id] = hash_of(static_cast<uint32_t>(id));
      prefetch(ring[id]);
    }
    for (uint64_t id = 0; id < count; ++id) {
      const uint64_t h = ring[id % kAhead];
      if (id + kAhead < count) {
        ring[id % kAhead] = hash_of(static_cast<uint32_t>(id + kAhead));
        prefetch(ring[id % kAhead]);
      }
      put(find_empty(h), h, static_cast<uint32_t>(id));
    }
  }

 private:
  void reset(uint64_t cap) {
    slots_ = allocate_zeroed(cap);
    cap_ = cap;
    int idbits = std::bit_width(cap);  // id + 1 <= count <= cap
    idmask_ = idbits >= 32 ? UINT32_MAX : (1u << idbits) - 1;
    grow_at_ = cap * 4 / 5;
  }
  uint64_t slot(uint64_t h) const { return static_cast<uint64_t>((static_cast<__uint128_t>(h) * cap_) >> 64); }
  uint32_t tag(uint64_t h) const { return static_cast<uint32_t>(h) & ~idmask_; }

  Slots slots_;
  uint64_t cap_ = 0;
  uint32_t idmask_ = 0;
  uint64_t grow_at_ = 0;
};

// Fixed-width byte rows in chunks of 2^14; the first chunk starts small and doubles (a child set may hold only a few
// hundred rows). Each chunk has 8 bytes of padding after its last row, so an 8-byte load at any row is safe.
class Rows {
 public:
  explicit Rows(int width = 1) : width_(width) {}
  int width() const { return width_; }
  const uint8_t* at(uint32_t id) const { return chunks_[id >> kChunkShift].get() + (id & kChunkMask) * width_; }
  uint8_t* append(uint32_t id) {
    if (id < kChunkRows) {
      if (id == first_rows_) {
        size_t rows = first_rows_ == 0 ? 256 : 2 * first_rows_;
        std::unique_ptr<uint8_t[]> c(new uint8_t[rows * width_ + 8]);
        if (first_rows_ > 0) std::memcpy(c.get(), chunks_[0].get(), first_rows_ * width_);
        std::memset(c.get() + rows * width_, 0, 8);
        if (chunks_.empty()) chunks_.emplace_back();
        chunks_[0] = std::move(c);
        first_rows_ = rows;
      }
    } else if ((id & kChunkMask) == 0) {
      size_t n = kChunkRows * width_;
      chunks_.emplace_back(new uint8_t[n + 8]);
      std::memset(chunks_.back().get() + n, 0, 8);
    }
    return chunks_.back().get() + (id & kChunkMask) * width_;
  }
  uint64_t bytes() const {
    return (first_rows_ + (chunks_.empty() ? 0 : chunks_.size() - 1) * kChunkRows) * width_;
  }

 private:
  int width_;
  size_t first_rows_ = 0;  // rows allocated in chunk 0 (256, doubling up to 2^14)
  std::vector<std::unique_ptr<uint8_t[]>> chunks_;
};

// Rows of `bits` bits each (1..56; wider rows take 64), packed back to back with no byte alignment, in chunks of 2^14
// rows (the first chunk starts small and doubles), each with 8 bytes of padding so every row is one 8-byte load.
// Rows are written in id order: a write keeps the bits below the row and may clobber those above (not written yet).
class BitRows {
 public:
  explicit BitRows(int bits = 1) : bits_(bits > 56 ? 64 : std::max(bits, 1)), mask_(low_mask(bits_)) {}
  int bits() const { return bits_; }
  uint64_t get(uint32_t id) const {
    size_t bit = static_cast<size_t>(id & kChunkMask) * bits_;
    return (load8(chunks_[id >> kChunkShift].get() + (bit >> 3)) >> (bit & 7)) & mask_;
  }
  void append(uint32_t id, uint64_t v) {
    if (id < kChunkRows) {
      if (id == first_rows_) {
        size_t rows = first_rows_ == 0 ? 256 : 2 * first_rows_;
        std::unique_ptr<uint8_t[]> c(new uint8_t[chunk_bytes(rows) + 8]());
        if (first_rows_ > 0) std::memcpy(c.get(), chunks_[0].get(), chunk_bytes(first_rows_));
        if (chunks_.empty()) chunks_.emplace_back();
        chunks_[0] = std::move(c);
        first_rows_ = rows;
      }
    } else if ((id & kChunkMask) == 0) {
      chunks_.emplace_back(new uint8_t[chunk_bytes(kChunkRows) + 8]());
    }
    size_t bit = static_cast<size_t>(id & kChunkMask) * bits_;
    uint8_t* p = chunks_.back().get() + (bit >> 3);
    int sh = static_cast<int>(bit & 7);
    uint64_t w = load8(p);
    w = (w & ~(mask_ << sh)) | (v << sh);
    std::memcpy(p, &w, 8);
  }
  uint64_t bytes() const {
    return chunk_bytes(first_rows_) + (chunks_.empty() ? 0 : chunks_.size() - 1) * chunk_bytes(kChunkRows);
  }

 private:
  size_t chunk_bytes(size_t rows) const { return (rows * bits_ + 7) / 8; }
  int bits_;
  uint64_t mask_;
  size_t first_rows_ = 0;
  std::vector<std::unique_ptr<uint8_t[]>> chunks_;
};

}  // namespace

// One level of the tree: a leaf keeps rows of packed bits of some consecutive words of the state; an inner node keeps
// rows of (left id, right id) pairs of its two children. Each has its own dense ids and index.
struct StateStore::Node {
  explicit Node(uint64_t table) : index(table) {}
  bool leaf = true;
  // Leaf: its words of the state, their used bits, and its place in the prepared row.
  int first_word = 0;
  std::vector<int> word_bits;
  int prep_offset = 0;            // uint64 index into the prepared row
  int prep_words = 0;             // uint64 words of its prepared row (1 or 2)
  uint64_t last_mask = 0;         // mask of the last 8-byte load of a stored row
  int hid = 0;                    // pre-order number: this node's hash in a hashes array
  // Inner: children, the current id widths (bits) and the rows: (left id, right id) in lbits + rbits bits.
  std::unique_ptr<Node> left, right;
  int lbits = 0, rbits = 0;

  Rows rows;                       // leaf
  BitRows pairs;                  // inner
  Index index;
  uint64_t count = 0;
  // Children: the high 32 bits of each entry's content hash, for the parent's grow.
  bool keep_up = false;
  Rows ups{4};

  void note_hash(uint32_t id, uint64_t h) {
    if (!keep_up) return;
    uint32_t u = static_cast<uint32_t>(h >> 32);
    std::memcpy(ups.append(id), &u, 4);
  }
  uint64_t up(uint32_t id) const {
    uint32_t u;
    std::memcpy(&u, ups.at(id), 4);
    return static_cast<uint64_t>(u) << 32;
  }

  // ---- leaves
  // Reads stored row `id` into prep_words uint64.
  void read(uint32_t id, uint64_t* out) const {
    const uint8_t* p = rows.at(id);
    for (int k = 0; k + 1 < prep_words; ++k) out[k] = load8(p + 8 * k);
    out[prep_words - 1] = load8(p + 8 * (prep_words - 1)) & last_mask;
  }
  bool leaf_equal(uint32_t id, const uint64_t* r) const {
    const uint8_t* p = rows.at(id);
    for (int k = 0; k + 1 < prep_words; ++k) {
      if (load8(p + 8 * k) != r[k]) return false;
    }
    return (load8(p + 8 * (prep_words - 1)) & last_mask) == r[prep_words - 1];
  }
  uint64_t leaf_hash(const uint64_t* prep) const { return hash_words(prep + prep_offset, prep_words); }
  void unpack(uint32_t id, uint64_t* out) const {
    uint64_t r[3] = {0, 0, 0};
    read(id, r);
    int pos = 0;
    for (size_t w = 0; w < word_bits.size(); ++w) {
      int b = word_bits[w];
      int i = pos >> 6, off = pos & 63;
      uint64_t x = r[i] >> off;
      if (off + b > 64) x |= r[i + 1] << (64 - off);
      out[first_word + w] = x & low_mask(b);
      pos += b;
    }
  }
  // Leaf insertion with the hash of its prepared row.
  uint32_t leaf_insert(const uint64_t* prep, uint64_t h, bool* fresh, uint64_t max) {
    const uint64_t* r = prep + prep_offset;
    uint64_t pos;
    uint32_t id;
    if (index.find(h, [&](uint32_t i) { return leaf_equal(i, r); }, &pos, &id)) {
      *fresh = false;
      return id;
    }
    if (count >= max) throw std::length_error("state store full (2^32 states)");
    id = static_cast<uint32_t>(count);
    store_row(rows.append(id), r, rows.width());
    note_hash(id, h);
    index.put(pos, h, id);
    *fresh = true;
    if (index.needs_grow(++count)) index.grow(count, [this](uint32_t i) { return stored_hash(i); });
    return id;
  }
  bool leaf_find(const uint64_t* prep, uint64_t h, uint32_t* id) const {
    const uint64_t* r = prep + prep_offset;
    uint64_t pos;
    return index.find(h, [&](uint32_t i) { return leaf_equal(i, r); }, &pos, id);
  }

  // ---- inner nodes
  void decode(uint32_t id, uint32_t* l, uint32_t* r) const {
    uint64_t v = pairs.get(id);
    *l = static_cast<uint32_t>(v & low_mask(lbits));
    *r = static_cast<uint32_t>(v >> lbits);
  }
  // Rewrites every row with ids `nl` and `nr` bits wide (a child's count crossed a power of two).
  void reencode(int nl, int nr) {
    BitRows wider(nl + nr);
    for (uint64_t id = 0; id < count; ++id) {
      uint32_t l, r;
      decode(static_cast<uint32_t>(id), &l, &r);
      wider.append(static_cast<uint32_t>(id), l | (static_cast<uint64_t>(r) << nl));
    }
    pairs = std::move(wider);
    lbits = nl;
    rbits = nr;
  }
  // Inner insertion; `hs` holds the content hash of every node of the tree (hashes()).
  // Inner insertion; `hs` holds the content hash of every node of the tree (hashes()). Top-down: the node's own index
  // is probed first, by content hash, and a candidate is compared by following its child ids down to the leaves' rows
  // (`equal`), so a state seen before (most successors) costs no child lookups at all; only a new state looks up (and
  // stores) its halves to build its row. The ids are those of a bottom-up insertion: a known state's halves are
  // known, and a new state's halves are inserted in the same order.
  uint32_t inner_insert(const uint64_t* prep, const uint64_t* hs, bool* fresh, uint64_t max) {
    const uint64_t h = hs[hid];
    uint64_t pos;
    uint32_t id;
    if (index.find(h, [&](uint32_t i) { return equal(i, prep); }, &pos, &id)) {
      *fresh = false;
      return id;
    }
    bool fl, fr;
    const uint32_t l = left->insert(prep, hs, &fl);
    const uint32_t r = right->insert(prep, hs, &fr);
    const int nl = std::bit_width(l), nr = std::bit_width(r);
    if (nl > lbits || nr > rbits) reencode(std::max(nl, lbits), std::max(nr, rbits));
    const uint64_t key = l | (static_cast<uint64_t>(r) << lbits);
    if (count >= max) throw std::length_error("state store full (2^32 states)");
    id = static_cast<uint32_t>(count);
    pairs.append(id, key);
    note_hash(id, h);
    index.put(pos, h, id);  // the children's insertions touched only their own tables: `pos` is still empty
    *fresh = true;
    if (index.needs_grow(++count)) index.grow(count, [this](uint32_t i) { return stored_hash(i); });
    return id;
  }
  // True if stored entry `id` of this node holds the same content as the prepared row.
  bool equal(uint32_t id, const uint64_t* prep) const {
    if (leaf) return leaf_equal(id, prep + prep_offset);
    uint32_t l, r;
    decode(id, &l, &r);
    return left->equal(l, prep) && right->equal(r, prep);
  }
  bool inner_find(const uint64_t* prep, const uint64_t* hs, uint32_t* id) const {
    uint64_t pos;
    return index.find(hs[hid], [&](uint32_t i) { return equal(i, prep); }, &pos, id);
  }

  // ---- either
  // The batch pipeline's first stage for a key with content hash h: its index slot.
  void prefetch_slot(uint64_t h) const { index.prefetch(h); }
  // The content hash of every node of this subtree, from the prepared row, into hs[hid].
  void hashes(const uint64_t* prep, uint64_t* hs) const {
    if (leaf) {
      hs[hid] = leaf_hash(prep);
      return;
    }
    left->hashes(prep, hs);
    right->hashes(prep, hs);
    hs[hid] = combine(hs[left->hid], hs[right->hid]);
  }
  // The same hash, recomputed from stored row `id` (for growing the index).
  uint64_t stored_hash(uint32_t id) const {
    if (leaf) {
      uint64_t r[2];
      read(id, r);
      return hash_words(r, prep_words);
    }
    uint32_t l, r;
    decode(id, &l, &r);
    return combine(left->up(l), right->up(r));
  }
  uint32_t insert(const uint64_t* prep, const uint64_t* hs, bool* fresh, uint64_t max = kMaxStates) {
    return leaf ? leaf_insert(prep, hs[hid], fresh, max) : inner_insert(prep, hs, fresh, max);
  }
  bool find(const uint64_t* prep, const uint64_t* hs, uint32_t* id) const {
    return leaf ? leaf_find(prep, hs[hid], id) : inner_find(prep, hs, id);
  }
  void load(uint32_t id, uint64_t* out) const {
    if (leaf) {
      unpack(id, out);
      return;
    }
    uint32_t l, r;
    decode(id, &l, &r);
    left->load(l, out);
    right->load(r, out);
  }
  uint64_t bytes() const {
    return index.bytes() + ups.bytes() + (leaf ? rows.bytes() : pairs.bytes() + left->bytes() + right->bytes());
  }
};

namespace {

// Words [a, b) of the state: one leaf if they fit kLeafBits (or are a single word), else split at the middle word.
// `table`: the first capacity of every node's index.
std::unique_ptr<StateStore::Node> build(const std::vector<int>& bits, int a, int b, uint64_t table, int* prep_words,
                                        std::vector<const StateStore::Node*>* nodes) {
  auto n = std::make_unique<StateStore::Node>(table);
  n->hid = static_cast<int>(nodes->size());
  nodes->push_back(n.get());
  int total = 0;
  for (int w = a; w < b; ++w) total += bits[w];
  if (total <= kLeafBits || b - a == 1) {
    n->leaf = true;
    n->first_word = a;
    n->word_bits.assign(bits.begin() + a, bits.begin() + b);
    n->prep_offset = *prep_words;
    n->prep_words = (total + 63) / 64;
    *prep_words += n->prep_words;
    int row_bytes = (total + 7) / 8;
    n->rows = Rows(row_bytes);
    n->last_mask = low_mask(8 * (row_bytes - 8 * (n->prep_words - 1)));
    return n;
  }
  int mid = (a + b) / 2;
  n->leaf = false;
  n->left = build(bits, a, mid, table, prep_words, nodes);
  n->right = build(bits, mid, b, table, prep_words, nodes);
  n->left->keep_up = n->right->keep_up = true;
  return n;
}

}  // namespace

StateStore::StateStore(const std::vector<int>& word_bits, uint64_t max_states, int partitions)
    : max_states_(std::min(max_states, kMaxStates)) {
  if (partitions < 1) throw std::invalid_argument("StateStore: partitions must be >= 1");
  std::vector<int> bits = word_bits;
  for (int& b : bits) b = std::clamp(b, 1, 64);  // an all-constant word still takes a bit; keeps rows non-empty
  if (bits.empty()) bits.push_back(1);
  words_ = static_cast<int>(word_bits.size());
  std::vector<const Node*> nodes;
  // A partition's indexes start smaller (see the constructor's contract).
  const uint64_t table = std::max<uint64_t>(kInitialTable / static_cast<uint64_t>(partitions), kMinPartitionTable);
  root_ = build(bits, 0, static_cast<int>(bits.size()), table, &prep_words_, &nodes);
  for (const Node* n : nodes) {
    if (!n->leaf) continue;
    int pos = 0;
    for (size_t w = 0; w < n->word_bits.size(); ++w) {
      int b = n->word_bits[w], off = pos & 63;
      pieces_.push_back(Piece{n->first_word + static_cast<int>(w), n->prep_offset + (pos >> 6), off, off + b > 64,
                              low_mask(b)});
      pos += b;
    }
  }
  nodes_ = static_cast<int>(nodes.size());
  nodes_by_hid_ = nodes;
  scratch_.assign(prep_words_, 0);
  hashes_.assign(nodes_, 0);
}

StateStore::~StateStore() = default;

uint64_t StateStore::size() const { return root_->count; }
bool StateStore::tree() const { return !root_->leaf; }
int StateStore::row_bytes() const { return root_->leaf ? root_->rows.width() : (root_->pairs.bits() + 7) / 8; }

void StateStore::pack(const uint64_t* state, uint64_t* row) const {
  for (int i = 0; i < prep_words_; ++i) row[i] = 0;
  for (const Piece& p : pieces_) {
    uint64_t x = state[p.word] & p.mask;
    row[p.dst] |= x << p.shift;
    if (p.spill) row[p.dst + 1] |= x >> (64 - p.shift);
  }
}

// Runs f(hashes) with the content hash of every node of the tree for prepared row `row`, in a buffer of its own
// (thread-safe).
template <class F>
auto StateStore::with_hashes(const uint64_t* row, const F& f) const {
  constexpr int kLocal = 32;
  uint64_t local[kLocal];
  std::vector<uint64_t> big;
  uint64_t* hs = local;
  if (nodes_ > kLocal) {
    big.resize(nodes_);
    hs = big.data();
  }
  root_->hashes(row, hs);
  return f(hs);
}

uint64_t StateStore::prepare(const uint64_t* state, uint64_t* row) const {
  pack(state, row);
  if (root_->leaf) return root_->leaf_hash(row);
  return with_hashes(row, [](const uint64_t* hs) { return hs[0]; });
}

bool StateStore::contains_prepared(const uint64_t* row, uint64_t h) const {
  uint32_t id;
  if (root_->leaf) return root_->leaf_find(row, h, &id);
  return with_hashes(row, [&](const uint64_t* hs) { return root_->inner_find(row, hs, &id); });
}

std::pair<uint32_t, bool> StateStore::insert_hashed(const uint64_t* row, const uint64_t* hs, uint32_t predecessor) {
  bool fresh;
  uint32_t id = root_->insert(row, hs, &fresh, max_states_);
  if (fresh) {
    if ((id & kChunkMask) == 0) pred_.emplace_back(new uint32_t[kChunkRows]);
    pred_.back()[id & kChunkMask] = predecessor;
  }
  return {id, fresh};
}

std::pair<uint32_t, bool> StateStore::insert_prepared(const uint64_t* row, uint64_t h, uint32_t predecessor) {
  if (root_->leaf) return insert_hashed(row, &h, predecessor);
  root_->hashes(row, hashes_.data());
  return insert_hashed(row, hashes_.data(), predecessor);
}

std::pair<uint32_t, bool> StateStore::insert(const uint64_t* state, uint32_t predecessor) {
  uint64_t* row = scratch_.data();
  pack(state, row);
  // A tree's node hashes are computed by insert_prepared itself; only a flat store uses `h`.
  return insert_prepared(row, root_->leaf ? root_->leaf_hash(row) : 0, predecessor);
}

void StateStore::stage(const uint64_t* states, size_t stride, int n) {
  const size_t need_rows = static_cast<size_t>(n) * prep_words_, need_hashes = static_cast<size_t>(n) * nodes_;
  if (staged_rows_.size() < need_rows) staged_rows_.resize(need_rows);
  if (staged_hashes_.size() < need_hashes) staged_hashes_.resize(need_hashes);
  for (int i = 0; i < n; ++i) {
    uint64_t* row = &staged_rows_[static_cast<size_t>(i) * prep_words_];
    uint64_t* hs = &staged_hashes_[static_cast<size_t>(i) * nodes_];
    pack(states + static_cast<size_t>(i) * stride, row);
    root_->hashes(row, hs);
  }
  staged_ = n;
  for (int i = 0; i < n && i < kPrefetchAhead; ++i) prefetch_staged(i);
}

void StateStore::prefetch_staged(int i) const {
  const uint64_t* hs = &staged_hashes_[static_cast<size_t>(i) * nodes_];
  for (int k = 0; k < nodes_; ++k) nodes_by_hid_[k]->prefetch_slot(hs[k]);
}

void StateStore::insert_batch(const uint64_t* states, size_t stride, const uint32_t* preds, int n,
                              std::pair<uint32_t, bool>* out) {
  stage(states, stride, n);
  for (int i = 0; i < n; ++i) out[i] = insert_staged(i, preds[i]);
}

bool StateStore::contains(const uint64_t* state) const {
  return contains_prepared(scratch_.data(), prepare(state, scratch_.data()));
}

void StateStore::load(uint32_t id, uint64_t* out) const { root_->load(id, out); }

uint64_t StateStore::bytes() const { return root_->bytes() + pred_.size() * kChunkRows * sizeof(uint32_t); }

// Within 256 insertions (each adds at most one entry to every node): an index of capacity >= 640 grows at most once,
// by 1.5x (a grown table takes 0.4x its old capacity, >= 256 entries, to grow again), and a smaller one (a partition's
// first tables) ends below 2^12 slots, 16 KiB, whatever it does; a row
// array (rows, pairs, ups) doubles its first chunk at most once (256 -> 512 takes 256 insertions) or adds at most one
// chunk of 2^14 rows of at most 16, 8 and 4 bytes; the links add at most one chunk. An inner node's pairs widen at
// most 2x while it holds >= 2^16 rows (its id widths then total >= 16 bits, a child of >= 256 entries widens by at
// most 1 bit and a smaller one, at most one of the two, by at most 10); with fewer rows they take < 2^17 * 8 bytes.
// So everything at most doubles, plus 2 MiB per node and for the links.
uint64_t StateStore::index_capacity() const { return root_->index.capacity(); }

void StateStore::reserve(uint64_t n) {
  Node& r = *root_;
  const uint64_t cap = r.index.capacity_for(n);
  if (cap != r.index.capacity()) r.index.grow_to(cap, r.count, [&r](uint32_t i) { return r.stored_hash(i); });
}

uint64_t StateStore::bytes_bound(int more) const {
  if (more <= 0) return bytes();
  if (more > kBoundInsertions) throw std::invalid_argument("StateStore::bytes_bound: more than kBoundInsertions");
  return 2 * bytes() + static_cast<uint64_t>(nodes_ + 1) * (uint64_t{2} << 20);
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
