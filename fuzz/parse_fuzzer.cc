// libFuzzer harness: the lexer and parser alone, on text held in memory (no file, no imports): many more inputs per
// second than spec_fuzzer, for the recursive descent and its nesting guards (docs/fuzzing.md). Then the type checker
// on what parses, without imports. Findings as in spec_fuzzer.cc.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "checker/frontend/frontend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qpcheck;
  try {
    frontend::Spec spec;
    spec.read_text("fuzz.qpspec", std::string(reinterpret_cast<const char*>(data), size));
    for (const lang::Decl* d : spec.program().decls) {
      if (d->kind == lang::DeclKind::kImport) return 0;  // spec_fuzzer follows imports
    }
    lang::Compiled compiled = spec.compile();
    spec.matrix(*compiled.model, true);
  } catch (const lang::SpecError& e) {
    (void)e.diagnostics().at(0);  // never empty
  } catch (const lang::UsageError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "parse_fuzzer: unexpected exception (qpcheck exit 5): %s\n", e.what());
    std::abort();
  }
  return 0;
}
