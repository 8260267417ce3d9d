// Type checking and compilation: Program (AST) -> model::Model (typed, slot-allocated, process control-flow graphs
// resolved into atomic steps). See docs/language.md for the rules enforced here.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checker/lang/parser.h"
#include "checker/lang/replay_vocabulary.h"
#include "checker/lang/source.h"
#include "checker/model/model.h"

namespace qpcheck::lang {

// `--param NAME=VALUE` overrides, in command-line order.
using ParamOverrides = std::vector<std::pair<std::string, std::string>>;

struct Compiled {
  std::unique_ptr<model::Model> model;
  std::vector<Diagnostic> warnings;  // e.g. unreachable statements, a name that shadows an imported one
  // Per --param override, in order: the name the param it set is shown under in model->params ("max_recv", or
  // "rdma::max_recv" when two files declare a param by that name).
  std::vector<std::string> param_targets;
};

// Checks `program` and compiles it. Names resolve file by file (resolve.h); `disable`d properties are left out of
// the model (docs/language.md, "Properties"); `override`s replace the imported declarations they name. Throws
// SpecError at the first error met (file:line:col; a process body is compiled from its last statement to its first,
// so there the last error comes first), and UsageError for an unknown, ambiguous or retired parameter name or a bad
// --param value (a NAME may be qualified: rdma::max_recv).
// `replay` is the vocabulary `replay OP(args)` clauses are checked against (replay_vocabulary.h; the front end hands
// in verbs_backend's): an operation it does not list is an error at the clause.
Compiled typecheck(const Program& program, const SourceManager& sources, const ParamOverrides& params,
                   const ReplayVocabulary& replay);

// typecheck() of what the parameters need (types, consts, params; vars, fns, procs, processes, rules and properties
// skipped, and the whole check made instead if a skipped declaration was needed): model->params and param_targets as
// typecheck() gives them, the same UsageError for a bad parameter name or value, and a model that is not meant to be
// explored. resolve_matrix renders each matrix value with it (a full check per value cost a verify of a shipped spec
// two thirds of its instructions).
Compiled typecheck_params(const Program& program, const SourceManager& sources, const ParamOverrides& params,
                          const ReplayVocabulary& replay);

}  // namespace qpcheck::lang
