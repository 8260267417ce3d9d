// Builds a Trace from an explicit search result, rendering states with the model's names.
#pragma once

#include <string>

#include "checker/explore/explorer.h"
#include "checker/model/transition_system.h"
#include "checker/trace/trace.h"

namespace qpcheck::trace {

// The explorer's statistics as a report shows them; `state_bits` is the packed state width.
Stats trace_stats(const explore::Stats& stats, int state_bits);

// `spec` is the path shown in reports. Never throws for a well-formed result.
Trace build_trace(model::ModelSystem& system, const explore::Result& result, const std::string& spec,
                  const std::string& strategy);

}  // namespace qpcheck::trace
