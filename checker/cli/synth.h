// `qpcheck synth FILE --param NAME=*`: parameter synthesis. For each property, the values of the symbolic parameters
// for which it fails (one counterexample per failing region), those for which it is proved to hold (k-induction, or
// an exhaustive explicit search of that value) and those left open ("no violation up to depth K").
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "checker/cli/verify.h"

namespace qpcheck::cli {

struct SynthOptions {
  std::string file;
  std::vector<std::string> params;      // NAME=VALUE, or NAME=* / NAME=LO..HI / NAME=V1,V2 (at least one)
  int depth = 20;
  double smt_timeout = 0;
  uint64_t smt_rlimit = 0;
  uint64_t max_states = 1000000;        // explicit fallback per value; 0 = none
  std::vector<std::string> lib_dirs;
  bool no_deadlock = false;
  Format format = Format::kText;
  std::vector<std::string> properties;  // --property: only these (empty: the spec's choice, else all)
  bool counterexamples = false;         // text: every step of each failing region's counterexample
};

void setup_synth(CLI::App& app, SynthOptions& opt);

// Z3's side (backends.h): runs the synthesis in qpcheck-full, hands the run to qpcheck-full in qpcheck.
// Exit codes: 0 every property holds for every value; 1 some property fails for some value (and every other value
// is decided); 2 some value of some property is left open; 3 invalid spec; 4 usage (no symbolic parameter, one that
// cannot be symbolic); 5 internal.
int run_synth(const SynthOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace qpcheck::cli
