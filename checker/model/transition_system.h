// The one narrow interface between a model and every engine (explicit explorer now; Z3, parallel later):
// a fixed-width packed state vector, the initial states, and "enumerate the enabled actions of a state and their
// successors". Engines know nothing of RDMA or of the spec language. Compare LTSmin's PINS (pins.h).
#pragma once

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
  // True when every process is terminated or at an `end` label (a state without successors is then not a deadlock).
  virtual bool valid_end(const uint64_t* state) = 0;
  // After `deadline`, calls may throw DeadlineExceeded instead of finishing a long evaluation.
  virtual void set_deadline(std::chrono::steady_clock::time_point deadline) = 0;
};

// Bit layout of a packed state: each slot stores (value - lo) in the fewest bits that hold its range.
class StateLayout {
 public:
  explicit StateLayout(const std::vector<SlotInfo>& slots);
  int words() const { return words_; }
  int bits() const { return bits_; }
  void pack(const std::vector<int64_t>& values, uint64_t* out) const;
  void unpack(const uint64_t* in, std::vector<int64_t>& values) const;

 private:
  struct Field {
    int word, shift, width;
    int64_t lo;
  };
  std::vector<Field> fields_;
  int words_ = 0;
  int bits_ = 0;
};

// What one action did, for traces.
struct ActionInfo {
  bool is_rule = false;
  std::string actor;                  // "client", "phil[3]", "deliver(ACTIVE)"
  Span span;                          // the statement or rule
  std::string pc_before;              // process: where it stood ("wakeup", "line 12")
  std::string verbs;                  // rule: its verbs label, if any
};

// The compiled model as a transition system.
class ModelSystem : public TransitionSystem {
 public:
  explicit ModelSystem(const Model& model);

  int state_words() const override { return layout_.words(); }
  std::vector<std::vector<uint64_t>> initial_states() override;
  int successors(const uint64_t* state, SuccessorSink& sink) override;
  std::optional<Violation> check_invariants(const uint64_t* state) override;
  bool valid_end(const uint64_t* state) override;
  void set_deadline(std::chrono::steady_clock::time_point deadline) override { machine_.deadline = deadline; }

  const Model& model() const { return model_; }
  const StateLayout& layout() const { return layout_; }
  uint32_t action_count() const { return static_cast<uint32_t>(actions_.size()); }
  // Describes `action` taken from `state`; `calls` receives the procedure calls it makes (re-executed).
  ActionInfo describe(const uint64_t* state, uint32_t action, std::vector<CallRecord>* calls);
  std::vector<int64_t> unpack(const uint64_t* state) const;
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

  const Model& model_;
  StateLayout layout_;
  Machine machine_;
  std::vector<Action> actions_;
  std::vector<std::vector<uint32_t>> first_action_;  // [process][pc] -> id of edge 0
  std::vector<uint32_t> rule_first_action_;
  std::vector<int64_t> base_;                         // unpacked current state
  std::vector<uint64_t> packed_;
};

}  // namespace qpcheck::model
