// qpcheck's exit codes, grouped by class (docs/cli.md). Stable: CI gates depend on them.
#pragma once

#include "checker/model/check_result.h"

namespace qpcheck::cli {

enum class ExitCode : int {
  kHolds = 0,         // every property holds (exhaustive search)
  kViolated = 1,      // a property is violated; the counterexample is printed
  kInconclusive = 2,  // a limit (--max-states, --max-depth, --max-memory, --time-limit) ended the search first
  kInvalidSpec = 3,   // the spec does not parse or type-check (file:line:col diagnostics on stderr)
  kUsage = 4,         // bad command line: unknown option, bad --param, unreadable file
  kInternal = 5,      // a bug in qpcheck, or resources ran out (memory, disk for --trace-out)
  kEnvironment = 6,   // replay: no such verbs device, no RDMA support, no permission, no address on the device
  kReproduced = 10,   // replay: the device reproduced the counterexample
  kNotReproduced = 11,  // replay: the schedule ran to its end and the device behaved safely
  kDiverged = 12,     // replay: the device did something the model did not predict (at a named step)
  kConforms = 20,     // conform: the recorded run is a behaviour of the spec
  kDeviates = 21,     // conform: at a named event, no run of the spec does what the program did
  kConformInconclusive = 22,  // conform: a bound (--max-states, --time-limit) or an interrupt ended the check
  kConformViolates = 23,      // conform: the run is the spec's up to a failed call whose step fails a property
  kConformPrefix = 24,        // conform: a cut-off log (no trailer) ends inside a step of the spec: a prefix of a run
};

constexpr int code(ExitCode c) { return static_cast<int>(c); }

// The exit code of a search's outcome (verify with either engine): kHolds, kViolated or kInconclusive.
constexpr int code(model::Outcome o) {
  switch (o) {
    case model::Outcome::kHolds: return code(ExitCode::kHolds);
    case model::Outcome::kViolated: return code(ExitCode::kViolated);
    case model::Outcome::kInconclusive: return code(ExitCode::kInconclusive);
  }
  return code(ExitCode::kInternal);
}

}  // namespace qpcheck::cli
