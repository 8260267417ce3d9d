// qpcheck: an explicit-state model checker for the ordering rules of RDMA queue pairs and the connection manager.
#include <csignal>
#include <exception>
#include <iostream>
#include <new>
#include <string_view>

#include <CLI/CLI.hpp>

#include "checker/cli/app.h"
#include "checker/cli/backends.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/interrupt.h"
#include "checker/trace/render.h"

int main(int argc, char** argv) {
  using qpcheck::cli::ExitCode;
  qpcheck::cli::save_arguments(argc, argv);  // for a hand-over to qpcheck-full (backends.h)
  // A closed stdout (`qpcheck verify ... | head -1`) must fail only the writes to stdout, never cost a report file:
  // SIGPIPE is ignored, EPIPE is an ordinary write error (interrupt.h).
  std::signal(SIGPIPE, SIG_IGN);
  // verify, gate, synth and diff turn a first SIGINT/SIGTERM into an inconclusive, fully reported run: from the first
  // instruction, so that a signal during start-up is not a silent death (interrupt.h).
  if (argc > 1 && (std::string_view(argv[1]) == "verify" || std::string_view(argv[1]) == "gate" ||
                   std::string_view(argv[1]) == "synth" || std::string_view(argv[1]) == "diff" ||
                   std::string_view(argv[1]) == "conform")) {
    qpcheck::cli::install_interrupt_handlers();
  }
  qpcheck::cli::Commands c;
  std::unique_ptr<CLI::App> app_ptr = qpcheck::cli::make_app(c);
  CLI::App& app = *app_ptr;
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
  auto chosen = [&](const char* name) { return app.got_subcommand(name); };
  try {
    if (chosen("verify")) return qpcheck::cli::run_verify(c.verify, std::cout, std::cerr);
    if (chosen("synth")) return qpcheck::cli::run_synth(c.synth, std::cout, std::cerr);
    if (chosen("gate")) return qpcheck::cli::run_gate(c.gate, std::cout, std::cerr);
    if (chosen("show")) return qpcheck::cli::run_show(c.show, std::cout, std::cerr);
    if (chosen("diff")) return qpcheck::cli::run_diff(c.diff, std::cout, std::cerr);
    if (chosen("replay")) return qpcheck::cli::run_replay(c.replay, std::cout, std::cerr);
    if (chosen("walk")) return qpcheck::cli::run_walk(c.walk, std::cout, std::cerr);
    if (chosen("conform")) return qpcheck::cli::run_conform(c.conform, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    std::cerr << "qpcheck: internal error: out of memory (use --max-memory to bound the search)\n";
  } catch (const std::exception& e) {
    std::cerr << "qpcheck: internal error: " << e.what() << "\n";
  }
  return qpcheck::cli::code(ExitCode::kInternal);
}
