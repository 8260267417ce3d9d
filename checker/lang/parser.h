// Parser and import loader for qpspec.
#pragma once

#include <string>
#include <vector>

#include "checker/lang/ast.h"
#include "checker/lang/search_path.h"
#include "checker/lang/source.h"

namespace qpcheck::lang {

// Parses one file's declarations (imports are returned as kImport decls, not followed). Throws SpecError at the
// first syntax error, naming the token found and what was expected.
std::vector<Decl*> parse_file(const SourceManager& sources, int file, Ast& ast);

// A whole program: the declarations of the main file and of every file it imports, transitively, each file once,
// imported files before the declarations that import them.
struct Program {
  std::vector<Decl*> decls;
  int main_file = -1;
  // Per file (SourceManager index): the files its own `import` declarations name, in order. A file imported twice
  // is loaded once, and both edges are kept.
  std::vector<std::vector<int>> imports;
};

// Reads `path` and its imports. An import "p" is looked up relative to the importing file's folder, then in each
// folder of `search` in order (search_path.h). Throws SpecError (missing import, naming every place it looked and
// how to add one; unreadable file; an import cycle is harmless: each file once). Throws UsageError when `path`
// itself cannot be read.
Program load_program(SourceManager& sources, Ast& ast, const std::string& path, const SearchPath& search);

}  // namespace qpcheck::lang
