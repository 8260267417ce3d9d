// Machine-readable reports of a gate run (docs/gate.md): JUnit XML, SARIF 2.1.0 and the JSON summary (schema
// "qpcheck.gate", version 1), plus the text summary table. Consumers of gate::SpecResult only.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/gate/check.h"

namespace qpcheck::report {

inline constexpr const char* kSummarySchema = "qpcheck.gate";
inline constexpr int kSummaryVersion = 1;

// JUnit XML: a <testsuite> per spec x configuration, a <testcase> per property; an unexpected outcome is a
// <failure> whose text is the counterexample (or, for "no longer violated", the expectation's location); an
// inconclusive one is <skipped>; an invalid spec is a testsuite with one <error>. Validates against
// tests/schemas/junit.xsd.
std::string to_junit(const std::vector<gate::SpecResult>& results);

// SARIF 2.1.0: one run of the tool "qpcheck"; a rule per property; a result per violation (level "error" when
// unexpected, "note" when expected) at the violated invariant's (or failing statement's) line, with the
// counterexample as a codeFlow through the spec's lines; "no longer violated" (error) at the expectation; vacuous
// properties (warning) and statements never executed (note); invalid specs (error) at the diagnostic.
nlohmann::json to_sarif(const std::vector<gate::SpecResult>& results);

// The JSON summary (schema "qpcheck.gate", version 1; docs/gate.md).
nlohmann::json to_summary(const std::vector<gate::SpecResult>& results);

// The text summary: one line per spec x configuration, details of every unexpected outcome, coverage, totals.
std::string to_text(const std::vector<gate::SpecResult>& results, bool coverage);

// Escapes text for XML character data and attributes; bytes that are not UTF-8 and characters XML 1.0 forbids
// become U+FFFD.
std::string xml_escape(const std::string& text);

}  // namespace qpcheck::report
