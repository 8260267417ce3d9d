#include "checker/symbolic/load.h"

#include <fmt/format.h>

#include "checker/symbolic/family.h"

namespace qpcheck::symbolic {

std::unique_ptr<LoadedSpec> load_spec(const std::string& file, const lang::SearchPath& lib_dirs,
                                      const lang::ParamOverrides& fixed,
                                      const std::vector<std::pair<std::string, std::string>>& symbolic,
                                      size_t max_members) {
  auto spec = std::make_unique<LoadedSpec>();
  load_spec_into(*spec, file, lib_dirs, fixed, symbolic, max_members);
  return spec;
}

void load_spec_into(LoadedSpec& out, const std::string& file, const lang::SearchPath& lib_dirs,
                    const lang::ParamOverrides& fixed, const std::vector<std::pair<std::string, std::string>>& symbolic,
                    size_t max_members) {
  LoadedSpec* spec = &out;
  spec->spec.read(file, lib_dirs);
  std::vector<std::vector<std::string>> domains;
  size_t members = 1;
  for (const auto& [name, values] : symbolic) {
    for (const auto& [fname, fvalue] : fixed) {
      if (fname == name) throw lang::UsageError(fmt::format("--param {} is given both a value and a value set", name));
    }
    domains.push_back(param_values(spec->spec.program(), name, values));
    members *= domains.back().size();
    if (members > max_members) {
      throw lang::UsageError(fmt::format("the symbolic parameters have more than {} combinations of values",
                                         max_members));
    }
    spec->family.params.push_back(SymbolicParam{name, {}});
  }
  for (size_t m = 0; m < members; ++m) {
    lang::ParamOverrides overrides = fixed;
    size_t rest = m;
    std::vector<std::string> choice(domains.size());
    for (size_t i = domains.size(); i-- > 0;) {
      choice[i] = domains[i][rest % domains[i].size()];
      rest /= domains[i].size();
    }
    for (size_t i = 0; i < domains.size(); ++i) {
      overrides.emplace_back(symbolic[i].first, choice[i]);
      spec->family.params[i].values.push_back(choice[i]);
    }
    spec->compiled.push_back(spec->spec.compile(overrides));
    if (m == 0) spec->warnings = spec->compiled.back().warnings;
    spec->systems.push_back(std::make_unique<model::ModelSystem>(*spec->compiled.back().model));
    spec->family.members.push_back(spec->systems.back().get());
  }
}

}  // namespace qpcheck::symbolic
