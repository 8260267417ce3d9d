#include "checker/cli/walk.h"

#include <filesystem>
#include <ostream>
#include <set>

#include <fmt/format.h>

#include "checker/cli/atomic_file.h"
#include "checker/cli/exit_codes.h"
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
  std::error_code ec;
  std::filesystem::create_directories(opt.out, ec);
  if (ec || !std::filesystem::is_directory(opt.out)) {
    err << fmt::format("qpcheck: error: cannot create the folder '{}'\n", trace::printable(opt.out, 200));
    return code(ExitCode::kUsage);
  }
  model::ModelSystem system(*compiled.model);
  std::vector<model::Path> paths;
  bool complete = true;
  if (opt.all) {
    paths = explore::all_schedules(system, opt.max_length, opt.count, &complete);
  } else {
    std::set<std::vector<uint32_t>> seen;
    for (uint64_t k = 0; k < opt.count; ++k) {
      model::Path p = explore::random_walk(system, explore::WalkOptions{opt.seed + k, opt.max_length});
      if (seen.insert(p.actions).second) paths.push_back(std::move(p));
    }
  }
  size_t longest = 0, ends = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    model::CheckResult r;
    r.path = paths[i];
    trace::Trace t = trace::build_trace(system, r, opt.spec, opt.all ? "all-schedules" : "random-walk");
    std::string path = (std::filesystem::path(opt.out) / fmt::format("walk-{:04}.json", i + 1)).string();
    AtomicFile f;
    if (std::string why = f.open(path); !why.empty()) {
      err << fmt::format("qpcheck: error: cannot write '{}': {}\n", trace::printable(path, 200), why);
      return code(ExitCode::kUsage);
    }
    f.write(trace::dump_json(trace::to_json(t)));
    if (std::string why = f.commit(); !why.empty()) {
      err << fmt::format("qpcheck: error: writing '{}' failed ({})\n", trace::printable(path, 200), why);
      return code(ExitCode::kInternal);
    }
    longest = std::max(longest, paths[i].actions.size());
    ends += system.valid_end(paths[i].states.back().data());
  }
  out << fmt::format("walk: {} distinct schedule{} of {} written to {} (longest {} steps; {} end at a valid end)\n",
                     paths.size(), paths.size() == 1 ? "" : "s", trace::printable(opt.spec, 200),
                     trace::printable(opt.out, 200), longest, ends);
  if (!complete) out << fmt::format("walk: --count {} cut the enumeration short\n", opt.count);
  return code(ExitCode::kHolds);
}

}  // namespace qpcheck::cli
