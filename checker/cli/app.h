// The command line as one CLI11 App: every subcommand with its options, the version flag, and the help sections
// (exit codes, environment, files, import search order). `qpcheck --help`, each `qpcheck SUB --help` and the man page
// (man.h, generated at build time) are all written from this one App, so they cannot drift apart.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "checker/cli/conform.h"
#include "checker/cli/diff.h"
#include "checker/cli/gate.h"
#include "checker/cli/replay.h"
#include "checker/cli/show.h"
#include "checker/cli/synth.h"
#include "checker/cli/verify.h"
#include "checker/cli/walk.h"

namespace qpcheck::cli {

// A titled list of (term, text) pairs: rendered as a --help footer and as a man page section.
struct HelpSection {
  std::string title;
  std::vector<std::pair<std::string, std::string>> items;
};

// Every subcommand's options, bound to the App's options.
struct Commands {
  VerifyOptions verify;
  SynthOptions synth;
  GateOptions gate;
  ShowOptions show;
  DiffOptions diff;
  ReplayOptions replay;
  ConformOptions conform;
  WalkOptions walk;
};

// Builds the App over `commands` (which must outlive it).
std::unique_ptr<CLI::App> make_app(Commands& commands);

// The help sections of the App itself (subcommand "") or of one subcommand, in order.
std::vector<HelpSection> help_sections(const std::string& subcommand);

// The sections as --help prints them after the options.
std::string render_sections(const std::vector<HelpSection>& sections);

}  // namespace qpcheck::cli
