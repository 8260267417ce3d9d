// Symbolic parameters. The front end folds parameters into constants, so a parameter is made symbolic by compiling the
// spec once per value (per combination of values, for several parameters) and aligning the compiled models: a
// parameter can be symbolic when every member has the same state layout (slots and their ranges), the same processes,
// program counters, edges, rules and parameter tuples, and the same statements and expressions, differing only in
// the values of constants and of the initial state. The engine then replaces each differing constant by a term
// selected by a "parameter index" variable. A parameter that sizes an array, a queue or a process array, or that
// bounds a range type, changes the layout: it cannot be symbolic and gets a NotSymbolic error naming it.
#pragma once

#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "checker/lang/parser.h"
#include "checker/model/model.h"
#include "checker/symbolic/engine.h"

namespace qpcheck::symbolic {

struct NotSymbolic : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where the members of a family differ.
struct Aligned {
  std::unordered_map<const model::Expr*, std::vector<int64_t>> constants;  // member 0's constant -> value per member
  std::vector<std::pair<int, std::vector<int64_t>>> initial;               // slot -> initial value per member
};

// Aligns every member with member 0. Throws NotSymbolic naming the parameter(s) and the first structural difference.
Aligned align_family(const Family& family);

// The values of parameter `name` selected by `spec`: "*" (its whole declared domain: bool, an enum, or a range with
// literal bounds), "LO..HI" (integers), or "V1,V2,..." (as --param accepts them). Throws lang::UsageError naming the
// parameter when it is not declared, the domain cannot be read, or it has more than `max_values` values.
std::vector<std::string> param_values(const lang::Program& program, const std::string& name, const std::string& spec,
                                      size_t max_values = 4096);

}  // namespace qpcheck::symbolic
