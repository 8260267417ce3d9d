// Source files, spans and diagnostics: the first layer of qpcheck's front end.
//
// Every syntax node and every diagnostic carries a Span; user-facing errors are printed as
// `file:line:col: error: message`, followed by the source line and a caret under the offending text.
#pragma once

#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace qpcheck::lang {

// A half-open byte range [begin, end) in one source file. file < 0 means "no location" (e.g. a --param value).
struct Span {
  int file = -1;
  uint32_t begin = 0;
  uint32_t end = 0;
};

// One loaded source file; line numbers and columns are 1-based, columns count bytes.
struct SourceFile {
  std::string path;
  std::string text;
  std::vector<uint32_t> line_starts;  // byte offset of each line's first character
};

// Owns every loaded file; Spans refer to files by index. Files are never removed.
class SourceManager {
 public:
  // Adds a file with the given display path and contents; returns its index.
  int add(std::string path, std::string text);
  const SourceFile& file(int index) const { return files_.at(index); }
  int size() const { return static_cast<int>(files_.size()); }
  // 1-based line and column of a span's start.
  std::pair<int, int> line_col(const Span& span) const;
  // "path:line:col", or "<command line>" for a span without a file.
  std::string location(const Span& span) const;
  // The text of the span's first line (without the newline).
  std::string_view line_text(const Span& span) const;
  std::string_view text(const Span& span) const;

 private:
  std::deque<SourceFile> files_;
};

enum class Severity { kError, kWarning, kNote };

struct Diagnostic {
  Severity severity = Severity::kError;
  Span span;
  std::string message;
};

// Renders one diagnostic: "file:line:col: error: message", the source line, and a caret line.
std::string format_diagnostic(const SourceManager& sources, const Diagnostic& diagnostic);

// The front end's one error type: the spec is invalid. Carries every error found (at least one).
class SpecError : public std::runtime_error {
 public:
  explicit SpecError(std::vector<Diagnostic> diagnostics);
  SpecError(Span span, std::string message);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

// A usage error outside any spec file (e.g. an unknown --param name): reported with exit code 4.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace qpcheck::lang
