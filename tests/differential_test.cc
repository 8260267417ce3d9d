// Two engines, one truth: on every shipped spec (spec/*.qpspec) and corpus model (tests/corpus), the explicit
// explorer (BFS bounded to K+1 steps) and Z3 bounded model checking up to K agree on the verdict, on the violated
// property and on the length of the shortest counterexample of length <= K; and k-induction (to depth min(K, J))
// never proves a spec whose full explicit verdict (its header, checked by corpus_test) is "violated", nor reports a
// counterexample the explicit engine does not have.
// Depths: with QPCHECK_DIFFERENTIAL=full (the long run), K = 13 (the longest corpus counterexample) and J = 6. By
// default (CI), K is the header's counterexample length where that is at most 13 (so BMC must find exactly the
// shortest one), else 6, and J = 3: a Z3 step of the whole library costs about 1 s, and 155 specs at 13 + 6 steps
// took over 3,000 CPU seconds. Either way a header's `// bmc-depth: K` caps K.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <doctest/doctest.h>

#include "checker/explore/explorer.h"
#include "checker/gate/property_runs.h"
#include "checker/lang/properties.h"
#include "checker/symbolic/engine.h"
#include "checker/symbolic/load.h"
#include "tests/support/corpus_header.h"

namespace qpcheck {
namespace {

namespace fs = std::filesystem;


std::vector<fs::path> specs() {
  std::vector<fs::path> out;
  for (const char* dir : {"spec", "tests/corpus"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".qpspec") out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Bazel's test sharding (shard_count in tests/BUILD.bazel): shard i of n takes every n-th file from i.
struct Shard {
  int index = 0, total = 1;
};

Shard shard() {
  Shard s;
  const char* total = std::getenv("TEST_TOTAL_SHARDS");
  const char* index = std::getenv("TEST_SHARD_INDEX");
  if (total != nullptr && index != nullptr) {
    s.total = std::max(1, std::atoi(total));
    s.index = std::atoi(index);
  }
  if (const char* status = std::getenv("TEST_SHARD_STATUS_FILE")) std::ofstream{status};  // "this test shards"
  return s;
}

bool full_run() {
  const char* v = std::getenv("QPCHECK_DIFFERENTIAL");
  return v != nullptr && std::string(v) == "full";
}

// K for one spec (see the top of this file).
int bmc_depth(testing::CorpusHeader& h) {
  int k = 13;
  if (!full_run()) {
    const bool violated = h.expect["verdict"] == "violated";
    const int length = violated && h.expect.count("length") ? std::stoi(h.expect["length"]) : -1;
    k = length >= 0 && length <= 13 ? length : 6;
  }
  return h.bmc_depth < 0 ? k : std::min(k, h.bmc_depth);
}

TEST_CASE("explicit BFS and Z3 BMC agree on every corpus spec; k-induction never proves a refuted spec") {
  std::vector<fs::path> files = specs();
  CHECK(files.size() >= 25);
  const Shard sh = shard();
  int violated = 0, proved_or_open = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(sh.total)) != sh.index) continue;
    const fs::path& f = files[i];
    auto start = std::chrono::steady_clock::now();
    INFO("spec: ", f.string());
    testing::CorpusHeader h = testing::read_corpus_header(f);
    REQUIRE(h.expect.count("verdict"));
    const int depth = bmc_depth(h);
    auto spec = symbolic::load_spec(f.string(), {}, h.overrides(), {});
    model::ModelSystem& sys = *spec->systems.at(0);
    // A spec's `check` declarations choose its properties: both engines check those (lang/properties.h).
    lang::PropertyPlan plan = lang::plan_properties(*spec->compiled.at(0).model, {}, true);

    explore::Options eo;
    eo.limits.max_depth = static_cast<uint64_t>(depth) + 1;
    model::CheckResult ex =
        plan.everything
            ? explore::explore(sys, eo)
            : gate::run_restricted(*spec->compiled.at(0).model, plan.safety_names(), eo, f.string(), "bfs").result;
    bool ex_violated = ex.outcome == model::Outcome::kViolated && ex.path.actions.size() <= static_cast<size_t>(depth);

    symbolic::Options so;
    so.depth = depth;
    if (!plan.everything) so.properties = plan.safety_names();
    symbolic::Result bmc = symbolic::check(spec->family, so);
    INFO("bmc: ", bmc.reason);
    if (ex_violated) {
      ++violated;
      REQUIRE(bmc.result.outcome == model::Outcome::kViolated);
      CHECK(bmc.result.path.actions.size() == ex.path.actions.size());
      CHECK(bmc.result.violation->property == ex.violation->property);
      CHECK(bmc.result.shortest);
      // The full explicit verdict and length (header) agree too.
      CHECK(h.expect["verdict"] == "violated");
      CHECK(std::to_string(bmc.result.path.actions.size()) == h.expect["length"]);
    } else {
      ++proved_or_open;
      CHECK(bmc.result.outcome == model::Outcome::kInconclusive);
      CHECK(bmc.result.limit == "no violation up to depth " + std::to_string(depth));
    }

    symbolic::Options ko;
    ko.mode = symbolic::Mode::kKind;
    ko.depth = std::min(depth, full_run() ? 6 : 3);
    ko.properties = so.properties;
    symbolic::Result kind = symbolic::check(spec->family, ko);
    INFO("kind: ", kind.reason);
    // The header's verdict covers the liveness properties too, which neither Z3 engine checks.
    if (kind.result.outcome == model::Outcome::kHolds && plan.liveness_names().empty()) {
      CHECK(h.expect["verdict"] == "holds");
    }
    if (kind.result.outcome == model::Outcome::kViolated) {
      REQUIRE(ex_violated);
      CHECK(kind.result.path.actions.size() == ex.path.actions.size());
    }
    if (ex_violated && ex.path.actions.size() <= static_cast<size_t>(ko.depth)) {
      CHECK(kind.result.outcome == model::Outcome::kViolated);
    }
    MESSAGE(f.string() << ": " << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                       << " s");
  }
  // Both outcomes occur: over all files, and in every shard.
  CHECK(violated >= (sh.total == 1 ? 10 : 1));
  CHECK(proved_or_open >= (sh.total == 1 ? 12 : 1));
}

}  // namespace
}  // namespace qpcheck
