// The command line as one App: --version, --help and the man page come from it and agree.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <doctest/doctest.h>

#include "checker/cli/app.h"
#include "checker/cli/man.h"
#include "checker/cli/version.h"

namespace qpcheck::cli {
namespace {

struct Run {
  int rc;
  std::string out;
};

// Runs a shell command, capturing stdout (and stderr when `both`).
Run shell(const std::string& cmd) {
  Run r{0, ""};
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string roff_escaped(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '-' ? std::string("\\-") : std::string(1, c);
  return out;
}

TEST_CASE("qpcheck --version prints the version and exits 0") {
  Run r = shell("checker/cli/qpcheck --version");
  CHECK(r.rc == 0);
  CHECK(r.out == std::string("qpcheck ") + kVersion + "\n");
}

// backends.h: qpcheck links neither Z3, Open MPI nor rdma-core, and hands the runs that need one to qpcheck-full.
TEST_CASE("qpcheck hands a Z3 run over to qpcheck-full beside it, and says so when there is none") {
  Run ldd = shell("ldd checker/cli/qpcheck");
  REQUIRE(ldd.rc == 0);
  for (const char* lib : {"libz3", "libmpi", "libibverbs", "librdmacm"}) {
    INFO(lib);
    CHECK(ldd.out.find(lib) == std::string::npos);
  }
  // Handed over: the bmc engine's report and exit code (its counterexample has 10 steps: none up to 2, inconclusive).
  Run bmc = shell("checker/cli/qpcheck verify spec/03_patch_passive_first_ib.qpspec --engine bmc --depth 2 2>&1");
  CHECK(bmc.rc == 2);
  CHECK(bmc.out.find("statistics: bmc engine, depth 2,") != std::string::npos);
  // Alone in a folder: exit 6 (environment), the place looked in named, nothing else started.
  const char* tmp = std::getenv("TEST_TMPDIR");
  REQUIRE(tmp != nullptr);
  std::string alone = std::string(tmp) + "/alone";
  REQUIRE(shell("mkdir -p " + alone + " && cp -L checker/cli/qpcheck " + alone + "/qpcheck").rc == 0);
  Run r = shell(alone + "/qpcheck verify spec/03_patch_passive_first_ib.qpspec --engine kind 2>&1");
  CHECK(r.rc == 6);
  CHECK(r.out.find("qpcheck: error: --engine kind (Z3) needs qpcheck-full") == 0);
  CHECK(r.out.find("it is not at " + alone + "/qpcheck-full (") != std::string::npos);
  Run synth = shell(alone + "/qpcheck synth spec/03_patch_passive_first_ib.qpspec --param 'connect_rnr_retry=*' 2>&1");
  CHECK(synth.rc == 6);
  CHECK(synth.out.find("qpcheck: error: synth (Z3) needs qpcheck-full") == 0);
  Run mpi = shell(alone + "/qpcheck verify spec/03_patch_passive_first_ib.qpspec --distributed 2>&1");
  CHECK(mpi.rc == 6);
  CHECK(mpi.out.find("qpcheck: error: --distributed: the distributed search (Open MPI) needs qpcheck-full") == 0);
  // The explicit engine needs none of them.
  CHECK(shell(alone + "/qpcheck verify spec/03_patch_passive_first_ib.qpspec >/dev/null 2>&1").rc == 1);
}

TEST_CASE("the man page lists every subcommand and option of the App, with the exit codes and the search order") {
  Commands c;
  auto app = make_app(c);
  Run page = shell("checker/cli/qpcheck-man");
  REQUIRE(page.rc == 0);
  CHECK(page.out == man_page(*app));
  CHECK(page.out.rfind(".TH QPCHECK 1", 0) == 0);
  size_t options = 0;
  for (const CLI::App* sub : app->get_subcommands([](const CLI::App*) { return true; })) {
    INFO("subcommand ", sub->get_name());
    CHECK(page.out.find(".SS \"qpcheck " + sub->get_name() + "\"") != std::string::npos);
    Run help = shell("checker/cli/qpcheck " + sub->get_name() + " --help");
    CHECK(help.rc == 0);
    for (const CLI::Option* o : sub->get_options([](const CLI::Option*) { return true; })) {
      if (o->get_lnames() == std::vector<std::string>{"help"}) continue;  // CLI11's own -h, --help
      for (const std::string& l : o->get_lnames()) {
        INFO("option --", l);
        CHECK(page.out.find("\\fB\\-\\-" + roff_escaped(l) + "\\fR") != std::string::npos);
        CHECK(help.out.find("--" + l) != std::string::npos);
        ++options;
      }
      if (!o->get_description().empty()) {
        CHECK(page.out.find(roff_escaped(o->get_description())) != std::string::npos);
      }
    }
    // Each subcommand's exit codes are in its --help and in the page.
    for (const HelpSection& s : help_sections(sub->get_name())) {
      for (const auto& [term, text] : s.items) {
        CHECK(help.out.find(text) != std::string::npos);
        CHECK(page.out.find(roff_escaped(text)) != std::string::npos);
      }
    }
  }
  CHECK(options > 50);
  CHECK(page.out.find("QPCHECK_LIB_PATH") != std::string::npos);
  CHECK(page.out.find(".SH \"IMPORT SEARCH ORDER\"") != std::string::npos);
}

TEST_CASE("replay --help names its exit codes and the default timeout") {
  Run r = shell("checker/cli/qpcheck replay --help");
  CHECK(r.rc == 0);
  CHECK(r.out.find("=5000") != std::string::npos);  // CLI11 shows the default after "="
  for (const char* code : {"10 ", "11 ", "12 ", "6 "}) CHECK(r.out.find(std::string("  ") + code) != std::string::npos);
  CHECK(r.out.find("DIVERGED") != std::string::npos);
}

TEST_CASE("the man page renders without groff warnings") {
  if (shell("command -v groff >/dev/null 2>&1").rc != 0) {
    MESSAGE("skipped: groff is not installed (tools/install-deps.sh installs groff-base)");
    return;
  }
  Run r = shell("checker/cli/qpcheck-man | groff -man -Tutf8 -ww -z 2>&1");
  CHECK(r.rc == 0);
  CHECK(r.out == "");
}

}  // namespace
}  // namespace qpcheck::cli
