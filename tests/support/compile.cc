#include "tests/support/compile.h"

namespace qpcheck::testing {

std::unique_ptr<CompiledSpec> compile(const std::string& text, const lang::ParamOverrides& params) {
  auto spec = std::make_unique<CompiledSpec>();
  int file = spec->sources.add("test.qpspec", text);
  lang::Program program;
  program.main_file = file;
  program.decls = lang::parse_file(spec->sources, file, spec->ast);
  spec->compiled = lang::typecheck(program, spec->sources, params);
  return spec;
}

std::string first_error(const std::string& text, const lang::ParamOverrides& params) {
  lang::SourceManager sources;
  lang::Ast ast;
  int file = sources.add("test.qpspec", text);
  try {
    lang::Program program;
    program.main_file = file;
    program.decls = lang::parse_file(sources, file, ast);
    lang::typecheck(program, sources, params);
  } catch (const lang::SpecError& e) {
    const lang::Diagnostic& d = e.diagnostics().front();
    return sources.location(d.span) + ": error: " + d.message;
  }
  return "";
}

explore::Result check(CompiledSpec& spec, const explore::Options& options) {
  model::ModelSystem system(*spec.compiled.model);
  return explore::explore(system, options);
}

}  // namespace qpcheck::testing
