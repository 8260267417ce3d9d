// libFuzzer harness: the lexer and parser alone, on text held in memory (no file, no imports): many more inputs per
// second than spec_fuzzer, for the recursive descent and its nesting guards (docs/fuzzing.md). Then the type checker
// on what parses, without imports. Findings as in spec_fuzzer.cc.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "checker/lang/matrix.h"
#include "checker/lang/parser.h"
#include "checker/lang/typecheck.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qpcheck;
  try {
    lang::SourceManager sources;
    lang::Ast ast;
    int file = sources.add("fuzz.qpspec", std::string(reinterpret_cast<const char*>(data), size));
    lang::Program program;
    program.main_file = file;
    program.decls = lang::parse_file(sources, file, ast);
    for (const lang::Decl* d : program.decls) {
      if (d->kind == lang::DeclKind::kImport) return 0;  // spec_fuzzer follows imports
    }
    lang::Compiled compiled = lang::typecheck(program, sources, {});
    lang::resolve_matrix(program, sources, *compiled.model, true);
  } catch (const lang::SpecError& e) {
    (void)e.diagnostics().at(0);  // never empty
  } catch (const lang::UsageError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parse_fuzzer: unexpected exception (qpcheck exit 5): %s\n", e.what());
    std::abort();
  }
  return 0;
}
