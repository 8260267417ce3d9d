#include "verbs_backend/fake_device.h"

#include <cerrno>

#include <fmt/format.h>

#include "verbs_backend/replay_ops.h"

namespace qpcheck::verbs {

namespace {

Completion wc(int status, std::string opcode, int srq = -1) {
  return Completion{status, std::string(kWcStatusNames.at(status)), std::move(opcode), srq};
}
constexpr int kSuccess = 0, kLocQpOpErr = 2, kFlush = 5, kMwBindErr = 6, kRemInvReqErr = 9, kRemAccessErr = 10,
              kRnrRetryExc = 13;

// ibv_inc_rkey (verbs.h): the low 8 bits of an rkey are its key, incremented by every bind of a window.
uint32_t inc_rkey(uint32_t rkey) { return (rkey & ~0xffu) | ((rkey + 1) & 0xffu); }

// qp_state_table[cur][next].valid of the kernel's drivers/infiniband/core/verbs.c (Linux 6.1), ibv_qp_state order.
bool legal(QpState from, QpState to) {
  using S = QpState;
  switch (from) {
    case S::kReset: return to == S::kReset || to == S::kInit;
    case S::kInit: return to == S::kReset || to == S::kErr || to == S::kInit || to == S::kRtr;
    case S::kRtr: return to == S::kReset || to == S::kErr || to == S::kRts;
    case S::kRts: return to == S::kReset || to == S::kErr || to == S::kRts || to == S::kSqd;
    case S::kSqd: return to == S::kReset || to == S::kErr || to == S::kRts || to == S::kSqd;
    case S::kSqe: return to == S::kReset || to == S::kErr || to == S::kRts;
    case S::kErr: return to == S::kReset || to == S::kErr;
  }
  return false;
}

bool receiving(QpState s) { return s == QpState::kRtr || s == QpState::kRts; }

}  // namespace

bool FakeDevice::injected(const char* api, Status* st) {
  if (opt_.fail_api != api) return false;
  opt_.fail_api.clear();
  *st = fail(api, opt_.fail_errno, "injected by the test");
  return true;
}

void FakeDevice::event(Endpoint e, const std::string& ev) {
  Side& s = side(e);
  if (s.cm != Cm::kNone && s.cm != Cm::kDone) s.events.push_back(ev);
}

Status FakeDevice::open(Millis) {
  if (!opt_.open_error.ok()) return opt_.open_error;
  open_ = true;
  return Status::success();
}

Status FakeDevice::listen() {
  Status st;
  if (injected("rdma_listen", &st)) return st;
  if (listening_) return fail("rdma_listen", EINVAL, "already listening");
  listening_ = true;
  return st;
}

Status FakeDevice::create_id(Endpoint e) {
  Status st;
  if (injected("rdma_create_id", &st)) return st;
  Side& s = side(e);
  if (e.side != Ep::kActive) return fail("rdma_create_id", EINVAL, "a PASSIVE cm_id comes from its CONNECT_REQUEST");
  if (s.cm != Cm::kNone) return fail("rdma_create_id", EEXIST, e.text() + " already has a cm_id");
  s.cm = Cm::kIdle;
  return st;
}

Status FakeDevice::resolve_addr(Endpoint e) {
  Status st;
  if (injected("rdma_resolve_addr", &st)) return st;
  Side& s = side(e);
  if (s.cm != Cm::kIdle) return fail("rdma_resolve_addr", EINVAL, e.text() + ": no fresh cm_id");
  s.cm = Cm::kAddr;
  event(e, "RDMA_CM_EVENT_ADDR_RESOLVED");
  return st;
}

Status FakeDevice::resolve_route(Endpoint e) {
  Status st;
  if (injected("rdma_resolve_route", &st)) return st;
  Side& s = side(e);
  if (s.cm != Cm::kAddr) return fail("rdma_resolve_route", EINVAL, e.text() + ": address not resolved");
  s.cm = Cm::kRoute;
  event(e, "RDMA_CM_EVENT_ROUTE_RESOLVED");
  return st;
}

Status FakeDevice::create_qp(Endpoint e, int srq, const QpCqs& cqs) {
  Status st;
  if (injected("rdma_create_qp", &st)) return st;
  Side& s = side(e);
  if (s.cm == Cm::kNone || s.cm == Cm::kDone) {
    return fail("rdma_create_qp", EINVAL,
                e.side == Ep::kPassive ? "no cm_id yet (PASSIVE: before its CONNECT_REQUEST)" : "no cm_id");
  }
  if (s.qp) return fail("rdma_create_qp", EINVAL, "the cm_id already has a QP");
  if (srq >= 0 && !srqs_.count(srq)) return fail("rdma_create_qp", EINVAL, fmt::format("no SRQ {}", srq));
  if (Status c = check_cqs("rdma_create_qp", cqs); !c.ok()) return c;
  s.qp = true;
  s.plain = false;
  s.state = QpState::kInit;
  s.joined = false;
  s.srq = srq;
  adopt_cqs(s, cqs);
  return st;
}

Status FakeDevice::create_plain_qp(Endpoint e, const QpCqs& cqs) {
  Status st;
  if (injected("ibv_create_qp", &st)) return st;
  Side& s = side(e);
  if (s.qp) return fail("ibv_create_qp", EEXIST, e.text() + " already has a QP");
  if (Status c = check_cqs("ibv_create_qp", cqs); !c.ok()) return c;
  s.qp = true;
  s.plain = true;
  s.state = QpState::kReset;
  s.joined = false;
  s.srq = -1;
  adopt_cqs(s, cqs);
  return st;
}

Status FakeDevice::check_cqs(const char* api, const QpCqs& cqs) {
  for (CqKind k : {CqKind::kSend, CqKind::kRecv}) {
    if (cqs.of(k) >= 0 && !shared_cqs_.count(cqs.of(k))) {
      return fail(api, EINVAL, fmt::format("{}: no shared CQ {}", cq_kind_name(k), cqs.of(k)));
    }
  }
  return Status::success();
}

void FakeDevice::adopt_cqs(Side& s, const QpCqs& cqs) {
  s.cq = cqs;
  s.cqs = true;
  if (cqs.send < 0) s.send_cq.made = true;
  if (cqs.recv < 0) s.recv_cq.made = true;
}

FakeDevice::Cq* FakeDevice::cq_of(Endpoint e, CqKind kind, std::string* why) {
  Side& s = side(e);
  if (!s.cqs) {
    *why = "no CQ (no QP created on this endpoint)";
    return nullptr;
  }
  int c = s.cq.of(kind);
  if (c < 0) {
    Cq& own = kind == CqKind::kSend ? s.send_cq : s.recv_cq;
    if (own.made) return &own;
    *why = fmt::format("no own {} (the endpoint's QPs use shared CQs)", cq_kind_name(kind));
    return nullptr;
  }
  auto it = shared_cqs_.find(c);
  if (it != shared_cqs_.end()) return &it->second;
  *why = fmt::format("{}'s {} is shared CQ {}, which does not exist (destroyed)", e.text(), cq_kind_name(kind), c);
  return nullptr;
}

void FakeDevice::add(Endpoint e, CqKind kind, Completion c) {
  std::string why;
  // A QP's CQs exist while it does: ib_destroy_cq_user refuses a CQ a QP uses (destroy_cq).
  if (Cq* q = cq_of(e, kind, &why)) q->add(CqEntry{e, kind, std::move(c)});
}

Status FakeDevice::modify_qp(Endpoint e, QpState to, const QpAttrs& attrs) {
  Status st;
  if (injected("ibv_modify_qp", &st)) return st;
  Side& s = side(e);
  if (!s.qp) return fail("ibv_modify_qp", EINVAL, e.text() + " has no QP");
  if (!legal(s.state, to)) {
    return fail("ibv_modify_qp", EINVAL, fmt::format("{} -> {} is not in qp_state_table", qp_state_name(s.state),
                                                     qp_state_name(to)));
  }
  if (to == QpState::kRtr && s.state == QpState::kInit) {
    Side& p = side(e.peer());
    if (!p.qp) return fail("ibv_modify_qp", EINVAL, fmt::format("RTR needs the peer's QP number, and {} has no QP yet", e.peer().text()));
    s.joined = true;
  }
  if (to == QpState::kRts && s.state == QpState::kRtr) {
    if (opt_.transport == Transport::kIWARP && s.plain) {
      return fail("ibv_modify_qp", EINVAL, "siw: RTS needs the iWARP CM's socket (siw_qp_nextstate_from_idle)");
    }
    s.rnr_retry = attrs.rnr_retry;
  }
  if (to == QpState::kReset) {
    discard(e);
    s.state = to;
    s.joined = false;
    return st;
  }
  if (to == QpState::kErr) {
    to_err(e);
    return st;
  }
  s.state = to;
  deliver();
  return st;
}

Status FakeDevice::destroy_qp(Endpoint e) {
  Side& s = side(e);
  const char* api = s.plain ? "ibv_destroy_qp" : "rdma_destroy_qp";
  Status st;
  if (injected(api, &st)) return st;
  if (!s.qp) return fail(api, EINVAL, e.text() + " has no QP");
  discard(e);
  s.qp = false;
  s.joined = false;
  s.state = QpState::kReset;
  return st;
}

Status FakeDevice::destroy_id(Endpoint e) {
  Status st;
  if (injected("rdma_destroy_id", &st)) return st;
  Side& s = side(e);
  if (s.cm == Cm::kNone || s.cm == Cm::kDone) return fail("rdma_destroy_id", EINVAL, e.text() + " has no cm_id");
  bool connected = s.cm == Cm::kConnected && !s.disconnected;
  s.cm = Cm::kDone;
  s.events.clear();
  if (connected) disconnected(e.peer());  // the DREQ (ib_destroy_cm_id -> cm_destroy_id)
  return st;
}

Status FakeDevice::create_srq(int srq) {
  Status st;
  if (injected("ibv_create_srq", &st)) return st;
  if (srqs_.count(srq)) return fail("ibv_create_srq", EEXIST, fmt::format("SRQ {} exists", srq));
  srqs_[srq] = 0;
  return st;
}

Status FakeDevice::post_srq_recv(int srq, int count) {
  Status st;
  if (injected("ibv_post_srq_recv", &st)) return st;
  auto it = srqs_.find(srq);
  if (it == srqs_.end()) return fail("ibv_post_srq_recv", EINVAL, fmt::format("no SRQ {}", srq));
  it->second += count;
  deliver();
  return st;
}

Status FakeDevice::post_recv(Endpoint e, int count) {
  Status st;
  if (injected("ibv_post_recv", &st)) return st;
  Side& s = side(e);
  if (!s.qp) return fail("ibv_post_recv", EINVAL, "no QP");
  if (s.srq >= 0) return fail("ibv_post_recv", EINVAL, "the QP receives from an SRQ");
  if (s.state == QpState::kReset) return fail("ibv_post_recv", EINVAL, "QP in RESET");
  if (s.state == QpState::kErr) {
    for (int i = 0; i < count; ++i) add(e, CqKind::kRecv, wc(kFlush, "IBV_WC_RECV"));
    return st;
  }
  s.recvs += count;
  deliver();
  return st;
}

Status FakeDevice::post_send(Endpoint e, const SendWr& wr) {
  Status st;
  if (injected("ibv_post_send", &st)) return st;
  Side& s = side(e);
  const WrOpcode op = wr.op;
  Wqe w;
  w.op = op;
  w.signaled = wr.signaled;
  switch (op) {
    case WrOpcode::kSend:
    case WrOpcode::kSendWithInv: w.opcode = "IBV_WC_SEND"; break;  // rxe_comp.c wr_to_wc_opcode
    case WrOpcode::kRdmaWrite: w.opcode = "IBV_WC_RDMA_WRITE"; break;
    case WrOpcode::kRdmaRead: w.opcode = "IBV_WC_RDMA_READ"; break;
    case WrOpcode::kLocalInv: w.opcode = "IBV_WC_LOCAL_INV"; break;
    case WrOpcode::kBindMw: w.opcode = "IBV_WC_BIND_MW"; break;
  }
  if (op != WrOpcode::kSend && op != WrOpcode::kBindMw && wr.mr >= 0) {
    w.names_mr = op == WrOpcode::kRdmaWrite || op == WrOpcode::kRdmaRead;
    w.rkey = rkey_of(op == WrOpcode::kLocalInv ? e : e.peer(), wr.mr);
  }
  if (!s.qp) return fail("ibv_post_send", EINVAL, "no QP");
  // BIND_MW: the window takes its new rkey when the post succeeds (the caller's copy, as the rdma device keeps it);
  // the bind itself runs at the head of the send queue (deliver).
  Mr* window = nullptr;
  if (op == WrOpcode::kBindMw) {
    auto it = s.mrs.find(wr.mr);
    if (it == s.mrs.end() || !it->second.registered || !it->second.window) {
      return fail("ibv_post_send", EINVAL,
                  fmt::format("IBV_WR_BIND_MW: {}'s buffer {} is not a memory window", e.text(), wr.mr));
    }
    window = &it->second;
    w.mr = wr.mr;
    w.rkey = inc_rkey(window->rkey);
  }
  auto posted = [&] {
    if (window) window->rkey = w.rkey;
  };
  if (s.state == QpState::kErr && opt_.transport == Transport::kIWARP && s.disconnected) {
    // siw_post_send: a user QP's doorbell after the connection closed: -ENOTCONN (libsiw returns -1, errno set)
    return fail("ibv_post_send", ENOTCONN, "");
  }
  if (s.state == QpState::kErr) {
    add(e, CqKind::kSend, wc(kFlush, w.opcode));  // a flush completes, signaled or not
    posted();
    return st;
  }
  if (s.state != QpState::kRts && s.state != QpState::kSqd) return fail("ibv_post_send", EINVAL, "QP not in RTS");
  if ((op == WrOpcode::kRdmaWrite || op == WrOpcode::kRdmaRead) && !w.names_mr && !side(e.peer()).cqs) {
    return fail("ibv_post_send", EINVAL, e.peer().text() + " has no memory region");
  }
  s.sq.push_back(w);
  posted();
  deliver();
  return st;
}

// A buffer of e becomes registered under `api`: an MR (valid at once, remote access or not) or a type 2 window (no
// access until a bind: rxe_alloc_mw starts it FREE). Either way it gets a new rkey.
Status FakeDevice::register_buffer(Endpoint e, int mr, const char* api, bool window, bool remote) {
  Status st;
  if (injected(api, &st)) return st;
  Mr& m = side(e).mrs[mr];
  if (m.registered) return fail(api, EEXIST, fmt::format("{}'s buffer {} is registered", e.text(), mr));
  m.registered = true;
  m.window = window;
  m.remote = remote;
  m.valid = !window;
  m.rkey = next_rkey_;
  next_rkey_ += 0x100;
  return st;
}

Status FakeDevice::reg_mr(Endpoint e, int mr, bool remote) { return register_buffer(e, mr, "ibv_reg_mr", false, remote); }

Status FakeDevice::alloc_mw(Endpoint e, int mr) {
  if (!opt_.memory_windows) {
    Status st;
    if (injected("ibv_alloc_mw", &st)) return st;
    return fail("ibv_alloc_mw", EOPNOTSUPP, "the device has no memory windows");
  }
  return register_buffer(e, mr, "ibv_alloc_mw", true, false);
}

Status FakeDevice::dereg_mr(Endpoint e, int mr) {
  Status st;
  if (injected("ibv_dereg_mr", &st)) return st;
  auto it = side(e).mrs.find(mr);
  if (it == side(e).mrs.end() || !it->second.registered) {
    return fail("ibv_dereg_mr", EINVAL, fmt::format("{}'s buffer {} is not registered", e.text(), mr));
  }
  it->second.registered = false;  // the rkey stays: a WR may still name it (a window: ibv_dealloc_mw, its MR)
  it->second.window = false;
  return st;
}

uint32_t FakeDevice::rkey_of(Endpoint owner, int mr) {
  auto it = side(owner).mrs.find(mr);
  return it == side(owner).mrs.end() ? 0 : it->second.rkey;
}

int FakeDevice::find_mr(Endpoint owner, uint32_t rkey) {
  for (const auto& [i, m] : side(owner).mrs) {
    if (m.registered && rkey != 0 && m.rkey == rkey) return i;
  }
  return -1;
}

void FakeDevice::complete(Endpoint e, const Wqe& w, int status) {
  if (w.signaled || status != kSuccess) add(e, CqKind::kSend, wc(status, w.opcode));  // rxe_comp.c do_complete
}

void FakeDevice::terminate(Endpoint e) {
  for (Endpoint x : {e, e.peer()}) {
    to_err(x);
    if (opt_.transport == Transport::kIWARP) disconnected(x);
  }
}

// The " (data N)" an event with the ULP's private data carries (Device::next_cm_event); none for 0.
static std::string data_suffix(int data) { return data ? fmt::format(" (data {})", data) : std::string(); }

// IB: the most private data a ULP may pass with a REQ (92 bytes less the rdma_cm header of 36: cma_user_data_offset),
// a REP and a REJ (ib_cm.h IB_CM_*_PRIVATE_DATA_SIZE; cm.c cm_validate_req_param, ib_send_cm_rep, ib_send_cm_rej:
// EINVAL beyond). iWARP carries up to 512 bytes in an MPA frame (siw_connect, MPA_MAX_PRIVDATA): more than the 255 a
// conn_param can name.
constexpr int kIbReqPrivateData = 56;
constexpr int kIbRepPrivateData = 196;
constexpr int kIbRejPrivateData = 148;

Status FakeDevice::connect(Endpoint e, const ConnParam& param) {
  Status st;
  if (injected("rdma_connect", &st)) return st;
  Side& s = side(e);
  if (e.side != Ep::kActive) return fail("rdma_connect", EINVAL, "only an ACTIVE cm_id connects");
  if (s.cm != Cm::kRoute) return fail("rdma_connect", EINVAL, e.text() + ": route not resolved");
  if (s.qp && s.state != QpState::kInit) return fail("rdma_connect", EINVAL, "the QP is not in INIT");
  if (opt_.transport == Transport::kIB && param.private_data_len > kIbReqPrivateData) {
    return fail("rdma_connect", EINVAL, fmt::format("{} bytes of private data on a REQ", param.private_data_len));
  }
  s.cm = Cm::kConnecting;
  s.peer_rnr_retry = param.rnr_retry_count;
  if (!listening_) {
    s.cm = Cm::kRoute;
    // siw connects its TCP socket inside rdma_connect (siw_cm.c siw_connect: kernel_bindconnect)
    if (opt_.transport == Transport::kIWARP) return fail("rdma_connect", ECONNREFUSED, "");
    event(e, "RDMA_CM_EVENT_REJECTED (status 8)");  // IB_CM_REJ_INVALID_SERVICE_ID
    return st;
  }
  Side& p = side(e.peer());
  if (p.cm != Cm::kNone) return fail("rdma_connect", EINVAL, e.peer().text() + " exists already");
  p.cm = Cm::kRequested;
  event(e.peer(), "RDMA_CM_EVENT_CONNECT_REQUEST" + data_suffix(param.private_data));
  return st;
}

Status FakeDevice::accept(Endpoint e, const ConnParam& param) {
  Status st;
  if (injected("rdma_accept", &st)) return st;
  Side& s = side(e);
  Endpoint a = e.peer();
  Side& act = side(a);
  if (e.side != Ep::kPassive || s.cm != Cm::kRequested || !s.qp || s.state != QpState::kInit) {
    return fail("rdma_accept", EINVAL, "no passive QP in INIT with a CONNECT_REQUEST");
  }
  if (opt_.transport == Transport::kIB && param.private_data_len > kIbRepPrivateData) {
    // cma.c rdma_accept, label reject: the QP to ERR and a consumer REJ (28) without data
    to_err(e);
    s.cm = Cm::kIdle;
    act.cm = Cm::kIdle;
    event(a, "RDMA_CM_EVENT_REJECTED (status 28)");
    return fail("rdma_accept", EINVAL, fmt::format("{} bytes of private data on a REP", param.private_data_len));
  }
  s.peer_rnr_retry = param.rnr_retry_count;
  s.rnr_retry = act.peer_rnr_retry;
  act.rep_data = param.private_data;
  s.state = QpState::kRts;
  s.joined = true;
  s.cm = Cm::kConnected;
  if (opt_.transport == Transport::kIB) {
    act.rep_pending = true;
  } else {
    // iw_cm: both QPs move to RTS in the kernel; the MPA exchange completes without the ULP.
    s.established = true;
    event(e, "RDMA_CM_EVENT_ESTABLISHED");
    if (act.qp) {
      act.state = QpState::kRts;
      act.joined = true;
      act.rnr_retry = param.rnr_retry_count;
    }
    act.cm = Cm::kConnected;
    act.established = true;
    event(a, "RDMA_CM_EVENT_ESTABLISHED" + data_suffix(act.rep_data));
  }
  deliver();
  return st;
}

Status FakeDevice::reject(Endpoint e, int private_data, int length) {
  Status st;
  if (injected("rdma_reject", &st)) return st;
  Side& s = side(e);
  if (e.side != Ep::kPassive || s.cm != Cm::kRequested) return fail("rdma_reject", EINVAL, "no connection request");
  if (opt_.transport == Transport::kIB && length > kIbRejPrivateData) {
    return fail("rdma_reject", EINVAL, fmt::format("{} bytes of private data on a REJ", length));
  }
  s.cm = Cm::kIdle;
  side(e.peer()).cm = Cm::kIdle;
  // IB_CM_REJ_CONSUMER_DEFINED; siw: -ECONNRESET (siw_proc_mpareply)
  const int status = opt_.transport == Transport::kIB ? 28 : -104;
  event(e.peer(), fmt::format("RDMA_CM_EVENT_REJECTED (status {}){}", status, data_suffix(private_data)));
  return st;
}

Status FakeDevice::disconnect(Endpoint e) {
  Status st;
  if (injected("rdma_disconnect", &st)) return st;
  Side& s = side(e);
  if (s.cm != Cm::kConnected || !s.qp) return fail("rdma_disconnect", EINVAL, "not connected");
  to_err(e);
  Side& p = side(e.peer());
  if (opt_.transport == Transport::kIWARP) {
    // the TCP close tells both sides
    disconnected(e);
    disconnected(e.peer());
    return st;
  }
  if (p.disconnect_sent) {
    // e answers the peer's DREQ: the DREP tells the peer; both cm_ids then leave timewait
    disconnected(e);
    disconnected(e.peer());
    event(e, "RDMA_CM_EVENT_TIMEWAIT_EXIT");
    event(e.peer(), "RDMA_CM_EVENT_TIMEWAIT_EXIT");
  } else if (!s.disconnect_sent && !s.disconnected) {
    s.disconnect_sent = true;  // the DREQ: the peer is told; e hears only the peer's DREP
    disconnected(e.peer());
  }
  return st;
}

void FakeDevice::disconnected(Endpoint e) {
  Side& s = side(e);
  if (s.disconnected) return;
  s.disconnected = true;
  event(e, "RDMA_CM_EVENT_DISCONNECTED");
}

void FakeDevice::to_err(Endpoint e) {
  Side& s = side(e);
  if (!s.qp) return;
  s.state = QpState::kErr;
  for (; !s.sq.empty(); s.sq.pop_front()) add(e, CqKind::kSend, wc(kFlush, s.sq.front().opcode));
  for (; s.recvs > 0; --s.recvs) add(e, CqKind::kRecv, wc(kFlush, "IBV_WC_RECV"));
}

void FakeDevice::discard(Endpoint e) {
  Side& s = side(e);
  s.sq.clear();
  s.recvs = 0;
}

void FakeDevice::deliver() {
  for (bool moved = true; moved;) {
    moved = false;
    for (auto& [e, s] : sides_) {
      if (!s.qp || s.state != QpState::kRts || !s.joined || s.sq.empty()) continue;
      Endpoint pe = e.peer();
      const Wqe w = s.sq.front();
      if (w.op == WrOpcode::kLocalInv) {  // local: no packet, no peer
        s.sq.pop_front();
        auto m = s.mrs.find(find_mr(e, w.rkey));
        if (m != s.mrs.end()) {
          m->second.valid = false;
          complete(e, w, kSuccess);
        } else {
          complete(e, w, kLocQpOpErr);
          to_err(e);
        }
        moved = true;
        continue;
      }
      if (w.op == WrOpcode::kBindMw) {  // local as well: rxe_do_local_ops, rxe_bind_mw
        s.sq.pop_front();
        auto m = s.mrs.find(w.mr);
        if (m != s.mrs.end() && m->second.registered && m->second.window && !m->second.valid) {
          m->second.valid = true;
          m->second.remote = true;
          complete(e, w, kSuccess);
        } else {  // a bound window is not FREE (rxe_check_bind_mw, o10-37.2.30); a deallocated one is gone
          complete(e, w, kMwBindErr);
          to_err(e);
        }
        moved = true;
        continue;
      }
      Side& r = side(pe);
      if (!r.qp || !receiving(r.state)) continue;  // dropped and retried by the transport
      if (w.op == WrOpcode::kRdmaWrite || w.op == WrOpcode::kRdmaRead) {
        s.sq.pop_front();
        auto m = r.mrs.find(find_mr(pe, w.rkey));
        if (w.names_mr && (m == r.mrs.end() || !m->second.valid || !m->second.remote)) {
          complete(e, w, kRemAccessErr);
          terminate(e);
        } else {
          complete(e, w, kSuccess);
        }
        moved = true;
        continue;
      }
      int* pool = r.srq >= 0 ? &srqs_[r.srq] : &r.recvs;
      if (*pool > 0) {
        --*pool;
        if (r.srq >= 0 && srq_limits_[r.srq] > 0 && *pool < srq_limits_[r.srq]) {
          srq_limits_[r.srq] = 0;  // ibv_modify_srq.3: raised once, then disarmed
          srq_events_[r.srq].push_back("IBV_EVENT_SRQ_LIMIT_REACHED");
        }
        s.sq.pop_front();
        moved = true;
        if (w.op == WrOpcode::kSendWithInv) {
          auto m = r.mrs.find(find_mr(pe, w.rkey));
          if (m == r.mrs.end()) {  // siw_invalidate_stag fails: the receive errs, a TERMINATE
            add(pe, CqKind::kRecv, wc(kRemInvReqErr, "IBV_WC_RECV", r.srq));
            complete(e, w, kSuccess);
            terminate(e);
            continue;
          }
          m->second.valid = false;
          Completion c = wc(kSuccess, "IBV_WC_RECV", r.srq);
          c.inv_mr = m->first;
          c.invalidated = fmt::format("MR {}", m->first);
          add(pe, CqKind::kRecv, c);
          complete(e, w, kSuccess);
          continue;
        }
        add(pe, CqKind::kRecv, wc(kSuccess, "IBV_WC_RECV", r.srq));
        complete(e, w, kSuccess);
        continue;
      }
      if (opt_.transport == Transport::kIB) {
        if (s.rnr_retry == 7) {  // RNR NAK, retried until a receive is posted
          ++rnr_naks_;
          continue;
        }
        s.sq.pop_front();
        complete(e, w, kRnrRetryExc);
        to_err(e);
        moved = true;
        continue;
      }
      // iWARP: DDP TERMINATE, both sides torn down.
      s.sq.pop_front();
      complete(e, w, kSuccess);
      for (Endpoint x : {e, pe}) {
        to_err(x);
        disconnected(x);
      }
      moved = true;
    }
  }
}

Status FakeDevice::next_cm_event(Endpoint e, Millis, std::optional<std::string>* event) {
  event->reset();
  Side& s = side(e);
  if (s.cm == Cm::kNone && e.side == Ep::kActive) return fail("rdma_get_cm_event", EINVAL, e.text() + " has no cm_id");
  if (s.cm == Cm::kDone) return fail("rdma_get_cm_event", EINVAL, e.text() + "'s cm_id was destroyed");
  if (e.side == Ep::kActive && s.rep_pending) {  // librdmacm: CONNECT_RESPONSE -> RTR, RTS, RTU -> ESTABLISHED
    s.rep_pending = false;
    Side& p = side(e.peer());
    if (!s.qp || s.state == QpState::kInit) {
      if (s.qp) {
        s.state = QpState::kRts;
        s.joined = true;
        s.rnr_retry = p.peer_rnr_retry;
      }
      s.cm = Cm::kConnected;
      s.established = true;
      s.events.push_back("RDMA_CM_EVENT_ESTABLISHED" + data_suffix(s.rep_data));
      if (!p.established) {
        p.established = true;
        this->event(e.peer(), "RDMA_CM_EVENT_ESTABLISHED");
      }
      deliver();
    }
  }
  if (!s.events.empty()) {
    *event = s.events.front();
    s.events.pop_front();
    if ((*event)->rfind("RDMA_CM_EVENT_REJECTED", 0) == 0 && s.qp) to_err(e);  // librdmacm ucma_modify_qp_err
  }
  return Status::success();
}

Status FakeDevice::next_send_completion(Endpoint e, Millis, std::optional<Completion>* out) {
  Side& s = side(e);
  out->reset();
  if (!s.cqs) return fail("ibv_poll_cq", EINVAL, "no CQ (no QP created on this endpoint)");
  if (!s.send_cq.made) return fail("ibv_poll_cq", EINVAL, "no own SEND_CQ (the endpoint's QPs use shared CQs)");
  if (s.send_cq.wcs.empty()) deliver();  // a requester waiting on its CQ retries (an RNR NAK each time, rnr_retry 7)
  if (!s.send_cq.wcs.empty()) {
    *out = s.send_cq.wcs.front().wc;
    s.send_cq.wcs.pop_front();
  }
  return Status::success();
}

Status FakeDevice::next_recv_completion(Endpoint e, Millis, std::optional<Completion>* out) {
  Side& s = side(e);
  out->reset();
  if (!s.cqs) return fail("ibv_poll_cq", EINVAL, "no CQ (no QP created on this endpoint)");
  if (!s.recv_cq.made) return fail("ibv_poll_cq", EINVAL, "no own RECV_CQ (the endpoint's QPs use shared CQs)");
  if (!s.recv_cq.wcs.empty()) {
    *out = s.recv_cq.wcs.front().wc;
    s.recv_cq.wcs.pop_front();
  }
  return Status::success();
}

Status FakeDevice::create_cq(int cq, int depth) {
  Status st;
  if (injected("ibv_create_cq", &st)) return st;
  if (cq < 0 || cq >= kMaxSharedCqs) return fail("ibv_create_cq", EINVAL, fmt::format("no shared CQ {} (0..15)", cq));
  if (depth < 1) return fail("ibv_create_cq", EINVAL, fmt::format("depth {}", depth));
  if (shared_cqs_.count(cq)) return fail("ibv_create_cq", EEXIST, fmt::format("shared CQ {} exists", cq));
  shared_cqs_[cq].made = true;
  return st;
}

Status FakeDevice::destroy_cq(int cq) {
  Status st;
  if (injected("ibv_destroy_cq", &st)) return st;
  if (!shared_cqs_.count(cq)) return fail("ibv_destroy_cq", EINVAL, fmt::format("no shared CQ {}", cq));
  for (const auto& [e, s] : sides_) {
    // ib_destroy_cq_user: -EBUSY while the CQ's usecnt is not 0 (a QP holds it from create to destroy)
    if (s.qp && (s.cq.send == cq || s.cq.recv == cq)) return fail("ibv_destroy_cq", EBUSY, fmt::format("shared CQ {}", cq));
  }
  shared_cqs_.erase(cq);  // what is left in it goes with it
  return st;
}

Status FakeDevice::next_cq_completion(int cq, Millis, std::optional<CqEntry>* out) {
  out->reset();
  auto it = shared_cqs_.find(cq);
  if (it == shared_cqs_.end()) return fail("ibv_poll_cq", EINVAL, fmt::format("no shared CQ {}", cq));
  if (it->second.wcs.empty()) deliver();  // requesters retry while the ULP waits (RNR, rnr_retry 7)
  if (!it->second.wcs.empty()) {
    *out = it->second.wcs.front();
    it->second.wcs.pop_front();
  }
  return Status::success();
}

void FakeDevice::Cq::add(CqEntry c) {
  wcs.push_back(std::move(c));
  if (armed) {  // one-shot (ibv_req_notify_cq.3)
    armed = false;
    ++events;
  }
}

Status FakeDevice::req_notify_cq(Endpoint e, CqKind cq) {
  Status st;
  if (injected("ibv_req_notify_cq", &st)) return st;
  std::string why;
  Cq* q = cq_of(e, cq, &why);
  if (!q) return fail("ibv_req_notify_cq", EINVAL, why);
  q->armed = true;  // the completions already there raise nothing
  return st;
}

Status FakeDevice::next_cq_event(Endpoint e, CqKind cq, Millis, bool* got) {
  *got = false;
  std::string why;
  Cq* q = cq_of(e, cq, &why);
  if (!q) return fail("ibv_get_cq_event", EINVAL, why);
  if (q->events > 0) {
    --q->events;
    *got = true;
  }
  return Status::success();
}

Status FakeDevice::req_notify_shared_cq(int cq) {
  Status st;
  if (injected("ibv_req_notify_cq", &st)) return st;
  auto it = shared_cqs_.find(cq);
  if (it == shared_cqs_.end()) return fail("ibv_req_notify_cq", EINVAL, fmt::format("no shared CQ {}", cq));
  it->second.armed = true;
  return st;
}

Status FakeDevice::next_shared_cq_event(int cq, Millis, bool* got) {
  *got = false;
  auto it = shared_cqs_.find(cq);
  if (it == shared_cqs_.end()) return fail("ibv_get_cq_event", EINVAL, fmt::format("no shared CQ {}", cq));
  if (it->second.events > 0) {
    --it->second.events;
    *got = true;
  }
  return Status::success();
}

std::map<std::string, uint64_t> FakeDevice::counters() { return {{"rcvd_rnr_err", rnr_naks_}}; }

Status FakeDevice::notify(Endpoint e) {
  Status st;
  if (injected("rdma_notify", &st)) return st;
  Side& s = side(e);
  // rdma_notify.3: for a connection the CM has not established yet; elsewhere EINVAL (cma.c rdma_notify).
  if (s.cm == Cm::kNone || s.cm == Cm::kDone) return fail("rdma_notify", EINVAL, "no cm_id");
  return st;
}

Status FakeDevice::modify_srq(int srq, int limit) {
  Status st;
  if (injected("ibv_modify_srq", &st)) return st;
  if (!srqs_.count(srq)) return fail("ibv_modify_srq", EINVAL, "no such SRQ");
  srq_limits_[srq] = limit;
  return st;
}

Status FakeDevice::next_async_event(Endpoint e, Millis, std::optional<std::string>* event) {
  Side& s = side(e);
  event->reset();
  if (!s.async.empty()) {
    *event = s.async.front();
    s.async.pop_front();
  }
  return Status::success();
}

Status FakeDevice::next_srq_event(int srq, Millis, std::optional<std::string>* event) {
  event->reset();
  std::deque<std::string>& q = srq_events_[srq];
  if (!q.empty()) {
    *event = q.front();
    q.pop_front();
  }
  return Status::success();
}

}  // namespace qpcheck::verbs
