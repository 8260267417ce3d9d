#include "checker/cli/backends.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include <fmt/format.h>

namespace qpcheck::cli {

namespace {

std::vector<char*>& saved() {
  static std::vector<char*> args;
  return args;
}

// This binary's folder, from /proc/self/exe (links resolved: a runfiles link leads to the build's folder).
std::filesystem::path own_folder() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path() : self.parent_path();
}

std::filesystem::path candidate() {
  std::filesystem::path dir = own_folder();
  return dir.empty() ? dir : dir / "qpcheck-full";
}

// The qpcheck-full beside this binary; empty when it is not there (or not executable).
std::string full_binary_path() {
  std::filesystem::path p = candidate();
  return !p.empty() && ::access(p.c_str(), X_OK) == 0 ? p.string() : "";
}

}  // namespace

void save_arguments(int argc, char** argv) { saved().assign(argv, argv + argc); }

std::string hand_over(const std::string& what) {
  std::string path = full_binary_path();
  if (path.empty()) {
    std::filesystem::path tried = candidate();
    return fmt::format("{} needs qpcheck-full, the build of qpcheck with Z3, Open MPI and rdma-core linked, beside "
                       "it; it is not at {} (build //checker/cli:qpcheck, or install with bazel run //:install)",
                       what, tried.empty() ? "a path this binary can tell (no /proc/self/exe)" : tried.string());
  }
  std::vector<char*> argv = saved();
  if (argv.empty()) argv.push_back(const_cast<char*>("qpcheck"));
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::execv(path.c_str(), argv.data());
  return fmt::format("{} needs qpcheck-full: starting {} failed ({})", what, path,
                     std::strerror(errno));
}

}  // namespace qpcheck::cli
