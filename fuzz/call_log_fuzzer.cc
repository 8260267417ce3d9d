// libFuzzer harness: the reader of the recorder's call logs (verbs::read_call_log, as `qpcheck conform` calls it)
// and the translation of an accepted log into observations (verbs::observe, with every replay operation counted as
// one the spec makes, so that every call's translation runs), docs/fuzzing.md. A finding is a crash, a sanitizer
// report, a leak, a slow input, an exception other than the reader's (CallLogError, CallLogFileError), or an error
// message with raw control characters (it reaches the terminal).

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "checker/trace/render.h"
#include "fuzz/check.h"
#include "verbs_backend/call_log.h"
#include "verbs_backend/replay_ops.h"

namespace {

const std::string& input_path() {
  static const std::string path = qpcheck::fuzz::scratch_file("call-log-fuzz", "input.jsonl");
  return path;
}

const std::vector<std::string>& every_op() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> out;
    for (const auto& op : qpcheck::verbs::kReplayOps) out.emplace_back(op.name);
    return out;
  }();
  return ops;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qpcheck;
  {
    std::ofstream out(input_path(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  std::vector<verbs::CallLog> logs;
  try {
    logs.push_back(verbs::read_call_log(input_path()));
  } catch (const verbs::CallLogError& e) {
    fuzz::check_terminal_safe(e.what(), "CallLogError");
    return 0;
  } catch (const verbs::CallLogFileError& e) {
    fuzz::check_terminal_safe(e.what(), "CallLogFileError");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "call_log_fuzzer: unexpected exception reading: %s\n", e.what());
    std::abort();
  }
  // the same log twice: two processes of one run
  logs.push_back(logs[0]);
  try {
    verbs::Observed o = verbs::observe(logs, every_op());
    for (const std::string& n : o.notes) fuzz::check_terminal_safe(n, "note");
    // the skipped calls' names and the observations' sources are the log's text: printed through trace::printable
    // by the CLI; check that what printable makes of them is terminal safe
    for (const conform::Skipped& k : o.skipped) fuzz::check_terminal_safe(trace::printable(k.call, 80), "skipped");
  } catch (const verbs::CallLogError& e) {
    fuzz::check_terminal_safe(e.what(), "CallLogError (observe)");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "call_log_fuzzer: unexpected exception observing: %s\n", e.what());
    std::abort();
  }
  return 0;
}
