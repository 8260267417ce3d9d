// `qpcheck conform SPEC LOG...`: is the run recorded in LOG (one call log per process, written by the LD_PRELOAD
// recorder, docs/record-log.md) a behaviour of SPEC? (docs/conform.md). Exit codes: 20 CONFORMS, 21 DEVIATES (at a
// named event), 22 INCONCLUSIVE (a bound was hit), 23 VIOLATES (the run conforms up to a call where the
// spec's step fails a property), 3 invalid spec, 4 usage or an invalid log (file:line and the field).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "checker/cli/verify.h"

namespace qpcheck::cli {

struct ConformOptions {
  std::string spec;
  std::vector<std::string> logs;
  std::vector<std::string> params;      // "NAME=VALUE"
  std::vector<std::string> lib_dirs;
  Format format = Format::kText;
  uint64_t max_states = 1'000'000;      // model states held over the whole check
  double time_limit = 0;                // seconds, 0: none
  std::string svg;                      // the spec's run as a message sequence chart, the observed calls beside
  std::string html;                     // the same as a standalone page with the steps
  // "LOG=EP[,EP...]": the QPs that LOG creates with ibv_create_qp, without a cm_id (plain verbs), in order, are
  // these endpoints (ACTIVE, PASSIVE[1], ...). LOG is one of `logs`, as given or by file name.
  std::vector<std::string> maps;
};

void setup_conform(CLI::App& app, ConformOptions& opt);

// Runs the check; the report to `out`, diagnostics to `err`. Returns an ExitCode value.
int run_conform(const ConformOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace qpcheck::cli
