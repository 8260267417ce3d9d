// The explicit engine's visited set: every distinct packed state once, in insertion order, with the predecessor that
// first reached it (traces are rebuilt from these links and by re-running the predecessor's actions to find the one
// that leads to the state; compare TLC's TLCTrace). Exact storage: no state is ever lost or merged with another.
//
// Ids are dense: the n-th distinct state inserted has id n-1. Each state has one uint32 predecessor link.
//
// Layout. A packed state is cut into leaves of at most two words (128 bits); StateLayout never lets a field straddle
// a word, so each word keeps only its used bits (`word_bits`), and a leaf's row is the concatenation of those bits,
// rounded up to whole bytes.
//  - Narrow states (<= 128 used bits, e.g. the philosophers' 48): one leaf; a state's row is its packed bits.
//  - Wider states: tree compression (Laarman, van de Pol, Weber, "Parallel recursive state compression for free",
//    SPIN 2011; Blom, Lisser, van de Pol, Weber, "A database approach to distributed state space generation", 2009).
//    The words are split into two halves (recursively, until a part fits a leaf); each distinct half is stored once
//    in its own child set with its own dense ids, and a state's row is the pair (left id, right id), each trimmed to
//    the bits its child needs now, rows bit-packed back to back. When a child's count crosses a power of two the
//    parent's rows are re-encoded wider. A node's index is keyed by the hash of its content (a leaf's packed bits; an
//    inner node combines its children's hashes), not by the row bytes, so it survives re-encoding, and the root's
//    slot is known (and prefetched) before the children are looked up.
//    rdma_cm N=4 M=3 (204 bits, 3,748,096 states): 104,976 distinct left halves and 50,625 right halves, so a root
//    row is 17 + 16 = 33 bits instead of 26 bytes.
// Every set (root and children) is an open-addressing table of uint32 entries with linear probing, indexed by a
// 64-bit hash mapped onto the table by multiply-shift (any size: grows by 1.5x and stays 53-80 % full). An entry holds
// id + 1 in its low ceil(log2(capacity + 1)) bits (0 = empty) and, in the otherwise unused high bits, a tag taken
// from the hash, so most probes reject a slot without touching the stored row. Rows live in chunks of 2^14.
// The slot is taken from the hash's high bits (multiply-shift) and the tag from bits bit_width(capacity)..31, so a
// caller that partitions states by prepare()'s hash should use its lowest bits (h % shards for few shards).
// Bytes per state, all in: row bytes + 4 (link) + 4 / load (table) + the children's share (their rows, tables and
// 4 bytes per entry: the high half of its hash, so that a parent grows without re-reading child rows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace qpcheck::explore {

inline constexpr uint32_t kNoState = UINT32_MAX;

class StateStore {
 public:
  // At most this many states (the id space is uint32, and UINT32_MAX is kNoState).
  static constexpr uint64_t kMaxStates = UINT32_MAX - 2;

  // `word_bits[i]`: bits used in word i of a packed state (1..64; 0 counts as 1); words = word_bits.size(). Every
  // call that takes a state reads only the low word_bits[i] bits of word i: bits above are ignored (the parallel
  // search's messages carry the action there). `max_states` (<= kMaxStates) lowers the limit, for tests of the
  // overflow path. `partitions` (>= 1, throws std::invalid_argument otherwise): the store holds one of that many hash
  // partitions of the states (a shard of the parallel search); its indexes start at about 1/partitions of one
  // store's capacity (at least 16 slots) and grow by the same 1.5x steps, so that for a flat store, and for the root
  // and the left (routed) half of a tree store, the partitions' indexes together take about what one store's would
  // instead of each landing on the ladder on its own (docs/performance.md, "Tuning constants").
  // A tree's right half set is repeated in every partition whatever its start.
  explicit StateStore(const std::vector<int>& word_bits, uint64_t max_states = kMaxStates, int partitions = 1);
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  // Inserts `state` (words() uint64) if it is new. Returns {id, true} for a new state, {existing id, false}
  // otherwise. Throws std::length_error when a new state would exceed max_states.
  std::pair<uint32_t, bool> insert(const uint64_t* state, uint32_t predecessor);

  uint64_t size() const;
  // Grows the root's index now, if it must, so that it holds `n` states in all without growing during later
  // insertions (the children's smaller indexes still grow as they fill). Only the index's capacity changes, never an
  // id or a result; it grows by the same 1.5x steps as insertions would, so stores that reserve the same n keep the
  // same capacity. For the parallel search: every shard grows in the same round instead of one waiting for another's
  // grow at the next barrier.
  void reserve(uint64_t n);
  // Slots in the root's index (for tests and reports).
  uint64_t index_capacity() const;
  bool contains(const uint64_t* state) const;
  int scratch_words() const { return prep_words_; }

  // The same operations split for parallel callers: prepare() packs `state` into `row` (scratch_words() uint64, all
  // written: equal states give equal rows) and returns its 64-bit hash, a pure function of the state; the *_prepared
  // calls take that row and hash. contains_prepared is thread-safe while no thread inserts.
  uint64_t prepare(const uint64_t* state, uint64_t* row) const;
  bool contains_prepared(const uint64_t* row, uint64_t h) const;
  std::pair<uint32_t, bool> insert_prepared(const uint64_t* row, uint64_t h, uint32_t predecessor);
  // Batched insertion: the cache misses of many lookups overlap instead of being paid one after another (software
  // pipelined prefetching; Chen, Ailamaki, Gibbons, Mowry, "Improving hash join performance through prefetching",
  // ICDE 2004). stage() packs and hashes `n` states (state i at states + i * stride, words() uint64 each) and
  // prefetches the index slot of every node of the first kPrefetchAhead; insert_staged(i, predecessor) prefetches
  // those of state i + kPrefetchAhead, then inserts staged state i exactly as insert() would: prefetching only reads
  // the store, so ids, fresh flags and counts are those of insert() called in the same order. Call it for
  // i = 0, 1, ..., n - 1 (any order is correct; that one is pipelined). Staged states stay valid until the next
  // stage(); `states` need not outlive stage(). Throws what insert() throws.
  // Alternatives measured and rejected: docs/performance.md, "Tuning constants".
  static constexpr int kPrefetchAhead = 8;
  void stage(const uint64_t* states, size_t stride, int n);
  std::pair<uint32_t, bool> insert_staged(int i, uint32_t predecessor) {
    if (i + kPrefetchAhead < staged_) prefetch_staged(i + kPrefetchAhead);
    return insert_hashed(&staged_rows_[static_cast<size_t>(i) * prep_words_],
                         &staged_hashes_[static_cast<size_t>(i) * nodes_], predecessor);
  }
  // stage() then insert_staged() for each state in order: out[i] = what insert(state i, preds[i]) returns.
  void insert_batch(const uint64_t* states, size_t stride, const uint32_t* preds, int n,
                    std::pair<uint32_t, bool>* out);
  // Writes state `id` (words() uint64) to `out`.
  void load(uint32_t id, uint64_t* out) const;
  uint32_t predecessor(uint32_t id) const { return pred_[id >> kChunkShift][id & kChunkMask]; }
  int words() const { return words_; }
  // Bytes of one root row (the packed state; with tree compression the pair of child ids, rounded up).
  int row_bytes() const;
  // True if states are stored as trees (more than 128 used bits).
  bool tree() const;
  // Bytes held by the rows, the links and the tables of every level (allocated, not used).
  uint64_t bytes() const;
  // An upper bound on bytes() after at most `more` (<= kBoundInsertions) further insertions, of any states: a caller
  // that holds back insertions can tell that a memory limit cannot have been reached without making them.
  static constexpr int kBoundInsertions = 256;
  uint64_t bytes_bound(int more) const;

  struct Node;  // one level of the tree (defined in state_store.cc)

 private:
  static constexpr int kChunkShift = 14;
  static constexpr uint32_t kChunkMask = (1u << kChunkShift) - 1;

  // Packs `state` into the prepared row: each leaf's bits at its offset.
  void pack(const uint64_t* state, uint64_t* row) const;
  template <class F>
  auto with_hashes(const uint64_t* row, const F& f) const;
  // Inserts prepared `row` given the content hash of every node (`hs`, indexed by pre-order number).
  std::pair<uint32_t, bool> insert_hashed(const uint64_t* row, const uint64_t* hs, uint32_t predecessor);

  int words_ = 0;
  int prep_words_ = 0;
  int nodes_ = 0;                          // tree nodes (1 for a flat store)
  uint64_t max_states_;
  std::unique_ptr<Node> root_;
  // How pack() places each word of the state: row[dst] |= (state[word] & mask) << shift, spilling into row[dst + 1].
  struct Piece {
    int word, dst, shift;
    bool spill;
    uint64_t mask;
  };
  std::vector<Piece> pieces_;
  std::vector<std::unique_ptr<uint32_t[]>> pred_;
  mutable std::vector<uint64_t> scratch_;  // prepared candidate row
  std::vector<uint64_t> hashes_;           // per node, for insertions
  std::vector<const Node*> nodes_by_hid_;  // every node, by pre-order number
  // Prefetches the index slot of every node of staged state i.
  void prefetch_staged(int i) const;
  int staged_ = 0;                         // states staged by the last stage()
  std::vector<uint64_t> staged_rows_;      // stage(): prep_words_ per state
  std::vector<uint64_t> staged_hashes_;    // stage(): nodes_ per state
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
