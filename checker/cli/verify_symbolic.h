// `qpcheck verify --engine bmc|kind`: the Z3 engines behind the verify subcommand (checker/symbolic), and symbolic
// parameters (`--param NAME=*`, `NAME=LO..HI`, `NAME=V1,V2`). Same report, JSON and exit codes as the explicit
// engine; "no violation up to depth K" is inconclusive (exit 2), never "holds".
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "checker/cli/verify.h"
#include "checker/lang/typecheck.h"
#include "checker/symbolic/engine.h"
#include "checker/symbolic/load.h"
#include "checker/trace/trace.h"

namespace qpcheck::cli {

// Registers --engine, --depth, --smt-timeout, --smt-rlimit on the verify subcommand.
void setup_verify_symbolic(CLI::App& app, VerifyOptions& opt);

// True when the run needs the symbolic engine (a Z3 engine, or a symbolic --param).
bool wants_symbolic(const VerifyOptions& opt);

// Runs BMC or k-induction; returns an ExitCode value (symbolic parameters with --engine explicit: usage error).
int run_verify_symbolic(const VerifyOptions& opt, std::ostream& out, std::ostream& err);

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

// CLI validators shared by the symbolic subcommands: --depth (0..100000), seconds >= 0.
CLI::Validator depth_validator();
CLI::Validator nonnegative_seconds();

}  // namespace qpcheck::cli
