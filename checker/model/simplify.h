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

 private:
  const Expr* constant(int64_t v, const Expr* like);
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
  int depth_ = 0;
};

}  // namespace qpcheck::model
