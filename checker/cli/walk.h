// `qpcheck walk SPEC --out DIR`: schedules drawn from a spec's model (random walks, or every schedule up to a length)
// written as replayable reports, one file each (docs/conform.md, "Schedules from the model"): the library checked
// against the devices by replaying many runs of it, not only its counterexamples and witnesses. Each schedule is
// written as soon as it is drawn; the walk-NNNN.json files of an earlier walk in DIR are removed first. Exit codes:
// 0 the schedules were written, 2 --time-limit or SIGINT/SIGTERM stopped it (what was written stays), 3 invalid
// spec, 4 usage (DIR cannot be created, --max-length 0), 5 a file could not be written.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace qpcheck::cli {

struct WalkOptions {
  std::string spec;
  std::vector<std::string> params;      // "NAME=VALUE"
  std::vector<std::string> lib_dirs;
  std::string out;                      // folder for walk-0001.json, ...
  uint64_t count = 50;                  // random walks to draw (distinct ones are written)
  uint64_t seed = 1;                    // walk k uses seed + k
  uint64_t max_length = 120;            // steps per schedule
  bool all = false;                     // every schedule of at most --max-length steps instead (at most --count)
  double time_limit = 0;                // seconds, 0: none; the schedules written until then stay
};

void setup_walk(CLI::App& app, WalkOptions& opt);

// Writes the schedules; a summary to `out`, diagnostics to `err`. Returns an ExitCode value.
int run_walk(const WalkOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace qpcheck::cli
