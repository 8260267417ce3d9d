// Checks every configuration of a spec's matrix against every property and compares the outcomes with the spec's
// expectations (docs/gate.md). The engine behind `qpcheck gate` and `qpcheck diff`; reports (checker/report) and
// pictures (checker/trace/msc.h) consume its results.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checker/explore/explorer.h"
#include "checker/gate/property_runs.h"
#include "checker/lang/search_path.h"
#include "checker/trace/trace.h"

namespace qpcheck::gate {

struct ConfigResult {
  std::string name;                                         // "transport=IB rnr_retry=0" or "default"
  std::vector<std::pair<std::string, std::string>> params;  // every parameter with its value in this run
  std::vector<PropertyResult> properties;
  Coverage coverage;
  trace::Stats stats;               // of the reachability run
  std::string limit;                // a limit that ended the reachability run, "" if none
};

struct SpecResult {
  std::string spec;
  // Invalid spec (exit class 3) or unreadable file (4): the diagnostics as printed, and no configurations.
  int error_code = 0;
  std::string error;
  std::vector<std::string> warnings;  // formatted diagnostics
  std::vector<ConfigResult> configs;
  // What every configuration leaves out (the spec's `disable` and `check`, --no-deadlock) and what the spec
  // replaces (`override`), as the report's header shows them.
  std::vector<trace::PropertyNote> not_checked;
  std::vector<trace::OverrideNote> overrides;
};

// Checks one spec file. Never throws for a bad spec (see SpecResult::error); std::bad_alloc may escape.
SpecResult check_spec(const std::string& path, const Options& options);

// Totals over results.
struct Counts {
  int specs = 0, invalid_specs = 0, configurations = 0, checks = 0;
  int as_expected = 0, new_violations = 0, no_longer_violated = 0, inconclusive = 0, vacuous = 0;
};
Counts count(const std::vector<SpecResult>& results);

// The gate's exit code class (docs/cli.md): 4 an unreadable spec, 3 an invalid spec, 1 an unexpected outcome,
// 2 inconclusive, 0 every outcome as expected.
int exit_code(const Counts& counts, const std::vector<SpecResult>& results);

}  // namespace qpcheck::gate
