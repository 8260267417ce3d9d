// The Z3 symbolic engine: bounded model checking (BMC) and k-induction over the
// compiled model, with optional symbolic parameters (a family of models that
// differ only in constants, see family.h). One Z3 context per run and one
// incremental solver per query kind (base, induction step): each unrolling
// depth adds its transition once, and the per-depth query is asserted under a
// fresh activation literal (check with an assumption, then retired) instead of
// push/pop: Z3 4.8.12's finite-domain solver returned a model that violated the
// transition constraints after a pop (spec 04, caught by the concrete re-run
// below). A counterexample is re-run concretely through model::ModelSystem, so
// it comes back as the same model::Path the explicit explorer produces (and a
// disagreement between the encoding and the explicit semantics is an internal
// error, never a silent wrong answer).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "checker/model/check_result.h"
#include "checker/model/model_system.h"

namespace qpcheck::symbolic {

enum class Mode { kBmc, kKind };

// Where a run stands, for a progress line: the depth of the last finished query and the time so far.
struct Progress {
  const char* engine = "bmc";     // "bmc" | "kind"
  int depth = 0;                  // the longest counterexample refuted so far (or the k of an induction step)
  int max_depth = 0;              // Options::depth
  double seconds = 0;             // since the run started
  int undecided = 0;              // family members (value combinations) still undecided
  int members = 0;                // family members in all
  std::string event;              // "no counterexample of length 7", "induction step fails at k=3", ...
};

struct Options {
  Mode mode = Mode::kBmc;
  int depth = 20;               // K: counterexamples of length <= K are searched (and k <= K for induction)
  double smt_timeout = 0;       // seconds per solver call; 0 = none. Running out: inconclusive, reason "timeout"
  uint64_t smt_rlimit = 0;      // Z3 resource limit per solver call (deterministic); 0 = none
  bool check_deadlock = true;
  bool simple_path = true;      // kind: states of the induction path pairwise distinct (complete for finite systems)
  // Non-empty: check only these properties (invariants, fail/assert names, "runtime_error", "deadlock"); other
  // violations merely end a path. Empty: every property (deadlock per check_deadlock).
  std::vector<std::string> properties;
  bool checks(const std::string& name) const {
    return properties.empty() || std::find(properties.begin(), properties.end(), name) != properties.end();
  }
  bool deadlock() const { return properties.empty() ? check_deadlock : checks("deadlock"); }
  // Called after each depth and proof step with what the run has reached (docs/symbolic.md, "Progress").
  std::function<void(const Progress&)> progress;
  // Notices (not progress): the solver fell back to the general one, and the like. nullptr: dropped.
  std::ostream* notices = nullptr;
  // Set (by a SIGINT/SIGTERM handler, checker/cli/interrupt.h) to stop the run: a solver call in progress is
  // interrupted (Z3_interrupt, from a watcher thread that polls the flag every 20 ms) and the run ends as
  // inconclusive, reason "interrupted (SIGINT or SIGTERM) at depth k: ...". nullptr: never interrupted.
  const std::atomic<bool>* interrupt = nullptr;
  bool interrupted() const { return interrupt != nullptr && interrupt->load(std::memory_order_relaxed); }
};

// Thrown when the encoding and the concrete semantics disagree on a counterexample (a bug in qpcheck: exit 5).
struct EncodingMismatch : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A symbolic parameter: its name and the values (rendered) of each model of the family.
struct SymbolicParam {
  std::string name;
  std::vector<std::string> values;  // per family member
};

// The models an engine checks at once: one per combination of symbolic parameter values (a single model when no
// parameter is symbolic). All members have the same state layout and action table; see family.h.
struct Family {
  std::vector<model::ModelSystem*> members;
  std::vector<SymbolicParam> params;     // empty when no parameter is symbolic
};

struct Result {
  model::CheckResult result;      // outcome, violation, concrete path, stats.depth / stats.seconds
  int member = 0;                 // the family member the counterexample belongs to
  std::string reason;             // inconclusive: why; holds: how it was proved
  int depth = 0;                  // deepest unrolling finished
  int induction_k = -1;           // kind, holds: the k that proved it
  std::optional<model::Path> cti;                 // kind: the last counterexample to induction
                                                  // (its first state may be unreachable)
  std::optional<model::Violation> cti_violation;  // what its last state or step violates
  int cti_member = 0;
  std::vector<int> remaining;     // members still undecided (synthesis)
};

// Checks `family` (every member) with BMC or k-induction. `allowed` restricts the members considered (empty: all).
// Throws EncodingMismatch (see above) and z3::exception on Z3 API misuse.
Result check(const Family& family, const Options& options, const std::vector<int>& allowed = {});

}  // namespace qpcheck::symbolic
