// The fixed vocabulary of replay operations a spec-library procedure may declare with `replay OP(args)`
// (docs/language.md, "Replay clauses"; docs/replay.md). The type checker checks declarations against it; the replay
// conductor (verbs_backend/conductor.h) implements every operation over a verbs device. One table, two readers.
#pragma once

#include <array>
#include <string_view>

namespace qpcheck::lang {

// What a replay argument is, and how its value is written in the trace JSON.
enum class ReplayArg {
  kEndpoint,  // an enum value named ACTIVE (the rdma_connect side) or PASSIVE (the listening side)
  kCount,     // an integer >= 1 (number of work requests)
  kRetry,     // an integer 0..7 (a conn_param retry count; 7 = infinite)
  kCmEvent,   // an enum value NAME, written "RDMA_CM_EVENT_NAME"; NAME must be a known rdma_cm_event_type
  kWcStatus,  // an enum value named IBV_WC_* (a known ibv_wc_status)
};

struct ReplayOpSpec {
  std::string_view name;
  bool host;                       // true: the conductor makes a verbs/CM call; false: it waits for an observation
  std::array<ReplayArg, 2> args;   // the first `arity` entries are used
  int arity;
  std::string_view summary;
};

inline constexpr std::array<ReplayOpSpec, 12> kReplayOps{{
    {"create_qp", true, {ReplayArg::kEndpoint}, 1, "rdma_create_qp on the endpoint's cm_id (its own send and receive CQ)"},
    {"post_recv", true, {ReplayArg::kEndpoint, ReplayArg::kCount}, 2, "ibv_post_recv of COUNT receive WRs"},
    {"post_send", true, {ReplayArg::kEndpoint}, 1, "ibv_post_send of one signaled Send"},
    {"connect", true, {ReplayArg::kEndpoint, ReplayArg::kRetry}, 2, "rdma_connect with conn_param rnr_retry_count"},
    {"accept", true, {ReplayArg::kEndpoint, ReplayArg::kRetry}, 2, "rdma_accept with conn_param rnr_retry_count"},
    {"reject", true, {ReplayArg::kEndpoint}, 1, "rdma_reject"},
    {"disconnect", true, {ReplayArg::kEndpoint}, 1, "rdma_disconnect"},
    {"get_cm_event", true, {ReplayArg::kEndpoint, ReplayArg::kCmEvent}, 2,
     "the ULP retrieves the endpoint's next CM event, which must be EVENT (rdma_get_cm_event + rdma_ack_cm_event)"},
    {"poll_recv", true, {ReplayArg::kEndpoint}, 1,
     "the ULP takes the endpoint's next receive completion (ibv_poll_cq), which must be IBV_WC_SUCCESS"},
    {"expect_cm_event", false, {ReplayArg::kEndpoint, ReplayArg::kCmEvent}, 2,
     "the device reports EVENT on the endpoint's event channel next"},
    {"expect_send_wc", false, {ReplayArg::kEndpoint, ReplayArg::kWcStatus}, 2,
     "the endpoint's next send completion has STATUS"},
    {"expect_recv", false, {ReplayArg::kEndpoint}, 1, "a Send arrives: the endpoint's receive CQ gets a completion"},
}};

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

inline bool known_cm_event(std::string_view name) {
  for (std::string_view n : kCmEventNames) {
    if (n == name) return true;
  }
  return false;
}

inline bool known_wc_status(std::string_view name) {
  for (std::string_view n : kWcStatusNames) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace qpcheck::lang
