// `qpcheck show TRACE.json`: draws the counterexample of a JSON report (verify --trace-out, gate --trace-dir) as a
// message sequence chart: SVG, HTML or Mermaid.
#pragma once

#include <iosfwd>
#include <string>

#include <CLI/CLI.hpp>

#include "checker/trace/names.h"

namespace qpcheck::cli {

struct ShowOptions {
  std::string report;    // a qpcheck.report JSON file
  std::string svg;       // output files; "-" is stdout
  std::string html;
  std::string mermaid;
  trace::Names names = trace::Names::kUser;  // user-space or kernel names in the chart
};

void setup_show(CLI::App& app, ShowOptions& opt);

// Returns the exit code (docs/cli.md, "qpcheck show"): 0 written, 3 the file is not a qpcheck report with a
// counterexample, 4 usage (unreadable report, output not writable), 5 an output could not be written completely.
// Without an output option the Mermaid text goes to stdout.
int run_show(const ShowOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace qpcheck::cli
