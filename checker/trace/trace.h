// The one result type every engine's outcome is turned into, and every consumer (text, JSON, picture, replay)
// reads: the verdict, the violated property, the counterexample as steps, and the statistics.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace qpcheck::trace {

struct SourceRef {
  std::string file;
  int line = 0;
  int col = 0;
  std::string text;  // the source line (trimmed)
};

struct Change {
  std::string name;    // "qp[ACTIVE]", "client@" (a program counter)
  std::string before;  // rendered values: "INIT", "[REQ, RTU]", "wakeup"
  std::string after;
};

// A replay operation of a call, with its arguments bound (docs/replay.md): op from verbs_backend/replay_ops.h;
// args as written in the trace: an endpoint "ACTIVE"/"PASSIVE", a decimal count, "RDMA_CM_EVENT_ESTABLISHED",
// "IBV_WC_RNR_RETRY_EXC_ERR".
struct ReplayStep {
  std::string op;
  std::vector<std::string> args;
  // The model has the device refuse this operation (a `refuse` in the call's procedure; the call's last replay
  // operation): the error it gives ("ECONNREFUSED: ..."); "" when the operation succeeds.
  std::string refused;
};

// A procedure call made by a step: the spec procedure and the verbs/CM call or fabric event it models.
struct Call {
  std::string proc;               // "post_recv"
  std::vector<std::string> args;  // rendered: "ACTIVE", "1"
  std::string verbs;              // "ibv_post_recv", or "" when the procedure declares none
  std::vector<ReplayStep> replay; // the procedure's replay operations, bound to this call's arguments
};

struct Step {
  int index = 0;                  // 1-based
  std::string actor;              // "client", "phil[3]", "deliver_send(ACTIVE)"
  bool is_rule = false;           // a guarded action (fabric / CM) rather than a process statement
  std::string verbs;              // the rule's own verbs label, if any
  std::string at;                 // process: where it stood before the step ("wakeup", "line 12")
  SourceRef source;
  std::vector<Call> calls;
  std::vector<Change> changes;
  bool failed = false;            // the step itself violated a property (fail/assert/runtime error)
  // `qpcheck conform`: the recorded calls this step of the spec matched ("event 3: client.jsonl:12 ibv_post_recv");
  // empty for a hidden step and in every other report.
  std::string observed;
};

// Where a process stands in the last state of a counterexample.
struct Position {
  std::string process;            // "client", "phil[3]"
  std::string at;                 // label, "line N" or "end"
  SourceRef source;               // the statement it is at (empty when it has ended)
  bool blocked = false;           // no step of it is enabled there
};

struct Stats {
  uint64_t states = 0;
  uint64_t transitions = 0;
  uint64_t depth = 0;
  double seconds = 0;
  uint64_t store_bytes = 0;
  uint64_t peak_rss_bytes = 0;
  int state_bits = 0;             // packed state width
  double states_per_second() const { return seconds > 0 ? states / seconds : 0; }
  double bytes_per_state() const { return states ? static_cast<double>(store_bytes) / states : 0; }
};

// A property the run did not check, and what left it out (docs/json-report.md, "properties").
struct PropertyNote {
  std::string name;
  std::string by;                 // "disable", "check", "--property", "--no-deadlock"
  SourceRef at;                   // the spec's `disable`/`check` declaration (empty file: the command line)
  std::string reason;             // disable: the reason written in the spec, if any
};

// A declaration of an imported file that the spec replaced (`override`).
struct OverrideNote {
  std::string kind;               // "proc", "rule", "type", "invariant"
  std::string name;
  SourceRef original;             // the replaced declaration
  SourceRef by;                   // the override
};

struct Trace {
  std::string spec;                                         // the main spec file
  std::vector<std::pair<std::string, std::string>> params;  // every param with its value
  std::string engine = "explicit";
  std::string title;              // the pictures' title; empty: made from the verdict and the property
  std::string strategy = "bfs";
  std::string verdict;            // "holds", "violated", "inconclusive"
  std::string limit;              // inconclusive: which limit ("max-states", ...)
  // violated:
  std::string property;           // the property's name ("deadlock" for a deadlock)
  std::string kind;               // "invariant", "fail", "runtime_error", "deadlock"
  std::string message;
  SourceRef property_source;      // the invariant or failing statement (empty file for a deadlock)
  bool shortest = false;
  std::vector<Change> initial;    // initial state: every unit with its value (before == after)
  std::vector<Step> steps;
  std::vector<Position> final;    // every process, in the last state of the counterexample
  // A liveness counterexample is a lasso: the run repeats steps[cycle_start..] forever, the state after the last
  // step being the state before steps[cycle_start]. cycle_start == steps.size(): nothing is enabled in the last
  // state and the run stays there. -1: not a lasso (every other report). Written as the JSON report's "cycle"
  // (version 2).
  int cycle_start = -1;
  // The liveness properties checked after the safety search, when none of them is the violation reported.
  struct LivenessResult {
    std::string property;
    std::string verdict;          // "holds", "inconclusive" ("violated" ones are reported as the trace itself)
    std::string limit;            // inconclusive: which limit
    uint64_t states = 0;          // product states (a state with its monitor bit)
    uint64_t transitions = 0;
    double seconds = 0;
  };
  std::vector<LivenessResult> liveness;
  // The fairness a liveness check assumed, one entry per `fair` declaration ("weak client, server"); empty: none.
  std::vector<std::string> fairness;
  Stats stats;
  // The report's header: which properties were checked (empty: not recorded, an older report), which were not and
  // why, and what the spec replaced.
  std::vector<std::string> checked;
  std::vector<PropertyNote> not_checked;
  std::vector<OverrideNote> overrides;
};

}  // namespace qpcheck::trace
