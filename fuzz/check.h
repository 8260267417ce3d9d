// Invariants the fuzz harnesses check on what qpcheck writes (docs/fuzzing.md).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace qpcheck::fuzz {

// A file of its own folder under /tmp, made once per process ("/tmp/qpcheck-<what>.XXXXXX/<name>"): each input is
// written there and read back as qpcheck reads a user's file.
inline std::string scratch_file(const std::string& what, const std::string& name) {
  std::string dir = "/tmp/qpcheck-" + what + ".XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) std::abort();
  return dir + "/" + name;
}

// No C0 control character but newline and tab, and no DEL, reaches a terminal (ESC would start an escape sequence).
inline void check_terminal_safe(std::string_view text, const char* what) {
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      std::fprintf(stderr, "%s: raw control character 0x%02x at byte %zu\n", what, c, i);
      std::abort();
    }
  }
}

// XML 1.0 allows no C0 control character but tab, newline and carriage return, and the document must be UTF-8.
inline void check_xml_safe(std::string_view text, const char* what) {
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
      std::fprintf(stderr, "%s: control character 0x%02x at byte %zu is not XML\n", what, c, i);
      std::abort();
    }
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = n > 0 && i + n <= text.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (!ok) {
      std::fprintf(stderr, "%s: invalid UTF-8 at byte %zu\n", what, i);
      std::abort();
    }
    i += n;
  }
}

}  // namespace qpcheck::fuzz
