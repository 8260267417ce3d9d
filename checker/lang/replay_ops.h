// The fixed vocabulary of replay operations a spec-library procedure may declare with `replay OP(args)`
// (docs/language.md, "Replay clauses"; docs/replay.md). The type checker checks declarations against it; the trace
// writer renders the arguments with it; the replay conductor (verbs_backend/conductor.h) implements every operation
// over a verbs device. One table, three readers.
//
// An operation may exist in more than one arity: the first library's forms (`connect(e, r)`, `post_send(e)`,
// `poll_recv(e)`, `expect_send_wc(e, s)`, `expect_recv(e)`) stay valid so that trace files written before library v2
// still replay; the library uses the longer forms.
#pragma once

#include <array>
#include <string_view>

namespace qpcheck::lang {

// What a replay argument is, and how its value is written in the trace JSON.
enum class ReplayArg {
  kEndpoint,  // an enum value ACTIVE, PASSIVE (one connection) or ACTIVE[c], PASSIVE[c] (indexed constants)
  kCount,     // an integer >= 1 (number of work requests)
  kRetry,     // an integer 0..7 (a conn_param retry count; 7 = infinite)
  kDepth,     // an integer 0..255 (conn_param initiator_depth / responder_resources: outstanding RDMA READs)
  kSrq,       // an integer 0..15 (a shared receive queue of the spec)
  kCmEvent,   // an enum value NAME, written "RDMA_CM_EVENT_NAME"; NAME must be a known rdma_cm_event_type
  kWcStatus,  // an enum value named IBV_WC_* (a known ibv_wc_status)
  kWcOpcode,  // an enum value named IBV_WC_<opcode> (a known ibv_wc_opcode: IBV_WC_SEND, IBV_WC_RDMA_READ, ...)
  kWrOpcode,  // an enum value named IBV_WR_<opcode> (IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ)
  kQpState,   // an enum value NAME, written "IBV_QPS_NAME"; NAME one of RESET INIT RTR RTS SQD SQE ERR
};

// The prefix the trace writer puts before an enum constant of this kind ("" for none).
constexpr std::string_view replay_arg_prefix(ReplayArg a) {
  switch (a) {
    case ReplayArg::kCmEvent: return "RDMA_CM_EVENT_";
    case ReplayArg::kQpState: return "IBV_QPS_";
    default: return "";
  }
}

struct ReplayOpSpec {
  std::string_view name;
  bool host;                       // true: the conductor makes a verbs/CM call; false: it waits for an observation
  std::array<ReplayArg, 6> args;   // the first `arity` entries are used
  int arity;
  std::string_view summary;
};

inline constexpr std::array<ReplayOpSpec, 33> kReplayOps{{
    // connection manager (librdmacm)
    {"create_id", true, {ReplayArg::kEndpoint}, 1,
     "rdma_create_id for an active endpoint (without it, the conductor creates and resolves every active endpoint "
     "the trace names before step 1)"},
    {"resolve_addr", true, {ReplayArg::kEndpoint}, 1, "rdma_resolve_addr to the device's own address"},
    {"resolve_route", true, {ReplayArg::kEndpoint}, 1, "rdma_resolve_route"},
    {"listen", true, {}, 0, "rdma_bind_addr + rdma_listen on the device address (without it: before step 1)"},
    {"create_qp", true, {ReplayArg::kEndpoint}, 1,
     "rdma_create_qp on the endpoint's cm_id (its own send and receive CQ)"},
    {"create_qp_srq", true, {ReplayArg::kEndpoint, ReplayArg::kSrq}, 2, "rdma_create_qp with init_attr.srq"},
    {"connect", true, {ReplayArg::kEndpoint, ReplayArg::kRetry}, 2,
     "rdma_connect with conn_param rnr_retry_count (first library)"},
    {"connect", true, {ReplayArg::kEndpoint, ReplayArg::kRetry, ReplayArg::kDepth, ReplayArg::kDepth}, 4,
     "rdma_connect with conn_param rnr_retry_count, initiator_depth, responder_resources"},
    {"accept", true, {ReplayArg::kEndpoint, ReplayArg::kRetry}, 2,
     "rdma_accept with conn_param rnr_retry_count (first library)"},
    {"accept", true, {ReplayArg::kEndpoint, ReplayArg::kRetry, ReplayArg::kDepth, ReplayArg::kDepth}, 4,
     "rdma_accept with conn_param rnr_retry_count, initiator_depth, responder_resources"},
    {"reject", true, {ReplayArg::kEndpoint}, 1, "rdma_reject"},
    {"disconnect", true, {ReplayArg::kEndpoint}, 1, "rdma_disconnect"},
    {"destroy_qp", true, {ReplayArg::kEndpoint}, 1,
     "rdma_destroy_qp (a cm_id's QP) or ibv_destroy_qp (a plain-verbs QP)"},
    {"destroy_id", true, {ReplayArg::kEndpoint}, 1, "rdma_destroy_id"},
    {"get_cm_event", true, {ReplayArg::kEndpoint, ReplayArg::kCmEvent}, 2,
     "the ULP retrieves the endpoint's next CM event, which must be EVENT (rdma_get_cm_event + rdma_ack_cm_event)"},
    // verbs (libibverbs)
    {"ibv_create_qp", true, {ReplayArg::kEndpoint}, 1, "ibv_create_qp of an RC QP (RESET) without a cm_id"},
    {"modify_qp", true, {ReplayArg::kEndpoint, ReplayArg::kQpState}, 2,
     "ibv_modify_qp to STATE with the attributes that transition needs (RTR: the peer endpoint's QP number); the "
     "attributes the 6-argument form names take their defaults (1, 7, 7, 1)"},
    {"modify_qp", true,
     {ReplayArg::kEndpoint, ReplayArg::kQpState, ReplayArg::kDepth, ReplayArg::kRetry, ReplayArg::kRetry,
      ReplayArg::kDepth},
     6,
     "ibv_modify_qp to STATE; the transition uses what it needs of max_dest_rd_atomic (RTR), rnr_retry, retry_cnt "
     "and max_rd_atomic (RTS)"},
    {"create_srq", true, {ReplayArg::kSrq}, 1, "ibv_create_srq"},
    {"post_srq_recv", true, {ReplayArg::kSrq, ReplayArg::kCount}, 2, "ibv_post_srq_recv of COUNT receive WRs"},
    {"post_recv", true, {ReplayArg::kEndpoint, ReplayArg::kCount}, 2, "ibv_post_recv of COUNT receive WRs"},
    {"post_send", true, {ReplayArg::kEndpoint}, 1, "ibv_post_send of one signaled Send (first library)"},
    {"post_send", true, {ReplayArg::kEndpoint, ReplayArg::kWrOpcode}, 2,
     "ibv_post_send of one signaled WR (RDMA WRITE and READ against the peer endpoint's memory region)"},
    {"poll_recv", true, {ReplayArg::kEndpoint}, 1,
     "the ULP takes the endpoint's next receive completion (ibv_poll_cq), which must be IBV_WC_SUCCESS (first "
     "library)"},
    {"poll_recv", true, {ReplayArg::kEndpoint, ReplayArg::kWcStatus}, 2,
     "the ULP takes the endpoint's next receive completion (ibv_poll_cq), which must have STATUS"},
    {"poll_send", true, {ReplayArg::kEndpoint, ReplayArg::kWcStatus, ReplayArg::kWcOpcode}, 3,
     "the ULP takes the endpoint's next send completion (ibv_poll_cq), which must have STATUS and OPCODE"},
    // observations
    {"expect_cm_event", false, {ReplayArg::kEndpoint, ReplayArg::kCmEvent}, 2,
     "the device reports EVENT on the endpoint's event channel next"},
    {"expect_send_wc", false, {ReplayArg::kEndpoint, ReplayArg::kWcStatus}, 2,
     "the endpoint's next send completion has STATUS (first library)"},
    {"expect_send_wc", false, {ReplayArg::kEndpoint, ReplayArg::kWcStatus, ReplayArg::kWcOpcode}, 3,
     "the endpoint's next send completion has STATUS and OPCODE"},
    {"expect_recv", false, {ReplayArg::kEndpoint}, 1,
     "a Send arrives: the endpoint's receive CQ gets a successful completion (first library)"},
    {"expect_recv", false, {ReplayArg::kEndpoint, ReplayArg::kWcStatus}, 2,
     "the endpoint's receive CQ gets a completion with STATUS (IBV_WC_SUCCESS: an arrival; IBV_WC_WR_FLUSH_ERR: a "
     "receive WR given back by a flush)"},
    {"expect_no_completion", false, {ReplayArg::kEndpoint}, 1,
     "the endpoint's send and receive CQs report nothing beyond what was observed, within a short window (WRs "
     "discarded without a completion: a move to RESET, ibv_destroy_qp, after a drain's markers)"},
    {"expect_srq_recv", false, {ReplayArg::kSrq, ReplayArg::kEndpoint}, 2,
     "a Send to the endpoint consumed one of the SRQ's receive WRs: a successful completion on the endpoint's "
     "receive CQ"},
}};

// The operation NAME of `arity` arguments, or nullptr.
inline const ReplayOpSpec* find_replay_op(std::string_view name, int arity) {
  for (const ReplayOpSpec& op : kReplayOps) {
    if (op.name == name && op.arity == arity) return &op;
  }
  return nullptr;
}

// Any form of NAME (the first in the table), or nullptr: for messages.
inline const ReplayOpSpec* find_replay_op(std::string_view name) {
  for (const ReplayOpSpec& op : kReplayOps) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

// enum rdma_cm_event_type (rdma_cma.h), without the RDMA_CM_EVENT_ prefix.
inline constexpr std::array<std::string_view, 16> kCmEventNames{
    "ADDR_RESOLVED", "ADDR_ERROR",   "ROUTE_RESOLVED", "ROUTE_ERROR",      "CONNECT_REQUEST", "CONNECT_RESPONSE",
    "CONNECT_ERROR", "UNREACHABLE",  "REJECTED",       "ESTABLISHED",      "DISCONNECTED",    "DEVICE_REMOVAL",
    "MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE", "TIMEWAIT_EXIT"};

// enum ibv_wc_status (verbs.h) in value order: kWcStatusNames[i] has value i.
inline constexpr std::array<std::string_view, 22> kWcStatusNames{
    "IBV_WC_SUCCESS",         "IBV_WC_LOC_LEN_ERR",   "IBV_WC_LOC_QP_OP_ERR",    "IBV_WC_LOC_EEC_OP_ERR",
    "IBV_WC_LOC_PROT_ERR",    "IBV_WC_WR_FLUSH_ERR",  "IBV_WC_MW_BIND_ERR",      "IBV_WC_BAD_RESP_ERR",
    "IBV_WC_LOC_ACCESS_ERR",  "IBV_WC_REM_INV_REQ_ERR", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_REM_OP_ERR",
    "IBV_WC_RETRY_EXC_ERR",   "IBV_WC_RNR_RETRY_EXC_ERR", "IBV_WC_LOC_RDD_VIOL_ERR", "IBV_WC_REM_INV_RD_REQ_ERR",
    "IBV_WC_REM_ABORT_ERR",   "IBV_WC_INV_EECN_ERR",  "IBV_WC_INV_EEC_STATE_ERR", "IBV_WC_FATAL_ERR",
    "IBV_WC_RESP_TIMEOUT_ERR", "IBV_WC_GENERAL_ERR"};

// enum ibv_wc_opcode (verbs.h): the send-side opcodes and IBV_WC_RECV (the values are not contiguous).
inline constexpr std::array<std::string_view, 7> kWcOpcodeNames{
    "IBV_WC_SEND", "IBV_WC_RDMA_WRITE", "IBV_WC_RDMA_READ", "IBV_WC_COMP_SWAP", "IBV_WC_FETCH_ADD",
    "IBV_WC_RECV", "IBV_WC_RECV_RDMA_WITH_IMM"};

// enum ibv_wr_opcode (verbs.h) that replay posts.
inline constexpr std::array<std::string_view, 3> kWrOpcodeNames{"IBV_WR_SEND", "IBV_WR_RDMA_WRITE",
                                                                 "IBV_WR_RDMA_READ"};

// enum ibv_qp_state (verbs.h) without the IBV_QPS_ prefix, in value order.
inline constexpr std::array<std::string_view, 7> kQpStateNames{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

template <size_t N>
constexpr bool known_name(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

inline bool known_cm_event(std::string_view name) { return known_name(kCmEventNames, name); }
inline bool known_wc_status(std::string_view name) { return known_name(kWcStatusNames, name); }
inline bool known_wc_opcode(std::string_view name) { return known_name(kWcOpcodeNames, name); }
inline bool known_wr_opcode(std::string_view name) { return known_name(kWrOpcodeNames, name); }
inline bool known_qp_state(std::string_view name) { return known_name(kQpStateNames, name); }

}  // namespace qpcheck::lang
