// The type checker's parameters (docs/language.md, "Parameters"): which files declare a param by which name, the
// settings that change a param's default (`set NAME = VALUE;` lines, then --param NAME=VALUE on the command line,
// which wins), their resolution to one declaring file, and what is reported when a setting names no param.
// Private to checker/lang: typecheck.cc drives it; it knows nothing of types beyond the param's own scalar type.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checker/lang/ast.h"
#include "checker/lang/parser.h"
#include "checker/lang/resolve.h"
#include "checker/lang/source.h"
#include "checker/lang/typecheck.h"
#include "checker/model/model.h"

namespace qpcheck::lang {

// The value `text` given for param NAME of scalar type `t`: true/false, an enum constant, or an integer in range.
// Throws UsageError "--param NAME=TEXT: why" otherwise.
int64_t parse_param_value(const std::string& name, const model::Type* t, const std::string& text);

class ParamSettings {
 public:
  explicit ParamSettings(const SourceManager& sources) : sources_(sources) {}

  // Before any declaration, for each `param` and `retired` declaration: notes which file declares that name.
  void index(const Decl& d);

  // Before any declaration: the program's `set` lines (in order), then `overrides` (--param, in order), each
  // resolved in `graph` to the file whose param it sets (a `set` from its own file, a --param from the main file).
  // Throws SpecError for a `set` of a param already set or an ambiguous name, and UsageError (prefixed "--param
  // NAME=VALUE: ") for an ambiguous or unknown-module --param name.
  void collect(const Program& program, const ParamOverrides& overrides, const ImportGraph& graph);

  // The value of the param `d` (declared in `file`, shown as `shown`, of scalar type `t`, default `fallback`): the
  // last setting that targets it, else the default; marks those settings used and remembers the value for
  // bound_note. Throws UsageError for a bad --param value and SpecError (at the value) for a bad `set` value.
  int64_t value(const Decl& d, int file, const std::string& shown, const model::Type* t, int64_t fallback);

  // A name retired by `retired NAME "message";`: where, and its message.
  struct Retirement {
    Span span;
    std::string message;
  };
  using RetiredLookup = std::function<std::optional<Retirement>(int file, const std::string& name)>;
  // After every declaration: a setting that matched no param and names a retired one is an error (SpecError for a
  // `set`, UsageError for a --param); an unmatched `set` is a SpecError too. Unknown --param names wait for
  // targets(), so that the spec's own errors are reported first.
  void check_retired_and_unknown_sets(const RetiredLookup& retired) const;

  // Per --param override, in order: the display name of the param it set. Throws UsageError for one that set
  // none, listing `declared` (model::Model::params).
  std::vector<std::string> targets(const std::vector<std::pair<std::string, std::string>>& declared) const;

  // "set by param max_recv = 4: raise it with --param max_recv=N" ("change ... with" when !raise) for the params
  // (display names, already declared) a bound is computed from; "" for none.
  std::string bound_note(const std::vector<std::string>& params, bool raise) const;

 private:
  struct Setting {
    std::string written;  // as written: "max_recv", "rdma::max_recv"
    std::string name;     // the param's own name
    std::string value;
    const Decl* decl;     // the `set` declaration, or nullptr for --param
    int target = -1;      // the file whose param it sets (-1: no file declares one by that name)
    bool used = false;
    std::string matched;  // --param: the display name of the param it set
  };
  std::string where(Span s) const { return sources_.location(s); }

  const SourceManager& sources_;
  std::map<std::string, std::vector<int>> param_files_;  // files declaring a param (or retired name) by that name
  std::map<std::pair<int, std::string>, Span> param_spans_;
  std::vector<Setting> settings_;
  std::map<std::string, std::string> param_values_;  // display name -> value as rendered
};

}  // namespace qpcheck::lang
