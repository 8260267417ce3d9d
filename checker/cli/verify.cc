#include "checker/cli/verify.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <chrono>
#include <optional>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checker/cli/atomic_file.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/format_option.h"
#include "checker/cli/interrupt.h"
#include "checker/cli/mpi_transport.h"
#include "checker/cli/output_paths.h"
#include "checker/cli/verify_symbolic.h"
#include "checker/cli/progress.h"
#include "checker/cli/properties.h"
#include "checker/frontend/frontend.h"
#include "checker/gate/liveness_runs.h"
#include "checker/gate/property_runs.h"
#include "checker/lang/properties.h"
#include "checker/model/model_system.h"
#include "checker/model/symmetry.h"
#include "checker/explore/transport.h"
#include "checker/trace/build.h"
#include "checker/trace/render.h"

namespace qpcheck::cli {

// CLI11's numeric checks let "nan", "-1" (wrapped into an unsigned) and 300-digit ranges through; these do not.
CLI::Validator count_validator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) {
          return "expected a whole number >= 0, got '" + s + "'";
        }
        return "";
      },
      "N>=0");
}

std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point start, double seconds) {
  using clock = std::chrono::steady_clock;
  double room = std::chrono::duration<double>(clock::time_point::max() - start).count();
  if (!(seconds < room * 0.999)) return clock::time_point::max();
  return start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
}

CLI::Validator seconds_validator(double max_seconds) {
  return CLI::Validator(
      [max_seconds](std::string& s) -> std::string {
        size_t pos = 0;
        double v = 0;
        try {
          v = std::stod(s, &pos);
        } catch (...) {
          pos = 0;
        }
        if (pos == 0 || pos != s.size() || !std::isfinite(v) || v < 0 || v > max_seconds) {
          return "expected a number of seconds >= 0, got '" + s + "'";
        }
        return "";
      },
      "SECONDS>=0");
}

CLI::Validator path_validator() {
  return CLI::Validator(
      [](std::string& s) -> std::string { return s.empty() ? "a file name is needed, got an empty one" : ""; },
      "FILE");
}

void setup_verify(CLI::App& app, VerifyOptions& opt) {
  app.add_option("file", opt.file, "the .qpspec file to verify")->required();
  app.add_option("-p,--param", opt.params, "override a spec parameter: NAME=VALUE (repeatable)");
  app.add_option("--strategy", opt.strategy, "search order: bfs (shortest counterexample) or dfs")
      ->transform(enum_names<explore::Strategy>({{"bfs", explore::Strategy::kBfs}, {"dfs", explore::Strategy::kDfs}}));
  app.add_option("--format", opt.format, "report format on stdout: text or json")
      ->transform(format_names());
  app.add_option("--trace-out", opt.trace_out, "also write the JSON report (with the counterexample) to this file")
      ->check(path_validator());
  app.add_option("--max-states", opt.max_states, "stop (inconclusive) after this many distinct states; 0 = no limit")
      ->check(count_validator());
  app.add_option("--max-depth", opt.max_depth, "do not explore beyond this many steps; 0 = no limit")
      ->check(count_validator());
  app.add_option("--max-memory", opt.max_memory,
                 "stop (inconclusive) when the search holds this much (visited set, messages, specialised program), "
                 "e.g. 4G; 0 = no limit; default 3/4 of physical memory");
  app.add_option("--time-limit", opt.time_limit, "stop (inconclusive) after this many seconds; 0 = no limit")
      ->check(seconds_validator());
  app.add_option("--lib-dir", opt.lib_dirs, "extra folder searched by import (repeatable)");
  app.add_flag("--no-deadlock", opt.no_deadlock, "do not report deadlocks");
  app.add_flag("--no-fairness", opt.no_fairness,
               "check liveness properties with no fairness at all, ignoring the spec's `fair` declarations (does a "
               "property hold only because of them?)");
  app.add_option("--threads", opt.threads,
                 "BFS threads (1-256), each owning a hash partition of the visited set; same states, transitions, "
                 "verdict and counterexample length as one thread (at a deadlock the counts may differ)")
      ->check(CLI::Range(1, 256));
  app.add_option("--storage", opt.storage,
                 "visited set: exact (default; proves properties), hash-compaction (64-bit fingerprints) or bitstate; "
                 "the last two can miss states: without a violation their verdict is inconclusive")
      ->transform(enum_names<explore::Storage>({{"exact", explore::Storage::kExact},
                                                {"hash-compaction", explore::Storage::kHashCompaction},
                                                {"bitstate", explore::Storage::kBitstate}}));
  app.add_option("--bitstate-bits", opt.bitstate_bits, "bitstate: the bit array has 2^N bits (10-36; 30 = 128 MiB)")
      ->check(CLI::Range(10, 36));
  app.add_flag("--por", opt.por,
               "partial-order reduction (ample sets over independent groups of actions, cycle proviso): fewer states, "
               "same verdict; counterexamples not promised shortest");
  app.add_flag("--no-symmetry", opt.no_symmetry,
               "store every state even when the spec declares `symmetric TYPE;` (the same verdicts, more states)");
  app.add_option("--symmetry-budget", opt.symmetry_budget,
                 "symmetry: at most this many renamings tried per state (default 5040 = 7!, exact for up to 7 "
                 "values); beyond it a state keeps the first, which is sound but may store an orbit twice")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_flag("--distributed", opt.distributed,
               "run the search over the ranks of an MPI job (mpirun -np N qpcheck verify SPEC --distributed): each "
               "rank stores and expands the states whose hash it owns; the same verdict, counts and counterexample "
               "length as one process; rank 0 prints the report");
  app.add_option("--checkpoint", opt.checkpoint_dir,
                 "--distributed: write each rank's states and frontier to this folder at a layer boundary (at most "
                 "every --checkpoint-every seconds), so that --resume can go on from there")
      ->check(path_validator());
  app.add_option("--checkpoint-every", opt.checkpoint_every,
                 "--checkpoint: seconds between checkpoints (default 60; 0: every layer)")
      ->check(seconds_validator());
  app.add_option("--resume", opt.resume_dir,
                 "--distributed: go on from the last checkpoint in this folder (written by as many ranks, for the "
                 "same spec, parameters and properties)")
      ->check(path_validator());
  app.add_option("--hashes", opt.hashes, "bitstate: hash functions (bits set) per state (1-16; default 3)")
      ->check(CLI::Range(1, 16));
  setup_verify_symbolic(app, opt);
  app.add_flag("--witness", opt.witness,
               "when every property holds, include a shortest run to a terminal valid end (for qpcheck replay)");
  app.add_option("--property", opt.properties,
                 "check only this property (an invariant, a fail/assert property, deadlock or runtime_error; "
                 "repeatable); the others are not reported and their failing steps end a path");
  app.add_flag("--all-violations", opt.all_violations,
               "explore every reachable state and report every violated property, each with its own shortest "
               "counterexample (as qpcheck gate does), instead of stopping at the first violation");
  app.add_option("--names", opt.names,
                 "names in the text report: user (libibverbs/librdmacm, default) or kernel (ib_post_recv, IB_WC_*); "
                 "the JSON report keeps the user-space names (replayable)")
      ->transform(enum_names<trace::Names>({{"user", trace::Names::kUser}, {"kernel", trace::Names::kKernel}}));
  app.parse_complete_callback([&app, &opt] {
    opt.given.clear();
    for (const CLI::Option* o : app.get_options()) {
      if (o->count() > 0 && !o->get_lnames().empty()) opt.given.push_back("--" + o->get_lnames().front());
    }
  });
}

std::string option_conflict(const VerifyOptions& opt) {
  auto given = [&](const char* name) { return std::find(opt.given.begin(), opt.given.end(), name) != opt.given.end(); };
  auto first_given = [&](std::initializer_list<const char*> names) -> std::string {
    for (const char* n : names) {
      if (given(n)) return n;
    }
    return "";
  };
  if (opt.all_violations) {
    std::string o = first_given({"--strategy", "--threads", "--storage", "--bitstate-bits", "--hashes", "--por",
                                 "--witness", "--engine"});
    if (!o.empty()) {
      return fmt::format("{} cannot be combined with --all-violations (one breadth-first reachability run with "
                         "exact storage, then one per violated property)", o);
    }
  }
  if (opt.engine != Engine::kExplicit) {
    std::string o = first_given({"--strategy", "--threads", "--storage", "--bitstate-bits", "--hashes", "--por",
                                 "--max-states", "--max-depth", "--max-memory", "--time-limit", "--witness",
                                 "--no-fairness"});
    if (!o.empty()) {
      return fmt::format("{} applies to the explicit engine only, not to --engine {} (which takes --depth, "
                         "--smt-timeout and --smt-rlimit)", o, opt.engine == Engine::kBmc ? "bmc" : "kind");
    }
  } else if (std::string o = first_given({"--depth", "--smt-timeout", "--smt-rlimit"}); !o.empty()) {
    return fmt::format("{} applies to --engine bmc or kind only (the explicit engine takes --max-depth, "
                       "--time-limit)", o);
  }
  if (opt.engine == Engine::kExplicit && opt.storage != explore::Storage::kBitstate) {
    if (std::string o = first_given({"--bitstate-bits", "--hashes"}); !o.empty()) {
      return fmt::format("{} applies to --storage bitstate only", o);
    }
  }
  if (opt.distributed) {
    std::string o = first_given({"--strategy", "--threads", "--storage", "--bitstate-bits", "--hashes", "--por",
                                 "--witness", "--all-violations", "--engine"});
    if (!o.empty()) {
      return fmt::format("{} cannot be combined with --distributed (a breadth-first search with exact storage, "
                         "partitioned over the MPI job's ranks)", o);
    }
  } else if (std::string o = first_given({"--checkpoint", "--checkpoint-every", "--resume"}); !o.empty()) {
    return fmt::format("{} applies to --distributed only", o);
  }
  if (given("--checkpoint-every") && !given("--checkpoint")) return "--checkpoint-every applies to --checkpoint only";
  if (opt.threads > 1 && opt.strategy == explore::Strategy::kDfs) {
    return "--threads runs a breadth-first search: it cannot be combined with --strategy dfs";
  }
  return "";
}

uint64_t default_memory_limit() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4 * 3;
}

uint64_t parse_bytes(const std::string& text) {
  size_t pos = 0;
  uint64_t v = 0;
  auto bad = [&]() { return std::invalid_argument(fmt::format("--max-memory {}: expected a size such as 512M or 4G", text)); };
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) throw bad();
  try {
    v = std::stoull(text, &pos);
  } catch (...) {
    throw bad();
  }
  std::string suffix = text.substr(pos);
  uint64_t mult = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB") mult = 1ULL << 10;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB") mult = 1ULL << 20;
  else if (suffix == "G" || suffix == "g" || suffix == "GiB") mult = 1ULL << 30;
  else if (!suffix.empty()) throw std::invalid_argument(fmt::format("--max-memory {}: unknown unit '{}'", text, suffix));
  if (v > UINT64_MAX / mult) throw std::invalid_argument(fmt::format("--max-memory {}: too large", text));
  return v * mult;
}

namespace {

// What SIGTERM prints on rank 0 of a distributed search: mpirun ends the other ranks with it when one dies (or
// the job is interrupted), while they may be blocked in a collective call. Written by the progress callback, read by
// the handler (write(2) only).
char g_ended[1024] = "qpcheck: the distributed search was ended by SIGTERM before its first layer was complete (mpirun "
                     "ends the job's ranks when one dies or the job is interrupted)\n";
size_t g_ended_len = std::strlen(g_ended);
extern "C" void on_distributed_sigterm(int) {
  ssize_t w = ::write(2, g_ended, g_ended_len);
  (void)w;
  ::_exit(code(ExitCode::kInconclusive));
}

// The checkpoint's fingerprint: FNV-1a over every file the spec reads and every choice that changes the search.
std::string fingerprint(const std::vector<std::string>& files, const VerifyOptions& opt) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    h = (h ^ 0xff) * 0x100000001b3ULL;
  };
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    mix(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
  }
  for (const std::string& p : opt.params) mix(p);
  for (const std::string& p : opt.properties) mix(p);
  mix(fmt::format("{} {} {}", opt.no_deadlock, opt.no_symmetry, opt.symmetry_budget));
  return fmt::format("{:016x}", h);
}

int verify_run(const VerifyOptions& opt, std::ostream& out, std::ostream& err, MpiTransport* net,
               std::ostream& rank_err) {
  // --time-limit covers the whole run, the front end included.
  const auto start = std::chrono::steady_clock::now();
  if (std::string conflict = option_conflict(opt); !conflict.empty()) {
    err << "qpcheck: error: " << conflict << "\n";
    return code(ExitCode::kUsage);
  }
  if (opt.trace_out.empty() && std::find(opt.given.begin(), opt.given.end(), "--trace-out") != opt.given.end()) {
    err << "qpcheck: error: --trace-out needs a file name (it was given an empty one)\n";
    return code(ExitCode::kUsage);
  }
  // --trace-out on the spec itself would replace the spec by the report.
  if (std::string conflict = output_path_conflict({{"--trace-out", opt.trace_out}}, {{"spec", opt.file}}, false);
      !conflict.empty()) {
    err << "qpcheck: error: " << conflict << "\n";
    return code(ExitCode::kUsage);
  }
  if (wants_symbolic(opt)) {
    return run_verify_symbolic(opt, out, err);  // it passes the flag on to the solver (symbolic::Options::interrupt)
  }
  frontend::Spec spec;
  lang::ParamOverrides overrides;
  if (auto f = spec.attempt([&] { overrides = frontend::parse_param_assignments(opt.params); })) {
    err << f->text;
    return code(ExitCode::kUsage);
  }
  explore::Options eo;
  eo.strategy = opt.strategy;
  eo.check_deadlock = !opt.no_deadlock;
  eo.threads = opt.threads;
  eo.storage = opt.storage;
  eo.bitstate_log2_bits = opt.bitstate_bits;
  eo.bitstate_hashes = opt.hashes;
  eo.por = opt.por;
  if (opt.por && (opt.strategy != explore::Strategy::kBfs || opt.threads > 1 || opt.storage != explore::Storage::kExact)) {
    err << "qpcheck: error: --por runs breadth-first on one thread with exact storage (no --strategy dfs, --threads, "
           "--storage)\n";
    return code(ExitCode::kUsage);
  }
  if (opt.storage != explore::Storage::kExact && (opt.strategy != explore::Strategy::kBfs || opt.threads > 1)) {
    err << "qpcheck: error: --storage hash-compaction and bitstate search breadth-first on one thread (no --strategy "
           "dfs, no --threads)\n";
    return code(ExitCode::kUsage);
  }
  eo.witness = opt.witness;
  eo.limits.max_states = opt.max_states;
  eo.limits.max_depth = opt.max_depth;
  eo.limits.time_limit_seconds = opt.time_limit;
  try {
    eo.limits.max_memory_bytes = opt.max_memory.empty() ? default_memory_limit() : parse_bytes(opt.max_memory);
  } catch (const std::invalid_argument& e) {
    err << "qpcheck: error: " << e.what() << "\n";
    return code(ExitCode::kUsage);
  }
  eo.interrupt = &install_interrupt_handlers();

  lang::Compiled compiled;
  if (auto f = spec.attempt([&] {
        spec.read(opt.file, lang::default_search_path(opt.lib_dirs));
        compiled = spec.compile(overrides);
        spec.matrix(*compiled.model, true);  // diagnostics only; `qpcheck gate` runs it
      })) {
    err << f->text;
    return code(f->kind == frontend::Failure::Kind::kSpec ? ExitCode::kInvalidSpec : ExitCode::kUsage);
  }
  err << spec.render(compiled.warnings);
  lang::PropertyPlan plan;
  try {
    plan = lang::plan_properties(*compiled.model, opt.properties, !opt.no_deadlock);
  } catch (const lang::UsageError& e) {
    err << "qpcheck: error: " << e.what() << "\n";
    return code(ExitCode::kUsage);
  }
  eo.check_deadlock = plan.deadlock;
  const std::vector<std::string> liveness = plan.liveness_names();
  if (opt.no_fairness && liveness.empty()) {
    err << "qpcheck: error: --no-fairness applies to liveness properties, and none is checked here\n";
    return code(ExitCode::kUsage);
  }
  if (opt.no_fairness) compiled.model->fairness.clear();
  if (net != nullptr && !liveness.empty()) {
    err << fmt::format("qpcheck: error: --distributed checks safety properties; the liveness propert{} {} need{} "
                       "one process (or leave {} out with --property)\n", liveness.size() == 1 ? "y" : "ies",
                       fmt::join(liveness, ", "), liveness.size() == 1 ? "s" : "", liveness.size() == 1 ? "it" : "them");
    return code(ExitCode::kUsage);
  }
  if (!liveness.empty()) {
    // Reductions that are unsound for liveness, and engines that cannot check it (docs/liveness.md).
    const char* bad = opt.por ? "--por (its ample sets keep deadlocks and safety violations, not cycles)"
                      : opt.storage != explore::Storage::kExact
                          ? "--storage hash-compaction or bitstate (a missed state can hide a cycle)"
                          : nullptr;
    if (bad != nullptr) {
      err << fmt::format("qpcheck: error: {} cannot be combined with the liveness propert{} {}: check {} with exact "
                         "storage and no --por, or leave {} out with --property\n",
                         bad, liveness.size() == 1 ? "y" : "ies", fmt::join(liveness, ", "),
                         liveness.size() == 1 ? "it" : "them", liveness.size() == 1 ? "it" : "them");
      return code(ExitCode::kUsage);
    }
  }

  // Symmetry reduction (model/symmetry.h): safety only, exact storage or partial, any thread count.
  const bool symmetric = compiled.model->symmetry.has_value() && !opt.no_symmetry && opt.engine == Engine::kExplicit;
  if (symmetric) {
    const std::string& ty = compiled.model->symmetry->name;
    std::string bad;
    if (!liveness.empty()) {
      bad = fmt::format("the liveness propert{} {} (a cycle of orbit representatives need not be a cycle of the "
                        "system; check {} with --no-symmetry, or leave {} out with --property)",
                        liveness.size() == 1 ? "y" : "ies", fmt::join(liveness, ", "),
                        liveness.size() == 1 ? "it" : "them", liveness.size() == 1 ? "it" : "them");
    } else if (opt.por) {
      bad = "--por (ample sets are computed for the model's own states, not for orbit representatives)";
    } else if (opt.all_violations) {
      bad = "--all-violations (its per-property runs store every state)";
    }
    if (!bad.empty()) {
      err << fmt::format("qpcheck: error: symmetry reduction (symmetric {}, {}) cannot be combined with {}; add "
                         "--no-symmetry to search without it\n", ty,
                         spec.sources().location(compiled.model->symmetry->span), bad);
      return code(ExitCode::kUsage);
    }
  } else if (opt.symmetry_budget != 0 && !opt.no_symmetry) {
    err << "qpcheck: error: --symmetry-budget applies to a spec that declares `symmetric TYPE;` (this one does not)"
        << (opt.engine != Engine::kExplicit ? ", with the explicit engine" : "") << "\n";
    return code(ExitCode::kUsage);
  }

  // No output may name a file the spec reads (an imported library, a hard link to the spec).
  std::vector<std::pair<std::string, std::string>> inputs{{"spec", opt.file}};
  std::vector<std::string> read = spec.files();
  for (size_t i = 1; i < read.size(); ++i) inputs.emplace_back("imported file", read[i]);
  if (std::string conflict = output_path_conflict({{"--trace-out", opt.trace_out}}, inputs, false); !conflict.empty()) {
    err << "qpcheck: error: " << conflict << "\n";
    return code(ExitCode::kUsage);
  }
  // Create the trace file's temporary before the search: a bad path is a usage error now, not a lost result later;
  // the file itself is replaced only once the report is complete (atomic_file.h).
  AtomicFile trace_file;
  if (!opt.trace_out.empty()) {
    if (std::string why = trace_file.open(opt.trace_out); !why.empty()) {
      err << fmt::format("qpcheck: error: cannot write --trace-out file '{}': {}\n",
                         trace::printable(opt.trace_out, 200), why);
      return code(ExitCode::kUsage);
    }
  }

  model::BuildLimits build = gate::build_limits(eo.limits, eo.interrupt);
  if (opt.time_limit > 0) {
    build.deadline = deadline_after(start, opt.time_limit);
  }
  // The whole model's system when every property is checked (a restricted run builds its own from a cut-down model).
  std::optional<model::ModelSystem> system;
  if (plan.everything && !opt.all_violations) system.emplace(*compiled.model, build);
  if (opt.time_limit > 0) {
    // What the front end and the build left of the limit (a search with no time left stops at once).
    double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    eo.limits.time_limit_seconds = std::max(1e-9, opt.time_limit - spent);
  }
  eo.progress = progress_printer();
  if (opt.all_violations) {
    return report_all_violations(*compiled.model, plan, opt.file, eo, opt.format == Format::kJson, out, err,
                                 trace_file.is_open() ? &trace_file : nullptr, opt.trace_out, opt.names);
  }
  const char* strategy = opt.strategy == explore::Strategy::kBfs ? "bfs" : "dfs";
  model::CheckResult result;
  trace::Trace t;
  std::optional<model::SymmetricSystem> reduced;
  if (net != nullptr && !opt.checkpoint_dir.empty()) {
    // A folder that cannot hold the checkpoints is a usage error now, not a warning at every layer.
    std::error_code ec;
    std::filesystem::create_directories(opt.checkpoint_dir, ec);
    const std::string probe = opt.checkpoint_dir + "/.qpcheck-probe-" + std::to_string(net->rank());
    bool ok = !ec && std::filesystem::is_directory(opt.checkpoint_dir, ec);
    if (ok) {
      std::ofstream p(probe);
      ok = static_cast<bool>(p << "probe");
    }
    std::filesystem::remove(probe, ec);
    if (!ok) {
      err << fmt::format("qpcheck: error: --checkpoint {}: cannot create files there\n",
                         trace::printable(opt.checkpoint_dir, 200));
      return code(ExitCode::kUsage);
    }
  }
  if (net != nullptr) {
    eo.transport = net;
    eo.checkpoint_dir = opt.checkpoint_dir;
    eo.checkpoint_every = opt.checkpoint_every;
    eo.resume_dir = opt.resume_dir;
    eo.fingerprint = fingerprint(spec.files(), opt);
    if (net->rank() == 0) {
      std::function<void(const model::SearchStats&)> print = eo.progress;
      const std::string resume = opt.checkpoint_dir.empty()
                                     ? std::string("no --checkpoint was given, so the run cannot be resumed")
                                     : "the last complete checkpoint is in " + opt.checkpoint_dir +
                                           " (--resume " + opt.checkpoint_dir + " goes on from it)";
      // Called after every layer; the printer at most once a second.
      auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
      eo.progress = [print, resume, last, ranks = net->size()](const model::SearchStats& s) {
        std::snprintf(g_ended, sizeof g_ended,
                      "qpcheck: the distributed search was ended by SIGTERM (mpirun ends the job's ranks when one "
                      "dies or the job is interrupted); statistics so far: %llu states over %d ranks, %llu "
                      "transitions, %llu layers complete, %.1f s; %s\n",
                      static_cast<unsigned long long>(s.states), ranks,
                      static_cast<unsigned long long>(s.transitions), static_cast<unsigned long long>(s.depth),
                      s.seconds, resume.c_str());
        g_ended_len = std::strlen(g_ended);
        const auto now = std::chrono::steady_clock::now();
        if (print && now - *last >= std::chrono::seconds(1)) {
          *last = now;
          print(s);
        }
      };
      std::signal(SIGTERM, on_distributed_sigterm);
    }
  }
  try {
  if (system) {
    if (symmetric) {
      reduced.emplace(*system, opt.symmetry_budget);
      result = explore::explore(*reduced, eo);
      try {
        reduced->realise(result);  // the counterexample as a real run, never as representatives
      } catch (const std::logic_error& e) {
        clear_progress();
        err << "qpcheck: internal error: " << e.what() << " (rerun with --no-symmetry)\n";
        return code(ExitCode::kInternal);
      }
    } else {
      result = explore::explore(*system, eo);
    }
    clear_progress();
    t = trace::build_trace(*system, result, opt.file, strategy);
  } else {
    // Some properties are left out (--property, the spec's `check`, --no-deadlock): the gate's restricted run.
    gate::RestrictedRun r =
        gate::run_restricted(*compiled.model, plan.safety_names(), eo, opt.file, strategy, build);
    clear_progress();
    result = std::move(r.result);
    if (r.trace) {
      t = std::move(*r.trace);
    } else {
      model::ModelSystem whole(*compiled.model, build);
      t = trace::build_trace(whole, result, opt.file, strategy);
    }
  }
  } catch (const std::exception& e) {
    if (net == nullptr) throw;
    std::signal(SIGTERM, SIG_DFL);  // the job ends here: no "ended by SIGTERM" message on top of this one
    // Only some ranks may have met it (a checkpoint file of their own): they cannot all return, so the job ends.
    rank_err << fmt::format("qpcheck: error: rank {} of {}: {}\n", net->rank(), net->size(), e.what());
    rank_err.flush();
    net->abort(dynamic_cast<const explore::TransportError*>(&e) ? code(ExitCode::kInternal) : code(ExitCode::kUsage));
  }
  if (net != nullptr) std::signal(SIGTERM, SIG_DFL);  // the search is over: what follows is the report

  // Liveness: once the safety search holds, each checked liveness property in turn (the first violated one is the
  // report; the others are listed with their own figures).
  if (!liveness.empty() && result.outcome == model::Outcome::kHolds) {
    std::optional<model::ModelSystem> own;
    if (!system) own.emplace(*compiled.model, build);
    model::ModelSystem& sys = system ? *system : *own;
    std::vector<trace::Trace::LivenessResult> done;
    for (const std::string& name : liveness) {
      explore::Options lo = eo;
      if (opt.time_limit > 0) {
        double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        lo.limits.time_limit_seconds = std::max(1e-9, opt.time_limit - spent);
      }
      gate::LivenessRun lr = gate::run_liveness(sys, *gate::find_liveness(*compiled.model, name), lo, opt.file);
      clear_progress();
      done.push_back(trace::Trace::LivenessResult{
          name, lr.result.outcome == model::Outcome::kHolds ? "holds" : "inconclusive", lr.result.limit,
          lr.result.stats.states, lr.result.stats.transitions, lr.result.stats.seconds});
      if (lr.result.outcome == model::Outcome::kViolated) {
        done.pop_back();
        result = std::move(lr.result);
        t = std::move(lr.trace);
        break;
      }
      if (lr.result.outcome == model::Outcome::kInconclusive) {
        result.outcome = model::Outcome::kInconclusive;
        t.verdict = "inconclusive";
        t.limit = lr.result.limit;
        break;
      }
    }
    t.liveness = std::move(done);
    if (t.fairness.empty()) t.fairness = gate::fairness_notes(*compiled.model);
  }
  gate::note_properties(t, plan, spec.sources());

  // The report goes to stdout first: a trace file that cannot be written never loses the result.
  const bool partial = opt.storage != explore::Storage::kExact;
  auto json = [&]() {
    nlohmann::json j = trace::to_json(t);
    if (partial) {
      j["storage"] = opt.storage == explore::Storage::kHashCompaction ? "hash-compaction" : "bitstate";
      j["omission_probability"] = result.omission_probability;
    }
    if (opt.por) j["por"] = {{"groups", result.por_groups}, {"reduced_states", result.por_reduced_states}};
    if (net != nullptr) j["distributed"] = {{"ranks", net->size()}};
    if (symmetric) {
      const model::Symmetry& s = *compiled.model->symmetry;
      j["symmetry"] = {{"type", s.name}, {"values", s.count}, {"applied", reduced.has_value()}};
      if (reduced) {
        j["symmetry"]["budget"] = reduced->budget();
        j["symmetry"]["over_budget"] = reduced->over_budget();
      }
    }
    return j;
  };
  if (opt.format == Format::kJson) {
    out << trace::dump_json(json());
  } else {
    out << trace::to_text(trace::with_names(t, opt.names));
    if (t.verdict == "holds" && !t.steps.empty()) {
      out << (opt.trace_out.empty()
                  ? "witness: write it with --trace-out FILE for qpcheck replay to drive on a device\n"
                  : fmt::format("witness: written to {} (qpcheck replay drives it on a device)\n",
                                trace::printable(opt.trace_out, 200)));
    }
    if (opt.por) {
      out << fmt::format("partial-order reduction: {} independence groups; {} of the expanded states used an ample "
                         "set\n", result.por_groups, result.por_reduced_states);
    }
    if (net != nullptr) {
      out << fmt::format("distributed: {} ranks (MPI), each owning the states whose hash maps to it\n", net->size());
    }
    if (symmetric) {
      const model::Symmetry& s = *compiled.model->symmetry;
      if (!reduced) {
        out << fmt::format("symmetry: symmetric {} not applied: a run restricted to some properties (--property, "
                           "check, --no-deadlock) stores every state\n", s.name);
      } else if (reduced->over_budget() == 0) {
        out << fmt::format("symmetry: the {} values of {} are interchangeable; each state stored stands for its "
                           "orbit under their renamings (one state per orbit: exact)\n", s.count, s.name);
      } else {
        out << fmt::format("symmetry: the {} values of {} are interchangeable; {} successors (counted each time "
                           "they were generated) allowed more than --symmetry-budget {} orders, so an orbit may be "
                           "stored more than once (sound, less reduction)\n", s.count, s.name, reduced->over_budget(),
                           reduced->budget());
      }
    }
    if (partial) {
      out << fmt::format("partial search: probability that a reachable state was missed <= {:.3g}\n",
                         result.omission_probability);
    }
  }
  out.flush();  // a closed stdout (SIGPIPE is ignored) fails only these writes: the trace file is still written
  if (trace_file.is_open()) {
    trace_file.write(trace::dump_json(json()));
    if (std::string why = trace_file.commit(); !why.empty()) {
      err << fmt::format("qpcheck: error: writing --trace-out file '{}' failed ({}); the report above is "
                         "complete\n", trace::printable(opt.trace_out, 200), why);
      return code(ExitCode::kInternal);
    }
  }
  return code(result.outcome);
}

}  // namespace

int run_verify(const VerifyOptions& opt, std::ostream& out, std::ostream& err) {
  if (!opt.distributed || !option_conflict(opt).empty()) return verify_run(opt, out, err, nullptr, err);
  MpiTransport* net = nullptr;
  try {
    net = &MpiTransport::get();
  } catch (const explore::TransportError& e) {
    err << "qpcheck: error: --distributed: " << e.what() << "\n";
    return code(ExitCode::kEnvironment);
  }
  if (net->rank() == 0) return verify_run(opt, out, err, net, err);
  std::ostringstream quiet_out, quiet_err;  // the other ranks search, and rank 0 reports
  return verify_run(opt, quiet_out, quiet_err, net, err);
}

}  // namespace qpcheck::cli
