// qpcheck replay end to end without a device: traces written by run_verify from the shipped specs, replayed against
// the in-process fake (verbs_backend/fake_device.h); error paths against the rdma-core device and bad files.
#include "checker/cli/replay.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checker/cli/exit_codes.h"
#include "verbs_backend/fake_device.h"

namespace qpcheck::cli {
namespace {

std::string tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// Writes the trace of a shipped spec (with --witness) and returns its path.
std::string trace_of(const std::string& spec) {
  VerifyOptions v;
  v.file = "spec/" + spec + ".qpspec";
  v.witness = true;
  v.trace_out = tmp(spec + ".json");
  std::ostringstream out, err;
  int rc = run_verify(v, out, err);
  REQUIRE_MESSAGE((rc == 0 || rc == 1), err.str());
  return v.trace_out;
}

struct Result {
  int rc;
  nlohmann::json report;
  std::string out, err;
};

Result replay_on(const std::string& trace, verbs::FakeDevice::Transport transport, std::string device = "fake0") {
  ReplayOptions o;
  o.file = trace;
  o.device = device;
  o.format = Format::kJson;
  std::ostringstream out, err;
  int rc = run_replay(o, out, err, [&](const ReplayOptions&) {
    verbs::FakeDevice::Options f;
    f.transport = transport;
    return std::make_unique<verbs::FakeDevice>(f);
  });
  Result r{rc, {}, out.str(), err.str()};
  if (!r.out.empty()) r.report = nlohmann::json::parse(r.out);
  return r;
}

std::string write(const std::string& name, const std::string& text) {
  std::string path = tmp(name);
  std::ofstream(path) << text;
  return path;
}

using T = verbs::FakeDevice::Transport;

TEST_CASE("the IB counterexample reproduces on an IB device: the passive Send ends in IBV_WC_RNR_RETRY_EXC_ERR") {
  Result r = replay_on(trace_of("03_patch_passive_first_ib"), T::kIB);
  CHECK(r.rc == 10);
  CHECK(r.report["verdict"] == "REPRODUCED");
  CHECK(r.report["step"] == 10);
  CHECK(r.report["operations"].size() == 10);
  CHECK(r.report["operations"][9]["op"] == "expect_send_wc(PASSIVE, IBV_WC_RNR_RETRY_EXC_ERR)");
  CHECK(r.report["operations"][9]["observed"] == "IBV_WC_RNR_RETRY_EXC_ERR");
}

TEST_CASE("the IB counterexample on an iWARP device: the Send succeeds (TERMINATE instead of RNR): NOT REPRODUCED") {
  Result r = replay_on(trace_of("03_patch_passive_first_ib"), T::kIWARP);
  CHECK(r.rc == 11);
  CHECK(r.report["verdict"] == "NOT REPRODUCED");
  CHECK(r.report["step"] == 10);
  CHECK(r.report["expected"] == "IBV_WC_RNR_RETRY_EXC_ERR");
  CHECK(r.report["observed"] == "IBV_WC_SUCCESS");
}

TEST_CASE("the iWARP counterexample reproduces on an iWARP device: Send succeeds, both sides DISCONNECTED") {
  Result r = replay_on(trace_of("04_patch_passive_first_iwarp"), T::kIWARP);
  CHECK(r.rc == 10);
  CHECK(r.report["step"] == 10);
  CHECK(r.report["operations"].size() == 13);
  CHECK(r.report["operations"][12]["op"] == "expect_cm_event(PASSIVE, RDMA_CM_EVENT_DISCONNECTED)");
}

TEST_CASE("strict QP creation: the device creates the QP in INIT and accepts the post: NOT REPRODUCED at step 2") {
  Result r = replay_on(trace_of("06_today_strict_create"), T::kIB);
  CHECK(r.rc == 11);
  CHECK(r.report["step"] == 2);
  CHECK(r.report["observed"] == "every call succeeded");
}

TEST_CASE("strict QP creation on a device that refuses the post: REPRODUCED at step 2 with the errno") {
  ReplayOptions o;
  o.file = trace_of("06_today_strict_create");
  o.device = "fake0";
  o.format = Format::kJson;
  std::ostringstream out, err;
  int rc = run_replay(o, out, err, [](const ReplayOptions&) {
    verbs::FakeDevice::Options f;
    f.fail_api = "ibv_post_recv";  // a STRICT device: the QP is still in RESET
    f.fail_errno = 22;
    return std::make_unique<verbs::FakeDevice>(f);
  });
  CHECK(rc == 10);
  nlohmann::json r = nlohmann::json::parse(out.str());
  CHECK(r["step"] == 2);
  CHECK(r["observed"] == "ibv_post_recv: Invalid argument (errno 22): injected by the test");
}

TEST_CASE("a violation of a ghost property: the device follows the whole schedule: REPRODUCED") {
  Result r = replay_on(trace_of("07_wakeup_before_recv"), T::kIB);
  CHECK(r.rc == 10);
  CHECK(r.report["step"] == 10);
}

TEST_CASE("traces carry the bound replay operations; verify --witness adds a shortest terminating schedule") {
  std::ifstream in(trace_of("03_patch_passive_first_ib"));
  nlohmann::json t = nlohmann::json::parse(in);
  CHECK(t["version"] == 1);
  CHECK(t["steps"][1]["calls"][0]["replay"] == nlohmann::json::parse(R"([{"op": "connect", "args": ["ACTIVE", "0"]}])"));
  CHECK(t["steps"][6]["calls"][0]["replay"] == nlohmann::json::parse(R"([{"op": "accept", "args": ["PASSIVE", "0"]}])"));
  std::ifstream in2(trace_of("01_linux_today"));
  nlohmann::json w = nlohmann::json::parse(in2);
  CHECK(w["verdict"] == "holds");
  CHECK(!w.contains("violation"));
  CHECK(w["steps"].size() == 31);
  for (const auto& p : w["final"]) CHECK(p["blocked"] == true);  // terminal: nothing enabled
}

TEST_CASE("witness schedules of specs that hold run to their end without a violation") {
  Result a = replay_on(trace_of("01_linux_today"), T::kIB);
  CHECK(a.rc == 11);
  CHECK(a.report["trace_verdict"] == "holds");
  CHECK(a.report["step"] == 0);
  Result b = replay_on(trace_of("02_patch_client_first"), T::kIB);
  CHECK(b.rc == 11);
}

TEST_CASE("a hand-made trace that contradicts the device: DIVERGED at that step, expected beside observed") {
  std::ifstream in(trace_of("03_patch_passive_first_ib"));
  nlohmann::json doc = nlohmann::json::parse(in);
  // step 9: the model now claims the active side is told REJECTED instead of ESTABLISHED
  doc["steps"][8]["calls"][1]["replay"][0]["args"][1] = "RDMA_CM_EVENT_REJECTED";
  Result r = replay_on(write("contradict.json", doc.dump()), T::kIB);
  CHECK(r.rc == 12);
  CHECK(r.report["verdict"] == "DIVERGED");
  CHECK(r.report["step"] == 9);
  CHECK(r.report["expected"] == "RDMA_CM_EVENT_REJECTED");
  CHECK(r.report["observed"] == "RDMA_CM_EVENT_ESTABLISHED");
}

TEST_CASE("a schedule the model calls safe, after which the device reports an error completion: DIVERGED") {
  std::ifstream in(trace_of("03_patch_passive_first_ib"));
  nlohmann::json doc = nlohmann::json::parse(in);
  // a hand-made "holds" schedule: the first 9 steps of the IB counterexample, the RNR step left out
  doc["verdict"] = "holds";
  doc.erase("violation");
  doc["steps"].erase(9);
  Result r = replay_on(write("unpredicted.json", doc.dump()), T::kIB);
  CHECK(r.rc == 12);
  CHECK(r.report["step"] == 9);
  CHECK(r.report["expected"] == "nothing more");
  CHECK(r.report["observed"] == "a send completion IBV_WC_RNR_RETRY_EXC_ERR on PASSIVE");
}

TEST_CASE("a verbs call that fails where the model allows it: DIVERGED, with the API and errno") {
  ReplayOptions o;
  o.file = trace_of("03_patch_passive_first_ib");
  o.device = "fake0";
  std::ostringstream out, err;
  int rc = run_replay(o, out, err, [](const ReplayOptions&) {
    verbs::FakeDevice::Options f;
    f.fail_api = "rdma_connect";
    f.fail_errno = 111;
    return std::make_unique<verbs::FakeDevice>(f);
  });
  CHECK(rc == 12);
  CHECK(out.str().find("DIVERGED at step 2: expected ok | observed rdma_connect: Connection refused (errno 111)") !=
        std::string::npos);
}

TEST_CASE("bad trace files: corrupt, truncated, another schema, an unknown version, no replay operations") {
  std::string good;
  {
    std::ifstream in(trace_of("03_patch_passive_first_ib"));
    std::stringstream b;
    b << in.rdbuf();
    good = b.str();
  }
  auto rc_of = [](const std::string& path, std::string* err_text = nullptr) {
    ReplayOptions o;
    o.file = path;
    o.device = "fake0";
    std::ostringstream out, err;
    int rc = run_replay(o, out, err, [](const ReplayOptions&) {
      return std::make_unique<verbs::FakeDevice>(verbs::FakeDevice::Options{});
    });
    if (err_text) *err_text = err.str();
    return rc;
  };
  std::string e;
  CHECK(rc_of(write("corrupt.json", "{\"schema\": qpcheck"), &e) == 3);
  CHECK(e.find("corrupt or truncated trace") != std::string::npos);
  CHECK(rc_of(write("truncated.json", good.substr(0, good.size() / 2)), &e) == 3);
  CHECK(e.find("corrupt or truncated trace") != std::string::npos);
  nlohmann::json doc = nlohmann::json::parse(good);
  doc["version"] = 99;
  CHECK(rc_of(write("v99.json", doc.dump()), &e) == 3);
  CHECK(e.find("unsupported report version 99") != std::string::npos);
  doc = nlohmann::json::parse(good);
  doc["schema"] = "something.else";
  CHECK(rc_of(write("schema.json", doc.dump()), &e) == 3);
  doc = nlohmann::json::parse(good);
  doc["steps"][1]["calls"][0]["replay"][0]["op"] = "teleport";
  CHECK(rc_of(write("op.json", doc.dump()), &e) == 3);
  CHECK(e.find("step 2 (client), call connect: unknown replay operation \"teleport\"") != std::string::npos);
  doc = nlohmann::json::parse(good);
  for (auto& s : doc["steps"]) for (auto& c : s["calls"]) c.erase("replay");
  CHECK(rc_of(write("noreplay.json", doc.dump()), &e) == 3);
  CHECK(e.find("carries no replay operations") != std::string::npos);
  CHECK(rc_of(tmp("does-not-exist.json"), &e) == 4);
}

TEST_CASE("environment errors: an unknown device (the rdma-core device), a device that cannot be opened") {
  ReplayOptions o;
  o.file = trace_of("03_patch_passive_first_ib");
  o.device = "nosuchdev9";
  std::ostringstream out, err;
  CHECK(run_replay(o, out, err) == 6);  // no RDMA support here, or devices without this one: either way code 6
  CHECK(err.str().find("device nosuchdev9: ibv_get_device_list") != std::string::npos);
  std::ostringstream out2, err2;
  int rc = run_replay(o, out2, err2, [](const ReplayOptions&) {
    verbs::FakeDevice::Options f;
    f.open_error = verbs::fail("rdma_create_event_channel", 13, "/dev/infiniband/rdma_cm");
    return std::make_unique<verbs::FakeDevice>(f);
  });
  CHECK(rc == 6);
  CHECK(err2.str().find("rdma_create_event_channel: Permission denied (errno 13)") != std::string::npos);
}

}  // namespace
}  // namespace qpcheck::cli
