#include "checker/cli/show.h"

#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checker/cli/atomic_file.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/format_option.h"
#include "checker/cli/output_paths.h"
#include "checker/cli/verify.h"
#include "checker/trace/msc.h"
#include "checker/trace/render.h"

namespace qpcheck::cli {

void setup_show(CLI::App& app, ShowOptions& opt) {
  app.add_option("report", opt.report, "a JSON report (qpcheck verify --trace-out, gate --trace-dir)")->required();
  app.add_option("--svg", opt.svg, "write the message sequence chart as SVG (- for stdout)")
      ->check(path_validator());
  app.add_option("--html", opt.html, "write a standalone HTML page with the chart and the steps (- for stdout)")
      ->check(path_validator());
  app.add_option("--mermaid", opt.mermaid, "write Mermaid sequenceDiagram text (- for stdout)")
      ->check(path_validator());
  app.add_option("--names", opt.names, "names in the chart: user (libibverbs/librdmacm, default) or kernel (ib_*)")
      ->transform(enum_names<trace::Names>({{"user", trace::Names::kUser}, {"kernel", trace::Names::kKernel}}));
}

int run_show(const ShowOptions& opt, std::ostream& out, std::ostream& err) {
  trace::Trace t;
  try {
    t = trace::read_trace_file(opt.report);
  } catch (const trace::TraceFileError& e) {
    err << fmt::format("qpcheck: error: {}\n", e.what());
    return code(ExitCode::kUsage);
  } catch (const trace::ReportError& e) {
    err << fmt::format("qpcheck: error: {}: not a qpcheck report: {}\n", trace::printable(opt.report, 200), e.what());
    return code(ExitCode::kInvalidSpec);
  }
  // A counterexample, or a witness (a `holds` report written with verify --witness): the schedule to replay.
  if (t.steps.empty()) {
    err << fmt::format("qpcheck: error: {}: the verdict is '{}' and the report has no steps: there is neither a "
                       "counterexample nor a witness to draw (verify --witness writes one for a spec that holds)\n",
                       trace::printable(opt.report, 200), t.verdict);
    return code(ExitCode::kInvalidSpec);
  }
  t = trace::with_names(t, opt.names);
  struct Job {
    const std::string* path;
    std::string (*render)(const trace::Trace&);
  };
  std::vector<Job> jobs{{&opt.svg, trace::to_svg}, {&opt.html, trace::to_html}, {&opt.mermaid, trace::to_mermaid}};
  std::string mermaid_default = "-";
  if (opt.svg.empty() && opt.html.empty() && opt.mermaid.empty()) jobs = {{&mermaid_default, trace::to_mermaid}};
  // Two outputs on one file (or both on stdout), or an output on the report itself, would lose a result.
  if (std::string conflict = output_path_conflict({{"--svg", opt.svg}, {"--html", opt.html}, {"--mermaid", opt.mermaid}},
                                                  {{"report", opt.report}}, true);
      !conflict.empty()) {
    err << "qpcheck: error: " << conflict << "\n";
    return code(ExitCode::kUsage);
  }
  // Every file's temporary first: a bad path is a usage error before anything is written; each file is replaced
  // only once complete (atomic_file.h).
  std::vector<AtomicFile> files(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].path->empty() || *jobs[i].path == "-") continue;
    if (std::string why = files[i].open(*jobs[i].path); !why.empty()) {
      err << fmt::format("qpcheck: error: cannot write '{}': {}\n", trace::printable(*jobs[i].path, 200), why);
      return code(ExitCode::kUsage);
    }
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].path->empty()) continue;
    std::string text = jobs[i].render(t);
    if (*jobs[i].path == "-") {
      out << text;
      continue;
    }
    files[i].write(text);
    if (std::string why = files[i].commit(); !why.empty()) {
      err << fmt::format("qpcheck: error: writing '{}' failed ({}); the previous file is unchanged\n",
                         trace::printable(*jobs[i].path, 200), why);
      return code(ExitCode::kInternal);
    }
  }
  return code(ExitCode::kHolds);
}

}  // namespace qpcheck::cli
