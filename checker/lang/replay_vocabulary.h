// What a spec's `replay OP(args)` clauses may name, as the type checker sees it (docs/language.md, "Replay
// clauses"): a table of operations, each with its argument kinds, and the names an enum argument may take. The
// table belongs to whoever implements the operations (verbs_backend/replay_ops.h for the rdma-core conductor) and
// is handed to lang::typecheck by the front end (checker/frontend); the checker itself knows no operation.
#pragma once

#include <array>
#include <span>
#include <string_view>

namespace qpcheck::lang {

// What a replay argument is, how the checker checks it, and how its value is written in the trace JSON.
enum class ReplayArg {
  kEndpoint,  // an enum value ACTIVE, PASSIVE (one connection) or ACTIVE[c], PASSIVE[c] (indexed constants)
  kCount,     // an integer >= 1 (number of work requests)
  kRetry,     // an integer 0..7 (a conn_param retry count; 7 = infinite)
  kDepth,     // an integer 0..255 (conn_param initiator_depth / responder_resources: outstanding RDMA READs)
  kSrq,       // an integer 0..15 (a shared receive queue of the spec)
  kCmEvent,   // an enum value NAME, written "RDMA_CM_EVENT_NAME"; NAME one of ReplayVocabulary::cm_events
  kWcStatus,  // an enum value, one of ReplayVocabulary::wc_statuses (IBV_WC_*)
  kWcOpcode,  // an enum value, one of ReplayVocabulary::wc_opcodes (IBV_WC_<opcode>)
  kWrOpcode,  // an enum value, one of ReplayVocabulary::wr_opcodes (IBV_WR_<opcode>)
  kQpState,   // an enum value NAME, written "IBV_QPS_NAME"; NAME one of ReplayVocabulary::qp_states
  kAsyncEvent,  // an enum value, one of ReplayVocabulary::async_events (IBV_EVENT_*)
  kLimit,     // an integer 0..65535 (an SRQ limit, in work requests; 0 disarms)
  kMr,        // an integer 0..15 (a memory region of an endpoint: the number of its data buffer)
  kCqKind,    // an enum value, one of ReplayVocabulary::cq_kinds (SEND_CQ, RECV_CQ: which CQ of an endpoint)
  kCq,        // an integer 0..15 (a shared CQ of the spec: one completion queue that several QPs use)
  kRejStatus,  // an enum value, one of ReplayVocabulary::rej_statuses (the status of an RDMA_CM_EVENT_REJECTED)
  kPrivateData,  // an integer 0..255 (the first byte of a ULP's CM private data; 0: none)
  kPrivateDataLen,  // an integer 0..255 (private_data_len: how many bytes of CM private data a ULP passes)
};

// The prefix the trace writer puts before an enum constant of this kind ("" for none: the IBV_* names, which carry
// their prefix in the constant, and the CQ kinds, which have none).
constexpr std::string_view replay_arg_prefix(ReplayArg a) {
  switch (a) {
    case ReplayArg::kCmEvent: return "RDMA_CM_EVENT_";
    case ReplayArg::kQpState: return "IBV_QPS_";
    default: return "";
  }
}

// One form of an operation: its name and arity, and the kind of each argument.
struct ReplayOpSpec {
  std::string_view name;
  int id;                          // the implementer's operation id; every form of one name has the same id
  bool host;                       // true: the conductor makes a verbs/CM call; false: it waits for an observation
  std::array<ReplayArg, 6> args;   // the first `arity` entries are used
  int arity;
  std::string_view summary;
};

struct ReplayVocabulary {
  std::span<const ReplayOpSpec> ops;
  // The names an enum argument of each kind may take (without the replay_arg_prefix).
  std::span<const std::string_view> cm_events, wc_statuses, wc_opcodes, wr_opcodes, qp_states, async_events, cq_kinds,
      rej_statuses;

  // The form of `name` with `arity` arguments, or nullptr.
  const ReplayOpSpec* find(std::string_view name, int arity) const {
    for (const ReplayOpSpec& op : ops) {
      if (op.name == name && op.arity == arity) return &op;
    }
    return nullptr;
  }
  // Any form of `name` (the first in the table), or nullptr: for messages.
  const ReplayOpSpec* find(std::string_view name) const {
    for (const ReplayOpSpec& op : ops) {
      if (op.name == name) return &op;
    }
    return nullptr;
  }
  // Is `name` one of the names of `kind` (an enum kind; false for the others)?
  bool known(ReplayArg kind, std::string_view name) const {
    std::span<const std::string_view> names;
    switch (kind) {
      case ReplayArg::kCmEvent: names = cm_events; break;
      case ReplayArg::kWcStatus: names = wc_statuses; break;
      case ReplayArg::kWcOpcode: names = wc_opcodes; break;
      case ReplayArg::kWrOpcode: names = wr_opcodes; break;
      case ReplayArg::kQpState: names = qp_states; break;
      case ReplayArg::kAsyncEvent: names = async_events; break;
      case ReplayArg::kCqKind: names = cq_kinds; break;
      case ReplayArg::kRejStatus: names = rej_statuses; break;
      default: return false;
    }
    for (std::string_view n : names) {
      if (n == name) return true;
    }
    return false;
  }
};

}  // namespace qpcheck::lang
