// Tier "specialised actions" of ModelSystem (docs/performance.md, "Specialised actions"); internal to checker/model.
//
// Contract: specialise_action() partially evaluates one action of the model once, when the ModelSystem is built
// (Simplifier: the instance index and the rule parameters become constants, constant subexpressions fold, calls
// with constant arguments inline, small loops unroll), splits its conditions into SlotConditions and compiles its body
// to FlatOps. The result computes exactly what the original action computes on every state, including its runtime
// errors. When specialisation is off (the build's deadline or size bound) the action is kept as written, and a rule
// whose parameters are not folded binds them at run time (`rule` >= 0): it then runs on the machine only.
// packable() says whether the action can run on the packed state itself (packed_action.h); otherwise successors()
// runs it on the unpacked state (flat_ops.h).
#pragma once

#include <cstdint>
#include <vector>

#include "checker/model/flat_ops.h"
#include "checker/model/model.h"
#include "checker/model/simplify.h"
#include "checker/model/slot_condition.h"
#include "checker/model/state_layout.h"

namespace qpcheck::model::tier {

// What an action id stands for: a process instance's edge at one pc, or a rule with one parameter tuple.
struct ActionSite {
  int process = -1;                 // process instance, or -1 for a rule
  int pc = 0;
  int edge = 0;
  int rule = -1;
  int64_t tuple = 0;                // rule parameter tuple index (the last parameter varies fastest)
};

// An action specialised by Simplifier (instance and rule parameters folded in): what successors() runs.
struct SpecialisedAction {
  std::vector<SlotCondition> conds;      // edge conditions and guard (conjunctions split), all must hold, in order
  std::vector<const Stmt*> body;
  std::vector<FlatOp> ops;          // body compiled
  // When every write of the body is a constant (and nothing can fail or be disabled): the successor is the packed
  // source with these words patched (word, bits to clear, bits to set), pc included; the machine is not used.
  struct Patch {
    int word;
    uint64_t clear, bits;
  };
  bool constant = false;
  // Every condition is quick and every op a direct form (no general expression, no tree statement, no frame): the
  // action can run on the packed state itself (packed_action.h), without unpacking.
  bool packed = false;
  std::vector<Patch> patch;
  int pc_slot = -1;                 // process steps: the program counter to set to next_pc
  int next_pc = 0;
  int rule = -1;                    // >= 0: rule parameters must be bound at run time (not specialised)
  int64_t tuple = 0;
  bool never = false;               // a condition is constantly false
  bool prefiltered = false;         // conds[0] is quick: successors() tested it already (dispatch.h)
};

// Specialises the action at `site`: `fold` false keeps it as written (no Simplifier); `bind_params` false leaves a
// rule's parameters to run time even when folding. SlotConditions are not located yet (`packed`, `prefiltered` unset).
SpecialisedAction specialise_action(const Model& model, const StateLayout& layout, Simplifier& simplifier,
                                    const ActionSite& site, bool fold, bool bind_params);

// Can `f` run on the packed state: quick tests and direct ops only, every value written inside its slot's range?
bool packable(const SpecialisedAction& f, const Model& model);

}  // namespace qpcheck::model::tier
