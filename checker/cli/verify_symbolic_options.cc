#include "checker/cli/verify_symbolic.h"

#include "checker/cli/format_option.h"
#include "checker/frontend/frontend.h"

namespace qpcheck::cli {

CLI::Validator depth_validator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(s) > 100000) {
          return "expected a depth 0..100000, got '" + s + "'";
        }
        return "";
      },
      "K");
}

CLI::Validator nonnegative_seconds() { return seconds_validator(4e6); }

void setup_verify_symbolic(CLI::App& app, VerifyOptions& opt) {
  app.add_option("--engine", opt.engine,
                 "explicit (default: every reachable state), bmc (Z3 bounded model checking up to --depth) or kind "
                 "(Z3 k-induction: can prove properties)")
      ->transform(enum_names<Engine>({{"explicit", Engine::kExplicit}, {"bmc", Engine::kBmc}, {"kind", Engine::kKind}}));
  app.add_option("--depth", opt.depth, "bmc/kind: longest counterexample searched, in steps (default 20)")
      ->check(depth_validator());
  app.add_option("--smt-timeout", opt.smt_timeout, "bmc/kind: seconds per Z3 call; running out is inconclusive")
      ->check(nonnegative_seconds());
  app.add_option("--smt-rlimit", opt.smt_rlimit,
                 "bmc/kind: Z3 resource limit per call (deterministic, unlike a timeout); 0 = none");
}

bool wants_symbolic(const VerifyOptions& opt) {
  if (opt.engine != Engine::kExplicit) return true;
  for (const std::string& p : opt.params) {
    size_t eq = p.find('=');
    if (eq != std::string::npos && frontend::is_symbolic_value(p.substr(eq + 1))) return true;
  }
  return false;
}

}  // namespace qpcheck::cli
