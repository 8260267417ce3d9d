// `qpcheck verify FILE`: parse, type-check, compile, explore, report.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "checker/explore/explorer.h"
#include "checker/trace/names.h"

namespace qpcheck::cli {

enum class Format { kText, kJson };
enum class Engine { kExplicit, kBmc, kKind };  // explicit explorer; Z3 bounded model checking; Z3 k-induction

struct VerifyOptions {
  std::string file;
  std::vector<std::string> params;      // "NAME=VALUE"
  explore::Strategy strategy = explore::Strategy::kBfs;
  Format format = Format::kText;
  std::string trace_out;                // write the JSON report here too
  uint64_t max_states = 0;
  uint64_t max_depth = 0;
  std::string max_memory;               // "512M", "2G", bytes
  double time_limit = 0;                // seconds
  std::vector<std::string> lib_dirs;
  bool no_deadlock = false;
  bool no_fairness = false;     // liveness: ignore the spec's `fair` declarations (is fairness what makes it hold?)
  int threads = 1;                      // BFS threads (same counts, verdict, counterexample length as 1)
  explore::Storage storage = explore::Storage::kExact;
  int bitstate_bits = 30;               // log2 of the bitstate array's size in bits
  int hashes = 3;                       // bitstate: bits per state
  bool por = false;                     // partial-order reduction
  bool no_symmetry = false;             // store every state even when the spec declares `symmetric TYPE;`
  uint64_t symmetry_budget = 0;
  bool distributed = false;             // under mpirun: the search over the MPI job's ranks (explore::Transport)
  std::string checkpoint_dir;           // --distributed: checkpoints at layer boundaries
  double checkpoint_every = 60;         // seconds between checkpoints (0: every layer)
  std::string resume_dir;               // --distributed: go on from the checkpoint there         // candidate renamings per state (0: model::Canonicaliser::kDefaultBudget)
  Engine engine = Engine::kExplicit;
  int depth = 20;                       // bmc/kind: K, the longest counterexample searched
  double smt_timeout = 0;               // bmc/kind: seconds per solver call; 0 = none
  uint64_t smt_rlimit = 0;              // bmc/kind: Z3 resource limit per solver call (deterministic); 0 = none
  bool witness = false;                 // when every property holds, report a schedule to a terminal valid end
  std::vector<std::string> properties;  // --property: check only these (repeatable; empty: the spec's choice)
  bool all_violations = false;          // every violated property with its own shortest counterexample
  trace::Names names = trace::Names::kUser;  // text output: user-space (libibverbs) or kernel (ib_*) names
  std::vector<std::string> given;       // long names of the options given ("--depth"), filled by setup_verify's
                                        // parse callback: an option the chosen engine or storage ignores is refused
};

// "" when the options given (opt.given) fit together, else the usage error: an option that the chosen engine
// (explicit vs bmc/kind) or storage would ignore, or --threads with --strategy dfs.
std::string option_conflict(const VerifyOptions& opt);

// Option checks shared by the subcommands: a whole number >= 0 (no sign, no exponent, at most 19 digits), and a
// finite number of seconds >= 0 ("nan", "inf" and negative values are refused with the value named).
CLI::Validator count_validator();
// Seconds: a finite decimal number in [0, max_seconds]; "nan", "inf", "-1" and trailing text are refused.
CLI::Validator seconds_validator(double max_seconds = std::numeric_limits<double>::max());

// `seconds` after `start` (seconds > 0); a time beyond what a steady_clock time point holds (about 292 years of
// nanoseconds) is time_point::max(), never an overflow into the past.
std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point start, double seconds);

// A file or folder name: refuses an empty one ("--trace-out ''" would otherwise mean "no file" silently).
CLI::Validator path_validator();

// Registers the subcommand's options on `app` (a CLI11 subcommand) bound to `opt`.
void setup_verify(CLI::App& app, VerifyOptions& opt);

// Runs the verification; writes the report to `out`, diagnostics to `err`. Returns an ExitCode value.
int run_verify(const VerifyOptions& opt, std::ostream& out, std::ostream& err);

// Without --max-memory the visited set may use 3/4 of physical memory: the search ends as inconclusive, with its
// statistics, before the kernel's OOM killer could end the process and lose the result. 0 if unknown.
uint64_t default_memory_limit();

// Parses a byte size with an optional K/M/G suffix (binary units). Throws CLI::ValidationError-free
// std::invalid_argument naming the value.
uint64_t parse_bytes(const std::string& text);

}  // namespace qpcheck::cli
