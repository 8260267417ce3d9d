// The liveness check of a compiled model (docs/liveness.md): one explore::check_liveness run per `liveness`
// property, under the model's `fair` declarations, and its lasso as a trace. The one place the engine's query
// (two state predicates, a fairness unit per action) is built from the spec's declarations. `qpcheck verify`, `gate`
// and `diff` run it for each checked liveness property.
#pragma once

#include <string>
#include <vector>

#include "checker/explore/explorer.h"
#include "checker/explore/liveness.h"
#include "checker/model/model.h"
#include "checker/model/model_system.h"
#include "checker/trace/trace.h"

namespace qpcheck::gate {

struct LivenessRun {
  model::CheckResult result;
  explore::LivenessStats stats;
  trace::Trace trace;            // verdict, statistics, and the lasso when violated
};

// Checks liveness property `l` of `system`'s model under eo.limits and eo.interrupt (the other options do not apply:
// the check is breadth-first on one thread with exact storage). `spec` is the path the trace shows.
LivenessRun run_liveness(model::ModelSystem& system, const model::Liveness& l, const explore::Options& eo,
                         const std::string& spec);

// The model's fairness as the reports show it: one entry per `fair` declaration ("weak client, server"), the main
// file's first, then the imported files' in declaration order.
std::vector<std::string> fairness_notes(const model::Model& m);

// The liveness property of `m` named `name`, or nullptr.
const model::Liveness* find_liveness(const model::Model& m, const std::string& name);

}  // namespace qpcheck::gate
