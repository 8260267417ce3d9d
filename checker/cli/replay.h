// `qpcheck replay TRACE.json --device NAME`: drive a trace written by `verify --trace-out` (a counterexample, or a
// `--witness` schedule of a spec that holds) against a live verbs device and say whether the device agrees
// (docs/replay.md). Exit codes: 10 REPRODUCED, 11 NOT REPRODUCED, 12 DIVERGED, 3 invalid trace (trace::ReportError,
// verbs::PlanError), 4 usage (the trace is not a regular file of at most 64 MiB, --device empty, --address not IPv4,
// --report-out is the trace file), 6 environment (no such device, no permission, no address).
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "checker/cli/verify.h"
#include "verbs_backend/device.h"

namespace qpcheck::cli {

struct ReplayOptions {
  std::string file;
  std::string device;                   // ibv device name: "rxe0", "siw0"
  std::string address;                  // IPv4 address on the device; empty: found through librdmacm
  uint64_t timeout_ms = 5000;           // each wait for a CM event or a completion
  Format format = Format::kText;
  std::string report_out;               // also write the JSON replay report here
  int cycles = 0;                       // a lasso: how many times its cycle is replayed (0: not given, 3)
  uint64_t cycle_window_ms = 0;         // a lasso: the quiet window after each repetition (0: not given, 1000)
};

// Makes the Device for a replay (the rdma-core one by default; tests pass a fake).
using DeviceFactory = std::function<std::unique_ptr<verbs::Device>(const ReplayOptions&)>;

void setup_replay(CLI::App& app, ReplayOptions& opt);

// Runs the replay; report to `out`, errors to `err`. Returns an ExitCode value.
int run_replay(const ReplayOptions& opt, std::ostream& out, std::ostream& err, const DeviceFactory& factory = {});

}  // namespace qpcheck::cli
