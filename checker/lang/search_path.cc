#include "checker/lang/search_path.h"

#include <cstdlib>
#include <filesystem>

namespace qpcheck::lang {

namespace fs = std::filesystem;

std::string installed_library_dir(const std::string& exe) {
  return (fs::path(exe).parent_path().parent_path() / "share" / "qpcheck").lexically_normal().string();
}

SearchPath import_search_path(const std::vector<std::string>& lib_dirs, const char* lib_path_env,
                              const std::string& exe) {
  SearchPath out;
  for (const std::string& d : lib_dirs) out.push_back(LibDir{d, "--lib-dir"});
  if (lib_path_env != nullptr) {
    std::string value = lib_path_env;
    size_t begin = 0;
    while (begin <= value.size()) {
      size_t end = value.find(':', begin);
      if (end == std::string::npos) end = value.size();
      if (end > begin) out.push_back(LibDir{value.substr(begin, end - begin), kLibPathVariable});
      begin = end + 1;
    }
  }
  if (!exe.empty()) {
    out.push_back(LibDir{installed_library_dir(exe), "installed library"});
    std::error_code ec;
    fs::path runfiles = fs::path(exe + ".runfiles") / "qpcheck" / "spec";
    if (fs::is_directory(runfiles, ec)) out.push_back(LibDir{runfiles.string(), "checkout next to the binary"});
  }
  return out;
}

SearchPath default_search_path(const std::vector<std::string>& lib_dirs) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return import_search_path(lib_dirs, std::getenv(kLibPathVariable), ec ? std::string() : exe.string());
}

SearchPath lib_dirs_only(const std::vector<std::string>& lib_dirs) { return import_search_path(lib_dirs, nullptr, ""); }

}  // namespace qpcheck::lang
