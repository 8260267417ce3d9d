// The one narrow interface between a model and every engine (explicit explorer now; Z3, parallel later):
// a fixed-width packed state vector, the initial states, and "enumerate the enabled actions of a state and their
// successors". Engines know nothing of RDMA or of the spec language. Compare LTSmin's PINS (pins.h).
// The implementation for a compiled model is ModelSystem (model_system.h); its packed state is StateLayout's
// (state_layout.h). An engine includes this header only.
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

namespace qpcheck::model {

// Why a run is a counterexample.
struct Violation {
  enum class Kind { kInvariant, kStepFailure, kDeadlock };
  Kind kind = Kind::kInvariant;
  std::string property;   // invariant name, fail/assert property, "runtime_error" or "deadlock"
  std::string message;
  Span span;              // the invariant, the failing statement, or none (deadlock)
};

// The one constructor of each kind of violation, used by every engine (explicit, Z3, synth, the gate's per-property
// runs), so that their property names and messages cannot drift apart (docs/language.md, "Properties").
// An invariant that cannot be evaluated in a state (an index out of range, ...) violates that invariant: it is not
// shown to hold there. A failing step violates its fail/assert property, or runtime_error.
Violation invariant_false(const Invariant& inv);                           // "invariant NAME is false"
Violation invariant_unevaluable(const Invariant& inv, const StepFailure& f);  // "invariant NAME cannot be evaluated: ..."
Violation step_failure(const StepFailure& f);
Violation deadlock();                                                       // property "deadlock"

// Receives what `successors` finds, in a fixed deterministic order (process instances in declaration order, their
// edges in program order, then rules in declaration order with parameter tuples in lexicographic order).
class SuccessorSink {
 public:
  virtual ~SuccessorSink() = default;
  // `state` is valid only during the call.
  virtual void successor(uint32_t action, const uint64_t* state) = 0;
  // The action is enabled but its step violates a property (fail, assert, runtime error).
  virtual void failure(uint32_t action, const Violation& violation) = 0;
};

class TransitionSystem {
 public:
  virtual ~TransitionSystem() = default;
  // 64-bit words per packed state.
  virtual int state_words() const = 0;
  virtual std::vector<std::vector<uint64_t>> initial_states() = 0;
  // Enumerates every enabled action of `state`; returns how many were enabled (successors + failures).
  virtual int successors(const uint64_t* state, SuccessorSink& sink) = 0;
  // The first invariant (declaration order) that `state` violates, if any.
  virtual std::optional<Violation> check_invariants(const uint64_t* state) = 0;
  // check_invariants for `state`, a successor reached by `action` from a state in which every invariant held: a
  // model may evaluate only what `action` can change (the invariants, or their conjuncts, that read a slot it writes).
  // Same result as check_invariants(state). Default: check_invariants(state).
  virtual std::optional<Violation> check_invariants_after(uint32_t action, const uint64_t* state) {
    (void)action;
    return check_invariants(state);
  }
  // True when every process is terminated or at an `end` label (a state without successors is then not a deadlock).
  virtual bool valid_end(const uint64_t* state) = 0;
  // After `deadline`, calls may throw DeadlineExceeded instead of finishing a long evaluation.
  virtual void set_deadline(std::chrono::steady_clock::time_point deadline) = 0;
  // Once `*flag` reads true (nullptr: never), calls may throw DeadlineExceeded instead of finishing a long
  // evaluation. The flag must outlive the system. Default: ignored (calls finish).
  virtual void set_interrupt(const std::atomic<bool>* flag) { (void)flag; }
  // Bytes the system holds besides its input model (a specialised program, caches); engines count them against
  // their memory limit. Default 0.
  virtual uint64_t memory_bytes() const { return 0; }
  // Number of distinct action ids successors() can report (ids are 0..action_count()-1); 0 if unknown.
  virtual uint32_t action_count() const { return 0; }
  // Bits used in each of the state_words() words (the rest are always 0); default: all 64.
  virtual std::vector<int> word_bits() const { return std::vector<int>(state_words(), 64); }
  // An independent copy for another thread (same model, its own evaluation state), or nullptr if not supported.
  virtual std::unique_ptr<TransitionSystem> clone() const { return nullptr; }
  // Partial-order reduction: per action id, its independence group, or empty if unknown. Actions of different groups
  // touch (read or write) disjoint state slots in every state, so they are independent and neither enables nor
  // disables the other. `visible` marks the actions that write a slot an invariant reads.
  struct Independence {
    std::vector<int> group;           // per action
    std::vector<uint8_t> visible;     // per action
    int groups = 0;
  };
  virtual Independence independence() const { return {}; }
};

// What one action does from one state (an action has at most one successor per state): its successor, the violation
// of its failing step, or neither (not enabled there).
struct ActionOutcome {
  std::optional<std::vector<uint64_t>> next;   // state_words() words
  std::optional<Violation> failure;
  bool enabled() const { return next.has_value() || failure.has_value(); }
};

// The outcome of `action` from `state`: the one helper for re-running a path action by action (the Z3
// counterexample check, synth's region check, the partial search's path rebuild). Costs one successors() call.
ActionOutcome successor_of(TransitionSystem& sys, const uint64_t* state, uint32_t action);

// How many actions are enabled in `state` (successors + failing steps), discarding what they do: 0 is a deadlock
// unless valid_end(state).
int enabled_count(TransitionSystem& sys, const uint64_t* state);

}  // namespace qpcheck::model
