// Names and modules (docs/language.md, "Names and modules"). Every top-level declaration belongs to the file that
// declares it, and each file is a module named after its stem (`lib/rdma.qpspec` is module `rdma`). A name written
// in a file means, in this order:
//   1. the file's own declaration of it;
//   2. else the declaration of it in a file the file imports, directly or through other imports, that no other such
//      declaration shadows (a declaration in file A shadows one in file B when A imports B, directly or not);
//      two that do not shadow each other make the name ambiguous: an error naming both and how to write each.
// `module::name` means what `name` means in module `module`. A file's own declaration of a name that an imported
// file declares too is allowed, with a warning (the typechecker emits it): the importing file's uses mean its own,
// the imported file's uses keep meaning the imported one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "checker/lang/ast.h"
#include "checker/lang/parser.h"
#include "checker/lang/source.h"

namespace qpcheck::lang {

class ImportGraph {
 public:
  ImportGraph(const Program& program, const SourceManager& sources);

  int main_file() const { return main_; }
  // The module name of a file: its stem ("rdma").
  const std::string& module_name(int file) const { return names_.at(file); }
  // The files `from` imports, directly or not, excluding `from` itself, in load order.
  const std::vector<int>& imported(int from) const { return imported_.at(from); }
  // True when `file` is `from` or one of the files it imports (directly or not).
  bool sees(int from, int file) const;
  // The file of module `id.module`. Throws SpecError at id.span when no loaded file or several have that stem.
  int module_file(const Ident& id) const;

  // Which file's declaration the name `id`, written in file `from`, means, among the files in `declared_in` (those
  // that declare the name; any order); -1 when none is visible. A qualified name is looked up from its module.
  // Throws SpecError at id.span when the name is ambiguous (two imported declarations, neither shadowing the
  // other); `where(file)` gives the location of file's declaration for that message.
  int resolve(const Ident& id, int from, const std::vector<int>& declared_in,
              const std::function<std::string(int file)>& where) const;
  // The same for a name already split into module (may be empty) and plain name, with no span to report at.
  // Throws UsageError instead (a name given on the command line).
  int resolve_usage(const std::string& module, const std::string& name, int from,
                    const std::vector<int>& declared_in, const std::function<std::string(int file)>& where) const;

  // The name a declaration of `name` in `file` is shown under in traces and reports when `collides` (another file
  // declares a name of the same kind): "module::name" for a file other than the main one, else `name`.
  std::string display(const std::string& name, int file, bool collides) const;

 private:
  // resolve()'s core: the visible candidates, shadowed ones removed.
  std::vector<int> candidates(int from, const std::vector<int>& declared_in) const;
  std::string ambiguity(const std::string& name, const std::vector<int>& files,
                        const std::function<std::string(int file)>& where) const;

  int main_ = -1;
  std::vector<std::string> names_;
  std::vector<std::vector<int>> imported_;
  std::vector<std::vector<bool>> sees_;
};

// Splits "module::name" (a --param or --property value) into its parts; module is empty for a plain name.
std::pair<std::string, std::string> split_qualified(const std::string& text);

}  // namespace qpcheck::lang
