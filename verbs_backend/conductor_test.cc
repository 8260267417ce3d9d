// The conductor on hand-made traces against the in-process fake: plan validation, the two cursors over one
// endpoint's observed events, timeouts, and the verdict rules.
#include "verbs_backend/conductor.h"

#include <doctest/doctest.h>

#include "verbs_backend/fake_device.h"

namespace qpcheck::verbs {
namespace {

trace::Step step(int index, std::vector<trace::ReplayStep> ops, bool failed = false) {
  trace::Step s;
  s.index = index;
  s.actor = "p";
  s.failed = failed;
  s.calls.push_back(trace::Call{"proc", {}, "", std::move(ops)});
  return s;
}

trace::Trace make(std::string verdict, std::vector<trace::Step> steps) {
  trace::Trace t;
  t.spec = "hand-made";
  t.verdict = std::move(verdict);
  t.property = t.verdict == "violated" ? "p" : "";
  t.steps = std::move(steps);
  return t;
}

std::string plan_error(const trace::Trace& t) {
  try {
    make_plan(t);
  } catch (const PlanError& e) {
    return e.what();
  }
  return "";
}

Outcome run(const trace::Trace& t, FakeDevice::Transport transport = FakeDevice::Transport::kIB) {
  FakeDevice::Options o;
  o.transport = transport;
  FakeDevice dev(o);
  return replay(make_plan(t), dev, ConductorOptions{Millis(1)});
}

// Numbers the steps 1..n (one step per entry) so that a test lists only the operations.
trace::Trace make_ops(std::string verdict, std::vector<std::vector<trace::ReplayStep>> ops, bool last_fails = false) {
  std::vector<trace::Step> steps;
  for (size_t i = 0; i < ops.size(); ++i) {
    steps.push_back(step(static_cast<int>(i + 1), ops[i], last_fails && i + 1 == ops.size()));
  }
  return make(std::move(verdict), std::move(steps));
}

// Connection c brought up through the CM with v2 forms (rnr_retry 7, depths 1): both QPs RTS, both ESTABLISHED
// retrieved, `recvs` receives posted on each side before the connect/accept.
std::vector<std::vector<trace::ReplayStep>> up(const std::string& c, const std::string& recvs = "2") {
  std::string a = c.empty() ? "ACTIVE" : "ACTIVE[" + c + "]", p = c.empty() ? "PASSIVE" : "PASSIVE[" + c + "]";
  return {{{"create_qp", {a}}, {"post_recv", {a, recvs}}},
          {{"connect", {a, "7", "1", "1"}}},
          {{"get_cm_event", {p, "RDMA_CM_EVENT_CONNECT_REQUEST"}}},
          {{"create_qp", {p}}, {"post_recv", {p, recvs}}},
          {{"accept", {p, "7", "1", "1"}}},
          {{"get_cm_event", {a, "RDMA_CM_EVENT_ESTABLISHED"}}},
          {{"get_cm_event", {p, "RDMA_CM_EVENT_ESTABLISHED"}}}};
}

std::vector<std::vector<trace::ReplayStep>> operator+(std::vector<std::vector<trace::ReplayStep>> a,
                                                      const std::vector<std::vector<trace::ReplayStep>>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The last decided operation's record: "expected | observed".
std::string decided(const Outcome& o) { return o.expected + " | " + o.observed; }

// The handshake up to both sides connected, as the library's steps write it.
std::vector<trace::Step> connected(const std::string& rnr_retry = "7") {
  return {step(1, {{"create_qp", {"ACTIVE"}}}),
          step(2, {{"connect", {"ACTIVE", rnr_retry}}}),
          step(3, {{"get_cm_event", {"PASSIVE", "RDMA_CM_EVENT_CONNECT_REQUEST"}}}),
          step(4, {{"create_qp", {"PASSIVE"}}, {"post_recv", {"PASSIVE", "1"}}}),
          step(5, {{"accept", {"PASSIVE", "0"}}}),
          step(6, {{"expect_cm_event", {"ACTIVE", "RDMA_CM_EVENT_ESTABLISHED"}}})};
}

TEST_CASE("make_plan names the step, the call and the bad value") {
  CHECK(plan_error(make("violated", {step(1, {{"create_qp", {"MIDDLE"}}})})) ==
        "step 1 (p), call proc: create_qp argument 1: expected an endpoint (ACTIVE, PASSIVE, ACTIVE[c] or "
        "PASSIVE[c]), found \"MIDDLE\"");
  CHECK(plan_error(make("violated", {step(1, {{"create_qp", {"ACTIVE[x]"}}})})) ==
        "step 1 (p), call proc: create_qp argument 1: expected an endpoint (ACTIVE, PASSIVE, ACTIVE[c] or "
        "PASSIVE[c]), found \"ACTIVE[x]\"");
  CHECK(plan_error(make("violated", {step(1, {{"modify_qp", {"ACTIVE", "RTS"}}})})) ==
        "step 1 (p), call proc: modify_qp argument 2: not an IBV_QPS_* state: \"RTS\"");
  CHECK(plan_error(make("violated", {step(1, {{"connect", {"ACTIVE", "7", "256", "1"}}})})) ==
        "step 1 (p), call proc: connect argument 3: expected an integer in 0..255, found \"256\"");
  CHECK(plan_error(make("violated", {step(1, {{"post_recv", {"ACTIVE", "0"}}})})) ==
        "step 1 (p), call proc: post_recv argument 2: expected an integer in 1..64, found \"0\"");
  CHECK(plan_error(make("violated", {step(1, {{"connect", {"ACTIVE", "9"}}})})) ==
        "step 1 (p), call proc: connect argument 2: expected an integer in 0..7, found \"9\"");
  CHECK(plan_error(make("violated", {step(1, {{"get_cm_event", {"ACTIVE", "ESTABLISHED"}}})})) ==
        "step 1 (p), call proc: get_cm_event argument 2: not an RDMA_CM_EVENT_* name: \"ESTABLISHED\"");
  CHECK(plan_error(make("violated", {step(1, {{"expect_send_wc", {"ACTIVE", "NO_COMPLETION"}}})})) ==
        "step 1 (p), call proc: expect_send_wc argument 2: not an IBV_WC_* status: \"NO_COMPLETION\"");
  CHECK(plan_error(make("violated", {step(1, {{"post_send", {}}})})) ==
        "step 1 (p), call proc: replay operation post_send takes 1 or 2 or 3 arguments, found 0");
  CHECK(plan_error(make("inconclusive", {})) == "the trace's verdict is \"inconclusive\": there is no schedule to replay");
  CHECK(plan_error(make("holds", {})).rfind("the trace has no steps", 0) == 0);
}

TEST_CASE("endpoints name a side and a connection") {
  CHECK(parse_endpoint("ACTIVE") == Endpoint{Ep::kActive, 0});
  CHECK(parse_endpoint("PASSIVE[3]") == Endpoint{Ep::kPassive, 3});
  CHECK(parse_endpoint("PASSIVE[03]") == Endpoint{Ep::kPassive, 3});
  CHECK(!parse_endpoint("PASSIVE[]"));
  CHECK(!parse_endpoint("PASSIVE[-1]"));
  CHECK(!parse_endpoint("PASSIVE[100]"));
  CHECK(!parse_endpoint("ACTIVEX"));
  CHECK(Endpoint{Ep::kActive, 2}.text() == "ACTIVE[2]");
  CHECK(Endpoint{Ep::kActive, 0}.text() == "ACTIVE");
  CHECK(parse_endpoint("ACTIVE[0]")->text() == "ACTIVE[0]");  // as the trace wrote it
  CHECK(parse_endpoint("ACTIVE[0]") == parse_endpoint("ACTIVE"));
}

TEST_CASE("an observation and the ULP's retrieval read one event list through two cursors") {
  std::vector<trace::Step> s = connected();
  // the ULP retrieves ESTABLISHED after the fabric step saw it; then the passive side gets its own (RTU)
  s.push_back(step(7, {{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_ESTABLISHED"}}}));
  s.push_back(step(8, {{"get_cm_event", {"PASSIVE", "RDMA_CM_EVENT_ESTABLISHED"}}}));
  Outcome o = run(make("holds", s));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.log.size() == 9);
}

TEST_CASE("a prediction the device does not meet within the timeout diverges, saying how long it waited") {
  std::vector<trace::Step> s = connected();
  s.push_back(step(7, {{"expect_recv", {"ACTIVE"}}}));  // nothing was sent
  s.push_back(step(8, {{"post_send", {"ACTIVE"}}}));
  Outcome o = run(make("violated", s));
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 7);
  CHECK(o.observed == "nothing within 1 ms");
}

TEST_CASE("the violating step decides: met -> REPRODUCED, another outcome there -> NOT REPRODUCED") {
  std::vector<trace::Step> s = connected("0");  // the passive QP's RNR retry limit comes from connect's conn_param
  s.push_back(step(7, {{"post_send", {"PASSIVE"}}}));  // no receive on the active side
  s.push_back(step(8, {{"expect_send_wc", {"PASSIVE", "IBV_WC_RNR_RETRY_EXC_ERR"}}}));
  CHECK(run(make("violated", s)).verdict == Verdict::kReproduced);
  Outcome iw = run(make("violated", s), FakeDevice::Transport::kIWARP);
  CHECK(iw.verdict == Verdict::kNotReproduced);
  CHECK(iw.step == 8);
  CHECK(iw.observed == "IBV_WC_SUCCESS");
}

TEST_CASE("a PASSIVE create_qp before any CONNECT_REQUEST is a failed call: DIVERGED at step 1") {
  Outcome o = run(make("violated", {step(1, {{"create_qp", {"PASSIVE"}}}), step(2, {{"post_send", {"PASSIVE"}}})}));
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 1);
  CHECK(o.observed == "rdma_create_qp: Invalid argument (errno 22): no cm_id yet (PASSIVE: before its CONNECT_REQUEST)");
}

TEST_CASE("RDMA WRITE and READ complete at the sender with their opcodes; a wrong opcode diverges") {
  auto ops = up("") + std::vector<std::vector<trace::ReplayStep>>{
                          {{"post_send", {"ACTIVE", "IBV_WR_RDMA_WRITE"}}},
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_RDMA_WRITE"}}},
                          {{"post_send", {"PASSIVE", "IBV_WR_RDMA_READ"}}},
                          {{"expect_send_wc", {"PASSIVE", "IBV_WC_SUCCESS", "IBV_WC_RDMA_READ"}}},
                          {{"poll_send", {"PASSIVE", "IBV_WC_SUCCESS", "IBV_WC_RDMA_READ"}}},
                          {{"poll_send", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_RDMA_WRITE"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.log.size() == 15);
  CHECK(o.log[10].observed == "IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE");
  ops[8][0].args[2] = "IBV_WC_SEND";  // the model claims a Send completed
  Outcome d = run(make_ops("holds", ops));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 9);
  CHECK(decided(d) == "IBV_WC_SUCCESS, IBV_WC_SEND | IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE");
}

TEST_CASE("two connections on one listener share an SRQ: each CONNECT_REQUEST reaches its PASSIVE[c]") {
  std::vector<std::vector<trace::ReplayStep>> ops = {
      {{"create_srq", {"0"}}, {"post_srq_recv", {"0", "2"}}},
      {{"create_qp", {"ACTIVE[1]"}}, {"connect", {"ACTIVE[1]", "7", "1", "1"}}},
      {{"create_qp", {"ACTIVE[0]"}}, {"connect", {"ACTIVE[0]", "7", "1", "1"}}},
      {{"get_cm_event", {"PASSIVE[0]", "RDMA_CM_EVENT_CONNECT_REQUEST"}}},
      {{"create_qp_srq", {"PASSIVE[0]", "0"}}, {"accept", {"PASSIVE[0]", "7", "1", "1"}}},
      {{"get_cm_event", {"PASSIVE[1]", "RDMA_CM_EVENT_CONNECT_REQUEST"}}},
      {{"create_qp_srq", {"PASSIVE[1]", "0"}}, {"accept", {"PASSIVE[1]", "7", "1", "1"}}},
      {{"get_cm_event", {"ACTIVE[0]", "RDMA_CM_EVENT_ESTABLISHED"}}, {"post_send", {"ACTIVE[0]", "IBV_WR_SEND"}}},
      {{"get_cm_event", {"ACTIVE[1]", "RDMA_CM_EVENT_ESTABLISHED"}}, {"post_send", {"ACTIVE[1]", "IBV_WR_SEND"}}},
      {{"expect_srq_recv", {"0", "PASSIVE[1]"}}, {"expect_srq_recv", {"0", "PASSIVE[0]"}}},
      {{"expect_send_wc", {"ACTIVE[0]", "IBV_WC_SUCCESS", "IBV_WC_SEND"}}},
      {{"expect_send_wc", {"ACTIVE[1]", "IBV_WC_SUCCESS", "IBV_WC_SEND"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.log.size() == 20);
  CHECK(o.log[16].op == "expect_srq_recv(0, PASSIVE[1])");
  CHECK(o.log[16].observed == "IBV_WC_SUCCESS (SRQ 0)");
  // a receive posted on a QP of an SRQ is refused; the model calling it legal is a divergence
  ops[4].push_back({"post_recv", {"PASSIVE[0]", "1"}});
  Outcome d = run(make_ops("holds", ops));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 5);
  CHECK(d.observed == "ibv_post_recv: Invalid argument (errno 22): the QP receives from an SRQ");
}

TEST_CASE("a plain-verbs connection (rc_pingpong order) carries a Send; an illegal modify is the model's fail") {
  std::vector<std::vector<trace::ReplayStep>> ops = {
      {{"ibv_create_qp", {"ACTIVE"}}, {"ibv_create_qp", {"PASSIVE"}}},
      {{"modify_qp", {"ACTIVE", "IBV_QPS_INIT"}}, {"modify_qp", {"PASSIVE", "IBV_QPS_INIT"}}},
      {{"post_recv", {"PASSIVE", "1"}}},
      {{"modify_qp", {"PASSIVE", "IBV_QPS_RTR"}}, {"modify_qp", {"ACTIVE", "IBV_QPS_RTR"}}},
      {{"modify_qp", {"ACTIVE", "IBV_QPS_RTS"}}},
      {{"post_send", {"ACTIVE", "IBV_WR_SEND"}}},
      {{"expect_recv", {"PASSIVE", "IBV_WC_SUCCESS"}}},
      {{"poll_send", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_SEND"}}}};
  CHECK(run(make_ops("holds", ops)).verdict == Verdict::kNotReproduced);
  // iWARP: siw moves a QP to RTS only through the iWARP CM
  Outcome iw = run(make_ops("holds", ops), FakeDevice::Transport::kIWARP);
  CHECK(iw.verdict == Verdict::kDiverged);
  CHECK(iw.step == 5);
  CHECK(iw.observed == "ibv_modify_qp: Invalid argument (errno 22): siw: RTS needs the iWARP CM's socket "
                       "(siw_qp_nextstate_from_idle)");
  // RESET -> RTS is not in qp_state_table: a violation the device reproduces by refusing it
  std::vector<std::vector<trace::ReplayStep>> bad = {{{"ibv_create_qp", {"ACTIVE"}}},
                                                     {{"modify_qp", {"ACTIVE", "IBV_QPS_RTS"}}}};
  Outcome r = run(make_ops("violated", bad, true));
  CHECK(r.verdict == Verdict::kReproduced);
  CHECK(r.step == 2);
  CHECK(r.observed == "ibv_modify_qp: Invalid argument (errno 22): IBV_QPS_RESET -> IBV_QPS_RTS is not in "
                      "qp_state_table");
  // RTR before the peer has a QP: its number is not known, the call fails where the model allows it
  std::vector<std::vector<trace::ReplayStep>> early = {{{"ibv_create_qp", {"ACTIVE"}}},
                                                       {{"modify_qp", {"ACTIVE", "IBV_QPS_INIT"}}},
                                                       {{"modify_qp", {"ACTIVE", "IBV_QPS_RTR"}}}};
  Outcome e = run(make_ops("holds", early));
  CHECK(e.verdict == Verdict::kDiverged);
  CHECK(e.observed == "ibv_modify_qp: Invalid argument (errno 22): RTR needs the peer's QP number, and PASSIVE has "
                      "no QP yet");
}

TEST_CASE("to ERR every posted WR is flushed in order; to RESET they are discarded without completions") {
  auto ops = up("", "2") + std::vector<std::vector<trace::ReplayStep>>{
                               {{"disconnect", {"ACTIVE"}}},
                               {{"expect_recv", {"ACTIVE", "IBV_WC_WR_FLUSH_ERR"}}},
                               {{"poll_recv", {"ACTIVE", "IBV_WC_WR_FLUSH_ERR"}}, {"poll_recv", {"ACTIVE", "IBV_WC_WR_FLUSH_ERR"}}},
                               {{"post_send", {"ACTIVE", "IBV_WR_RDMA_READ"}}},
                               {{"poll_send", {"ACTIVE", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_RDMA_READ"}}},
                               {{"get_cm_event", {"PASSIVE", "RDMA_CM_EVENT_DISCONNECTED"}}},
                               {{"disconnect", {"PASSIVE"}}},  // IB: the DREP is the peer's rdma_disconnect
                               {{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_DISCONNECTED"}}},
                               {{"modify_qp", {"PASSIVE", "IBV_QPS_RESET"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.reason == "the device followed the whole schedule of a spec that holds, as predicted");
  // receives posted in INIT and the QP moved to RESET: discarded, the CQ stays silent
  Outcome r = run(make_ops("holds", {{{"ibv_create_qp", {"ACTIVE"}}},
                                     {{"modify_qp", {"ACTIVE", "IBV_QPS_INIT"}}},
                                     {{"post_recv", {"ACTIVE", "2"}}},
                                     {{"modify_qp", {"ACTIVE", "IBV_QPS_RESET"}}},
                                     {{"expect_no_completion", {"ACTIVE"}}}}));
  CHECK(r.verdict == Verdict::kNotReproduced);
  CHECK(r.log.back().op == "expect_no_completion(ACTIVE)");
  CHECK(r.log.back().observed == "no completion within 1 ms");
  // silence where the device has flushes the trace did not read: diverges, naming the first
  auto loud = up("", "2") + std::vector<std::vector<trace::ReplayStep>>{{{"disconnect", {"ACTIVE"}}},
                                                                         {{"expect_no_completion", {"ACTIVE"}}}};
  Outcome l = run(make_ops("holds", loud));
  CHECK(l.verdict == Verdict::kDiverged);
  CHECK(l.step == 9);
  CHECK(decided(l) == "no completion within 1 ms | a receive completion IBV_WC_WR_FLUSH_ERR");
  // the first library's expect_recv(e) means an arrival: two flushes are skipped and reported beside "nothing"
  auto old = up("", "2") + std::vector<std::vector<trace::ReplayStep>>{{{"disconnect", {"ACTIVE"}}},
                                                                        {{"expect_recv", {"ACTIVE"}}}};
  Outcome f = run(make_ops("holds", old));
  CHECK(f.verdict == Verdict::kDiverged);
  CHECK(f.step == 9);
  CHECK(f.observed == "nothing within 1 ms (2 receive WRs completed with IBV_WC_WR_FLUSH_ERR)");
}

TEST_CASE("a reconnect: ACTIVE[0] torn down and destroyed, ACTIVE[1] connects on a new cm_id and QP") {
  auto ops = up("0") + std::vector<std::vector<trace::ReplayStep>>{
                           {{"disconnect", {"ACTIVE[0]"}}},
                           {{"get_cm_event", {"PASSIVE[0]", "RDMA_CM_EVENT_DISCONNECTED"}}, {"disconnect", {"PASSIVE[0]"}}},
                           {{"get_cm_event", {"ACTIVE[0]", "RDMA_CM_EVENT_DISCONNECTED"}}},
                           {{"destroy_qp", {"ACTIVE[0]"}}, {"destroy_id", {"ACTIVE[0]"}}},
                           {{"destroy_qp", {"PASSIVE[0]"}}, {"destroy_id", {"PASSIVE[0]"}}}} +
             up("1") + std::vector<std::vector<trace::ReplayStep>>{
                           {{"post_send", {"PASSIVE[1]", "IBV_WR_SEND"}}},
                           {{"expect_recv", {"ACTIVE[1]", "IBV_WC_SUCCESS"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.log.size() == 28);
  // an event retrieved on a destroyed cm_id is a device error at that step
  ops.push_back({{"get_cm_event", {"ACTIVE[0]", "RDMA_CM_EVENT_TIMEWAIT_EXIT"}}});
  Outcome d = run(make_ops("holds", ops));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 22);
  CHECK(d.observed == "rdma_get_cm_event: Invalid argument (errno 22): ACTIVE[0]'s cm_id was destroyed");
}

TEST_CASE("explicit CM setup: resolution events are the endpoint's; a connect before listen is REJECTED") {
  std::vector<std::vector<trace::ReplayStep>> ops = {
      {{"create_id", {"ACTIVE"}}, {"resolve_addr", {"ACTIVE"}}},
      {{"expect_cm_event", {"ACTIVE", "RDMA_CM_EVENT_ADDR_RESOLVED"}}},
      {{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_ADDR_RESOLVED"}}, {"resolve_route", {"ACTIVE"}}},
      {{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_ROUTE_RESOLVED"}}},
      {{"connect", {"ACTIVE", "7", "1", "1"}}},
      {{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_REJECTED"}}},
      {{"listen", {}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.log[7].observed == "RDMA_CM_EVENT_REJECTED (status 8)");
  // route before address: the call fails where the model allows it
  std::swap(ops[0][1], ops[2][1]);
  Outcome d = run(make_ops("holds", ops));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 1);
  CHECK(d.observed == "rdma_resolve_route: Invalid argument (errno 22): ACTIVE: address not resolved");
}

TEST_CASE("CM private data travels on REQ, REP and REJ; get_cm_event(e, ev, d) compares its first byte exactly") {
  auto exchange = [](const std::string& req, const std::string& want_req, const std::string& rep,
                     const std::string& want_rep) {
    return make_ops("holds", {{{"create_qp", {"ACTIVE"}}},
                              {{"connect", {"ACTIVE", "7", "1", "1", req}}},
                              {{"get_cm_event", {"PASSIVE", "RDMA_CM_EVENT_CONNECT_REQUEST", want_req}}},
                              {{"create_qp", {"PASSIVE"}}},
                              {{"accept", {"PASSIVE", "0", "1", "1", rep}}},
                              {{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_ESTABLISHED", want_rep}}}});
  };
  Outcome o = run(exchange("1", "1", "2", "2"));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.log[2].observed == "RDMA_CM_EVENT_CONNECT_REQUEST (data 1)");
  // the REP's data differs from the model's: the active side's ESTABLISHED diverges, though its name matches
  Outcome d = run(exchange("1", "1", "3", "2"));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 6);
  CHECK(d.expected == "RDMA_CM_EVENT_ESTABLISHED (data 2)");
  CHECK(d.observed == "RDMA_CM_EVENT_ESTABLISHED (data 3)");
  // data where the model says none (0) diverges too; the 2-argument get_cm_event does not look at it
  CHECK(run(exchange("1", "0", "2", "2")).verdict == Verdict::kDiverged);
  auto reject = [](const std::string& expect_status, FakeDevice::Transport t) {
    return run(make_ops("holds", {{{"create_qp", {"ACTIVE"}}},
                                  {{"connect", {"ACTIVE", "7", "1", "1", "2"}}},
                                  {{"get_cm_event", {"PASSIVE", "RDMA_CM_EVENT_CONNECT_REQUEST"}}},
                                  {{"reject", {"PASSIVE", "1"}}},
                                  {{"expect_cm_event", {"ACTIVE", "RDMA_CM_EVENT_REJECTED", expect_status}}},
                                  {{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_REJECTED", "1"}}}}),
               t);
  };
  Outcome ib = reject("IB_CM_REJ_CONSUMER_DEFINED", FakeDevice::Transport::kIB);
  CHECK(ib.verdict == Verdict::kNotReproduced);
  CHECK(ib.log[4].observed == "RDMA_CM_EVENT_REJECTED (status 28) (data 1)");
  CHECK(reject("ECONNRESET", FakeDevice::Transport::kIWARP).verdict == Verdict::kNotReproduced);
  // the status is compared: 28 is not siw's -104
  Outcome iw = reject("IB_CM_REJ_CONSUMER_DEFINED", FakeDevice::Transport::kIWARP);
  CHECK(iw.verdict == Verdict::kDiverged);
  CHECK(iw.step == 5);
  CHECK(iw.expected == "RDMA_CM_EVENT_REJECTED (status 28)");
  // a status name outside the vocabulary is a plan error naming it
  CHECK(plan_error(make_ops("holds", {{{"expect_cm_event", {"ACTIVE", "RDMA_CM_EVENT_REJECTED", "EBUSY"}}}}))
            .find("EBUSY") != std::string::npos);
}

TEST_CASE("private_data_len: IB's CM carries 56 / 196 / 148 bytes on REQ / REP / REJ; iWARP takes more") {
  auto connect = [](const std::string& len, FakeDevice::Transport t, bool last_fails) {
    std::vector<std::vector<trace::ReplayStep>> ops = {
        {{"create_qp", {"ACTIVE"}}},
        {{"connect", {"ACTIVE", "7", "1", "1", "1", len}}},
        {{"get_cm_event", {"PASSIVE", "RDMA_CM_EVENT_CONNECT_REQUEST", "1"}}}};
    if (last_fails) ops.pop_back();  // the violation is the connect itself
    return run(make_ops(last_fails ? "violated" : "holds", ops, last_fails), t);
  };
  CHECK(connect("56", FakeDevice::Transport::kIB, false).verdict == Verdict::kNotReproduced);
  // one byte more: rdma_connect fails (cm_validate_req_param), which reproduces the model's no_illegal_cm_call
  Outcome req = connect("57", FakeDevice::Transport::kIB, true);
  CHECK(req.verdict == Verdict::kReproduced);
  CHECK(req.step == 2);
  CHECK(req.observed == "rdma_connect: Invalid argument (errno 22): 57 bytes of private data on a REQ");
  // on iWARP the same call works: a trace that calls it illegal is not reproduced there
  CHECK(connect("57", FakeDevice::Transport::kIWARP, true).verdict == Verdict::kNotReproduced);
  CHECK(connect("255", FakeDevice::Transport::kIWARP, false).verdict == Verdict::kNotReproduced);
  auto answer = [](const std::string& op, const std::string& len, bool last_fails) {
    std::vector<trace::ReplayStep> last =
        op == "accept" ? std::vector<trace::ReplayStep>{{"accept", {"PASSIVE", "0", "1", "1", "2", len}}}
                       : std::vector<trace::ReplayStep>{{"reject", {"PASSIVE", "2", len}}};
    std::vector<std::vector<trace::ReplayStep>> ops = {
        {{"create_qp", {"ACTIVE"}}},
        {{"connect", {"ACTIVE", "7", "1", "1", "1"}}},
        {{"get_cm_event", {"PASSIVE", "RDMA_CM_EVENT_CONNECT_REQUEST", "1"}}},
        {{"create_qp", {"PASSIVE"}}},
        last};
    // the answer's data reaches the active side
    if (!last_fails && op == "reject") ops.push_back({{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_REJECTED", "2"}}});
    if (!last_fails && op == "accept") ops.push_back({{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_ESTABLISHED", "2"}}});
    return run(make_ops(last_fails ? "violated" : "holds", ops, last_fails));
  };
  CHECK(answer("accept", "196", false).verdict == Verdict::kNotReproduced);
  CHECK(answer("accept", "197", true).verdict == Verdict::kReproduced);
  CHECK(answer("reject", "148", false).verdict == Verdict::kNotReproduced);
  Outcome rej = answer("reject", "149", true);
  CHECK(rej.verdict == Verdict::kReproduced);
  CHECK(rej.observed == "rdma_reject: Invalid argument (errno 22): 149 bytes of private data on a REJ");
  // a length outside 0..255 is a plan error
  CHECK(plan_error(make_ops("holds", {{{"reject", {"PASSIVE", "1", "256"}}}})).find("256") != std::string::npos);
}

TEST_CASE("a call the model refuses must fail on the device: siw refuses a connect with no listener, rxe does not") {
  // rdma_connect before the listener exists: the library's connect_refused on iWARP (ECONNREFUSED); on IB the REQ
  // is answered with a REJ instead, so a trace that marks the call refused diverges there.
  std::vector<std::vector<trace::ReplayStep>> ops = {
      {{"create_id", {"ACTIVE"}}, {"resolve_addr", {"ACTIVE"}}},
      {{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_ADDR_RESOLVED"}}, {"resolve_route", {"ACTIVE"}}},
      {{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_ROUTE_RESOLVED"}}, {"create_qp", {"ACTIVE"}}},
      {{"connect", {"ACTIVE", "7", "1", "1"}, "ECONNREFUSED: no listener"}},
      {{"listen", {}}}};
  Outcome iw = run(make_ops("holds", ops), FakeDevice::Transport::kIWARP);
  CHECK(iw.verdict == Verdict::kNotReproduced);
  REQUIRE(iw.log.size() >= 7);
  CHECK(iw.log[6].op == "connect(ACTIVE, 7, 1, 1)");
  CHECK(iw.log[6].expected == "an error (ECONNREFUSED: no listener)");
  CHECK(iw.log[6].match);
  Outcome ib = run(make_ops("holds", ops), FakeDevice::Transport::kIB);
  CHECK(ib.verdict == Verdict::kDiverged);
  CHECK(ib.step == 4);
  CHECK(decided(ib) == "an error (ECONNREFUSED: no listener) | ok");
  // unmarked, the same call fails on siw where the model lets it pass
  ops[3][0].refused.clear();
  Outcome plain = run(make_ops("holds", ops), FakeDevice::Transport::kIWARP);
  CHECK(plain.verdict == Verdict::kDiverged);
  CHECK(plain.step == 4);
}

TEST_CASE("plain-verbs attributes travel as modify_qp's arguments; a bad value is a plan error") {
  Plan p = make_plan(make_ops("holds", {{{"ibv_create_qp", {"ACTIVE"}},
                                         {"modify_qp", {"ACTIVE", "IBV_QPS_RTS", "2", "3", "6", "4"}}}}));
  const PlannedOp& m = p.steps.at(0).ops.at(1);
  CHECK(m.numbers == std::vector<int>{2, 3, 6, 4});
  CHECK(m.text() == "modify_qp(ACTIVE, IBV_QPS_RTS, 2, 3, 6, 4)");
  CHECK(plan_error(make_ops("holds", {{{"modify_qp", {"ACTIVE", "IBV_QPS_RTS", "1", "8", "7", "1"}}}})) ==
        "step 1 (p), call proc: modify_qp argument 4: expected an integer in 0..7, found \"8\"");
}

using Ops = std::vector<std::vector<trace::ReplayStep>>;

TEST_CASE("memory regions: a WRITE to the peer's registered buffer succeeds, after its dereg_mr it is REM_ACCESS_ERR") {
  // up("") is steps 1-7 (9 operations); these are steps 8-14
  auto ops = up("") + Ops{{{"reg_mr", {"PASSIVE", "0"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_RDMA_WRITE", "0"}}},
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_RDMA_WRITE"}}},
                          {{"dereg_mr", {"PASSIVE", "0"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_RDMA_WRITE", "0"}}},  // the stale rkey
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_RDMA_WRITE"}}},
                          {{"expect_recv", {"PASSIVE", "IBV_WC_WR_FLUSH_ERR"}}}};  // both QPs went to ERR
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  REQUIRE(o.log.size() == 16);
  CHECK(o.log[9].op == "reg_mr(PASSIVE, 0)");
  CHECK(o.log[10].op == "post_send(ACTIVE, IBV_WR_RDMA_WRITE, 0)");
  CHECK(o.log[10].observed == "ok");
  CHECK(o.log[11].observed == "IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE");
  CHECK(o.log[14].observed == "IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE");
  // a model that lets the WRITE through after the dereg_mr diverges there
  ops[12][0].args[1] = "IBV_WC_SUCCESS";
  Outcome d = run(make_ops("holds", ops));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 13);
  CHECK(decided(d) == "IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE | IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE");
  // without the reg_mr the buffer was never registered: rkey 0, said in the log, and the first WRITE fails
  auto never = ops;
  never[7].clear();
  Outcome n = run(make_ops("holds", never));
  CHECK(n.verdict == Verdict::kDiverged);
  CHECK(n.step == 10);
  CHECK(n.log[9].observed == "ok (PASSIVE's buffer 0 was never registered: rkey 0)");
  CHECK(decided(n) == "IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE | IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE");
}

TEST_CASE("memory regions: reg_mr_local and LOCAL_INV deny remote access; a buffer is registered at most once") {
  auto ops = up("") + Ops{{{"reg_mr_local", {"PASSIVE", "2"}}, {"reg_mr", {"PASSIVE", "1"}}},
                          {{"post_send", {"PASSIVE", "IBV_WR_LOCAL_INV", "1"}}},
                          {{"expect_send_wc", {"PASSIVE", "IBV_WC_SUCCESS", "IBV_WC_LOCAL_INV"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_RDMA_READ", "1"}}},
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_RDMA_READ"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.log.back().observed == "IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ");
  // a READ of the buffer registered without remote access fails the same way
  auto local = ops;
  local[8].clear();
  local[9].clear();
  local[10][0].args[2] = "2";
  Outcome l = run(make_ops("holds", local));
  CHECK(l.verdict == Verdict::kNotReproduced);
  CHECK(l.log.back().observed == "IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ");
  // the model never registers a registered buffer: the conductor refuses to, and the replay stops there
  auto twice = up("") + Ops{{{"reg_mr", {"PASSIVE", "0"}}}, {{"reg_mr_local", {"PASSIVE", "0"}}}};
  Outcome t = run(make_ops("holds", twice));
  CHECK(t.verdict == Verdict::kDiverged);
  CHECK(t.step == 9);
  CHECK(t.observed == "not called: PASSIVE's buffer 0 is registered already");
  CHECK(t.reason.rfind("conductor error: ", 0) == 0);
  // after a dereg_mr it may be registered again: a new rkey, the WRITE succeeds
  auto again = up("") + Ops{{{"reg_mr", {"PASSIVE", "0"}}, {"dereg_mr", {"PASSIVE", "0"}},
                             {"reg_mr", {"PASSIVE", "0"}}},
                            {{"post_send", {"ACTIVE", "IBV_WR_RDMA_WRITE", "0"}}},
                            {{"expect_send_wc", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_RDMA_WRITE"}}}};
  CHECK(run(make_ops("holds", again)).verdict == Verdict::kNotReproduced);
}

TEST_CASE("SEND_WITH_INV: the receive carries IBV_WC_WITH_INV of the MR; only the 3-argument expect_recv matches it") {
  auto ops = up("") + Ops{{{"reg_mr", {"PASSIVE", "0"}}, {"reg_mr", {"PASSIVE", "1"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_SEND_WITH_INV", "0"}}},
                          {{"expect_recv", {"PASSIVE", "IBV_WC_SUCCESS", "0"}}},
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_SEND"}}},
                          {{"poll_recv", {"PASSIVE", "IBV_WC_SUCCESS", "0"}}},
                          // the invalidated MR stays registered but denies remote access; MR 1 still allows it
                          {{"post_send", {"ACTIVE", "IBV_WR_RDMA_WRITE", "1"}}},
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_RDMA_WRITE"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_RDMA_WRITE", "0"}}},
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_RDMA_WRITE"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  REQUIRE(o.log.size() == 19);
  CHECK(o.log[12].op == "expect_recv(PASSIVE, IBV_WC_SUCCESS, 0)");
  CHECK(o.log[12].expected == "IBV_WC_SUCCESS, IBV_WC_WITH_INV of MR 0");
  CHECK(o.log[12].observed == "IBV_WC_SUCCESS, IBV_WC_WITH_INV of MR 0");
  // the same run read by the 2-argument form (which predicts no invalidation) diverges there
  auto two = ops;
  two[9][0].args.pop_back();
  Outcome d = run(make_ops("holds", two));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 10);
  CHECK(decided(d) == "IBV_WC_SUCCESS | IBV_WC_SUCCESS, IBV_WC_WITH_INV of MR 0");
  // ... and so does the first library's form
  two[9][0].args.pop_back();
  CHECK(decided(run(make_ops("holds", two))) == "IBV_WC_SUCCESS | IBV_WC_SUCCESS, IBV_WC_WITH_INV of MR 0");
  // the 3-argument form naming another MR diverges, and so does a plain Send where it predicts an invalidation
  auto other = ops;
  other[9][0].args[2] = "1";
  CHECK(decided(run(make_ops("holds", other))) ==
        "IBV_WC_SUCCESS, IBV_WC_WITH_INV of MR 1 | IBV_WC_SUCCESS, IBV_WC_WITH_INV of MR 0");
  auto plain = ops;
  plain[8][0] = {"post_send", {"ACTIVE", "IBV_WR_SEND"}};
  CHECK(decided(run(make_ops("holds", plain))) == "IBV_WC_SUCCESS, IBV_WC_WITH_INV of MR 0 | IBV_WC_SUCCESS");
  // expect_srq_recv does not compare IBV_WC_WITH_INV: a SEND_WITH_INV to a QP of an SRQ matches it
  Outcome q = run(make_ops("holds", {{{"create_srq", {"0"}}, {"post_srq_recv", {"0", "1"}}},
                                     {{"create_qp", {"ACTIVE"}}, {"connect", {"ACTIVE", "7", "1", "1"}}},
                                     {{"get_cm_event", {"PASSIVE", "RDMA_CM_EVENT_CONNECT_REQUEST"}}},
                                     {{"create_qp_srq", {"PASSIVE", "0"}}, {"accept", {"PASSIVE", "7", "1", "1"}}},
                                     {{"get_cm_event", {"ACTIVE", "RDMA_CM_EVENT_ESTABLISHED"}}},
                                     {{"reg_mr", {"PASSIVE", "0"}},
                                      {"post_send", {"ACTIVE", "IBV_WR_SEND_WITH_INV", "0"}}},
                                     {{"expect_srq_recv", {"0", "PASSIVE"}}}}));
  CHECK(q.verdict == Verdict::kNotReproduced);
  CHECK(q.log.back().observed == "IBV_WC_SUCCESS (SRQ 0)");
  // an invalidation names an rkey: the 2-argument post_send cannot post one
  CHECK(plan_error(make_ops("holds", {{{"post_send", {"ACTIVE", "IBV_WR_SEND_WITH_INV"}}}})) ==
        "step 1 (p), call proc: post_send of IBV_WR_SEND_WITH_INV names a memory region: use "
        "post_send(ENDPOINT, IBV_WR_SEND_WITH_INV, MR)");
  CHECK(plan_error(make_ops("holds", {{{"reg_mr", {"ACTIVE", "16"}}}})) ==
        "step 1 (p), call proc: reg_mr argument 2: expected an integer in 0..15, found \"16\"");
}

TEST_CASE("an unsignaled WR completes only on error: an unsignaled Send and a signaled one give one completion") {
  auto ops = up("") + Ops{{{"post_send_unsignaled", {"ACTIVE", "IBV_WR_SEND"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_SEND"}}},
                          {{"expect_recv", {"PASSIVE", "IBV_WC_SUCCESS"}},
                           {"expect_recv", {"PASSIVE", "IBV_WC_SUCCESS"}}},
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_SEND"}}},
                          {{"expect_no_completion", {"ACTIVE"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.log[9].op == "post_send_unsignaled(ACTIVE, IBV_WR_SEND)");
  CHECK(o.log.back().observed == "no completion within 1 ms");
  // a model that expects a second send completion waits in vain
  auto two = ops;
  two[11].push_back({"expect_send_wc", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_SEND"}});
  Outcome d = run(make_ops("holds", two));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 12);
  CHECK(d.observed == "nothing within 1 ms");
  // an unsignaled WR that fails does complete, with the opcode it was posted with
  auto err = up("") + Ops{{{"post_send_unsignaled", {"ACTIVE", "IBV_WR_RDMA_WRITE", "3"}}},
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_RDMA_WRITE"}}},
                          {{"post_send_unsignaled", {"ACTIVE", "IBV_WR_SEND"}}},  // into ERR: flushed, completes
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_WR_FLUSH_ERR", "IBV_WC_SEND"}}}};
  Outcome e = run(make_ops("holds", err));
  CHECK(e.verdict == Verdict::kNotReproduced);
  CHECK(e.log[9].observed == "ok (PASSIVE's buffer 3 was never registered: rkey 0)");
}

TEST_CASE("memory windows: an unsignaled BIND_MW opens the window to the peer's WRITE; SEND_WITH_INV closes it") {
  // up("") is steps 1-7 (9 operations); these are steps 8-20. alloc_mw and the bind stand for the library's
  // alloc_mr(e, k) and post_reg_mr(e, k) (kernel FRWR: ib_alloc_mr, IB_WR_REG_MR posted unsignaled).
  auto ops = up("") + Ops{{{"alloc_mw", {"PASSIVE", "0"}}},
                          {{"post_send_unsignaled", {"PASSIVE", "IBV_WR_BIND_MW", "0"}}},
                          {{"post_send", {"PASSIVE", "IBV_WR_SEND"}}},
                          {{"expect_recv", {"ACTIVE", "IBV_WC_SUCCESS"}}},
                          {{"expect_send_wc", {"PASSIVE", "IBV_WC_SUCCESS", "IBV_WC_SEND"}}},
                          {{"expect_no_completion", {"PASSIVE"}}},  // the bind succeeded without a completion
                          {{"post_send", {"ACTIVE", "IBV_WR_RDMA_WRITE", "0"}}},
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_RDMA_WRITE"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_SEND_WITH_INV", "0"}}},
                          {{"expect_recv", {"PASSIVE", "IBV_WC_SUCCESS", "0"}}},
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_SEND"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_RDMA_WRITE", "0"}}},  // the invalidated window's rkey
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_RDMA_WRITE"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  REQUIRE(o.log.size() == 22);
  CHECK(o.log[9].op == "alloc_mw(PASSIVE, 0)");
  CHECK(o.log[9].observed == "ok");
  CHECK(o.log[10].op == "post_send_unsignaled(PASSIVE, IBV_WR_BIND_MW, 0)");
  CHECK(o.log[10].observed == "ok");
  CHECK(o.log[14].observed == "no completion within 1 ms");
  CHECK(o.log[16].observed == "IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE");
  CHECK(o.log[18].op == "expect_recv(PASSIVE, IBV_WC_SUCCESS, 0)");
  CHECK(o.log[18].observed == "IBV_WC_SUCCESS, IBV_WC_WITH_INV of MR 0");
  CHECK(o.log[21].observed == "IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE");
  // the unsignaled bind gives no completion: a model that expects one first diverges at the Send's
  auto signaled = ops;
  signaled[11][0].args[2] = "IBV_WC_BIND_MW";
  Outcome d = run(make_ops("holds", signaled));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 12);
  CHECK(decided(d) == "IBV_WC_SUCCESS, IBV_WC_BIND_MW | IBV_WC_SUCCESS, IBV_WC_SEND");
  // ... and posted signaled, the bind completes first with IBV_WC_BIND_MW
  signaled[8][0] = {"post_send", {"PASSIVE", "IBV_WR_BIND_MW", "0"}};
  signaled[12][0] = {"expect_send_wc", {"PASSIVE", "IBV_WC_SUCCESS", "IBV_WC_SEND"}};
  CHECK(run(make_ops("holds", signaled)).verdict == Verdict::kNotReproduced);
  // a model that lets the WRITE through after the remote invalidation diverges there
  auto after = ops;
  after[19][0].args[1] = "IBV_WC_SUCCESS";
  Outcome a = run(make_ops("holds", after));
  CHECK(a.verdict == Verdict::kDiverged);
  CHECK(a.step == 20);
  CHECK(decided(a) == "IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE | IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE");
}

TEST_CASE("memory windows: a WRITE before the bind fails; BIND_MW of a plain MR is a conductor error") {
  // the window's rkey allows no access until bound
  auto early = up("") + Ops{{{"alloc_mw", {"PASSIVE", "0"}}},
                            {{"post_send", {"ACTIVE", "IBV_WR_RDMA_WRITE", "0"}}},
                            {{"expect_send_wc", {"ACTIVE", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_RDMA_WRITE"}}}};
  Outcome e = run(make_ops("holds", early));
  CHECK(e.verdict == Verdict::kNotReproduced);
  CHECK(e.log[10].observed == "ok");  // the buffer is registered (as a window): no "never registered" note
  CHECK(e.log.back().observed == "IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE");
  early.back()[0].args[1] = "IBV_WC_SUCCESS";
  Outcome d = run(make_ops("holds", early));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 10);
  CHECK(decided(d) == "IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE | IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE");
  // BIND_MW names the poster's own window: a buffer registered by reg_mr is none, nor is one never allocated or
  // one whose window was deallocated (dereg_mr); the WR is not posted
  for (const Ops& no : {Ops{{{"reg_mr", {"PASSIVE", "0"}}}}, Ops{{}},
                        Ops{{{"alloc_mw", {"PASSIVE", "0"}}, {"dereg_mr", {"PASSIVE", "0"}}}}}) {
    Outcome c = run(make_ops("holds", up("") + no + Ops{{{"post_send", {"PASSIVE", "IBV_WR_BIND_MW", "0"}}}}));
    CHECK(c.verdict == Verdict::kDiverged);
    CHECK(c.step == 9);
    CHECK(c.observed == "not posted: PASSIVE's buffer 0 is not a memory window (no alloc_mw)");
    CHECK(c.reason.rfind("conductor error: ", 0) == 0);
  }
  // a window names a buffer: the 2-argument forms cannot bind one
  CHECK(plan_error(make_ops("holds", {{{"post_send_unsignaled", {"ACTIVE", "IBV_WR_BIND_MW"}}}})) ==
        "step 1 (p), call proc: post_send_unsignaled of IBV_WR_BIND_MW names a memory region: use "
        "post_send_unsignaled(ENDPOINT, IBV_WR_BIND_MW, MR)");
  // alloc_mw of a registered buffer is refused as reg_mr's is
  Outcome t = run(make_ops("holds", up("") + Ops{{{"reg_mr", {"PASSIVE", "0"}}}, {{"alloc_mw", {"PASSIVE", "0"}}}}));
  CHECK(t.verdict == Verdict::kDiverged);
  CHECK(t.observed == "not called: PASSIVE's buffer 0 is registered already");
}

TEST_CASE("memory windows: LOCAL_INV closes a window, a new bind reopens it; a bound window cannot be bound again") {
  auto ops = up("") + Ops{{{"alloc_mw", {"PASSIVE", "1"}}, {"post_send", {"PASSIVE", "IBV_WR_BIND_MW", "1"}}},
                          {{"expect_send_wc", {"PASSIVE", "IBV_WC_SUCCESS", "IBV_WC_BIND_MW"}}},
                          {{"post_send", {"PASSIVE", "IBV_WR_LOCAL_INV", "1"}}},
                          {{"expect_send_wc", {"PASSIVE", "IBV_WC_SUCCESS", "IBV_WC_LOCAL_INV"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_RDMA_READ", "1"}}},  // the invalidated rkey
                          {{"expect_send_wc", {"ACTIVE", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_RDMA_READ"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.log.back().observed == "IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_READ");
  // rebound (unsignaled) after the LOCAL_INV, under a new rkey, the window serves the READ
  auto again = ops;
  again.insert(again.begin() + 11, {{"post_send_unsignaled", {"PASSIVE", "IBV_WR_BIND_MW", "1"}}});
  REQUIRE(again.size() == 14);
  again[13][0].args[1] = "IBV_WC_SUCCESS";
  Outcome r = run(make_ops("holds", again));
  CHECK(r.verdict == Verdict::kNotReproduced);
  CHECK(r.log.back().observed == "IBV_WC_SUCCESS, IBV_WC_RDMA_READ");
  // a second bind of a bound window (type 2: only a FREE one binds) completes with IBV_WC_MW_BIND_ERR
  auto twice = up("") + Ops{{{"alloc_mw", {"PASSIVE", "1"}}, {"post_send", {"PASSIVE", "IBV_WR_BIND_MW", "1"}},
                             {"post_send", {"PASSIVE", "IBV_WR_BIND_MW", "1"}}},
                            {{"expect_send_wc", {"PASSIVE", "IBV_WC_SUCCESS", "IBV_WC_BIND_MW"}}},
                            {{"expect_send_wc", {"PASSIVE", "IBV_WC_MW_BIND_ERR", "IBV_WC_BIND_MW"}}}};
  CHECK(run(make_ops("holds", twice)).verdict == Verdict::kNotReproduced);
  // dereg_mr of the window: its last rkey stays, and the peer's WRITE with it fails
  auto gone = up("") + Ops{{{"alloc_mw", {"PASSIVE", "1"}}, {"post_send", {"PASSIVE", "IBV_WR_BIND_MW", "1"}}},
                           {{"expect_send_wc", {"PASSIVE", "IBV_WC_SUCCESS", "IBV_WC_BIND_MW"}}},
                           {{"dereg_mr", {"PASSIVE", "1"}}, {"post_send", {"ACTIVE", "IBV_WR_RDMA_WRITE", "1"}}},
                           {{"expect_send_wc", {"ACTIVE", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_RDMA_WRITE"}}}};
  Outcome g = run(make_ops("holds", gone));
  CHECK(g.verdict == Verdict::kNotReproduced);
  CHECK(g.log[13].observed == "ok");  // the WRITE names the window's last rkey, not 0
}

TEST_CASE("memory windows: a device without them (siw) refuses alloc_mw, which diverges unless the model refuses") {
  FakeDevice::Options opt;
  opt.transport = FakeDevice::Transport::kIWARP;
  opt.memory_windows = false;
  auto ops = up("") + Ops{{{"alloc_mw", {"PASSIVE", "0"}}}};
  FakeDevice dev(opt);
  Outcome o = replay(make_plan(make_ops("holds", ops)), dev, ConductorOptions{Millis(1)});
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 8);
  CHECK(decided(o) == "ok | ibv_alloc_mw: Operation not supported (errno 95): the device has no memory windows");
  CHECK(o.reason == "a verbs/CM call failed that the model allows");
  // the buffer stays unregistered: a later reg_mr of it is made
  ops.back()[0].refused = "EOPNOTSUPP: no memory windows";
  ops.push_back({{"reg_mr", {"PASSIVE", "0"}}});
  FakeDevice dev2(opt);
  Outcome r = replay(make_plan(make_ops("holds", ops)), dev2, ConductorOptions{Millis(1)});
  CHECK(r.verdict == Verdict::kNotReproduced);
  CHECK(r.log[9].expected == "an error (EOPNOTSUPP: no memory windows)");
  CHECK(r.log[9].match);
  CHECK(r.log[10].observed == "ok");
}

TEST_CASE("completion channels: an armed receive CQ raises one event at the next arrival, then poll_recv takes it") {
  // up("") is steps 1-7 (9 operations); these are steps 8-12
  auto ops = up("") + Ops{{{"req_notify_cq", {"PASSIVE", "RECV_CQ"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_SEND"}}},
                          {{"get_cq_event", {"PASSIVE", "RECV_CQ"}}},
                          {{"poll_recv", {"PASSIVE", "IBV_WC_SUCCESS"}}},
                          {{"poll_recv_empty", {"PASSIVE"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  REQUIRE(o.log.size() == 14);
  CHECK(o.log[9].op == "req_notify_cq(PASSIVE, RECV_CQ)");
  CHECK(o.log[9].observed == "ok");
  CHECK(o.log[11].op == "get_cq_event(PASSIVE, RECV_CQ)");
  CHECK(o.log[11].expected == "a completion event of RECV_CQ");
  CHECK(o.log[11].observed == "a completion event of RECV_CQ");
  CHECK(o.log[12].observed == "IBV_WC_SUCCESS");
  CHECK(o.log[13].observed == "the receive CQ empty");
  // one-shot: a second Send without a new arm raises no event
  auto once = ops + Ops{{{"post_send", {"ACTIVE", "IBV_WR_SEND"}}}, {{"get_cq_event", {"PASSIVE", "RECV_CQ"}}}};
  Outcome d = run(make_ops("holds", once));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 14);
  CHECK(decided(d) == "a completion event of RECV_CQ | nothing within 1 ms");
  // armed again before it, the second arrival raises one
  once[12].insert(once[12].begin(), {"req_notify_cq", {"PASSIVE", "RECV_CQ"}});
  CHECK(run(make_ops("holds", once)).verdict == Verdict::kNotReproduced);
  // a flush is a completion: the armed CQ raises its event when the QP goes to ERR
  auto flush = up("") + Ops{{{"req_notify_cq", {"PASSIVE", "RECV_CQ"}}},
                            {{"modify_qp", {"PASSIVE", "IBV_QPS_ERR"}}},
                            {{"get_cq_event", {"PASSIVE", "RECV_CQ"}}},
                            {{"poll_recv", {"PASSIVE", "IBV_WC_WR_FLUSH_ERR"}}}};
  CHECK(run(make_ops("holds", flush)).verdict == Verdict::kNotReproduced);
}

TEST_CASE("completion channels: a completion that arrives before the arm raises no event (the lost notification)") {
  auto ops = up("") + Ops{{{"post_send", {"ACTIVE", "IBV_WR_SEND"}}},
                          {{"expect_recv", {"PASSIVE", "IBV_WC_SUCCESS"}}},  // in the CQ before the ULP arms it
                          {{"req_notify_cq", {"PASSIVE", "RECV_CQ"}}},
                          {{"get_cq_event", {"PASSIVE", "RECV_CQ"}}}};        // the ULP sleeps
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 11);
  CHECK(decided(o) == "a completion event of RECV_CQ | nothing within 1 ms");
  CHECK(o.reason == "the device did something the model did not predict");
  // the ULP that polls once more after arming finds the completion
  ops.back()[0] = {"poll_recv", {"PASSIVE", "IBV_WC_SUCCESS"}};
  CHECK(run(make_ops("holds", ops)).verdict == Verdict::kNotReproduced);
}

TEST_CASE("poll_send_empty / poll_recv_empty: match on an empty CQ, diverge naming the completion waiting there") {
  auto ops = up("") + Ops{{{"poll_send_empty", {"ACTIVE"}}, {"poll_recv_empty", {"ACTIVE"}},
                           {"poll_recv_empty", {"PASSIVE"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_SEND"}}},
                          {{"poll_recv_empty", {"PASSIVE"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 10);
  REQUIRE(o.log.size() == 14);
  CHECK(o.log[9].op == "poll_send_empty(ACTIVE)");
  CHECK(o.log[9].observed == "the send CQ empty");
  CHECK(o.log[10].observed == "the receive CQ empty");
  CHECK(o.log[11].match);
  CHECK(decided(o) == "the receive CQ empty | a receive completion IBV_WC_SUCCESS");
  // a completion the conductor read already (an observation) and the ULP has not polled is still in the CQ
  auto seen = up("") + Ops{{{"post_send", {"ACTIVE", "IBV_WR_SEND"}}},
                           {{"expect_recv", {"PASSIVE", "IBV_WC_SUCCESS"}},
                            {"expect_send_wc", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_SEND"}}},
                           {{"poll_send_empty", {"ACTIVE"}}}};
  Outcome b = run(make_ops("holds", seen));
  CHECK(b.verdict == Verdict::kDiverged);
  CHECK(b.step == 10);
  CHECK(decided(b) == "the send CQ empty | a send completion IBV_WC_SUCCESS, IBV_WC_SEND");
  seen[9][0] = {"poll_recv_empty", {"PASSIVE"}};
  CHECK(decided(run(make_ops("holds", seen))) == "the receive CQ empty | a receive completion IBV_WC_SUCCESS");
  // once the ULP polled them, both CQs are empty
  seen[9] = {{"poll_send", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_SEND"}}, {"poll_recv", {"PASSIVE", "IBV_WC_SUCCESS"}},
             {"poll_send_empty", {"ACTIVE"}}, {"poll_recv_empty", {"PASSIVE"}}};
  CHECK(run(make_ops("holds", seen)).verdict == Verdict::kNotReproduced);
}

TEST_CASE("completion channels: an event of the send CQ does not satisfy get_cq_event(RECV_CQ), and is kept") {
  auto ops = up("") + Ops{{{"req_notify_cq", {"ACTIVE", "SEND_CQ"}}},
                          {{"post_send", {"ACTIVE", "IBV_WR_SEND"}}},  // the send completion: SEND_CQ's event
                          {{"get_cq_event", {"ACTIVE", "RECV_CQ"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 10);
  CHECK(decided(o) == "a completion event of RECV_CQ | nothing within 1 ms");
  // both armed: the send CQ's event comes first and waits while the ULP takes the receive CQ's, then is taken
  auto both = up("") + Ops{{{"req_notify_cq", {"ACTIVE", "SEND_CQ"}}, {"req_notify_cq", {"ACTIVE", "RECV_CQ"}}},
                           {{"post_send", {"ACTIVE", "IBV_WR_SEND"}}},
                           {{"post_send", {"PASSIVE", "IBV_WR_SEND"}}},
                           {{"get_cq_event", {"ACTIVE", "RECV_CQ"}}},
                           {{"get_cq_event", {"ACTIVE", "SEND_CQ"}}}};
  Outcome b = run(make_ops("holds", both));
  CHECK(b.verdict == Verdict::kNotReproduced);
  CHECK(b.log.back().observed == "a completion event of SEND_CQ");
  // ... and only once
  both.push_back({{"get_cq_event", {"ACTIVE", "SEND_CQ"}}});
  Outcome t = run(make_ops("holds", both));
  CHECK(t.verdict == Verdict::kDiverged);
  CHECK(t.step == 13);
}

TEST_CASE("completion channels: a CQ kind is SEND_CQ or RECV_CQ; no CQ before the endpoint's first QP") {
  CHECK(plan_error(make_ops("holds", {{{"get_cq_event", {"ACTIVE", "IBV_SEND_CQ"}}}})) ==
        "step 1 (p), call proc: get_cq_event argument 2: not a CQ kind (SEND_CQ or RECV_CQ): \"IBV_SEND_CQ\"");
  CHECK(plan_error(make_ops("holds", {{{"req_notify_cq", {"ACTIVE"}}}})) ==
        "step 1 (p), call proc: replay operation req_notify_cq takes 2 arguments, found 1");
  Outcome o = run(make_ops("holds", {{{"req_notify_cq", {"ACTIVE", "SEND_CQ"}}}}));
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 1);
  CHECK(o.observed == "ibv_req_notify_cq: Invalid argument (errno 22): no CQ (no QP created on this endpoint)");
}


// up(c) with qp_cq records: `a_cqs` before ACTIVE[c]'s create_qp, `p_cqs` before PASSIVE[c]'s.
Ops up_shared(const std::string& c, std::vector<trace::ReplayStep> a_cqs, std::vector<trace::ReplayStep> p_cqs) {
  Ops ops = up(c);
  ops[0].insert(ops[0].begin(), a_cqs.begin(), a_cqs.end());
  ops[3].insert(ops[3].begin(), p_cqs.begin(), p_cqs.end());
  return ops;
}

// two_passives_share_cq0's ops (and what follows them) without the shared CQ: no create_cq (op 0), no qp_cq in the
// two set-ups (ops 4 and 11, first).
Ops own_cqs(Ops ops) {
  ops[0].clear();
  ops[4].erase(ops[4].begin());
  ops[11].erase(ops[11].begin());
  return ops;
}

// Shared CQ 0 (depth 8) made at step 1, then connections 0 (steps 2-8) and 1 (steps 9-15) whose PASSIVE endpoints
// receive on it; 21 operations.
Ops two_passives_share_cq0() {
  return Ops{{{"create_cq", {"0", "8"}}}} + up_shared("0", {}, {{"qp_cq", {"PASSIVE[0]", "RECV_CQ", "0"}}}) +
         up_shared("1", {}, {{"qp_cq", {"PASSIVE[1]", "RECV_CQ", "0"}}});
}

TEST_CASE("shared CQ: two PASSIVE endpoints receive on CQ 0; polls replay in the order the Sends arrived") {
  // connection 1's Send arrives first (step 16), connection 0's second (step 17)
  auto ops = two_passives_share_cq0() +
             Ops{{{"post_send", {"ACTIVE[1]", "IBV_WR_SEND"}}},
                 {{"post_send", {"ACTIVE[0]", "IBV_WR_SEND"}}},
                 // observations in the order the device added the entries to CQ 0
                 {{"expect_recv", {"PASSIVE[1]", "IBV_WC_SUCCESS"}}, {"expect_recv", {"PASSIVE[0]", "IBV_WC_SUCCESS"}}},
                 {{"poll_recv", {"PASSIVE[1]", "IBV_WC_SUCCESS"}}},
                 {{"poll_recv", {"PASSIVE[0]", "IBV_WC_SUCCESS"}}},
                 {{"poll_recv_empty", {"PASSIVE[0]"}}, {"poll_recv_empty", {"PASSIVE[1]"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  REQUIRE(o.log.size() == 29);
  CHECK(o.log[0].op == "create_cq(0, 8)");
  CHECK(o.log[0].observed == "ok");
  CHECK(o.log[15].op == "qp_cq(PASSIVE[1], RECV_CQ, 0)");
  CHECK(o.log[15].observed == "ok");
  CHECK(o.log[23].observed == "IBV_WC_SUCCESS");
  CHECK(o.log[25].op == "poll_recv(PASSIVE[1], IBV_WC_SUCCESS)");
  CHECK(o.log[25].observed == "IBV_WC_SUCCESS");
  CHECK(o.log[27].op == "poll_recv_empty(PASSIVE[0])");
  CHECK(o.log[27].expected == "the receive CQ (shared CQ 0) empty");
  CHECK(o.log[27].match);
  // the polls in the other order: the ULP's ibv_poll_cq of CQ 0 returns PASSIVE[1]'s completion first
  auto swapped = ops;
  std::swap(swapped[18], swapped[19]);
  Outcome d = run(make_ops("holds", swapped));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 19);
  CHECK(decided(d) == "IBV_WC_SUCCESS | the oldest completion of shared CQ 0 is PASSIVE[1]'s receive (IBV_WC_SUCCESS), "
                      "not PASSIVE[0]'s");
  CHECK(d.reason == "the device did something the model did not predict");
  // the observations in the other order: the model's order of entries is not the device's
  auto observed = ops;
  std::swap(observed[17][0], observed[17][1]);
  Outcome w = run(make_ops("holds", observed));
  CHECK(w.verdict == Verdict::kDiverged);
  CHECK(w.step == 18);
  CHECK(decided(w) == "IBV_WC_SUCCESS | shared CQ 0 got PASSIVE[1]'s receive completion (IBV_WC_SUCCESS) first");
  // without qp_cq each PASSIVE has its own receive CQ, and the same polls and observations replay in either order
  auto own_observed = own_cqs(observed);
  CHECK(run(make_ops("holds", own_observed)).verdict == Verdict::kNotReproduced);
  auto own = own_cqs(swapped);
  CHECK(run(make_ops("holds", own)).verdict == Verdict::kNotReproduced);
}

TEST_CASE("shared CQ: poll_recv_empty sees another endpoint's entry, read from the device or not") {
  auto ops = two_passives_share_cq0() + Ops{{{"post_send", {"ACTIVE[1]", "IBV_WR_SEND"}}},
                                            {{"poll_recv_empty", {"PASSIVE[0]"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 17);
  CHECK(decided(o) == "the receive CQ (shared CQ 0) empty | PASSIVE[1]'s receive completion IBV_WC_SUCCESS");
  // read from the device already (an observation of PASSIVE[1]) and not polled: still in the CQ
  auto seen = ops;
  seen[16].insert(seen[16].begin(), {"expect_recv", {"PASSIVE[1]", "IBV_WC_SUCCESS"}});
  Outcome b = run(make_ops("holds", seen));
  CHECK(b.verdict == Verdict::kDiverged);
  CHECK(decided(b) == "the receive CQ (shared CQ 0) empty | PASSIVE[1]'s receive completion IBV_WC_SUCCESS");
  // once PASSIVE[1]'s ULP polled it, the CQ is empty for PASSIVE[0] too
  seen[16].insert(seen[16].begin() + 1, {"poll_recv", {"PASSIVE[1]", "IBV_WC_SUCCESS"}});
  CHECK(run(make_ops("holds", seen)).verdict == Verdict::kNotReproduced);
  // with its own receive CQ, PASSIVE[0]'s is empty whatever PASSIVE[1] got
  auto own = own_cqs(ops);
  CHECK(run(make_ops("holds", own)).verdict == Verdict::kNotReproduced);
}

TEST_CASE("shared CQ: destroy_cq fails with EBUSY while a QP uses it, succeeds once none does, and may be redone") {
  auto busy = two_passives_share_cq0() + Ops{{{"destroy_cq", {"0"}}}};
  Outcome o = run(make_ops("holds", busy));
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 16);
  // ibv_destroy_cq returns the kernel's EBUSY (ib_destroy_cq_user: the CQ's usecnt is not 0)
  CHECK(decided(o) == "ok | ibv_destroy_cq: Device or resource busy (errno 16): shared CQ 0");
  CHECK(o.reason == "a verbs/CM call failed that the model allows");
  // the model that refuses the call reproduces the device
  busy.back()[0].refused = "EBUSY: a QP uses CQ 0";
  Outcome r = run(make_ops("holds", busy));
  CHECK(r.verdict == Verdict::kNotReproduced);
  CHECK(r.log.back().expected == "an error (EBUSY: a QP uses CQ 0)");
  CHECK(r.log.back().match);
  // one QP left on it is enough
  auto one = two_passives_share_cq0() + Ops{{{"destroy_qp", {"PASSIVE[0]"}}}, {{"destroy_cq", {"0"}}}};
  CHECK(decided(run(make_ops("holds", one))) == "ok | ibv_destroy_cq: Device or resource busy (errno 16): shared CQ 0");
  // none left: destroyed, created again; a create of an existing CQ fails (EEXIST)
  auto gone = two_passives_share_cq0() + Ops{{{"destroy_qp", {"PASSIVE[0]"}}, {"destroy_qp", {"PASSIVE[1]"}}},
                                             {{"destroy_cq", {"0"}}},
                                             {{"create_cq", {"0", "4"}}}};
  Outcome g = run(make_ops("holds", gone));
  CHECK(g.verdict == Verdict::kNotReproduced);
  gone.push_back({{"create_cq", {"0", "4"}}});
  CHECK(decided(run(make_ops("holds", gone))) == "ok | ibv_create_cq: File exists (errno 17): shared CQ 0 exists");
  // destroy_cq of a CQ never made
  CHECK(decided(run(make_ops("holds", {{{"destroy_cq", {"3"}}}}))) ==
        "ok | ibv_destroy_cq: Invalid argument (errno 22): no shared CQ 3");
}

TEST_CASE("shared CQ: a destroyed QP's flushed completions stay in it and are polled as its old endpoint's") {
  // PASSIVE[0]'s QP goes to ERR (its 2 receives flush into CQ 0), is destroyed; then a Send reaches PASSIVE[1]
  auto ops = two_passives_share_cq0() +
             Ops{{{"disconnect", {"PASSIVE[0]"}}},
                 {{"destroy_qp", {"PASSIVE[0]"}}},
                 {{"post_send", {"ACTIVE[1]", "IBV_WR_SEND"}}},
                 {{"poll_recv", {"PASSIVE[0]", "IBV_WC_WR_FLUSH_ERR"}}, {"poll_recv", {"PASSIVE[0]", "IBV_WC_WR_FLUSH_ERR"}}},
                 {{"poll_recv", {"PASSIVE[1]", "IBV_WC_SUCCESS"}}},
                 {{"poll_recv_empty", {"PASSIVE[1]"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  REQUIRE(o.log.size() == 28);
  CHECK(o.log[24].observed == "IBV_WC_WR_FLUSH_ERR");
  CHECK(o.log[25].observed == "IBV_WC_WR_FLUSH_ERR");
  CHECK(o.log[26].observed == "IBV_WC_SUCCESS");
  // PASSIVE[1]'s ULP polls first: the flushes of the destroyed QP are still at the head of the CQ
  auto first = ops;
  std::swap(first[18], first[19]);
  Outcome d = run(make_ops("holds", first));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 19);
  CHECK(decided(d) == "IBV_WC_SUCCESS | the oldest completion of shared CQ 0 is PASSIVE[0]'s receive "
                      "(IBV_WC_WR_FLUSH_ERR), not PASSIVE[1]'s");
  // destroy_cq discards what is left in it, also what the conductor read already: PASSIVE[1]'s observation reads
  // PASSIVE[0]'s flushes from CQ 0 on the way (step 18); after the destroy, neither PASSIVE[0]'s next QP (own CQs)
  // nor a new CQ 0 shows them
  auto discard = two_passives_share_cq0() +
                 Ops{{{"disconnect", {"PASSIVE[0]"}}},
                     {{"post_send", {"ACTIVE[1]", "IBV_WR_SEND"}}},
                     {{"expect_recv", {"PASSIVE[1]", "IBV_WC_SUCCESS"}}},
                     {{"destroy_qp", {"PASSIVE[0]"}}, {"destroy_qp", {"PASSIVE[1]"}}},
                     {{"destroy_cq", {"0"}}, {"create_cq", {"0", "8"}}},
                     {{"ibv_create_qp", {"PASSIVE[0]"}}, {"expect_no_completion", {"PASSIVE[0]"}}},
                     {{"qp_cq", {"PASSIVE[1]", "RECV_CQ", "0"}}, {"ibv_create_qp", {"PASSIVE[1]"}}},
                     {{"poll_recv_empty", {"PASSIVE[1]"}}}};
  Outcome x = run(make_ops("holds", discard));
  CHECK(x.verdict == Verdict::kNotReproduced);
  REQUIRE(x.log.size() == 33);
  CHECK(x.log[29].observed == "no completion within 1 ms");
  CHECK(x.log[32].observed == "the receive CQ (shared CQ 0) empty");
  // without the destroy_cq (and its QPs), the flushes read on the way are still PASSIVE[0]'s to see
  auto kept = discard;
  kept[19].clear();
  kept[20].clear();
  kept[21] = {{"expect_no_completion", {"PASSIVE[0]"}}};
  kept.resize(22);
  Outcome k = run(make_ops("holds", kept));
  CHECK(k.verdict == Verdict::kDiverged);
  CHECK(decided(k) == "no completion within 1 ms | a receive completion IBV_WC_WR_FLUSH_ERR");
}

TEST_CASE("shared CQ: the ULP's poll needs the head to be its own kind; qp_cq names a CQ that must exist") {
  // ACTIVE's send and receive CQ are both CQ 2: its Send's completion comes before the peer's reply arrives
  auto ops = Ops{{{"create_cq", {"2", "16"}}}} +
             up_shared("", {{"qp_cq", {"ACTIVE", "SEND_CQ", "2"}}, {"qp_cq", {"ACTIVE", "RECV_CQ", "2"}}}, {}) +
             Ops{{{"post_send", {"ACTIVE", "IBV_WR_SEND"}}},
                 {{"post_send", {"PASSIVE", "IBV_WR_SEND"}}},
                 {{"poll_recv", {"ACTIVE", "IBV_WC_SUCCESS"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 11);
  CHECK(decided(o) == "IBV_WC_SUCCESS | the oldest completion of shared CQ 2 is ACTIVE's send (IBV_WC_SUCCESS, "
                      "IBV_WC_SEND), not ACTIVE's receive");
  // polled in the CQ's order, both match; the CQ is then empty for either kind
  ops.back().insert(ops.back().begin(), {"poll_send", {"ACTIVE", "IBV_WC_SUCCESS", "IBV_WC_SEND"}});
  ops.push_back({{"poll_send_empty", {"ACTIVE"}}, {"poll_recv_empty", {"ACTIVE"}}});
  Outcome b = run(make_ops("holds", ops));
  CHECK(b.verdict == Verdict::kNotReproduced);
  CHECK(b.log.back().expected == "the receive CQ (shared CQ 2) empty");
  // a QP on a CQ that was never made is not created; the record stays for the next create, after create_cq
  auto missing = Ops{{{"qp_cq", {"ACTIVE", "RECV_CQ", "5"}}, {"create_qp", {"ACTIVE"}}}};
  Outcome m = run(make_ops("holds", missing));
  CHECK(m.verdict == Verdict::kDiverged);
  CHECK(decided(m) == "ok | rdma_create_qp: Invalid argument (errno 22): RECV_CQ: no shared CQ 5");
  missing[0].back().refused = "no CQ 5";
  missing.push_back({{"create_cq", {"5", "4"}}, {"create_qp", {"ACTIVE"}}});
  missing.push_back({{"destroy_cq", {"5"}}});
  Outcome later = run(make_ops("holds", missing));
  CHECK(later.verdict == Verdict::kDiverged);
  CHECK(later.step == 3);  // the QP was created on CQ 5
  CHECK(later.observed == "ibv_destroy_cq: Device or resource busy (errno 16): shared CQ 5");
  CHECK(plan_error(make_ops("holds", {{{"create_cq", {"16", "1"}}}})) ==
        "step 1 (p), call proc: create_cq argument 1: expected an integer in 0..15, found \"16\"");
  CHECK(plan_error(make_ops("holds", {{{"create_cq", {"0", "0"}}}})) ==
        "step 1 (p), call proc: create_cq argument 2: expected an integer in 1..65536, found \"0\"");
  CHECK(plan_error(make_ops("holds", {{{"qp_cq", {"ACTIVE", "SRQ", "0"}}}})) ==
        "step 1 (p), call proc: qp_cq argument 2: not a CQ kind (SEND_CQ or RECV_CQ): \"SRQ\"");
}

TEST_CASE("shared CQ: req_notify_cq and get_cq_event act on the shared CQ and its own channel") {
  // PASSIVE[0]'s ULP arms CQ 0; a Send to PASSIVE[1] is the next completion added to it
  auto ops = two_passives_share_cq0() + Ops{{{"req_notify_cq", {"PASSIVE[0]", "RECV_CQ"}}},
                                            {{"post_send", {"ACTIVE[1]", "IBV_WR_SEND"}}},
                                            {{"get_cq_event", {"PASSIVE[1]", "RECV_CQ"}}},
                                            {{"poll_recv", {"PASSIVE[1]", "IBV_WC_SUCCESS"}}}};
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  CHECK(o.log[23].observed == "a completion event of RECV_CQ");
  // one event: a second get_cq_event through the other endpoint finds none
  ops.push_back({{"get_cq_event", {"PASSIVE[0]", "RECV_CQ"}}});
  Outcome once = run(make_ops("holds", ops));
  CHECK(once.verdict == Verdict::kDiverged);
  CHECK(decided(once) == "a completion event of RECV_CQ | nothing within 1 ms");
  // with their own CQs, arming PASSIVE[0]'s says nothing about PASSIVE[1]'s
  auto own = own_cqs(ops);
  own.pop_back();
  Outcome d = run(make_ops("holds", own));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 18);
}

TEST_CASE("shared CQ: req_notify_shared_cq, get_shared_cq_event, poll_shared_cq_empty name the CQ, not an endpoint") {
  // ops 15..20 follow the two connections' set-up (steps 16..21)
  auto ops = two_passives_share_cq0() + Ops{{{"req_notify_shared_cq", {"0"}}},
                                            {{"poll_shared_cq_empty", {"0"}}},
                                            {{"post_send", {"ACTIVE[1]", "IBV_WR_SEND"}}},
                                            {{"get_shared_cq_event", {"0"}}},
                                            {{"poll_recv", {"PASSIVE[1]", "IBV_WC_SUCCESS"}}},
                                            {{"poll_shared_cq_empty", {"0"}}}};
  REQUIRE(ops.size() == 21);
  Outcome o = run(make_ops("holds", ops));
  CHECK(o.verdict == Verdict::kNotReproduced);
  auto entry = [&](const Outcome& out, const std::string& op) {
    for (const auto& l : out.log) {
      if (l.op == op) return l;
    }
    FAIL("no log entry " << op);
    return out.log.front();
  };
  CHECK(entry(o, "poll_shared_cq_empty(0)").expected == "shared CQ 0 empty");
  CHECK(entry(o, "poll_shared_cq_empty(0)").match);
  CHECK(entry(o, "get_shared_cq_event(0)").observed == "a completion event of shared CQ 0");
  // one arming, one event
  auto twice = ops;
  twice.push_back({{"get_shared_cq_event", {"0"}}});
  Outcome once = run(make_ops("holds", twice));
  CHECK(once.verdict == Verdict::kDiverged);
  CHECK(once.step == 22);
  CHECK(decided(once) == "a completion event of shared CQ 0 | nothing within 1 ms");
  // the entry not yet polled: the CQ is not empty
  auto early = ops;
  std::swap(early[19], early[20]);
  Outcome d = run(make_ops("holds", early));
  CHECK(d.verdict == Verdict::kDiverged);
  CHECK(d.step == 20);
  CHECK(decided(d) == "shared CQ 0 empty | PASSIVE[1]'s receive completion IBV_WC_SUCCESS");
  // a CQ that does not exist
  auto none = two_passives_share_cq0() + Ops{{{"req_notify_shared_cq", {"1"}}}};
  CHECK(run(make_ops("holds", none)).verdict != Verdict::kNotReproduced);
}

}  // namespace
}  // namespace qpcheck::verbs
