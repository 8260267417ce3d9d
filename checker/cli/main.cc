// qpcheck: an explicit-state model checker for the ordering rules of RDMA queue pairs and the connection manager.
#include <exception>
#include <iostream>
#include <new>

#include <CLI/CLI.hpp>

#include "checker/cli/exit_codes.h"
#include "checker/cli/synth.h"
#include "checker/cli/verify.h"

int main(int argc, char** argv) {
  using qpcheck::cli::ExitCode;
  CLI::App app{"qpcheck: explicit-state model checker for RDMA QP/CM ordering rules"};
  app.require_subcommand(1);
  qpcheck::cli::VerifyOptions verify_opt;
  CLI::App* verify = app.add_subcommand("verify", "explore every interleaving of a .qpspec; prove or refute its properties");
  qpcheck::cli::setup_verify(*verify, verify_opt);
  qpcheck::cli::SynthOptions synth_opt;
  CLI::App* synth = app.add_subcommand("synth", "parameter synthesis: for which values of symbolic parameters each property holds");
  qpcheck::cli::setup_synth(*synth, synth_opt);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : qpcheck::cli::code(ExitCode::kUsage);
  }
  try {
    if (*verify) return qpcheck::cli::run_verify(verify_opt, std::cout, std::cerr);
    if (*synth) return qpcheck::cli::run_synth(synth_opt, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    std::cerr << "qpcheck: internal error: out of memory (use --max-memory to bound the search)\n";
  } catch (const std::exception& e) {
    std::cerr << "qpcheck: internal error: " << e.what() << "\n";
  }
  return qpcheck::cli::code(ExitCode::kInternal);
}
