// The spec corpus: every shipped spec (spec/*.qpspec), the corpus models (tests/corpus) and the malformed specs
// (tests/bad) carry their expected result in their header; this one driver checks them all through the same code
// path as `qpcheck verify` (JSON report, exit code).
//
// Header lines read (in the leading // comment block):
//   // params: NAME=VALUE ...                          passed as --param
//   // expect: verdict=holds states=N
//   // expect: verdict=violated property=NAME states=N length=L
//   // expect: ... unreduced=N                        (a spec with `symmetric TYPE;`) the run with --no-symmetry:
//                                                      N states, the same verdict, property and length
//   // expect-error: LINE:COL: SUBSTRING               exit 3, "FILE:LINE:COL: error: ...SUBSTRING..." on stderr
//   // expect-warning: LINE:COL: SUBSTRING             a warning there (repeatable); the spec must still compile
//   // expect-message: TEXT                            the violation's message contains TEXT
//   // expect-property: NAME verdict=V [states=N] [length=L]   the run with --property NAME
//   // expect-all-violations: NAME=L|holds|inconclusive ...    the run with --all-violations: each property's
//                                                               verdict (L: violated, with a counterexample of L steps)
//   // expect-overrides: KIND NAME, ...                the report's header lists exactly these replacements
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checker/cli/exit_codes.h"
#include "checker/cli/verify.h"
#include "tests/support/corpus_header.h"

namespace qpcheck {
namespace {

namespace fs = std::filesystem;

using Header = testing::CorpusHeader;
Header read_header(const fs::path& file) { return testing::read_corpus_header(file); }

std::vector<fs::path> specs_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".qpspec") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Run {
  int rc;
  std::string out, err;
};

// A search mode: exact storage with 1, 2 or 3 threads, or a partial storage (one thread).
struct Mode {
  int threads = 1;
  explore::Storage storage = explore::Storage::kExact;
  bool por = false;
  bool no_symmetry = false;
};

Run verify(const fs::path& file, const std::vector<std::string>& params, bool json, Mode mode = {},
           std::vector<std::string> properties = {}, bool all_violations = false) {
  cli::VerifyOptions o;
  o.file = file.string();
  o.params = params;
  o.properties = std::move(properties);
  o.all_violations = all_violations;
  o.threads = mode.threads;
  o.storage = mode.storage;
  o.por = mode.por;
  o.no_symmetry = mode.no_symmetry;
  o.format = json ? cli::Format::kJson : cli::Format::kText;
  std::ostringstream out, err;
  int rc = cli::run_verify(o, out, err);
  return Run{rc, out.str(), err.str()};
}

// Every search mode must give the same state count and counterexample (property and length); a partial storage
// (hash compaction, bitstate) says "inconclusive" where exact storage proves "holds", and does not claim shortest.
nlohmann::json check_good(const fs::path& file, Mode mode) {
  bool partial = mode.storage != explore::Storage::kExact;
  INFO("spec: ", file.string(), " threads: ", mode.threads, " storage: ", static_cast<int>(mode.storage));
  Header h = read_header(file);
  REQUIRE_MESSAGE(h.expect.count("verdict"), "no '// expect: verdict=...' line in the header");
  Run r = verify(file, h.params, true, mode);
  INFO("stderr: ", r.err);
  if ((partial || mode.por) && r.err.find("cannot be combined with the liveness propert") != std::string::npos) {
    // A spec with liveness properties: partial storage and --por are refused (unsound for cycles).
    CHECK(r.rc == cli::code(cli::ExitCode::kUsage));
    return nlohmann::json();
  }
  if (mode.por && r.err.find("symmetry reduction (symmetric ") != std::string::npos) {
    CHECK(r.rc == cli::code(cli::ExitCode::kUsage));  // --por over orbit representatives is refused
    return nlohmann::json();
  }
  REQUIRE(r.rc <= 2);
  nlohmann::json j = nlohmann::json::parse(r.out);
  std::string verdict = h.expect["verdict"];
  if (partial && verdict == "holds") verdict = "inconclusive";
  CHECK(j["verdict"] == verdict);
  CHECK(r.rc == (verdict == "holds" ? 0 : verdict == "violated" ? 1 : 2));
  if (mode.por) return j;  // partial-order reduction: the same verdict, over fewer states, by another path
  const bool unreduced = mode.no_symmetry && h.expect.count("unreduced");
  if (h.expect.count("states") && !unreduced) {
    CHECK(j["stats"]["states"].get<uint64_t>() == std::stoull(h.expect["states"]));
  }
  if (unreduced) CHECK(j["stats"]["states"].get<uint64_t>() == std::stoull(h.expect["unreduced"]));
  CHECK(j.contains("symmetry") == (h.expect.count("unreduced") && !mode.no_symmetry));
  if (verdict == "violated") {
    REQUIRE_MESSAGE(h.expect.count("property"), "a violated spec must name the property");
    REQUIRE_MESSAGE(h.expect.count("length"), "a violated spec must give the counterexample length");
    CHECK(j["violation"]["property"] == h.expect["property"]);
    CHECK(j["steps"].size() == std::stoull(h.expect["length"]));
    // A lasso (liveness): the prefix is a shortest one, the cycle is not promised shortest.
    CHECK(j["violation"]["shortest"] == (!partial && !j.contains("cycle")));
    if (h.expect.count("cycle")) {
      REQUIRE(j.contains("cycle"));
      CHECK(j["cycle"]["length"].get<uint64_t>() == std::stoull(h.expect["cycle"]));
    } else {
      CHECK(!j.contains("cycle"));
    }
    if (!h.expect_message.empty()) CHECK(j["violation"]["message"].get<std::string>().find(h.expect_message) !=
                                         std::string::npos);
  }
  // Warnings (shadowed names, unreachable statements): each at its place.
  for (const std::string& w : h.expect_warnings) {
    size_t colon = w.find(": ");
    REQUIRE(colon != std::string::npos);
    CHECK(r.err.find(file.string() + ":" + w.substr(0, colon) + ": warning: " + w.substr(colon + 2)) !=
          std::string::npos);
  }
  if (!h.expect_overrides.empty()) {
    std::string listed;
    for (const auto& o : j["overrides"]) {
      listed += (listed.empty() ? "" : ", ") + o["kind"].get<std::string>() + " " + o["name"].get<std::string>();
    }
    CHECK(listed == h.expect_overrides);
  } else {
    CHECK(j["overrides"].empty());
  }
  return j;
}

// The header's expect-property line: the run with --property NAME.
void check_property_run(const fs::path& file) {
  Header h = read_header(file);
  if (h.expect_property.empty()) return;
  INFO("spec: ", file.string(), " --property ", h.expect_property[0]);
  Run r = verify(file, h.params, true, {}, {h.expect_property[0]});
  INFO("stderr: ", r.err);
  nlohmann::json j = nlohmann::json::parse(r.out);
  std::map<std::string, std::string> want;
  for (size_t i = 1; i < h.expect_property.size(); ++i) {
    const std::string& kv = h.expect_property[i];
    if (size_t eq = kv.find('='); eq != std::string::npos) want[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  CHECK(j["verdict"] == want["verdict"]);
  CHECK(j["properties"]["checked"] == nlohmann::json::array({h.expect_property[0]}));
  if (want.count("states")) CHECK(j["stats"]["states"].get<uint64_t>() == std::stoull(want["states"]));
  if (want["verdict"] == "violated") {
    CHECK(j["violation"]["property"] == h.expect_property[0]);
    if (want.count("length")) CHECK(j["steps"].size() == std::stoull(want["length"]));
  }
}

// The header's expect-all-violations line: every checked property's verdict and counterexample length.
void check_all_violations(const fs::path& file) {
  Header h = read_header(file);
  if (h.expect_all.empty()) return;
  INFO("spec: ", file.string(), " --all-violations");
  Run r = verify(file, h.params, true, {}, {}, true);
  INFO("stderr: ", r.err);
  nlohmann::json j = nlohmann::json::parse(r.out);
  std::vector<std::pair<std::string, std::string>> got;
  bool any = false;
  for (const auto& res : j["results"]) {
    std::string v = res["verdict"];
    any = any || v == "violated";
    got.emplace_back(res["property"], v == "violated" ? std::to_string(res["length"].get<size_t>()) : v);
  }
  std::vector<std::pair<std::string, std::string>> want = h.expect_all;
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  CHECK(got == want);
  CHECK(r.rc == (any ? 1 : 0));
  CHECK(j["all_violations"] == true);
  // One full report per violated property, each shortest and ending in its own violation.
  size_t reports = 0;
  for (const auto& v : j["violations"]) {
    ++reports;
    CHECK(v["violation"]["shortest"] == true);
    for (const auto& res : j["results"]) {
      if (res["property"] == v["violation"]["property"]) CHECK(res["length"] == v["steps"].size());
    }
  }
  CHECK(reports == static_cast<size_t>(std::count_if(want.begin(), want.end(), [](const auto& p) {
          return p.second != "holds" && p.second != "inconclusive";
        })));
}

TEST_CASE("shipped specs and corpus models give their expected verdict, state count and counterexample length") {
  std::vector<fs::path> files = specs_in("spec");
  size_t shipped = files.size();
  for (const fs::path& f : specs_in("tests/corpus")) files.push_back(f);
  CHECK(shipped >= 7);
  for (const fs::path& f : files) {
    nlohmann::json one = check_good(f, Mode{1, explore::Storage::kExact});
    check_property_run(f);
    check_all_violations(f);
    for (Mode mode : {Mode{1, explore::Storage::kHashCompaction}, Mode{1, explore::Storage::kBitstate},
                      Mode{1, explore::Storage::kExact, true}}) {
      check_good(f, mode);
    }
    // Symmetry reduction: the spec without it gives the same verdict, property and counterexample length over
    // the unreduced count; the real run printed has the length of the representatives' path.
    if (read_header(f).expect.count("unreduced")) {
      INFO("spec: ", f.string(), " --no-symmetry");
      nlohmann::json full = check_good(f, Mode{1, explore::Storage::kExact, false, true});
      CHECK(full["verdict"] == one["verdict"]);
      CHECK(full.value("violation", nlohmann::json()) == one.value("violation", nlohmann::json()));
      CHECK(full["steps"].size() == one["steps"].size());
    }
    // Parallel BFS (hash-partitioned store): its own state ids, so maybe another counterexample, but the same counts,
    // verdict, property and length as one thread, and the same run every time for a given thread count.
    for (int threads : {2, 3}) {
      INFO("spec: ", f.string(), " threads: ", threads);
      nlohmann::json par = check_good(f, Mode{threads, explore::Storage::kExact});
      CHECK(par["verdict"] == one["verdict"]);
      CHECK(par["stats"]["states"] == one["stats"]["states"]);
      CHECK(par["stats"]["transitions"] == one["stats"]["transitions"]);
      CHECK(par["stats"]["depth"] == one["stats"]["depth"]);
      CHECK(par["violation"] == one["violation"]);
      CHECK(par["steps"].size() == one["steps"].size());
      if (one["verdict"] == "violated") {
        nlohmann::json again = check_good(f, Mode{threads, explore::Storage::kExact});
        CHECK(again["steps"] == par["steps"]);
      }
    }
  }
}

TEST_CASE("malformed specs: a clear file:line:col diagnostic and exit code 3, never a crash") {
  std::vector<fs::path> files = specs_in("tests/bad");
  CHECK(files.size() >= 20);
  for (const fs::path& f : files) {
    INFO("spec: ", f.string());
    Header h = read_header(f);
    bool warning = !h.expect_warnings.empty();
    const std::string& want = warning ? h.expect_warnings.front() : h.expect_error;
    REQUIRE_MESSAGE(!want.empty(), "no '// expect-error:' or '// expect-warning:' line in the header");
    size_t colon = want.find(": ");
    REQUIRE(colon != std::string::npos);
    std::string pos = want.substr(0, colon), text = want.substr(colon + 2);
    Run r = verify(f, h.params, false);
    INFO("stderr: ", r.err);
    std::string prefix = f.string() + ":" + pos + (warning ? ": warning: " : ": error: ");
    CHECK(r.err.find(prefix) != std::string::npos);
    CHECK(r.err.find(text) != std::string::npos);
    if (warning) CHECK(r.rc != cli::code(cli::ExitCode::kInvalidSpec));
    else CHECK(r.rc == cli::code(cli::ExitCode::kInvalidSpec));
  }
}

}  // namespace
}  // namespace qpcheck
