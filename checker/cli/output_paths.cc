#include "checker/cli/output_paths.h"

#include <filesystem>

#include <fmt/format.h>

namespace qpcheck::cli {

namespace {

std::string canonical(const std::string& path, bool dash_is_stdout) {
  if (dash_is_stdout && path == "-") return "-";
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? std::filesystem::absolute(path, ec).lexically_normal().string() : p.string();
}

}  // namespace

std::string output_path_conflict(const std::vector<std::pair<std::string, std::string>>& outputs,
                                 const std::vector<std::pair<std::string, std::string>>& inputs,
                                 bool dash_is_stdout) {
  std::vector<std::pair<std::string, std::string>> seen;  // (option, canonical path)
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    std::string c = canonical(path, dash_is_stdout);
    for (const auto& [what, in] : inputs) {
      if (!in.empty() && canonical(in, false) == c) {
        return fmt::format("{} '{}' would overwrite the {} it reads", option, path, what);
      }
    }
    for (const auto& [other, oc] : seen) {
      if (oc == c) {
        return c == "-" ? fmt::format("{} and {} both write to stdout; give one of them a file", other, option)
                        : fmt::format("{} and {} both name '{}': one report would overwrite the other", other,
                                      option, path);
      }
    }
    seen.emplace_back(option, c);
  }
  return "";
}

}  // namespace qpcheck::cli
