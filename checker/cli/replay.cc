#include "checker/cli/replay.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checker/cli/exit_codes.h"
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
  app.add_option("--format", opt.format, "report format on stdout: text or json")
      ->transform(CLI::CheckedTransformer(std::map<std::string, Format>{{"text", Format::kText}, {"json", Format::kJson}}));
  app.add_option("--report-out", opt.report_out, "also write the JSON replay report to this file");
}

int run_replay(const ReplayOptions& opt, std::ostream& out, std::ostream& err, const DeviceFactory& factory) {
  std::ifstream in(opt.file, std::ios::binary);
  if (!in) {
    err << fmt::format("qpcheck: error: cannot read trace file '{}'\n", opt.file);
    return code(ExitCode::kUsage);
  }
  std::stringstream buf;
  buf << in.rdbuf();
  verbs::Plan plan;
  try {
    nlohmann::json doc = nlohmann::json::parse(buf.str());
    plan = verbs::make_plan(trace::from_json(doc));
  } catch (const nlohmann::json::parse_error& e) {
    err << fmt::format("qpcheck: error: {}: corrupt or truncated trace: {}\n", opt.file, e.what());
    return code(ExitCode::kInvalidSpec);
  } catch (const std::runtime_error& e) {  // from_json (schema, version, fields) and make_plan
    err << fmt::format("qpcheck: error: {}: cannot replay: {}\n", opt.file, e.what());
    return code(ExitCode::kInvalidSpec);
  }
  std::ofstream report;
  if (!opt.report_out.empty()) {
    report.open(opt.report_out);
    if (!report) {
      err << fmt::format("qpcheck: error: cannot open --report-out file '{}' for writing\n", opt.report_out);
      return code(ExitCode::kUsage);
    }
  }
  std::unique_ptr<verbs::Device> device =
      factory ? factory(opt) : verbs::make_rdma_device(opt.device, opt.address);
  verbs::ConductorOptions co;
  co.timeout = verbs::Millis(opt.timeout_ms);
  verbs::Outcome o = verbs::replay(plan, *device, co);
  nlohmann::json j = verbs::outcome_json(plan, o, opt.file, opt.device);
  if (opt.format == Format::kJson) out << trace::dump_json(j);
  else out << verbs::outcome_text(plan, o, opt.device);
  out.flush();
  if (report.is_open()) {
    report << trace::dump_json(j);
    report.flush();
    if (!report) {
      err << fmt::format("qpcheck: error: writing '{}' failed; the report above is complete\n", opt.report_out);
      return code(ExitCode::kInternal);
    }
  }
  switch (o.verdict) {
    case verbs::Verdict::kReproduced: return code(ExitCode::kReproduced);
    case verbs::Verdict::kNotReproduced: return code(ExitCode::kNotReproduced);
    case verbs::Verdict::kDiverged: return code(ExitCode::kDiverged);
    case verbs::Verdict::kEnvironment:
      err << fmt::format("qpcheck: error: device {}: {}\n", opt.device, o.reason);
      return code(ExitCode::kEnvironment);
  }
  return code(ExitCode::kInternal);
}

}  // namespace qpcheck::cli
