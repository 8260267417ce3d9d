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
        "step 1 (p), call proc: replay operation post_send takes 1 or 2 arguments, found 0");
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
}

TEST_CASE("operations this conductor does not drive yet diverge, naming the operation") {
  std::vector<trace::Step> s = connected();
  s.push_back(step(7, {{"post_send", {"ACTIVE", "IBV_WR_RDMA_READ"}}}));
  Outcome o = run(make("holds", s));
  CHECK(o.verdict == Verdict::kDiverged);
  CHECK(o.step == 7);
  CHECK(o.reason == "replay operation not implemented: post_send(ACTIVE, IBV_WR_RDMA_READ)");
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

}  // namespace
}  // namespace qpcheck::verbs
