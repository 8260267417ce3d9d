// The expected results a corpus spec carries in its leading // comment block (tests/README.md): one reader for every
// test that runs the corpus (corpus_test, differential_test, fast_path_test, encoder_equivalence_test).
//
// Lines read, each `// KEY: ...` with KEY first after the slashes (blank lines inside the block are skipped; the
// block ends at the first other line):
//   params: NAME=VALUE ...                 the --param values the spec is checked with
//   expect: KEY=VALUE ...                  verdict=holds|violated|inconclusive, states=N, property=NAME, length=L,
//                                          cycle=C (a liveness lasso: its cycle's length)
//   expect-error: LINE:COL: SUBSTRING      exit 3 with that diagnostic
//   expect-warning: LINE:COL: SUBSTRING    a warning there (repeatable)
//   expect-message: TEXT                   the violation's message contains TEXT
//   expect-property: NAME KEY=VALUE ...    the run with --property NAME
//   expect-all-violations: NAME=V ...      the run with --all-violations
//   expect-overrides: KIND NAME, ...       the report's header lists exactly these replacements
//   bmc-depth: K                           the BMC depth the differential test uses
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "checker/lang/typecheck.h"

namespace qpcheck::testing {

struct CorpusHeader {
  std::vector<std::string> params;                              // "NAME=VALUE", as given to --param
  std::map<std::string, std::string> expect;                    // the expect: pairs
  std::string expect_error;                                     // "LINE:COL: SUBSTRING"
  std::vector<std::string> expect_warnings;
  std::string expect_message;
  std::vector<std::string> expect_property;                     // NAME, then KEY=VALUE words
  std::vector<std::pair<std::string, std::string>> expect_all;  // property, length or verdict
  std::string expect_overrides;                                 // "rule lose, proc post"
  int bmc_depth = -1;                                           // -1: no bmc-depth: line

  // params as the type checker takes them: (NAME, VALUE) pairs (a word without '=' gives an empty value).
  lang::ParamOverrides overrides() const;
};

// Reads `file`'s header; a missing or unreadable file gives an empty header.
CorpusHeader read_corpus_header(const std::filesystem::path& file);

}  // namespace qpcheck::testing
