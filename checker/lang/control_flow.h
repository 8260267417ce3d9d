// Control flow of a process body: compiles the statement list of one process instance into the atomic steps an
// engine takes (docs/language.md, "Processes"). Each stored program counter of the instance gets the steps enabled
// there, with the branch conditions met on the way folded into each step's edge, and the conditions under which
// the process stands at its end (or at an `end` label). Labels, goto, break, while, if and choose become edges;
// await and when become guarded steps; any other statement is a step of its own.
// Private to checker/lang: the type checker calls it with the statements it checks itself behind `StepChecker`.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "checker/lang/ast.h"
#include "checker/lang/source.h"
#include "checker/model/model.h"

namespace qpcheck::lang {

// What compiling control flow needs of the type checker: the parts of a body that are not control flow. Each
// throws SpecError for what it rejects.
class StepChecker {
 public:
  // A condition of an await, when, if or while: the expression, checked to be a bool (`what` names it: "an await
  // condition").
  virtual const model::Expr* condition(const Expr* e, const char* what) = 0;
  // The body of a when/atomic block, as one atomic step (a scope of its own).
  virtual std::vector<const model::Stmt*> atomic_block(const std::vector<Stmt*>& stmts, const char* where) = 0;
  // Any other statement of a process body (`where` is "a process"), compiled as a step of its own.
  virtual const model::Stmt* atomic_stmt(const Stmt* s, const char* where) = 0;
  // A warning (an unreachable statement).
  virtual void warn(Span span, std::string message) = 0;

 protected:
  ~StepChecker() = default;
};

// Compiles `body` (a process body after its local variable declarations; `end_span` is the process declaration,
// where its end node points) into `m`'s steps and expressions and into `instance`'s edges, valid_end, end_conds,
// pc_names, pc_spans, and its program counter slot's range and initial value (the entry). Fills `label_pc` with
// each label's program counter (the same for every instance), and `never_at` with the labels no run stands at: a
// label on the first statement of an if/while/choose branch (that statement runs in the same step as the branch's
// test) that is neither the entry nor a goto's target; `end_pc` with the program counter of the process's end, or -1
// when no run reaches it (a process that loops for ever). Throws SpecError for a duplicate or unknown label, a
// break outside a loop, a statement a process may not contain, and a loop that can go round without taking a step.
// `until` (nullptr: none) is the process's `until` condition: every edge also requires its negation, and a state
// where it holds is a valid end at every program counter (the process has stopped for good).
void compile_process_body(const std::vector<const Stmt*>& body, Span end_span, const SourceManager& sources,
                          StepChecker& checker, model::Model& m, model::ProcessInstance& instance,
                          const model::Expr* until, std::map<std::string, int>& label_pc,
                          std::set<std::string>& never_at, int& end_pc);

}  // namespace qpcheck::lang
