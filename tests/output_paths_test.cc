// Outputs of gate, show and verify --trace-out never overwrite each other or their input: two reports on one path, an
// output on the spec or trace it reads, two outputs on stdout are usage errors (exit 4) before anything is written; two
// specs with one file stem get distinct counterexample files; a spec named twice is checked once. diff of two specs
// with no configuration in common does not claim "no verdict changes".
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checker/cli/diff.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/gate.h"
#include "checker/cli/output_paths.h"
#include "checker/cli/show.h"
#include "checker/cli/verify.h"

namespace qpcheck {
namespace {

namespace fs = std::filesystem;

const char kSpec[] = "tests/gate/unexpected.qpspec";  // n=2 violates `small`, unexpectedly

fs::path tmp_dir(const std::string& name) {
  const char* t = std::getenv("TEST_TMPDIR");
  fs::path p = fs::path(t ? t : "/tmp") / "output_paths_test" / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Run {
  int rc;
  std::string out, err;
};

Run gate(cli::GateOptions o) {
  std::ostringstream out, err;
  int rc = cli::run_gate(o, out, err);
  return Run{rc, out.str(), err.str()};
}

TEST_CASE("output_path_conflict: same file, same file spelled differently, stdout twice, output on an input") {
  fs::path d = tmp_dir("conflict");
  std::string a = (d / "a.xml").string(), a2 = (d / "sub" / ".." / "a.xml").string();
  CHECK(cli::output_path_conflict({{"--junit", a}, {"--sarif", (d / "b.xml").string()}}, {}, false) == "");
  CHECK(cli::output_path_conflict({{"--junit", a}, {"--sarif", ""}, {"--json", ""}}, {}, false) == "");
  CHECK(cli::output_path_conflict({{"--junit", a}, {"--sarif", a2}}, {}, false) ==
        "--junit and --sarif both name '" + a2 + "': one report would overwrite the other");
  CHECK(cli::output_path_conflict({{"--svg", "-"}, {"--mermaid", "-"}}, {}, true) ==
        "--svg and --mermaid both write to stdout; give one of them a file");
  CHECK(cli::output_path_conflict({{"--svg", "-"}, {"--mermaid", "m.txt"}}, {}, true) == "");
  CHECK(cli::output_path_conflict({{"--json", a2}}, {{"spec", a}}, false) ==
        "--json '" + a2 + "' would overwrite the spec it reads");
}

TEST_CASE("gate: two reports on one file, or a report on a spec, are refused before the search") {
  fs::path d = tmp_dir("gate_same");
  cli::GateOptions o;
  o.paths = {kSpec};
  o.junit = (d / "r.out").string();
  o.sarif = (d / "." / "r.out").string();
  Run r = gate(o);
  CHECK(r.rc == cli::code(cli::ExitCode::kUsage));
  CHECK(r.err == "qpcheck: error: --junit and --sarif both name '" + o.sarif +
                     "': one report would overwrite the other\n");
  CHECK(r.out.empty());
  CHECK_FALSE(fs::exists(d / "r.out"));

  // A report path that names a spec being checked would replace the spec by the report.
  fs::copy_file(kSpec, d / "x.qpspec");
  std::string before = slurp(d / "x.qpspec");
  cli::GateOptions s;
  s.paths = {d.string()};
  s.json = (d / "x.qpspec").string();
  r = gate(s);
  CHECK(r.rc == cli::code(cli::ExitCode::kUsage));
  CHECK(r.err.find("would overwrite the spec it reads") != std::string::npos);
  CHECK(slurp(d / "x.qpspec") == before);
}

TEST_CASE("gate: specs with one stem in two folders keep both counterexamples; a spec named twice runs once") {
  fs::path d = tmp_dir("gate_stem");
  fs::create_directories(d / "a");
  fs::create_directories(d / "b");
  fs::copy_file(kSpec, d / "a" / "x.qpspec");
  fs::copy_file(kSpec, d / "b" / "x.qpspec");
  cli::GateOptions o;
  o.paths = {(d / "a").string(), (d / "b").string()};
  o.svg_dir = (d / "svg").string();
  o.trace_dir = (d / "traces").string();
  Run r = gate(o);
  CHECK(r.rc == 1);
  CHECK(fs::exists(d / "svg" / "x.n=2.small.svg"));
  CHECK(fs::exists(d / "svg" / "x.n=2.small.2.svg"));
  CHECK(fs::exists(d / "traces" / "x.n=2.small.json"));
  CHECK(fs::exists(d / "traces" / "x.n=2.small.2.json"));
  nlohmann::json t = nlohmann::json::parse(slurp(d / "traces" / "x.n=2.small.2.json"));
  CHECK(t["spec"] == (d / "b" / "x.qpspec").string());

  cli::GateOptions twice;
  twice.paths = {(d / "a" / "x.qpspec").string(), (d / "a").string()};
  twice.format = cli::Format::kJson;
  r = gate(twice);
  CHECK(r.rc == 1);
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["counts"]["specs"] == 1);
  CHECK(j["counts"]["configurations"] == 2);
}

TEST_CASE("show: two outputs on one file, both on stdout, or one on the report itself are refused") {
  fs::path d = tmp_dir("show");
  std::string report = (d / "t.json").string();
  cli::VerifyOptions v;
  v.file = kSpec;
  v.params = {"n=2"};
  v.trace_out = report;
  std::ostringstream vo, ve;
  REQUIRE(cli::run_verify(v, vo, ve) == 1);
  const std::string before = slurp(report);

  auto show = [&](cli::ShowOptions s) {
    s.report = report;
    std::ostringstream out, err;
    int rc = cli::run_show(s, out, err);
    return Run{rc, out.str(), err.str()};
  };
  cli::ShowOptions same;
  same.svg = (d / "c.svg").string();
  same.html = (d / "c.svg").string();
  Run r = show(same);
  CHECK(r.rc == cli::code(cli::ExitCode::kUsage));
  CHECK(r.err == "qpcheck: error: --svg and --html both name '" + same.html +
                     "': one report would overwrite the other\n");
  CHECK_FALSE(fs::exists(d / "c.svg"));

  cli::ShowOptions stdout_twice;
  stdout_twice.svg = "-";
  stdout_twice.mermaid = "-";
  r = show(stdout_twice);
  CHECK(r.rc == cli::code(cli::ExitCode::kUsage));
  CHECK(r.out.empty());

  cli::ShowOptions onto_input;
  onto_input.svg = (d / "." / "t.json").string();
  r = show(onto_input);
  CHECK(r.rc == cli::code(cli::ExitCode::kUsage));
  CHECK(r.err.find("would overwrite the report it reads") != std::string::npos);
  CHECK(slurp(report) == before);

  cli::ShowOptions fine;
  fine.svg = (d / "c.svg").string();
  fine.mermaid = "-";
  r = show(fine);
  CHECK(r.rc == 0);
  CHECK(r.out.rfind("sequenceDiagram", 0) == 0);
  CHECK(slurp(d / "c.svg").rfind("<svg", 0) == 0);
}

}  // namespace
}  // namespace qpcheck

namespace qpcheck {
namespace {

TEST_CASE("verify: --trace-out naming the spec is refused (it would replace the spec by the report)") {
  fs::path d = tmp_dir("verify");
  fs::copy_file(kSpec, d / "v.qpspec");
  const std::string before = slurp(d / "v.qpspec");
  for (cli::Engine engine : {cli::Engine::kExplicit, cli::Engine::kBmc}) {
    cli::VerifyOptions v;
    v.file = (d / "v.qpspec").string();
    v.trace_out = (d / "." / "v.qpspec").string();
    v.engine = engine;
    std::ostringstream out, err;
    CHECK(cli::run_verify(v, out, err) == cli::code(cli::ExitCode::kUsage));
    CHECK(err.str() == "qpcheck: error: --trace-out '" + v.trace_out + "' would overwrite the spec it reads\n");
    CHECK(slurp(d / "v.qpspec") == before);
  }
}

TEST_CASE("gate and diff: --time-limit nan/inf/-1 and --max-states 1e3/-1 are refused, not taken as no limit") {
  auto parse = [](const std::string& sub, std::vector<std::string> args) {
    CLI::App app;
    cli::GateOptions g;
    cli::DiffOptions d;
    CLI::App* s = app.add_subcommand(sub);
    if (sub == "gate") cli::setup_gate(*s, g);
    else cli::setup_diff(*s, d);
    args.insert(args.begin(), sub);
    std::reverse(args.begin(), args.end());
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  for (const std::string sub : {"gate", "diff"}) {
    std::vector<std::string> files = sub == "gate" ? std::vector<std::string>{"x.qpspec"}
                                                   : std::vector<std::string>{"a.qpspec", "b.qpspec"};
    for (const auto& bad : std::vector<std::vector<std::string>>{{"--time-limit", "nan"},
                                                                 {"--time-limit", "inf"},
                                                                 {"--time-limit", "-1"},
                                                                 {"--max-states", "1e3"},
                                                                 {"--max-states", "-1"}}) {
      std::vector<std::string> args = files;
      args.insert(args.end(), bad.begin(), bad.end());
      INFO(sub, " ", bad[0], " ", bad[1]);
      std::string e = parse(sub, args);
      CHECK(e.find(bad[0] + ": expected ") == 0);
      CHECK(e.find("'" + bad[1] + "'") != std::string::npos);
    }
    std::vector<std::string> good = files;
    good.insert(good.end(), {"--time-limit", "1.5", "--max-states", "100"});
    CHECK(parse(sub, good) == "");
  }
}

TEST_CASE("diff: specs with no configuration in common compare nothing: exit 2, never 'no verdict changes'") {
  cli::DiffOptions o;
  o.old_spec = kSpec;                               // configurations n=1, n=2
  o.new_spec = "tests/gate/vacuous.qpspec";          // configuration default
  std::ostringstream out, err;
  CHECK(cli::run_diff(o, out, err) == cli::code(cli::ExitCode::kInconclusive));
  CHECK(out.str().find("Nothing compared: the two specs have no configuration in common") != std::string::npos);
  CHECK(out.str().find("No verdict changes") == std::string::npos);
}

}  // namespace
}  // namespace qpcheck
