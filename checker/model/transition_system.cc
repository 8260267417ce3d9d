// The one constructor of each kind of violation (transition_system.h).
#include "checker/model/transition_system.h"

#include <fmt/format.h>

namespace qpcheck::model {

Violation invariant_false(const Invariant& inv) {
  return Violation{Violation::Kind::kInvariant, inv.name, fmt::format("invariant {} is false", inv.name), inv.span};
}

Violation invariant_unevaluable(const Invariant& inv, const StepFailure& f) {
  return Violation{Violation::Kind::kInvariant, inv.name,
                   fmt::format("invariant {} cannot be evaluated: {}", inv.name, f.message), f.span};
}

Violation step_failure(const StepFailure& f) {
  return Violation{Violation::Kind::kStepFailure, f.property, f.message, f.span};
}

Violation deadlock() {
  return Violation{Violation::Kind::kDeadlock, "deadlock",
                   "no process can move and not every process is at a valid end state", {}};
}

}  // namespace qpcheck::model
