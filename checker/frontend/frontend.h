// The one front end: how every subcommand, the gate, the symbolic loader, the fuzz harnesses and the tests turn
// spec text into a typed model. It reads a spec and its imports once (parse), type-checks it for one set of
// --param overrides at a time (each configuration, each family member), and renders diagnostics the same way for
// all of them: file:line:col, the source line and a caret (docs/language.md, "Diagnostics").
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "checker/lang/matrix.h"
#include "checker/lang/parser.h"
#include "checker/lang/search_path.h"
#include "checker/lang/source.h"
#include "checker/lang/typecheck.h"

namespace qpcheck::frontend {

// How reading or compiling a spec failed, rendered for the user. kSpec: the spec is invalid (exit code 3, "invalid
// spec"); kUsage: a bad command line, e.g. an unknown --param or an unreadable spec file (exit code 4).
struct Failure {
  enum class Kind { kSpec, kUsage };
  Kind kind = Kind::kSpec;
  std::string text;     // kSpec: every diagnostic of the SpecError, rendered; kUsage: "qpcheck: error: WHAT\n"
  std::string message;  // the exception's what(): kSpec: its first diagnostic's message; kUsage: WHAT
};

// A spec read into memory: its files, syntax trees and program. Models compiled from it point into it (spans,
// sources), so it must outlive them; it is neither copied nor moved.
class Spec {
 public:
  Spec() = default;
  Spec(const Spec&) = delete;
  Spec& operator=(const Spec&) = delete;

  // Reads `path` and every file it imports along `search` (lang::load_program). Throws lang::SpecError (a syntax
  // error, a missing import) and lang::UsageError (`path` unreadable). What was read before an error stays in
  // sources(), so that the error's diagnostics render.
  void read(const std::string& path, const lang::SearchPath& search);
  // Parses `text` held in memory as the file `name` (tests, fuzz inputs). Its imports are not followed. Throws
  // lang::SpecError.
  void read_text(const std::string& name, const std::string& text);

  // Type-checks and compiles the spec for `params` (lang::typecheck), its `replay` clauses against the rdma-core
  // conductor's vocabulary (verbs_backend/replay_ops.h). Throws lang::SpecError and lang::UsageError (an unknown,
  // ambiguous or retired --param, a bad value).
  lang::Compiled compile(const lang::ParamOverrides& params = {}) const;
  // The spec's `matrix` and `expect` declarations resolved against `base`, a compilation without overrides
  // (lang::resolve_matrix). Throws lang::SpecError.
  lang::Matrix matrix(const model::Model& base, bool check_deadlock) const;

  // Runs `step` (calls of this Spec and whatever else may throw lang::SpecError or lang::UsageError); returns how it
  // failed, rendered against this spec's files, or nullopt when it did not throw either. Other exceptions pass.
  std::optional<Failure> attempt(const std::function<void()>& step) const;
  // `diagnostics` (errors, warnings, notes) rendered one after the other.
  std::string render(const std::vector<lang::Diagnostic>& diagnostics) const;

  // The spec file and every file it imports (as found), in the order they were read.
  std::vector<std::string> files() const;
  const lang::SourceManager& sources() const { return sources_; }
  const lang::Program& program() const { return program_; }

 private:
  lang::SourceManager sources_;
  lang::Ast ast_;
  lang::Program program_;
};

// --param strings NAME=VALUE as overrides, in order. Throws lang::UsageError "--param P: expected NAME=VALUE" for
// one without '=' or without a name. Values are checked by compile().
lang::ParamOverrides parse_param_assignments(const std::vector<std::string>& params);

// Is the VALUE of a --param NAME=VALUE a symbolic parameter request ("*", "LO..HI" or a comma list: the Z3 engines'
// parameter sets, docs/cli.md) rather than one value?
bool is_symbolic_value(const std::string& value);

}  // namespace qpcheck::frontend
