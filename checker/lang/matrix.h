// Configuration matrices and per-property expectations (docs/language.md, "Configurations and expectations"):
// the `matrix` and `expect` declarations of a spec's main file, checked against the compiled base model.
#pragma once

#include <string>
#include <vector>

#include "checker/lang/parser.h"
#include "checker/lang/properties.h"
#include "checker/lang/source.h"
#include "checker/lang/typecheck.h"
#include "checker/model/model.h"

namespace qpcheck::lang {

// One configuration: the matrix parameters' values (applied like --param, so they win over `set` lines).
struct Configuration {
  std::string name;          // "transport=IB rnr_retry=0"; "default" for a spec without a matrix
  ParamOverrides params;     // in matrix order; values as written in the matrix
};

struct Expectation {
  bool violated = false;     // expected verdict: violated, or holds
  Span span;                 // the `expect` declaration; file < 0 for the default (holds)
};

struct Matrix {
  std::vector<std::string> params;              // matrix parameters, in declaration order
  std::vector<Configuration> configurations;    // the cartesian product; the first parameter varies slowest
  std::vector<PropertyInfo> properties;         // the properties checked (properties.h: the spec's `check` and
                                                // `disable` declarations, --no-deadlock), in report order
  PropertyPlan plan;                            // which properties are checked, and why the others are not
  std::vector<std::vector<Expectation>> expected;  // [configuration][property]
};

// At most this many configurations per spec.
inline constexpr size_t kMaxConfigurations = 1024;

// Checks the main file's `matrix` and `expect` declarations against `base` (the spec compiled with its own `set`
// lines) and expands them. Every matrix value is type- and range-checked by compiling the program with it.
// Unlisted (configuration, property) pairs are expected to hold. `check_deadlock` false leaves "deadlock" out of
// the properties; an `expect` of a property that is not checked (disabled, not named by the spec's `check`, or
// deadlock with --no-deadlock) is an error that says why. Throws SpecError (file:line:col): a second
// matrix, an unknown parameter or property, a value of the wrong type or out of range, a parameter or value listed
// twice (a duplicate configuration), a `when` that names a parameter outside the matrix or a value outside its
// set, an unknown verdict, two expectations for the same property and configuration, more than
// kMaxConfigurations configurations.
// `replay`: the vocabulary the program is type-checked with (typecheck.h), also when a value is resolved.
Matrix resolve_matrix(const Program& program, const SourceManager& sources, const model::Model& base,
                      bool check_deadlock, const ReplayVocabulary& replay);

}  // namespace qpcheck::lang
