// Type checking and compilation: Program (AST) -> model::Model (typed, slot-allocated, process control-flow graphs
// resolved into atomic steps). See docs/language.md for the rules enforced here.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checker/lang/parser.h"
#include "checker/lang/source.h"
#include "checker/model/model.h"

namespace qpcheck::lang {

// `--param NAME=VALUE` overrides, in command-line order.
using ParamOverrides = std::vector<std::pair<std::string, std::string>>;

struct Compiled {
  std::unique_ptr<model::Model> model;
  std::vector<Diagnostic> warnings;  // e.g. unreachable statements
};

// Checks `program` and compiles it. Throws SpecError listing every error found in the first failing declaration
// (with file:line:col), and UsageError for an unknown parameter name or a bad --param value.
Compiled typecheck(const Program& program, const SourceManager& sources, const ParamOverrides& params);

}  // namespace qpcheck::lang
