// The parallel search: BFS over a hash-partitioned visited set, one shard per thread.
#include <algorithm>
#include <atomic>
#include <bit>
#include <barrier>
#include <chrono>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>

#include "checker/explore/recent_states.h"
#include "checker/explore/state_store.h"
#include "checker/explore/searcher.h"

namespace qpcheck::explore::internal {

namespace {

// Parallel BFS over a hash-partitioned visited set (Stern and Dill, "Parallelizing the Murphi verifier", CAV 1997;
// the partitioning of distributed explicit-state checkers). Shard u: a StateStore of the states whose hash maps to u,
// and the part of each BFS layer stored there; only thread u inserts into it, so the stores need no locks. Global
// state id = local id * T + shard (predecessor links hold global ids; traces are rebuilt across shards).
//
// Each BFS layer runs in rounds of two phases, each ended by a barrier.
// Expand: the round takes the layer's next Options::round_states states per thread, cut into chunks of about
// kChunkStates states; thread u's share is the u-th run of consecutive chunks. A thread claims the chunks of its
// share one at a time (a counter per share), then what is left of the others', so a thread whose share is done takes
// work that another would have waited for: the stores are read-only in this phase, so any thread may load any shard's
// states. Each successor (packed state, predecessor's global id, action, its place among the chunk's successors) goes
// to the expanding thread's outbox for the shard that owns it (the chunk records the span of its messages in each),
// unless the thread's RecentStates cache shows it as a repeat that is inserted first anyway (see expand_chunks).
// Barrier.
// A layer is expanded in the order its states were found, across shards, as one thread would: each shard records the
// place of each new state's message, and the states that chunk k of a layer found (group k of the next layer) are
// expanded in a merge of the shards' parts by place. Hashing scatters neighbouring states (the successors of one
// state, which share most of their own successors) over the shards, and expanding each shard's part of a layer on its
// own would take them apart, which costs locality in every cache the expansion uses (measured: docs/performance.md,
// "Tuning constants").
// Insert: thread u stores what the round sent to shard u, chunk by chunk in the round's order. New states get their
// invariants checked (check_invariants_after: the source passed its check) and form the shard's part of the next
// layer. Barrier.
// The decisions (failures, deadlock, max-states, layer done, limits, stop) and the next round's chunks are made in the
// barriers' completion steps, while every thread waits, so all threads agree. With max-states, a round that may reach
// the limit is inserted in the completion step, shard after shard, so the stores end at exactly max_states in all.
//
// Which thread expands a chunk does not matter: it changes only which repeats its cache drops, never the first copy of
// a state in the round's chunk order, which is what a shard inserts; the places are counted over all successors; and
// a chunk's findings are kept per shard. So ids, counts, capacities and counterexamples are the same on every run with
// the same thread count and round size (and differ from one thread's ids). A violation found while expanding layer d
// is at depth d+1 (a new state) or a step from depth d, and the layer is finished first, so the counterexample is a
// shortest one; of several, the first one found in the lowest-numbered shard is reported (a step failure belongs to
// its source's shard). A deadlock finishes its layer too (a deadlock at depth d beats anything found at d+1): the
// counts are those of one thread.
class ShardedSearch : public Searcher {
 public:
  // `workers`: T-1 clones of `sys` for threads 1..T-1 (thread 0, the caller, uses `sys`).
  ShardedSearch(model::TransitionSystem& sys, const Options& opt,
                std::vector<std::unique_ptr<model::TransitionSystem>> workers)
      : Searcher(sys, opt),
        workers_(std::move(workers)),
        threads_(static_cast<int>(workers_.size()) + 1),
        // At most 2^32 per thread: round_states_ * T must not overflow.
        round_states_(opt.round_states > 0 ? std::min<uint64_t>(opt.round_states, uint64_t{1} << 32)
                                            : kDefaultRoundStates),
        expand_barrier_(threads_, Completion{this, false}),
        insert_barrier_(threads_, Completion{this, true}) {
    const std::vector<int> bits = sys.word_bits();
    for (int t = 0; t < threads_; ++t) {
      shards_.push_back(
          std::make_unique<Shard>(bits, t == 0 ? &sys : workers_[t - 1].get(), sys.state_words(), threads_));
    }
    if (opt.limits.time_limit_seconds > 0) {
      for (auto& w : workers_) w->set_deadline(deadline());
    }
    for (auto& w : workers_) w->set_interrupt(opt.interrupt);
    if (opt.limits.max_memory_bytes) {
      for (auto& sh : shards_) {
        for (Outbox& box : sh->out) box.room = &outbox_room_;
      }
      set_outbox_room();
    }
    words_ = sys.state_words();
    // A message is the state, then (predecessor << 32 | its place among the chunk's successors); the action goes in
    // the top bits of the first state word that leaves them unused (word_bits: the store reads only the low bits), or
    // else in a word of its own. The philosophers' 48-bit states then travel in 16 bytes, not 24 (N=16, 2 threads,
    // 6 runs taking turns: 0.45-0.48 s -> 0.40-0.47 s wall, 13.4k -> 11.7k page faults); rdma_cm's in 5 words, not 6.
    const uint32_t actions = sys.action_count();
    const int action_bits = actions == 0 ? 64 : std::max(1, static_cast<int>(std::bit_width(actions - 1)));
    for (int i = 0; i < words_ && action_word_ < 0; ++i) {
      if (std::max(bits[static_cast<size_t>(i)], 1) + action_bits <= 64) {
        action_word_ = i;
        action_shift_ = 64 - action_bits;
        state_mask_ = (uint64_t{1} << action_shift_) - 1;
      }
    }
    msg_words_ = words_ + (action_word_ < 0 ? 2 : 1);
    // A tree store keeps each distinct left half (words [0, words / 2)) once per shard: routing by the left half alone
    // keeps those child sets disjoint across shards.
    route_words_ = shards_[0]->store.tree() && words_ >= 2 ? words_ / 2 : words_;
    // Largest local id whose global id local * T + shard stays below kNoState.
    max_local_ = (uint64_t{kNoState} - 1) / static_cast<uint64_t>(threads_) - 1;
    claims_ = std::make_unique<Claim[]>(static_cast<size_t>(threads_));
  }

 private:
  // Per thread. Each share is then a long run of neighbouring states for its thread's RecentStates cache, and barriers
  // are few: rdma_cm N=4 M=3, 2 threads, best of 3: 8192 1.27 s, 16384 1.23, 32768 1.19, 65536 1.18. A round's
  // messages take about 70 bytes per state there (with T = 2, 4.6 MB).
  static constexpr uint64_t kDefaultRoundStates = 1 << 15;
  // States per chunk, the unit of work a thread claims: the threads end a round's expansion within about one chunk's
  // time of each other (~0.3 ms on rdma_cm), and a chunk's successors fill its outboxes enough that their fixed costs
  // (a claim, T buffers) do not matter.
  static constexpr uint64_t kChunkStates = 512;

  // One thread's messages to one shard in a round, chunk after chunk (Chunk::sent tells them apart): uint64 words
  // appended in place. Unlike a std::vector it does not value-initialise what it appends (every word is written at
  // once) and it keeps its buffer from round to round, so after the first rounds a message is a few stores with no
  // allocation and no page faults (3-40 us each on this VM). One outbox per thread and shard, T^2 in all,
  // holds a round's messages with at most 2x slack; one per chunk and shard held them in 64 T^2 buffers, each grown
  // on its own. Cache-line aligned: the threads fill their own outboxes at once.
  class alignas(64) Outbox {
   public:
    // The bytes the search's memory limit leaves for messages, shared by all outboxes (nullptr: no limit). A growth
    // that does not fit throws MemoryLimitReached, before anything is allocated.
    std::atomic<int64_t>* room = nullptr;
    size_t size() const { return size_; }
    size_t capacity_bytes() const { return cap_ * sizeof(uint64_t); }
    const uint64_t& operator[](size_t i) const { return data_[i]; }
    void clear() { size_ = 0; }
    // Room for `n` more words at the end (uninitialised; the caller writes all of them).
    uint64_t* append(size_t n) {
      if (size_ + n > cap_) grow(size_ + n);
      uint64_t* p = data_.get() + size_;
      size_ += n;
      return p;
    }

   private:
    // realloc: glibc moves a large (mmap'd) buffer by remapping its pages (mremap) instead of copying it into fresh
    // ones; smaller ones are copied as before.
    void grow(size_t need) {
      size_t cap = std::max<size_t>({need, 2 * cap_, 1024});
      if (room != nullptr) {
        const auto more = static_cast<int64_t>((cap - cap_) * sizeof(uint64_t));
        if (room->fetch_sub(more, std::memory_order_relaxed) < more) {
          room->fetch_add(more, std::memory_order_relaxed);
          throw MemoryLimitReached{};
        }
      }
      void* d = std::realloc(data_.get(), cap * sizeof(uint64_t));
      if (d == nullptr) throw std::bad_alloc();
      (void)data_.release();
      data_.reset(static_cast<uint64_t*>(d));
      cap_ = cap;
    }
    struct Free {
      void operator()(uint64_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint64_t[], Free> data_;
    size_t size_ = 0, cap_ = 0;
  };

  // Shard u and what thread u keeps for itself (sys, transitions, fired, error, buf).
  struct alignas(64) Shard {
    Shard(const std::vector<int>& bits, model::TransitionSystem* s, int words, int threads)
        : store(bits, StateStore::kMaxStates, threads), sys(s), out(static_cast<size_t>(threads)), buf(words),
          msg_state(words) {}
    StateStore store;
    model::TransitionSystem* sys;     // thread u's
    // The next layer, as this shard stores it: its states are local ids [next_begin, store.size()); next_ends[k]:
    // the end of those that chunk k of the layer found (group k); next_place[i]: the place of state next_begin + i
    // among its chunk's messages. The same for the layer being expanded: begin, ends, place.
    uint64_t next_begin = 0, begin = 0;
    std::vector<uint64_t> next_ends, ends;
    std::vector<uint32_t> next_place, place;
    uint64_t round_new = 0;           // states the last round stored here
    std::vector<Outbox> out;          // out[u]: what thread u's expansions sent to shard u this round, chunk by chunk
    uint64_t transitions = 0;         // of the states thread u expanded (any shard's)
    uint64_t expanded = 0;            // states thread u expanded (the time limit is read every 16)
    std::vector<uint8_t> fired;       // actions thread u saw fire
    std::optional<Found> found;       // the first violation met in this shard, in its own order (global ids)
    uint32_t terminal = kNoState;     // Options::witness: the first terminal valid-end state expanded (global id)
    uint64_t terminal_depth = 0;
    std::exception_ptr error;         // what thread u threw (the search stops at the next barrier)
    std::vector<uint64_t> buf;        // thread u's copy of the state being expanded
    std::vector<uint64_t> msg_state;  // a message's state without its action bits (check_new)
    std::optional<RecentStates> recent;  // thread u's: successors it sent
  };

  // A piece of a round's expansion, and what expanding it gave. Written by the thread that claimed it, read after the
  // barrier. A chunk holds states of every shard; what it finds is kept per shard of the state it was found at, so
  // that each shard's first finding is the same however the layer is cut into chunks.
  struct alignas(64) Chunk {
    explicit Chunk(int threads) : sent(static_cast<size_t>(threads)), failure(threads), terminal(threads, kNoState) {}
    // The layer's states from group g0 at place p0 up to group g1 below place p1 (group g1 not at all if p1 = 0).
    size_t g0 = 0, g1 = 0;
    uint32_t p0 = 0, p1 = 0;
    // Its messages for shard u, in expansion order: words [sent[u].first, sent[u].second) of the outbox for u of
    // thread `by`, the thread that expanded it.
    int by = 0;
    std::vector<std::pair<size_t, size_t>> sent;
    std::vector<std::optional<Found>> failure;  // [u]: the first failing step from a state of shard u
    std::optional<Found> deadlock;    // the first deadlocked state (the chunk's expansion stops there)
    std::vector<uint32_t> terminal;   // [u], Options::witness: the first terminal valid-end state of shard u
  };

  // The barriers' completion steps (run on one thread while the others wait).
  struct Completion {
    ShardedSearch* self;
    bool insert;
    void operator()() noexcept {
      if (insert) self->after_insert();
      else self->after_expand();
    }
  };

  // What the completion steps decided, read by every thread after the barrier.
  struct Control {
    bool inserted = false;            // this round's messages were inserted in the completion (max-states)
    uint64_t reserve = 0;             // every shard's root index is grown to hold this many states first
    bool stop = false;                // leave after this round's insertion
    bool stop_now = false;            // leave without inserting (an exception while expanding)
    uint64_t depth = 0;               // the layer being expanded
    bool report = false;              // thread 0 calls Options::progress with `progress`
    model::SearchStats progress;
  };

  // The shard that owns `state` (state_words() uint64): route_owner over its first route_words_ words.
  int owner(const uint64_t* state) const { return route_owner(state, route_words_, threads_); }
  uint32_t global(uint64_t local, int shard) const {
    return static_cast<uint32_t>(local * static_cast<uint64_t>(threads_) + static_cast<uint64_t>(shard));
  }
  size_t shard_index(uint32_t g) const { return g % static_cast<uint32_t>(threads_); }
  const Shard& shard_of(uint32_t g) const { return *shards_[shard_index(g)]; }
  uint32_t local_of(uint32_t g) const { return g / static_cast<uint32_t>(threads_); }

  void search() override {
    const std::vector<std::vector<uint64_t>> inits = sys_.initial_states();
    for (auto& sh : shards_) {
      if (!inits.empty()) sh->recent.emplace(words_, inits[0].data());
    }
    uint32_t place = 0;
    for (const auto& init : inits) {
      int u = owner(init.data());
      auto [id, fresh] = shards_[u]->store.insert(init.data(), kNoState);
      if (fresh) shards_[u]->next_place.push_back(place++);
      if (fresh && !found_) {
        if (auto v = sys_.check_invariants(init.data())) found_ = Found{*v, global(id, u), kNoState};
      }
    }
    if (found_) return;  // an initial state violates an invariant
    for (auto& sh : shards_) sh->next_ends.push_back(sh->store.size());  // layer 0: as if found by one chunk
    begin_layer();
    plan_round();
    // Workers start together, once all exist: a thread that cannot be created (std::system_error) must not leave the
    // others waiting at a barrier sized for threads_ forever.
    std::atomic<int> start{0};  // 0 wait, 1 go, 2 give up
    std::vector<std::thread> pool;
    try {
      for (int t = 1; t < threads_; ++t) {
        pool.emplace_back([this, t, &start] {
          start.wait(0);
          if (start.load() == 1) work(t);
        });
      }
    } catch (const std::system_error& e) {
      start = 2;
      start.notify_all();
      for (std::thread& th : pool) th.join();
      throw std::runtime_error("cannot start " + std::to_string(threads_) + " search threads (" + e.what() +
                               "); try fewer --threads");
    }
    start = 1;
    start.notify_all();
    work(0);
    for (std::thread& th : pool) th.join();
    for (auto& sh : shards_) {
      if (sh->error) std::rethrow_exception(sh->error);
    }
    if (completion_error_) std::rethrow_exception(completion_error_);
  }

  // Runs `f` for shard `sh`, keeping what it throws for the next barrier (which then stops every thread).
  template <class F>
  void guarded(Shard& sh, F f) {
    if (sh.error) return;
    try {
      f();
    } catch (...) {
      sh.error = std::current_exception();
    }
  }

  void work(int t) {
    Shard& sh = *shards_[t];
    for (;;) {
      guarded(sh, [&] { expand_chunks(t); });
      expand_barrier_.arrive_and_wait();
      if (ctl_.stop_now) return;
      if (!ctl_.inserted) {
        guarded(sh, [&] {
          sh.store.reserve(ctl_.reserve);
          insert_inbox(t, false);
        });
      }
      insert_barrier_.arrive_and_wait();
      if (ctl_.stop) return;
      if (t == 0 && ctl_.report) opt_.progress(ctl_.progress);
    }
  }

  // Sends the successors of one expansion to the expanding thread's outboxes (the chunk records where its messages
  // are).
  struct Sender : model::SuccessorSink {
    ShardedSearch* self;
    Shard* sh;                        // the expanding thread's: outboxes, RecentStates cache, fired actions
    Chunk* chunk;
    uint32_t from;                    // global id of the state being expanded
    bool drop_repeats = true;         // the chunk comes after every chunk this thread expanded in this round
    // Successors the chunk has generated so far, sent or not: a function of the chunk's states, unlike which ones this
    // thread's cache drops, so the places, the groups and the rounds cut from them are the same on every run.
    uint32_t place = 0;
    uint64_t transitions = 0;         // added to sh->transitions at the end of the expansion
    void successor(uint32_t action, const uint64_t* state) override {
      ++transitions;
      mark(action);
      const uint32_t p = place++;
      if (sh->recent->seen_before(state) && drop_repeats) return;
      uint64_t* m = sh->out[static_cast<size_t>(self->owner(state))].append(self->msg_words_);
      for (int i = 0; i < self->words_; ++i) m[i] = state[i];
      m[self->words_] = uint64_t{from} << 32 | p;
      self->put_action(m, action);
    }
    void failure(uint32_t action, const Violation& v) override {
      ++transitions;
      mark(action);
      std::optional<Found>& f = chunk->failure[self->shard_index(from)];
      if (!f) f = Found{v, from, action};
    }
    void mark(uint32_t a) {
      if (a >= sh->fired.size()) sh->fired.resize(a + 1, 0);
      sh->fired[a] = 1;
    }
  };

  // Starts expanding the layer the shards recorded (next_* become the layer's).
  void begin_layer() {
    layer_states_ = 0;
    for (auto& sh : shards_) {
      sh->begin = sh->next_begin;
      sh->ends.swap(sh->next_ends);
      sh->place.swap(sh->next_place);
      sh->next_begin = sh->store.size();
      sh->next_ends.clear();
      sh->next_place.clear();
      layer_states_ += sh->store.size() - sh->begin;
    }
    group_ = 0;
    place_ = 0;
    planned_states_ = 0;
  }
  bool layer_planned() const { return group_ == shards_[0]->ends.size(); }
  // The first local id of group g in shard `sh` (its states are [group_begin, ends[g])).
  static uint64_t group_begin(const Shard& sh, size_t g) { return g == 0 ? sh.begin : sh.ends[g - 1]; }
  // Shard u's states of group g with a place in [lo, hi): local ids [*b, *e).
  void group_part(const Shard& sh, size_t g, uint32_t lo, uint32_t hi, uint64_t* b, uint64_t* e) const {
    const auto first = sh.place.begin() + static_cast<ptrdiff_t>(group_begin(sh, g) - sh.begin);
    const auto last = sh.place.begin() + static_cast<ptrdiff_t>(sh.ends[g] - sh.begin);
    *b = sh.begin + static_cast<uint64_t>(std::lower_bound(first, last, lo) - sh.place.begin());
    *e = sh.begin + static_cast<uint64_t>(std::lower_bound(first, last, hi) - sh.place.begin());
  }
  uint64_t group_states(size_t g, uint32_t lo, uint32_t hi) const {
    uint64_t n = 0, b, e;
    for (const auto& sh : shards_) {
      group_part(*sh, g, lo, hi, &b, &e);
      n += e - b;
    }
    return n;
  }

  // Cuts the next round out of the layer: about round_states_ states per thread, in chunks of about kChunkStates:
  // consecutive small groups, or a place range of a large one (its states with places in it are about as many as
  // the range's share of the group's places; such a range may hold no state, and its chunk is empty).
  void plan_round() {
    planned_ = 0;
    const size_t t = static_cast<size_t>(threads_);
    const size_t groups = shards_[0]->ends.size();
    const uint64_t round = round_states_ * t;
    uint64_t taken = 0;
    while (taken < round && group_ < groups) {
      if (planned_ == chunks_.size()) chunks_.push_back(std::make_unique<Chunk>(threads_));
      Chunk& c = *chunks_[planned_++];
      c.g0 = group_;
      c.p0 = place_;
      const uint64_t want = std::min(kChunkStates, round - taken);
      uint64_t n = 0;
      while (group_ < groups && n < want) {
        const uint64_t rest = group_states(group_, place_, UINT32_MAX);
        if (n + rest <= want) {  // the rest of the group fits
          n += rest;
          ++group_;
          place_ = 0;
          continue;
        }
        if (n > 0) break;  // a large group starts the next chunk
        uint32_t end = 0;  // its places run below `end`
        for (const auto& sh : shards_) {
          if (sh->ends[group_] > group_begin(*sh, group_)) {
            end = std::max(end, sh->place[sh->ends[group_] - 1 - sh->begin] + 1);
          }
        }
        const uint64_t span = (static_cast<uint64_t>(end - place_) * want + rest - 1) / rest;
        const uint32_t hi = static_cast<uint32_t>(std::min<uint64_t>(end, place_ + std::max<uint64_t>(span, 1)));
        n += group_states(group_, place_, hi);
        place_ = hi;
        if (place_ == end) {
          ++group_;
          place_ = 0;
        }
        break;
      }
      c.g1 = group_;
      c.p1 = place_;
      taken += n;
      std::fill(c.sent.begin(), c.sent.end(), std::pair<size_t, size_t>{0, 0});
      for (auto& f : c.failure) f.reset();
      c.deadlock.reset();
      std::fill(c.terminal.begin(), c.terminal.end(), kNoState);
    }
    planned_states_ += taken;
    for (size_t u = 0; u < t; ++u) {  // thread u's share: the u-th of T runs of consecutive chunks
      claims_[u].next.store(planned_ * u / t, std::memory_order_relaxed);
      claims_[u].end = planned_ * (u + 1) / t;
    }
  }

  // Thread t expands chunks of the round until none is left, with its own TransitionSystem: first its share, a run
  // of consecutive chunks (neighbouring states share successors, which its RecentStates cache then catches), then
  // what is left of the other threads' shares. The cache may drop a repeat only if the copy it recorded is inserted
  // first: shards insert in the round's chunk order, and earlier rounds are inserted already, so only while every
  // chunk this thread expanded in this round precedes the current one (a share is claimed in increasing order; a chunk
  // taken from an earlier thread's share, after its own, expands without dropping).
  void expand_chunks(int t) {
    Shard& me = *shards_[t];
    Sender sender;
    sender.self = this;
    sender.sh = &me;
    struct Count {  // also when successors() throws
      Sender& s;
      ~Count() { s.sh->transitions += s.transitions; }
    } count{sender};
    for (Outbox& box : me.out) box.clear();  // the last round's messages are inserted
    bool any = false;
    size_t latest = 0;  // the highest chunk index this thread expanded in this round
    for (int i = 0; i < threads_; ++i) {
      Claim& claim = claims_[static_cast<size_t>((t + i) % threads_)];
      for (size_t k; (k = claim.next.fetch_add(1, std::memory_order_relaxed)) < claim.end;) {
        sender.drop_repeats = !any || k > latest;
        if (sender.drop_repeats) latest = k;
        any = true;
        expand_chunk(t, *chunks_[k], sender);
      }
    }
  }
  // Expands chunk c: each group's states in the order they were found (the shards' parts merged by place).
  void expand_chunk(int by, Chunk& c, Sender& sender) {
    Shard& me = *shards_[static_cast<size_t>(by)];
    sender.chunk = &c;
    sender.place = 0;
    const size_t t = shards_.size();
    c.by = by;
    for (size_t u = 0; u < t; ++u) c.sent[u].first = me.out[u].size();
    struct Close {  // also on a deadlock's early return or an exception
      Chunk& c;
      const Shard& me;
      ~Close() {
        for (size_t u = 0; u < c.sent.size(); ++u) c.sent[u].second = me.out[u].size();
      }
    } close{c, me};
    std::vector<uint64_t> at(t), end(t);  // per shard: the group's next state and its end
    for (size_t g = c.g0; g < c.g1 || (g == c.g1 && c.p1 > 0); ++g) {
      const uint32_t lo = g == c.g0 ? c.p0 : 0, hi = g == c.g1 ? c.p1 : UINT32_MAX;
      for (size_t u = 0; u < t; ++u) group_part(*shards_[u], g, lo, hi, &at[u], &end[u]);
      for (;;) {
        size_t u = t;  // the shard whose next state came first
        uint32_t first = 0;
        for (size_t v = 0; v < t; ++v) {
          if (at[v] == end[v]) continue;
          const uint32_t p = shards_[v]->place[at[v] - shards_[v]->begin];
          if (u == t || p < first) {
            u = v;
            first = p;
          }
        }
        if (u == t) break;
        const uint64_t local = at[u]++;
        // A chunk's successors can take seconds (thousands of actions per state): the time limit and an interrupt
        // are read here too, every 16 states.
        if ((++me.expanded & 15) == 0 && must_stop()) throw model::DeadlineExceeded{};
        const StateStore& store = shards_[u]->store;
        sender.from = global(local, static_cast<int>(u));
        store.load(static_cast<uint32_t>(local), me.buf.data());
        int enabled = me.sys->successors(me.buf.data(), sender);
        if (enabled == 0 && (opt_.witness || opt_.check_deadlock)) {
          store.load(static_cast<uint32_t>(local), me.buf.data());
          bool end_state = me.sys->valid_end(me.buf.data());
          if (end_state && opt_.witness && c.terminal[u] == kNoState) c.terminal[u] = sender.from;
          if (!end_state && opt_.check_deadlock && !c.deadlock) {
            c.deadlock = Found{model::deadlock(), sender.from, kNoState};  // the search ends with its layer
          }
        }
      }
    }
  }

  // Inserts into shard u what the round's chunks sent to it, in the round's chunk order. `counted` (max-states, only
  // from a completion step, serially over the shards): stop storing at exactly max_states states in all.
  void insert_inbox(int u, bool counted) {
    Shard& sh = *shards_[u];
    const uint64_t before = sh.store.size();
    struct Count {  // also when an insertion throws
      Shard& sh;
      uint64_t before;
      ~Count() { sh.round_new = sh.store.size() - before; }
    } count{sh, before};
    for (size_t c = 0; c < planned_; ++c) {
      const Chunk& chunk = *chunks_[c];
      const auto [from, to] = chunk.sent[static_cast<size_t>(u)];
      const Outbox& out = shards_[static_cast<size_t>(chunk.by)]->out[static_cast<size_t>(u)];
      const uint64_t* box = from == to ? nullptr : &out[from];
      const size_t words = to - from;
      if (!counted) {  // in order, kInsertBatch at a time through the store's prefetch pipeline
        const size_t n = words / msg_words_;
        for (size_t i0 = 0; i0 < n; i0 += kInsertBatch) {
          const int m = static_cast<int>(std::min<size_t>(kInsertBatch, n - i0));
          const uint64_t* first = box + i0 * msg_words_;
          sh.store.stage(first, static_cast<size_t>(msg_words_), m);
          for (int k = 0; k < m; ++k) {
            const uint64_t* msg = first + static_cast<size_t>(k) * msg_words_;
            const uint64_t link = msg[words_];
            if (sh.store.size() > max_local_) throw std::length_error("state store full (2^32 states)");
            if (check_new(sh, u, sh.store.insert_staged(k, static_cast<uint32_t>(link >> 32)), msg)) {
              sh.next_place.push_back(static_cast<uint32_t>(link));
            }
          }
        }
      } else {
        for (size_t i = 0; i < words; i += msg_words_) {
          const uint64_t* msg = box + i;  // the store reads only a state word's low bits: not the action's
          const uint64_t link = msg[words_];
          if (total_ >= opt_.limits.max_states) {
            if (!sh.store.contains(msg)) limit_ = "max-states";  // the stores stay at max_states in all
            continue;
          }
          if (store_one(sh, u, msg)) {
            sh.next_place.push_back(static_cast<uint32_t>(link));
            ++total_;
          }
        }
      }
      sh.next_ends.push_back(sh.store.size());  // group c of the next layer ends here
    }
  }

  // The message layout (see the constructor): the action is written into, and read back from, the top bits of
  // action_word_ (masked, so a stray bit above word_bits cannot change it) or the word after the link.
  void put_action(uint64_t* m, uint32_t action) const {
    if (action_word_ < 0) {
      m[words_ + 1] = action;
      return;
    }
    uint64_t& w = m[action_word_];
    w = (w & state_mask_) | uint64_t{action} << action_shift_;
  }
  uint32_t message_action(const uint64_t* msg) const {
    return static_cast<uint32_t>(action_word_ < 0 ? msg[words_ + 1] : msg[action_word_] >> action_shift_);
  }
  // The state of `msg`: `msg` itself, or a copy in `buf` (words_ uint64) without the action's bits.
  const uint64_t* message_state(const uint64_t* msg, uint64_t* buf) const {
    if (action_word_ < 0) return msg;
    std::copy(msg, msg + words_, buf);
    buf[action_word_] &= state_mask_;
    return buf;
  }

  // Stores the successor message `msg` in shard u (from its own thread, or a completion step) and checks the
  // invariants of a new state. True if it was new.
  bool store_one(Shard& sh, int u, const uint64_t* msg) {
    if (sh.store.size() > max_local_) throw std::length_error("state store full (2^32 states)");
    return check_new(sh, u, sh.store.insert(msg, static_cast<uint32_t>(msg[words_] >> 32)), msg);
  }
  // After the state of message `msg` was stored in shard u with result `stored` ({local id, fresh}): checks a new
  // state's invariants.
  bool check_new(Shard& sh, int u, std::pair<uint32_t, bool> stored, const uint64_t* msg) {
    auto [id, fresh] = stored;
    if (!fresh) return false;
    if (!sh.found) {
      // The predecessor passed its check (the search stops at the first violation): check what the action changed.
      const uint64_t* state = message_state(msg, sh.msg_state.data());
      if (auto v = sh.sys->check_invariants_after(message_action(msg), state)) {
        sh.found = Found{*v, global(id, u), kNoState};
      }
    }
    return true;
  }

  uint64_t states() const {
    uint64_t n = 0;
    for (const auto& sh : shards_) n += sh->store.size();
    return n;
  }
  uint64_t store_bytes() const {
    uint64_t n = 0;
    for (const auto& sh : shards_) n += sh->store.bytes();
    return n;
  }
  // Everything the memory limit counts: the stores, every thread's system and every outbox's buffer.
  uint64_t held_bytes() const {
    uint64_t n = store_bytes();
    for (const auto& sh : shards_) {
      n += sh->sys->memory_bytes();
      for (const Outbox& box : sh->out) n += box.capacity_bytes();
    }
    return n;
  }
  // What the limit leaves for the outboxes to grow by in the next expansion (while no thread expands).
  void set_outbox_room() {
    const uint64_t held = held_bytes(), max = opt_.limits.max_memory_bytes;
    outbox_room_.store(held >= max ? 0 : static_cast<int64_t>(std::min<uint64_t>(max - held, INT64_MAX)));
  }
  // Time limit or interrupt, read between the states of an expansion (the completion steps check it too).
  bool must_stop() {
    if (interrupted()) return true;
    return opt_.limits.time_limit_seconds > 0 && std::chrono::steady_clock::now() >= deadline();
  }

  // After every round's expansion: takes the chunks' findings in the round's order and, with max-states, inserts a
  // round that may reach the limit here.
  void after_expand() {
    ctl_.inserted = false;
    for (const auto& sh : shards_) {
      if (sh->error) { ctl_.stop_now = true; return; }
    }
    try {
      uint64_t incoming = 0;
      std::vector<uint64_t> to(static_cast<size_t>(threads_), 0);  // messages per receiving shard
      for (size_t k = 0; k < planned_; ++k) {
        const Chunk& c = *chunks_[k];
        for (size_t u = 0; u < shards_.size(); ++u) {
          Shard& sh = *shards_[u];
          if (c.failure[u] && !sh.found) sh.found = c.failure[u];
          if (c.terminal[u] != kNoState && sh.terminal == kNoState) {
            sh.terminal = c.terminal[u];
            sh.terminal_depth = ctl_.depth;
          }
        }
        if (c.deadlock && !deadlock_) deadlock_ = c.deadlock;  // depth d: beats anything found at depth d+1
        for (size_t u = 0; u < c.sent.size(); ++u) to[u] += (c.sent[u].second - c.sent[u].first) / msg_words_;
      }
      // The shards' sizes differ by a fraction of a percent, but whichever index grows in a round makes the other
      // threads wait for it at the next barrier. So all grow together, in the same 1.5x steps, which keeps their
      // capacities equal: to hold the largest size any shard reaches if it stores twice as many states as in the
      // round before (a shard that stores more grows alone). Not from this round's messages: which repeats a
      // thread's cache dropped depends on who expanded what, and the capacities (and so bytes() and a max-memory
      // stop) must not.
      ctl_.reserve = 0;
      for (int u = 0; u < threads_; ++u) {
        incoming += to[static_cast<size_t>(u)];
        ctl_.reserve = std::max(ctl_.reserve, shards_[u]->store.size() + 2 * shards_[u]->round_new);
      }
      const uint64_t max = opt_.limits.max_states;
      if (max && states() + incoming > max) {  // the limit may be reached: insert here, one shard after another
        total_ = states();
        for (int u = 0; u < threads_; ++u) insert_inbox(u, true);
        ctl_.inserted = true;
        if (!limit_.empty()) ctl_.stop = true;
      }
    } catch (...) {
      completion_error_ = std::current_exception();
      ctl_.stop_now = true;
    }
  }

  // After every round's insertion: ends the layer when every frontier is done, checks the limits, and plans the next
  // round.
  void after_insert() {
    ctl_.report = false;
    for (const auto& sh : shards_) {
      if (sh->error) ctl_.stop = true;
    }
    if (ctl_.stop) return;
    try {
      if (layer_planned()) {  // and expanded and inserted: the layer is done
        bool empty = true;
        if (deadlock_) { ctl_.stop = true; return; }  // depth d: its layer is complete, it beats depth d+1
        for (const auto& sh : shards_) {
          if (sh->found) { ctl_.stop = true; return; }  // the layer that found it is complete: shortest
          empty = empty && sh->next_begin == sh->store.size();  // the next layer: what this layer's rounds stored
        }
        if (empty) { ctl_.stop = true; return; }  // every reachable state is stored and expanded
        begin_layer();
        ctl_.depth++;
        stats_.depth = ctl_.depth;
        if (opt_.limits.max_depth && ctl_.depth >= opt_.limits.max_depth) {
          limit_ = "max-depth";  // this layer is stored but not expanded
          ctl_.stop = true;
          return;
        }
      }
      const model::SearchLimits& l = opt_.limits;
      if (interrupted()) {
        limit_ = "interrupted";
        ctl_.stop = true;
        return;
      }
      if (l.max_memory_bytes && held_bytes() >= l.max_memory_bytes) {
        limit_ = "max-memory";
        ctl_.stop = true;
        return;
      }
      if (l.max_memory_bytes) set_outbox_room();
      double now = elapsed();
      if (l.time_limit_seconds > 0 && now >= l.time_limit_seconds) {
        limit_ = "time-limit";
        ctl_.stop = true;
        return;
      }
      if (opt_.progress && now >= next_progress_) {
        next_progress_ = now + 1.0;
        model::SearchStats s = stats_;
        s.states = states();
        s.seconds = now;
        s.store_bytes = store_bytes();
        s.queue = layer_states_ - planned_states_;
        for (const auto& sh : shards_) {
          s.queue += sh->store.size() - sh->next_begin;
          s.transitions += sh->transitions;
        }
        ctl_.progress = s;
        ctl_.report = true;
      }
      plan_round();
    } catch (...) {
      completion_error_ = std::current_exception();
      ctl_.stop = true;
    }
  }

  model::CheckResult finish() override {
    for (auto& sh : shards_) {
      stats_.transitions += sh->transitions;
      if (fired_.size() < sh->fired.size()) fired_.resize(sh->fired.size(), 0);
      for (size_t a = 0; a < sh->fired.size(); ++a) fired_[a] |= sh->fired[a];
    }
    if (!found_) found_ = deadlock_;
    for (size_t t = 0; t < shards_.size() && !found_; ++t) found_ = shards_[t]->found;
    uint32_t terminal = kNoState;
    uint64_t terminal_depth = 0;
    for (const auto& sh : shards_) {
      if (sh->terminal != kNoState && (terminal == kNoState || sh->terminal_depth < terminal_depth)) {
        terminal = sh->terminal;
        terminal_depth = sh->terminal_depth;
      }
    }
    close_stats(states(), store_bytes());
    return exact_result(limit_.empty(), terminal, [&](uint32_t last) {
      return rebuild_path(
          sys_, last, [&](uint32_t g, uint64_t* out) { shard_of(g).store.load(local_of(g), out); },
          [&](uint32_t g) { return shard_of(g).store.predecessor(local_of(g)); });
    });
  }

  std::vector<std::unique_ptr<model::TransitionSystem>> workers_;
  int threads_;
  uint64_t round_states_;
  std::vector<std::unique_ptr<Shard>> shards_;
  int words_ = 0;                     // uint64 per packed state
  int msg_words_ = 0;                 // uint64 per message
  int action_word_ = -1;              // the state word whose top bits carry a message's action (-1: a word of its own)
  int action_shift_ = 0;              // the action's first bit in that word
  uint64_t state_mask_ = 0;           // the bits below it
  int route_words_ = 0;               // owner() hashes the first route_words_ words of a state
  uint64_t max_local_ = 0;
  std::vector<std::unique_ptr<Chunk>> chunks_;  // the round's plan: chunks_[0, planned_)
  size_t planned_ = 0;
  // Thread u's share of the round: chunks_[next, end) are yet to be claimed (next may run past end).
  struct alignas(64) Claim {
    std::atomic<size_t> next{0};
    size_t end = 0;
  };
  std::unique_ptr<Claim[]> claims_;
  size_t group_ = 0;                  // the layer is planned up to group group_, place place_
  uint32_t place_ = 0;
  uint64_t layer_states_ = 0, planned_states_ = 0;  // states in the layer, and planned so far
  std::barrier<Completion> expand_barrier_;
  std::barrier<Completion> insert_barrier_;
  Control ctl_;                       // written only by the completion steps
  std::optional<Found> deadlock_;
  uint64_t total_ = 0;                // states stored in all, while inserting with max-states
  double next_progress_ = 1.0;        // no progress report in the first second
  std::exception_ptr completion_error_;
  std::atomic<int64_t> outbox_room_{0};  // see Outbox::room
};

}  // namespace

model::CheckResult search_sharded(model::TransitionSystem& sys, const Options& opt,
                                  std::vector<std::unique_ptr<model::TransitionSystem>> workers) {
  return ShardedSearch(sys, opt, std::move(workers)).run();
}

}  // namespace qpcheck::explore::internal
