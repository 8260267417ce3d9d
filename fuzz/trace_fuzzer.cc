// libFuzzer harness: the one reader of trace files (trace::read_trace_file, as `qpcheck show` and `replay` call it),
// the replay plan built from what it accepts (verbs::make_plan), and every rendering of an accepted trace: text,
// JSON (read back: a written report must be accepted again), SVG, HTML and Mermaid (docs/fuzzing.md). A finding is
// a crash, a sanitizer report, a leak, a slow input, an exception other than the reader's and the planner's, a
// rendering with raw control characters (a terminal or an XML parser would take them), or a report it writes and
// then refuses.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>

#include "checker/trace/msc.h"
#include "checker/trace/render.h"
#include "fuzz/check.h"
#include "verbs_backend/conductor.h"

namespace {

const std::string& input_path() {
  static const std::string path = qpcheck::fuzz::scratch_file("trace-fuzz", "input.json");
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qpcheck;
  {
    std::ofstream out(input_path(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  trace::Trace t;
  try {
    t = trace::read_trace_file(input_path());
  } catch (const trace::ReportError&) {
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace_fuzzer: unexpected exception reading: %s\n", e.what());
    std::abort();
  }
  try {
    (void)verbs::make_plan(t);
  } catch (const verbs::PlanError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace_fuzzer: unexpected exception planning: %s\n", e.what());
    std::abort();
  }
  try {
    fuzz::check_terminal_safe(trace::to_text(t), "to_text");
    fuzz::check_xml_safe(trace::to_svg(t), "to_svg");
    fuzz::check_xml_safe(trace::to_html(t), "to_html");
    fuzz::check_terminal_safe(trace::to_mermaid(t), "to_mermaid");
    std::string again = trace::dump_json(trace::to_json(t));
    (void)trace::from_json(nlohmann::json::parse(again));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace_fuzzer: an accepted trace fails to render or to be read back: %s\n", e.what());
    std::abort();
  }
  return 0;
}
