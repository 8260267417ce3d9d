// The CLI's reliability contract (docs/cli.md, "Signals", "Report files"): reports written whole or not at all, no
// output on an input of the run, SIGINT/SIGTERM ending in an inconclusive report, SIGPIPE costing no report file.
// Some cases run the qpcheck binary (a data dependency) to send it real signals.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checker/cli/atomic_file.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/gate.h"
#include "checker/cli/interrupt.h"
#include "checker/cli/show.h"
#include "checker/cli/synth.h"
#include "checker/cli/verify.h"

namespace qpcheck::cli {
namespace {

namespace fs = std::filesystem;

fs::path tmp_dir(const std::string& name) {
  const char* t = std::getenv("TEST_TMPDIR");
  fs::path p = fs::path(t ? t : "/tmp") / "reliability_test" / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// Files in `dir` other than `keep` (temporaries left behind).
std::vector<std::string> others(const fs::path& dir, const std::vector<std::string>& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (std::find(keep.begin(), keep.end(), n) == keep.end()) out.push_back(n);
  }
  return out;
}

struct Run {
  int rc;
  std::string out, err;
};
Run verify(VerifyOptions o) {
  std::ostringstream out, err;
  int rc = run_verify(o, out, err);
  return Run{rc, out.str(), err.str()};
}
Run gate(GateOptions o) {
  std::ostringstream out, err;
  int rc = run_gate(o, out, err);
  return Run{rc, out.str(), err.str()};
}

const char kLib[] = "var x: 0..3;\nproc bump() { if x < 3 { x = x + 1; } }\n";
const char kMain[] = "import \"lib.qpspec\";\nprocess p { bump(); bump(); }\ninvariant small: x < 2;\n";

TEST_CASE("AtomicFile: the destination changes only on commit; nothing is left behind") {
  fs::path d = tmp_dir("atomic");
  put(d / "r.json", "previous");
  {
    AtomicFile f;
    REQUIRE(f.open((d / "r.json").string()) == "");
    CHECK(f.write("new"));
    CHECK(slurp(d / "r.json") == "previous");
    CHECK(others(d, {"r.json"}).size() == 1);  // the temporary, beside it
  }  // destroyed without commit: a failed or interrupted run
  CHECK(slurp(d / "r.json") == "previous");
  CHECK(others(d, {"r.json"}).empty());
  AtomicFile f;
  REQUIRE(f.open((d / "r.json").string()) == "");
  f.write("complete");
  CHECK(f.commit() == "");
  CHECK(slurp(d / "r.json") == "complete");
  CHECK(others(d, {"r.json"}).empty());
  CHECK(AtomicFile().open((d / "missing" / "r.json").string()) != "");
  CHECK(AtomicFile().open(d.string()) == "it is a folder");
  CHECK(AtomicFile().open("") == "the path is empty");
  AtomicFile null;  // a device is written in place, never renamed over
  REQUIRE(null.open("/dev/null") == "");
  null.write("x");
  CHECK(null.commit() == "");
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("verify: --trace-out naming an imported file, or the spec through a hard link, is refused up front") {
  fs::path d = tmp_dir("clobber");
  put(d / "lib.qpspec", kLib);
  put(d / "main.qpspec", kMain);
  fs::create_hard_link(d / "main.qpspec", d / "link.json");
  VerifyOptions o;
  o.file = (d / "main.qpspec").string();
  o.trace_out = (d / "lib.qpspec").string();
  Run r = verify(o);
  CHECK(r.rc == code(ExitCode::kUsage));
  CHECK(r.err.find("would overwrite the imported file it reads") != std::string::npos);
  CHECK(r.out.empty());
  CHECK(slurp(d / "lib.qpspec") == kLib);
  o.trace_out = (d / "link.json").string();
  r = verify(o);
  CHECK(r.rc == code(ExitCode::kUsage));
  CHECK(r.err.find("would overwrite the spec it reads") != std::string::npos);
  CHECK(slurp(d / "main.qpspec") == kMain);
  o.trace_out = "/proc/version";  // not writable: exit 4 before the search, not 5 after it
  r = verify(o);
  CHECK(r.rc == code(ExitCode::kUsage));
  CHECK(r.out.empty());
  o.trace_out = (d / "t.json").string();
  CHECK(verify(o).rc == code(ExitCode::kViolated));
  CHECK(nlohmann::json::parse(slurp(d / "t.json"))["verdict"] == "violated");
}

TEST_CASE("gate: a report naming an imported file is refused before anything is written") {
  fs::path d = tmp_dir("gate_clobber");
  put(d / "lib.qpspec", kLib);
  put(d / "main.qpspec", kMain);
  GateOptions o;
  o.paths = {(d / "main.qpspec").string()};
  o.json = (d / "lib.qpspec").string();
  Run r = gate(o);
  CHECK(r.rc == code(ExitCode::kUsage));
  CHECK(r.err.find("--json") != std::string::npos);
  CHECK(r.err.find("would overwrite the imported file it reads") != std::string::npos);
  CHECK(slurp(d / "lib.qpspec") == kLib);
  o.json = "";
  o.trace_dir = d.string();  // artefacts land beside the inputs, never on them
  o.junit = (d / "g.xml").string();
  CHECK(gate(o).rc == code(ExitCode::kViolated));
  CHECK(slurp(d / "lib.qpspec") == kLib);
  CHECK(slurp(d / "g.xml").find("<testsuites") != std::string::npos);
}

TEST_CASE("empty output paths are usage errors, not 'no file'") {
  CLI::App app;
  VerifyOptions opt;
  CLI::App* v = app.add_subcommand("verify");
  setup_verify(*v, opt);
  // CLI11 takes the arguments last first.
  CHECK_THROWS_AS(app.parse(std::vector<std::string>{"", "--trace-out", "x.qpspec", "verify"}), CLI::ValidationError);
  opt.file = "x.qpspec";
  opt.given = {"--trace-out"};
  Run r = verify(opt);
  CHECK(r.rc == code(ExitCode::kUsage));
  CHECK(r.err.find("--trace-out needs a file name") != std::string::npos);
}

TEST_CASE("an interrupt ends verify and gate as inconclusive 'interrupted', with their reports complete") {
  fs::path d = tmp_dir("interrupt");
  put(d / "lib.qpspec", kLib);
  put(d / "main.qpspec", kMain);
  install_interrupt_handlers();
  ::raise(SIGTERM);  // the first signal only sets the flag
  REQUIRE(interrupt_flag().load());
  CHECK(interrupt_signal() == SIGTERM);
  VerifyOptions o;
  o.file = (d / "main.qpspec").string();
  o.trace_out = (d / "t.json").string();
  Run r = verify(o);
  CHECK(r.rc == code(ExitCode::kInconclusive));
  CHECK(r.out.find("INCONCLUSIVE: stopped by an interrupt (SIGINT or SIGTERM)") != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(slurp(d / "t.json"));
  CHECK(j["verdict"] == "inconclusive");
  CHECK(j["limit"] == "interrupted");
  GateOptions g;
  g.paths = {(d / "main.qpspec").string()};
  g.json = (d / "g.json").string();
  Run gr = gate(g);
  CHECK(gr.rc == code(ExitCode::kInconclusive));
  CHECK(gr.err.find("qpcheck: interrupted (signal 15)") != std::string::npos);
  nlohmann::json gj = nlohmann::json::parse(slurp(d / "g.json"));
  CHECK(gj["verdict"] == "inconclusive");
  CHECK(gj["specs"][0]["configurations"][0]["limit"] == "interrupted");
  reset_interrupt_for_testing();
  CHECK(verify(o).rc == code(ExitCode::kViolated));
}

TEST_CASE("an interrupt ends bmc, k-induction and synth as inconclusive, saying so, with the report complete") {
  fs::path d = tmp_dir("interrupt_symbolic");
  put(d / "lib.qpspec", kLib);
  put(d / "main.qpspec", kMain);
  put(d / "p.qpspec", "param top: 1..3 = 3;\nvar x: 0..3;\nprocess p { while x < top { x = x + 1; } }\n"
                      "invariant small: x < 2;\n");
  install_interrupt_handlers();
  ::raise(SIGINT);
  REQUIRE(interrupt_flag().load());
  for (Engine e : {Engine::kBmc, Engine::kKind}) {
    VerifyOptions o;
    o.file = (d / "main.qpspec").string();
    o.engine = e;
    o.trace_out = (d / "t.json").string();
    Run r = verify(o);
    CHECK(r.rc == code(ExitCode::kInconclusive));
    CHECK(r.out.find("interrupted (SIGINT or SIGTERM) at depth 0: nothing decided yet") != std::string::npos);
    nlohmann::json j = nlohmann::json::parse(slurp(d / "t.json"));
    CHECK(j["verdict"] == "inconclusive");
    CHECK(j["limit"].get<std::string>().rfind("interrupted", 0) == 0);
  }
  SynthOptions so;
  so.file = (d / "p.qpspec").string();
  so.params = {"top=*"};
  so.depth = 6;
  std::ostringstream out, err;
  CHECK(run_synth(so, out, err) == code(ExitCode::kInconclusive));
  CHECK(out.str().find("OPEN  for top=1..3 (interrupted (SIGINT or SIGTERM))") != std::string::npos);
  CHECK(err.str().find("qpcheck: interrupted (signal 2)") != std::string::npos);
  reset_interrupt_for_testing();
  std::ostringstream out2, err2;
  CHECK(run_synth(so, out2, err2) == code(ExitCode::kViolated));  // without the flag: top=1 holds, 2 and 3 fail
  CHECK(out2.str().find("interrupted") == std::string::npos);
}

TEST_CASE("a second signal ends the process at once, removing the temporary report files") {
  fs::path d = tmp_dir("second_signal");
  put(d / "r.json", "previous");
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    install_interrupt_handlers();
    AtomicFile f;
    if (!f.open((d / "r.json").string()).empty()) ::_exit(3);
    f.write("half a report");
    ::raise(SIGTERM);
    ::raise(SIGTERM);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  CHECK(slurp(d / "r.json") == "previous");
  CHECK(others(d, {"r.json"}).empty());
}

TEST_CASE("show draws a witness (a holds report with steps); a report with no steps is refused") {
  fs::path d = tmp_dir("show_witness");
  put(d / "w.qpspec", "var x: 0..2;\nproc inc() verbs \"ibv_post_send\" { x = x + 1; }\nprocess p { inc(); inc(); }\n");
  VerifyOptions v;
  v.file = (d / "w.qpspec").string();
  v.witness = true;
  v.trace_out = (d / "w.json").string();
  Run vr = verify(v);
  REQUIRE(vr.rc == code(ExitCode::kHolds));
  CHECK(vr.out.find("witness: written to " + v.trace_out) != std::string::npos);
  v.trace_out = "";
  CHECK(verify(v).out.find("witness: write it with --trace-out FILE") != std::string::npos);
  ShowOptions so;
  so.report = (d / "w.json").string();
  so.svg = (d / "w.svg").string();
  std::ostringstream out, err;
  CHECK(run_show(so, out, err) == code(ExitCode::kHolds));
  CHECK(slurp(d / "w.svg").find("witness (holds") != std::string::npos);
  v.witness = false;
  v.trace_out = (d / "h.json").string();
  REQUIRE(verify(v).rc == code(ExitCode::kHolds));
  so.report = v.trace_out;
  std::ostringstream out2, err2;
  CHECK(run_show(so, out2, err2) == code(ExitCode::kInvalidSpec));
  CHECK(err2.str().find("neither a counterexample nor a witness") != std::string::npos);
}

// Runs the binary under bash; returns bash's exit code.
int shell(const std::string& script) {
  int status = std::system(("bash -c '" + script + "'").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_CASE("SIGPIPE: verify into a closed pipe keeps the report file and the verdict's exit code") {
  fs::path d = tmp_dir("sigpipe");
  put(d / "lib.qpspec", kLib);
  put(d / "main.qpspec", kMain);
  std::string t = (d / "t.json").string();
  int rc = shell("checker/cli/qpcheck verify " + (d / "main.qpspec").string() + " --trace-out " + t +
                 " | true; exit ${PIPESTATUS[0]}");  // the reader is gone before the report is printed
  CHECK(rc == code(ExitCode::kViolated));
  CHECK(nlohmann::json::parse(slurp(t))["verdict"] == "violated");
}

// Runs the qpcheck binary with `args` (its stdout to DIR/out.txt), waits until its trace file's temporary appears in
// `d` (the front end is done and the handlers are installed), `settle_ms` more, then sends SIGTERM; the trace file
// (DIR/t.json, "previous" before) must be untouched until then. Returns the exit code (the process must exit).
int sigterm_binary(const fs::path& d, const std::vector<std::string>& args, int settle_ms) {
  const std::vector<std::string> keep{"slow.qpspec", "t.json", "out.txt"};
  std::string out = (d / "out.txt").string();
  std::vector<char*> argv;
  std::vector<std::string> all{"qpcheck"};
  all.insert(all.end(), args.begin(), args.end());
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (std::freopen(out.c_str(), "w", stdout) == nullptr) ::_exit(126);
    ::execv("checker/cli/qpcheck", argv.data());
    ::_exit(127);
  }
  for (int i = 0; i < 6000 && others(d, keep).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));
  CHECK(slurp(d / "t.json") == "previous");
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

TEST_CASE("SIGTERM to the binary mid-search: exit 2, the statistics so far, the trace file complete") {
  fs::path d = tmp_dir("sigterm");
  // f60(x) evaluates f0 2^60 times: the search is still in its first state when the signal comes.
  std::string text = "var x: 0..3;\nfn f0(a: 0..3): 0..3 = a;\n";
  for (int k = 1; k <= 60; ++k) {
    text += "fn f" + std::to_string(k) + "(a: 0..3): 0..3 = f" + std::to_string(k - 1) + "(f" +
            std::to_string(k - 1) + "(a));\n";
  }
  put(d / "slow.qpspec", text + "process p { x = 1; }\ninvariant i: f60(x) >= 0;\n");
  put(d / "t.json", "previous");
  std::string out = (d / "out.txt").string();
  CHECK(sigterm_binary(d, {"verify", (d / "slow.qpspec").string(), "--trace-out", (d / "t.json").string()}, 0) ==
        code(ExitCode::kInconclusive));
  CHECK(slurp(out).find("INCONCLUSIVE: stopped by an interrupt") != std::string::npos);
  CHECK(slurp(out).find("statistics: 1 states") != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(slurp(d / "t.json"));
  CHECK(j["limit"] == "interrupted");
  CHECK(others(d, {"slow.qpspec", "t.json", "out.txt"}).empty());
}

TEST_CASE("SIGTERM to the binary while Z3 solves: bmc stops within its depth, exit 2, the trace file complete") {
  fs::path d = tmp_dir("sigterm_bmc");
  // Depth 400 of this takes Z3 about 7 s; depth 100000 cannot finish before the signal, so "interrupted" in the
  // report is the watcher's doing (without it this test runs into its timeout).
  put(d / "slow.qpspec",
      "var x: array[0..5] of 0..255;\nprocess p[i in 0..5] { while true { x[i] = (x[i] * 7 + 3) % 256; } }\n"
      "invariant never: x[0] + x[1] + x[2] + x[3] + x[4] + x[5] != 1531;\n");
  put(d / "t.json", "previous");
  std::string out = (d / "out.txt").string();
  // 500 ms after the front end: into the solver's calls.
  CHECK(sigterm_binary(d, {"verify", (d / "slow.qpspec").string(), "--engine", "bmc", "--depth", "100000",
                           "--trace-out", (d / "t.json").string()}, 500) == code(ExitCode::kInconclusive));
  CHECK(slurp(out).find("INCONCLUSIVE (bmc engine): interrupted (SIGINT or SIGTERM) at depth") != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(slurp(d / "t.json"));
  CHECK(j["verdict"] == "inconclusive");
  CHECK(j["limit"].get<std::string>().rfind("interrupted (SIGINT or SIGTERM) at depth", 0) == 0);
  CHECK(others(d, {"slow.qpspec", "t.json", "out.txt"}).empty());
}

}  // namespace
}  // namespace qpcheck::cli
