// Strict number parsing for text from the command line and from spec-adjacent files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace qpcheck::lang {

// The integer `text` spells as std::stoll reads it (base 10; leading white space and a sign allowed), when that
// reading uses every character; nullopt otherwise (empty, no digits, trailing characters, outside int64_t).
inline std::optional<int64_t> parse_int64(const std::string& text) {
  size_t pos = 0;
  int64_t v = 0;
  try {
    v = std::stoll(text, &pos);
  } catch (...) {
    return std::nullopt;
  }
  if (pos == 0 || pos != text.size()) return std::nullopt;
  return v;
}

}  // namespace qpcheck::lang
