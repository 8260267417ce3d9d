// ModelSystem: a compiled model (model.h) as a TransitionSystem (transition_system.h). Engines see it only through
// that interface; the trace, the gate, the Z3 engine's replays and the CLI use the extras below (describe, the
// layout, process_enabled, the reference path for tests).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checker/model/eval.h"
#include "checker/model/model.h"
#include "checker/model/simplify.h"
#include "checker/model/state_layout.h"
#include "checker/model/transition_system.h"

namespace qpcheck::model {
// What one action did, for traces.
struct ActionInfo {
  bool is_rule = false;
  std::string actor;                  // "client", "phil[3]", "deliver(ACTIVE)"
  Span span;                          // the statement or rule
  std::string pc_before;              // process: where it stood ("wakeup", "line 12")
  std::string verbs;                  // rule: its verbs label, if any
};

// Bounds on building a ModelSystem, i.e. on specialising its actions (Simplifier): the specialised program holds at
// most about `max_bytes` (0: no bound; past it calls stay calls and loops stay loops: same semantics, slower), and
// once `deadline` has passed the remaining actions are not specialised at all (the search that follows then stops at
// its time limit). Neither ever fails the build.
struct BuildLimits {
  uint64_t max_bytes = uint64_t{64} << 20;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  const std::atomic<bool>* interrupt = nullptr;  // like `deadline`, once it reads true
};

// The compiled model as a transition system.
class ModelSystem : public TransitionSystem {
 public:
  explicit ModelSystem(const Model& model, BuildLimits limits = {});

  int state_words() const override { return layout_.words(); }
  std::vector<std::vector<uint64_t>> initial_states() override;
  int successors(const uint64_t* state, SuccessorSink& sink) override;
  std::optional<Violation> check_invariants(const uint64_t* state) override;
  // Evaluates only the invariants' top-level conjuncts (after specialisation: an unrolled forall is one conjunct per
  // value) that read a slot `action` can write, in declaration and evaluation order. When the source state satisfied
  // every invariant, the other conjuncts keep their value (true, without error), so the first false or failing
  // conjunct is the one check_invariants(state) stops at: same violation, message and span.
  std::optional<Violation> check_invariants_after(uint32_t action, const uint64_t* state) override;
  bool valid_end(const uint64_t* state) override;
  // successors() computed the slow way, for tests of the fast path: each action of the original model (before
  // specialisation) run by the tree evaluator, with no prefilter, flat ops or patching. Same order and results.
  int reference_successors(const uint64_t* state, SuccessorSink& sink);
  void set_deadline(std::chrono::steady_clock::time_point deadline) override {
    machine_.deadline = deadline;
    inv_machine_.deadline = deadline;
  }
  void set_interrupt(const std::atomic<bool>* flag) override {
    machine_.interrupt = flag;
    inv_machine_.interrupt = flag;
  }
  // The specialised program (Simplifier::bytes()).
  uint64_t memory_bytes() const override { return simplifier_.bytes(); }
  std::vector<int> word_bits() const override { return layout_.word_bits(); }
  std::unique_ptr<TransitionSystem> clone() const override {
    return std::make_unique<ModelSystem>(model_, build_limits_);
  }
  // Groups from a static analysis of the slots each specialised action can touch (dynamic indexes count as the whole
  // array, calls that are not inlined as their bodies): in rdma_cm, one group per connection.
  Independence independence() const override;

  const Model& model() const { return model_; }
  const StateLayout& layout() const { return layout_; }
  uint32_t action_count() const override { return static_cast<uint32_t>(actions_.size()); }
  // Describes `action` taken from `state`; `calls` receives the procedure calls it makes (re-executed).
  ActionInfo describe(const uint64_t* state, uint32_t action, std::vector<CallRecord>* calls);
  std::vector<int64_t> unpack(const uint64_t* state) const;
  // How successors() finds candidate actions (for tests and docs): ranges of actions (a process's edges at one pc,
  // the rules) scanned by a plain prefilter loop (`plain_ranges`); in the others, groups of up to 64 actions
  // (`blocks`), those with table lookups (`keyed_blocks`), lookups in all (`keys`) and the actions some key value
  // selects (`keyed_actions`).
  struct DispatchStats {
    int plain_ranges = 0, blocks = 0, keyed_blocks = 0, keys = 0, keyed_actions = 0;
  };
  DispatchStats dispatch_stats() const;
  // Memoised ranges (see Memo below), for tests: how many, how many were switched off (too many keys), the keys
  // recorded in the others and how many of those are uncached (an error path or the machine was met).
  struct MemoStats {
    int ranges = 0, off = 0, entries = 0, uncached = 0;
  };
  MemoStats memo_stats() const;
  // Can process instance `p` take a step in `state` (a step that would fail counts as one)?
  bool process_enabled(const uint64_t* state, int p);

 private:
  struct Action {
    int process = -1;                 // process instance, or -1 for a rule
    int pc = 0;
    int edge = 0;
    int rule = -1;
    int64_t tuple = 0;                // rule parameter tuple index
  };
  // Runs `action` from machine_.state (already unpacked); returns false if disabled. Throws StepFailure.
  bool run(const Action& a);
  void bind_rule_tuple(const Rule& r, int64_t tuple);
  bool holds(const std::vector<const Expr*>& conds);
  bool holds(Machine& m, const std::vector<const Expr*>& conds);
  void build_fast();
  // Fills conjuncts_ and the per-action lists of check_invariants_after.
  void build_invariant_deps();
  // The violation of invariant `inv` when `conj`, one of its conjuncts, is false (nullopt if it holds) in
  // inv_machine_.state.
  std::optional<Violation> check_conjunct(int inv, const Expr* conj);

  // A condition in a quick form: `state[slot] <cmp> k`, `state[slot] == k || state[slot] == k2`, `contains(q, k)`
  // of a static queue of scalars (slot = its length), `state[slot] - state[slot2] <cmp> k`, `head(q) <cmp> k`
  // (statement conditions only: the caller checks q is not empty first), or a general expression.
  struct Test {
    enum class Kind : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kEq2, kContains, kDiff, kHead, kGeneral };
    Kind kind = Kind::kGeneral;
    Kind cmp = Kind::kEq;             // kDiff, kHead: the comparison (kEq..kGe)
    int32_t slot = 0, slot2 = 0;
    int64_t k = 0, k2 = 0;
    StateLayout::Position pos;        // where `slot` lies in the packed state
    const Expr* e = nullptr;
  };
  static bool compare(Test::Kind cmp, int64_t v, int64_t k) {
    switch (cmp) {
      case Test::Kind::kEq: return v == k;
      case Test::Kind::kNe: return v != k;
      case Test::Kind::kLt: return v < k;
      case Test::Kind::kLe: return v <= k;
      case Test::Kind::kGt: return v > k;
      case Test::Kind::kGe: return v >= k;
      default: return true;
    }
  }
  // A statement of a specialised body in a flat form (a small register-free code), run by run_ops(): the common
  // shapes get a direct form; anything else (and every error path) runs the original statement on the tree evaluator,
  // from the same state, so results, messages and spans are those of Machine::exec.
  struct Instr {
    enum class Kind : uint8_t {
      kSet,      // state[slot] = k (k in the slot's range)
      kAdd,      // state[slot] = state[src] + k, checked against lo..hi
      kPush,     // push(q, k): q's length slot `slot`, capacity `hi`, scalar elements, k in the element range
      kPop,      // pop(q): length slot `slot`, scalar elements reset to `lo`
      kClear,    // clear(q): length slot `slot`, capacity `hi`, scalar elements reset to `lo`
      kAssert,   // assert `test` (statement `s` throws when it is false)
      kRequire,  // require `test`: the step is disabled when false
      kIf,       // if `test` is false, continue at `jump`
      kJump,     // continue at `jump`
      kStmt,     // Machine::exec_stmt(s)
    } kind = Kind::kStmt;
    int32_t slot = 0, src = 0;
    int32_t jump = 0;
    int64_t k = 0, lo = 0, hi = 0;
    Test test;
    const Stmt* s = nullptr;
  };
  // Appends `body` compiled to ops.
  void compile_ops(const std::vector<const Stmt*>& body, std::vector<Instr>& out);
  // Runs ops on machine_.state like Machine::exec(body): false if a `require` failed; throws StepFailure.
  bool run_ops(const std::vector<Instr>& ops);
  bool test(const Test& t) {
    // head() of an empty queue: the tree raises the runtime error
    if (t.kind == Test::Kind::kGeneral || (t.kind == Test::Kind::kHead && machine_.state[t.slot] == 0)) {
      return machine_.eval(t.e) != 0;
    }
    return quick(t, machine_.state.data());
  }
  // make_test, plus head(q) <cmp> k (statements only).
  Test make_op_test(const Expr* e) const;
  void locate(Test& t) const { t.pos = layout_.position(t.slot); }
  static Test make_test(const Expr* e);
  // An action specialised by Simplifier (instance and rule parameters folded in): what successors() runs.
  struct Fast {
    std::vector<Test> conds;          // edge conditions and guard (conjunctions split), all must hold, in order
    std::vector<const Stmt*> body;
    std::vector<Instr> ops;              // body compiled
    // When every write of the body is a constant (and nothing can fail or be disabled): the successor is the packed
    // source with these words patched (word, bits to clear, bits to set), pc included; the machine is not used.
    struct Patch {
      int word;
      uint64_t clear, bits;
    };
    bool constant = false;
    // Every condition is quick and every op a direct form (no general expression, no tree statement, no frame): the
    // action can run on the packed state itself (run_hot), without unpacking.
    bool packed = false;
    std::vector<Patch> patch;
    int pc_slot = -1;                 // process steps: the program counter to set to next_pc
    int next_pc = 0;
    int rule = -1;                    // >= 0: rule parameters must be bound at run time (not specialised)
    int64_t tuple = 0;
    bool never = false;               // a condition is constantly false
    bool prefiltered = false;         // conds[0] is quick: successors() tested it already
  };
  // Do f's conditions hold in machine_.state? Throws StepFailure (a runtime error in a guard).
  bool conds_hold(const Fast& f);
  static bool quick(const Test& t, const int64_t* st) {
    switch (t.kind) {
      case Test::Kind::kEq: return st[t.slot] == t.k;
      case Test::Kind::kNe: return st[t.slot] != t.k;
      case Test::Kind::kLt: return st[t.slot] < t.k;
      case Test::Kind::kLe: return st[t.slot] <= t.k;
      case Test::Kind::kGt: return st[t.slot] > t.k;
      case Test::Kind::kGe: return st[t.slot] >= t.k;
      case Test::Kind::kEq2: return st[t.slot] == t.k || st[t.slot] == t.k2;
      case Test::Kind::kDiff: return compare(t.cmp, st[t.slot] - st[t.slot2], t.k);
      case Test::Kind::kHead: return compare(t.cmp, st[t.slot + 1], t.k);
      case Test::Kind::kContains: {
        const int64_t* q = st + t.slot;
        for (int64_t i = 0; i < q[0]; ++i) {
          if (q[1 + i] == t.k) return true;
        }
        return false;
      }
      default: return true;
    }
  }
  // quick() on the packed state `w`.
  [[gnu::always_inline]] bool quick_packed(const Test& t, const uint64_t* w) const {
    const int64_t v = static_cast<int64_t>((w[t.pos.word] >> t.pos.shift) & t.pos.mask) + t.pos.lo;
    switch (t.kind) {
      case Test::Kind::kEq: return v == t.k;
      case Test::Kind::kNe: return v != t.k;
      case Test::Kind::kLt: return v < t.k;
      case Test::Kind::kLe: return v <= t.k;
      case Test::Kind::kGt: return v > t.k;
      case Test::Kind::kGe: return v >= t.k;
      case Test::Kind::kEq2: return v == t.k || v == t.k2;
      case Test::Kind::kDiff: return compare(t.cmp, v - layout_.get(w, t.slot2), t.k);
      case Test::Kind::kHead: return compare(t.cmp, layout_.get(w, t.slot + 1), t.k);
      case Test::Kind::kContains: {
        for (int64_t i = 0; i < v; ++i) {
          if (layout_.get(w, t.slot + 1 + static_cast<int>(i)) == t.k) return true;
        }
        return false;
      }
      default: return true;
    }
  }
  // successors()'s per-action code in resolved form (built from Fast once): every field position looked up, tests in
  // raw form, consecutive constant writes merged into word patches, so the hot loop reads one contiguous record per
  // action and never consults the layout for these.
  // A test on the packed state: ((w[word] >> shift) & mask) - a <= span (unsigned), negated if `neg` -- every
  // `slot <cmp> k` (the value interval mapped to raw bits, clamped to the field); other forms (generic >= 0) are
  // quick_packed(raw_generic_[generic]).
  struct RawTest {
    uint32_t word = 0, shift = 0;
    uint64_t mask = 0, a = 0, span = 0;
    bool neg = false;
    int32_t generic = -1;
  };
  RawTest raw_test_of(const Test& t);
  [[gnu::always_inline]] bool raw_test(const RawTest& t, const uint64_t* w) const {
    if (t.generic >= 0) [[unlikely]] return quick_packed(raw_generic_[t.generic], w);
    return ((((w[t.word] >> t.shift) & t.mask) - t.a) <= t.span) != t.neg;
  }
  // head(q) of an empty queue in a generic test: an error path, left to the machine.
  bool raw_empty_head(const RawTest& t, const uint64_t* w) const {
    if (t.generic < 0) return false;
    const Test& g = raw_generic_[t.generic];
    return g.kind == Test::Kind::kHead && layout_.get(w, g.slot) == 0;
  }
  // An op of a packed action, resolved: kPatch w[word] = (w[word] & ~clear) | bits (one or more consecutive constant
  // writes, the pc update included); kAdd dst = src + k checked against lo..hi; queue ops and tests as Instr.
  struct HotOp {
    enum class Kind : uint8_t { kPatch, kAdd, kPush, kPop, kClear, kAssert, kRequire, kIf, kJump } kind = Kind::kPatch;
    uint32_t word = 0;
    int32_t slot = 0, jump = 0;
    uint64_t clear = 0, bits = 0;
    StateLayout::Position src, dst;
    int64_t k = 0, lo = 0, hi = 0;
    uint32_t queue = 0;               // queue ops: hot_pos_[queue..] is where its length and elements 0.. lie
    RawTest test;
  };
  std::vector<StateLayout::Position> hot_pos_;
  static int64_t pget(const uint64_t* w, const StateLayout::Position& p) {
    return static_cast<int64_t>((w[p.word] >> p.shift) & p.mask) + p.lo;
  }
  static void pset(uint64_t* w, const StateLayout::Position& p, int64_t v) {
    const uint64_t m = p.mask << p.shift;
    w[p.word] = (w[p.word] & ~m) | ((static_cast<uint64_t>(v - p.lo) << p.shift) & m);
  }
  struct Hot {
    // kPatch: constant writes (ops are kPatch only); kOps: run_hot; kMachine: not packed, the machine runs it
    enum class Kind : uint8_t { kPatch, kOps, kMachine } kind = Kind::kMachine;
    uint32_t test_begin = 0, test_end = 0;  // hot_tests_: the conditions after the prefilter
    uint32_t op_begin = 0, op_end = 0;      // hot_ops_
    uint64_t words = 0;                     // bit w: word w may be written (restored from the source afterwards)
  };
  void build_hot();
  std::vector<Hot> hot_;              // per action
  std::vector<RawTest> hot_tests_;
  std::vector<HotOp> hot_ops_;
  std::vector<Test> raw_generic_;
  bool restore_all_ = false;          // more than 64 words: restore every word
  std::vector<uint64_t> work_;        // successors(): the source, patched per action and restored
  // The machine path of successors() for action `id` (not packed, or an error path of a packed one).
  void attempt_machine(uint32_t id, const uint64_t* src, SuccessorSink& sink, int& enabled, bool& unpacked);
  enum class PackedRun { kDisabled, kDone, kSlow };
  // Runs a kOps action's ops (its pc update included) on `w`, a copy of the source. kSlow: an error path was met
  // (overflow, range, queue full or empty, false assert): `w` is garbage (restore it) and the action must be rerun
  // on the machine.
  PackedRun run_hot(const Hot& h, uint64_t* w) const;
  std::vector<int32_t> proc_pc_slot_;                 // per process
  std::vector<uint32_t> proc_range_base_;             // per process: index in pc_range_ of its pc 0
  // Actions first..end-1 (a process's edges at one pc, or all rule instances) and their dispatch blocks
  // blocks_[block_begin..block_end); no blocks: a plain loop over the actions with prefilter() (no table would save a
  // test, e.g. one edge per pc).
  struct Range {
    uint32_t first = 0, end = 0, block_begin = 0, block_end = 0;
    int32_t memo = -1;                // index in memos_, or -1
  };
  // Memoised ranges. When every action of a range is packed (kPatch or kOps), what the range reports from a state
  // -- which actions have a successor, in which order, and the successor's bits in the words they can write -- is a
  // function of the bits those actions read or write (`key`): the successor is the source with its `out` bits
  // replaced, since an action writes nothing else and computes what it writes from what it reads. So the first
  // state with a given key runs the range normally and records that; later states with the same key apply the
  // recorded bits. A key whose run met an error path or the machine is recorded as uncached (run every time). At
  // most kMaxMemoEntries keys per range and kMaxMemoArenaWords words in all; beyond that the memo is switched off (a
  // range whose key takes too many values, e.g. a process reading a large shared array, costs one failed lookup per
  // key until then).
  struct Memo {
    // read on every visit
    uint32_t nk = 0;                  // key words (at most kMaxMemoWords)
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
  static constexpr int kMaxMemoWords = 8;
  static constexpr uint32_t kMaxMemoEntries = 4096;
  // All memos' arenas together hold at most this many words (16 MiB); a range whose next record would exceed it is
  // switched off, so a model with many memoised ranges cannot grow without bound.
  static constexpr size_t kMaxMemoArenaWords = size_t{1} << 21;
  size_t memo_words_ = 0;
  std::vector<Memo> memos_;
  void build_memos();
  // Bits of the packed state a test reads (ORed into `bits`, one word per state word).
  void test_bits(const Test& t, std::vector<uint64_t>& bits) const;
  static uint64_t memo_hash(const uint64_t* key, size_t n) {
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
  void memo_insert(Memo& m, const uint64_t* key, bool cached);
  // While a memoised range runs on a key not seen yet: what it reports (ids, out bits); rec_ok_ false once an error
  // path or the machine was met.
  Memo* rec_memo_ = nullptr;
  bool rec_ok_ = true;
  std::vector<uint64_t> rec_;         // the successors' part of the record being made (see Memo::arena)
  uint32_t rec_n_ = 0;                // successors in it
  std::vector<Range> pc_range_;       // per (process, pc)
  Range rule_range_;
  // The prefilter of one action in raw form: kEqRaw: (w[word] & mask) == value; kNeRaw: !=; kTest: quick_packed(
  // first_test_[id]). Equality tests against a constant, the commonest guards, become one load, and and compare.
  struct Prefilter {
    enum class Kind : uint8_t { kEqRaw, kNeRaw, kTest } kind = Kind::kTest;
    uint32_t word = 0;
    uint64_t mask = 0, value = 0;
  };
  [[gnu::always_inline]] bool prefilter(uint32_t id, const uint64_t* w) const {
    const Prefilter& p = prefilter_[id];
    switch (p.kind) {
      case Prefilter::Kind::kEqRaw: return (w[p.word] & p.mask) == p.value;
      case Prefilter::Kind::kNeRaw: return (w[p.word] & p.mask) != p.value;
      default: return quick_packed(first_test_[id], w);
    }
  }
  std::vector<Prefilter> prefilter_;  // per action
  // Dispatch of up to 64 consecutive actions (a process's edges at one pc, or rule instances): an action whose
  // prefilter reads only a few adjacent bits of one word (a key: one field, or neighbouring fields, e.g. a queue's
  // length and element) is found by one table lookup per key, table[raw bits] = the actions whose prefilter accepts
  // those bits (computed with prefilter() itself, so the result is the same); the other actions are prefiltered one
  // by one (`test`). Candidates are visited in bit (= id = declaration) order; actions never enabled are left out.
  struct DispatchKey {
    uint32_t word = 0, shift = 0;
    uint64_t mask = 0;
    uint32_t table = 0;               // index in key_table_ of raw value 0
  };
  struct Block {
    uint32_t first = 0, count = 0;    // actions first..first+count-1 (count <= 64)
    uint32_t key_begin = 0, key_end = 0;  // keys_; none: a plain loop over the actions with prefilter()
    uint64_t test = 0;                // bit i: action first+i is a candidate, tested with prefilter()
  };
  static constexpr int kMaxKeyBits = 6;
  // Builds the blocks of r's actions (ids in enumeration order) into blocks_, or none.
  void build_blocks(Range& r);
  [[gnu::always_inline]] uint64_t candidates(const Block& b, const uint64_t* w) const {
    uint64_t c = b.test;
    for (uint32_t k = b.key_begin; k < b.key_end; ++k) {
      const DispatchKey& d = keys_[k];
      c |= key_table_[d.table + ((w[d.word] >> d.shift) & d.mask)];
    }
    return c;
  }
  std::vector<DispatchKey> keys_;
  std::vector<uint64_t> key_table_;
  std::vector<Block> blocks_;
  std::vector<Test> first_test_;      // per action: its first condition if quick (else kGeneral), for a prefilter

  const Model& model_;
  StateLayout layout_;
  BuildLimits build_limits_;
  Machine machine_;
  Machine inv_machine_;               // invariants and end conditions (called from inside successors' sink)
  Simplifier simplifier_;
  std::vector<Fast> fast_;            // per action id
  std::vector<const Expr*> fast_invariants_;
  struct Conjunct {
    int invariant;                    // index in model_.invariants
    const Expr* e;
  };
  std::vector<Conjunct> conjuncts_;   // every invariant's top-level conjuncts, in evaluation order
  // A conjunct in a quick form: and/or/not/implies over quick tests (make_test's forms, which cannot fail), evaluated
  // on the packed state without unpacking or the tree evaluator. Nodes in qnodes_; per conjunct its root, or -1.
  struct QNode {
    enum class Kind : uint8_t { kTest, kConst, kNot, kAnd, kOr, kImplies } kind = Kind::kConst;
    bool value = false;               // kConst
    int32_t a = -1, b = -1;           // operands (node indexes)
    Test t;                           // kTest, located
  };
  std::vector<QNode> qnodes_;
  // Per conjunct: its quick form (root node, or -1) and, when every field it reads lies in bits [shift, shift + 12)
  // of one word, its truth table: bit raw of qtable_[table..] is its value when those bits hold raw.
  struct QuickConj {
    int32_t root = -1;
    bool tabled = false;
    uint32_t word = 0, shift = 0;
    uint64_t mask = 0;
    uint32_t table = 0;               // index in qtable_ (64 raw values per entry)
  };
  static constexpr int kMaxTableBits = 12;
  std::vector<QuickConj> conj_quick_;  // per conjunct
  std::vector<uint64_t> qtable_;
  // Fills conj_quick_[c].tabled, word, shift, mask and table, when the conjunct's fields are close enough.
  void tabulate(QuickConj& q);
  bool conj_holds(const QuickConj& q, const uint64_t* w) const {
    if (q.tabled) {
      const uint64_t raw = (w[q.word] >> q.shift) & q.mask;
      return (qtable_[q.table + (raw >> 6)] >> (raw & 63)) & 1;
    }
    return eval_quick(q.root, w);
  }
  // The quick form of `e` (appended to qnodes_), or -1 if some part of it is not quick.
  int32_t compile_quick(const Expr* e);
  bool eval_quick(int32_t node, const uint64_t* w) const {
    const QNode& q = qnodes_[node];
    switch (q.kind) {
      case QNode::Kind::kTest: return quick_packed(q.t, w);
      case QNode::Kind::kConst: return q.value;
      case QNode::Kind::kNot: return !eval_quick(q.a, w);
      case QNode::Kind::kAnd: return eval_quick(q.a, w) && eval_quick(q.b, w);
      case QNode::Kind::kOr: return eval_quick(q.a, w) || eval_quick(q.b, w);
      case QNode::Kind::kImplies: return !eval_quick(q.a, w) || eval_quick(q.b, w);
    }
    return true;
  }
  // Per action (CSR, after_begin_[id]..after_begin_[id + 1]): the conjuncts (ascending) that read a slot it can
  // write, and the slots the non-quick ones among them read (the only ones unpacked). after_full_[id]: footprint
  // unknown, check all.
  std::vector<uint32_t> after_begin_, after_conj_;
  std::vector<uint32_t> after_slot_begin_, after_slot_;
  std::vector<uint8_t> after_full_;
  std::vector<std::vector<std::vector<std::vector<const Expr*>>>> fast_end_conds_;  // [process][pc][list]
  std::vector<Action> actions_;
  std::vector<std::vector<uint32_t>> first_action_;  // [process][pc] -> id of edge 0
  std::vector<uint32_t> rule_first_action_;
  std::vector<int64_t> base_;                         // unpacked current state
  std::vector<uint64_t> packed_;
  std::vector<uint64_t> source_;                      // packed source state of successors()
};

}  // namespace qpcheck::model
