#include "checker/cli/gate.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "checker/cli/atomic_file.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/format_option.h"
#include "checker/cli/interrupt.h"
#include "checker/cli/output_paths.h"
#include "checker/cli/progress.h"
#include "checker/gate/check.h"
#include "checker/report/report.h"
#include "checker/trace/msc.h"
#include "checker/trace/render.h"

namespace qpcheck::cli {

namespace fs = std::filesystem;

void setup_gate(CLI::App& app, GateOptions& opt) {
  app.add_option("paths", opt.paths, "spec files, or folders whose *.qpspec files are checked")->required();
  app.add_option("--format", opt.format, "summary on stdout: text or json")
      ->transform(format_names());
  app.add_option("--junit", opt.junit, "write a JUnit XML report to this file")
      ->check(path_validator());
  app.add_option("--sarif", opt.sarif, "write a SARIF 2.1.0 report to this file")
      ->check(path_validator());
  app.add_option("--json", opt.json, "write the JSON summary (schema qpcheck.gate) to this file")
      ->check(path_validator());
  app.add_option("--trace-dir", opt.trace_dir, "write each counterexample's JSON report to this folder")
      ->check(path_validator());
  app.add_option("--svg-dir", opt.svg_dir, "write each counterexample's message sequence chart (SVG) to this folder")
      ->check(path_validator());
  app.add_flag("--no-coverage", opt.no_coverage, "skip coverage and vacuity");
  app.add_flag("--no-deadlock", opt.no_deadlock, "do not check deadlocks");
  app.add_option("--max-states", opt.max_states, "per search: stop (inconclusive) after this many states")
      ->check(count_validator());
  app.add_option("--max-depth", opt.max_depth, "per search: do not explore beyond this many steps")
      ->check(count_validator());
  app.add_option("--max-memory", opt.max_memory,
                 "per search: memory limit (visited set, messages, specialised program), e.g. 4G; 0 = no limit");
  app.add_option("--time-limit", opt.time_limit, "per search: seconds")->check(seconds_validator());
  app.add_option("--lib-dir", opt.lib_dirs, "extra folder searched by import (repeatable)");
}

std::vector<std::string> collect_specs(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  std::vector<fs::path> seen;  // canonical paths: a spec named twice (as a file and in its folder) is checked once
  auto add = [&](const std::string& spec) {
    std::error_code ec;
    fs::path c = fs::weakly_canonical(spec, ec);
    if (!ec && std::find(seen.begin(), seen.end(), c) != seen.end()) return;
    seen.push_back(c);
    out.push_back(spec);
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.path().extension() == ".qpspec" && e.is_regular_file(ec)) in_dir.push_back(e.path().string());
      }
      std::sort(in_dir.begin(), in_dir.end());
      for (const std::string& spec : in_dir) add(spec);
    } else if (fs::is_regular_file(p, ec)) {
      add(p);
    } else {
      throw std::invalid_argument(fmt::format("'{}' is neither a spec file nor a folder{}", p,
                                              fs::is_symlink(p, ec) ? " (a dangling symbolic link or a loop)" : ""));
    }
  }
  return out;
}

std::string artefact_name(const std::string& spec, const std::string& config, const std::string& property) {
  std::string name = fs::path(spec).stem().string();
  if (config != "default") {
    name += ".";
    for (char c : config) name += c == ' ' ? '.' : c;
  }
  name += "." + property;
  for (char& c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' || c == '=')) c = '_';
  }
  return name;
}

int run_gate(const GateOptions& opt, std::ostream& out, std::ostream& err) {
  std::vector<std::string> specs;
  try {
    specs = collect_specs(opt.paths);
  } catch (const std::invalid_argument& e) {
    err << "qpcheck: error: " << e.what() << "\n";
    return code(ExitCode::kUsage);
  }
  if (specs.empty()) {
    err << "qpcheck: error: no .qpspec file found in the given paths\n";
    return code(ExitCode::kUsage);
  }
  gate::Options go;
  go.check_deadlock = !opt.no_deadlock;
  go.coverage = !opt.no_coverage;
  go.limits.max_states = opt.max_states;
  go.limits.max_depth = opt.max_depth;
  go.limits.time_limit_seconds = opt.time_limit;
  try {
    go.limits.max_memory_bytes = opt.max_memory.empty() ? default_memory_limit() : parse_bytes(opt.max_memory);
  } catch (const std::invalid_argument& e) {
    err << "qpcheck: error: " << e.what() << "\n";
    return code(ExitCode::kUsage);
  }
  go.search_path = lang::default_search_path(opt.lib_dirs);
  go.progress = progress_printer();
  go.interrupt = &install_interrupt_handlers();

  // stdout carries the summary (text, or JSON with --format json): a report there would be mixed into it.
  for (const auto& [name, path] : {std::pair<const char*, const std::string*>{"--junit", &opt.junit},
                                   {"--sarif", &opt.sarif}, {"--json", &opt.json}}) {
    if (*path == "-") {
      err << fmt::format("qpcheck: error: {} -: stdout carries the summary; give {} a file (for the JSON summary on "
                         "stdout, use --format json)\n", name, name);
      return code(ExitCode::kUsage);
    }
  }
  // No report may name a file the run reads: a spec, or a file it imports (through any link).
  const std::vector<std::pair<std::string, std::string>> inputs = spec_inputs(specs, go.search_path);
  std::string conflict = output_path_conflict({{"--junit", opt.junit}, {"--sarif", opt.sarif}, {"--json", opt.json}},
                                              inputs, false);
  if (!conflict.empty()) {
    err << "qpcheck: error: " << conflict << "\n";
    return code(ExitCode::kUsage);
  }

  // Each report's temporary file is created now (an unwritable path is exit 4 before any search) and renamed over
  // the report once complete: an interrupted or failed run leaves the previous report as it was.
  AtomicFile reports[3];
  const std::string* report_paths[3] = {&opt.junit, &opt.sarif, &opt.json};
  const char* report_options[3] = {"--junit", "--sarif", "--json"};
  for (int i = 0; i < 3; ++i) {
    if (report_paths[i]->empty()) continue;
    if (std::string why = reports[i].open(*report_paths[i]); !why.empty()) {
      err << fmt::format("qpcheck: error: cannot write {} '{}': {}\n", report_options[i],
                         trace::printable(*report_paths[i], 200), why);
      return code(ExitCode::kUsage);
    }
  }
  for (const std::string* d : {&opt.trace_dir, &opt.svg_dir}) {
    if (d->empty()) continue;
    std::error_code ec;
    fs::create_directories(*d, ec);
    if (!fs::is_directory(*d, ec)) {
      err << fmt::format("qpcheck: error: cannot create folder '{}'\n", trace::printable(*d, 200));
      return code(ExitCode::kUsage);
    }
  }

  std::vector<gate::SpecResult> results;
  for (const std::string& spec : specs) {
    results.push_back(gate::check_spec(spec, go));
    clear_progress();
    for (const std::string& w : results.back().warnings) err << w;
    if (results.back().error_code != 0) err << results.back().error;
  }

  gate::Counts counts = gate::count(results);
  int rc = gate::exit_code(counts, results);
  if (opt.format == Format::kJson) out << trace::dump_json(report::to_summary(results));
  else out << trace::terminal_text(report::to_text(results, !opt.no_coverage));
  out.flush();

  if (interrupt_flag().load()) {
    err << fmt::format("qpcheck: interrupted (signal {}): the searches stopped where they were; the results so far "
                       "are inconclusive and the reports are written\n", interrupt_signal());
  }
  bool ok = true;
  bool clobber = false;
  auto write_file = [&](AtomicFile& f, const std::string& text) {
    f.write(text);
    if (std::string why = f.commit(); !why.empty()) {
      err << fmt::format("qpcheck: error: writing '{}' failed ({}); the previous file is unchanged\n",
                         trace::printable(f.destination(), 200), why);
      ok = false;
    }
  };
  if (!opt.junit.empty()) write_file(reports[0], report::to_junit(results));
  if (!opt.sarif.empty()) write_file(reports[1], trace::dump_json(report::to_sarif(results)));
  if (!opt.json.empty()) write_file(reports[2], trace::dump_json(report::to_summary(results)));
  // Two specs with one stem (a/x.qpspec, b/x.qpspec) would give their counterexamples one file name: the later ones
  // get a suffix .2, .3... instead of overwriting the earlier ones.
  std::map<std::string, int> names_used;
  auto write_artefact = [&](const std::string& path, const std::string& text) {
    if (std::string c = output_path_conflict({{"--trace-dir/--svg-dir file", path}}, inputs, false); !c.empty()) {
      err << "qpcheck: error: " << c << " (not written)\n";
      clobber = true;
      return;
    }
    AtomicFile f;
    if (std::string why = f.open(path); !why.empty()) {
      err << fmt::format("qpcheck: error: cannot write '{}': {}\n", trace::printable(path, 200), why);
      ok = false;
      return;
    }
    write_file(f, text);
  };
  for (const gate::SpecResult& s : results) {
    for (const gate::ConfigResult& c : s.configs) {
      for (const gate::PropertyResult& p : c.properties) {
        if (!p.counterexample) continue;
        std::string name = artefact_name(s.spec, c.name, p.name);
        if (int n = ++names_used[name]; n > 1) name += fmt::format(".{}", n);
        if (!opt.trace_dir.empty()) {
          write_artefact((fs::path(opt.trace_dir) / (name + ".json")).string(),
                         trace::dump_json(trace::to_json(*p.counterexample)));
        }
        if (!opt.svg_dir.empty()) {
          write_artefact((fs::path(opt.svg_dir) / (name + ".svg")).string(), trace::to_svg(*p.counterexample));
        }
      }
    }
  }
  if (clobber) return code(ExitCode::kUsage);
  if (!ok) return code(ExitCode::kInternal);
  return rc;
}

}  // namespace qpcheck::cli
