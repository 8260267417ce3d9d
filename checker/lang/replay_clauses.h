// Checking a procedure's `replay OP(args)` clauses against a replay vocabulary (docs/language.md, "Replay clauses";
// docs/replay.md). The vocabulary is a parameter, not a global: the type checker is handed the table of operations
// and the verbs/CM name lists it accepts, and knows nothing else of RDMA.
#pragma once

#include <functional>
#include <span>
#include <string_view>

#include "checker/lang/ast.h"
#include "checker/lang/replay_vocabulary.h"
#include "checker/model/model.h"

namespace qpcheck::lang {

// Checks one argument expression of a replay clause in the scope of its procedure and returns it typed (the type
// checker's expression checker; it throws SpecError for an ill-typed argument).
using ReplayArgChecker = std::function<const model::Expr*(const Expr*)>;

// Checks `call` against `vocabulary`: a known operation, one of its arities, and each argument a parameter of the
// procedure (kFrame) or a constant (kConst) of the kind the operation needs. Returns the clause with its typed
// arguments; throws SpecError (at the operation, the clause or the argument) otherwise.
model::ReplayOp check_replay_clause(const ReplayCall& call, const ReplayVocabulary& vocabulary,
                                    const ReplayArgChecker& check_arg);

}  // namespace qpcheck::lang
