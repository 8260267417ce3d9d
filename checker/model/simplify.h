// Partial evaluation of compiled expressions and statements for the explorer's hot path: with some frames bound to
// constants (a rule's parameter tuple, a quantifier's value), folds constant subexpressions, resolves a[const] and
// r.f to static slots, inlines pure function calls and procedure calls whose arguments are constant, and unrolls
// small quantifiers and for loops. The result computes exactly what the original computes on every state, including
// the same runtime errors (anything that could fail is left to run time), so state counts and verdicts do not change.
// Used only for successor generation; traces re-execute the original model (calls, spans).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "checker/model/eval.h"
#include "checker/model/model.h"

namespace qpcheck::model {

class Simplifier {
 public:
  explicit Simplifier(const Model& model);

  // Binds frame `index` to `value` until unbind(index).
  void bind(int index, int64_t value) { env_[index] = value; }
  void unbind(int index) { env_[index].reset(); }

  const Expr* expr(const Expr* e);
  // Appends the simplified form of `body` to `out` (statements that can have no effect are dropped).
  void stmts(const std::vector<const Stmt*>& body, std::vector<const Stmt*>& out);

  // The specialised program's size: once bytes() reaches `max_bytes` (0: no bound), calls are no longer inlined and
  // loops no longer unrolled (the result computes the same, only slower), so what the Simplifier holds stays within
  // max_bytes plus one copy of the expressions and statements it is given after that.
  void set_max_bytes(uint64_t max_bytes) { max_bytes_ = max_bytes; }
  // Bytes held by the expressions and statements created so far (counted as they are made).
  uint64_t bytes() const { return bytes_; }
  bool exhausted() const { return max_bytes_ != 0 && bytes_ >= max_bytes_; }
  // From now on, no inlining or unrolling (a deadline passed while specialising).
  void exhaust() { max_bytes_ = 1; }

 private:
  Expr& new_expr(const Expr& like) {
    bytes_ += sizeof(Expr) + like.args.size() * sizeof(const Expr*);
    return exprs_.emplace_back(like);
  }
  Stmt& new_stmt(const Stmt& like) {
    bytes_ += sizeof(Stmt) + (like.args.size() + like.body.size() + like.else_body.size()) * sizeof(void*);
    return stmts_.emplace_back(like);
  }
  // The constant `v` with `like`'s type and span; made once per (type, span, v), as every action instance folds the
  // same source expressions to the same few values.
  const Expr* constant(int64_t v, const Expr* like);
  // `slot_expr` (a kSlot) moved to slot `index`, with `like`'s type and span; made once per (type, span, index).
  const Expr* slot(int64_t index, const Expr* like, const Expr* slot_expr);
  const Expr* copy(const Expr* e, const Expr* a, const Expr* b, const Expr* c);
  // Folds `e` (whose operands are all constants) by evaluating it; nullptr if evaluation raises a runtime error.
  const Expr* fold(const Expr* e);
  void stmt(const Stmt* s, std::vector<const Stmt*>& out);
  bool in_range(int64_t v, const Type* t) const { return v >= t->lo && v <= t->hi; }

  const Model& model_;
  Machine scratch_;
  std::vector<std::optional<int64_t>> env_;
  std::deque<Expr> exprs_;
  std::deque<Stmt> stmts_;
  // Constants and slots already made, by (type, source span, kConst or kSlot, value): two are interchangeable.
  struct MadeKey {
    const Type* type;
    Span span;
    Op op;
    int64_t value;
    bool operator==(const MadeKey& o) const {
      return type == o.type && span.file == o.span.file && span.begin == o.span.begin && span.end == o.span.end &&
             op == o.op && value == o.value;
    }
  };
  struct MadeHash {
    size_t operator()(const MadeKey& k) const {
      uint64_t h = reinterpret_cast<uintptr_t>(k.type);
      for (uint64_t x : {uint64_t(k.span.file), uint64_t(k.span.begin), uint64_t(k.span.end), uint64_t(k.value),
                         uint64_t(k.op == Op::kSlot)}) {
        h = (h ^ x) * 0x100000001b3ULL;
      }
      return h;
    }
  };
  std::unordered_map<MadeKey, const Expr*, MadeHash> made_;
  int depth_ = 0;
  uint64_t bytes_ = 0;
  uint64_t max_bytes_ = 0;
};

}  // namespace qpcheck::model
