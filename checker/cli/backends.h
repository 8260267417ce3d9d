// The foreign runtimes and the two binaries (docs/architecture.md, the checker/cli row; docs/cli.md, "Installing").
//
// Three paths need a shared library that no other run uses: Z3 (verify --engine bmc|kind, symbolic --param, synth),
// Open MPI (verify --distributed) and rdma-core (replay on a device). Loading the three at start-up cost every run
// about 8 ms and 270 page faults before main() (farm-bench, --version: 14 ms with them, 6 ms without), a sixth of a
// shipped spec's verify. So `qpcheck` links none of them, and `qpcheck-full`, built from the same code, links all
// three. Their entry points are declared where they are used (run_verify_symbolic: verify_symbolic.h; run_synth:
// synth.h; MpiTransport::get: mpi_transport.h; verbs::make_rdma_device: verbs_backend/rdma_device.h) and defined
// twice: by the code that uses the library (target :backends, in qpcheck-full) and by backends_exec.cc (in qpcheck),
// which hands the run over to qpcheck-full: execv with the same arguments, so the same process (PID, streams,
// environment, an mpirun rank's place) goes on with the libraries loaded, its exit code the run's.
#pragma once

#include <string>

namespace qpcheck::cli {

// main() calls this first: the arguments a hand-over passes on.
void save_arguments(int argc, char** argv);

// Replaces this process by qpcheck-full, found beside this binary in a build (bazel-bin/checker/cli/) as in an
// install (PREFIX/bin/: the same folder, so that both find the installed library as ../share/qpcheck), with the
// saved arguments. Returns only when it cannot, with why: a sentence naming `what` (the run that needs it, e.g.
// "--engine bmc (Z3)") and the path tried, no prefix or newline.
std::string hand_over(const std::string& what);

}  // namespace qpcheck::cli
