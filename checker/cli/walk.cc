#include "checker/cli/walk.h"

#include <atomic>
#include <chrono>
#include <regex>
#include <filesystem>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "checker/cli/atomic_file.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/interrupt.h"
#include "checker/cli/verify.h"
#include "checker/explore/random_walk.h"
#include "checker/frontend/frontend.h"
#include "checker/model/model_system.h"
#include "checker/trace/build.h"
#include "checker/trace/render.h"

namespace qpcheck::cli {

void setup_walk(CLI::App& app, WalkOptions& opt) {
  app.add_option("spec", opt.spec, "the .qpspec to draw schedules from")->required();
  app.add_option("--out", opt.out, "folder for the schedules (walk-0001.json, ...); created if missing")
      ->required()
      ->check(path_validator());
  app.add_option("--param", opt.params, "override a parameter: NAME=VALUE (repeatable)");
  app.add_option("--lib-dir", opt.lib_dirs, "extra folder searched by import (repeatable)");
  app.add_option("--count", opt.count, "random walks to draw (each distinct one is written)")
      ->check(count_validator())
      ->capture_default_str();
  app.add_option("--seed", opt.seed, "walk k is drawn with seed SEED+k")->check(count_validator())->capture_default_str();
  app.add_option("--max-length", opt.max_length, "steps per schedule")->check(count_validator())->capture_default_str();
  app.add_flag("--all", opt.all, "every schedule of at most --max-length steps, depth-first (at most --count of them)");
  app.add_option("--time-limit", opt.time_limit, "stop after this many seconds, keeping what was written (0: none)")
      ->check(seconds_validator());
}

int run_walk(const WalkOptions& opt, std::ostream& out, std::ostream& err) {
  frontend::Spec spec;
  lang::Compiled compiled;
  if (auto f = spec.attempt([&] {
        lang::ParamOverrides overrides = frontend::parse_param_assignments(opt.params);
        spec.read(opt.spec, lang::default_search_path(opt.lib_dirs));
        compiled = spec.compile(overrides);
      })) {
    err << f->text;
    return code(f->kind == frontend::Failure::Kind::kSpec ? ExitCode::kInvalidSpec : ExitCode::kUsage);
  }
  err << spec.render(compiled.warnings);
  if (opt.max_length == 0) {
    err << "qpcheck: error: --max-length 0 gives schedules without a step: nothing to replay\n";
    return code(ExitCode::kUsage);
  }
  std::error_code ec;
  std::filesystem::create_directories(opt.out, ec);
  if (ec || !std::filesystem::is_directory(opt.out)) {
    err << fmt::format("qpcheck: error: cannot create the folder '{}'\n", trace::printable(opt.out, 200));
    return code(ExitCode::kUsage);
  }
  // An earlier walk's schedules would be replayed with these (a glob of DIR/*.json): removed first, and said so.
  size_t removed = 0;
  const std::regex ours("walk-[0-9]{4,}\\.json");
  for (const auto& e : std::filesystem::directory_iterator(opt.out, ec)) {
    if (e.is_regular_file() && std::regex_match(e.path().filename().string(), ours)) {
      removed += std::filesystem::remove(e.path(), ec) ? 1 : 0;
    }
  }
  if (removed > 0) {
    out << fmt::format("walk: removed {} schedule{} of an earlier walk from {}\n", removed, removed == 1 ? "" : "s",
                       trace::printable(opt.out, 200));
  }
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = opt.time_limit > 0 ? deadline_after(start, opt.time_limit)
                                           : std::chrono::steady_clock::time_point::max();
  const std::atomic<bool>& interrupted = install_interrupt_handlers();
  model::ModelSystem system(*compiled.model);
  size_t written = 0, longest = 0, ends = 0;
  std::string failure;  // a file that could not be written
  std::string stopped;  // why the walk stopped early
  auto keep_going = [&] {
    if (interrupted.load()) stopped = "interrupted (SIGINT or SIGTERM)";
    else if (std::chrono::steady_clock::now() >= deadline) stopped = "the --time-limit ran out";
    return stopped.empty();
  };
  // Writes one schedule as walk-NNNN.json; false when it could not.
  auto write = [&](const model::Path& p) {
    model::CheckResult r;
    r.path = p;
    trace::Trace t = trace::build_trace(system, r, opt.spec, opt.all ? "all-schedules" : "random-walk");
    std::string path = (std::filesystem::path(opt.out) / fmt::format("walk-{:04}.json", written + 1)).string();
    AtomicFile f;
    if (std::string why = f.open(path); !why.empty()) {
      failure = fmt::format("cannot write '{}': {}", trace::printable(path, 200), why);
      return false;
    }
    f.write(trace::dump_json(trace::to_json(t)));
    if (std::string why = f.commit(); !why.empty()) {
      failure = fmt::format("writing '{}' failed ({})", trace::printable(path, 200), why);
      return false;
    }
    ++written;
    longest = std::max(longest, p.actions.size());
    ends += system.valid_end(p.states.back().data());
    return true;
  };
  bool complete = true;
  if (opt.all) {
    complete = explore::for_each_schedule(system, opt.max_length, [&](const model::Path& p) {
      if (opt.count && written >= opt.count) return false;
      return keep_going() && write(p);
    });
  } else {
    std::set<std::vector<uint32_t>> seen;
    for (uint64_t k = 0; k < opt.count && keep_going(); ++k) {
      model::Path p = explore::random_walk(system, explore::WalkOptions{opt.seed + k, opt.max_length});
      if (seen.insert(p.actions).second && !write(p)) break;
    }
  }
  if (!failure.empty()) {
    err << "qpcheck: error: " << failure << fmt::format(" ({} schedules written before it)\n", written);
    return code(failure.rfind("cannot write", 0) == 0 ? ExitCode::kUsage : ExitCode::kInternal);
  }
  out << fmt::format("walk: {} distinct schedule{} of {} written to {} (longest {} steps; {} end at a valid end)\n",
                     written, written == 1 ? "" : "s", trace::printable(opt.spec, 200), trace::printable(opt.out, 200),
                     longest, ends);
  if (!stopped.empty()) {
    out << fmt::format("walk: stopped early: {}; the schedules written so far are complete files\n", stopped);
    return code(ExitCode::kInconclusive);
  }
  if (opt.all && !complete) out << fmt::format("walk: --count {} cut the enumeration short\n", opt.count);
  return code(ExitCode::kHolds);
}

}  // namespace qpcheck::cli
