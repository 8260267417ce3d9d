// `qpcheck verify --all-violations` (docs/cli.md, "Choosing properties"): the gate's runs on the spec's own
// configuration (gate/property_runs.h), every violated property with its own shortest counterexample.
#pragma once

#include <iosfwd>
#include <string>

#include "checker/cli/atomic_file.h"
#include "checker/explore/explorer.h"
#include "checker/lang/properties.h"
#include "checker/model/model.h"
#include "checker/trace/names.h"

namespace qpcheck::cli {

// Checks every property of `plan` on `m` (limits, progress and interrupt from `eo`), prints the report (text: a summary line
// per property, then each counterexample; JSON: see docs/json-report.md, "all_violations") to `out` and, when
// `trace_file` is not null, the JSON report to it (committed whole). Returns the exit code: 1 if any property is
// violated, else 2 if any is undecided, else 0 (5 when the trace file cannot be written). `names` applies to the
// text report only (the JSON report keeps the user-space names, as verify's does). `names` applies to the text report only.
int report_all_violations(model::Model& m, const lang::PropertyPlan& plan, const std::string& spec,
                          const explore::Options& eo, bool json, std::ostream& out, std::ostream& err,
                          AtomicFile* trace_file, const std::string& trace_path,
                          trace::Names names = trace::Names::kUser);

}  // namespace qpcheck::cli
