// libFuzzer harness: the whole spec front end on one file (docs/fuzzing.md). The input is written to a file and read
// by the front end (frontend::Spec::read), as `qpcheck verify` reads it, with spec/ as the library folder ($QPCHECK_SPEC_DIR, default
// ./spec), so imports of the real library are followed. Then typecheck, the matrix and expectations, the compiled
// system (bounded), a short bounded search, and the trace built from its result, rendered as text, JSON and SVG.
//
// A finding is a crash, a sanitizer report, a leak, an input slower than libFuzzer's -timeout, or an exception other
// than the front end's two (SpecError: an invalid spec; UsageError: an unreadable file): those are exit 5 in qpcheck.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include "checker/explore/explorer.h"
#include "checker/frontend/frontend.h"
#include "checker/model/model_system.h"
#include "checker/trace/build.h"
#include "checker/trace/msc.h"
#include "checker/trace/render.h"
#include "fuzz/check.h"

namespace {

std::string spec_dir() {
  const char* d = std::getenv("QPCHECK_SPEC_DIR");
  return d != nullptr ? d : "spec";
}

// One file per process, rewritten for every input (its own folder: an import "x.qpspec" resolves beside it).
const std::string& input_path() {
  static const std::string path = qpcheck::fuzz::scratch_file("spec-fuzz", "input.qpspec");
  return path;
}

void run(const std::string& text) {
  using namespace qpcheck;
  {
    std::ofstream out(input_path(), std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  frontend::Spec spec;
  spec.read(input_path(), lang::lib_dirs_only({spec_dir()}));
  lang::Compiled compiled = spec.compile();
  spec.matrix(*compiled.model, true);
  model::BuildLimits build;
  build.max_bytes = 16 << 20;
  build.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  model::ModelSystem system(*compiled.model, build);
  explore::Options o;
  o.limits.max_states = 200;
  o.limits.max_memory_bytes = 64 << 20;
  o.limits.time_limit_seconds = 1;
  model::CheckResult result = explore::explore(system, o);
  trace::Trace t = trace::build_trace(system, result, input_path(), "bfs");
  fuzz::check_terminal_safe(trace::to_text(t), "to_text");
  fuzz::check_xml_safe(trace::to_svg(t), "to_svg");
  (void)trace::dump_json(trace::to_json(t));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    run(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const qpcheck::lang::SpecError&) {
  } catch (const qpcheck::lang::UsageError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "spec_fuzzer: unexpected exception (qpcheck exit 5): %s\n", e.what());
    std::abort();
  }
  return 0;
}
