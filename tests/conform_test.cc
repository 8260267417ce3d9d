// The conformance check (checker/conform) on call logs shipped as test data (tests/conform/logs): verdicts, the
// deviating event, what the spec allowed there, exact state counts, and every kind of bad log (truncated, corrupt,
// out of order, another schema version, a handle the run never created) with its file:line and field.
#include <cstdlib>
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checker/cli/conform.h"
#include "checker/cli/exit_codes.h"
#include "checker/cli/verify.h"
#include "checker/cli/walk.h"
#include "checker/conform/conform.h"
#include "checker/frontend/frontend.h"
#include "verbs_backend/call_log.h"
#include "verbs_backend/replay_ops.h"

namespace qpcheck {
namespace {

using conform::ConformResult;

const std::string kLogs = "tests/conform/logs/";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string l; std::getline(s, l);) out.push_back(l);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

struct Checked {
  ConformResult result;
  verbs::Observed observed;
};

Checked check(const std::string& spec_path, const std::vector<verbs::CallLog>& logs,
              const lang::ParamOverrides& params = {}) {
  frontend::Spec spec;
  spec.read(spec_path, lang::default_search_path({}));
  lang::Compiled c = spec.compile(params);
  Checked out;
  out.observed = verbs::observe(logs, conform::replay_ops_used(*c.model));
  model::ModelSystem system(*c.model);
  out.result = conform::check_conformance(system, verbs::replay_vocabulary(), out.observed.observations,
                                          out.observed.ended);
  return out;
}

std::vector<verbs::CallLog> pair(const std::string& stem) {
  return {verbs::read_call_log(kLogs + stem + ".client.jsonl"), verbs::read_call_log(kLogs + stem + ".server.jsonl")};
}

std::string err_of(const std::string& name, const std::string& text) {
  try {
    verbs::parse_call_log(name, text);
  } catch (const verbs::CallLogError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_CASE("a run that posts its receives before rdma_connect conforms to spec 01, on both transports") {
  Checked c = check("spec/01_linux_today.qpspec", pair("synthetic_01_today"));
  CHECK(c.result.verdict == ConformResult::Verdict::kConforms);
  CHECK(c.observed.observations.size() == 25);
  CHECK(c.result.event == 25);
  CHECK(c.result.path.actions.size() == 35);
  CHECK(c.result.states == 511);
  int observed_steps = 0;
  for (int m : c.result.matched) observed_steps += m >= 0;
  CHECK(observed_steps == 25);  // one step per observation: a poll and its re-post are calls of their own
  // what the spec does not describe is listed, never dropped silently
  int skipped = 0;
  for (const conform::Skipped& s : c.observed.skipped) skipped += s.count;
  CHECK(skipped == 19);  // 44 calls, 25 observations
  Checked iw = check("spec/01_linux_today.qpspec", pair("synthetic_01_today"), {{"transport", "IWARP"}});
  CHECK(iw.result.verdict == ConformResult::Verdict::kConforms);
  CHECK(iw.result.path.actions.size() == 39);
}

TEST_CASE("the same program with the 2021 patch's order deviates from spec 01 at its rdma_connect") {
  Checked c = check("spec/01_linux_today.qpspec", pair("synthetic_01_after_established"));
  REQUIRE(c.result.verdict == ConformResult::Verdict::kDeviates);
  REQUIRE(c.result.event == 1);
  CHECK(c.observed.observations[1].call == "rdma_connect");
  CHECK(c.observed.observations[1].source == kLogs + "synthetic_01_after_established.client.jsonl:12");
  REQUIRE(c.result.allowed.size() == 1);
  CHECK(c.result.allowed[0].actor == "client");
  REQUIRE(c.result.allowed[0].ops.size() == 1);
  CHECK(c.result.allowed[0].ops[0].op == "post_recv");
  CHECK(c.result.allowed[0].ops[0].args == std::vector<std::string>{"ACTIVE", "2"});
  CHECK(c.result.path.actions.size() == 1);
  // and the patch's spec refuses today's order at the post
  Checked p = check("spec/02_patch_client_first.qpspec", pair("synthetic_01_today"));
  REQUIRE(p.result.verdict == ConformResult::Verdict::kDeviates);
  CHECK(p.result.event == 1);
  CHECK(p.observed.observations[1].call == "ibv_post_recv");
  REQUIRE(p.result.allowed.size() == 1);
  CHECK(p.result.allowed[0].ops[0].op == "connect");
}

TEST_CASE("a call at the spec's failing step VIOLATES: refused when it failed, let pass when it succeeded") {
  std::vector<verbs::CallLog> logs = pair("synthetic_01_today");
  // the client's first ibv_post_recv (line 12) returned EINVAL, as on a QP in RESET
  std::vector<std::string> lines = lines_of(slurp(kLogs + "synthetic_01_today.client.jsonl"));
  REQUIRE(lines[11].find("ibv_post_recv") != std::string::npos);
  lines[11].replace(lines[11].find("\"ret\": 0"), 8, "\"ret\": 22, \"errno\": 22");
  std::vector<verbs::CallLog> failed{verbs::parse_call_log("client.jsonl", joined(lines)), logs[1]};
  Checked v = check("spec/06_today_strict_create.qpspec", failed);
  REQUIRE(v.result.verdict == ConformResult::Verdict::kViolates);
  CHECK(v.result.event == 1);
  REQUIRE(v.result.violation);
  CHECK(v.result.violation->property == "no_post_in_illegal_state");
  CHECK(v.result.refused);
  // the same call succeeded: the program still did what the spec forbids (the device let it pass)
  Checked d = check("spec/06_today_strict_create.qpspec", logs);
  REQUIRE(d.result.verdict == ConformResult::Verdict::kViolates);
  CHECK(d.result.event == 1);
  REQUIRE(d.result.violation);
  CHECK(d.result.violation->property == "no_post_in_illegal_state");
  CHECK_FALSE(d.result.refused);
  // a call that failed where the spec's step succeeds deviates: the failure is not a behaviour of the spec
  std::vector<std::string> ok = lines_of(slurp(kLogs + "synthetic_01_today.client.jsonl"));
  REQUIRE(ok[12].find("\"ret\": 0") != std::string::npos);
  ok[12].replace(ok[12].find("\"ret\": 0"), 8, "\"ret\": -1, \"errno\": 22");
  Checked f = check("spec/01_linux_today.qpspec", {verbs::parse_call_log("client.jsonl", joined(ok)), logs[1]});
  CHECK(f.result.verdict == ConformResult::Verdict::kDeviates);
}

TEST_CASE("a log from another spec deviates at its first call that spec does not make there") {
  Checked c = check("spec/09_plain_verbs_bringup.qpspec", pair("synthetic_01_today"));
  REQUIRE(c.result.verdict == ConformResult::Verdict::kDeviates);
  CHECK(c.result.event == 0);
  CHECK(c.observed.observations[0].call == "ibv_post_recv");
  REQUIRE(!c.result.allowed.empty());
  CHECK(c.result.allowed[0].ops[0].op == "ibv_create_qp");
}

TEST_CASE("a log without its trailer is checked as far as it goes, and a conforming prefix need not end") {
  std::vector<std::string> lines = lines_of(slurp(kLogs + "synthetic_01_today.client.jsonl"));
  lines.resize(16);  // up to the first ibv_post_send, no trailer
  std::vector<std::string> server = lines_of(slurp(kLogs + "synthetic_01_today.server.jsonl"));
  server.resize(12);  // up to its ESTABLISHED
  std::vector<verbs::CallLog> logs{verbs::parse_call_log("client.jsonl", joined(lines)),
                                   verbs::parse_call_log("server.jsonl", joined(server))};
  Checked c = check("spec/01_linux_today.qpspec", logs);
  CHECK(!c.observed.ended);
  CHECK(c.observed.observations.size() == 10);
  REQUIRE(!c.observed.notes.empty());
  CHECK(c.observed.notes[0].find("no trailer") != std::string::npos);
  CHECK(c.result.verdict == ConformResult::Verdict::kConforms);
}

TEST_CASE("a complete log that stops where the spec still has to call deviates at the end") {
  // the client's log without its last call (DISCONNECTED) but with a trailer
  std::vector<std::string> lines = lines_of(slurp(kLogs + "synthetic_01_today.client.jsonl"));
  lines.erase(lines.end() - 2);
  lines.back() = R"({"end": true, "records": 22, "lost": 0})";
  std::vector<verbs::CallLog> logs{verbs::parse_call_log("client.jsonl", joined(lines)),
                                   verbs::read_call_log(kLogs + "synthetic_01_today.server.jsonl")};
  Checked c = check("spec/01_linux_today.qpspec", logs);
  REQUIRE(c.result.verdict == ConformResult::Verdict::kDeviates);
  CHECK(c.result.event == c.observed.observations.size());
  REQUIRE(!c.result.allowed.empty());
  CHECK(c.result.allowed[0].ops[0].op == "get_cm_event");
}

TEST_CASE("bad logs name the file, the line and the field") {
  std::string good = slurp(kLogs + "synthetic_01_today.server.jsonl");
  std::vector<std::string> lines = lines_of(good);
  CHECK(err_of("s.jsonl", good.substr(0, good.size() - 20)) ==
        "s.jsonl:" + std::to_string(lines.size()) + ": the last line is cut off (no newline): the log is truncated");
  {
    std::vector<std::string> l = lines;
    l[3] = l[3].substr(0, 30) + "\"}";
    CHECK(err_of("s.jsonl", joined(l)).rfind("s.jsonl:4: not JSON: ", 0) == 0);
  }
  {
    std::vector<std::string> l = lines;
    std::swap(l[3], l[4]);
    CHECK(err_of("s.jsonl", joined(l)) == "s.jsonl:4: field 'seq': 4 out of order (expected 3)");
  }
  {
    std::vector<std::string> l = lines;
    l[4].replace(l[4].find("\"t\": "), 12, "\"t\": 5");
    CHECK(err_of("s.jsonl", joined(l)).rfind("s.jsonl:5: field 't': 5 ns is before the thread's previous record", 0) ==
          0);
  }
  {
    std::vector<std::string> l = lines;
    l[2].replace(l[2].find("\"seq\": 2"), 8, "\"seq\": \"2\"");
    CHECK(err_of("s.jsonl", joined(l)) == "s.jsonl:3: field 'seq': expected an integer, found \"2\"");
  }
  {
    std::vector<std::string> l = lines;
    l[0].replace(l[0].find("\"qpcheck_record\": 1"), 19, "\"qpcheck_record\": 2");
    CHECK(err_of("s.jsonl", joined(l)) == "s.jsonl:1: field 'qpcheck_record': schema version 2; this qpcheck reads "
                                          "version 1");
  }
  {
    std::vector<std::string> l = lines;
    l.push_back(l[1]);
    CHECK(err_of("s.jsonl", joined(l)) ==
          "s.jsonl:" + std::to_string(l.size()) + ": a line after the trailer (\"end\": true)");
  }
  CHECK(err_of("s.jsonl", "") == "s.jsonl:1: empty: not a qpcheck call log");
  CHECK(err_of("s.jsonl", "{\"a\": 1}\n") == "s.jsonl:1: field 'qpcheck_record': missing: not a qpcheck call log");
  CHECK(err_of("s.jsonl", lines[0] + "\n" + std::string(20, '[') + "\n") == "s.jsonl:2: nested deeper than 8 levels");
  // a handle the run never created: named when the log is read as a run
  {
    std::vector<std::string> l = lines;
    size_t at = l[8].find("\"qp\": \"0x59a0\"");
    REQUIRE(at != std::string::npos);
    l[8].replace(at, 14, "\"qp\": \"0xdead\"");
    std::vector<verbs::CallLog> logs{verbs::read_call_log(kLogs + "synthetic_01_today.client.jsonl"),
                                     verbs::parse_call_log("s.jsonl", joined(l))};
    try {
      verbs::observe(logs, {"post_recv", "create_qp"});
      FAIL("no error");
    } catch (const verbs::CallLogError& e) {
      CHECK(std::string(e.what()).rfind("s.jsonl:9: field 'qp': QP 0xdead was not created", 0) == 0);
    }
  }
  // a value outside the API's type (ibv_post_recv's count of WRs): named, not matched as an observation
  {
    std::vector<std::string> l = lines;
    size_t at = l[8].find("\"count\": 2");
    REQUIRE(at != std::string::npos);
    l[8].replace(at, 10, "\"count\": -3");
    std::vector<verbs::CallLog> logs{verbs::read_call_log(kLogs + "synthetic_01_today.client.jsonl"),
                                     verbs::parse_call_log("s.jsonl", joined(l))};
    try {
      verbs::observe(logs, {"post_recv", "create_qp"});
      FAIL("no error");
    } catch (const verbs::CallLogError& e) {
      CHECK(std::string(e.what()).rfind("s.jsonl:9: field 'count': -3 is out of the call's range 0..2147483647", 0) ==
            0);
    }
  }
}

// Logs recorded in the live VM (tests/live/run_conform.sh) of our ULP (verbs_backend/ulp), both builds, on rxe and siw.
TEST_CASE("recorded runs of our ULP: each build conforms to its own ordering's spec and deviates from the other's") {
  struct Row {
    const char* build;
    const char* device;
    const char* transport;
    uint64_t states_own;  // model states held checking against its own spec
  };
  for (const Row& r : std::vector<Row>{{"before_connect", "rxe0", "IB", 63},
                                       {"after_established", "rxe0", "IB", 72},
                                       {"before_connect", "siw0", "IWARP", 54},
                                       {"after_established", "siw0", "IWARP", 50}}) {
    std::string stem = kLogs + "ulp_recv_" + r.build + "." + r.device;
    std::vector<verbs::CallLog> logs{verbs::read_call_log(stem + ".server.jsonl"),
                                     verbs::read_call_log(stem + ".client.jsonl")};
    lang::ParamOverrides params{{"transport", r.transport}};
    bool early = std::string(r.build) == "before_connect";
    std::string own = early ? "spec/13_ulp_recv_before_connect.qpspec" : "spec/14_ulp_recv_after_established.qpspec";
    std::string other = early ? "spec/14_ulp_recv_after_established.qpspec" : "spec/13_ulp_recv_before_connect.qpspec";
    INFO(stem);
    Checked c = check(own, logs, params);
    CHECK(c.result.verdict == ConformResult::Verdict::kConforms);
    CHECK(c.observed.observations.size() == 29);
    CHECK(c.result.path.actions.size() == 41);
    CHECK(c.result.states == r.states_own);
    CHECK(c.observed.ended);
    Checked d = check(other, logs, params);
    REQUIRE(d.result.verdict == ConformResult::Verdict::kDeviates);
    CHECK(d.result.event == 7);  // after create_id, resolve_addr and route with their events, listen, create_qp
    CHECK(d.observed.observations[7].call == (early ? "ibv_post_recv" : "rdma_connect"));
    CHECK(d.observed.observations[7].source == stem + ".client.jsonl:17");
    REQUIRE(d.result.allowed.size() == 1);
    CHECK(d.result.allowed[0].ops[0].op == (early ? "connect" : "post_recv"));
  }
}

TEST_CASE("a recorded run whose client made its cm_id before the server listened deviates from spec 14 at once") {
  // recorded when the live job's payload started the client too early (it saw the previous run's "listening"); the
  // spec says the client starts once the server listens
  std::vector<verbs::CallLog> logs{verbs::read_call_log(kLogs + "rxe_client_before_listen.server.jsonl"),
                                   verbs::read_call_log(kLogs + "rxe_client_before_listen.client.jsonl")};
  Checked c = check("spec/14_ulp_recv_after_established.qpspec", logs);
  REQUIRE(c.result.verdict == ConformResult::Verdict::kDeviates);
  CHECK(c.result.event == 0);
  CHECK(c.observed.observations[0].call == "rdma_create_id");
  REQUIRE(c.result.allowed.size() == 1);
  CHECK(c.result.allowed[0].ops[0].op == "listen");
  CHECK(c.result.allowed[0].actor == "server");
}

TEST_CASE("rdma-core's examples recorded on rxe read as runs: rping's shared CQ, rdma_client's synchronous API") {
  auto names = [](const verbs::Observed& o) {
    std::vector<std::string> out;
    for (const conform::Observation& x : o.observations) {
      std::string s = x.op;
      for (const std::string& a : x.args) s += " " + a;
      out.push_back(s);
    }
    return out;
  };
  std::vector<std::string> every;
  for (const auto& op : verbs::kReplayOps) every.emplace_back(op.name);
  // rping -C 1: one CQ per side for both queues, polled by a CQ thread; events taken by a CM thread
  verbs::Observed rping = verbs::observe({verbs::read_call_log(kLogs + "rping.rxe0.server.jsonl"),
                                          verbs::read_call_log(kLogs + "rping.rxe0.client.jsonl")},
                                         every);
  CHECK(rping.observations.size() == 45);
  std::vector<std::string> r = names(rping);
  // the flushed completions at the disconnect cannot be placed (their opcode is not valid, and rping gives every WR
  // wr_id 0): each matches a poll of either queue
  for (const conform::Observation& o : rping.observations) {
    if (o.args.size() > 1 && o.args[1] == "IBV_WC_WR_FLUSH_ERR") {
      CHECK(o.op == "poll_send");
      REQUIRE(o.alternatives.size() == 1);
      CHECK(o.alternatives[0].op == "poll_recv");
    }
  }
  CHECK(std::count(r.begin(), r.end(), "poll_send PASSIVE[0] IBV_WC_WR_FLUSH_ERR *") == 1);
  CHECK(std::count(r.begin(), r.end(), "poll_send ACTIVE[0] IBV_WC_WR_FLUSH_ERR *") == 1);
  CHECK(std::count(r.begin(), r.end(), "post_send PASSIVE[0] IBV_WR_RDMA_READ") == 1);
  CHECK(std::count(r.begin(), r.end(), "poll_send PASSIVE[0] IBV_WC_SUCCESS IBV_WC_RDMA_READ") == 1);
  // the READ is posted (stamped at entry) before its completion is polled, although its record was written after
  auto post = std::find(r.begin(), r.end(), "post_send PASSIVE[0] IBV_WR_RDMA_READ");
  auto done = std::find(r.begin(), r.end(), "poll_send PASSIVE[0] IBV_WC_SUCCESS IBV_WC_RDMA_READ");
  CHECK(post < done);
  CHECK(rping.notes.empty());
  // rdma_server / rdma_client: the synchronous API takes its events inside the calls, rdma_create_ep (one record)
  // stands for the cm_id, its address and route and its QP, and rdma_get_request hands over a QP librdmacm created
  verbs::Observed sync = verbs::observe({verbs::read_call_log(kLogs + "rdma_server_client.rxe0.server.jsonl"),
                                         verbs::read_call_log(kLogs + "rdma_server_client.rxe0.client.jsonl")},
                                        every);
  CHECK(sync.observations.size() == 29);
  std::vector<std::string> q = names(sync);
  REQUIRE(q.size() >= 6);
  CHECK(std::vector<std::string>(q.begin() + 1, q.begin() + 7) ==
        std::vector<std::string>{"create_id ACTIVE[0]", "resolve_addr ACTIVE[0]",
                                 "get_cm_event ACTIVE[0] RDMA_CM_EVENT_ADDR_RESOLVED", "resolve_route ACTIVE[0]",
                                 "get_cm_event ACTIVE[0] RDMA_CM_EVENT_ROUTE_RESOLVED", "create_qp ACTIVE[0]"});
  CHECK(sync.observations[1].call == "rdma_create_ep");
  CHECK(std::count(q.begin(), q.end(), "get_cm_event ACTIVE[0] RDMA_CM_EVENT_ESTABLISHED") == 1);
  CHECK(std::count(q.begin(), q.end(), "get_cm_event PASSIVE[0] RDMA_CM_EVENT_CONNECT_REQUEST") == 1);
  CHECK(std::count(q.begin(), q.end(), "create_qp PASSIVE[0]") == 1);
  // rdma_post_send passes no IBV_SEND_SIGNALED, on QPs with sq_sig_all: signaled all the same, nothing to note
  CHECK(sync.notes.empty());
}

TEST_CASE("rdma-core's examples against their specs: rdma_server/rdma_client conform, rping's server violates "
          "rdma_destroy_id.3") {
  struct Row {
    const char* stem;
    const char* spec;
    const char* transport;
    ConformResult::Verdict verdict;
    size_t event;     // 0-based; CONFORMS: the number of observations
    uint64_t states;  // model states held
  };
  for (const Row& r : std::vector<Row>{
           {"rdma_server_client.rxe0", "spec/16_rdma_server_client.qpspec", "IB", ConformResult::Verdict::kConforms, 29, 81},
           {"rdma_server_client.siw0", "spec/16_rdma_server_client.qpspec", "IWARP", ConformResult::Verdict::kConforms, 29,
            118},
           {"rping.rxe0", "spec/15_rping.qpspec", "IB", ConformResult::Verdict::kViolates, 42, 535},
           {"rping.siw0", "spec/15_rping.qpspec", "IWARP", ConformResult::Verdict::kViolates, 41, 391}}) {
    INFO(r.stem);
    std::vector<verbs::CallLog> logs{verbs::read_call_log(kLogs + r.stem + ".server.jsonl"),
                                     verbs::read_call_log(kLogs + r.stem + ".client.jsonl")};
    Checked c = check(r.spec, logs, {{"transport", r.transport}});
    REQUIRE(c.result.verdict == r.verdict);
    CHECK(c.result.event == r.event);
    CHECK(c.result.states == r.states);
    if (r.verdict == ConformResult::Verdict::kViolates) {
      // the server's rdma_destroy_id of the child cm_id, its QP still there; librdmacm and the provider let it pass
      CHECK(c.observed.observations[r.event].call == "rdma_destroy_id");
      CHECK(c.observed.observations[r.event].source.find("server.jsonl") != std::string::npos);
      REQUIRE(c.result.violation);
      CHECK(c.result.violation->property == "no_illegal_cm_call");
      CHECK_FALSE(c.result.refused);
    }
  }
  // The same rping log checked against rdma_server/rdma_client's spec deviates at once: rping's client makes its
  // cm_id with rdma_create_id and waits for the route in another thread
  Checked d = check("spec/16_rdma_server_client.qpspec",
                    {verbs::read_call_log(kLogs + "rping.rxe0.server.jsonl"),
                     verbs::read_call_log(kLogs + "rping.rxe0.client.jsonl")});
  CHECK(d.result.verdict == ConformResult::Verdict::kDeviates);
}

// Every cut of every recorded run: the programs all killed at one moment T (each log keeps the records of the calls
// that had returned by T, no trailer). A cut is clean when no call was in progress at T: a call's record is written
// at its return, so one in progress (a synchronous rdma_connect whose REQ the peer already answered) has no record
// yet and its effects at the peer cannot be matched; those cuts are counted apart. Every clean cut is a behaviour
// of the spec so far: CONFORMS where it falls between the spec's steps, PREFIX where it falls inside one (a step of
// several calls: tests/conform/specs/01_fused_repost's poll-and-re-post helper), or the full run's VIOLATES once
// past the violating call; never DEVIATES.
TEST_CASE("every clean cut of every recorded log is CONFORMS, PREFIX or the full run's VIOLATES, never DEVIATES") {
  struct Row {
    const char* stem;
    const char* spec;
    const char* transport;
    std::vector<std::vector<std::string>> map;  // plain-verbs QPs (server, client)
    size_t clean;   // clean cuts (moments between records, no call in progress)
    size_t prefix;  // clean cuts inside a step
  };
  size_t total_clean = 0, total_prefix = 0, total_busy = 0;
  for (const Row& r : std::vector<Row>{
           {"ulp_recv_before_connect.rxe0", "spec/13_ulp_recv_before_connect.qpspec", "IB", {}, 46, 0},
           {"ulp_recv_before_connect.siw0", "spec/13_ulp_recv_before_connect.qpspec", "IWARP", {}, 43, 0},
           {"ulp_recv_after_established.rxe0", "spec/14_ulp_recv_after_established.qpspec", "IB", {}, 46, 0},
           {"ulp_recv_after_established.siw0", "spec/14_ulp_recv_after_established.qpspec", "IWARP", {}, 43, 0},
           {"rdma_server_client.rxe0", "spec/16_rdma_server_client.qpspec", "IB", {}, 24, 0},
           {"rdma_server_client.siw0", "spec/16_rdma_server_client.qpspec", "IWARP", {}, 27, 0},
           {"rping.rxe0", "spec/15_rping.qpspec", "IB", {}, 50, 0},
           {"rping.siw0", "spec/15_rping.qpspec", "IWARP", {}, 50, 0},
           {"rc_pingpong.rxe0", "spec/17_rc_pingpong.qpspec", "IB", {{"PASSIVE[0]"}, {"ACTIVE[0]"}}, 24, 0},
           {"synthetic_01_today", "spec/01_linux_today.qpspec", "IB", {}, 45, 0},
           {"synthetic_01_today", "tests/conform/specs/01_fused_repost.qpspec", "IB", {}, 45, 4}}) {
    const std::string stem = r.stem;
    INFO(stem, " against ", std::string(r.spec));
    std::vector<std::vector<std::string>> lines{lines_of(slurp(kLogs + stem + ".server.jsonl")),
                                                lines_of(slurp(kLogs + stem + ".client.jsonl"))};
    // each log's record times in line order (the trailer left out)
    std::vector<std::vector<int64_t>> t(2);
    std::vector<int64_t> moments{0};
    for (size_t l = 0; l < 2; ++l) {
      for (size_t i = 1; i < lines[l].size(); ++i) {
        nlohmann::json j = nlohmann::json::parse(lines[l][i]);
        if (j.contains("end")) break;
        t[l].push_back(j["t"].get<int64_t>());
        moments.push_back(t[l].back());
      }
    }
    std::sort(moments.begin(), moments.end());
    moments.erase(std::unique(moments.begin(), moments.end()), moments.end());
    frontend::Spec spec;
    spec.read(r.spec, lang::default_search_path({}));
    lang::Compiled c = spec.compile({{"transport", r.transport}});
    std::vector<std::string> ops = conform::replay_ops_used(*c.model);
    model::ModelSystem system(*c.model);
    verbs::Observed whole = verbs::observe({verbs::read_call_log(kLogs + stem + ".server.jsonl"),
                                            verbs::read_call_log(kLogs + stem + ".client.jsonl")},
                                           ops, r.map);
    ConformResult full = conform::check_conformance(system, verbs::replay_vocabulary(), whole.observations,
                                                    whole.ended);
    size_t clean = 0, prefix = 0, busy = 0;
    for (int64_t T : moments) {
      std::vector<size_t> keep(2);
      bool in_progress = false;
      for (size_t l = 0; l < 2; ++l) {
        while (keep[l] < t[l].size() && t[l][keep[l]] <= T) ++keep[l];
        for (size_t i = keep[l]; i < t[l].size(); ++i) in_progress = in_progress || t[l][i] <= T;
      }
      if (in_progress) {
        ++busy;
        continue;
      }
      std::vector<verbs::CallLog> logs;
      for (size_t l = 0; l < 2; ++l) {
        std::vector<std::string> cut(lines[l].begin(), lines[l].begin() + static_cast<long>(keep[l] + 1));
        logs.push_back(verbs::parse_call_log(fmt::format("{}.{}", stem, l), joined(cut)));
      }
      verbs::Observed o = verbs::observe(logs, ops, r.map);
      ConformResult cr = conform::check_conformance(system, verbs::replay_vocabulary(), o.observations, o.ended);
      INFO("cut at ", T, " ns: ", keep[0], " and ", keep[1], " records, ", o.observations.size(), " observations");
      ++clean;
      CHECK((cr.verdict == ConformResult::Verdict::kConforms || cr.verdict == ConformResult::Verdict::kPrefix ||
             (cr.verdict == ConformResult::Verdict::kViolates && full.verdict == cr.verdict &&
              cr.event == full.event)));
      if (cr.verdict == ConformResult::Verdict::kPrefix) {
        ++prefix;
        CHECK(cr.event == o.observations.size());
        CHECK(cr.cut_ops >= 1);
        CHECK(cr.cut_ops < cr.step_ops);
      }
    }
    MESSAGE(stem << " / " << std::string(r.spec) << ": " << clean << " clean cuts (" << prefix << " PREFIX), " << busy
                 << " with a call in progress");
    CHECK(clean == r.clean);
    CHECK(prefix == r.prefix);
    total_clean += clean;
    total_prefix += prefix;
    total_busy += busy;
  }
  MESSAGE("every cut: " << total_clean << " clean (" << total_prefix << " PREFIX), " << total_busy << " in progress");
}

// The fault suite's program (tests/live/run_faults.sh) against its spec: with each fault the suite injects turned on
// whose state space fits a unit test, every property holds (the ULP's own included: a run without a fault has its
// REPLYs), in exactly this many states. The suite verifies the larger configurations itself (docs/faults.md).
TEST_CASE("the fault suite's ULP spec holds under the faults it is run with") {
  struct Row {
    std::vector<std::string> params;
    uint64_t states;
  };
  for (const Row& r : std::vector<Row>{{{"transport=IB"}, 516724},
                                       {{"transport=IWARP"}, 456103},
                                       {{"transport=IB", "active_cq_depth=1"}, 653671},
                                       {{"transport=IWARP", "active_cq_depth=1"}, 536748},
                                       {{"transport=IB", "process_exits=true"}, 2009475},
                                       {{"transport=IWARP", "process_exits=true"}, 2345604},
                                       {{"transport=IWARP", "cm_timeouts=true", "path_faults=true"}, 1180292}}) {
    std::string all;
    for (const std::string& p : r.params) all += p + " ";
    INFO("params: ", all);
    cli::VerifyOptions o;
    o.file = "tests/live/specs/ulp_resilient.qpspec";
    o.params = r.params;
    o.format = cli::Format::kJson;
    std::ostringstream out, err;
    int rc = cli::run_verify(o, out, err);
    INFO("stderr: ", err.str());
    REQUIRE(rc == cli::code(cli::ExitCode::kHolds));
    nlohmann::json j = nlohmann::json::parse(out.str());
    CHECK(j["verdict"] == "holds");
    CHECK(j["stats"]["states"].get<uint64_t>() == r.states);
  }
}

// Runs of the fault suite kept as test data (tests/conform/logs/fault_*): each is a behaviour the library gained from
// a deviation the suite found (docs/faults.md "What the suite found"). With its fault's parameters the run conforms;
// without them it deviates at the call the fault explains (`deviates_at` is the observation's index, from 0: the
// report's event number less one).
TEST_CASE("fault-suite runs conform with their fault's parameters and deviate without them, where the fault acts") {
  struct Row {
    const char* stem;
    lang::ParamOverrides params;
    uint64_t states;        // with the fault's parameters: CONFORMS
    size_t deviates_at;     // without them: DEVIATES at this observation
    const char* call;       // ... which is this recorded call
  };
  const std::string spec = "tests/live/specs/ulp_resilient.qpspec";
  for (const Row& r : std::vector<Row>{
           // siw: the server's device removed before any CONNECT_REQUEST: rdma_connect refused (ECONNREFUSED)
           {"fault_devremove_connect_refused.siw", {{"device_removal", "true"}, {"transport", "IWARP"}}, 343, 9,
            "rdma_connect"},
           // rxe: the server killed after rdma_accept: the client's REP meets its REJ, CONNECT_ERROR (-1)
           {"fault_kill_rep_rejected.rxe", {{"process_exits", "true"}}, 2589, 15, "rdma_get_cm_event"},
           // siw under reordering: the server's Send refused by the socket, QP_FATAL, IBV_WC_LOC_QP_OP_ERR
           {"fault_reorder_send_refused.siw",
            {{"cm_timeouts", "true"}, {"path_faults", "true"}, {"transport", "IWARP"}}, 2541, 29,
            "ibv_get_async_event"},
           // rxe under 28 % loss: the RTU lost, the server's DISCONNECTED without an ESTABLISHED
           {"fault_loss_rtu_lost.rxe", {{"cm_timeouts", "true"}, {"path_faults", "true"}}, 20251, 23,
            "rdma_get_cm_event"},
           // siw: the client's device removed while its address resolves (a source address given): DEVICE_REMOVAL
           {"fault_devremove_resolving.siw", {{"device_removal", "true"}, {"transport", "IWARP"}}, 103, 3,
            "rdma_get_cm_event"},
           // rxe: the client's address removed after its route resolved: rdma_connect EINVAL (the cm_id's GID entry
           // deleted, cm_init_av_by_path)
           {"fault_addrdel_connect_einval.rxe",
            {{"cm_timeouts", "true"}, {"path_faults", "true"}, {"address_removal", "true"}}, 4185, 9, "rdma_connect"},
           // rxe: the client's address removed under a connection: IBV_EVENT_GID_CHANGE, then its Send fails at once,
           // IBV_WC_LOC_QP_OP_ERR (rxe routes each packet in software)
           {"fault_addrdel_gid_change.rxe",
            {{"cm_timeouts", "true"}, {"path_faults", "true"}, {"address_removal", "true"}}, 96705, 17,
            "ibv_get_async_event"},
           // rxe: the client's link down under a connection: PORT_ERR, its Send IBV_WC_LOC_QP_OP_ERR (no route)
           {"fault_linkdown_local_error.rxe",
            {{"cm_timeouts", "true"}, {"path_faults", "true"}, {"port_faults", "true"}}, 199500, 17,
            "ibv_get_async_event"},
           // rxe: the server's link down while the client connects: the client's PORT_ACTIVE with no PORT_ERR (a
           // carrier flap linkwatch reported by its end), its REQ rejected by the server's CM (no route back: REJ
           // "consumer defined", REJECTED with status 28)
           {"fault_linkdown_port_active_only.rxe",
            {{"cm_timeouts", "true"}, {"path_faults", "true"}, {"port_faults", "true"}}, 49336, 10,
            "ibv_get_async_event"},
           // siw: the server's link down while the client connects: the TCP connect inside rdma_connect fails
           // (EHOSTUNREACH)
           {"fault_linkdown_connect_unreachable.siw",
            {{"cm_timeouts", "true"}, {"path_faults", "true"}, {"port_faults", "true"}, {"transport", "IWARP"}}, 3627,
            9, "rdma_connect"},
           // siw: the client's device removed during its rdma_disconnect: the QP's SQD (the close) done, the kernel
           // half ENXIO; DISCONNECTED (from the close) before DEVICE_REMOVAL
           {"fault_devremove_disconnect_race.siw", {{"device_removal", "true"}, {"transport", "IWARP"}}, 58497, 25,
            "rdma_disconnect"}}) {
    INFO(r.stem);
    std::vector<verbs::CallLog> logs = pair(r.stem);
    Checked with = check(spec, logs, r.params);
    CHECK(with.result.verdict == ConformResult::Verdict::kConforms);
    CHECK(with.result.event == with.observed.observations.size());
    CHECK(with.result.states == r.states);
    lang::ParamOverrides healthy;
    for (const auto& [k, v] : r.params) {
      if (k == "transport") healthy.emplace_back(k, v);
    }
    Checked without = check(spec, logs, healthy);
    REQUIRE(without.result.verdict == ConformResult::Verdict::kDeviates);
    CHECK(without.result.event == r.deviates_at);
    REQUIRE(without.result.event < without.observed.observations.size());
    CHECK(without.observed.observations[without.result.event].call == r.call);
  }
}

// The siw accept backlog (docs/faults.md; lib/mpa.qpspec mpa_accept_backlog): seed 1 stress run 123, rdma_server /
// rdma_client on siw with no fault. The client's request reached the server's socket while rdma_accept was handing it
// to the QP and stayed there unread (40 bytes in the socket 27 s later); the server hung in rdma_get_recv_comp until
// the suite's timeout killed it, and the client then took its receive flushed, as rdma_client takes any completion.
// The run conforms to spec 16 with the timed-out server's exit (process_exits); spec 16 with the backlog deadlocks
// exactly there (both programs in rdma_get_recv_comp), and with a provider that reads its stream it holds.
TEST_CASE("the siw accept backlog: the hung rdma_server run conforms, and spec 16 deadlocks where it hung") {
  std::vector<verbs::CallLog> logs = pair("fault_none_accept_backlog.siw");
  Checked c = check("spec/16_rdma_server_client.qpspec", logs,
                    {{"transport", "IWARP"}, {"mpa_accept_backlog", "UNTIL_NEXT_FRAME"}, {"process_exits", "true"}});
  CHECK(c.result.verdict == ConformResult::Verdict::kConforms);
  CHECK(c.result.event == 22);
  CHECK(c.result.states == 767);
  REQUIRE(c.result.event == c.observed.observations.size());
  CHECK(c.observed.observations[17].call == "ibv_poll_cq");   // the client's flushed receive
  for (const char* backlog : {"UNTIL_NEXT_FRAME", "READ"}) {
    INFO(backlog);
    cli::VerifyOptions o;
    o.file = "spec/16_rdma_server_client.qpspec";
    o.params = {"transport=IWARP", std::string("mpa_accept_backlog=") + backlog};
    o.format = cli::Format::kJson;
    std::ostringstream out, err;
    int rc = cli::run_verify(o, out, err);
    nlohmann::json j = nlohmann::json::parse(out.str());
    if (std::string(backlog) == "READ") {
      CHECK(rc == cli::code(cli::ExitCode::kHolds));
      CHECK(j["stats"]["states"] == 290);
      continue;
    }
    REQUIRE(rc == cli::code(cli::ExitCode::kViolated));
    CHECK(j["violation"]["property"] == "deadlock");
    CHECK(j["steps"].size() == 24);
    CHECK(j["stats"]["states"] == 44);
  }
}

// siw's peer close racing the data (docs/faults.md; lib/cm.qpspec iw_peer_close): seed 1 run 26 of the CI sample
// (2026-12-07), rdma_server/rdma_client on siw under netem delay 35 ms with 9 ms jitter. The server's Reply completed
// IBV_WC_SUCCESS and it disconnected 0.5 ms later; the client's receive came back flushed 50 ms later. With siw's
// RACES_DATA the run conforms (the FIN arrived with the Reply, the peer-close work flushed the QP first); with
// READS_FIRST (data placed before the close) it deviates at that flushed receive.
TEST_CASE("siw's peer close racing the data: the lost Reply conforms with RACES_DATA and deviates without it") {
  std::vector<verbs::CallLog> logs = pair("fault_delay_fin_with_data.siw");
  const lang::ParamOverrides siw{{"transport", "IWARP"}, {"iw_peer_close", "RACES_DATA"}};
  Checked with = check("spec/16_rdma_server_client.qpspec", logs, siw);
  CHECK(with.result.verdict == ConformResult::Verdict::kConforms);
  CHECK(with.result.event == with.observed.observations.size());
  CHECK(with.result.states == 65);
  Checked without = check("spec/16_rdma_server_client.qpspec", logs, {{"transport", "IWARP"}});
  REQUIRE(without.result.verdict == ConformResult::Verdict::kDeviates);
  CHECK(without.result.event == 24);
  REQUIRE(without.result.event < without.observed.observations.size());
  CHECK(without.observed.observations[24].call == "ibv_poll_cq");
}

TEST_CASE("plain verbs: ibv_rc_pingpong's QPs, named with --map, conform to spec 17; unnamed, the log is refused") {
  const std::string server = kLogs + "rc_pingpong.rxe0.server.jsonl", client = kLogs + "rc_pingpong.rxe0.client.jsonl";
  std::vector<verbs::CallLog> logs{verbs::read_call_log(server), verbs::read_call_log(client)};
  frontend::Spec spec;
  spec.read("spec/17_rc_pingpong.qpspec", lang::default_search_path({}));
  lang::Compiled c = spec.compile({});
  std::vector<std::string> ops = conform::replay_ops_used(*c.model);
  model::ModelSystem system(*c.model);
  auto conformance = [&](const std::vector<std::vector<std::string>>& map) {
    verbs::Observed o = verbs::observe(logs, ops, map);
    return conform::check_conformance(system, verbs::replay_vocabulary(), o.observations, o.ended);
  };
  ConformResult ok = conformance({{"PASSIVE[0]"}, {"ACTIVE[0]"}});
  CHECK(ok.verdict == ConformResult::Verdict::kConforms);
  CHECK(ok.event == 20);
  CHECK(ok.states == 36);
  // the two QPs the other way round: the "client" would move to RTR before the server wrote its address
  ConformResult swapped = conformance({{"ACTIVE[0]"}, {"PASSIVE[0]"}});
  CHECK(swapped.verdict == ConformResult::Verdict::kDeviates);
  CHECK(swapped.event == 6);
  // without a name the log is refused at the ibv_create_qp, naming the option
  try {
    verbs::observe(logs, ops);
    FAIL("no error");
  } catch (const verbs::CallLogError& e) {
    CHECK(std::string(e.what()).rfind(server + ":3: field 'qp': ", 0) == 0);
    CHECK(std::string(e.what()).find("--map") != std::string::npos);
  }
  // the command line: LOG by path or file name; bad entries are usage errors before anything is checked
  std::ostringstream out, err;
  cli::ConformOptions opt;
  opt.spec = "spec/17_rc_pingpong.qpspec";
  opt.logs = {server, client};
  opt.maps = {"rc_pingpong.rxe0.server.jsonl=PASSIVE", client + "=ACTIVE"};
  CHECK(cli::run_conform(opt, out, err) == cli::code(cli::ExitCode::kConforms));
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"rc_pingpong.rxe0.server.jsonl"},              // no '='
                                             {"nosuch.jsonl=PASSIVE"},                        // not a log given
                                             {"rc_pingpong.rxe0.server.jsonl=SERVER"},        // not an endpoint
                                             {"rc_pingpong.rxe0.server.jsonl=PASSIVE[x]"},
                                             {"rc_pingpong.rxe0.server.jsonl=PASSIVE", server + "=ACTIVE"}}) {
    INFO(bad[0]);
    opt.maps = bad;
    err.str("");
    CHECK(cli::run_conform(opt, out, err) == cli::code(cli::ExitCode::kUsage));
    CHECK(err.str().find("--map") != std::string::npos);
  }
  CHECK(verbs::endpoint_name("ACTIVE") == "ACTIVE[0]");
  CHECK(verbs::endpoint_name("PASSIVE[12]") == "PASSIVE[12]");
  CHECK(verbs::endpoint_name("PASSIVE[]").empty());
  CHECK(verbs::endpoint_name("ACTIVEX").empty());
}

TEST_CASE("found by a new user's attack: huge time limits, one log twice, lost records, another clock, C1 bytes") {
  std::string tmp = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  const std::string server = kLogs + "rdma_server_client.rxe0.server.jsonl";
  const std::string client = kLogs + "rdma_server_client.rxe0.client.jsonl";
  cli::ConformOptions opt;
  opt.spec = "spec/16_rdma_server_client.qpspec";
  opt.logs = {server, client};
  auto run = [&](std::string* text = nullptr, std::string* errors = nullptr) {
    std::ostringstream out, err;
    int rc = cli::run_conform(opt, out, err);
    if (text) *text = out.str();
    if (errors) *errors = err.str();
    return rc;
  };
  // 1e10 s used to overflow the deadline into the past: INCONCLUSIVE at once
  opt.time_limit = 1e10;
  CHECK(run() == cli::code(cli::ExitCode::kConforms));
  opt.time_limit = 1e300;
  CHECK(run() == cli::code(cli::ExitCode::kConforms));
  opt.time_limit = 0;
  // the same file twice, directly or through a link, is not two processes
  std::string link = tmp + "/same-log.jsonl";
  std::filesystem::remove(link);
  std::filesystem::create_symlink(std::filesystem::absolute(server), link);
  opt.logs = {server, link};
  std::string errors;
  CHECK(run(nullptr, &errors) == cli::code(cli::ExitCode::kUsage));
  CHECK(errors.find("is given twice") != std::string::npos);
  // a log whose trailer says records were lost decides nothing
  std::vector<std::string> lines = lines_of(slurp(client));
  std::string& trailer = lines.back();
  REQUIRE(trailer.find("\"lost\":0") != std::string::npos);
  trailer.replace(trailer.find("\"lost\":0"), 8, "\"lost\":3");
  std::string lossy = tmp + "/lossy.client.jsonl";
  std::ofstream(lossy) << joined(lines);
  opt.logs = {server, lossy};
  std::string text;
  CHECK(run(&text, &errors) == cli::code(cli::ExitCode::kConformInconclusive));
  INFO(errors);
  CHECK(text.find("the recorder lost 3 records: without them, the verdict would be CONFORMS at event 29") !=
        std::string::npos);
  // a header with another clock cannot be merged by time
  lines = lines_of(slurp(client));
  lines[0].replace(lines[0].find("CLOCK_MONOTONIC"), 15, "CLOCK_REALTIME");
  CHECK(err_of("realtime.jsonl", joined(lines)).rfind("realtime.jsonl:1: field 'clock': ", 0) == 0);
  // C1 controls and broken UTF-8 from a log never reach the terminal raw
  std::string c1 = tmp + "/c1.jsonl";
  std::ofstream(c1) << "\xc2\x9b" "31m \xff\n";
  opt.logs = {server, c1};
  CHECK(run(nullptr, &errors) == cli::code(cli::ExitCode::kUsage));
  CHECK(errors.find('\x9b') == std::string::npos);
  CHECK(errors.find('\xff') == std::string::npos);
}

TEST_CASE("an unsignaled send WR on a QP without sq_sig_all is noted: the library models signaled WRs only") {
  std::vector<std::string> lines = lines_of(slurp(kLogs + "rdma_server_client.rxe0.client.jsonl"));
  for (std::string& l : lines) {
    size_t p = l.find("\"sq_sig_all\":true");
    if (p != std::string::npos) l.replace(p, 17, "\"sq_sig_all\":false");
  }
  verbs::Observed o = verbs::observe({verbs::read_call_log(kLogs + "rdma_server_client.rxe0.server.jsonl"),
                                      verbs::parse_call_log("client.jsonl", joined(lines))},
                                     {"post_send", "poll_send"});
  REQUIRE(o.notes.size() == 1);
  CHECK(o.notes[0].find("1 send WRs were posted unsignaled") == 0);
}

TEST_CASE("qpcheck conform's exit codes") {
  std::ostringstream out, err;
  cli::ConformOptions opt;
  opt.spec = "spec/01_linux_today.qpspec";
  opt.logs = {kLogs + "synthetic_01_today.client.jsonl", kLogs + "synthetic_01_today.server.jsonl"};
  CHECK(cli::run_conform(opt, out, err) == cli::code(cli::ExitCode::kConforms));
  opt.logs = {kLogs + "synthetic_01_after_established.client.jsonl",
              kLogs + "synthetic_01_after_established.server.jsonl"};
  CHECK(cli::run_conform(opt, out, err) == cli::code(cli::ExitCode::kDeviates));
  CHECK(out.str().find("DEVIATES at event 2 ") != std::string::npos);
  // the picture: the spec's run, the recorded calls beside its steps, the deviation on the red line
  std::string svg = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") + "/conform.svg";
  opt.svg = svg;
  CHECK(cli::run_conform(opt, out, err) == cli::code(cli::ExitCode::kDeviates));
  std::string chart = slurp(svg);
  CHECK(chart.find("observed (call log)") != std::string::npos);
  CHECK(chart.find("event 1: synthetic_01_after_established.client.jsonl:11 rdma_create_qp") != std::string::npos);
  CHECK(chart.find("DEVIATES at event 2: synthetic_01_after_established.client.jsonl:12 rdma_connect") !=
        std::string::npos);
  opt.svg = opt.logs[0];  // never over an input
  CHECK(cli::run_conform(opt, out, err) == cli::code(cli::ExitCode::kUsage));
  opt.svg.clear();
  opt.max_states = 20;
  opt.logs = {kLogs + "synthetic_01_today.client.jsonl", kLogs + "synthetic_01_today.server.jsonl"};
  CHECK(cli::run_conform(opt, out, err) == cli::code(cli::ExitCode::kConformInconclusive));
  opt.max_states = 0;
  // a call name with an ESC from the log never reaches the terminal raw
  {
    std::string esc = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") + "/esc.jsonl";
    std::ofstream(esc) << "{\"qpcheck_record\":1,\"pid\":1}\n{\"seq\":1,\"t\":1,\"tid\":1,\"call\":\"x\\u001b[31m\","
                          "\"ret\":0}\n{\"end\":true,\"records\":1}\n";
    cli::ConformOptions e = opt;
    e.logs = {esc};
    e.max_states = 0;
    std::ostringstream eout, eerr;
    cli::run_conform(e, eout, eerr);
    CHECK(eout.str().find('\x1b') == std::string::npos);
    CHECK(eout.str().find("skipped calls") != std::string::npos);
  }
  opt.logs = {kLogs + "no-such.jsonl"};
  CHECK(cli::run_conform(opt, out, err) == cli::code(cli::ExitCode::kUsage));
  opt.logs = {"spec/01_linux_today.qpspec"};
  err.str("");
  CHECK(cli::run_conform(opt, out, err) == cli::code(cli::ExitCode::kUsage));
  CHECK(err.str().rfind("spec/01_linux_today.qpspec:1: not JSON", 0) == 0);
  opt.logs = {kLogs + "synthetic_01_today.client.jsonl"};
  opt.spec = "tests/bad/no-such.qpspec";
  CHECK(cli::run_conform(opt, out, err) == cli::code(cli::ExitCode::kUsage));
}

}  // namespace
}  // namespace qpcheck

namespace qpcheck {
namespace {

TEST_CASE("qpcheck walk: an earlier walk's schedules are removed, the time limit stops it with what was written") {
  std::string tmp = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  std::string dir = tmp + "/walks";
  std::filesystem::remove_all(dir);
  auto files = [&] {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.path().extension() == ".json";
    return n;
  };
  cli::WalkOptions opt;
  opt.spec = "spec/16_rdma_server_client.qpspec";
  opt.out = dir;
  opt.count = 20;
  std::ostringstream out, err;
  CHECK(cli::run_walk(opt, out, err) == cli::code(cli::ExitCode::kHolds));
  size_t first = files();
  CHECK(first == 20);
  std::ofstream(dir + "/notes.json") << "{}";  // not one of ours: kept
  opt.count = 2;
  out.str("");
  CHECK(cli::run_walk(opt, out, err) == cli::code(cli::ExitCode::kHolds));
  CHECK(out.str().find("removed 20 schedules of an earlier walk") != std::string::npos);
  CHECK(files() == 3);
  // every schedule of at most 60 steps is far more than a moment's work: the limit ends it, the files stay whole
  opt.all = true;
  opt.count = 0;
  opt.max_length = 60;
  opt.time_limit = 0.5;
  out.str("");
  CHECK(cli::run_walk(opt, out, err) == cli::code(cli::ExitCode::kInconclusive));
  CHECK(out.str().find("stopped early: the --time-limit ran out") != std::string::npos);
  CHECK(files() > 10);
  CHECK(nlohmann::json::parse(slurp(dir + "/walk-0001.json"))["steps"].size() > 0);
  // no schedule without a step
  opt.all = false;
  opt.max_length = 0;
  err.str("");
  CHECK(cli::run_walk(opt, out, err) == cli::code(cli::ExitCode::kUsage));
  CHECK(err.str().find("--max-length 0") != std::string::npos);
}

}  // namespace
}  // namespace qpcheck
