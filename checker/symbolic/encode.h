// Symbolic execution of a compiled model (checker/model/model.h) into Z3 terms: the same statements, expressions,
// conditions and runtime errors that model::Machine executes concretely (eval.cc is the reference semantics), over a
// state whose slots are Z3 terms. One Encoder per Z3 context; it only builds terms, it never calls the solver.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <z3++.h>

#include "checker/model/model.h"

namespace qpcheck::symbolic {

// A symbolic scalar: a Z3 term of sort Bool (values of type bool) or Int (everything else), with bounds known
// statically (lo == hi: a constant). Bool terms have bounds 0..1.
struct Val {
  z3::expr e;
  int64_t lo = 0, hi = 0;
};

// One action of the model, numbered exactly as model::ModelSystem numbers them: process instances in declaration
// order, their program counter values in order, each pc's edges in order; then rules in declaration order, each
// with its parameter tuples in lexicographic order (last parameter fastest).
struct ActionRef {
  int process = -1;     // process instance, or -1 for a rule
  int pc = 0;
  int edge = 0;
  int rule = -1;
  int64_t tuple = 0;
};
std::vector<ActionRef> enumerate_actions(const model::Model& m);

// What one action does from a symbolic state.
struct Effect {
  z3::expr ok;          // the action is attempted and every condition, guard and require on its path holds
  z3::expr failed;      // the action is enabled and violates a property (fail, assert, runtime error); implies ok
  // The same, per property name ("runtime_error" for runtime errors): the FIRST failure of the run is that
  // property's, as the interpreter reports it (at most one of them holds).
  std::map<std::string, z3::expr> failed_by;
  std::vector<Val> next;  // the successor's slots; meaningful when ok && !failed
};

// Constants whose value is not fixed: a symbolic parameter (synthesis). Maps a kConst expression of the model to the
// term that replaces its value.
using ConstOverrides = std::unordered_map<const model::Expr*, Val>;

class Encoder {
 public:
  Encoder(z3::context& ctx, const model::Model& m, const ConstOverrides* overrides = nullptr);

  const model::Model& model() const { return m_; }
  const std::vector<ActionRef>& actions() const { return actions_; }
  z3::context& ctx() { return ctx_; }

  // Fresh constants "PREFIX.slotN", one per slot (sort Bool for bool slots, Int otherwise).
  std::vector<Val> fresh_state(const std::string& prefix);
  // The model's initial state as constants.
  std::vector<Val> initial_state();
  // Every slot within its declared range.
  z3::expr in_range(const std::vector<Val>& s);
  // Well-formedness that every reachable state has (sound assumptions for the induction step): each queue's length
  // is within its capacity and the elements past its length hold their type's default (pop and clear reset them).
  // Only assumed when `values` (an initial state) has it too, see queues_canonical.
  z3::expr well_formed(const std::vector<Val>& s);
  // Does the concrete state `values` hold each queue's elements past its length at their defaults? (An initialiser
  // broadcast into a queue's elements would break it; then well_formed is not a sound assumption.)
  bool queues_canonical(const std::vector<int64_t>& values) const;
  void assume_canonical_queues(bool yes) { canonical_queues_ = yes; }
  // Slot-wise equality of two states.
  z3::expr equal(const std::vector<Val>& a, const std::vector<Val>& b);

  Effect action(const std::vector<Val>& s, const ActionRef& a);
  // Invariant `index` is false in `s` or cannot be evaluated (runtime error): ModelSystem::check_invariants reports it.
  z3::expr invariant_violated(const std::vector<Val>& s, size_t index);
  // Every process is terminated or at an `end` label (ModelSystem::valid_end).
  z3::expr valid_end(const std::vector<Val>& s);

  // Constant folding helpers (exposed for the engines).
  z3::expr band(const z3::expr& a, const z3::expr& b);
  z3::expr bor(const z3::expr& a, const z3::expr& b);
  z3::expr bnot(const z3::expr& a);
  z3::expr T() { return ctx_.bool_val(true); }
  z3::expr F() { return ctx_.bool_val(false); }
  z3::expr as_int(const Val& v);
  z3::expr as_bool(const Val& v);

 private:
  struct Loc {  // one candidate of a location: taken when `cond` holds
    z3::expr cond;
    int64_t slot;
  };
  using LocSet = std::vector<Loc>;

  // The execution context of one action or one expression.
  struct Ctx {
    std::vector<Val> st;
    std::vector<Val> frame;
    z3::expr guard;   // branch conditions on the current path (within the step)
    z3::expr ok;      // requires so far (merged at if joins); a require after a failure does not count (require())
    std::map<std::string, z3::expr> failed;  // per property: the run fails there first
    z3::expr any_failed;  // the run has failed so far (the disjunction of `failed`)
  };

  Val num(int64_t v, const model::Type* t);
  Val ite(const z3::expr& c, const Val& a, const Val& b);
  // The run fails with `property` here when `cond` holds, unless it already failed (the interpreter stops at the
  // first StepFailure: a later failure on the same run is never reached, so it must not count for its property).
  void error(Ctx& c, const z3::expr& cond, const std::string& property);
  // A condition the action needs (edge condition, guard, require): counts only while the run has not failed (a
  // failing run is enabled and reports its failure whatever comes after it).
  void require(Ctx& c, const z3::expr& cond);
  Val eval(Ctx& c, const model::Expr* e);
  Val arith(Ctx& c, const model::Expr* e);
  LocSet loc(Ctx& c, const model::Expr* e);
  Val read(Ctx& c, const LocSet& l, int offset);
  void write(Ctx& c, const LocSet& l, int offset, const Val& v);
  void check_range(Ctx& c, const Val& v, const model::Type* t);
  void bind_args(Ctx& c, const std::vector<const model::Expr*>& args, const std::vector<const model::Type*>& types,
                 const std::vector<int>& frames);
  void exec(Ctx& c, const std::vector<const model::Stmt*>& body);
  void exec_one(Ctx& c, const model::Stmt* s);
  void reset(Ctx& c, const LocSet& l, int offset, const model::Type* t);
  Val default_of(int64_t slot);
  Ctx start(const std::vector<Val>& s);
  z3::expr failed_any(const Ctx& c);

  z3::context& ctx_;
  const model::Model& m_;
  const ConstOverrides* overrides_;
  std::vector<ActionRef> actions_;
  std::vector<bool> bool_slot_;
  std::vector<int64_t> default_;  // per slot: the value reset() stores there (queue elements)
  bool canonical_queues_ = true;
  std::vector<std::pair<const model::Type*, int64_t>> queues() const;
};

}  // namespace qpcheck::symbolic
