// `qpcheck verify --engine bmc|kind`: the Z3 engines behind the verify subcommand (checker/symbolic), and symbolic
// parameters (`--param NAME=*`, `NAME=LO..HI`, `NAME=V1,V2`). Same report, JSON and exit codes as the explicit
// engine; "no violation up to depth K" is inconclusive (exit 2), never "holds".
// The options (verify_symbolic_options.cc) are in every binary; run_verify_symbolic is Z3's side (backends.h): in
// qpcheck-full it runs the engine (verify_symbolic.cc), in qpcheck it hands the run to qpcheck-full.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "checker/cli/verify.h"

namespace qpcheck::cli {

// Registers --engine, --depth, --smt-timeout, --smt-rlimit on the verify subcommand.
void setup_verify_symbolic(CLI::App& app, VerifyOptions& opt);

// True when the run needs the symbolic engine (a Z3 engine, or a symbolic --param).
bool wants_symbolic(const VerifyOptions& opt);

// Runs BMC or k-induction; returns an ExitCode value (symbolic parameters with --engine explicit: usage error).
int run_verify_symbolic(const VerifyOptions& opt, std::ostream& out, std::ostream& err);

// CLI validators shared by the symbolic subcommands: --depth (0..100000), seconds >= 0.
CLI::Validator depth_validator();
CLI::Validator nonnegative_seconds();

}  // namespace qpcheck::cli
