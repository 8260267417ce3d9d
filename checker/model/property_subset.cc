#include "checker/model/property_subset.h"

#include <algorithm>

namespace qpcheck::model {

namespace {

// Passes on successors and the failures of selected properties.
class SelectedFailures : public SuccessorSink {
 public:
  SelectedFailures(SuccessorSink& out, const std::set<std::string>& selected) : out_(out), selected_(selected) {}
  void successor(uint32_t action, const uint64_t* state) override { out_.successor(action, state); }
  void failure(uint32_t action, const Violation& v) override {
    if (selected_.count(v.property)) out_.failure(action, v);
  }

 private:
  SuccessorSink& out_;
  const std::set<std::string>& selected_;
};

}  // namespace

PropertySubset::PropertySubset(ModelSystem& system, const std::vector<std::string>& selected)
    : system_(system), selected_(selected.begin(), selected.end()), machine_(system.model()) {
  for (const Invariant& inv : system.model().invariants) {
    if (!selected_.count(inv.name)) all_invariants_ = false;
  }
}

int PropertySubset::successors(const uint64_t* state, SuccessorSink& sink) {
  SelectedFailures filter(sink, selected_);
  return system_.successors(state, filter);
}

std::optional<Violation> PropertySubset::check_invariants(const uint64_t* state) {
  if (all_invariants_) return system_.check_invariants(state);
  bool unpacked = false;
  for (const Invariant& inv : system_.model().invariants) {
    if (!selected_.count(inv.name)) continue;
    if (!unpacked) {
      machine_.state = system_.unpack(state);
      unpacked = true;
    }
    try {
      if (!machine_.eval(inv.expr)) return invariant_false(inv);
    } catch (const StepFailure& f) {
      return invariant_unevaluable(inv, f);
    }
  }
  return std::nullopt;
}

std::optional<Violation> PropertySubset::check_invariants_after(uint32_t action, const uint64_t* state) {
  if (all_invariants_) return system_.check_invariants_after(action, state);
  return check_invariants(state);
}

void PropertySubset::set_deadline(std::chrono::steady_clock::time_point deadline) {
  system_.set_deadline(deadline);
  machine_.deadline = deadline;
}

void PropertySubset::set_interrupt(const std::atomic<bool>* flag) {
  system_.set_interrupt(flag);
  machine_.interrupt = flag;
}

ScopedInvariantSubset::ScopedInvariantSubset(Model& model, const std::vector<std::string>& selected)
    : model_(model), all_(model.invariants) {
  model.invariants.clear();
  for (const Invariant& inv : all_) {
    if (std::find(selected.begin(), selected.end(), inv.name) != selected.end()) model.invariants.push_back(inv);
  }
}

}  // namespace qpcheck::model
