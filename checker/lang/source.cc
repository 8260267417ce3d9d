#include "checker/lang/source.h"

#include <algorithm>

#include <fmt/format.h>

namespace qpcheck::lang {

int SourceManager::add(std::string path, std::string text) {
  SourceFile f{std::move(path), std::move(text), {0}};
  for (uint32_t i = 0; i < f.text.size(); ++i) {
    if (f.text[i] == '\n') f.line_starts.push_back(i + 1);
  }
  files_.push_back(std::move(f));
  return static_cast<int>(files_.size()) - 1;
}

std::pair<int, int> SourceManager::line_col(const Span& span) const {
  if (span.file < 0) return {0, 0};
  const SourceFile& f = file(span.file);
  auto it = std::upper_bound(f.line_starts.begin(), f.line_starts.end(), span.begin);
  int line = static_cast<int>(it - f.line_starts.begin());
  return {line, static_cast<int>(span.begin - f.line_starts[line - 1]) + 1};
}

std::string SourceManager::location(const Span& span) const {
  if (span.file < 0) return "<command line>";
  auto [line, col] = line_col(span);
  return fmt::format("{}:{}:{}", file(span.file).path, line, col);
}

std::string_view SourceManager::line_text(const Span& span) const {
  if (span.file < 0) return {};
  const SourceFile& f = file(span.file);
  int line = line_col(span).first;
  uint32_t b = f.line_starts[line - 1];
  uint32_t e = b;
  while (e < f.text.size() && f.text[e] != '\n' && f.text[e] != '\r') ++e;
  return std::string_view(f.text).substr(b, e - b);
}

std::string_view SourceManager::text(const Span& span) const {
  if (span.file < 0) return {};
  const SourceFile& f = file(span.file);
  uint32_t e = std::min<uint32_t>(span.end, f.text.size());
  return std::string_view(f.text).substr(span.begin, e > span.begin ? e - span.begin : 0);
}

std::string format_diagnostic(const SourceManager& sources, const Diagnostic& d) {
  const char* kind = d.severity == Severity::kError ? "error" : d.severity == Severity::kWarning ? "warning" : "note";
  std::string out = fmt::format("{}: {}: {}\n", sources.location(d.span), kind, d.message);
  if (d.span.file >= 0) {
    std::string_view line = sources.line_text(d.span);
    int col = sources.line_col(d.span).second;
    // Very long lines (generated or hostile input) are shown as a window around the column.
    constexpr int kWindow = 80;
    std::string prefix, suffix;
    if (line.size() > 2 * kWindow) {
      int from = std::max(0, col - 1 - kWindow / 2);
      if (from > 0) prefix = "...";
      if (line.size() > static_cast<size_t>(from + 2 * kWindow)) suffix = "...";
      line = line.substr(from, 2 * kWindow);
      col -= from;
    }
    // A control character in the source (an ESC in a comment) must not reach the terminal: shown as '?', one byte
    // for one, so the caret stays under its column.
    std::string shown(line);
    for (char& c : shown) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = '?';
    }
    line = shown;
    std::string caret(prefix.size(), ' ');
    for (int i = 1; i < col && i - 1 < static_cast<int>(line.size()); ++i) caret += line[i - 1] == '\t' ? '\t' : ' ';
    size_t width = d.span.end > d.span.begin ? d.span.end - d.span.begin : 1;
    width = std::max<size_t>(1, std::min(width, line.size() >= static_cast<size_t>(col) ? line.size() - col + 1 : 1));
    caret += '^';
    if (width > 1) caret += std::string(width - 1, '~');
    out += fmt::format("  {}{}{}\n  {}\n", prefix, line, suffix, caret);
  }
  return out;
}

static std::string first_message(const std::vector<Diagnostic>& ds) {
  return ds.empty() ? std::string("invalid spec") : ds.front().message;
}

SpecError::SpecError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(first_message(diagnostics)), diagnostics_(std::move(diagnostics)) {}

SpecError::SpecError(Span span, std::string message)
    : SpecError(std::vector<Diagnostic>{Diagnostic{Severity::kError, span, std::move(message)}}) {}

}  // namespace qpcheck::lang
