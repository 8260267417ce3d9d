// ModelSystem: a compiled model (model.h) as a TransitionSystem (transition_system.h). Engines see it only through
// that interface; the trace, the gate, the Z3 engine's replays and the CLI use the extras below (describe, the
// layout, process_enabled, the reference path for tests).
//
// successors() runs each action through the fastest tier that applies to it, and every tier computes exactly what
// the tree evaluator computes (reference_successors, checked by tests/fast_path_test.cc): specialised actions
// (specialised_action.h), slot tests (slot_condition.h), flat ops on the unpacked state (flat_ops.h), packed actions on
// the packed state (packed_action.h), dispatch tables (dispatch.h), memoised ranges (memoised_range.h); invariants
// are checked incrementally (incremental_invariants.h) and independence comes from footprints (footprints.h). Those
// headers are internal to checker/model. docs/performance.md says what each tier saves.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checker/model/dispatch.h"
#include "checker/model/eval.h"
#include "checker/model/incremental_invariants.h"
#include "checker/model/memoised_range.h"
#include "checker/model/model.h"
#include "checker/model/packed_action.h"
#include "checker/model/simplify.h"
#include "checker/model/specialised_action.h"
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
  uint32_t action_count() const override { return static_cast<uint32_t>(sites_.size()); }
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
  // Memoised ranges (memoised_range.h), for tests: how many, how many were switched off (too many keys), the keys
  // recorded in the others and how many of those are uncached (an error path or the machine was met).
  struct MemoStats {
    int ranges = 0, off = 0, entries = 0, uncached = 0;
  };
  MemoStats memo_stats() const;
  // Can process instance `p` take a step in `state` (a step that would fail counts as one)?
  bool process_enabled(const uint64_t* state, int p);
  // The value of the bool state expression `e` (an invariant's kind: no frames bound) in `state`. Throws StepFailure
  // when it cannot be evaluated (an index out of range).
  bool holds_in(const Expr* e, const uint64_t* state);
  // Who takes `action`: a process instance (rule -1) or a rule's parameter tuple (process -1; tuple numbered with
  // the last parameter varying fastest).
  struct ActionOwner {
    int process = -1;
    int rule = -1;
    int64_t tuple = 0;
  };
  ActionOwner owner(uint32_t action) const {
    const tier::ActionSite& a = sites_[action];
    return ActionOwner{a.process, a.rule, a.tuple};
  }


 private:
  // Runs `action` from machine_.state (already unpacked) on the original model; returns false if disabled. Throws
  // StepFailure.
  bool run(const tier::ActionSite& a);
  void bind_rule_tuple(const Rule& r, int64_t tuple);
  bool holds(const std::vector<const Expr*>& conds);
  bool holds(Machine& m, const std::vector<const Expr*>& conds);
  // Specialises every action and builds the tiers' tables (dispatch, packed actions, memos).
  void build_tiers();
  // The violation of invariant `inv` when `conj`, one of its conjuncts, is false (nullopt if it holds) in
  // inv_machine_.state.
  std::optional<Violation> check_conjunct(int inv, const Expr* conj);
  // Do f's conditions hold in machine_.state (after the prefilter)? Throws StepFailure (a runtime error in a guard).
  bool conds_hold(const tier::SpecialisedAction& f);
  // The machine path of successors() for action `id` (not packed, or an error path of a packed one): its successor
  // or failure, reported to `sink`; unpacks `src` into machine_.state first unless `unpacked`.
  void attempt_machine(uint32_t id, const uint64_t* src, SuccessorSink& sink, int& enabled, bool& unpacked);

  const Model& model_;
  StateLayout layout_;
  BuildLimits build_limits_;
  Machine machine_;
  Machine inv_machine_;               // invariants and end conditions (called from inside successors' sink)
  Simplifier simplifier_;
  std::vector<tier::ActionSite> sites_;              // per action id
  std::vector<tier::SpecialisedAction> specialised_;  // per action id
  std::vector<const Expr*> specialised_invariants_;  // per invariant
  std::vector<std::vector<std::vector<std::vector<const Expr*>>>> end_conds_;  // [process][pc][list], specialised
  tier::DispatchTables dispatch_;
  tier::PackedActions packed_actions_;
  tier::MemoisedRanges memos_;
  tier::IncrementalInvariants invariants_;
  std::vector<int32_t> proc_pc_slot_;                 // per process
  std::vector<uint32_t> proc_range_base_;             // per process: index in pc_range_ of its pc 0
  std::vector<tier::Range> pc_range_;                 // per (process, pc)
  tier::Range rule_range_;
  std::vector<uint64_t> work_;        // successors(): the source, patched per action and restored
  std::vector<std::vector<uint32_t>> first_action_;  // [process][pc] -> id of edge 0
  std::vector<uint32_t> rule_first_action_;
  std::vector<int64_t> base_;                         // unpacked current state
  std::vector<uint64_t> packed_;
  std::vector<uint64_t> source_;                      // packed source state of successors()
};

}  // namespace qpcheck::model
