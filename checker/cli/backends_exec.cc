// The foreign runtimes' entry points in `qpcheck`: each hands the run over to qpcheck-full (backends.h).
#include <cstdlib>
#include <iostream>

#include "checker/cli/backends.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/mpi_transport.h"
#include "checker/cli/synth.h"
#include "checker/cli/verify_symbolic.h"
#include "checker/explore/transport.h"
#include "verbs_backend/rdma_device.h"

namespace qpcheck::cli {

int run_verify_symbolic(const VerifyOptions& opt, std::ostream& out, std::ostream& err) {
  err << "qpcheck: error: "
      << hand_over(opt.engine == Engine::kExplicit ? "a symbolic --param (Z3)"
                   : opt.engine == Engine::kBmc    ? "--engine bmc (Z3)"
                                                   : "--engine kind (Z3)")
      << "\n";
  return code(ExitCode::kEnvironment);
}

int run_synth(const SynthOptions& opt, std::ostream& out, std::ostream& err) {
  err << "qpcheck: error: " << hand_over("synth (Z3)") << "\n";
  return code(ExitCode::kEnvironment);
}

MpiTransport& MpiTransport::get() {
  // run_verify reports it as "qpcheck: error: --distributed: ..." (exit 6).
  throw explore::TransportError(hand_over("the distributed search (Open MPI)"));
}

// Unreachable here: get() never returns in this binary.
void MpiTransport::abort(int code) { std::_Exit(code); }

}  // namespace qpcheck::cli

namespace qpcheck::verbs {

std::unique_ptr<Device> make_rdma_device(const std::string& device, const std::string& address) {
  std::cerr << "qpcheck: error: " << cli::hand_over("replay on a device (rdma-core)") << "\n";
  std::exit(cli::code(cli::ExitCode::kEnvironment));
}

}  // namespace qpcheck::verbs
