// qpcheck: an explicit-state model checker for the ordering rules of RDMA queue pairs and the connection manager.
#include <csignal>
#include <exception>
#include <iostream>
#include <new>
#include <string_view>

#include <CLI/CLI.hpp>

#include "checker/cli/exit_codes.h"
#include "checker/cli/interrupt.h"
#include "checker/cli/synth.h"
#include "checker/cli/diff.h"
#include "checker/cli/gate.h"
#include "checker/cli/show.h"
#include "checker/cli/replay.h"
#include "checker/cli/verify.h"
#include "checker/trace/render.h"

int main(int argc, char** argv) {
  using qpcheck::cli::ExitCode;
  // A closed stdout (`qpcheck verify ... | head -1`) must fail only the writes to stdout, never cost a report file:
  // SIGPIPE is ignored, EPIPE is an ordinary write error (interrupt.h).
  std::signal(SIGPIPE, SIG_IGN);
  // verify and gate turn a first SIGINT/SIGTERM into an inconclusive, fully reported run: from the first instruction,
  // so that a signal during start-up is not a silent death (interrupt.h).
  if (argc > 1 && (std::string_view(argv[1]) == "verify" || std::string_view(argv[1]) == "gate")) {
    qpcheck::cli::install_interrupt_handlers();
  }
  CLI::App app{"qpcheck: explicit-state model checker for RDMA QP/CM ordering rules"};
  app.require_subcommand(1);
  qpcheck::cli::VerifyOptions verify_opt;
  CLI::App* verify = app.add_subcommand("verify", "explore every interleaving of a .qpspec; prove or refute its properties");
  qpcheck::cli::setup_verify(*verify, verify_opt);
  qpcheck::cli::SynthOptions synth_opt;
  CLI::App* synth = app.add_subcommand("synth", "parameter synthesis: for which values of symbolic parameters each property holds");
  qpcheck::cli::setup_synth(*synth, synth_opt);
  qpcheck::cli::GateOptions gate_opt;
  CLI::App* gate = app.add_subcommand("gate", "check every spec and configuration against its expectations (CI gate)");
  qpcheck::cli::setup_gate(*gate, gate_opt);
  qpcheck::cli::ShowOptions show_opt;
  CLI::App* show = app.add_subcommand("show", "draw a counterexample (JSON report) as a message sequence chart");
  qpcheck::cli::setup_show(*show, show_opt);
  qpcheck::cli::DiffOptions diff_opt;
  CLI::App* diff = app.add_subcommand("diff", "which properties and configurations change verdict between two specs");
  qpcheck::cli::setup_diff(*diff, diff_opt);
  qpcheck::cli::ReplayOptions replay_opt;
  CLI::App* replay = app.add_subcommand("replay", "drive a counterexample or witness trace against a live verbs device");
  qpcheck::cli::setup_replay(*replay, replay_opt);
  // "qpcheck frob": name the unknown subcommand (CLI11 would only say that a subcommand is required).
  if (argc > 1 && argv[1][0] != '-' &&
      app.get_subcommands([&](const CLI::App* s) { return s->check_name(argv[1]); }).empty()) {
    std::string names;
    for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + s->get_name();
    }
    std::cerr << "qpcheck: error: unknown subcommand '" << qpcheck::trace::printable(argv[1], 80) << "' (expected one of "
              << names << "; see qpcheck --help)\n";
    return qpcheck::cli::code(ExitCode::kUsage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : qpcheck::cli::code(ExitCode::kUsage);
  }
  try {
    if (*verify) return qpcheck::cli::run_verify(verify_opt, std::cout, std::cerr);
    if (*synth) return qpcheck::cli::run_synth(synth_opt, std::cout, std::cerr);
    if (*gate) return qpcheck::cli::run_gate(gate_opt, std::cout, std::cerr);
    if (*show) return qpcheck::cli::run_show(show_opt, std::cout, std::cerr);
    if (*diff) return qpcheck::cli::run_diff(diff_opt, std::cout, std::cerr);
    if (*replay) return qpcheck::cli::run_replay(replay_opt, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    std::cerr << "qpcheck: internal error: out of memory (use --max-memory to bound the search)\n";
  } catch (const std::exception& e) {
    std::cerr << "qpcheck: internal error: " << e.what() << "\n";
  }
  return qpcheck::cli::code(ExitCode::kInternal);
}
