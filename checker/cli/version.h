// qpcheck's version: what `qpcheck --version` prints and the man page carries. Raised by hand on a release; the JSON
// schemas have versions of their own (docs/json-report.md).
#pragma once

namespace qpcheck::cli {

inline constexpr const char* kVersion = "0.15.0";

}  // namespace qpcheck::cli
