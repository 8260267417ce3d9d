// The distributed search under a real mpirun (Open MPI, oversubscribed on this machine's cores): every shipped spec
// and corpus model gives, with 2 and with 3 ranks, the verdict, state count, property and counterexample length its
// header expects of one process; a run whose rank is killed ends with the statistics so far and resumes from its
// checkpoint to the one-process result; a resume that does not fit is refused with the reason.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "tests/support/corpus_header.h"

namespace qpcheck {
namespace {

namespace fs = std::filesystem;

struct Run {
  int rc = -1;
  std::string out, err;
};

// Runs `mpirun -np N qpcheck verify ARGS --distributed` (stdout and stderr apart); `env`: extra variables.
Run mpirun(int ranks, const std::vector<std::string>& args, const std::string& env = "") {
  const fs::path dir = fs::temp_directory_path() / "qpcheck_distributed_test";
  fs::create_directories(dir);
  const std::string out = (dir / "out").string(), err = (dir / "err").string();
  std::string cmd = "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 "
                    "TMPDIR=/tmp " + env + " mpirun -np " + std::to_string(ranks) + " checker/cli/qpcheck verify";
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " --distributed >" + out + " 2>" + err;
  const int status = std::system(cmd.c_str());
  Run r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  auto slurp = [](const std::string& f) {
    std::ifstream in(f);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::vector<std::string> params_of(const testing::CorpusHeader& h) {
  std::vector<std::string> a;
  for (const std::string& p : h.params) a.push_back("--param=" + p);
  return a;
}

TEST_CASE("every shipped spec and corpus model: the same verdict, count and counterexample length on 2 and 3 ranks") {
  std::vector<fs::path> files;
  for (const char* d : {"spec", "tests/corpus"}) {
    for (const auto& e : fs::directory_iterator(d)) {
      if (e.path().extension() == ".qpspec") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 50);
  int checked = 0, liveness = 0;
  for (const fs::path& f : files) {
    const testing::CorpusHeader h = testing::read_corpus_header(f);
    if (!h.expect.count("verdict")) continue;
    for (int ranks : {2, 3}) {
      INFO("spec: ", f.string(), " ranks: ", ranks);
      std::vector<std::string> args{f.string(), "--format", "json"};
      for (const std::string& p : params_of(h)) args.push_back(p);
      Run r = mpirun(ranks, args);
      INFO("stderr: ", r.err);
      if (r.err.find("--distributed checks safety properties") != std::string::npos) {
        CHECK(r.rc == 4);  // a spec with liveness properties: one process
        ++liveness;
        continue;
      }
      REQUIRE(r.rc <= 2);
      const nlohmann::json j = nlohmann::json::parse(r.out);
      CHECK(j["verdict"] == h.expect.at("verdict"));
      CHECK(j["distributed"]["ranks"] == ranks);
      if (h.expect.count("states")) CHECK(j["stats"]["states"].get<uint64_t>() == std::stoull(h.expect.at("states")));
      if (h.expect.at("verdict") == "violated") {
        CHECK(j["violation"]["property"] == h.expect.at("property"));
        CHECK(j["steps"].size() == std::stoull(h.expect.at("length")));
        CHECK(j["violation"]["shortest"] == true);
      }
      ++checked;
    }
  }
  CHECK(checked > 100);
  CHECK(liveness > 0);
}

TEST_CASE("a killed rank: the statistics so far, then --resume goes on from the checkpoint to the same result") {
  const fs::path ck = fs::temp_directory_path() / "qpcheck_distributed_ckpt";
  fs::remove_all(ck);
  const std::vector<std::string> spec{"tests/corpus/rdma_cm_N3_M2.qpspec", "--param=N=3", "--param=M=2"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = spec;
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  // Rank 1 dies (SIGKILL) when it starts layer 30; a checkpoint is written at every layer boundary.
  Run killed = mpirun(2, with({"--checkpoint", ck.string(), "--checkpoint-every", "0"}),
                      "QPCHECK_TEST_KILL_RANK_AT_LAYER=1:30");
  INFO("stderr: ", killed.err);
  CHECK(killed.rc != 0);
  CHECK(killed.out.empty());  // no report: the search did not end
  CHECK(killed.err.find("the distributed search was ended by SIGTERM") != std::string::npos);
  CHECK(killed.err.find("statistics so far:") != std::string::npos);
  CHECK(killed.err.find("--resume " + ck.string()) != std::string::npos);
  std::ifstream manifest(ck / "manifest");
  std::string text((std::istreambuf_iterator<char>(manifest)), std::istreambuf_iterator<char>());
  CHECK(text.find("layer 30\n") != std::string::npos);
  CHECK(text.find("ranks 2\n") != std::string::npos);

  // The resumed run ends where one process does (the counts include the layers before the checkpoint).
  Run resumed = mpirun(2, with({"--resume", ck.string(), "--format", "json"}));
  INFO("stderr: ", resumed.err);
  REQUIRE(resumed.rc == 0);
  const nlohmann::json j = nlohmann::json::parse(resumed.out);
  CHECK(j["verdict"] == "holds");
  CHECK(j["stats"]["states"] == 39304);
  CHECK(j["stats"]["transitions"] == 152592);
  CHECK(j["stats"]["depth"] == 66);

  // A resume whose checkpoint layer is at or past --max-depth stops there: inconclusive, the checkpoint's figures.
  Run shallow = mpirun(2, with({"--resume", ck.string(), "--max-depth", "10", "--format", "json"}));
  CHECK(shallow.rc == 2);
  const nlohmann::json js = nlohmann::json::parse(shallow.out);
  CHECK(js["limit"] == "max-depth");
  CHECK(js["stats"]["depth"] == 30);

  // Refused: another rank count, another parameter, a damaged rank file; each says why (exit 4).
  Run three = mpirun(3, with({"--resume", ck.string()}));
  CHECK(three.rc == 4);
  CHECK(three.err.find("it was written by 2 ranks; resume it with mpirun -np 2") != std::string::npos);
  Run other = mpirun(2, {"tests/corpus/rdma_cm_N3_M2.qpspec", "--param=N=3", "--param=M=1", "--resume", ck.string()});
  CHECK(other.rc == 4);
  CHECK(other.err.find("it was written for another spec, parameters or property choice") != std::string::npos);
  // Only the last complete checkpoint is kept (the files of layer 29 went once layer 30's manifest was in place).
  CHECK(fs::exists(ck / "rank-1.layer-30.ckpt"));
  CHECK(!fs::exists(ck / "rank-1.layer-29.ckpt"));
  const fs::path r1 = ck / "rank-1.layer-30.ckpt";
  const std::string r1s = r1.string();
  {  // one flipped byte in the middle of a state: the checksum refuses it
    std::fstream f(r1, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(fs::file_size(r1) / 2));
    char b = 0;
    f.read(&b, 1);
    b = static_cast<char>(b ^ 0x10);
    f.seekp(static_cast<std::streamoff>(fs::file_size(r1) / 2));
    f.write(&b, 1);
  }
  Run flipped = mpirun(2, with({"--resume", ck.string()}));
  CHECK(flipped.rc == 4);
  CHECK(flipped.err.find("rank 1 of 2: --resume " + ck.string() + ": " + r1s +
                         " is damaged (its checksum does not match)") != std::string::npos);
  CHECK(flipped.err.find("ended by SIGTERM") == std::string::npos);
  fs::resize_file(r1, fs::file_size(r1) / 2);
  Run cut = mpirun(2, with({"--resume", ck.string()}));
  CHECK(cut.rc == 4);
  CHECK(cut.err.find("rank 1 of 2: --resume " + ck.string() + ": " + r1s + " is truncated") != std::string::npos);
  // A resume at or past --max-depth stops at the checkpoint's layer; a checkpoint folder that cannot be written is
  // refused before the search.
  Run bounded = mpirun(2, {"tests/corpus/rdma_cm_N3_M2.qpspec", "--param=N=3", "--param=M=2", "--max-depth", "3",
                           "--checkpoint", "/proc/version", "--format", "json"});
  CHECK(bounded.rc == 4);
  CHECK(bounded.err.find("--checkpoint /proc/version: cannot create files there") != std::string::npos);
  fs::remove_all(ck);
}

}  // namespace
}  // namespace qpcheck
