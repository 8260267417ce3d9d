// Evaluation of compiled expressions and execution of atomic statement lists over an unpacked state.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checker/model/model.h"

namespace qpcheck::model {

// A step's failure that is a property violation: `fail`, a false `assert`, or a runtime error (out-of-range store,
// bad index, queue overflow/underflow, division by zero; property "runtime_error").
struct StepFailure {
  std::string property;
  std::string message;
  Span span;
};

// Thrown when a Machine's deadline passes, or its interrupt flag is set, in the middle of an evaluation (a long
// quantifier or for loop, a deep nest of calls): the search ends as inconclusive ("time-limit" or "interrupted").
struct DeadlineExceeded {};

// A procedure call made while executing a step, for traces ("ibv_post_recv(ACTIVE, 1)").
struct CallRecord {
  const Proc* proc = nullptr;
  std::vector<int64_t> args;
  // The message of the `refuse` statement that made this call fail ("" when it succeeds): set on the innermost
  // call whose procedure has a replay clause (the verbs/CM call the device refuses).
  std::string refused;
};

// Evaluates and executes against `state` (one int64 per slot). Not thread-safe; one Machine per thread.
class Machine {
 public:
  explicit Machine(const Model& model) : model_(model), frame(model.frame_size, 0) {}

  std::vector<int64_t> state;
  std::vector<CallRecord>* calls = nullptr;  // when set, every procedure call is appended (and refusals marked)
  // When set, loops and calls poll the clock every 4096 iterations and throw DeadlineExceeded once it has passed.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // When set, polled with the clock: once it reads true, DeadlineExceeded is thrown (SIGINT/SIGTERM, cli/interrupt.h).
  const std::atomic<bool>* interrupt = nullptr;

  // Value of a scalar expression. Throws StepFailure on a runtime error.
  int64_t eval(const Expr* e) {
    // The two commonest leaves without a call (most guards compare a static slot with a constant).
    if (e->op == Op::kConst) return e->value;
    if (e->op == Op::kSlot) return state[e->value];
    return eval_node(e);
  }
  // Executes `body` in order on `state`. Returns false if a `require` failed (the step is disabled; `state` is then
  // partially updated and must be discarded). Throws StepFailure on fail/assert/runtime errors.
  bool exec(const std::vector<const Stmt*>& body);
  // Executes one statement like exec({s}).
  bool exec_stmt(const Stmt* s) { return exec_one(s); }
  // Binds frame slot `index` (rule parameters, instance variables).
  void bind(int index, int64_t value) { frame[index] = value; }

  // Write tracking (the explorer's incremental repacking): after track_writes(), every slot that exec() writes is
  // listed once in written() until the next begin_step(). Costs one compare per write.
  void track_writes() { stamp_.assign(state.size(), 0); epoch_ = 1; tracking_ = true; }
  void begin_step() {
    written_.clear();
    if (++epoch_ == 0) { std::fill(stamp_.begin(), stamp_.end(), 0); epoch_ = 1; }
  }
  const std::vector<int32_t>& written() const { return written_; }
  // Stores `value` into `slot` (no range check), recording the write when tracking.
  void set(int64_t slot, int64_t value) {
    if (tracking_ && stamp_[slot] != epoch_) {
      stamp_[slot] = epoch_;
      written_.push_back(static_cast<int32_t>(slot));
    }
    state[slot] = value;
  }

 private:
  int64_t eval_node(const Expr* e);
  int64_t loc(const Expr* e) { return e->op == Op::kSlot ? e->value : loc_node(e); }
  int64_t loc_node(const Expr* e);
  // Evaluates call arguments into vals (at most 16), range-checks them against the parameter types and binds them
  // to the parameters' frames. Returns the number of arguments.
  size_t bind_args(const std::vector<const Expr*>& args, const std::vector<const Type*>& types,
                   const std::vector<int>& frames, const std::string& callee, int64_t* vals);
  void store(int64_t slot, int64_t value, const Type* t, Span span);
  void copy(int64_t dst, int64_t src, const Type* t, Span span);
  void reset(int64_t first, const Type* t);
  bool exec_one(const Stmt* s);
  [[noreturn]] void runtime_error(Span span, std::string message);
  // The rendering unit (variable leaf or whole queue) holding state slot `slot`, "" if none: for messages.
  std::string unit_name(int64_t slot) const;
  void poll() {
    if ((++ticks_ & 4095) == 0 && (deadline || interrupt != nullptr) && expired()) throw DeadlineExceeded{};
  }
  bool expired() const {
    return (interrupt != nullptr && interrupt->load(std::memory_order_relaxed)) ||
           (deadline && std::chrono::steady_clock::now() >= *deadline);
  }
  uint32_t ticks_ = 0;
  std::vector<size_t> replayed_;  // with `calls`: indexes of the enclosing calls that have a replay clause
  bool tracking_ = false;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> stamp_;
  std::vector<int32_t> written_;

  const Model& model_;

 public:
  std::vector<int64_t> frame;
};

}  // namespace qpcheck::model
