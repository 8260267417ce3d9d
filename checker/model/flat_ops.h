// Tier "flat ops" of ModelSystem (docs/performance.md, "Flat ops on the packed state"); internal to checker/model.
//
// Contract: compile_flat_ops() turns a specialised statement list into a short list of FlatOps -- `slot = k`,
// `slot = slot' +/- k`, push/pop/clear of a static queue of scalars with a constant, `assert`/`require`/`if` on a
// SlotCondition, jumps for `if`/`else` -- and keeps every other statement as kStmt (one Machine::exec_stmt call).
// run_flat_ops() on an unpacked state does exactly what Machine::exec(body) does: the same writes (through
// Machine::set, so write tracking sees them), the same `require` result, and every error path (overflow, out of
// range, full or empty queue, false assert, head of an empty queue) falls back to the original statement on the
// tree evaluator from the same state, so failures, messages and spans are the tree's.
#pragma once

#include <cstdint>
#include <vector>

#include "checker/model/eval.h"
#include "checker/model/model.h"
#include "checker/model/slot_condition.h"

namespace qpcheck::model::tier {

// A statement of a specialised body in a flat form (a small register-free code), run by run_flat_ops(): the common
// shapes get a direct form; anything else (and every error path) runs the original statement on the tree evaluator,
// from the same state, so results, messages and spans are those of Machine::exec.
struct FlatOp {
  enum class Kind : uint8_t {
    kSet,      // state[slot] = k (k in the slot's range)
    kAdd,      // state[slot] = state[src] + k, checked against lo..hi
    kPush,     // push(q, k): q's length slot `slot`, capacity `hi`, scalar elements, k in the element range
    kPop,      // pop(q): length slot `slot`, scalar elements reset to `lo`
    kClear,    // clear(q): length slot `slot`, capacity `hi`, scalar elements reset to `lo`
    kAssert,   // assert `test` (statement `s` throws when it is false)
    kRequire,  // require `test`: the step is disabled when false
    kIf,       // if `test` is false, continue at `jump`
    kJump,     // continue at `jump`
    kStmt,     // Machine::exec_stmt(s)
  } kind = Kind::kStmt;
  int32_t slot = 0, src = 0;
  int32_t jump = 0;                 // an index in the op list (kIf, kJump)
  int64_t k = 0, lo = 0, hi = 0;
  SlotCondition test;
  const Stmt* s = nullptr;          // the statement this op stands for
};

// Appends `body` (statements of `model`) compiled to ops.
void compile_flat_ops(const std::vector<const Stmt*>& body, const Model& model, std::vector<FlatOp>& out);

// The value of `t` in m.state, as Machine::eval(t.e) computes it (a kGeneral test, or head() of an empty queue,
// is evaluated by the tree, which raises the runtime error). Throws StepFailure.
inline bool holds_on_machine(const SlotCondition& t, Machine& m) {
  if (t.kind == SlotCondition::Kind::kGeneral || (t.kind == SlotCondition::Kind::kHead && m.state[t.slot] == 0)) {
    return m.eval(t.e) != 0;
  }
  return holds(t, m.state.data());
}

// Runs `ops` on m.state like Machine::exec(body): false if a `require` failed (m.state is then partly updated);
// throws StepFailure.
inline bool run_flat_ops(const std::vector<FlatOp>& ops, Machine& m) {
  using K = FlatOp::Kind;
  const int64_t* st = m.state.data();
  // An error path (overflow, range, full or empty queue, false assert) runs the statement itself, which raises the
  // error exactly as Machine::exec would (or, should the fast check be wrong, simply does the statement).
  for (size_t i = 0, n = ops.size(); i < n;) {
    const FlatOp& o = ops[i];
    switch (o.kind) {
      case K::kSet: m.set(o.slot, o.k); break;
      case K::kAdd: {
        int64_t v;
        if (__builtin_add_overflow(st[o.src], o.k, &v) || v < o.lo || v > o.hi) {
          if (!m.exec_stmt(o.s)) return false;
          break;
        }
        m.set(o.slot, v);
        break;
      }
      case K::kPush: {
        int64_t len = st[o.slot];
        if (len >= o.hi || len < 0) {
          if (!m.exec_stmt(o.s)) return false;
          break;
        }
        m.set(o.slot + 1 + len, o.k);
        m.set(o.slot, len + 1);
        break;
      }
      case K::kPop: {
        int64_t len = st[o.slot];
        if (len <= 0) {
          if (!m.exec_stmt(o.s)) return false;
          break;
        }
        for (int64_t k = 0; k + 1 < len; ++k) m.set(o.slot + 1 + k, st[o.slot + 2 + k]);
        m.set(o.slot + len, o.lo);
        m.set(o.slot, len - 1);
        break;
      }
      case K::kClear:
        m.set(o.slot, 0);
        for (int k = 0; k < o.hi; ++k) m.set(o.slot + 1 + k, o.lo);
        break;
      case K::kAssert:
        if (!holds_on_machine(o.test, m) && !m.exec_stmt(o.s)) return false;
        break;
      case K::kRequire:
        if (!holds_on_machine(o.test, m)) return false;
        break;
      case K::kIf:
        if (!holds_on_machine(o.test, m)) {
          i = o.jump;
          continue;
        }
        break;
      case K::kJump: i = o.jump; continue;
      case K::kStmt:
        if (!m.exec_stmt(o.s)) return false;
        break;
    }
    ++i;
  }
  return true;
}

}  // namespace qpcheck::model::tier
