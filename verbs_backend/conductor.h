// The replay conductor: drives a trace's steps (checker/trace/trace.h) against a Device in trace order, from one
// thread, and compares what the device reports with the model's prediction (docs/replay.md).
//
// Each call of a step carries replay operations (declared by the spec library's `replay` clauses, bound when the
// trace was written; replay_ops.h). Host operations (create_id ... get_cm_event, poll_send, poll_recv, req_notify_cq,
// get_cq_event, poll_send_empty, poll_recv_empty, create_cq, destroy_cq, qp_cq) are verbs/CM calls made now (qp_cq
// only records what the endpoint's next QP is created with); observations (expect_cm_event,
// expect_send_wc, expect_recv, expect_srq_recv) wait, each with a timeout, for the device to report the predicted CM
// event or completion. The endpoints are ACTIVE[c] and PASSIVE[c] of any number of connections. Observed events and
// completions are kept per endpoint in arrival order; an observation and the ULP's later retrieval of the same event
// or completion (get_cm_event, poll_send, poll_recv) read the same list through separate cursors, and a completion
// past the ULP's cursor is one its ibv_poll_cq would still return (poll_send_empty, poll_recv_empty). Completion
// events (get_cq_event) are counted per CQ by the device, not kept here.
//
// Shared CQs (create_cq, qp_cq): an endpoint whose QP was created on shared CQ c for a kind has its completions of
// that kind read from c, whose entries (any QP's) are routed to their endpoints' lists as above and also kept in
// c's own order, the order ibv_poll_cq returned them. Observations of an endpoint match as for an own CQ; the ULP's
// polls (poll_send, poll_recv, poll_*_empty) take c's oldest entry no poll has taken, which must be that endpoint's
// and of that kind: another endpoint's at the head is a divergence that names it.
//
// Setup (before step 1): the listener listens unless the trace has a `listen` operation; every ACTIVE endpoint the
// trace names without a `create_id` for it gets its cm_id, address and route (the events are consumed there).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verbs_backend/replay_ops.h"
#include "checker/trace/trace.h"
#include "verbs_backend/device.h"

namespace qpcheck::verbs {

// "ACTIVE", "PASSIVE", "ACTIVE[c]", "PASSIVE[c]" (c decimal, 0..99), or nullopt.
std::optional<Endpoint> parse_endpoint(const std::string& text);

// One replay operation, validated: its arguments by kind, in order (replay_ops.h).
struct PlannedOp {
  std::string op;                 // its name (replay_ops.h)
  const lang::ReplayOpSpec* spec = nullptr;  // the form (name and arity) it matched
  std::vector<Endpoint> endpoints;           // kEndpoint arguments
  std::vector<int> numbers;                  // kCount, kRetry, kDepth, kSrq, kLimit, kMr, kCq arguments
  std::vector<std::string> names;            // enum arguments as written (RDMA_CM_EVENT_*, IBV_WC_*, IBV_QPS_*, ...)
  // The first of each: endpoint, number, name.
  Endpoint ep;
  int number = 0;
  std::string name;
  std::string refused;            // the model has the device refuse this call: the error it names ("" = succeeds)
  std::string text() const;       // "post_recv(ACTIVE, 2)", "connect(ACTIVE[1], 7, 1, 1)"
};

struct PlannedStep {
  int index = 0;                  // 1-based, as in the trace
  std::string actor;
  bool failed = false;            // the step itself violates a property (an illegal post)
  std::vector<PlannedOp> ops;
};

struct Plan {
  std::string spec;
  std::string trace_verdict;      // "violated" or "holds" (a witness schedule)
  std::string property;           // violated: the property
  std::vector<std::pair<std::string, std::string>> params;
  std::vector<PlannedStep> steps;
  // A lasso (a liveness counterexample, docs/liveness.md): steps[cycle_start..] repeat forever; == steps.size():
  // nothing is enabled after the last step; -1: not a lasso.
  int cycle_start = -1;
};

// Thrown by make_plan: the trace cannot be replayed (unknown operation, bad argument, nothing to replay).
struct PlanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Validates a trace's replay operations into a Plan. Throws PlanError naming the step and the offending value.
Plan make_plan(const trace::Trace& trace);

enum class Verdict {
  kReproduced,     // the whole schedule ran as predicted, the violation's signature included
  kNotReproduced,  // the schedule ran to its end and the device behaved safely (for a holds trace: conformance)
  kDiverged,       // at `step` the device did something the model did not predict
  kEnvironment,    // the device could not be opened (unknown device, no permission, no address)
};
const char* verdict_name(Verdict v);  // "REPRODUCED", "NOT REPRODUCED", "DIVERGED", "ENVIRONMENT"

// What happened to one operation.
struct OpRecord {
  int step = 0;
  int repetition = 0;             // a lasso's cycle: which repetition (1..cycles); 0: the prefix or not a lasso
  std::string actor;
  std::string op;                 // PlannedOp::text()
  std::string expected;           // "ok", "RDMA_CM_EVENT_ESTABLISHED", "IBV_WC_RNR_RETRY_EXC_ERR", "an error"
  std::string observed;           // what the device did
  bool match = true;
};

struct Outcome {
  Verdict verdict = Verdict::kNotReproduced;
  int step = 0;                   // DIVERGED / REPRODUCED / NOT REPRODUCED: the deciding step (0: none)
  std::string expected, observed; // at that step
  std::string reason;             // one line
  std::vector<OpRecord> log;      // every operation in order
  double seconds = 0;
  // A lasso: how far the device went ("the prefix", "cycle repetition 2 of 3", "all 3 cycle repetitions") and the
  // device counters that changed while it repeated the cycle (Device::counters: name -> increase).
  std::string reached;
  int cycles = 0;                 // cycle repetitions asked for (ConductorOptions::cycles)
  int repetitions = 0;            // cycle repetitions completed as predicted
  std::map<std::string, uint64_t> counter_increase;
};

struct ConductorOptions {
  Millis timeout{5000};           // each wait for a CM event or a completion
  // A lasso: how many times its cycle is replayed after the prefix, and after each repetition how long the device
  // must stay quiet (no completion, no CM event beyond those the cycle predicts) for the run to count as still in
  // the cycle.
  int cycles = 3;
  Millis cycle_window{1000};
};

// Replays `plan` on `device` (not yet opened). Never throws for device behaviour; all of it is in the Outcome.
// A lasso: the prefix, then the cycle `options.cycles` times, each repetition followed by a quiet window on every
// endpoint; REPRODUCED when the device stayed in the cycle throughout (the run made no progress the model's cycle
// does not make), NOT REPRODUCED when something completed or arrived that leaves the cycle (named with the
// repetition), DIVERGED as for any trace when an operation of the prefix or the cycle does not match.
Outcome replay(const Plan& plan, Device& device, const ConductorOptions& options);

// The replay report (schema "qpcheck.replay", version 1; docs/replay.md) and its text form.
nlohmann::json outcome_json(const Plan& plan, const Outcome& outcome, const std::string& trace_file,
                            const std::string& device);
std::string outcome_text(const Plan& plan, const Outcome& outcome, const std::string& device);

}  // namespace qpcheck::verbs
