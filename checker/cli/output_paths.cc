#include "checker/cli/output_paths.h"

#include <sys/stat.h>

#include <filesystem>

#include <fmt/format.h>

#include "checker/frontend/frontend.h"
#include "checker/trace/render.h"

namespace qpcheck::cli {

namespace {

std::string canonical(const std::string& path, bool dash_is_stdout) {
  if (dash_is_stdout && path == "-") return "-";
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? std::filesystem::absolute(path, ec).lexically_normal().string() : p.string();
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

std::vector<std::string> spec_files(const std::string& spec, const lang::SearchPath& search) {
  frontend::Spec read;
  try {
    read.read(spec, search);
  } catch (const std::exception&) {
    // Reported by the run itself; what was loaded before the error still counts.
  }
  std::vector<std::string> files = read.files();
  if (files.empty()) files.push_back(spec);
  else files[0] = spec;  // as the user named it
  return files;
}

std::vector<std::pair<std::string, std::string>> spec_inputs(const std::vector<std::string>& specs,
                                                             const lang::SearchPath& search) {
  std::vector<std::pair<std::string, std::string>> inputs;
  for (const std::string& spec : specs) {
    std::vector<std::string> files = spec_files(spec, search);
    for (size_t i = 0; i < files.size(); ++i) inputs.emplace_back(i == 0 ? "spec" : "imported file", files[i]);
  }
  return inputs;
}

std::string output_path_conflict(const std::vector<std::pair<std::string, std::string>>& outputs,
                                 const std::vector<std::pair<std::string, std::string>>& inputs,
                                 bool dash_is_stdout) {
  struct Seen {
    std::string option, canonical, path;
  };
  std::vector<Seen> seen;
  for (const auto& [option, path] : outputs) {
    if (path.empty()) continue;
    std::string c = canonical(path, dash_is_stdout);
    const bool stdout_path = c == "-";
    for (const auto& [what, in] : inputs) {
      if (!in.empty() && (canonical(in, false) == c || (!stdout_path && same_file(path, in)))) {
        return fmt::format("{} '{}' would overwrite the {} it reads{}", option, trace::printable(path, 200), what,
                           what != "imported file" ? "" : fmt::format(" ('{}')", trace::printable(in, 200)));
      }
    }
    for (const auto& [other, oc, op] : seen) {
      if (oc == c || (!stdout_path && oc != "-" && same_file(path, op))) {
        return c == "-" ? fmt::format("{} and {} both write to stdout; give one of them a file", other, option)
                        : fmt::format("{} and {} both name '{}': one report would overwrite the other", other,
                                      option, path);
      }
    }
    seen.push_back(Seen{option, c, path});
  }
  return "";
}

}  // namespace qpcheck::cli
