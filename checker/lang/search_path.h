// Where `import "PATH";` looks for PATH (docs/language.md, "Imports"): the import search path and the places an
// installed or checked-out qpcheck keeps its library. The importing file's own folder always comes first and is not
// part of a SearchPath (load_program adds it per import).
#pragma once

#include <string>
#include <vector>

namespace qpcheck::lang {

// One folder of the search path and why it is there, as "cannot find" diagnostics print it.
struct LibDir {
  std::string dir;
  std::string origin;  // "--lib-dir", "QPCHECK_LIB_PATH", "installed library", "checkout next to the binary"
};
using SearchPath = std::vector<LibDir>;

// The environment variable read by default_search_path: folders separated by ':' (empty entries are skipped).
inline constexpr const char* kLibPathVariable = "QPCHECK_LIB_PATH";

// The search path after the importing file's folder, in order:
//   1. each of `lib_dirs` (the --lib-dir options, in command-line order);
//   2. each folder of `lib_path_env` (the value of QPCHECK_LIB_PATH; nullptr when unset);
//   3. the installed library, `<folder of the binary>/../share/qpcheck` (`bin/qpcheck` of an install prefix; see
//      tools/install.sh), listed even when it does not exist, so that a diagnostic shows where it was expected;
//   4. the checkout's spec/ folder that Bazel ships with the binary (`<binary>.runfiles/qpcheck/spec`), only when
//      it exists.
// `exe` is the binary's real path (empty when unknown: 3 and 4 are left out).
SearchPath import_search_path(const std::vector<std::string>& lib_dirs, const char* lib_path_env,
                              const std::string& exe);

// import_search_path with QPCHECK_LIB_PATH from the environment and the binary from /proc/self/exe.
SearchPath default_search_path(const std::vector<std::string>& lib_dirs);

// The search path as plain --lib-dir folders (tests, tools that pass their own folders).
SearchPath lib_dirs_only(const std::vector<std::string>& lib_dirs);

// The installed library folder for the binary `exe` (`<prefix>/share/qpcheck`), whether or not it exists.
std::string installed_library_dir(const std::string& exe);

}  // namespace qpcheck::lang
