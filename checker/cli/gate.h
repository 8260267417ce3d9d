// `qpcheck gate PATH...`: checks every configuration of every spec against its expectations (docs/gate.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "checker/cli/verify.h"

namespace qpcheck::cli {

struct GateOptions {
  std::vector<std::string> paths;       // spec files, or folders whose *.qpspec files are checked (not recursive)
  Format format = Format::kText;        // stdout: the text summary or the JSON summary
  std::string junit;                    // write JUnit XML here
  std::string sarif;                    // write SARIF 2.1.0 here
  std::string json;                     // write the JSON summary here
  std::string trace_dir;                // write each counterexample's JSON report (qpcheck.report) here
  std::string svg_dir;                  // write each counterexample's message sequence chart (SVG) here
  bool no_coverage = false;
  bool no_deadlock = false;
  uint64_t max_states = 0;
  uint64_t max_depth = 0;
  std::string max_memory;
  double time_limit = 0;
  std::vector<std::string> lib_dirs;
};

void setup_gate(CLI::App& app, GateOptions& opt);

// Returns the exit code (docs/cli.md, "qpcheck gate"): 0 every outcome as expected, 1 an unexpected outcome,
// 2 inconclusive, 3 an invalid spec, 4 usage (bad option, no spec found, unreadable file, output not writable),
// 5 internal (an output file could not be written completely).
int run_gate(const GateOptions& opt, std::ostream& out, std::ostream& err);

// The spec files named by `paths` (a folder: its *.qpspec files, sorted). Throws std::invalid_argument naming a
// path that is neither.
std::vector<std::string> collect_specs(const std::vector<std::string>& paths);

// File name for a counterexample's artefacts: "03_patch_passive_first_ib.transport=IB.rnr_retry=0.PROPERTY".
std::string artefact_name(const std::string& spec, const std::string& config, const std::string& property);

}  // namespace qpcheck::cli
