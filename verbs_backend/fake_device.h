// A testonly in-process Device: a small synchronous simulation of the endpoints of K RC connections on one device,
// enough to test the conductor without hardware. It follows the library's semantics (spec/lib) where they are what
// rxe and siw do, and the devices where they are measured (docs/rdma-semantics.md):
//  - QPs: rdma_create_qp leaves the QP in INIT (LEGACY); ibv_create_qp in RESET. ibv_modify_qp follows the kernel's
//    qp_state_table (drivers/infiniband/core/verbs.c): an illegal transition is EINVAL. To RESET: every WR is
//    discarded without a completion. To ERR: flush (below). A plain QP's RTR joins it to the peer endpoint's QP
//    (which must exist). iWARP: a plain QP's RTS is EINVAL (siw_qp_nextstate_from_idle: no LLP handle without the
//    iWARP CM).
//  - Posting: no QP, RESET, and a Send in INIT/RTR: EINVAL; a receive on a QP with an SRQ: EINVAL; in ERR both
//    complete at once with IBV_WC_WR_FLUSH_ERR; SQD queues without processing.
//  - Work requests: per-WR completions with the WR's opcode, in order. A QP's send queue is processed in order once
//    it is RTS and its peer's QP is RTR/RTS (else the transport retries: the WR waits). SEND consumes a receive of
//    the peer (its RQ or its SRQ); RDMA WRITE and READ consume none and complete at the sender.
//  - IB: a Send meeting no receive is RNR-NAKed: with rnr_retry 7 it waits for a receive, otherwise the retries are
//    exhausted at once (no timers here): the sender's WC is IBV_WC_RNR_RETRY_EXC_ERR and its QP goes to ERR.
//    iWARP: no RNR: a TERMINATE: the sender's WC is IBV_WC_SUCCESS, both QPs go to ERR, both sides DISCONNECTED.
//  - Flush (to ERR by any cause): every outstanding send WR and every WR on the QP's own receive queue completes
//    with IBV_WC_WR_FLUSH_ERR, in order; an SRQ's WRs stay on the SRQ.
//  - CM: create_id, resolve_addr (ADDR_RESOLVED), resolve_route (ROUTE_RESOLVED), listen; connect of ACTIVE[c]
//    gives PASSIVE[c] its cm_id and CONNECT_REQUEST (no listener: REJECTED, status 8 on IB, -111 on iWARP);
//    rdma_accept moves the passive QP to RTS; IB: the active QP reaches RTS when its ULP retrieves the CM event that
//    follows the REP (librdmacm processes CONNECT_RESPONSE inside rdma_get_cm_event), which also sends the RTU
//    (passive ESTABLISHED); iWARP: both ESTABLISHED at accept. Each QP's rnr_retry comes from the OTHER side's
//    conn_param. reject: the active side's REJECTED (status 28), its QP to ERR when the event is retrieved
//    (librdmacm: ucma_modify_qp_err). disconnect: own QP to ERR; IB: the DREQ gives the peer DISCONNECTED, the
//    initiator's DISCONNECTED comes with the peer's DREP, which is the peer's own rdma_disconnect (kernel cma.c
//    rdma_disconnect), then TIMEWAIT_EXIT on both; iWARP: DISCONNECTED on both at once. destroy_id: no more events;
//    a connected id's peer gets DISCONNECTED. As measured on siw: rdma_connect with no listener fails
//    (ECONNREFUSED), a Send posted after the close fails (ENOTCONN) instead of flushing.
//  - Memory regions (siw-like): reg_mr gives an endpoint's buffer a fresh rkey (also without remote access, as siw's
//    STag); dereg_mr unregisters it, its rkey stays known to the WRs that name it. An RDMA WRITE or READ naming an
//    rkey that is not a registered, valid MR of the peer with remote access fails at the requester with
//    IBV_WC_REM_ACCESS_ERR and both QPs go to ERR (iWARP: both DISCONNECTED too, the TERMINATE). SEND_WITH_INV
//    consumes a receive as a Send and invalidates the receiver's registered MR with that rkey (it stays registered,
//    but no longer allows remote access; nothing revalidates it): the receive completion carries IBV_WC_WITH_INV of
//    that MR; an rkey of no registered MR of the receiver: its receive completes with IBV_WC_REM_INV_REQ_ERR, both
//    QPs go to ERR (siw_qp_rx.c: siw_invalidate_stag fails, a TERMINATE). LOCAL_INV invalidates the sender's own
//    registered MR and completes with IBV_WC_LOCAL_INV (no peer involved), else IBV_WC_LOC_QP_OP_ERR and its QP to
//    ERR (siw_qp_tx.c siw_qp_sq_proc_local). An unsignaled WR completes only with an error or a flush.
//  - Memory windows (type 2, rxe-like: rxe_mw.c): alloc_mw registers the buffer and gives it the window's rkey, which
//    allows no access until bound; IBV_WR_BIND_MW of the endpoint's own window gives it a new rkey at the post (the
//    old one is dead) and, when it runs at the head of the send queue, remote write and read under it (completion
//    IBV_WC_BIND_MW); binding a window that is bound (not FREE) completes with IBV_WC_MW_BIND_ERR, its QP to ERR.
//    SEND_WITH_INV and LOCAL_INV invalidate it as an MR, and a later bind makes it valid again. With
//    Options::memory_windows false (siw: no alloc_mw) alloc_mw fails with EOPNOTSUPP.
//  - Async events: an armed SRQ limit (modify_srq) raises IBV_EVENT_SRQ_LIMIT_REACHED once, when a Send's receive
//    leaves fewer WRs on the SRQ than the limit; nothing else raises one here.
//  - Completion channels: req_notify_cq arms one CQ of an endpoint for one event, raised when the next completion is
//    added to it (flushes included); a completion added while the CQ is not armed raises none, so one that arrives
//    before the ULP arms the CQ is a lost notification (rxe_cq_post, siw_cq_notify_now). next_cq_event takes the
//    CQ's events in order; the endpoint's other CQ keeps its own.
//  - Shared CQs (create_cq): a QP created with a shared CQ of a kind (QpCqs) adds its completions of that kind there,
//    each with its endpoint and kind, in the order they are produced; next_cq_completion takes them in that order.
//    A QP's completions stay when it is destroyed. destroy_cq fails with EBUSY while a QP that exists uses the CQ
//    (the kernel's ib_destroy_cq_user refuses a CQ whose usecnt is not 0, on rxe and siw alike) and discards what is
//    left in it. The depth is not enforced: no overrun, no IBV_EVENT_CQ_ERR.
// Waits never block: nothing pending means a timeout at once.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "verbs_backend/device.h"

namespace qpcheck::verbs {

class FakeDevice : public Device {
 public:
  enum class Transport { kIB, kIWARP };
  struct Options {
    std::string name = "fake0";
    Transport transport = Transport::kIB;
    Status open_error;         // returned by open() when not ok (environment failures)
    std::string fail_api;      // this API fails once with fail_errno (e.g. "ibv_post_send")
    int fail_errno = 0;
    bool memory_windows = true;  // false: alloc_mw fails with EOPNOTSUPP (siw: libibverbs' dummy alloc_mw)
  };
  explicit FakeDevice(Options options) : opt_(std::move(options)) {}

  std::string name() const override { return opt_.name; }
  Status open(Millis timeout) override;
  Status listen() override;
  Status create_id(Endpoint e) override;
  Status resolve_addr(Endpoint e) override;
  Status resolve_route(Endpoint e) override;
  Status create_qp(Endpoint e, int srq, const QpCqs& cqs) override;
  Status create_plain_qp(Endpoint e, const QpCqs& cqs) override;
  Status modify_qp(Endpoint e, QpState state, const QpAttrs& attrs) override;
  Status destroy_qp(Endpoint e) override;
  Status destroy_id(Endpoint e) override;
  Status create_srq(int srq) override;
  Status post_srq_recv(int srq, int count) override;
  Status post_recv(Endpoint e, int count) override;
  Status post_send(Endpoint e, const SendWr& wr) override;
  Status reg_mr(Endpoint e, int mr, bool remote) override;
  Status alloc_mw(Endpoint e, int mr) override;
  Status dereg_mr(Endpoint e, int mr) override;
  Status connect(Endpoint e, const ConnParam& param) override;
  Status accept(Endpoint e, const ConnParam& param) override;
  Status reject(Endpoint e, int private_data, int length) override;
  Status disconnect(Endpoint e) override;
  Status notify(Endpoint e) override;
  Status modify_srq(int srq, int limit) override;
  Status next_async_event(Endpoint e, Millis timeout, std::optional<std::string>* event) override;
  Status next_srq_event(int srq, Millis timeout, std::optional<std::string>* event) override;
  Status next_cm_event(Endpoint e, Millis timeout, std::optional<std::string>* event) override;
  Status next_send_completion(Endpoint e, Millis timeout, std::optional<Completion>* wc) override;
  Status next_recv_completion(Endpoint e, Millis timeout, std::optional<Completion>* wc) override;
  Status req_notify_cq(Endpoint e, CqKind cq) override;
  Status next_cq_event(Endpoint e, CqKind cq, Millis timeout, bool* got) override;
  Status req_notify_shared_cq(int cq) override;
  Status next_shared_cq_event(int cq, Millis timeout, bool* got) override;
  Status create_cq(int cq, int depth) override;
  Status destroy_cq(int cq) override;
  Status next_cq_completion(int cq, Millis timeout, std::optional<CqEntry>* entry) override;
  // rcvd_rnr_err: RNR NAKs so far, one each time a Send meets an empty receive queue with rnr_retry 7 and is retried
  // (every delivery attempt; a wait for a completion is one).
  std::map<std::string, uint64_t> counters() override;

 private:
  // reg_mr and alloc_mw: buffer mr of e registered under `api` as an MR or a type 2 window (fake_device.cc).
  Status register_buffer(Endpoint e, int mr, const char* api, bool window, bool remote);
  enum class Cm { kNone, kIdle, kAddr, kRoute, kConnecting, kRequested, kConnected, kDone };
  // A send WR posted and not completed.
  struct Wqe {
    WrOpcode op = WrOpcode::kSend;
    std::string opcode;           // its IBV_WC_* opcode
    bool names_mr = false;        // WRITE / READ: to the peer's buffer with `rkey` (else its Send/receive MR)
    uint32_t rkey = 0;            // WRITE / READ / SEND_WITH_INV: the peer's buffer's; LOCAL_INV, BIND_MW: the own
                                  // buffer's (BIND_MW: the new rkey it binds the window with)
    int mr = -1;                  // BIND_MW: the window's buffer
    bool signaled = true;
  };
  // One data buffer's memory region (reg_mr) or type 2 memory window (alloc_mw).
  struct Mr {
    bool registered = false;
    bool window = false;          // alloc_mw: remote access only while bound (valid)
    bool remote = false;          // REMOTE_WRITE | REMOTE_READ (a window: from its first bind on)
    bool valid = true;            // false once invalidated (SEND_WITH_INV, LOCAL_INV); a window: false until bound
    uint32_t rkey = 0;            // the current rkey, or the last one (deregistered)
  };
  // One CQ, an endpoint's own or a shared one: its completions, oldest first, each with its endpoint and kind, and its
  // completion channel's state. An armed CQ (req_notify_cq) raises one event at the next completion added to it,
  // flushes included, and disarms (rxe_cq_post, siw_cq_notify_now); a completion added while it is not armed raises
  // none.
  struct Cq {
    bool made = false;            // an endpoint's own CQ: made with the first QP of the endpoint that uses it
    std::deque<CqEntry> wcs;
    bool armed = false;
    int events = 0;               // events raised and not yet taken (next_cq_event)
    void add(CqEntry c);
  };
  struct Side {
    Cm cm = Cm::kNone;            // the cm_id's state (kNone: no cm_id; kDone: destroyed)
    bool qp = false;              // has a QP
    bool plain = false;           // made by ibv_create_qp
    QpState state = QpState::kReset;
    bool joined = false;          // the QP is joined to the peer's (CM: at RTS; plain: at RTR)
    int srq = -1;
    int recvs = 0;                // receive WRs on the QP's own receive queue
    std::deque<Wqe> sq;           // send WRs posted and not completed
    std::map<int, Mr> mrs;        // data buffer -> its memory region (present once registered)
    int rnr_retry = 7;            // this QP's RNR retry limit
    int peer_rnr_retry = 7;       // the rnr_retry_count this side's conn_param gave the peer's QP
    bool rep_pending = false;     // ACTIVE: a REP waits for the ULP's rdma_get_cm_event
    int rep_data = 0;             // ACTIVE: the private data of the REP (its first byte), shown with ESTABLISHED
    bool established = false;     // ESTABLISHED queued (once per cm_id)
    bool disconnected = false;    // DISCONNECTED queued (once)
    bool disconnect_sent = false; // IB: this side sent the DREQ and waits for the peer's DREP
    bool cqs = false;             // has had a QP (its CQs exist from then on, own or shared)
    QpCqs cq;                     // the CQs of its latest QP (-1: its own of that kind)
    std::deque<std::string> events;
    Cq send_cq, recv_cq;          // its own CQs
    std::deque<std::string> async;  // async events (the fake device raises none of its own yet)
  };
  Side& side(Endpoint e) { return sides_[e]; }
  bool injected(const char* api, Status* st);
  void event(Endpoint e, const std::string& ev);
  void to_err(Endpoint e);       // the QP enters ERR: flush
  void discard(Endpoint e);      // RESET / destroy: every WR gone without a completion
  void disconnected(Endpoint e); // DISCONNECTED for e, once
  void deliver();                // moves every send queue as far as it can go
  void complete(Endpoint e, const Wqe& w, int status);  // a send completion, unless successful and unsignaled
  // A completion of e's QP goes to the CQ of that kind of e's QP: its own or a shared one.
  void add(Endpoint e, CqKind kind, Completion c);
  // The CQ of that kind of e's latest QP, or nullptr with *why set (no QP yet; a shared CQ destroyed since).
  Cq* cq_of(Endpoint e, CqKind kind, std::string* why);
  // A QP of e with `cqs` may be created: the shared CQs it names exist (else EINVAL from `api`).
  Status check_cqs(const char* api, const QpCqs& cqs);
  void adopt_cqs(Side& s, const QpCqs& cqs);  // a new QP's CQs: its own ones made where it uses them
  int find_mr(Endpoint owner, uint32_t rkey);        // owner's registered buffer with that rkey, or -1
  uint32_t rkey_of(Endpoint owner, int mr);          // its current or last rkey; 0: never registered
  void terminate(Endpoint e);    // e and its peer to ERR (iWARP: both DISCONNECTED, the TERMINATE)

  Options opt_;
  bool open_ = false;
  bool listening_ = false;
  std::map<Endpoint, Side> sides_;
  std::map<int, int> srqs_;      // SRQ -> receive WRs posted on it
  std::map<int, int> srq_limits_;  // SRQ -> armed srq_limit (0: not armed)
  std::map<int, std::deque<std::string>> srq_events_;
  std::map<int, Cq> shared_cqs_;   // create_cq .. destroy_cq
  uint64_t rnr_naks_ = 0;
  uint32_t next_rkey_ = 0x100;   // the next reg_mr's or alloc_mw's rkey (0 is never one; the low 8 bits are the key)
};

}  // namespace qpcheck::verbs
