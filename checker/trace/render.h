// Consumers of a Trace: the human-readable text report and the versioned JSON document (docs/json-report.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "checker/trace/trace.h"

namespace qpcheck::trace {

inline constexpr const char* kJsonSchema = "qpcheck.report";
inline constexpr int kJsonVersion = 1;

// The text report: verdict, the violated property with its source line, the counterexample as numbered steps
// (actor, statement with file:line, verbs calls / fabric event, what changed), statistics.
std::string to_text(const Trace& trace);

// The JSON report (schema "qpcheck.report", version 1).
nlohmann::json to_json(const Trace& trace);

// Serialises a report; bytes that are not UTF-8 (a Latin-1 comment in a spec line) become U+FFFD.
std::string dump_json(const nlohmann::json& doc);

// Reads a JSON report back. Throws std::runtime_error naming the offending field when the document is not a
// qpcheck report of a supported version.
Trace from_json(const nlohmann::json& doc);

}  // namespace qpcheck::trace
