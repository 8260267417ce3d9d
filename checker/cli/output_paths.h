// Output paths of one command line: two outputs that name the same file (or both stdout) would overwrite each other,
// and an output that names an input would destroy it; both lose a result, so they are refused before anything runs.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace qpcheck::cli {

// `outputs`: (option, path) pairs; an empty path is "not requested" and is skipped; "-" is stdout when
// `dash_is_stdout`, else a file named "-". `inputs`: (what, path) pairs that no output may name. Paths are compared
// after std::filesystem::weakly_canonical, so `a/../x` and `x` (or a symlink and its target, when it exists) are
// one file. Returns "" when every output is distinct, else a message naming the two options and the path.
std::string output_path_conflict(const std::vector<std::pair<std::string, std::string>>& outputs,
                                 const std::vector<std::pair<std::string, std::string>>& inputs,
                                 bool dash_is_stdout);

}  // namespace qpcheck::cli
