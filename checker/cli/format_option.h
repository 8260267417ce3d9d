// `--format text|json` for every subcommand that takes it: the names only, in any case. (CLI11's CheckedTransformer
// over the enum also accepts the enum's numeric value, "--format 1", and its message lists the map's internals.)
#pragma once

#include <string>
#include <utility>
#include <vector>

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

// A transform for an option bound to an enum, accepting only the given names (any case): the name becomes the enum's
// value; anything else, the enum's number included, is a ValidationError "expected bfs or dfs, found 'x'" (exit 4).
template <typename E>
CLI::Validator enum_names(std::vector<std::pair<std::string, E>> names) {
  std::string listed;
  for (size_t i = 0; i < names.size(); ++i) {
    listed += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i].first;
  }
  std::string shown;
  for (const auto& n : names) shown += (shown.empty() ? "" : "|") + n.first;
  return CLI::Validator(
      [names, listed](std::string& value) -> std::string {
        std::string lower = CLI::detail::to_lower(value);
        for (const auto& [name, e] : names) {
          if (lower == name) {
            value = std::to_string(static_cast<int>(e));
            return std::string();
          }
        }
        return "expected " + listed + ", found '" + value + "'";
      },
      shown, "NAME");
}

}  // namespace qpcheck::cli
