// Loading a spec for the symbolic engine: parse once, compile once per combination of the symbolic parameters'
// values (family.h), one ModelSystem per compiled model.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checker/frontend/frontend.h"
#include "checker/model/model_system.h"
#include "checker/symbolic/engine.h"

namespace qpcheck::symbolic {

struct LoadedSpec {
  frontend::Spec spec;                                        // the files read; renders the diagnostics
  std::vector<lang::Compiled> compiled;                       // one per family member
  std::vector<std::unique_ptr<model::ModelSystem>> systems;   // one per family member
  Family family;
  std::vector<lang::Diagnostic> warnings;                     // of the first member
};

// `fixed`: NAME=VALUE overrides; `symbolic`: NAME and a value set ("*", "LO..HI", "V1,V2"), see param_values.
// Members enumerate the combinations with the last symbolic parameter varying fastest. Throws lang::SpecError,
// lang::UsageError (also for more than `max_members` combinations) and NotSymbolic (family.h) when a symbolic
// parameter changes the model's structure (checked by the engine's alignment, here only compilation).
std::unique_ptr<LoadedSpec> load_spec(const std::string& file, const lang::SearchPath& search,
                                      const lang::ParamOverrides& fixed,
                                      const std::vector<std::pair<std::string, std::string>>& symbolic,
                                      size_t max_members = 4096);
// The same into `spec`, whose `spec` then renders the diagnostics of a SpecError (frontend::Spec::attempt).
void load_spec_into(LoadedSpec& spec, const std::string& file, const lang::SearchPath& search,
                    const lang::ParamOverrides& fixed, const std::vector<std::pair<std::string, std::string>>& symbolic,
                    size_t max_members = 4096);

}  // namespace qpcheck::symbolic
