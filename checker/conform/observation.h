// What `qpcheck conform` checks a spec against: a program's run as a sequence of observed operations, each written in
// the replay vocabulary (verbs_backend/replay_ops.h), i.e. the way a trace writes the host operations of its steps
// (docs/replay.md). verbs_backend/call_log.h turns the recorder's call log into this; the conformance check
// (conform.h) reads nothing else, so it knows no RDMA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace qpcheck::conform {

// One observed host operation. `args` are written as a trace writes them ("ACTIVE[0]", "2", "IBV_WC_SUCCESS",
// "RDMA_CM_EVENT_ESTABLISHED"); an argument "*" matches any value (the call did not fix it, e.g. the opcode of a
// flushed completion, or an attribute ibv_modify_qp's mask leaves out). An endpoint written "X[0]" matches "X" (a
// spec with one connection writes its endpoints without the index).
struct Observation {
  std::string op;                  // "post_recv"
  std::vector<std::string> args;   // at least as many as the spec's form of `op` has (extra ones are not compared)
  // Other forms the call may stand for, when the log cannot tell which (an error completion on a CQ shared by both
  // queues, its wr_id used by both: poll_send or poll_recv): the observation matches a step of any of its forms.
  struct Form {
    std::string op;
    std::vector<std::string> args;
  };
  std::vector<Form> alternatives;
  bool failed = false;             // the call returned an error: it matches only a call the spec refuses (`refuse`)
                                   // or the last call of a step that fails a property
  std::string call;                // the program's call, for reports: "ibv_post_recv"
  std::string source;              // where it was recorded: "client.jsonl:14"
  int64_t t_ns = 0;                // recorded time (CLOCK_MONOTONIC), for reports
  int64_t tid = 0;                 // recording thread
};

// Records of the log that no observation stands for, by call (reported, never silently dropped).
struct Skipped {
  std::string call;                // "ibv_reg_mr", "rdma_bind_addr"
  std::string why;                 // "not an operation of the spec", "made inside rdma_accept"
  int count = 0;
};

}  // namespace qpcheck::conform
