// The Z3 side of the symbolic subcommands (verify --engine bmc|kind, synth), shared by verify_symbolic.cc and
// synth.cc: linked into qpcheck-full only (backends.h).
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checker/lang/typecheck.h"
#include "checker/symbolic/engine.h"
#include "checker/symbolic/load.h"
#include "checker/trace/trace.h"

namespace qpcheck::cli {

// Splits --param values into fixed NAME=VALUE overrides and symbolic NAME=SET requests. Returns false (and writes
// the error) on a malformed one.
bool split_params(const std::vector<std::string>& params, lang::ParamOverrides& fixed,
                  std::vector<std::pair<std::string, std::string>>& symbolic, std::ostream& err);

// Loads the spec family; on failure writes diagnostics and sets `rc` to an ExitCode value.
std::unique_ptr<symbolic::LoadedSpec> load_for_symbolic(const std::string& file,
                                                        const std::vector<std::string>& extra_lib_dirs,
                                                        const std::vector<std::string>& params, std::ostream& err,
                                                        int& rc);

// The Trace of a symbolic result: the counterexample re-run on its family member, params as that member's values
// (a symbolic parameter without a counterexample shows its value set).
trace::Trace symbolic_trace(const symbolic::LoadedSpec& spec, const symbolic::Result& r, const std::string& file,
                            const std::string& engine, const std::vector<std::pair<std::string, std::string>>& sets);

// A counterexample to induction as text: the path's first state, its steps and the violation at its end.
std::string cti_text(const trace::Trace& cti, int k);

// Called from a catch block around a symbolic engine call: reports NotSymbolic (exit 4), EncodingMismatch and Z3
// exceptions (exit 5) on `err` and returns the exit code; rethrows anything else.
int symbolic_failure(std::ostream& err);

}  // namespace qpcheck::cli
