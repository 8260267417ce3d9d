// Builds a Trace from an explicit search result, rendering states with the model's names.
#pragma once

#include <string>

#include "checker/model/check_result.h"
#include "checker/model/model_system.h"
#include "checker/trace/trace.h"

namespace qpcheck::trace {

// A span as reports show it: file, line, column and the trimmed source line (all empty for a span without a file).
SourceRef source_ref(const lang::SourceManager& sources, const lang::Span& span);

// The explorer's statistics as a report shows them; `state_bits` is the packed state width.
Stats trace_stats(const model::SearchStats &stats, int state_bits);

// `spec` is the path shown in reports. The header notes (Trace::not_checked, overrides) carry the model's disabled
// properties and overrides; gate::note_properties adds what a run's property plan left out. Never throws for a
// well-formed result.
Trace build_trace(model::ModelSystem &system, const model::CheckResult &result, const std::string &spec,
                  const std::string &strategy);

}  // namespace qpcheck::trace
