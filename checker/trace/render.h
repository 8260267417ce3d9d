// Consumers of a Trace: the human-readable text report and the versioned JSON document (docs/json-report.md).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "checker/trace/trace.h"

namespace qpcheck::trace {

inline constexpr const char* kJsonSchema = "qpcheck.report";
inline constexpr int kJsonVersion = 1;
// A report with a lasso (Trace::cycle_start >= 0) is version 2: a reader of version 1 would take its cycle for a
// finite run. Every other report stays version 1; from_json reads both.
inline constexpr int kJsonLassoVersion = 2;

// Limits on a trace file read by read_trace_file (docs/json-report.md): its size, and how deeply arrays and objects
// may nest (the schema itself nests 6 deep).
inline constexpr size_t kMaxTraceBytes = 64u << 20;
inline constexpr int kMaxTraceDepth = 32;

// The document is not a valid qpcheck report: corrupt or truncated JSON, another schema or version, a field of the
// wrong type or out of range, steps out of order, a counterexample that does not end in its violation. The message
// names the field ("steps[2].index") and the offending value, shortened.
struct ReportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The trace file cannot be read at all: missing, unreadable, not a regular file (a FIFO, a directory, /dev/zero),
// or larger than kMaxTraceBytes. A usage error (exit 4), not a corrupt trace.
struct TraceFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The text report: verdict, the violated property with its source line, the counterexample as numbered steps
// (actor, statement with file:line, verbs calls / fabric event, what changed), statistics.
std::string to_text(const Trace& trace);

// The JSON report (schema "qpcheck.report", version 1).
nlohmann::json to_json(const Trace& trace);

// Serialises a report; bytes that are not UTF-8 (a Latin-1 comment in a spec line) become U+FFFD.
std::string dump_json(const nlohmann::json& doc);

// Reads a JSON report back and checks it: schema and version, every field's type and range, steps numbered 1..n
// in order, each change's `before` equal to the value the previous steps left, `final` consistent with the last
// state, `failed` only on the last step of a violated trace (and there for a `fail`/`runtime_error` violation).
// Throws ReportError naming the offending field and value.
Trace from_json(const nlohmann::json& doc);

// The one reader of trace files (replay, show): checks that `path` is a regular file of at most kMaxTraceBytes,
// parses it with nesting bounded by kMaxTraceDepth, then from_json. Throws TraceFileError (unreadable) or
// ReportError (invalid; a JSON syntax error or an out-of-range number names the byte offset and the field).
Trace read_trace_file(const std::string& path);

// `text` for an error message or a terminal: control characters, DEL and the C1 controls escaped (\n, \u001b,
// \u009b), bytes that are not valid UTF-8 as \xNN, at most `max` bytes of it shown (then "..." and the total size);
// not quoted.
std::string printable(std::string_view text, size_t max = std::string_view::npos);

// `text` as XML character data or an attribute value: & < > " ' escaped, every C0 control character but tab, newline
// and carriage return (which XML 1.0 forbids even as a reference) and every byte that is not valid UTF-8 replaced by
// U+FFFD, so the document stays well-formed whatever a spec's comments or strings hold.
std::string xml_escape(std::string_view text);

// `text` for a terminal: as printable(), but newlines and tabs kept (a whole report): ESC and the other C0 controls,
// DEL and the C1 controls U+0080-U+009F become \u001b-style escapes; everything else is kept byte for byte.
std::string terminal_text(std::string_view text);

// `text` in double quotes for an error message: printable(text, 80) with quotes and backslashes escaped.
std::string quote_value(std::string_view text);

}  // namespace qpcheck::trace
