// The man page qpcheck(1), written from the same CLI11 App as --help (app.h): every subcommand, every option with
// its description, and the help sections (exit codes, import search order, environment, files) as man sections.
// Generated at build time (//checker/cli:man) and installed by tools/install.sh.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace qpcheck::cli {

// The page in roff (man(7) macros).
std::string man_page(const CLI::App& app);

}  // namespace qpcheck::cli
