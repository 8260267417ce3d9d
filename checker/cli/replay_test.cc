// qpcheck replay end to end without a device: traces written by run_verify from the shipped specs, replayed against
// the in-process fake (verbs_backend/fake_device.h); error paths against the rdma-core device and bad files.
#include "checker/cli/replay.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "checker/cli/exit_codes.h"
#include "checker/trace/render.h"
#include "verbs_backend/fake_device.h"

namespace qpcheck::cli {
namespace {

std::string tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

// Writes the trace of a shipped spec (with --witness and the given NAME=VALUE parameters) and returns its path.
std::string trace_of(const std::string& spec, const std::vector<std::string>& params = {}) {
  VerifyOptions v;
  v.file = "spec/" + spec + ".qpspec";
  v.witness = true;
  v.params = params;
  std::string tag;
  for (const auto& p : params) tag += "_" + p;
  v.trace_out = tmp(spec + tag + ".json");
  std::ostringstream out, err;
  int rc = run_verify(v, out, err);
  REQUIRE_MESSAGE((rc == 0 || rc == 1), err.str());
  return v.trace_out;
}

// Writes the trace of a live replay probe (tests/live/specs/NAME.qpspec) and returns its path.
std::string probe_trace(const std::string& name) {
  VerifyOptions v;
  v.file = "tests/live/specs/" + name + ".qpspec";
  v.witness = true;
  v.trace_out = tmp("probe_" + name + ".json");
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

TEST_CASE("a lasso replays its prefix, then its cycle: the RNR retry livelock stays in its cycle (rnr_retry 7)") {
  std::string trace = trace_of("18_rnr_retry_livelock");
  Result r = replay_on(trace, T::kIB);
  INFO(r.err, r.out);
  CHECK(r.rc == 10);
  CHECK(r.report["verdict"] == "REPRODUCED");
  CHECK(r.report["step"] == 19);
  CHECK(r.report["lasso"]["cycle_start"] == 19);
  CHECK(r.report["lasso"]["cycles"] == 3);
  CHECK(r.report["lasso"]["repetitions"] == 3);
  CHECK(r.report["lasso"]["reached"] == "all 3 cycle repetitions");
  // The fake counts a NAK per retry as rxe's rcvd_rnr_err does: the device kept NAKing while the cycle repeated.
  CHECK(r.report["lasso"]["counters"]["rcvd_rnr_err"].get<uint64_t>() > 0);

  // The same lasso where the requester's QP is given rnr_retry 3 (its RTS modify edited): the device's retries run
  // out, the Send completes with IBV_WC_RNR_RETRY_EXC_ERR, and the run leaves the cycle in its first repetition.
  nlohmann::json t = nlohmann::json::parse(std::ifstream(trace));
  bool edited = false;
  for (auto& step : t["steps"]) {
    for (auto& call : step["calls"]) {
      if (!call.contains("replay")) continue;
      for (auto& op : call["replay"]) {
        if (op["op"] == "modify_qp" && op["args"][0] == "ACTIVE" && op["args"][1] == "IBV_QPS_RTS") {
          op["args"][3] = "3";
          edited = true;
        }
      }
    }
  }
  REQUIRE(edited);
  Result left = replay_on(write("lasso_rnr3.json", t.dump()), T::kIB);
  INFO(left.out);
  CHECK(left.rc == 11);
  CHECK(left.report["verdict"] == "NOT REPRODUCED");
  CHECK(left.report["lasso"]["reached"] == "cycle repetition 1 of 3");
  CHECK(left.report["lasso"]["repetitions"] == 0);
  CHECK(left.report["observed"] == "a send completion IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND on ACTIVE");
}

TEST_CASE("the IB counterexample reproduces on an IB device: the passive Send ends in IBV_WC_RNR_RETRY_EXC_ERR") {
  Result r = replay_on(trace_of("03_patch_passive_first_ib"), T::kIB);
  CHECK(r.rc == 10);
  CHECK(r.report["verdict"] == "REPRODUCED");
  CHECK(r.report["step"] == 10);
  CHECK(r.report["operations"].size() == 10);
  CHECK(r.report["operations"][9]["op"] == "expect_send_wc(PASSIVE, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND)");
  CHECK(r.report["operations"][9]["observed"] == "IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND");
}

TEST_CASE("the IB counterexample on an iWARP device: the Send succeeds (TERMINATE instead of RNR): NOT REPRODUCED") {
  Result r = replay_on(trace_of("03_patch_passive_first_ib"), T::kIWARP);
  CHECK(r.rc == 11);
  CHECK(r.report["verdict"] == "NOT REPRODUCED");
  CHECK(r.report["step"] == 10);
  CHECK(r.report["expected"] == "IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND");
  CHECK(r.report["observed"] == "IBV_WC_SUCCESS, IBV_WC_SEND");
}

TEST_CASE("the iWARP counterexample reproduces on an iWARP device: Send succeeds, both sides DISCONNECTED") {
  Result r = replay_on(trace_of("04_patch_passive_first_iwarp"), T::kIWARP);
  CHECK(r.rc == 10);
  CHECK(r.report["step"] == 12);
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
  CHECK(t["steps"][1]["calls"][0]["replay"] == nlohmann::json::parse(R"([{"op": "connect", "args": ["ACTIVE", "0", "1", "1"]}])"));
  CHECK(t["steps"][6]["calls"][0]["replay"] == nlohmann::json::parse(R"([{"op": "accept", "args": ["PASSIVE", "0", "1", "1"]}])"));
  std::ifstream in2(trace_of("01_linux_today"));
  nlohmann::json w = nlohmann::json::parse(in2);
  CHECK(w["verdict"] == "holds");
  CHECK(!w.contains("violation"));
  CHECK(w["steps"].size() == 39);
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
  for (auto& p : doc["final"]) p["blocked"] = true;  // a witness ends in a terminal state
  doc["length"] = 9;
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

TEST_CASE("the live job's probes replay on the fake as on rxe (IB) and siw (iWARP), divergences included") {
  struct Row {
    const char* probe;
    const char* ib;     // verdict on the fake IB device (= rxe0's row in tests/live/traces.txt)
    const char* iwarp;  // on the fake iWARP device (= siw0's row)
    int ib_step, iwarp_step;
  };
  // cm_timeout is left out (the fake has no timers); write_read on siw is racy there (completion order).
  for (const Row& r : std::vector<Row>{{"write_read", "NOT REPRODUCED", "NOT REPRODUCED", 0, 0},
                                       {"flush", "NOT REPRODUCED", "DIVERGED", 0, 18},
                                       {"srq_two_clients", "NOT REPRODUCED", "NOT REPRODUCED", 0, 0},
                                       {"reconnect", "NOT REPRODUCED", "NOT REPRODUCED", 0, 0},
                                       {"explicit_cm", "NOT REPRODUCED", "NOT REPRODUCED", 0, 0},
                                       {"no_listener", "NOT REPRODUCED", "DIVERGED", 0, 7},
                                       {"reject", "NOT REPRODUCED", "NOT REPRODUCED", 0, 0},
                                       {"destroy_id", "NOT REPRODUCED", "NOT REPRODUCED", 0, 0},
                                       {"drep", "DIVERGED", "NOT REPRODUCED", 10, 0},
                                       {"timewait", "NOT REPRODUCED", "DIVERGED", 0, 12},
                                       {"plain_verbs", "NOT REPRODUCED", "DIVERGED", 0, 8},
                                       {"illegal_modify", "REPRODUCED", "REPRODUCED", 3, 3},
                                       {"reset_discard", "NOT REPRODUCED", "NOT REPRODUCED", 0, 0}}) {
    std::string t = probe_trace(r.probe);
    Result ib = replay_on(t, T::kIB), iw = replay_on(t, T::kIWARP);
    CHECK_MESSAGE(ib.report["verdict"] == r.ib, r.probe << " on IB: " << ib.out);
    CHECK_MESSAGE(ib.report["step"] == r.ib_step, r.probe << " on IB");
    CHECK_MESSAGE(iw.report["verdict"] == r.iwarp, r.probe << " on iWARP: " << iw.out);
    CHECK_MESSAGE(iw.report["step"] == r.iwarp_step, r.probe << " on iWARP");
  }
  Result f = replay_on(probe_trace("flush"), T::kIWARP);
  CHECK(f.report["observed"] == "ibv_post_send: Transport endpoint is not connected (errno 107)");
  Result n = replay_on(probe_trace("no_listener"), T::kIWARP);
  CHECK(n.report["observed"] == "rdma_connect: Connection refused (errno 111)");
}

// 05 (p2p): the fake follows RFC 6581 (the responder holds its Sends until the RTR); siw does not (see traces.txt).
// 09 on iWARP: the model's no_illegal_modify_qp (siw has no RTS without its CM). 10 on iWARP: the fake refuses the
// drain's marker (ENOTCONN); a user-space siw QP keeps a WR posted in ERR without completing it
// (post_send_in_err = KEPT): DIVERGED there too.
TEST_CASE("the shipped specs of library v2 replay on the fake as on rxe (IB) and siw (iWARP) in tests/live/traces.txt") {
  struct Row {
    const char* spec;
    T transport;
    std::vector<std::string> params;
    const char* verdict;
    int step;
  };
  for (const Row& r : std::vector<Row>{
           {"05_patch_passive_first_iwarp_p2p", T::kIWARP, {}, "REPRODUCED", 13},
           {"08_p2p_recv_before_connect", T::kIWARP, {}, "NOT REPRODUCED", 0},
           {"09_plain_verbs_bringup", T::kIB, {}, "NOT REPRODUCED", 0},
           {"09_plain_verbs_bringup", T::kIWARP, {"transport=IWARP"}, "REPRODUCED", 7},
           {"10_drain_before_destroy", T::kIB, {}, "NOT REPRODUCED", 0},
           {"10_drain_before_destroy", T::kIWARP, {"transport=IWARP"}, "DIVERGED", 27},
           {"11_reconnect", T::kIB, {}, "NOT REPRODUCED", 0},
           {"11_reconnect", T::kIWARP, {"transport=IWARP"}, "NOT REPRODUCED", 0},
           {"12_two_clients_srq", T::kIB, {}, "NOT REPRODUCED", 0},
           {"12_two_clients_srq", T::kIWARP, {"transport=IWARP"}, "NOT REPRODUCED", 0}}) {
    Result res = replay_on(trace_of(r.spec, r.params), r.transport);
    const std::string what = std::string(r.spec) + (r.transport == T::kIB ? " on IB" : " on iWARP");
    CHECK_MESSAGE(res.report["verdict"] == r.verdict, what << ": " << res.report["verdict"] << " at step "
                                                          << res.report["step"] << ": expected "
                                                          << res.report["expected"] << ", observed "
                                                          << res.report["observed"]);
    CHECK_MESSAGE(res.report["step"] == r.step, what);
  }
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
  CHECK(e.find("invalid trace: corrupt or truncated JSON at byte 12 (in field 'schema'): parse error at line 1, column 12: "
                 "syntax error") !=
        std::string::npos);
  CHECK(rc_of(write("truncated.json", good.substr(0, good.size() / 2)), &e) == 3);
  CHECK(e.find("invalid trace: corrupt or truncated JSON at byte") != std::string::npos);
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

// --- regression tests for the defects found by a fresh-user attack on replay (each failed before its fix) ---

std::string good_trace() {
  std::ifstream in(trace_of("03_patch_passive_first_ib"));
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

// Replays `path` on the fake IB device with `o` (file and factory filled in); exit code and stderr.
Result replay_file(const std::string& path, ReplayOptions o = {}) {
  o.file = path;
  if (o.device.empty()) o.device = "fake0";
  std::ostringstream out, err;
  int rc = run_replay(o, out, err, [](const ReplayOptions&) {
    return std::make_unique<verbs::FakeDevice>(verbs::FakeDevice::Options{});
  });
  return Result{rc, {}, out.str(), err.str()};
}

// Edits the IB counterexample, replays it, returns exit code and stderr.
Result replay_edited(const std::string& name, const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json doc = nlohmann::json::parse(good_trace());
  edit(doc);
  return replay_file(write(name, doc.dump()));
}

bool has(const std::string& text, const std::string& part) {
  bool found = text.find(part) != std::string::npos;
  if (!found) MESSAGE("not found: " << part << "\nin: " << text);
  return found;
}

TEST_CASE("defect 1: a deeply nested schema or version is exit 3 (nesting bounded), not a stack overflow") {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  Result a = replay_file(write("deep_schema.json", "{\"schema\":" + deep + "}"));
  CHECK(a.rc == 3);
  CHECK(has(a.err, "invalid trace: arrays and objects nest deeper than 32 levels (in field 'schema[0][0]"));
  CHECK(a.err.size() < 400);
  Result b = replay_file(write("deep_version.json", "{\"schema\":\"qpcheck.report\",\"version\":" + deep + "}"));
  CHECK(b.rc == 3);
  CHECK(has(b.err, "nest deeper than 32 levels (in field 'version[0]"));
  // a shallow array or object is shown by its kind, never dumped
  Result c = replay_edited("array_version.json", [](nlohmann::json& d) { d["version"] = {1, 2, 3}; });
  CHECK(c.rc == 3);
  CHECK(has(c.err, "unsupported report version an array of 3 elements (this qpcheck reads versions 1 and 2)"));
}

TEST_CASE("defects 2 and 3: a FIFO, /dev/zero, a directory, an oversized file are unreadable (exit 4), never read") {
  std::string fifo = tmp("trace.fifo");
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  Result a = replay_file(fifo);  // blocked forever in open() before the fix
  CHECK(a.rc == 4);
  CHECK(has(a.err, "qpcheck: error: cannot read trace file '"));
  CHECK(has(a.err, "trace.fifo' (missing, unreadable or not a regular file)\n"));
  CHECK(replay_file("/dev/zero").rc == 4);  // grew without bound before the fix
  Result d = replay_file(tmp(""));
  CHECK(d.rc == 4);  // exit 3 "corrupt or truncated" before the fix
  CHECK(has(d.err, "cannot read trace file"));
  std::string big = tmp("big.json");
  std::ofstream(big) << "{";
  std::filesystem::resize_file(big, trace::kMaxTraceBytes + 1);  // sparse: nothing big is written
  Result e = replay_file(big);
  CHECK(e.rc == 4);
  CHECK(has(e.err, "is larger than 64 MiB"));
}

TEST_CASE("defect 4: an out-of-range number in any field is exit 3 naming the field, not an internal error") {
  std::string text = good_trace();
  std::string v = text;
  v.replace(v.find("\"version\": 1"), 12, "\"version\": 1e400");
  Result a = replay_file(write("v1e400.json", v));
  CHECK(a.rc == 3);  // exit 5 "internal error: [json.exception.out_of_range.406]" before the fix
  CHECK(has(a.err, "(in field 'version'): number overflow parsing '1e400'"));
  std::string s = text;
  s.replace(s.find("\"states\": "), 10, "\"states\": -1e999,");
  Result b = replay_file(write("states1e999.json", s));
  CHECK(b.rc == 3);
  CHECK(has(b.err, "(in field 'stats.states'): number overflow"));
  Result c = replay_edited("line_float.json", [](nlohmann::json& d) { d["steps"][2]["source"]["line"] = 1e300; });
  CHECK(c.rc == 3);
  CHECK(has(c.err, "field 'steps[2].source.line' must be an integer in 0..2147483647, found 1e+300"));
}

TEST_CASE("defect 5: numbers are range-checked, never truncated to int") {
  Result a = replay_edited("v2pow32.json", [](nlohmann::json& d) { d["version"] = 4294967297ULL; });
  CHECK(a.rc == 3);  // accepted as version 1 before the fix
  CHECK(has(a.err, "unsupported report version 4294967297"));
  Result b = replay_edited("index2pow32.json", [](nlohmann::json& d) { d["steps"][2]["index"] = 4294967299ULL; });
  CHECK(b.rc == 3);  // reported as "step 3" before the fix
  CHECK(has(b.err, "field 'steps[2].index' must be an integer in 1..2147483647, found 4294967299"));
  Result c = replay_edited("bits.json", [](nlohmann::json& d) { d["stats"]["state_bits"] = -3; });
  CHECK(c.rc == 3);
  CHECK(has(c.err, "field 'stats.state_bits' must be an integer in 0..2147483647, found -3"));
}

TEST_CASE("defect 6: steps out of order, misnumbered, truncated, without calls or failing where they cannot: exit 3") {
  auto reversed = replay_edited("reversed.json", [](nlohmann::json& d) {
    std::reverse(d["steps"].begin(), d["steps"].end());
  });
  CHECK(reversed.rc == 3);  // DIVERGED at step 10 before the fix
  CHECK(has(reversed.err, "field 'steps[0].index' is 10, expected 1 (steps are numbered 1..n in order)"));
  auto ones = replay_edited("ones.json", [](nlohmann::json& d) { for (auto& s : d["steps"]) s["index"] = 1; });
  CHECK(ones.rc == 3);  // REPRODUCED at step 1 before the fix
  CHECK(has(ones.err, "field 'steps[1].index' is 1, expected 2"));
  CHECK(replay_edited("last_neg.json", [](nlohmann::json& d) { d["steps"][9]["index"] = -5; }).rc == 3);
  auto zero = replay_edited("last_zero.json", [](nlohmann::json& d) { d["steps"][9]["index"] = 0; });
  CHECK(zero.rc == 3);
  CHECK(has(zero.err, "field 'steps[9].index' must be an integer in 1..2147483647, found 0"));
  // the same steps in another order: the changes no longer chain
  auto swapped = replay_edited("swapped.json", [](nlohmann::json& d) {
    std::swap(d["steps"][4], d["steps"][5]);
    d["steps"][4]["index"] = 5;
    d["steps"][5]["index"] = 6;
  });
  CHECK(swapped.rc == 3);
  CHECK(has(swapped.err, "but the steps before leave"));
  auto cut3 = replay_edited("cut3.json", [](nlohmann::json& d) {
    nlohmann::json first3 = nlohmann::json::array();
    for (int i = 0; i < 3; ++i) first3.push_back(d["steps"][i]);
    d["steps"] = first3;
  });
  CHECK(cut3.rc == 3);  // REPRODUCED at step 3 before the fix
  CHECK(has(cut3.err, "invalid trace: field 'length' is 10, but 'steps' holds 3 (a truncated trace?)"));
  // without "length" (a report written before it existed) the program counters give the cut away
  auto cut3_old = replay_edited("cut3_old.json", [](nlohmann::json& d) {
    d.erase("length");
    d["steps"].erase(9);
    d["steps"].erase(8);
    d["steps"].erase(7);
    d["steps"].erase(6);
    d["steps"].erase(5);
    d["steps"].erase(4);
    d["steps"].erase(3);
  });
  CHECK(cut3_old.rc == 3);
  CHECK(has(cut3_old.err, "field 'final[1].at' is \"line 42\", but the steps leave \"server\" at \"line 37\" "
                          "(a truncated trace?)"));
  auto null_calls = replay_edited("nullcalls.json", [](nlohmann::json& d) { d["steps"][0]["calls"] = nullptr; });
  CHECK(null_calls.rc == 3);  // create_qp silently dropped before the fix
  CHECK(has(null_calls.err, "field 'steps[0].calls' must be an array, found null"));
  auto early_fail = replay_edited("earlyfail.json", [](nlohmann::json& d) { d["steps"][3]["failed"] = true; });
  CHECK(early_fail.rc == 3);
  CHECK(has(early_fail.err, "field 'steps[3].failed' is true, but only the last step of a violated trace can fail"));
  // a witness of a spec that holds: no step fails, and it ends in a terminal state
  std::ifstream in(trace_of("01_linux_today"));
  nlohmann::json w = nlohmann::json::parse(in);
  nlohmann::json wf = w;
  wf["steps"].back()["failed"] = true;
  Result holds_failed = replay_file(write("witness_failed.json", wf.dump()));
  CHECK(holds_failed.rc == 3);  // accepted before the fix
  CHECK(has(holds_failed.err, "only the last step of a violated trace can fail"));
  // a fail violation must end in its failing step
  auto fail_cut = replay_edited("fail_cut.json", [](nlohmann::json& d) { d["violation"]["kind"] = "fail"; });
  CHECK(fail_cut.rc == 3);
  CHECK(has(fail_cut.err, "the fail violation's last step (10) does not fail: a truncated counterexample?"));
}

TEST_CASE("defect 7: --report-out naming the trace file itself (any spelling, a hard link) is refused: exit 4") {
  std::string text = good_trace();
  std::string t = write("self.json", text);
  std::string link = tmp("self-link.json");
  std::remove(link.c_str());
  REQUIRE(::link(t.c_str(), link.c_str()) == 0);
  for (const std::string& out : {t, tmp("./self.json"), link}) {
    ReplayOptions o;
    o.report_out = out;
    Result r = replay_file(t, o);
    CHECK(r.rc == 4);  // the counterexample was overwritten with the replay report before the fix
    CHECK(has(r.err, "is the trace file itself"));
  }
  CHECK(text == [&] { std::ifstream in(t); std::stringstream b; b << in.rdbuf(); return b.str(); }());
  ReplayOptions o;
  o.report_out = tmp("replay-report.json");
  CHECK(replay_file(t, o).rc == 10);  // another file is fine
}

TEST_CASE("defect 8: a field of the wrong type is named with its step") {
  Result a = replay_edited("failed_no.json", [](nlohmann::json& d) { d["steps"][0]["failed"] = "no"; });
  CHECK(a.rc == 3);
  CHECK(has(a.err, "invalid trace: field 'steps[0].failed' must be true or false, found \"no\""));
  Result b = replay_edited("args_int.json", [](nlohmann::json& d) { d["steps"][1]["calls"][0]["args"][0] = 7; });
  CHECK(b.rc == 3);
  CHECK(has(b.err, "field 'steps[1].calls[0].args[0]' must be a string, found 7"));
  Result c = replay_edited("verdict.json", [](nlohmann::json& d) { d["verdict"] = "maybe"; });
  CHECK(c.rc == 3);
  CHECK(has(c.err, "field 'verdict' must be \"holds\" or \"violated\" or \"inconclusive\", found \"maybe\""));
}

TEST_CASE("defect 9: NUL and escape characters are escaped, long values shortened, counts strict, options checked") {
  Result nul = replay_edited("nul.json", [](nlohmann::json& d) {
    d["steps"][1]["calls"][0]["replay"][0]["op"] = std::string("tele\0port", 9);
  });
  CHECK(nul.rc == 3);  // cut at the NUL, quote left open, before the fix
  CHECK(has(nul.err, "unknown replay operation \"tele\\u0000port\"\n"));
  Result long_schema = replay_edited("long_schema.json", [](nlohmann::json& d) { d["schema"] = std::string(1 << 20, 'x'); });
  CHECK(long_schema.rc == 3);
  CHECK(has(long_schema.err, "field 'schema' is \"" + std::string(80, 'x') + "\"... (1048576 bytes), expected"));
  CHECK(long_schema.err.size() < 300 + tmp("").size());  // the whole value was echoed before the fix
  for (const char* count : {" 2", "+2", "2 ", "0x2", ""}) {
    Result r = replay_edited("count.json", [&](nlohmann::json& d) { d["steps"][5]["calls"][0]["replay"][0]["args"][1] = count; });
    CHECK_MESSAGE(r.rc == 3, "count \"" << count << "\"");  // " 2" and "+2" accepted by strtol before the fix
    CHECK(has(r.err, "step 6 (server), call post_recv: post_recv argument 2: expected an integer in 1..64"));
  }
  // escape sequences from the trace (spec, actor) and from --device never reach the terminal raw
  nlohmann::json doc = nlohmann::json::parse(good_trace());
  doc["spec"] = "\x1b[31mred";
  doc["steps"][0]["actor"] = "cli\x1b]0;title\x07" "ent";
  ReplayOptions o;
  o.device = "fake\x1b[2J";
  o.format = Format::kText;
  Result esc = replay_file(write("escape.json", doc.dump()), o);
  CHECK(esc.rc == 10);
  CHECK(esc.out.find('\x1b') == std::string::npos);
  CHECK(has(esc.out, "replay of \\u001b[31mred (violated: no_send_to_empty_rq) on fake\\u001b[2J\n"));
  CHECK(has(esc.out, "cli\\u001b]0;title\\u0007ent"));
  std::ostringstream out, err;
  CHECK(run_replay(ReplayOptions{write("dev.json", good_trace()), "", "", 5000, Format::kText, ""}, out, err) == 4);
  CHECK(has(err.str(), "--device is empty"));
  ReplayOptions banana;
  banana.device = "nosuchdev9";  // the rdma-core device would say 6 first
  banana.address = "banana";
  banana.file = write("addr.json", good_trace());
  std::ostringstream out2, err2;
  CHECK(run_replay(banana, out2, err2) == 4);  // exit 6 before the fix
  CHECK(has(err2.str(), "--address \"banana\" is not an IPv4 address"));
}

// Runs the qpcheck binary (a data dependency) with `args`; exit code and stderr.
std::pair<int, std::string> qpcheck(const std::string& args) {
  std::string err_file = tmp("qpcheck.err");
  int status = std::system(("checker/cli/qpcheck " + args + " >/dev/null 2>" + err_file).c_str());
  std::ifstream in(err_file);
  std::stringstream b;
  b << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, b.str()};
}

TEST_CASE("defect 9: an unknown subcommand is named; --format takes the names text and json only, in any case") {
  auto [rc, err] = qpcheck("frob");
  CHECK(rc == 4);  // "A subcommand is required" before the fix
  CHECK(has(err, "qpcheck: error: unknown subcommand 'frob' (expected one of verify, "));
  CHECK(has(err, "replay"));
  std::string t = write("fmt.json", good_trace());
  for (const std::string& sub : std::vector<std::string>{"replay " + t + " --device fake0",
                                                         "gate spec/01_linux_today.qpspec",
                                                         "diff spec/01_linux_today.qpspec spec/01_linux_today.qpspec",
                                                         "synth spec/01_linux_today.qpspec"}) {
    auto [rc_xml, err_xml] = qpcheck(sub + " --format xml");
    CHECK(rc_xml == 4);
    CHECK(has(err_xml, "--format: expected text or json, found 'xml'"));  // CLI11's map internals before the fix
    CHECK(qpcheck(sub + " --format 1").first == 4);  // accepted as json before the fix
  }
  CHECK(qpcheck("diff spec/01_linux_today.qpspec spec/01_linux_today.qpspec --format JSON").first == 0);
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
