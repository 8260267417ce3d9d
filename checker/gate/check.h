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
#include "checker/trace/trace.h"

namespace qpcheck::gate {

struct Options {
  explore::Limits limits;                    // per exploration (one reachability run + one per violated property)
  bool check_deadlock = true;
  bool coverage = true;                      // actions/statements never executed, vacuous properties
  std::vector<std::string> lib_dirs;         // import search path (after the importing file's folder)
  std::function<void(const explore::Stats&)> progress;  // explore::Options::progress of every run
  // explore::Options::interrupt of every run: once set, each remaining search stops at once (limit "interrupted"),
  // so every configuration still gets a result, inconclusive where nothing was decided.
  const std::atomic<bool>* interrupt = nullptr;
};

// How an outcome compares with its expectation.
enum class Status {
  kAsExpected,        // holds as expected, or violated as expected
  kNewViolation,      // expected to hold, violated
  kNoLongerViolated,  // expected to be violated, holds
  kInconclusive,      // a limit ended the search before the property was decided
};
const char* status_name(Status s);  // "as-expected", "new-violation", "no-longer-violated", "inconclusive"

struct PropertyResult {
  std::string name;
  std::string kind;                 // "invariant", "fail", "deadlock", "runtime_error"
  trace::SourceRef source;          // the invariant / first fail statement; empty file for deadlock, runtime_error
  bool expected_violated = false;
  trace::SourceRef expected_at;     // the `expect` declaration; empty file: the default (holds)
  std::string actual;               // "holds", "violated", "inconclusive"
  // violated: a shortest counterexample for this property alone (BFS with the other properties ignored)
  std::optional<trace::Trace> counterexample;
  bool vacuous = false;             // holds, and nothing it talks about ever happens (docs/gate.md)
  std::string vacuity;              // why, when vacuous
  Status status() const;
};

struct Coverage {
  bool complete = false;            // the reachability run was exhaustive (no limit hit)
  uint64_t actions = 0;             // process statements x instances + rule instances
  uint64_t actions_fired = 0;
  std::vector<trace::SourceRef> statements_never_executed;  // process statements no instance ever executed
  std::vector<std::string> rules_never_fired;               // rule instances, "rnr_nak(e=PASSIVE)"
};

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
