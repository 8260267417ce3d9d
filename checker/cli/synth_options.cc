#include "checker/cli/synth.h"

#include "checker/cli/format_option.h"
#include "checker/cli/verify_symbolic.h"

namespace qpcheck::cli {

void setup_synth(CLI::App& app, SynthOptions& opt) {
  app.add_option("file", opt.file, "the .qpspec file")->required();
  app.add_option("-p,--param", opt.params,
                 "NAME=* (every value of its declared domain), NAME=LO..HI or NAME=V1,V2: a symbolic parameter; "
                 "NAME=VALUE: a fixed one (repeatable)");
  app.add_option("--depth", opt.depth, "longest counterexample searched and largest k for k-induction (default 20)")
      ->check(depth_validator());
  app.add_option("--smt-timeout", opt.smt_timeout, "seconds per Z3 call; running out leaves values open")
      ->check(nonnegative_seconds());
  app.add_option("--smt-rlimit", opt.smt_rlimit, "Z3 resource limit per call (deterministic); 0 = none");
  app.add_option("--max-states", opt.max_states,
                 "states per value for the exhaustive explicit search of what Z3 left open; 0 = no explicit search");
  app.add_option("--lib-dir", opt.lib_dirs, "extra folder searched by import (repeatable)");
  app.add_flag("--no-deadlock", opt.no_deadlock, "do not check deadlocks");
  app.add_option("--format", opt.format, "report format on stdout: text or json")
      ->transform(format_names());
  app.add_option("--property", opt.properties,
                 "synthesise only this property (repeatable; default: every property the spec checks)");
  app.add_flag("--counterexamples", opt.counterexamples,
               "print every step of each failing region's counterexample (default: its last step and the verify "
               "command that shows it)");
}

}  // namespace qpcheck::cli
