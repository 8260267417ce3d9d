// Which properties a run checks (docs/language.md, "Properties"; docs/cli.md, "--property"). A property is an
// invariant, a fail/assert property name, `deadlock` or `runtime_error`. The spec's `disable` declarations have
// already left theirs out of the compiled model (an invariant not evaluated, a fail/assert a no-op, deadlock not
// reported); this planner adds the spec's `check` declarations, `--property` and `--no-deadlock`, and says of every
// property whether it is checked and, if not, by what.
#pragma once

#include <string>
#include <vector>

#include "checker/lang/source.h"
#include "checker/model/model.h"

namespace qpcheck::lang {

// A property the spec can violate: an invariant, a fail/assert property, "deadlock" or "runtime_error".
struct PropertyInfo {
  std::string name;
  std::string kind;          // "invariant", "fail", "deadlock", "runtime_error", "liveness"
  Span span;                 // the invariant or liveness property, or the first fail/assert statement naming it;
                             // none for the others
};

// Every property of the compiled model, in report order: invariants (declaration order), fail/assert properties
// (first use), deadlock (when `check_deadlock` and the spec does not disable it), runtime_error, then the liveness
// properties (declaration order; checked after the safety search, by explore::check_liveness).
std::vector<PropertyInfo> properties_of(const model::Model& m, bool check_deadlock);

// A property that is not checked, and why.
struct NotChecked {
  std::string name;
  std::string kind;          // as PropertyInfo::kind
  std::string by;            // "disable" (the spec), "check" (the spec names others), "--property", "--no-deadlock"
  Span at;                   // the `disable`/`check` declaration; none for the command line
  std::string reason;        // disable: the reason written in the spec, if any
};

struct PropertyPlan {
  std::vector<PropertyInfo> checked;     // report order
  std::vector<NotChecked> not_checked;   // disabled first (declaration order), then the unselected ones
  bool deadlock = false;                 // deadlock is checked
  // True when every safety property the model can report is checked (nothing left out by `check`, --property or
  // --no-deadlock; disabled ones are out of the model already): a plain search needs no restricting layer.
  bool everything = true;
  bool checks(const std::string& name) const;
  std::vector<std::string> checked_names() const;
  std::vector<std::string> safety_names() const;    // checked_names() without the liveness properties
  std::vector<std::string> liveness_names() const;  // the checked liveness properties, in report order
};

// Plans a run of `m`. `selected`: the --property names (empty: the spec's `check` declarations, or every property).
// Throws UsageError for a --property name that is unknown (the message lists the properties), retired (its
// message), disabled by the spec (where), or `deadlock` together with --no-deadlock.
PropertyPlan plan_properties(const model::Model& m, const std::vector<std::string>& selected, bool check_deadlock);

}  // namespace qpcheck::lang
