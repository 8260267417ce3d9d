// The type checker's names: top-level declarations per file (module), resolved as resolve.h says, and the nested
// scopes of locals (parameters, quantified and loop variables, a process's index and local variables) that shadow
// them. Private to checker/lang. Knows what a name is bound to, not what its type means.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "checker/lang/ast.h"
#include "checker/lang/parser.h"
#include "checker/lang/resolve.h"
#include "checker/lang/source.h"
#include "checker/model/model.h"

namespace qpcheck::lang {

// What a top-level name is bound to.
struct Symbol {
  // kFamily: an indexed enum constant F of `enum { F[T], ... }`; `value` is its position among the families.
  // kRetired: `retired NAME "message";`, an error wherever it is used.
  enum class Kind { kConst, kFamily, kType, kVar, kFn, kProc, kProcess, kRetired };
  Kind kind = Kind::kConst;
  Span span;
  int file = -1;       // the declaring file (its module)
  const model::Type* type = nullptr;
  int64_t value = 0;   // kConst
  int64_t slot = 0;    // kVar: first slot
  const model::Fn* fn = nullptr;
  model::Proc* proc = nullptr;
  int process = -1;    // kProcess: index into the checker's process list
  bool compiling = false;  // kFn/kProc: its own body is being compiled (recursion)
  bool is_param = false;   // kConst declared by `param`
  // kConst: the params its value is computed from (a param: itself), by display name, for Type::bound_note.
  std::vector<std::string> from_params;
  std::string message;     // kRetired
};

// "parameter", "constant", "type", ...: what a symbol is, for messages.
const char* kind_name(const Symbol& s);

// What a local name is bound to.
struct Local {
  enum class Kind { kFrame, kConst, kSlot } kind = Kind::kFrame;
  const model::Type* type = nullptr;
  int64_t value = 0;  // frame index, constant, or slot
  Span span;
};

// "module::name" as written, or "name".
inline std::string qualified(const Ident& id) { return id.module.empty() ? id.name : id.module + "::" + id.name; }

class Names {
 public:
  using Warn = std::function<void(Span, std::string)>;
  Names(const SourceManager& sources, Warn warn) : sources_(sources), warn_(std::move(warn)) {}

  // Before any declaration: the import graph names resolve in, and which files declare types and names of each
  // displayed kind ("var", "param", "process", "proc"), for display() and `override type`.
  void index(const Program& program, const ImportGraph& graph);

  // The file of the declaration being checked: names resolve from it, and define() declares in it.
  int file() const { return current_file_; }
  void set_file(int file) { current_file_ = file; }

  // Declares a top-level name in the current file (its module). A file declares a name once (SpecError at the
  // second); a name that a file it imports declares too is shadowed here, with a warning (resolve.h).
  void define(const Ident& id, Symbol sym);
  bool declared_here(const std::string& name) const;
  // The current file's own declaration of `name` (it must exist).
  Symbol& here(const std::string& name) { return globals_.at(name).at(current_file_); }
  // The top-level declaration `id` means in the current file (resolve.h), or nullptr. Throws SpecError for an
  // ambiguous name, an unknown module and a retired name.
  Symbol* lookup(const Ident& id);
  // The imported declaration an `override` of a `what` ("proc") names (never the current file's own). Throws
  // SpecError when the current file declares it, no imported file does, or it is retired.
  Symbol* lookup_imported(const Ident& id, const char* what);
  // The declaration of `name` in `file`, or nullptr.
  const Symbol* symbol_in(int file, const std::string& name) const;
  // The files declaring a (non-override) type `name`.
  const std::vector<int>& type_files(const std::string& name) { return type_files_[name]; }
  // The name a declaration of the current file is shown under: "module::name" when another file declares a `kind`
  // ("var", "param", "process", "proc") of that name and this file is not the main one.
  std::string display(const char* kind, const std::string& name) const;

  // Locals: the innermost scope's binding first. A qualified name is never a local.
  const Local* find_local(const Ident& id) const { return id.module.empty() ? find_local(id.name) : nullptr; }
  const Local* find_local(const std::string& name) const;
  // Binds `id` in the innermost scope (SpecError when that scope binds it already).
  void bind_local(const Ident& id, Local l);
  // A local scope for the guard's lifetime.
  class Scope {
   public:
    explicit Scope(Names& names) : names_(names) { names_.scopes_.emplace_back(); }
    ~Scope() { names_.scopes_.pop_back(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Names& names_;
  };

 private:
  [[noreturn]] void error(Span span, std::string message) const { throw SpecError(span, std::move(message)); }
  std::string where(Span s) const { return sources_.location(s); }

  const SourceManager& sources_;
  Warn warn_;
  const ImportGraph* graph_ = nullptr;
  int current_file_ = -1;
  std::unordered_map<std::string, std::map<int, Symbol>> globals_;  // name -> declaring file -> symbol
  std::vector<std::unordered_map<std::string, Local>> scopes_;
  std::map<std::string, std::vector<int>> type_files_;                      // files declaring a type by that name
  std::map<std::pair<std::string, std::string>, std::set<int>> kind_files_;  // (kind, name) -> declaring files
};

}  // namespace qpcheck::lang
