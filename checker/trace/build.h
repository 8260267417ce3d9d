// Builds a Trace from an explicit search result, rendering states with the model's names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checker/model/check_result.h"
#include "checker/model/model_system.h"
#include "checker/trace/trace.h"

namespace qpcheck::trace {

// A span as reports show it: file, line, column and the trimmed source line (all empty for a span without a file).
SourceRef source_ref(const lang::SourceManager& sources, const lang::Span& span);

// `op`, a replay operation of `proc`, with its arguments bound to a call's values (`args`, one per parameter of
// `proc`) and written as a trace carries them: "ACTIVE", "2", "RDMA_CM_EVENT_ESTABLISHED" (docs/replay.md).
ReplayStep bind_replay(const model::Proc& proc, const model::ReplayOp& op, const std::vector<int64_t>& args);

// The explorer's statistics as a report shows them; `state_bits` is the packed state width.
Stats trace_stats(const model::SearchStats &stats, int state_bits);

// `spec` is the path shown in reports. The header notes (Trace::not_checked, overrides) carry the model's disabled
// properties and overrides; gate::note_properties adds what a run's property plan left out. Never throws for a
// well-formed result.
Trace build_trace(model::ModelSystem &system, const model::CheckResult &result, const std::string &spec,
                  const std::string &strategy);

}  // namespace qpcheck::trace
