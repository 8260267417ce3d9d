// Output paths of one command line: two outputs that name the same file (or both stdout) would overwrite each other,
// and an output that names an input would destroy it; both lose a result, so they are refused before anything runs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "checker/lang/search_path.h"

namespace qpcheck::cli {

// `outputs`: (option, path) pairs; an empty path is "not requested" and is skipped; "-" is stdout when
// `dash_is_stdout`, else a file named "-". `inputs`: (what, path) pairs that no output may name. Two paths name one
// file when they are the same after std::filesystem::weakly_canonical (`a/../x` and `x`, a symlink and its target)
// or, when both exist, when they have the same device and inode (a hard link, a bind mount). Returns "" when every
// output is distinct and names no input, else a message naming the option(s) and the path.
std::string output_path_conflict(const std::vector<std::pair<std::string, std::string>>& outputs,
                                 const std::vector<std::pair<std::string, std::string>>& inputs,
                                 bool dash_is_stdout);

// Whether `a` and `b` name the same existing file (same device and inode: links and other spellings included).
bool same_file(const std::string& a, const std::string& b);

// The files a spec reads: `spec` and every file it imports, transitively (as lang::load_program finds them with
// `search`, the import search path after the spec's folder). A spec that cannot be read or parsed yields what was found before the error (at least `spec`): the
// run reports that error later, in its place.
std::vector<std::string> spec_files(const std::string& spec, const lang::SearchPath& search);

// `(what, path)` input pairs for output_path_conflict: each spec as "spec", each imported file as "imported file".
std::vector<std::pair<std::string, std::string>> spec_inputs(const std::vector<std::string>& specs,
                                                             const lang::SearchPath& search);

}  // namespace qpcheck::cli
