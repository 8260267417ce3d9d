// `--format text|json` for every subcommand that takes it: the names only, in any case. (CLI11's CheckedTransformer
// over the enum also accepts the enum's numeric value, "--format 1", and its message lists the map's internals.)
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace qpcheck::cli {

// A transform for an option bound to Format (checker/cli/verify.h): "text"/"json" become the enum's value; anything
// else is a ValidationError "expected text or json, found 'xml'" (exit 4).
inline CLI::Validator format_names() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        std::string lower = CLI::detail::to_lower(value);
        if (lower == "text") value = "0";       // Format::kText
        else if (lower == "json") value = "1";  // Format::kJson
        else return "expected text or json, found '" + value + "'";
        return std::string();
      },
      "text|json", "FORMAT");
}

}  // namespace qpcheck::cli
