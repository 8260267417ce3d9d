// `qpcheck diff OLD.qpspec NEW.qpspec`: which properties change verdict in which configurations between two
// versions of a spec (the transport change under review), as Markdown text or JSON for a pull-request comment.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "checker/cli/verify.h"
#include "checker/gate/check.h"

namespace qpcheck::cli {

struct DiffOptions {
  std::string old_spec, new_spec;
  Format format = Format::kText;
  bool no_deadlock = false;
  uint64_t max_states = 0;
  double time_limit = 0;
  std::vector<std::string> lib_dirs;
};

void setup_diff(CLI::App& app, DiffOptions& opt);

// Returns the exit code (docs/cli.md, "qpcheck diff"): 0 no verdict changes, 1 some verdict changed, 2 no change
// found but an outcome was inconclusive, 3 a spec is invalid, 4 usage.
int run_diff(const DiffOptions& opt, std::ostream& out, std::ostream& err);

// The comparison (schema "qpcheck.diff", version 1; docs/gate.md). Configurations are matched by the values of
// every parameter, so specs with different matrices compare on the configurations they share.
nlohmann::json diff_json(const gate::SpecResult& old_result, const gate::SpecResult& new_result);
std::string diff_text(const nlohmann::json& diff);

}  // namespace qpcheck::cli
