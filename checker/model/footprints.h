// Tier "footprints" of ModelSystem: which state slots an action or an invariant can touch, for partial-order
// reduction (TransitionSystem::independence) and for incremental invariant checks (incremental_invariants.h);
// internal to checker/model.
//
// Contract: Footprint over-approximates. `touched` holds every slot an expression or statement can read or write,
// `written` every slot it can write (half-open ranges, possibly repeated); a dynamic index counts as the whole array,
// a call that is not inlined as its body (walked once per callee and reused, `memo`). When a location is unknown, or
// the walk nests deeper than kMaxDepth counting called bodies, `all` is set: the caller must assume every slot.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "checker/model/model.h"
#include "checker/model/specialised_action.h"
#include "checker/model/transition_system.h"

namespace qpcheck::model::tier {

// Collects the state slots an expression or statement can touch, as half-open ranges; `all` when unknown (an
// unknown location, or nesting deeper than kMaxDepth counting called bodies). A called function's or procedure's
// body is walked once and its footprint reused at every call (`memo`): a body that calls another twice, nested 60
// times, would otherwise be walked 2^60 times.
struct Footprint {
  static constexpr int kMaxDepth = 200;
  struct Summary {
    std::vector<std::pair<int64_t, int64_t>> touched, written;
    bool all = false;
    int depth = 0;                    // the deepest level its walk reached
  };
  using Memo = std::unordered_map<const void*, Summary>;

  const Model& m;
  Memo* memo;
  std::vector<std::pair<int64_t, int64_t>> touched;  // [first, last)
  std::vector<std::pair<int64_t, int64_t>> written;
  bool all = false;
  int depth = 0;
  int max_depth = 0;

  void expr(const Expr* e);
  void stmts(const std::vector<const Stmt*>& body);
  void stmt(const Stmt* s);

 private:
  bool enter();
  // Adds the footprint of a called body (fn body or proc statements) as if walked here, at the current depth.
  template <class Walk>
  void call(const void* key, Walk walk);
  // The slots a location expression may designate.
  void location(const Expr* e, bool write);
};

// Per action, its independence group: actions of different groups touch disjoint slots in every state (union-find
// over the actions' footprints); `visible` marks the actions that write a slot one of `invariants` reads. Empty
// (no reduction) when some footprint is unknown or a rule's parameters are bound at run time.
TransitionSystem::Independence independence_of(const Model& model, const std::vector<SpecialisedAction>& actions,
                                               const std::vector<const Expr*>& invariants);

}  // namespace qpcheck::model::tier
