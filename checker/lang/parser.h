// Parser and import loader for qpspec.
#pragma once

#include <string>
#include <vector>

#include "checker/lang/ast.h"
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
};

// Reads `path` and its imports. An import "p" is looked up relative to the importing file's folder, then in each of
// `lib_dirs` in order. Throws SpecError (missing import, unreadable file, import cycle is harmless: each file once).
// Throws UsageError when `path` itself cannot be read.
Program load_program(SourceManager& sources, Ast& ast, const std::string& path,
                     const std::vector<std::string>& lib_dirs);

}  // namespace qpcheck::lang
