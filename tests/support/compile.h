// Test helpers: compile spec text held in memory, and run the explorer on it.
#pragma once

#include <memory>
#include <string>

#include "checker/explore/explorer.h"
#include "checker/frontend/frontend.h"
#include "checker/model/model_system.h"

namespace qpcheck::testing {

struct CompiledSpec {
  frontend::Spec spec;
  lang::Compiled compiled;
  const lang::SourceManager& sources = spec.sources();
};

// Parses and type-checks `text` as file "test.qpspec" through the front end (frontend.h). Throws lang::SpecError /
// lang::UsageError like the CLI path.
std::unique_ptr<CompiledSpec> compile(const std::string& text, const lang::ParamOverrides& params = {});

// The first diagnostic of a spec that must fail, rendered ("test.qpspec:3:5: error: ..."), or "" if it compiles.
std::string first_error(const std::string& text, const lang::ParamOverrides& params = {});

// Runs BFS (or `options`) on the compiled spec.
model::CheckResult check(CompiledSpec& spec, const explore::Options& options = {});

}  // namespace qpcheck::testing
