#include "tests/support/compile.h"

namespace qpcheck::testing {

std::unique_ptr<CompiledSpec> compile(const std::string& text, const lang::ParamOverrides& params) {
  auto spec = std::make_unique<CompiledSpec>();
  spec->spec.read_text("test.qpspec", text);
  spec->compiled = spec->spec.compile(params);
  return spec;
}

std::string first_error(const std::string& text, const lang::ParamOverrides& params) {
  frontend::Spec spec;
  try {
    spec.read_text("test.qpspec", text);
    spec.compile(params);
  } catch (const lang::SpecError& e) {
    const lang::Diagnostic& d = e.diagnostics().front();
    return spec.sources().location(d.span) + ": error: " + d.message;
  }
  return "";
}

model::CheckResult check(CompiledSpec& spec, const explore::Options& options) {
  model::ModelSystem system(*spec.compiled.model);
  return explore::explore(system, options);
}

}  // namespace qpcheck::testing
