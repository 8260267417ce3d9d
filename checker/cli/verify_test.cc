#include "checker/cli/verify.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checker/cli/exit_codes.h"

namespace qpcheck::cli {
namespace {

// Parses `args` as `verify ARGS...`; returns "" or CLI11's error message.
std::string parse(std::vector<std::string> args, VerifyOptions& opt) {
  CLI::App app;
  CLI::App* verify = app.add_subcommand("verify");
  setup_verify(*verify, opt);
  std::vector<std::string> argv = {"qpcheck", "verify"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::reverse(argv.begin(), argv.end());
  argv.pop_back();  // program name
  try {
    app.parse(argv);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

std::string fmt_args(const std::vector<std::string>& args) {
  std::string s;
  for (const std::string& a : args) s += a + " ";
  return s;
}

std::string tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

struct Run {
  int rc;
  std::string out, err;
};
Run run(VerifyOptions opt) {
  std::ostringstream out, err;
  int rc = run_verify(opt, out, err);
  return Run{rc, out.str(), err.str()};
}

TEST_CASE("options: numbers are checked, not wrapped or silently dropped") {
  VerifyOptions o;
  CHECK(parse({"f.qpspec", "--max-states", "10", "--max-depth", "3", "--time-limit", "1.5"}, o) == "");
  CHECK(o.max_states == 10);
  CHECK(o.max_depth == 3);
  CHECK(o.time_limit == 1.5);
  CHECK(o.strategy == explore::Strategy::kBfs);
  for (auto bad : std::vector<std::vector<std::string>>{{"--max-states", "-1"},
                                                        {"--max-depth", "-3"},
                                                        {"--max-states", "1e3"},
                                                        {"--time-limit", "nan"},
                                                        {"--time-limit", "-1"},
                                                        {"--time-limit", "inf"},
                                                        {"--strategy", "random"},
                                                        {"--format", "xml"},
                                                        {"--no-such-option"}}) {
    VerifyOptions v;
    std::vector<std::string> args = {"f.qpspec"};
    args.insert(args.end(), bad.begin(), bad.end());
    INFO(bad[0], " ", bad.size() > 1 ? bad[1] : "");
    CHECK(parse(args, v) != "");
  }
  CHECK(parse_bytes("512M") == 512ULL << 20);
  CHECK(parse_bytes("4G") == 4ULL << 30);
  CHECK(parse_bytes("1000") == 1000);
  CHECK_THROWS_AS(parse_bytes("-5G"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bytes("17179869184G"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bytes("12X"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bytes(""), std::invalid_argument);
}

TEST_CASE("enum options take their names only (any case), not the enum's number, and say what they expect") {
  VerifyOptions o;
  CHECK(parse({"f.qpspec", "--strategy", "DFS", "--format", "Json", "--storage", "bitstate", "--engine", "bmc"}, o) ==
        "");
  CHECK(o.strategy == explore::Strategy::kDfs);
  CHECK(o.format == Format::kJson);
  CHECK(o.storage == explore::Storage::kBitstate);
  CHECK(o.engine == Engine::kBmc);
  for (auto bad : std::vector<std::vector<std::string>>{
           {"--strategy", "1"}, {"--format", "1"}, {"--storage", "2"}, {"--engine", "2"}, {"--format", "xml"}}) {
    VerifyOptions v;
    INFO(bad[0], " ", bad[1]);
    std::string msg = parse({"f.qpspec", bad[0], bad[1]}, v);
    CHECK(msg.find("found '" + bad[1] + "'") != std::string::npos);
  }
  VerifyOptions v;
  CHECK(parse({"f.qpspec", "--storage", "exactly"}, v).find("expected exact, hash-compaction or bitstate") !=
        std::string::npos);
}

TEST_CASE("options the chosen engine or storage would ignore are refused (exit 4), not silently dropped") {
  const std::vector<std::vector<std::string>> refused = {
      {"--engine", "bmc", "--witness"},          {"--engine", "bmc", "--time-limit", "5"},
      {"--engine", "kind", "--max-states", "9"}, {"--engine", "kind", "--max-depth", "3"},
      {"--engine", "bmc", "--threads", "2"},     {"--engine", "bmc", "--storage", "bitstate"},
      {"--engine", "kind", "--por"},             {"--engine", "bmc", "--strategy", "dfs"},
      {"--engine", "bmc", "--max-memory", "1G"}, {"--depth", "3"},
      {"--smt-timeout", "1"},                    {"--engine", "explicit", "--smt-rlimit", "100"},
      {"--hashes", "3"},                         {"--storage", "hash-compaction", "--bitstate-bits", "20"},
      {"--threads", "2", "--strategy", "dfs"}};
  for (const auto& args : refused) {
    VerifyOptions o;
    std::vector<std::string> argv = {"spec/01_linux_today.qpspec"};
    argv.insert(argv.end(), args.begin(), args.end());
    REQUIRE(parse(argv, o) == "");
    std::ostringstream out, err;
    INFO(fmt_args(args));
    CHECK(run_verify(o, out, err) == code(ExitCode::kUsage));
    CHECK(err.str().find("qpcheck: error: --") == 0);
    CHECK(out.str().empty());
  }
  // The combinations the options are for still run.
  VerifyOptions o;
  REQUIRE(parse({"tests/bad/../../spec/01_linux_today.qpspec", "--storage", "bitstate", "--bitstate-bits", "16",
                 "--hashes", "2"}, o) == "");
  CHECK(option_conflict(o) == "");
  VerifyOptions s;
  REQUIRE(parse({"f.qpspec", "--engine", "kind", "--depth", "3", "--smt-timeout", "1", "--smt-rlimit", "5"}, s) == "");
  CHECK(option_conflict(s) == "");
  VerifyOptions t;
  REQUIRE(parse({"f.qpspec", "--threads", "2", "--witness", "--max-states", "10"}, t) == "");
  CHECK(option_conflict(t) == "");
}

TEST_CASE("exit codes by class") {
  VerifyOptions o;
  o.file = "spec/01_linux_today.qpspec";
  CHECK(run(o).rc == code(ExitCode::kHolds));
  o.file = "spec/03_patch_passive_first_ib.qpspec";
  CHECK(run(o).rc == code(ExitCode::kViolated));
  o.max_states = 5;
  Run limited = run(o);
  CHECK(limited.rc == code(ExitCode::kInconclusive));
  CHECK(limited.out.find("INCONCLUSIVE: stopped by --max-states after 5 states") != std::string::npos);
  o.max_states = 0;
  o.params = {"connect_rnr_retry=9"};
  Run bad_param = run(o);
  CHECK(bad_param.rc == code(ExitCode::kUsage));
  CHECK(bad_param.err == "qpcheck: error: --param connect_rnr_retry=9: value out of range 0..7\n");
  o.params = {"connect_rnr_retry"};
  CHECK(run(o).rc == code(ExitCode::kUsage));
  o.params = {};
  o.file = "no/such/file.qpspec";
  Run missing = run(o);
  CHECK(missing.rc == code(ExitCode::kUsage));
  CHECK(missing.err ==
        "qpcheck: error: cannot read spec file 'no/such/file.qpspec' (missing, unreadable or not a regular file)\n");
  o.file = "/dev/zero";
  CHECK(run(o).rc == code(ExitCode::kUsage));
  o.file = "tests/bad/01_unknown_name.qpspec";
  CHECK(run(o).rc == code(ExitCode::kInvalidSpec));
}

// A folder with a small library (`lib/net.qpspec`: two invariants, a fail property, a retired property name) and a
// spec importing it; returns the spec's path.
std::string own_spec(const std::string& folder, const std::string& spec_text) {
  std::string dir = tmp(folder);
  std::filesystem::create_directories(dir + "/lib");
  std::ofstream(dir + "/lib/net.qpspec") << "var a: 0..3;\nvar b: bool;\n"
                                            "proc bump() { if a == 2 { fail too_many \"a third bump\"; } else { a = a + 1; } }\n"
                                            "invariant small: a < 2;\ninvariant never_b: !b;\n"
                                            "retired a_small \"renamed: small\";\n";
  std::ofstream(dir + "/spec.qpspec") << spec_text;
  return dir + "/spec.qpspec";
}

TEST_CASE("--property and --all-violations: exact verdicts, and every bad choice is exit 4 with the reason") {
  VerifyOptions o;
  o.file = own_spec("own_props", "import \"lib/net.qpspec\";\nprocess p { bump(); bump(); b = true; bump(); }\n");
  o.no_deadlock = true;
  Run first = run(o);
  CHECK(first.rc == code(ExitCode::kViolated));
  CHECK(first.out.find("VIOLATED: small") != std::string::npos);

  o.properties = {"never_b"};
  o.format = Format::kJson;
  Run only = run(o);
  CHECK(only.rc == code(ExitCode::kViolated));
  nlohmann::json j = nlohmann::json::parse(only.out);
  CHECK(j["violation"]["property"] == "never_b");
  CHECK(j["steps"].size() == 3);  // small (false after the second bump) is not evaluated
  CHECK(j["properties"]["checked"] == nlohmann::json::array({"never_b"}));
  o.properties = {"small", "too_many"};
  o.format = Format::kText;
  Run two = run(o);
  CHECK(two.rc == code(ExitCode::kViolated));
  CHECK(two.out.find("not checked (not selected by --property): never_b, runtime_error") != std::string::npos);
  CHECK(two.out.find("properties checked: small, too_many") != std::string::npos);

  o.properties = {"nosuch"};
  Run unknown = run(o);
  CHECK(unknown.rc == code(ExitCode::kUsage));
  CHECK(unknown.err.find("--property nosuch: unknown property (the spec's properties: small, never_b, too_many") !=
        std::string::npos);
  o.properties = {"a_small"};
  Run retired = run(o);
  CHECK(retired.rc == code(ExitCode::kUsage));
  CHECK(retired.err == "qpcheck: error: --property a_small: 'a_small' is retired: renamed: small\n");
  o.properties = {"deadlock"};
  CHECK(run(o).err == "qpcheck: error: --property deadlock and --no-deadlock contradict each other\n");

  o.properties = {};
  o.all_violations = true;
  Run all = run(o);
  CHECK(all.rc == code(ExitCode::kViolated));
  CHECK(all.out.find("3 of 4 checked properties violated") != std::string::npos);
  CHECK(all.out.find("=== small ===") != std::string::npos);
  CHECK(all.out.find("=== too_many ===") != std::string::npos);
  CHECK(all.out.find("=== never_b ===") != std::string::npos);
  CHECK(all.out.find("(every reachable state explored: 4 states;") != std::string::npos);
  CHECK(all.out.find("  small          violated (2 steps)\n  never_b        violated (3 steps)\n"
                     "  too_many       violated (4 steps)\n  runtime_error  holds\n") != std::string::npos);

  // One event that breaks two properties is shown once: the second names the first's counterexample.
  VerifyOptions twice;
  twice.file = own_spec("own_twice", "import \"lib/net.qpspec\";\ninvariant below_two: a <= 1;\n"
                                     "process p { bump(); bump(); b = true; }\n");
  twice.no_deadlock = true;
  twice.all_violations = true;
  Run same = run(twice);
  CHECK(same.rc == code(ExitCode::kViolated));
  CHECK(same.out.find("  below_two      violated (2 steps, the counterexample of small)\n") != std::string::npos);
  CHECK(same.out.find("  never_b        violated (3 steps)\n") != std::string::npos);
  CHECK(same.out.find("Counterexample: the 2 steps of small above, whose last state violates this property too\n") !=
        std::string::npos);
  CHECK(same.out.find("=== below_two ===") != std::string::npos);
  twice.format = Format::kJson;
  nlohmann::json tj = nlohmann::json::parse(run(twice).out);
  int repeats = 0;
  for (const nlohmann::json& r : tj["results"]) {
    if (r.contains("same_counterexample_as")) {
      ++repeats;
      CHECK(r["property"] == "below_two");
      CHECK(r["same_counterexample_as"] == "small");
    }
  }
  CHECK(repeats == 1);
  CHECK(tj["violations"].size() == 3);  // JSON keeps every counterexample whole

  // --all-violations is one breadth-first run with exact storage: the options that change that are refused.
  VerifyOptions p;
  CHECK(parse({o.file, "--all-violations", "--threads", "2"}, p) == "");
  Run threads = run(p);
  CHECK(threads.rc == code(ExitCode::kUsage));
  CHECK(threads.err.find("--threads cannot be combined with --all-violations") != std::string::npos);

  // A property the spec disables cannot be chosen on the command line.
  VerifyOptions d;
  d.file = own_spec("own_disabled", "import \"lib/net.qpspec\";\ndisable small \"not ours\";\n"
                                    "process p { bump(); }\n");
  d.properties = {"small"};
  Run disabled = run(d);
  CHECK(disabled.rc == code(ExitCode::kUsage));
  CHECK(disabled.err.find("--property small: the spec disables it (") != std::string::npos);
  CHECK(disabled.err.find("spec.qpspec:2:") != std::string::npos);
  d.properties = {};
  Run holds = run(d);
  CHECK(holds.rc == code(ExitCode::kHolds));
  CHECK(holds.out.find("not checked (disabled at ") != std::string::npos);

  // Retired names in the spec's own declarations are spec errors (exit 3) naming file:line:col.
  for (const char* decl : {"disable a_small;", "check a_small;", "expect a_small: violated;"}) {
    VerifyOptions r;
    r.file = own_spec("own_retired", std::string("import \"lib/net.qpspec\";\n") + decl + "\nprocess p { bump(); }\n");
    Run bad = run(r);
    INFO(decl, "\n", bad.err);
    CHECK(bad.rc == code(ExitCode::kInvalidSpec));
    CHECK(bad.err.find("spec.qpspec:2:") != std::string::npos);
    CHECK(bad.err.find("'a_small' is retired (at ") != std::string::npos);
    CHECK(bad.err.find("renamed: small") != std::string::npos);
  }
}

TEST_CASE("a spec file over 16 MiB is refused whole; one of exactly 16 MiB is read to its end") {
  // The reader grows its buffer chunk by chunk: the limit must still cut at 16 MiB + 1, not at a chunk boundary.
  const std::string body = "param N: 0..1 = 0;\nvar x: 0..1 = 0;\nprocess p { l: when x == 0 { x = 1; } }\n";
  std::string text = body + std::string((16u << 20) - body.size(), ' ');
  for (int extra : {0, 1}) {
    std::string path = tmp("big.qpspec");
    std::ofstream(path, std::ios::binary) << text << std::string(static_cast<size_t>(extra), '\n');
    VerifyOptions o;
    o.file = path;
    Run r = run(o);
    CAPTURE(extra);
    if (extra == 0) {
      CHECK(r.rc == code(ExitCode::kHolds));
    } else {
      CHECK(r.rc == code(ExitCode::kUsage));
      CHECK(r.err == "qpcheck: error: spec file '" + path + "' is larger than 16 MiB\n");
    }
  }
}

TEST_CASE("--trace-out: a bad path is a usage error before the search; a full disk still prints the report") {
  VerifyOptions o;
  o.file = "spec/03_patch_passive_first_ib.qpspec";
  o.trace_out = "/nonexistent-dir/trace.json";
  Run r = run(o);
  CHECK(r.rc == code(ExitCode::kUsage));
  CHECK(r.out.empty());
  o.trace_out = "/dev/full";
  Run full = run(o);
  CHECK(full.rc == code(ExitCode::kInternal));
  CHECK(full.out.find("VIOLATED: no_send_to_empty_rq") != std::string::npos);
  o.trace_out = tmp("trace.json");
  Run ok = run(o);
  CHECK(ok.rc == code(ExitCode::kViolated));
  std::ifstream in(o.trace_out);
  nlohmann::json j = nlohmann::json::parse(in);
  CHECK(j["steps"].size() == 10);
  CHECK(j["steps"][9]["actor"] == "rnr_retry_exceeded(e=ACTIVE)");
}

TEST_CASE("JSON output survives source text that is not UTF-8") {
  std::string path = tmp("latin1.qpspec");
  std::ofstream(path) << "var x: bool;\nprocess p { fail \"caf\xe9\"; } // \xff\n";
  VerifyOptions o;
  o.file = path;
  o.format = Format::kJson;
  Run r = run(o);
  CHECK(r.rc == code(ExitCode::kViolated));
  nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["violation"]["message"] == "caf\xef\xbf\xbd");  // U+FFFD
}

}  // namespace
}  // namespace qpcheck::cli

namespace qpcheck::cli {
namespace {

TEST_CASE("--names kernel: the text report in the kernel's names, the JSON report still replayable") {
  VerifyOptions opt;
  CHECK(parse({"spec/03_patch_passive_first_ib.qpspec", "--names", "kernel"}, opt) == "");
  CHECK(opt.names == trace::Names::kKernel);
  CHECK(parse({"x.qpspec", "--names", "posix"}, opt).find("expected user or kernel, found 'posix'") !=
        std::string::npos);
  VerifyOptions v;
  v.file = "spec/03_patch_passive_first_ib.qpspec";
  v.names = trace::Names::kKernel;
  v.trace_out = tmp("names_kernel.json");
  std::ostringstream out, err;
  CHECK(run_verify(v, out, err) == 1);
  CHECK(out.str().find("> ib_post_recv = post_recv(PASSIVE, 2)") != std::string::npos);
  CHECK(out.str().find("IB_WC_RNR_RETRY_EXC_ERR") != std::string::npos);
  CHECK(out.str().find("IBV_") == std::string::npos);
  CHECK(out.str().find("ibv_") == std::string::npos);
  std::ifstream in(v.trace_out);
  nlohmann::json j = nlohmann::json::parse(in);
  std::string status;  // the argument of step 10's observation (the call that carries the replay operation)
  for (const auto& c : j["steps"][9]["calls"]) {
    if (c.contains("replay") && status.empty()) status = c["replay"][0]["args"][1];
  }
  CHECK(status == "IBV_WC_RNR_RETRY_EXC_ERR");
  CHECK(j.dump().find("IB_WC_") == std::string::npos);
  // --all-violations: each counterexample in the kernel's names too.
  v.trace_out = "";
  v.all_violations = true;
  std::ostringstream all_out, all_err;
  CHECK(run_verify(v, all_out, all_err) == 1);
  CHECK(all_out.str().find("> ib_post_recv = post_recv(PASSIVE, 2)") != std::string::npos);
  CHECK(all_out.str().find("ibv_") == std::string::npos);
}

TEST_CASE("symmetry: exact orbit counts, the budget's sound fallback, a real counterexample, and the refusals") {
  // Three independent copies of a 34-state connection: C(34 + 2, 3) orbits, with any thread count.
  VerifyOptions o;
  o.file = "tests/corpus/symmetric_rdma_cm_N3_M2.qpspec";
  o.params = {"N=3", "M=2"};
  o.format = Format::kJson;
  for (int threads : {1, 2}) {
    o.threads = threads;
    Run r = run(o);
    REQUIRE(r.rc == 0);
    nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["stats"]["states"] == 7140);
    CHECK(j["symmetry"]["type"] == "Conn");
    CHECK(j["symmetry"]["values"] == 3);
    CHECK(j["symmetry"]["over_budget"] == 0);
  }
  o.threads = 1;
  // Here values with equal keys always stand alike, so even one renaming per state finds the orbit's
  // representative: exact, though the states over budget are counted.
  o.symmetry_budget = 1;
  {
    Run r = run(o);
    REQUIRE(r.rc == 0);
    nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["stats"]["states"] == 7140);
    CHECK(j["symmetry"]["over_budget"].get<uint64_t>() > 0);
  }
  // A token that any connection may take: nothing but the global `holder` tells the connections apart, so every
  // value ties. Exact: the initial state and one orbit of "taken" states (2); with a budget of one renaming the
  // three taken states keep their own holder (4, as without symmetry): sound, no reduction.
  {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "qpcheck_symmetry_test";
    std::filesystem::create_directories(dir);
    const std::filesystem::path spec = dir / "token.qpspec";
    std::ofstream(spec) << "type Conn = 0..2;\nvar holder: Conn;\nvar taken: bool;\nsymmetric Conn;\n"
                           "rule take(d: Conn) { holder = d; taken = true; }\n";
    VerifyOptions t;
    t.file = spec.string();
    t.format = Format::kJson;
    for (auto [budget, states] : {std::pair<uint64_t, int>{0, 2}, {1, 4}}) {
      t.symmetry_budget = budget;
      Run r = run(t);
      INFO(r.err);
      REQUIRE(r.rc == 0);
      nlohmann::json j = nlohmann::json::parse(r.out);
      CHECK(j["stats"]["states"] == states);
      CHECK((j["symmetry"]["over_budget"].get<uint64_t>() > 0) == (budget == 1));
    }
    t.symmetry_budget = 0;
    t.no_symmetry = true;
    CHECK(nlohmann::json::parse(run(t).out)["stats"]["states"] == 4);
  }
  // A queue of the type's values: its place past the length holds the lowest value in every state and is not
  // renamed. 8 states; 5 orbits ([] with one connection seen is one orbit: renaming the empty place too split it).
  {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "qpcheck_symmetry_test";
    std::filesystem::create_directories(dir);
    const std::filesystem::path spec = dir / "queue.qpspec";
    std::ofstream(spec) << "type Conn = 0..1;\nvar q: queue[1] of Conn;\nvar seen: array[Conn] of bool;\n"
                           "symmetric Conn;\n"
                           "rule put(d: Conn) when empty(q) && !seen[d] { push(q, d); seen[d] = true; }\n"
                           "rule get when !empty(q) { pop(q); }\n";
    VerifyOptions t;
    t.file = spec.string();
    t.format = Format::kJson;
    Run r = run(t);
    INFO(r.err);
    REQUIRE(r.rc == 0);
    CHECK(nlohmann::json::parse(r.out)["stats"]["states"] == 5);
    t.no_symmetry = true;
    CHECK(nlohmann::json::parse(run(t).out)["stats"]["states"] == 8);
  }
  o.symmetry_budget = 0;
  o.format = Format::kText;
  {
    Run r = run(o);
    CHECK(r.out.find("symmetry: the 3 values of Conn are interchangeable") != std::string::npos);
  }
  // The counterexample is a run of the model, action by action (every step's successor is the next state): the
  // trace names the real connection, and its length is the unreduced search's.
  o.file = "tests/corpus/symmetric_rdma_cm_N3_pf_viol_b.qpspec";
  o.params = {"N=3", "M=2", "PASSIVE_FIRST=1", "CLIENT_POST=1"};
  o.format = Format::kJson;
  Run sym = run(o);
  o.no_symmetry = true;
  Run full = run(o);
  REQUIRE(sym.rc == 1);
  REQUIRE(full.rc == 1);
  nlohmann::json js = nlohmann::json::parse(sym.out), jf = nlohmann::json::parse(full.out);
  CHECK(js["stats"]["states"] == 81);
  CHECK(jf["stats"]["states"] == 349);
  CHECK(!jf.contains("symmetry"));
  CHECK(js["steps"].size() == jf["steps"].size());
  CHECK(js["steps"] == jf["steps"]);  // this model's first real run is the unreduced search's counterexample
  o.no_symmetry = false;
  // Refused, with the reason: --por; --symmetry-budget on a spec without symmetry.
  o.por = true;
  Run por = run(o);
  CHECK(por.rc == code(ExitCode::kUsage));
  CHECK(por.err.find("cannot be combined with --por") != std::string::npos);
  o.por = false;
  o.file = "spec/01_linux_today.qpspec";
  o.params = {};
  o.symmetry_budget = 5;
  Run none = run(o);
  CHECK(none.rc == code(ExitCode::kUsage));
  CHECK(none.err.find("--symmetry-budget applies to a spec that declares") != std::string::npos);
}

}  // namespace
}  // namespace qpcheck::cli
