#include "checker/cli/replay.h"

#include <arpa/inet.h>

#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checker/cli/atomic_file.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/format_option.h"
#include "checker/cli/output_paths.h"
#include "checker/cli/verify.h"
#include "checker/trace/render.h"
#include "verbs_backend/conductor.h"
#include "verbs_backend/rdma_device.h"

namespace qpcheck::cli {

void setup_replay(CLI::App& app, ReplayOptions& opt) {
  app.add_option("trace", opt.file, "a JSON report written by qpcheck verify --trace-out")->required();
  app.add_option("--device", opt.device, "the verbs device to replay on (rxe0, siw0, mlx5_0)")->required();
  app.add_option("--address", opt.address, "IPv4 address on the device (default: found through librdmacm)");
  app.add_option("--timeout-ms", opt.timeout_ms, "how long each wait for a CM event or completion lasts")
      ->check(CLI::Range(uint64_t{1}, uint64_t{600000}));
  app.add_option("--cycles", opt.cycles,
                 "a lasso (liveness counterexample): replay its cycle this many times after the prefix (default 3)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--cycle-window-ms", opt.cycle_window_ms,
                 "a lasso: after each repetition of the cycle, how long nothing may complete or arrive that the cycle "
                 "does not predict (default 1000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{600000}));
  app.add_option("--format", opt.format, "report format on stdout: text or json")
      ->transform(format_names());
  app.add_option("--report-out", opt.report_out, "also write the JSON replay report to this file")
      ->check(path_validator());
}


int run_replay(const ReplayOptions& opt, std::ostream& out, std::ostream& err, const DeviceFactory& factory) {
  // Usage errors first, before the trace is read or a device opened.
  if (opt.device.empty()) {
    err << "qpcheck: error: --device is empty: name a verbs device (rxe0, siw0, mlx5_0)\n";
    return code(ExitCode::kUsage);
  }
  in_addr addr{};
  if (!opt.address.empty() && ::inet_pton(AF_INET, opt.address.c_str(), &addr) != 1) {
    err << fmt::format("qpcheck: error: --address {} is not an IPv4 address (a.b.c.d)\n", trace::quote_value(opt.address));
    return code(ExitCode::kUsage);
  }
  if (!opt.report_out.empty() && same_file(opt.report_out, opt.file)) {
    err << fmt::format("qpcheck: error: --report-out '{}' is the trace file itself; writing it would destroy the "
                       "trace\n", trace::printable(opt.report_out, 200));
    return code(ExitCode::kUsage);
  }
  std::string file = trace::printable(opt.file, 200);
  verbs::Plan plan;
  try {
    plan = verbs::make_plan(trace::read_trace_file(opt.file));
  } catch (const trace::TraceFileError& e) {
    err << fmt::format("qpcheck: error: {}\n", e.what());
    return code(ExitCode::kUsage);
  } catch (const trace::ReportError& e) {  // JSON syntax, schema, version, field types and ranges, step order
    err << fmt::format("qpcheck: error: {}: invalid trace: {}\n", file, e.what());
    return code(ExitCode::kInvalidSpec);
  } catch (const verbs::PlanError& e) {  // replay operations and their arguments
    err << fmt::format("qpcheck: error: {}: cannot replay: {}\n", file, e.what());
    return code(ExitCode::kInvalidSpec);
  }
  if (plan.cycle_start < 0 && (opt.cycles != 0 || opt.cycle_window_ms != 0)) {
    err << fmt::format("qpcheck: error: {} applies to a lasso (a liveness counterexample), and {} is not one\n",
                       opt.cycles != 0 ? "--cycles" : "--cycle-window-ms", file);
    return code(ExitCode::kUsage);
  }
  // Before the report file is opened: in qpcheck, make_rdma_device hands the run over to qpcheck-full (backends.h).
  std::unique_ptr<verbs::Device> device =
      factory ? factory(opt) : verbs::make_rdma_device(opt.device, opt.address);
  AtomicFile report;  // replaced only once complete (atomic_file.h)
  if (!opt.report_out.empty()) {
    if (std::string why = report.open(opt.report_out); !why.empty()) {
      err << fmt::format("qpcheck: error: cannot write --report-out file '{}': {}\n",
                         trace::printable(opt.report_out, 200), why);
      return code(ExitCode::kUsage);
    }
  }
  verbs::ConductorOptions co;
  co.timeout = verbs::Millis(opt.timeout_ms);
  if (opt.cycles != 0) co.cycles = opt.cycles;
  if (opt.cycle_window_ms != 0) co.cycle_window = verbs::Millis(opt.cycle_window_ms);
  verbs::Outcome o = verbs::replay(plan, *device, co);
  nlohmann::json j = verbs::outcome_json(plan, o, opt.file, opt.device);
  if (opt.format == Format::kJson) out << trace::dump_json(j);
  else out << verbs::outcome_text(plan, o, opt.device);
  out.flush();
  if (report.is_open()) {
    report.write(trace::dump_json(j));
    if (std::string why = report.commit(); !why.empty()) {
      err << fmt::format("qpcheck: error: writing '{}' failed ({}); the report above is complete\n",
                         trace::printable(opt.report_out, 200), why);
      return code(ExitCode::kInternal);
    }
  }
  switch (o.verdict) {
    case verbs::Verdict::kReproduced: return code(ExitCode::kReproduced);
    case verbs::Verdict::kNotReproduced: return code(ExitCode::kNotReproduced);
    case verbs::Verdict::kDiverged: return code(ExitCode::kDiverged);
    case verbs::Verdict::kEnvironment:
      err << fmt::format("qpcheck: error: device {}: {}\n", trace::printable(opt.device, 80), trace::printable(o.reason));
      return code(ExitCode::kEnvironment);
  }
  return code(ExitCode::kInternal);
}

}  // namespace qpcheck::cli
