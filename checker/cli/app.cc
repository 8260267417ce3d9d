#include "checker/cli/app.h"

#include <fmt/format.h>

#include "checker/cli/exit_codes.h"
#include "checker/cli/version.h"
#include "checker/lang/search_path.h"

namespace qpcheck::cli {

namespace {

HelpSection exit_codes(std::initializer_list<std::pair<ExitCode, const char*>> codes) {
  HelpSection s{"EXIT CODES", {}};
  for (const auto& [c, text] : codes) s.items.emplace_back(std::to_string(code(c)), text);
  return s;
}

HelpSection import_search() {
  return HelpSection{
      "IMPORT SEARCH ORDER",
      {{"1.", "the folder of the importing file"},
       {"2.", "each --lib-dir DIR, in the order given"},
       {"3.", fmt::format("each folder of {} (separated by ':')", lang::kLibPathVariable)},
       {"4.", "the installed library: PREFIX/share/qpcheck, where the binary is PREFIX/bin/qpcheck (so that "
              "import \"lib/rdma.qpspec\"; finds PREFIX/share/qpcheck/lib/rdma.qpspec)"},
       {"5.", "the checkout's spec/ folder that Bazel ships with a binary built there (bazel-bin/checker/cli/qpcheck)"}}};
}

}  // namespace

std::vector<HelpSection> help_sections(const std::string& sub) {
  using E = ExitCode;
  if (sub.empty()) {
    return {
        exit_codes({{E::kHolds, "every property holds (exhaustive search)"},
                    {E::kViolated, "a property is violated; the counterexample is printed"},
                    {E::kInconclusive, "a limit or an interrupt (SIGINT, SIGTERM) ended the search before it was "
                                       "exhaustive, and no violation was found"},
                    {E::kInvalidSpec, "the spec is invalid: file:line:col diagnostics on stderr"},
                    {E::kUsage, "usage: unknown subcommand or option, bad --param value, unreadable file"},
                    {E::kInternal, "internal error, or resources ran out (memory, disk)"},
                    {E::kEnvironment, "replay: the verbs device cannot be used"},
                    {E::kReproduced, "replay: REPRODUCED"},
                    {E::kNotReproduced, "replay: NOT REPRODUCED"},
                    {E::kDiverged, "replay: DIVERGED"},
                    {E::kConforms, "conform: CONFORMS"},
                    {E::kDeviates, "conform: DEVIATES"},
                    {E::kConformInconclusive, "conform: INCONCLUSIVE"},
                    {E::kConformViolates, "conform: VIOLATES"}}),
        HelpSection{"SIGNALS",
                    {{"130, 143", "verify, gate: a second SIGINT (130) or SIGTERM (143) ended the process at once; no "
                                  "report file was changed (the first one ends the run as inconclusive, with its "
                                  "reports)"}}},
        import_search(),
        HelpSection{"ENVIRONMENT",
                    {{lang::kLibPathVariable, "folders searched by import after --lib-dir, separated by ':'"}}},
        HelpSection{"FILES",
                    {{"PREFIX/share/qpcheck/lib/", "the RDMA library (import \"lib/rdma.qpspec\";)"},
                     {"PREFIX/share/doc/qpcheck/", "the documentation (language.md, cli.md, gate.md, ...) and the "
                                                   "shipped specs (examples/)"}}},
        HelpSection{"SEE ALSO", {{"docs/cli.md, docs/language.md", "in the source tree or PREFIX/share/doc/qpcheck"}}},
    };
  }
  if (sub == "verify") {
    return {exit_codes({{E::kHolds, "every checked property holds"},
                        {E::kViolated, "a property is violated (with --all-violations: at least one)"},
                        {E::kInconclusive, "a limit or an interrupt (SIGINT, SIGTERM) ended the search first, or a "
                                           "partial search (hash compaction, bitstate, bmc) found no violation"},
                        {E::kInvalidSpec, "invalid spec"},
                        {E::kUsage, "usage: a bad option or combination, bad --param or --property"},
                        {E::kInternal, "internal error, out of memory, --trace-out could not be written"}}),
            import_search()};
  }
  if (sub == "synth") {
    return {exit_codes({{E::kHolds, "every property holds for every value"},
                        {E::kViolated, "some property fails for some value, and every value is decided"},
                        {E::kInconclusive, "some value of some property is left open"},
                        {E::kInvalidSpec, "invalid spec"},
                        {E::kUsage, "usage: no symbolic parameter, one that cannot be symbolic"},
                        {E::kInternal, "internal error"}})};
  }
  if (sub == "gate") {
    return {exit_codes({{E::kHolds, "every property of every configuration has its expected verdict"},
                        {E::kViolated, "an unexpected outcome: a new violation, or an expected one that is gone"},
                        {E::kInconclusive, "no unexpected outcome, but a limit or an interrupt left a property "
                                           "undecided"},
                        {E::kInvalidSpec, "a spec is invalid (the others are still checked)"},
                        {E::kUsage, "usage: bad option, missing path, unwritable report"},
                        {E::kInternal, "internal error, or a report could not be written completely"}})};
  }
  if (sub == "show") {
    return {exit_codes({{E::kHolds, "written"},
                        {E::kInvalidSpec, "not a valid qpcheck report, or no counterexample in it"},
                        {E::kUsage, "unreadable report or unwritable output"},
                        {E::kInternal, "an output could not be written completely"}})};
  }
  if (sub == "diff") {
    return {exit_codes({{E::kHolds, "no verdict changed"},
                        {E::kViolated, "a verdict changed"},
                        {E::kInconclusive, "no change seen but an outcome was inconclusive, or nothing compared"},
                        {E::kInvalidSpec, "a spec is invalid"},
                        {E::kUsage, "usage"}})};
  }
  if (sub == "replay") {
    return {exit_codes({{E::kReproduced, "REPRODUCED: every predicted event was observed, the violation included"},
                        {E::kNotReproduced, "NOT REPRODUCED: the schedule ran to its end and the device behaved safely"},
                        {E::kDiverged, "DIVERGED: at step k the device did something the model did not predict"},
                        {E::kInvalidSpec, "the trace is not a valid qpcheck report"},
                        {E::kUsage, "usage: unreadable trace, bad option"},
                        {E::kInternal, "internal error"},
                        {E::kEnvironment, "no RDMA support, no such device, no permission, no address"}})};
  }
  if (sub == "walk") {
    return {exit_codes({{E::kHolds, "the schedules were written"},
                        {E::kInvalidSpec, "invalid spec"},
                        {E::kUsage, "usage: bad option, --out cannot be created"},
                        {E::kInternal, "a schedule file could not be written completely"}}),
            import_search()};
  }
  if (sub == "conform") {
    return {exit_codes({{E::kConforms, "CONFORMS: the recorded run is a behaviour of the spec"},
                        {E::kDeviates, "DEVIATES: at event k no run of the spec does what the program did"},
                        {E::kConformInconclusive, "INCONCLUSIVE: --max-states, --time-limit or an interrupt ended "
                                                  "the check first"},
                        {E::kConformViolates, "VIOLATES: the run is the spec's up to a call whose step in the spec "
                                              "fails a property"},
                        {E::kConformPrefix, "PREFIX: logs of a killed program end inside a step of the spec (a "
                                            "prefix of its run)"},
                        {E::kInvalidSpec, "invalid spec"},
                        {E::kUsage, "usage, or a log that is not a valid call log (file:line and the field)"},
                        {E::kInternal, "internal error"}}),
            import_search()};
  }
  return {};
}

std::string render_sections(const std::vector<HelpSection>& sections) {
  std::string out;
  for (const HelpSection& s : sections) {
    out += fmt::format("\n{}:\n", s.title);
    for (const auto& [term, text] : s.items) out += fmt::format("  {:<6} {}\n", term, text);
  }
  return out;
}

std::unique_ptr<CLI::App> make_app(Commands& c) {
  auto app = std::make_unique<CLI::App>("qpcheck: explicit-state model checker for RDMA QP/CM ordering rules",
                                        "qpcheck");
  app->require_subcommand(1);
  app->set_version_flag("--version", fmt::format("qpcheck {}", kVersion));
  app->footer(render_sections(help_sections("")));
  CLI::App* verify = app->add_subcommand("verify", "explore every interleaving of a .qpspec; prove or refute its "
                                                   "properties");
  setup_verify(*verify, c.verify);
  CLI::App* synth = app->add_subcommand("synth", "parameter synthesis: for which values of symbolic parameters each "
                                                 "property holds");
  setup_synth(*synth, c.synth);
  CLI::App* gate = app->add_subcommand("gate", "check every spec and configuration against its expectations (CI "
                                               "gate)");
  setup_gate(*gate, c.gate);
  CLI::App* show = app->add_subcommand("show", "draw a counterexample (JSON report) as a message sequence chart");
  setup_show(*show, c.show);
  CLI::App* diff = app->add_subcommand("diff", "which properties and configurations change verdict between two "
                                               "specs");
  setup_diff(*diff, c.diff);
  CLI::App* replay = app->add_subcommand("replay", "drive a counterexample or witness trace against a live verbs "
                                                   "device");
  setup_replay(*replay, c.replay);
  if (CLI::Option* timeout = replay->get_option_no_throw("--timeout-ms")) timeout->capture_default_str();
  CLI::App* conform = app->add_subcommand("conform", "check a program's recorded run (call logs of the LD_PRELOAD "
                                                     "recorder) against a spec");
  setup_conform(*conform, c.conform);
  CLI::App* walk = app->add_subcommand("walk", "draw schedules from a spec (random walks, or all up to a length) as "
                                               "replayable reports");
  setup_walk(*walk, c.walk);
  for (CLI::App* sub : {verify, synth, gate, show, diff, replay, conform, walk}) {
    sub->footer(render_sections(help_sections(sub->get_name())));
    // A repeatable option takes one value each time it is given, so that `verify --lib-dir DIR FILE` does not take
    // FILE for a second folder.
    for (CLI::Option* o : sub->get_options([](CLI::Option*) { return true; })) {
      if (!o->get_positional() && o->get_items_expected_max() >= CLI::detail::expected_max_vector_size) {
        o->allow_extra_args(false);
      }
    }
  }
  return app;
}

}  // namespace qpcheck::cli
