// Symmetry reduction (docs/language.md, "Symmetry"): a model with `symmetric TYPE;` seen as a transition system over
// one representative state per orbit of the renamings of TYPE's values (Ip and Dill, "Better verification through
// symmetry", FMSD 1996; Murphi and Rumur scalarsets). The type checker has shown that the transition relation and
// every safety property are invariant under those renamings (checker/lang/typecheck_symmetry.cc), so a search over
// representatives finds a violation exactly when the full search does, at the same depth.
//
// Canonical form: each value i of the type gets a key that renaming cannot change (the slots of the one-dimensional
// classes at coordinate i, with stored values of the type replaced by "i itself" or "another"); the candidates are
// the renamings that sort the values by key, every order of equal keys included, and the representative is the
// least candidate (lexicographic over the unpacked slots). The candidates of two states of one orbit are the same
// states, so this is exact: one representative per orbit. When the equal keys allow more orders than `budget`,
// only the first (values with equal keys in their own order) is taken: still sound (a representative is a state of
// the orbit), no longer unique, and counted in over_budget().
//
// Safety only: liveness under symmetry is refused by the CLI (a lasso of representatives need not close into a
// cycle of the real system: TLC's SYMMETRY, tlaplus/tlaplus #59, #644).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "checker/model/check_result.h"
#include "checker/model/model.h"
#include "checker/model/model_system.h"
#include "checker/model/transition_system.h"

namespace qpcheck::model {

// The canonical form of a packed state (StateLayout's words). Not thread-safe: one per thread.
class Canonicaliser {
 public:
  // `budget`: at most this many candidate renamings per state (>= 1); 0: the default, 5040 (7!: exact whenever the
  // type has at most 7 values).
  // `over`: counts the states over budget (shared by the canonicalisers of a search's threads).
  Canonicaliser(const Model& model, const StateLayout& layout, uint64_t budget, std::atomic<uint64_t>* over);
  // Writes the representative of `in`'s orbit to `out` (layout.words() words; may alias `in`).
  void canonicalise(const uint64_t* in, uint64_t* out);
  // Calls of canonicalise() whose equal keys allowed more than `budget` orders (their representative may not be
  // unique); a successor generated again is counted again.
  uint64_t over_budget() const { return over_->load(std::memory_order_relaxed); }
  uint64_t budget() const { return budget_; }
  static constexpr uint64_t kDefaultBudget = 5040;

 private:
  // Applies renaming p (new value k is old value p[k]) to vals_ into cand_.
  void apply(const std::vector<int>& p);
  const Symmetry& sym_;
  const StateLayout& layout_;
  uint64_t budget_;
  int n_;
  int64_t lo_;
  size_t key_len_ = 0;                // key entries per value
  std::vector<int64_t> vals_, cand_, best_, keys_;
  std::vector<int> order_, p_, q_;
  std::vector<int> renamed_;          // slots with rename != 0
  // Per slot: its queue's length slot and its position there (SlotInfo): a renamed slot past its queue's length
  // holds the type's lowest value in every state, whatever the renaming, so it is left as it is and keys as "none".
  std::vector<int> queue_len_, queue_pos_;
  std::atomic<uint64_t>* over_;
};

// A ModelSystem whose states are representatives: initial_states() and successors() canonicalise what the model
// gives; check_invariants_after() checks every invariant (a representative differs from its source in more than
// what the action wrote); independence() is empty (no --por with symmetry). Action ids are the model's, taken from
// the representative source state.
class SymmetricSystem : public TransitionSystem {
 public:
  // `inner` must outlive this system (clones own theirs).
  SymmetricSystem(ModelSystem& inner, uint64_t budget);

  int state_words() const override { return inner_.state_words(); }
  std::vector<std::vector<uint64_t>> initial_states() override;
  int successors(const uint64_t* state, SuccessorSink& sink) override;
  std::optional<Violation> check_invariants(const uint64_t* state) override { return inner_.check_invariants(state); }
  std::optional<Violation> check_invariants_after(uint32_t, const uint64_t* state) override {
    return inner_.check_invariants(state);
  }
  bool valid_end(const uint64_t* state) override { return inner_.valid_end(state); }
  void set_deadline(std::chrono::steady_clock::time_point d) override { inner_.set_deadline(d); }
  void set_interrupt(const std::atomic<bool>* flag) override { inner_.set_interrupt(flag); }
  uint64_t memory_bytes() const override { return inner_.memory_bytes(); }
  uint32_t action_count() const override { return inner_.action_count(); }
  std::vector<int> word_bits() const override { return inner_.word_bits(); }
  std::unique_ptr<TransitionSystem> clone() const override;
  // States over budget, summed over this system and its clones.
  uint64_t over_budget() const { return canon_.over_budget(); }
  uint64_t budget() const { return canon_.budget(); }

  // The run of the model behind `r`'s path of representatives (its counterexample or witness): from the model's
  // initial state, each step takes the first action (in successors() order) whose successor has the next
  // representative, so every state and action printed or replayed is a real one. The last action of a step
  // failure is the failing action of the real last state with the same property and statement. Also closes
  // r.action_fired under renaming (an action fired when any renaming of it did). Throws std::logic_error if a step
  // cannot be matched (a broken symmetry; the type checker should have refused the spec).
  void realise(CheckResult& r);

 private:
  SymmetricSystem(std::unique_ptr<ModelSystem> owned, uint64_t budget, std::shared_ptr<std::atomic<uint64_t>> over);
  std::unique_ptr<ModelSystem> owned_;
  ModelSystem& inner_;
  std::shared_ptr<std::atomic<uint64_t>> over_;  // shared with the clones
  Canonicaliser canon_;
};

}  // namespace qpcheck::model
