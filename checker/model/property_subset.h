// The model seen by a subset of its properties: the one layer through which every "for these properties only" run
// goes (verify --property and a spec's `check`, the gate's per-property counterexamples, synth's per-property
// search and its re-runs of a Z3 path).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "checker/model/eval.h"
#include "checker/model/model.h"
#include "checker/model/model_system.h"

namespace qpcheck::model {

// What `system` does, seen by the properties named in `selected` (invariant, fail/assert and runtime-error property
// names, "deadlock"):
// - a failing step whose property is not selected is not reported; the step has no successor, as in the full
//   model, so the path merely ends there;
// - invariants that are not selected are not checked. When every invariant of the system's model is selected (a
//   system built from a model cut down with ScopedInvariantSubset), the system's own checks run, incremental ones
//   included; otherwise the selected invariants are evaluated in declaration order, with the constructors of
//   transition_system.h (an invariant that cannot be evaluated violates that invariant);
// - deadlock: this layer reports none itself; checks_deadlock() says whether "deadlock" is selected, for the
//   engine's option.
// Everything else (layout, limits, action numbering) is the system's. Not cloneable: a search over it runs on one
// thread. `system` must outlive the layer.
class PropertySubset : public TransitionSystem {
 public:
  PropertySubset(ModelSystem& system, const std::vector<std::string>& selected);

  bool checks_deadlock() const { return selected_.count("deadlock") > 0; }

  int state_words() const override { return system_.state_words(); }
  std::vector<std::vector<uint64_t>> initial_states() override { return system_.initial_states(); }
  int successors(const uint64_t* state, SuccessorSink& sink) override;
  std::optional<Violation> check_invariants(const uint64_t* state) override;
  std::optional<Violation> check_invariants_after(uint32_t action, const uint64_t* state) override;
  bool valid_end(const uint64_t* state) override { return system_.valid_end(state); }
  void set_deadline(std::chrono::steady_clock::time_point deadline) override;
  void set_interrupt(const std::atomic<bool>* flag) override;
  uint64_t memory_bytes() const override { return system_.memory_bytes(); }
  uint32_t action_count() const override { return system_.action_count(); }
  std::vector<int> word_bits() const override { return system_.word_bits(); }

 private:
  ModelSystem& system_;
  std::set<std::string> selected_;
  bool all_invariants_ = true;  // every invariant of model_ is selected: the system's checks serve as they are
  Machine machine_;             // evaluates the selected invariants otherwise
};

// For its lifetime, cuts `model`'s invariants down to those named in `selected` (declaration order kept), so that a
// ModelSystem built meanwhile specialises and checks only those; restores them on destruction, also when an
// exception leaves the scope.
class ScopedInvariantSubset {
 public:
  ScopedInvariantSubset(Model& model, const std::vector<std::string>& selected);
  ~ScopedInvariantSubset() { model_.invariants = std::move(all_); }
  ScopedInvariantSubset(const ScopedInvariantSubset&) = delete;
  ScopedInvariantSubset& operator=(const ScopedInvariantSubset&) = delete;

 private:
  Model& model_;
  std::vector<Invariant> all_;
};

}  // namespace qpcheck::model
