// The verbs boundary: the endpoints of K RC connections on one device, as the replay conductor drives them.
// One implementation runs over rdma-core (rdma_device.h), a testonly one simulates a device in process
// (fake_device.h). Every call returns a Status normalised at the boundary (STYLE.md habit 8); nothing throws.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace qpcheck::verbs {

// The outcome of one verbs/CM call: ok, or the failing API's name, its errno and a message. ibv_* calls return an
// errno value, rdma_* calls return -1 and set errno: the implementation normalises both into `err`.
struct Status {
  std::string api;      // "rdma_connect", "ibv_post_send"; empty when ok
  int err = 0;          // errno (positive), 0 if the API reports none
  std::string message;  // strerror(err) and context

  bool ok() const { return api.empty(); }
  static Status success() { return {}; }
  std::string text() const;  // "ok" or "rdma_connect: Connection refused (errno 111): context"
};

// Builds a failed Status from an errno value and context.
Status fail(std::string api, int err, std::string context = "");

// ACTIVE: a cm_id that calls rdma_connect; PASSIVE: the cm_id delivered by the listener's CONNECT_REQUEST.
enum class Ep { kActive, kPassive };
const char* ep_name(Ep e);  // "ACTIVE", "PASSIVE"

// One endpoint of a trace: the side and the connection. Connection c joins ACTIVE[c] and PASSIVE[c]; a trace of one
// connection writes ACTIVE and PASSIVE (connection 0).
struct Endpoint {
  Ep side = Ep::kActive;
  int connection = 0;
  bool indexed = false;           // written with its index ("ACTIVE[0]"): text() keeps it; not part of its identity
  std::string text() const;       // "ACTIVE", "PASSIVE[1]", "ACTIVE[0]" when indexed
  Endpoint peer() const { return {side == Ep::kActive ? Ep::kPassive : Ep::kActive, connection, indexed}; }
  bool operator==(const Endpoint& o) const { return side == o.side && connection == o.connection; }
  bool operator<(const Endpoint& o) const {
    return connection != o.connection ? connection < o.connection : side < o.side;
  }
};

// conn_param fields the conductor controls (rdma_connect.3, rdma_accept.3). Counts are 3-bit: 7 = infinite retries.
struct ConnParam {
  int rnr_retry_count = 7;
  int retry_count = 7;
  int initiator_depth = 1;
  int responder_resources = 1;
  int private_data = 0;  // the first byte of the ULP's private data (0: none is sent)
  // How many bytes of private data the ULP passes (private_data_len, 0..255; 0: as private_data needs, none or one
  // byte). The CM's limits (IB: 56 on a REQ after the rdma_cm header, 196 on a REP, 148 on a REJ) are the device's to
  // enforce: rdma_connect / rdma_accept / rdma_reject fail with EINVAL beyond them.
  int private_data_len = 0;
};

// ibv_qp_state values (verbs.h), in value order.
enum class QpState { kReset, kInit, kRtr, kRts, kSqd, kSqe, kErr };
const char* qp_state_name(QpState s);  // "IBV_QPS_RTS"

// The work requests the conductor posts (ibv_wr_opcode): one WR of 32 bytes each (LOCAL_INV and BIND_MW: none).
enum class WrOpcode { kSend, kRdmaWrite, kRdmaRead, kSendWithInv, kLocalInv, kBindMw };
const char* wr_opcode_name(WrOpcode o);  // "IBV_WR_RDMA_READ"

// The memory regions of an endpoint that reg_mr and alloc_mw name: data buffers 0..kMaxMrs-1 of kMrBytes each, apart
// from the buffer (and MR) that Sends and receives use. "The rkey of buffer k" is its MR's rkey, or, for a buffer
// that alloc_mw made a type 2 memory window, the window's current rkey.
inline constexpr int kMaxMrs = 16;
inline constexpr size_t kMrBytes = 4096;

// One send WR as the conductor posts it (ibv_send_wr, ibv_post_send.3).
struct SendWr {
  WrOpcode op = WrOpcode::kSend;
  // The data buffer the WR names (0..kMaxMrs-1), by its rkey: the current one, or the last one it had if it was
  // deregistered, or 0 if it was never registered. RDMA WRITE / READ (wr.rdma.rkey, remote_addr = that buffer) and
  // SEND_WITH_INV (wr.invalidate_rkey): the PEER endpoint's buffer; LOCAL_INV (wr.invalidate_rkey): the endpoint's
  // own; BIND_MW: the endpoint's own window (alloc_mw), bound to its buffer with a new rkey (ibv_inc_rkey). -1 (the
  // 2-argument post_send): WRITE / READ target the peer's Send/receive MR; a Send ignores it.
  int mr = -1;
  bool signaled = true;  // IBV_SEND_SIGNALED (QPs have sq_sig_all 0): unsignaled, only an error or flush completes
};

// Attributes of ibv_modify_qp that come from the trace (the 6-argument modify_qp), for a plain-verbs QP's RTR and
// RTS; the defaults are the 2-argument form's. The rest are fixed by the implementation (rdma_device.cc documents
// each).
struct QpAttrs {
  int rnr_retry = 7;           // RTS: IBV_QP_RNR_RETRY (3 bits, 7 = infinite)
  int retry_cnt = 7;           // RTS: IBV_QP_RETRY_CNT
  int max_rd_atomic = 1;       // RTS: IBV_QP_MAX_QP_RD_ATOMIC (ORD: RDMA READs this QP may have outstanding)
  int max_dest_rd_atomic = 1;  // RTR: IBV_QP_MAX_DEST_RD_ATOMIC (IRD: RDMA READs it answers at once)
};

// One work completion as the device reported it. `opcode` is the WR's: for a send completion the opcode of the WR
// the conductor posted under that wr_id (ibv_poll_cq.3: wc.opcode is valid only for IBV_WC_SUCCESS), for a
// receive completion IBV_WC_RECV. `srq`: the SRQ whose receive WR completed, or -1 (the QP's own receive queue).
// A receive completion with IBV_WC_WITH_INV in wc_flags (a SEND_WITH_INV arrived; verbs.h: wc.invalidated_rkey):
// `invalidated` names the rkey ("MR 2": the current or last rkey of the endpoint's buffer 2; "rkey 0x1a2b (none of
// PASSIVE's memory regions)") and `inv_mr` is that buffer or -1; without the flag `invalidated` is "".
struct Completion {
  int status = 0;
  std::string name;    // "IBV_WC_SUCCESS", "IBV_WC_RNR_RETRY_EXC_ERR"
  std::string opcode;  // "IBV_WC_SEND", "IBV_WC_RDMA_READ", "IBV_WC_RECV"
  int srq = -1;
  int inv_mr = -1;
  std::string invalidated;
};

// Which of an endpoint's two CQs (req_notify_cq, next_cq_event): ReplayArg::kCqKind's SEND_CQ and RECV_CQ.
enum class CqKind { kSend, kRecv };
const char* cq_kind_name(CqKind k);  // "SEND_CQ", "RECV_CQ"

// Shared CQs: completion queues of the spec (0..kMaxSharedCqs-1) that several QPs use, made by create_cq.
inline constexpr int kMaxSharedCqs = 16;

// The CQs a new QP gets in ibv_qp_init_attr (qp_cq): for each kind a shared CQ, or -1 for the endpoint's own CQ of
// that kind (made with the endpoint's first QP that uses it, on the endpoint's own completion channel).
struct QpCqs {
  int send = -1;
  int recv = -1;
  int of(CqKind k) const { return k == CqKind::kSend ? send : recv; }
};

// One entry of a shared CQ as ibv_poll_cq returned it: whose completion it is (the endpoint whose QP has
// wc.qp_num, also when that QP was destroyed since) and of which kind (the device tells by the WR's wr_id: wc.opcode
// is not valid for an error completion, ibv_poll_cq.3).
struct CqEntry {
  Endpoint ep;
  CqKind kind = CqKind::kSend;
  Completion wc;
};

using Millis = std::chrono::milliseconds;

// The endpoints of K connections on one device, driven from one thread. Not thread-safe. Endpoints come to exist
// through create_id (ACTIVE[c]), the listener's CONNECT_REQUEST for connection c (PASSIVE[c]: matched by the
// connection index that connect puts in the REQ's private data), or ibv_create_qp (a plain-verbs QP, no cm_id).
class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  // Opens the device (its verbs context, one PD for every endpoint, the address to use). A failure here is an
  // environment problem (unknown device, no permission, no address).
  virtual Status open(Millis timeout) = 0;
  // rdma_bind_addr + rdma_listen on the device's address: the one listener of every PASSIVE endpoint.
  virtual Status listen() = 0;
  // rdma_create_id for an active endpoint, on its own event channel.
  virtual Status create_id(Endpoint e) = 0;
  // rdma_resolve_addr / rdma_resolve_route towards the listener; the events are e's CM events.
  virtual Status resolve_addr(Endpoint e) = 0;
  virtual Status resolve_route(Endpoint e) = 0;
  // rdma_create_qp on e's cm_id with the CQs `cqs` names (e's own send and receive CQ unless shared ones are named);
  // `srq` >= 0: init_attr.srq is that SRQ. A shared CQ that does not exist: EINVAL naming it, no QP.
  virtual Status create_qp(Endpoint e, int srq, const QpCqs& cqs) = 0;
  // ibv_create_qp of an RC QP (RESET) with the CQs `cqs` names, without a cm_id.
  virtual Status create_plain_qp(Endpoint e, const QpCqs& cqs) = 0;
  // ibv_modify_qp of e's QP to `state` with the attributes that transition needs.
  virtual Status modify_qp(Endpoint e, QpState state, const QpAttrs& attrs) = 0;
  // rdma_destroy_qp (a cm_id's QP) or ibv_destroy_qp (a plain QP). e's CQs stay: completions already there remain.
  virtual Status destroy_qp(Endpoint e) = 0;
  // rdma_destroy_id: no more CM events for e afterwards.
  virtual Status destroy_id(Endpoint e) = 0;
  // ibv_create_srq / ibv_post_srq_recv of `count` receive WRs.
  virtual Status create_srq(int srq) = 0;
  virtual Status post_srq_recv(int srq, int count) = 0;
  // ibv_post_recv of `count` receive WRs (one buffer each).
  virtual Status post_recv(Endpoint e, int count) = 0;
  // ibv_post_send of one WR (SendWr says which memory region it names). The device keeps, per wr_id, the opcode of
  // every WR, unsignaled ones included: an unsignaled WR completes only with an error or a flush.
  virtual Status post_send(Endpoint e, const SendWr& wr) = 0;
  // ibv_reg_mr of e's data buffer `mr` (0..kMaxMrs-1) on the PD: LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ when
  // `remote`, else LOCAL_WRITE alone. EEXIST when the buffer is registered already.
  virtual Status reg_mr(Endpoint e, int mr, bool remote) = 0;
  // e's buffer `mr` becomes a type 2 memory window, the user-space form of a kernel ULP's FRWR MR (ib_alloc_mr):
  // ibv_reg_mr of the buffer with LOCAL_WRITE | MW_BIND (the underlying MR, no remote access of its own), then
  // ibv_alloc_mw(pd, IBV_MW_TYPE_2). From then on the buffer's rkey is the window's, which allows no access until an
  // IBV_WR_BIND_MW binds it (SendWr). EEXIST when the buffer is registered already; a device without memory windows
  // (siw) fails with ibv_alloc_mw's errno (EOPNOTSUPP: libibverbs' dummy alloc_mw) and leaves the buffer unregistered.
  virtual Status alloc_mw(Endpoint e, int mr) = 0;
  // ibv_dereg_mr of e's buffer `mr` (a window: ibv_dealloc_mw, then ibv_dereg_mr of its underlying MR); its last rkey
  // is kept, for a later WR that names it (SendWr::mr).
  virtual Status dereg_mr(Endpoint e, int mr) = 0;
  virtual Status connect(Endpoint e, const ConnParam& param) = 0;
  virtual Status accept(Endpoint e, const ConnParam& param) = 0;
  // rdma_reject with private data on the REJ (MPA Reply with the Reject flag): `length` bytes (0: one byte when
  // private_data != 0, else none), the first one private_data.
  virtual Status reject(Endpoint e, int private_data, int length) = 0;
  virtual Status disconnect(Endpoint e) = 0;
  // rdma_notify(id, IBV_EVENT_COMM_EST) on e's cm_id (rdma_notify.3).
  virtual Status notify(Endpoint e) = 0;
  // ibv_modify_srq with IBV_SRQ_LIMIT = limit (ibv_modify_srq.3: arms IBV_EVENT_SRQ_LIMIT_REACHED; 0 disarms).
  virtual Status modify_srq(int srq, int limit) = 0;
  // Waits up to `timeout` for e's next CM event (acknowledged at once); *event is "RDMA_CM_EVENT_<NAME>", with
  // " (status N)" when the event carries a nonzero status and " (data N)" when the first byte of the ULP's private
  // data is nonzero, or nullopt when the timeout passed first.
  virtual Status next_cm_event(Endpoint e, Millis timeout, std::optional<std::string>* event) = 0;
  // Waits up to `timeout` for e's next send (recv) completion; nullopt on timeout. Every status is returned as is,
  // IBV_WC_WR_FLUSH_ERR included: the caller decides.
  virtual Status next_send_completion(Endpoint e, Millis timeout, std::optional<Completion>* wc) = 0;
  virtual Status next_recv_completion(Endpoint e, Millis timeout, std::optional<Completion>* wc) = 0;
  // The two above read e's OWN CQs only; the completions of a QP on a shared CQ come from next_cq_completion.
  //
  // Completion channels: e's two CQs are created on e's own channel (ibv_create_comp_channel.3), which delivers an
  // event only for a CQ that was armed. req_notify_cq: ibv_req_notify_cq(cq, 0) on e's CQ `cq` (ibv_req_notify_cq.3:
  // one-shot, one event at the next completion added to it; completions already there raise none). next_cq_event:
  // waits up to `timeout` for the next completion event of that CQ (ibv_get_cq_event, acknowledged at once with
  // ibv_ack_cq_events(cq, 1)); *got is false on timeout. An event of e's other CQ read meanwhile is counted for that
  // CQ and returned by a later call for it. Both fail (EINVAL) before e has CQs (its first QP). "e's CQ `cq`" is the
  // CQ of that kind of e's latest QP: when that is a shared CQ, both act on it (ibv_req_notify_cq on the shared CQ,
  // ibv_get_cq_event on the shared CQ's own channel), and fail (EINVAL) once it was destroyed.
  virtual Status req_notify_cq(Endpoint e, CqKind cq) = 0;
  virtual Status next_cq_event(Endpoint e, CqKind cq, Millis timeout, bool* got) = 0;
  // The same two for shared CQ `cq` named by its number (an event loop that serves every QP using it): EINVAL when
  // it does not exist.
  virtual Status req_notify_shared_cq(int cq) = 0;
  virtual Status next_shared_cq_event(int cq, Millis timeout, bool* got) = 0;
  // Shared CQ `cq` (0..kMaxSharedCqs-1): ibv_create_cq(ctx, depth, NULL, channel, 0) on a completion channel made
  // for it alone. EEXIST when it exists. The device may make it larger than `depth` (ibv_create_cq.3).
  virtual Status create_cq(int cq, int depth) = 0;
  // ibv_destroy_cq of shared CQ `cq` (then its channel): the verbs errno when it fails (EBUSY while a QP still uses
  // it: ibv_create_cq.3 "fails if any queue pair is still associated with this CQ"); EINVAL when it does not exist.
  // The completions still in it are gone; `cq` may be created again.
  virtual Status destroy_cq(int cq) = 0;
  // Waits up to `timeout` for shared CQ `cq`'s next entry, in the order ibv_poll_cq returns them, whichever QP it is
  // of; nullopt on timeout. EINVAL when the CQ does not exist; a completion of a QP this device did not create fails
  // the call (EPROTO), it cannot be routed.
  virtual Status next_cq_completion(int cq, Millis timeout, std::optional<CqEntry>* entry) = 0;
  // Waits up to `timeout` for e's next async event (ibv_get_async_event + ibv_ack_async_event; acknowledged at once):
  // *event is "IBV_EVENT_<NAME>", or nullopt on timeout. The device's one async fd is shared: an event of a QP or a
  // CQ goes to the endpoint that owns it, a port or device event to every endpoint, an SRQ's to next_srq_event. An
  // IBV_EVENT_CQ_ERR of a shared CQ names only the CQ (ev.element.cq; an overrun drops the completion that did not
  // fit without saying whose: rxe_cq.c rxe_cq_post), so it goes to the lowest endpoint (connection, then ACTIVE
  // before PASSIVE) whose QP uses the CQ, or, when no live QP does, whose latest QP used it.
  virtual Status next_async_event(Endpoint e, Millis timeout, std::optional<std::string>* event) = 0;
  virtual Status next_srq_event(int srq, Millis timeout, std::optional<std::string>* event) = 0;
  // The device's port counters by name (rdma_device: /sys/class/infiniband/DEV/ports/1/hw_counters, e.g. rxe's
  // rcvd_rnr_err, the RNR NAKs its requesters received; rxe_hw_counters.c), for a lasso's report; empty when the
  // device has none (siw). Never fails: a counter that cannot be read is left out.
  virtual std::map<std::string, uint64_t> counters() { return {}; }
};

}  // namespace qpcheck::verbs
