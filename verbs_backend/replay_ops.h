// The replay vocabulary of the rdma-core conductor: every operation a spec-library procedure may declare with
// `replay OP(args)` (docs/language.md, "Replay clauses"; docs/replay.md), next to its implementation
// (conductor.cc, which switches over ReplayOpId: an operation without a case is a compile error, -Werror=switch),
// and the rdma-core names its arguments may take. The type checker gets it as a table (replay_vocabulary(), handed
// in by the front end, checker/frontend); the trace writes the arguments as the checker resolved them.
//
// An operation may exist in more than one arity: the first library's forms (`connect(e, r)`, `post_send(e)`,
// `poll_recv(e)`, `expect_send_wc(e, s)`, `expect_recv(e)`) stay valid so that trace files written before library v2
// still replay; the library uses the longer forms. All forms of an operation share its id. The forms with a memory
// region (`post_send(e, op, mr)`, `expect_recv(e, s, mr)`, `poll_recv(e, s, mr)`) came with memory regions, remote
// invalidation and unsignaled sends (docs/replay.md); `alloc_mw` and IBV_WR_BIND_MW with type 2 memory windows, the
// user-space form of a kernel ULP's FRWR registration; `req_notify_cq`, `get_cq_event`, `poll_send_empty` and
// `poll_recv_empty` with completion channels (the ULP that sleeps until a completion event, and the notification it
// loses when a completion arrives before it arms the CQ); `create_cq`, `destroy_cq` and `qp_cq` with shared
// completion queues (a user-space server with one CQ for all its connections: polls take the CQ's oldest entry,
// whichever QP it is of).
#pragma once

#include <array>
#include <string_view>

#include "checker/lang/replay_vocabulary.h"

namespace qpcheck::verbs {

// One id per operation name (ReplayOpSpec::id).
enum class ReplayOpId : int {
  kCreateId,
  kResolveAddr,
  kResolveRoute,
  kListen,
  kCreateQp,
  kCreateQpSrq,
  kConnect,
  kAccept,
  kReject,
  kDisconnect,
  kDestroyQp,
  kDestroyId,
  kGetCmEvent,
  kIbvCreateQp,
  kModifyQp,
  kCreateSrq,
  kPostSrqRecv,
  kPostRecv,
  kPostSend,
  kPollRecv,
  kPollSend,
  kExpectCmEvent,
  kExpectSendWc,
  kExpectRecv,
  kExpectNoCompletion,
  kExpectSrqRecv,
  kGetAsyncEvent,
  kGetSrqEvent,
  kModifySrq,
  kNotify,
  kExpectAsyncEvent,
  kExpectSrqEvent,
  kRegMr,
  kRegMrLocal,
  kDeregMr,
  kPostSendUnsignaled,
  kAllocMw,
  kReqNotifyCq,
  kGetCqEvent,
  kPollSendEmpty,
  kPollRecvEmpty,
  kCreateCq,
  kDestroyCq,
  kQpCq,
  kReqNotifySharedCq,
  kGetSharedCqEvent,
  kPollSharedCqEmpty,
};

using lang::ReplayArg;

constexpr int op(ReplayOpId id) { return static_cast<int>(id); }
constexpr ReplayOpId op_id(const lang::ReplayOpSpec& spec) { return static_cast<ReplayOpId>(spec.id); }

inline constexpr std::array<lang::ReplayOpSpec, 66> kReplayOps{{
    // connection manager (librdmacm)
    {"create_id", op(ReplayOpId::kCreateId), true, {ReplayArg::kEndpoint}, 1,
     "rdma_create_id for an active endpoint (without it, the conductor creates and resolves every active endpoint "
     "the trace names before step 1)"},
    {"resolve_addr", op(ReplayOpId::kResolveAddr), true, {ReplayArg::kEndpoint}, 1,
     "rdma_resolve_addr to the device's own address"},
    {"resolve_route", op(ReplayOpId::kResolveRoute), true, {ReplayArg::kEndpoint}, 1, "rdma_resolve_route"},
    {"listen", op(ReplayOpId::kListen), true, {}, 0,
     "rdma_bind_addr + rdma_listen on the device address (without it: before step 1)"},
    {"create_qp", op(ReplayOpId::kCreateQp), true, {ReplayArg::kEndpoint}, 1,
     "rdma_create_qp on the endpoint's cm_id (its own send and receive CQ)"},
    {"create_qp_srq", op(ReplayOpId::kCreateQpSrq), true, {ReplayArg::kEndpoint, ReplayArg::kSrq}, 2,
     "rdma_create_qp with init_attr.srq"},
    {"connect", op(ReplayOpId::kConnect), true, {ReplayArg::kEndpoint, ReplayArg::kRetry}, 2,
     "rdma_connect with conn_param rnr_retry_count (first library)"},
    {"connect", op(ReplayOpId::kConnect), true,
     {ReplayArg::kEndpoint, ReplayArg::kRetry, ReplayArg::kDepth, ReplayArg::kDepth}, 4,
     "rdma_connect with conn_param rnr_retry_count, initiator_depth, responder_resources"},
    {"connect", op(ReplayOpId::kConnect), true,
     {ReplayArg::kEndpoint, ReplayArg::kRetry, ReplayArg::kDepth, ReplayArg::kDepth, ReplayArg::kPrivateData}, 5,
     "rdma_connect with those and private data whose first byte is DATA"},
    {"connect", op(ReplayOpId::kConnect), true,
     {ReplayArg::kEndpoint, ReplayArg::kRetry, ReplayArg::kDepth, ReplayArg::kDepth, ReplayArg::kPrivateData,
      ReplayArg::kPrivateDataLen}, 6,
     "the same with private_data_len LEN (bytes; the device refuses what its CM cannot carry)"},
    {"accept", op(ReplayOpId::kAccept), true, {ReplayArg::kEndpoint, ReplayArg::kRetry}, 2,
     "rdma_accept with conn_param rnr_retry_count (first library)"},
    {"accept", op(ReplayOpId::kAccept), true,
     {ReplayArg::kEndpoint, ReplayArg::kRetry, ReplayArg::kDepth, ReplayArg::kDepth}, 4,
     "rdma_accept with conn_param rnr_retry_count, initiator_depth, responder_resources"},
    {"accept", op(ReplayOpId::kAccept), true,
     {ReplayArg::kEndpoint, ReplayArg::kRetry, ReplayArg::kDepth, ReplayArg::kDepth, ReplayArg::kPrivateData}, 5,
     "rdma_accept with those and private data whose first byte is DATA"},
    {"accept", op(ReplayOpId::kAccept), true,
     {ReplayArg::kEndpoint, ReplayArg::kRetry, ReplayArg::kDepth, ReplayArg::kDepth, ReplayArg::kPrivateData,
      ReplayArg::kPrivateDataLen}, 6,
     "the same with private_data_len LEN (bytes)"},
    {"reject", op(ReplayOpId::kReject), true, {ReplayArg::kEndpoint}, 1, "rdma_reject"},
    {"reject", op(ReplayOpId::kReject), true, {ReplayArg::kEndpoint, ReplayArg::kPrivateData}, 2,
     "rdma_reject with private data whose first byte is DATA"},
    {"reject", op(ReplayOpId::kReject), true,
     {ReplayArg::kEndpoint, ReplayArg::kPrivateData, ReplayArg::kPrivateDataLen}, 3,
     "the same with private_data_len LEN (bytes)"},
    {"disconnect", op(ReplayOpId::kDisconnect), true, {ReplayArg::kEndpoint}, 1, "rdma_disconnect"},
    {"destroy_qp", op(ReplayOpId::kDestroyQp), true, {ReplayArg::kEndpoint}, 1,
     "rdma_destroy_qp (a cm_id's QP) or ibv_destroy_qp (a plain-verbs QP)"},
    {"destroy_id", op(ReplayOpId::kDestroyId), true, {ReplayArg::kEndpoint}, 1, "rdma_destroy_id"},
    {"get_cm_event", op(ReplayOpId::kGetCmEvent), true, {ReplayArg::kEndpoint, ReplayArg::kCmEvent}, 2,
     "the ULP retrieves the endpoint's next CM event, which must be EVENT (rdma_get_cm_event + rdma_ack_cm_event)"},
    {"get_cm_event", op(ReplayOpId::kGetCmEvent), true,
     {ReplayArg::kEndpoint, ReplayArg::kCmEvent, ReplayArg::kPrivateData}, 3,
     "the same, and the first byte of its private data (event->param.conn.private_data) must be DATA (none: 0)"},
    {"notify", op(ReplayOpId::kNotify), true, {ReplayArg::kEndpoint}, 1,
     "rdma_notify(id, IBV_EVENT_COMM_EST): the passive cm_id is established now (rdma_notify.3)"},
    // verbs (libibverbs)
    {"ibv_create_qp", op(ReplayOpId::kIbvCreateQp), true, {ReplayArg::kEndpoint}, 1,
     "ibv_create_qp of an RC QP (RESET) without a cm_id"},
    {"modify_qp", op(ReplayOpId::kModifyQp), true, {ReplayArg::kEndpoint, ReplayArg::kQpState}, 2,
     "ibv_modify_qp to STATE with the attributes that transition needs (RTR: the peer endpoint's QP number); the "
     "attributes the 6-argument form names take their defaults (1, 7, 7, 1)"},
    {"modify_qp", op(ReplayOpId::kModifyQp), true,
     {ReplayArg::kEndpoint, ReplayArg::kQpState, ReplayArg::kDepth, ReplayArg::kRetry, ReplayArg::kRetry,
      ReplayArg::kDepth},
     6,
     "ibv_modify_qp to STATE; the transition uses what it needs of max_dest_rd_atomic (RTR), rnr_retry, retry_cnt "
     "and max_rd_atomic (RTS)"},
    {"create_srq", op(ReplayOpId::kCreateSrq), true, {ReplayArg::kSrq}, 1, "ibv_create_srq"},
    {"post_srq_recv", op(ReplayOpId::kPostSrqRecv), true, {ReplayArg::kSrq, ReplayArg::kCount}, 2,
     "ibv_post_srq_recv of COUNT receive WRs"},
    {"modify_srq", op(ReplayOpId::kModifySrq), true, {ReplayArg::kSrq, ReplayArg::kLimit}, 2,
     "ibv_modify_srq with IBV_SRQ_LIMIT = LIMIT: arms IBV_EVENT_SRQ_LIMIT_REACHED (0 disarms)"},
    {"get_async_event", op(ReplayOpId::kGetAsyncEvent), true, {ReplayArg::kEndpoint, ReplayArg::kAsyncEvent}, 2,
     "the ULP takes the endpoint's next async event (ibv_get_async_event + ibv_ack_async_event: an event of its QP, "
     "its CQs, its port or its device), which must be EVENT"},
    {"get_srq_event", op(ReplayOpId::kGetSrqEvent), true, {ReplayArg::kSrq, ReplayArg::kAsyncEvent}, 2,
     "the ULP takes the SRQ's next async event (ibv_get_async_event, element srq), which must be EVENT"},
    {"post_recv", op(ReplayOpId::kPostRecv), true, {ReplayArg::kEndpoint, ReplayArg::kCount}, 2,
     "ibv_post_recv of COUNT receive WRs"},
    {"post_send", op(ReplayOpId::kPostSend), true, {ReplayArg::kEndpoint}, 1,
     "ibv_post_send of one signaled Send (first library)"},
    {"post_send", op(ReplayOpId::kPostSend), true, {ReplayArg::kEndpoint, ReplayArg::kWrOpcode}, 2,
     "ibv_post_send of one signaled WR (RDMA WRITE and READ against the peer endpoint's memory region)"},
    {"post_send", op(ReplayOpId::kPostSend), true, {ReplayArg::kEndpoint, ReplayArg::kWrOpcode, ReplayArg::kMr}, 3,
     "ibv_post_send of one signaled WR naming buffer MR: RDMA WRITE / READ to the peer's buffer MR (its rkey, or the "
     "last one it had), SEND_WITH_INV of the peer's buffer MR's rkey, LOCAL_INV of the endpoint's own, BIND_MW of "
     "the endpoint's own memory window (alloc_mw) with a new rkey (a Send ignores MR)"},
    {"post_send_unsignaled", op(ReplayOpId::kPostSendUnsignaled), true,
     {ReplayArg::kEndpoint, ReplayArg::kWrOpcode}, 2,
     "post_send(e, op) without IBV_SEND_SIGNALED: no completion unless the WR fails or is flushed"},
    {"post_send_unsignaled", op(ReplayOpId::kPostSendUnsignaled), true,
     {ReplayArg::kEndpoint, ReplayArg::kWrOpcode, ReplayArg::kMr}, 3,
     "post_send(e, op, mr) without IBV_SEND_SIGNALED: no completion unless the WR fails or is flushed"},
    {"reg_mr", op(ReplayOpId::kRegMr), true, {ReplayArg::kEndpoint, ReplayArg::kMr}, 2,
     "ibv_reg_mr of the endpoint's data buffer MR with LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ"},
    {"reg_mr_local", op(ReplayOpId::kRegMrLocal), true, {ReplayArg::kEndpoint, ReplayArg::kMr}, 2,
     "ibv_reg_mr of the endpoint's data buffer MR with LOCAL_WRITE only (no remote access)"},
    {"alloc_mw", op(ReplayOpId::kAllocMw), true, {ReplayArg::kEndpoint, ReplayArg::kMr}, 2,
     "the endpoint's buffer MR becomes a type 2 memory window: ibv_reg_mr with LOCAL_WRITE | MW_BIND, then "
     "ibv_alloc_mw(pd, IBV_MW_TYPE_2); MR's rkey is the window's, valid once an IBV_WR_BIND_MW binds it"},
    {"dereg_mr", op(ReplayOpId::kDeregMr), true, {ReplayArg::kEndpoint, ReplayArg::kMr}, 2,
     "ibv_dereg_mr of the endpoint's buffer MR (a window: ibv_dealloc_mw, then ibv_dereg_mr); its last rkey stays "
     "known (a later WR of the peer may name it)"},
    {"poll_recv", op(ReplayOpId::kPollRecv), true, {ReplayArg::kEndpoint}, 1,
     "the ULP takes the endpoint's next receive completion (ibv_poll_cq), which must be IBV_WC_SUCCESS (first "
     "library)"},
    {"poll_recv", op(ReplayOpId::kPollRecv), true, {ReplayArg::kEndpoint, ReplayArg::kWcStatus}, 2,
     "the ULP takes the endpoint's next receive completion (ibv_poll_cq), which must have STATUS (and no "
     "IBV_WC_WITH_INV)"},
    {"poll_recv", op(ReplayOpId::kPollRecv), true, {ReplayArg::kEndpoint, ReplayArg::kWcStatus, ReplayArg::kMr}, 3,
     "the ULP takes the endpoint's next receive completion (ibv_poll_cq), which must have STATUS and IBV_WC_WITH_INV "
     "with invalidated_rkey = the rkey of the endpoint's buffer MR"},
    {"poll_send", op(ReplayOpId::kPollSend), true,
     {ReplayArg::kEndpoint, ReplayArg::kWcStatus, ReplayArg::kWcOpcode}, 3,
     "the ULP takes the endpoint's next send completion (ibv_poll_cq), which must have STATUS and OPCODE"},
    {"poll_send_empty", op(ReplayOpId::kPollSendEmpty), true, {ReplayArg::kEndpoint}, 1,
     "the ULP's ibv_poll_cq of the endpoint's send CQ returns 0 now: no send completion is waiting there, including "
     "one the conductor has read from the device and no poll_send has taken (a shared CQ: no entry of any QP)"},
    {"poll_recv_empty", op(ReplayOpId::kPollRecvEmpty), true, {ReplayArg::kEndpoint}, 1,
     "the ULP's ibv_poll_cq of the endpoint's receive CQ returns 0 now: no receive completion is waiting there (a "
     "shared CQ: no entry of any QP)"},
    // completion channels (libibverbs): each endpoint's two CQs are on its own channel
    {"req_notify_cq", op(ReplayOpId::kReqNotifyCq), true, {ReplayArg::kEndpoint, ReplayArg::kCqKind}, 2,
     "ibv_req_notify_cq(cq, 0) on the endpoint's send or receive CQ: one completion event, at the next completion "
     "added to it (one-shot; a completion already there raises none)"},
    {"get_cq_event", op(ReplayOpId::kGetCqEvent), true, {ReplayArg::kEndpoint, ReplayArg::kCqKind}, 2,
     "the ULP waits for the next completion event of that CQ on the endpoint's completion channel "
     "(ibv_get_cq_event + ibv_ack_cq_events(cq, 1)); an event of the endpoint's other CQ is kept for later"},
    // shared completion queues (libibverbs): CQs of the spec that several QPs use, each on a channel of its own
    {"create_cq", op(ReplayOpId::kCreateCq), true, {ReplayArg::kCq, ReplayArg::kCount}, 2,
     "the spec's shared CQ number C: ibv_create_cq(ctx, DEPTH, NULL, channel, 0) on a completion channel of its own "
     "(EEXIST if C exists)"},
    {"destroy_cq", op(ReplayOpId::kDestroyCq), true, {ReplayArg::kCq}, 1,
     "ibv_destroy_cq of shared CQ C: fails (EBUSY) while a QP uses it; the completions still in it are discarded"},
    {"qp_cq", op(ReplayOpId::kQpCq), true, {ReplayArg::kEndpoint, ReplayArg::kCqKind, ReplayArg::kCq}, 3,
     "no verbs call: the endpoint's next QP (create_qp, create_qp_srq, ibv_create_qp) gets shared CQ C as its "
     "send_cq (SEND_CQ) or recv_cq (RECV_CQ) in ibv_qp_init_attr instead of the endpoint's own CQ of that kind; its "
     "polls of that kind then take C's oldest entry, whichever QP it is of"},
    {"req_notify_shared_cq", op(ReplayOpId::kReqNotifySharedCq), true, {ReplayArg::kCq}, 1,
     "ibv_req_notify_cq(cq, 0) on shared CQ C: one completion event at the next entry added to it by any QP"},
    {"get_shared_cq_event", op(ReplayOpId::kGetSharedCqEvent), true, {ReplayArg::kCq}, 1,
     "the ULP waits for the next completion event of shared CQ C on its channel (ibv_get_cq_event + "
     "ibv_ack_cq_events(cq, 1))"},
    {"poll_shared_cq_empty", op(ReplayOpId::kPollSharedCqEmpty), true, {ReplayArg::kCq}, 1,
     "the ULP's ibv_poll_cq of shared CQ C returns 0 now: no entry of any QP is waiting there"},
    // observations
    {"expect_cm_event", op(ReplayOpId::kExpectCmEvent), false, {ReplayArg::kEndpoint, ReplayArg::kCmEvent}, 2,
     "the device reports EVENT on the endpoint's event channel next"},
    {"expect_cm_event", op(ReplayOpId::kExpectCmEvent), false,
     {ReplayArg::kEndpoint, ReplayArg::kCmEvent, ReplayArg::kRejStatus}, 3,
     "the device reports EVENT with STATUS on the endpoint's event channel next (event->status, as "
     "rdma_reject_msg reads it)"},
    {"expect_send_wc", op(ReplayOpId::kExpectSendWc), false, {ReplayArg::kEndpoint, ReplayArg::kWcStatus}, 2,
     "the endpoint's next send completion has STATUS (first library)"},
    {"expect_send_wc", op(ReplayOpId::kExpectSendWc), false,
     {ReplayArg::kEndpoint, ReplayArg::kWcStatus, ReplayArg::kWcOpcode}, 3,
     "the endpoint's next send completion has STATUS and OPCODE"},
    {"expect_recv", op(ReplayOpId::kExpectRecv), false, {ReplayArg::kEndpoint}, 1,
     "a Send arrives: the endpoint's receive CQ gets a successful completion (first library)"},
    {"expect_recv", op(ReplayOpId::kExpectRecv), false, {ReplayArg::kEndpoint, ReplayArg::kWcStatus}, 2,
     "the endpoint's receive CQ gets a completion with STATUS (IBV_WC_SUCCESS: an arrival; IBV_WC_WR_FLUSH_ERR: a "
     "receive WR given back by a flush), without IBV_WC_WITH_INV"},
    {"expect_recv", op(ReplayOpId::kExpectRecv), false,
     {ReplayArg::kEndpoint, ReplayArg::kWcStatus, ReplayArg::kMr}, 3,
     "the endpoint's receive CQ gets a completion with STATUS and IBV_WC_WITH_INV, invalidated_rkey = the rkey of "
     "the endpoint's buffer MR (a SEND_WITH_INV arrived)"},
    {"expect_no_completion", op(ReplayOpId::kExpectNoCompletion), false, {ReplayArg::kEndpoint}, 1,
     "the endpoint's send and receive CQs report nothing beyond what was observed, within a short window (WRs "
     "discarded without a completion: a move to RESET, ibv_destroy_qp, after a drain's markers)"},
    {"expect_srq_recv", op(ReplayOpId::kExpectSrqRecv), false, {ReplayArg::kSrq, ReplayArg::kEndpoint}, 2,
     "a Send to the endpoint consumed one of the SRQ's receive WRs: a successful completion on the endpoint's "
     "receive CQ"},
    {"expect_async_event", op(ReplayOpId::kExpectAsyncEvent), false, {ReplayArg::kEndpoint, ReplayArg::kAsyncEvent},
     2, "the device raises EVENT on the endpoint's QP, CQ, port or device next (its async fd)"},
    {"expect_srq_event", op(ReplayOpId::kExpectSrqEvent), false, {ReplayArg::kSrq, ReplayArg::kAsyncEvent}, 2,
     "the device raises EVENT on the SRQ next"},
}};

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

// enum ibv_wc_opcode (verbs.h, rdma-core v44) in value order: the send-side opcodes up to IBV_WC_LOCAL_INV, then
// IBV_WC_RECV (1 << 7) and IBV_WC_RECV_RDMA_WITH_IMM (the values are not contiguous).
inline constexpr std::array<std::string_view, 9> kWcOpcodeNames{
    "IBV_WC_SEND",    "IBV_WC_RDMA_WRITE", "IBV_WC_RDMA_READ", "IBV_WC_COMP_SWAP",         "IBV_WC_FETCH_ADD",
    "IBV_WC_BIND_MW", "IBV_WC_LOCAL_INV",  "IBV_WC_RECV",      "IBV_WC_RECV_RDMA_WITH_IMM"};

// enum ibv_wr_opcode (verbs.h) that replay posts, in value order (the values are not contiguous: RDMA_WRITE 0, SEND
// 2, RDMA_READ 4, LOCAL_INV 7, BIND_MW 8, SEND_WITH_INV 9).
inline constexpr std::array<std::string_view, 6> kWrOpcodeNames{
    "IBV_WR_RDMA_WRITE", "IBV_WR_SEND",    "IBV_WR_RDMA_READ",
    "IBV_WR_LOCAL_INV",  "IBV_WR_BIND_MW", "IBV_WR_SEND_WITH_INV"};

// enum ibv_qp_state (verbs.h) without the IBV_QPS_ prefix, in value order.
inline constexpr std::array<std::string_view, 7> kQpStateNames{"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

// enum ibv_event_type (verbs.h), as its constants are spelled.
inline constexpr std::array<std::string_view, 20> kAsyncEventNames{
    "IBV_EVENT_CQ_ERR",          "IBV_EVENT_QP_FATAL",          "IBV_EVENT_QP_REQ_ERR",
    "IBV_EVENT_QP_ACCESS_ERR",   "IBV_EVENT_COMM_EST",          "IBV_EVENT_SQ_DRAINED",
    "IBV_EVENT_PATH_MIG",        "IBV_EVENT_PATH_MIG_ERR",      "IBV_EVENT_DEVICE_FATAL",
    "IBV_EVENT_PORT_ACTIVE",     "IBV_EVENT_PORT_ERR",          "IBV_EVENT_LID_CHANGE",
    "IBV_EVENT_PKEY_CHANGE",     "IBV_EVENT_SM_CHANGE",         "IBV_EVENT_SRQ_ERR",
    "IBV_EVENT_SRQ_LIMIT_REACHED", "IBV_EVENT_QP_LAST_WQE_REACHED", "IBV_EVENT_CLIENT_REREGISTER",
    "IBV_EVENT_GID_CHANGE",      "IBV_EVENT_WQ_FATAL"};

// The statuses of RDMA_CM_EVENT_REJECTED the library names (spec/lib/cm.qpspec RejStatus), and the value of each in
// struct rdma_cm_event.status: the IB CM's reject reason (enum ib_cm_rej_reason, ib_cm.h; IBTA 12.6.7.2 Table 112),
// or on iWARP the negated errno of iw_cm's CONNECT_REPLY.
inline constexpr std::array<std::string_view, 5> kRejStatusNames{
    "IB_CM_REJ_TIMEOUT", "IB_CM_REJ_INVALID_SERVICE_ID", "IB_CM_REJ_CONSUMER_DEFINED", "ECONNRESET", "ECONNREFUSED"};
inline constexpr std::array<int, 5> kRejStatusValues{1, 8, 28, -104, -111};

// Which CQ of an endpoint (req_notify_cq, get_cq_event), written without a prefix: its send CQ, its receive CQ.
inline constexpr std::array<std::string_view, 2> kCqKindNames{"SEND_CQ", "RECV_CQ"};

// The vocabulary as the type checker takes it (lang::typecheck): kReplayOps and the name lists above.
const lang::ReplayVocabulary& replay_vocabulary();

}  // namespace qpcheck::verbs
