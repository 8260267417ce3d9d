#include "verbs_backend/rdma_device.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "verbs_backend/replay_ops.h"

namespace qpcheck::verbs {

namespace {

// RAII handle: a pointer with the rdma-core function that releases it.
template <typename T, int (*Release)(T*)>
struct Releaser {
  void operator()(T* p) const {
    if (p) Release(p);
  }
};
template <typename T, int (*Release)(T*)>
using Handle = std::unique_ptr<T, Releaser<T, Release>>;

int destroy_channel(rdma_event_channel* ch) {
  rdma_destroy_event_channel(ch);
  return 0;
}
int free_devices(ibv_context** list) {
  rdma_free_devices(list);
  return 0;
}
using ChannelHandle = Handle<rdma_event_channel, destroy_channel>;
using IdHandle = Handle<rdma_cm_id, rdma_destroy_id>;
using DevicesHandle = Handle<ibv_context*, free_devices>;
using PdHandle = Handle<ibv_pd, ibv_dealloc_pd>;
using MrHandle = Handle<ibv_mr, ibv_dereg_mr>;
using MwHandle = Handle<ibv_mw, ibv_dealloc_mw>;
using CqHandle = Handle<ibv_cq, ibv_destroy_cq>;
using CompChannelHandle = Handle<ibv_comp_channel, ibv_destroy_comp_channel>;
using SrqHandle = Handle<ibv_srq, ibv_destroy_srq>;

// An endpoint's QP: a cm_id's (released with rdma_destroy_qp while the cm_id lives) or a plain one, or a cm_id's
// whose cm_id was destroyed first (released with ibv_destroy_qp).
struct QpHandle {
  ibv_qp* qp = nullptr;
  rdma_cm_id* id = nullptr;  // the owning cm_id, or nullptr
  QpHandle() = default;
  QpHandle(const QpHandle&) = delete;
  QpHandle& operator=(const QpHandle&) = delete;
  ~QpHandle() { reset(); }
  int reset() {
    int rc = 0;
    if (id) {
      rdma_destroy_qp(id);  // void: ibv_destroy_qp(id->qp) and id->qp = NULL
    } else if (qp) {
      rc = ibv_destroy_qp(qp);
    }
    qp = nullptr;
    id = nullptr;
    return rc;
  }
};

Status rdma_fail(const char* api, std::string context = "") { return fail(api, errno, std::move(context)); }

// ibv_post_send / ibv_post_recv / ibv_post_srq_recv return an errno value (ibv_post_send.3); a provider that returns
// -1 instead (libsiw's doorbell passes write()'s -1 up: providers/siw/siw.h siw_db) has the errno in errno; one that
// returns a negated errno value (libsiw's push_send_wqe: -EINVAL for an opcode it does not map, IBV_WR_LOCAL_INV)
// has it in -rc.
Status post_fail(const char* api, int rc) {
  if (rc > 0) return fail(api, rc);
  if (rc < -1) return fail(api, -rc, fmt::format("the provider returned {} (a negated errno value)", rc));
  int err = errno;
  return fail(api, err, fmt::format("the provider returned {} instead of an errno value; errno is {}", rc, err));
}

// Buffer layout of an endpoint's memory region (one MR, local write + remote read/write):
constexpr int kSlots = 64;                              // receive buffers (a post_recv count is at most 64)
constexpr size_t kSlotBytes = 64;
constexpr size_t kSendOffset = kSlots * kSlotBytes;     // what Sends and RDMA WRITEs carry
constexpr size_t kReadOffset = kSendOffset + kSlotBytes;  // where this endpoint's RDMA READs land
constexpr size_t kRemoteOffset = kReadOffset + kSlotBytes;  // the peer's WRITE target and READ source
constexpr size_t kBufferBytes = kRemoteOffset + kSlotBytes;
constexpr uint32_t kMessageBytes = 32;
constexpr int kSendDepth = 32;                          // max_send_wr of every QP
constexpr int kCqDepth = 256;                           // every CQ: no replay overruns one
// wr_id of a receive WR: (source << 48) | sequence; source 0 = the QP's own receive queue, s + 1 = SRQ s.
constexpr int kWrSourceShift = 48;
// wr_id of a send WR: kSendWrBit | sequence. A shared CQ holds both kinds, and wc.opcode, which would tell them
// apart, is not valid for an error completion (ibv_poll_cq.3): the bit does.
constexpr uint64_t kSendWrBit = uint64_t{1} << 63;

// The connection index the active side puts in its REQ's private data (rdma_connect), read back from the
// CONNECT_REQUEST's param.conn.private_data: how the listener's requests are matched to PASSIVE[c].
struct RequestTag {
  std::array<char, 4> magic{'q', 'p', 'c', 'k'};
  uint8_t connection = 0;
  uint8_t data = 0;       // the ULP's private data (its first byte; ConnParam::private_data)
};

// The private data a ULP passes: `length` bytes (0: one when first != 0, else none), the first one `first`, zeros after.
static std::vector<uint8_t> ulp_private_data(int first, int length) {
  std::vector<uint8_t> data(static_cast<size_t>(length > 0 ? length : first != 0 ? 1 : 0));
  if (!data.empty()) data[0] = static_cast<uint8_t>(first);
  return data;
}

// A data buffer of an endpoint and its memory region (reg_mr) or type 2 memory window (alloc_mw), released in
// reverse: the window, its MR, the buffer.
struct DataMr {
  std::vector<char> buffer = std::vector<char>(kMrBytes);
  MrHandle mr;            // null: not registered now (a window: its underlying MR, LOCAL_WRITE | MW_BIND)
  MwHandle mw;            // alloc_mw's window over mr, or null (a plain MR)
  // The current rkey (a window: its own, as this device last bound it), or the last one (deregistered); 0: never
  // registered.
  uint32_t rkey = 0;
};

// One endpoint's resources, declared in creation order (destroyed in reverse: QP, CQs, completion channel, data MRs,
// MR, cm_id, channel), except its memory windows, which go first: a bound type 2 window holds a reference to the QP
// that bound it (rxe_mw.c rxe_do_bind_mw), and rxe_destroy_qp waits for the QP's last reference (rxe_pool.c
// __rxe_cleanup, up to 50 s, then a kernel WARN).
struct EndpointRes {
  EndpointRes() = default;
  EndpointRes(const EndpointRes&) = delete;
  EndpointRes& operator=(const EndpointRes&) = delete;
  ~EndpointRes() {
    for (auto& [i, d] : data_mrs) d.mw.reset();
  }

  ChannelHandle channel;                 // the cm_id's own event channel (PASSIVE: migrated there from the listener's)
  IdHandle id;
  bool id_destroyed = false;
  std::vector<char> buffer = std::vector<char>(kBufferBytes);
  MrHandle mr;
  std::map<int, DataMr> data_mrs;        // reg_mr's / alloc_mw's buffers (0..kMaxMrs-1), made at the first of them
  // The completion channel of both own CQs (made with the first of them), destroyed after them
  // (ibv_destroy_comp_channel fails while a CQ is on it). Every event read from it is acknowledged at once
  // (ibv_destroy_cq waits for the acks of all events it got: ibv_get_cq_event.3).
  CompChannelHandle comp_channel;
  // Its own CQs, each made with the first QP of the endpoint that does not use a shared CQ of that kind.
  CqHandle send_cq, recv_cq;
  // Completion events read from comp_channel and not yet taken by next_cq_event, per CQ.
  int send_events = 0, recv_events = 0;
  QpCqs cqs;                             // the CQs of its latest QP (-1: its own of that kind)
  QpHandle qp;
  bool plain = false;                    // the QP was made by ibv_create_qp
  std::optional<QpState> state;          // the state this device last moved the QP to (plain QPs: always known)
  int srq = -1;
  std::deque<std::string> pending;       // CM events routed to this endpoint before it asked for them
  std::deque<std::string> async;         // async events of its QP, its CQs, the port and the device
  // wr_id -> IBV_WC_* opcode of the WR posted under it (an unsignaled WR's stays: it completes only with an error)
  std::map<uint64_t, std::string> send_wrs;
  int next_slot = 0;
  uint64_t next_wr_id = 1;
};

// A shared CQ (create_cq) on a completion channel of its own (so that an event read there is this CQ's), released
// in reverse: the CQ, then its channel.
struct SharedCqRes {
  CompChannelHandle channel;
  CqHandle cq;
  int events = 0;                        // completion events read from `channel`, not yet taken by next_cq_event
};

struct SrqRes {
  std::deque<std::string> async;         // the SRQ's async events
  std::vector<char> buffer = std::vector<char>(kSlots * kSlotBytes);
  MrHandle mr;
  SrqHandle srq;
  int next_slot = 0;
  uint64_t next_wr_id = 1;
};

class RdmaDevice : public Device {
 public:
  RdmaDevice(std::string device, std::string address) : device_(std::move(device)), address_(std::move(address)) {}

  std::string name() const override { return device_; }

  // The port's hw_counters in sysfs (ib_core's per-port statistics: rxe_hw_counters.c names them; siw has none).
  std::map<std::string, uint64_t> counters() override {
    std::map<std::string, uint64_t> out;
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::path("/sys/class/infiniband") / device_ / "ports/1/hw_counters";
    for (const auto& f : std::filesystem::directory_iterator(dir, ec)) {
      std::ifstream in(f.path());
      uint64_t v = 0;
      if (in >> v) out[f.path().filename().string()] = v;
    }
    return out;
  }

  Status open(Millis timeout) override {
    timeout_ = timeout;
    if (Status st = check_device(); !st.ok()) return st;
    listen_channel_.reset(rdma_create_event_channel());
    if (!listen_channel_) return channel_fail();
    if (Status st = nonblocking(listen_channel_.get()); !st.ok()) return st;
    if (Status st = find_address(&addr_); !st.ok()) return st;
    // The verbs context librdmacm uses for this device (every cm_id on it shares it), and one PD for everything.
    int n = 0;
    devices_.reset(rdma_get_devices(&n));
    if (!devices_) return rdma_fail("rdma_get_devices");
    for (int i = 0; i < n; ++i) {
      if (device_ == ibv_get_device_name(devices_.get()[i]->device)) ctx_ = devices_.get()[i];
    }
    if (!ctx_) return fail("rdma_get_devices", ENODEV, fmt::format("librdmacm does not list {}", device_));
    pd_.reset(ibv_alloc_pd(ctx_));
    if (!pd_) return rdma_fail("ibv_alloc_pd");
    ibv_port_attr port{};
    if (int rc = ibv_query_port(ctx_, 1, &port)) return fail("ibv_query_port", rc, "port 1");
    port_ = port;
    // The context's async fd, non-blocking: next_async_event polls it and routes each event (async_route).
    int flags = fcntl(ctx_->async_fd, F_GETFL);
    if (flags < 0 || fcntl(ctx_->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      return fail("fcntl", errno, "async_fd O_NONBLOCK");
    }
    // The listener is bound now (its port is where every active endpoint resolves to); it listens at listen().
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(listen_channel_.get(), &id, nullptr, RDMA_PS_TCP)) return rdma_fail("rdma_create_id", "listener");
    listener_.reset(id);
    if (rdma_bind_addr(listener_.get(), reinterpret_cast<sockaddr*>(&addr_))) return rdma_fail("rdma_bind_addr");
    listen_port_ = rdma_get_src_port(listener_.get());
    return Status::success();
  }

  Status listen() override {
    if (listening_) return fail("rdma_listen", EINVAL, "already listening");
    if (rdma_listen(listener_.get(), 8)) return rdma_fail("rdma_listen");
    listening_ = true;
    return Status::success();
  }

  Status create_id(Endpoint e) override {
    if (e.side != Ep::kActive) return fail("rdma_create_id", EINVAL, "a PASSIVE cm_id comes from its CONNECT_REQUEST");
    EndpointRes& ep = endpoints_[e];
    if (ep.id || ep.id_destroyed) return fail("rdma_create_id", EEXIST, e.text() + " already has a cm_id");
    ep.channel.reset(rdma_create_event_channel());
    if (!ep.channel) return channel_fail();
    if (Status st = nonblocking(ep.channel.get()); !st.ok()) return st;
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(ep.channel.get(), &id, nullptr, RDMA_PS_TCP)) return rdma_fail("rdma_create_id");
    ep.id.reset(id);
    return Status::success();
  }

  Status resolve_addr(Endpoint e) override {
    rdma_cm_id* id = cm_id(e);
    if (!id) return no_id("rdma_resolve_addr", e);
    sockaddr_in src = addr_, dst = addr_;
    src.sin_port = 0;
    dst.sin_port = listen_port_;
    if (rdma_resolve_addr(id, reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&dst), ms())) {
      return rdma_fail("rdma_resolve_addr");
    }
    return Status::success();
  }

  Status resolve_route(Endpoint e) override {
    rdma_cm_id* id = cm_id(e);
    if (!id) return no_id("rdma_resolve_route", e);
    if (rdma_resolve_route(id, ms())) return rdma_fail("rdma_resolve_route");
    return Status::success();
  }

  Status create_qp(Endpoint e, int srq, const QpCqs& cqs) override {
    rdma_cm_id* id = cm_id(e);
    if (!id) return no_id("rdma_create_qp", e);
    EndpointRes& ep = endpoints_[e];
    if (ep.qp.qp) return fail("rdma_create_qp", EEXIST, e.text() + " already has a QP");
    if (id->verbs != ctx_) return fail("rdma_create_qp", EINVAL, "the cm_id is bound to another device");
    ibv_qp_init_attr attr{};
    if (Status st = qp_init("rdma_create_qp", e, ep, srq, cqs, &attr); !st.ok()) return st;
    if (rdma_create_qp(id, pd_.get(), &attr)) return rdma_fail("rdma_create_qp");
    ep.qp.qp = id->qp;
    ep.qp.id = id;
    ep.plain = false;
    ep.state.reset();  // librdmacm moved it to INIT (ucma_init_conn_qp); the CM moves it on
    ep.srq = srq;
    adopt(e, ep, cqs);
    return Status::success();
  }

  Status create_plain_qp(Endpoint e, const QpCqs& cqs) override {
    EndpointRes& ep = endpoints_[e];
    if (ep.qp.qp) return fail("ibv_create_qp", EEXIST, e.text() + " already has a QP");
    ibv_qp_init_attr attr{};
    if (Status st = qp_init("ibv_create_qp", e, ep, -1, cqs, &attr); !st.ok()) return st;
    ibv_qp* qp = ibv_create_qp(pd_.get(), &attr);
    if (!qp) return rdma_fail("ibv_create_qp");
    ep.qp.qp = qp;
    ep.qp.id = nullptr;
    ep.plain = true;
    ep.state = QpState::kReset;
    ep.srq = -1;
    adopt(e, ep, cqs);
    return Status::success();
  }

  // A shared CQ on a completion channel of its own, non-blocking as the endpoints' (next_cq_event polls its fd).
  // ibv_create_cq returns NULL and sets errno (libibverbs); the device may round the depth up (ibv_create_cq.3).
  Status create_cq(int c, int depth) override {
    if (c < 0 || c >= kMaxSharedCqs) return fail("ibv_create_cq", EINVAL, fmt::format("no shared CQ {} (0..15)", c));
    if (shared_cqs_.count(c)) return fail("ibv_create_cq", EEXIST, fmt::format("shared CQ {} exists", c));
    SharedCqRes r;
    r.channel.reset(ibv_create_comp_channel(ctx_));
    if (!r.channel) return rdma_fail("ibv_create_comp_channel", fmt::format("shared CQ {}", c));
    if (Status st = nonblocking(r.channel.get()); !st.ok()) return st;
    r.cq.reset(ibv_create_cq(ctx_, depth, nullptr, r.channel.get(), 0));
    if (!r.cq) return rdma_fail("ibv_create_cq", fmt::format("shared CQ {}, depth {}", c, depth));
    shared_cqs_.emplace(c, std::move(r));
    return Status::success();
  }

  // ibv_destroy_cq returns the errno value (ibv_create_cq.3); a QP still associated with the CQ makes it fail, which
  // the kernel decides (ib_destroy_cq_user: EBUSY while the CQ's usecnt is not 0), so it is asked, never pre-empted.
  // On success the channel goes too; nothing of the CQ is kept here (next_cq_completion hands every entry out at
  // once), so whatever was still in it is gone.
  Status destroy_cq(int c) override {
    auto it = shared_cqs_.find(c);
    if (it == shared_cqs_.end()) return fail("ibv_destroy_cq", EINVAL, fmt::format("no shared CQ {}", c));
    errno = 0;
    if (int rc = ibv_destroy_cq(it->second.cq.get())) {
      int err = rc > 0 ? rc : rc < -1 ? -rc : errno;  // a provider that returns -1 or -errno instead (as post_fail)
      return fail("ibv_destroy_cq", err, fmt::format("shared CQ {}", c));
    }
    it->second.cq.release();  // freed by ibv_destroy_cq
    shared_cqs_.erase(it);    // ibv_destroy_comp_channel
    return Status::success();
  }

  Status next_cq_completion(int c, Millis timeout, std::optional<CqEntry>* out) override {
    out->reset();
    auto it = shared_cqs_.find(c);
    if (it == shared_cqs_.end()) return fail("ibv_poll_cq", EINVAL, fmt::format("no shared CQ {}", c));
    ibv_wc wc{};
    bool got = false;
    if (Status st = poll_cq(it->second.cq.get(), timeout, &wc, &got); !st.ok() || !got) return st;
    auto owner = qp_owner_.find(wc.qp_num);
    if (owner == qp_owner_.end()) {
      return fail("ibv_poll_cq", EPROTO,
                  fmt::format("shared CQ {}: a completion of QP {:#x}, which no endpoint created", c, wc.qp_num));
    }
    const bool send = (wc.wr_id & kSendWrBit) != 0;
    *out = CqEntry{owner->second, send ? CqKind::kSend : CqKind::kRecv,
                   completion(owner->second, endpoints_[owner->second], wc, send)};
    return Status::success();
  }

  // The attributes of each transition (ibv_modify_qp.3; the mask is what qp_state_table in the kernel's
  // drivers/infiniband/core/verbs.c requires for it, rc_pingpong's pp_connect_ctx values where it has them):
  //  RESET, SQD, SQE, ERR: the state alone.
  //  INIT: pkey_index 0, port_num 1, qp_access_flags LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ (the peer's RDMA
  //        WRITE and READ target this endpoint's MR).
  //  RTR:  dest_qp_num = the peer endpoint's QP number (both on this device), rq_psn 0 (every sq_psn is 0),
  //        path_mtu = the port's active_mtu, max_dest_rd_atomic = attrs (IRD), min_rnr_timer 12 (0.64 ms, as
  //        rc_pingpong), ah_attr port 1, dlid = the port's LID; RoCE (Ethernet link layer, IB transport): is_global
  //        with dgid = this device's RoCE v2 GID of the address (the peer is on the same device), hop_limit 1.
  //  RTS:  from RTR: sq_psn 0, timeout 14 (4.096 us * 2^14 = 67 ms, as rc_pingpong), retry_cnt, rnr_retry,
  //        max_rd_atomic (ORD) = attrs. From RTS/SQD/SQE (or a cm_id's QP whose state is not known here and
  //        ibv_query_qp does not say RTR) the state alone.
  Status modify_qp(Endpoint e, QpState s, const QpAttrs& a) override {
    EndpointRes* ep = find(e);
    if (!ep || !ep->qp.qp) return fail("ibv_modify_qp", EINVAL, e.text() + " has no QP");
    ibv_qp_attr attr{};
    attr.qp_state = static_cast<ibv_qp_state>(s);
    int mask = IBV_QP_STATE;
    switch (s) {
      case QpState::kInit:
        attr.pkey_index = 0;
        attr.port_num = 1;
        attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
        break;
      case QpState::kRtr: {
        EndpointRes* peer = find(e.peer());
        if (!peer || !peer->qp.qp) {
          return fail("ibv_modify_qp", EINVAL,
                      fmt::format("RTR needs the peer's QP number, and {} has no QP yet", e.peer().text()));
        }
        attr.path_mtu = port_.active_mtu;
        attr.dest_qp_num = peer->qp.qp->qp_num;
        attr.rq_psn = 0;
        attr.max_dest_rd_atomic = static_cast<uint8_t>(a.max_dest_rd_atomic);
        attr.min_rnr_timer = 12;
        attr.ah_attr.dlid = port_.lid;
        attr.ah_attr.sl = 0;
        attr.ah_attr.src_path_bits = 0;
        attr.ah_attr.port_num = 1;
        if (port_.link_layer == IBV_LINK_LAYER_ETHERNET && ctx_->device->transport_type == IBV_TRANSPORT_IB) {
          int index = 0;
          ibv_gid gid{};
          if (Status st = roce_gid(&index, &gid); !st.ok()) return st;
          attr.ah_attr.is_global = 1;
          attr.ah_attr.grh.dgid = gid;
          attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(index);
          attr.ah_attr.grh.hop_limit = 1;
        }
        mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                IBV_QP_MIN_RNR_TIMER;
        break;
      }
      case QpState::kRts:
        if (current_state(*ep) == QpState::kRtr) {
          attr.sq_psn = 0;
          attr.timeout = 14;
          attr.retry_cnt = static_cast<uint8_t>(a.retry_cnt);
          attr.rnr_retry = static_cast<uint8_t>(a.rnr_retry);
          attr.max_rd_atomic = static_cast<uint8_t>(a.max_rd_atomic);
          mask |= IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
        }
        break;
      default: break;
    }
    if (int rc = ibv_modify_qp(ep->qp.qp, &attr, mask)) {  // returns errno
      return fail("ibv_modify_qp", rc, fmt::format("{} to {}", e.text(), qp_state_name(s)));
    }
    ep->state = s;
    return Status::success();
  }

  Status destroy_qp(Endpoint e) override {
    EndpointRes* ep = find(e);
    if (!ep || !ep->qp.qp) return fail(ep && ep->plain ? "ibv_destroy_qp" : "rdma_destroy_qp", EINVAL, e.text() + " has no QP");
    const char* api = ep->qp.id ? "rdma_destroy_qp" : "ibv_destroy_qp";
    if (int rc = ep->qp.reset()) return fail(api, rc);
    ep->state.reset();
    return Status::success();
  }

  Status destroy_id(Endpoint e) override {
    EndpointRes* ep = find(e);
    if (!ep || !ep->id) return no_id("rdma_destroy_id", e);
    // A QP still on the cm_id outlives it: released later with ibv_destroy_qp (rdma_destroy_id does not touch it).
    ep->qp.id = nullptr;
    if (rdma_destroy_id(ep->id.release())) return rdma_fail("rdma_destroy_id");
    ep->id_destroyed = true;
    return Status::success();
  }

  Status create_srq(int s) override {
    if (srqs_.count(s)) return fail("ibv_create_srq", EEXIST, fmt::format("SRQ {} exists", s));
    SrqRes& r = srqs_[s];
    r.mr.reset(ibv_reg_mr(pd_.get(), r.buffer.data(), r.buffer.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!r.mr) return rdma_fail("ibv_reg_mr", "SRQ buffers");
    ibv_srq_init_attr attr{};
    attr.attr.max_wr = kSlots;
    attr.attr.max_sge = 1;
    r.srq.reset(ibv_create_srq(pd_.get(), &attr));
    if (!r.srq) return rdma_fail("ibv_create_srq");
    return Status::success();
  }

  Status post_srq_recv(int s, int count) override {
    auto it = srqs_.find(s);
    if (it == srqs_.end() || !it->second.srq) return fail("ibv_post_srq_recv", EINVAL, fmt::format("no SRQ {}", s));
    SrqRes& r = it->second;
    for (int i = 0; i < count; ++i) {
      ibv_sge sge{};
      sge.addr = reinterpret_cast<uintptr_t>(r.buffer.data() + (r.next_slot++ % kSlots) * kSlotBytes);
      sge.length = kSlotBytes;
      sge.lkey = r.mr->lkey;
      ibv_recv_wr wr{};
      wr.wr_id = (static_cast<uint64_t>(s + 1) << kWrSourceShift) | r.next_wr_id++;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      ibv_recv_wr* bad = nullptr;
      errno = 0;
      if (int rc = ibv_post_srq_recv(r.srq.get(), &wr, &bad)) return post_fail("ibv_post_srq_recv", rc);
    }
    return Status::success();
  }

  Status post_recv(Endpoint e, int count) override {
    EndpointRes* ep = find(e);
    if (!ep || !ep->qp.qp) return fail("ibv_post_recv", EINVAL, e.text() + " has no QP");
    for (int i = 0; i < count; ++i) {
      ibv_sge sge{};
      sge.addr = reinterpret_cast<uintptr_t>(ep->buffer.data() + (ep->next_slot++ % kSlots) * kSlotBytes);
      sge.length = kSlotBytes;
      sge.lkey = ep->mr->lkey;
      ibv_recv_wr wr{};
      wr.wr_id = ep->next_wr_id++;  // below kSendWrBit: a receive
      wr.sg_list = &sge;
      wr.num_sge = 1;
      ibv_recv_wr* bad = nullptr;
      errno = 0;
      if (int rc = ibv_post_recv(ep->qp.qp, &wr, &bad)) return post_fail("ibv_post_recv", rc);
    }
    return Status::success();
  }

  // One WR of kMessageBytes from e's Send buffer (RDMA READ: into its READ landing slot), signaled or not (the QPs
  // have sq_sig_all 0). Naming a data buffer (SendWr::mr): WRITE / READ to the peer's buffer with its current or last
  // rkey (0 if never registered); SEND_WITH_INV with the peer's buffer's rkey in wr.invalidate_rkey and also in
  // wr.wr.rdma.rkey, where libsiw reads the STag to invalidate (providers/siw/siw.c push_send_wqe: siw_sqe->rkey =
  // wr.rdma.rkey; other providers ignore wr.rdma for a Send); LOCAL_INV of e's own buffer's rkey, without data;
  // BIND_MW of e's own window (alloc_mw) to its whole buffer, with remote write and read, under a new rkey.
  Status post_send(Endpoint e, const SendWr& w) override {
    EndpointRes* ep = find(e);
    if (!ep || !ep->qp.qp) return fail("ibv_post_send", EINVAL, e.text() + " has no QP");
    const WrOpcode op = w.op;
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(ep->buffer.data() + (op == WrOpcode::kRdmaRead ? kReadOffset : kSendOffset));
    sge.length = kMessageBytes;
    sge.lkey = ep->mr->lkey;
    std::snprintf(ep->buffer.data() + kSendOffset, kSlotBytes, "qpcheck replay %s", e.text().c_str());
    ibv_send_wr wr{};
    wr.wr_id = kSendWrBit | ep->next_wr_id++;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = w.signaled ? IBV_SEND_SIGNALED : 0;
    std::string wc_opcode = "IBV_WC_SEND";
    DataMr* bind = nullptr;  // BIND_MW: the window it binds
    // The data buffer the WR names: its rkey (current or last; 0 if never registered) and address.
    auto named = [&](Endpoint owner, uint32_t* rkey, uint64_t* addr) {
      EndpointRes* o = find(owner);
      auto it = o ? o->data_mrs.find(w.mr) : std::map<int, DataMr>::iterator{};
      bool known = o && it != o->data_mrs.end();
      *rkey = known ? it->second.rkey : 0;
      *addr = known ? reinterpret_cast<uintptr_t>(it->second.buffer.data()) : 0;
    };
    switch (op) {
      case WrOpcode::kSend: wr.opcode = IBV_WR_SEND; break;
      case WrOpcode::kSendWithInv: {
        uint64_t addr = 0;
        named(e.peer(), &wr.invalidate_rkey, &addr);
        wr.opcode = IBV_WR_SEND_WITH_INV;
        wr.wr.rdma.rkey = wr.invalidate_rkey;
        break;
      }
      case WrOpcode::kLocalInv: {
        uint64_t addr = 0;
        named(e, &wr.invalidate_rkey, &addr);
        wr.opcode = IBV_WR_LOCAL_INV;
        wr.sg_list = nullptr;
        wr.num_sge = 0;
        wc_opcode = "IBV_WC_LOCAL_INV";
        break;
      }
      case WrOpcode::kBindMw: {
        // ibv_post_send.3, ibv_alloc_mw.3: a type 2 window is bound by a WR naming the window, its new rkey (the
        // 8 key bits incremented: ibv_inc_rkey) and the MR range. No SGE: rxe's validate_send_wr refuses one.
        auto it = ep->data_mrs.find(w.mr);
        if (it == ep->data_mrs.end() || !it->second.mw) {
          return fail("ibv_post_send", EINVAL,
                      fmt::format("IBV_WR_BIND_MW: {}'s buffer {} is not a memory window", e.text(), w.mr));
        }
        bind = &it->second;
        wr.opcode = IBV_WR_BIND_MW;
        wr.sg_list = nullptr;
        wr.num_sge = 0;
        wr.bind_mw.mw = bind->mw.get();
        wr.bind_mw.rkey = ibv_inc_rkey(bind->rkey);
        wr.bind_mw.bind_info.mr = bind->mr.get();
        wr.bind_mw.bind_info.addr = reinterpret_cast<uintptr_t>(bind->buffer.data());
        wr.bind_mw.bind_info.length = bind->buffer.size();
        wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        wc_opcode = "IBV_WC_BIND_MW";
        break;
      }
      case WrOpcode::kRdmaWrite:
      case WrOpcode::kRdmaRead: {
        wr.opcode = op == WrOpcode::kRdmaWrite ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
        wc_opcode = op == WrOpcode::kRdmaWrite ? "IBV_WC_RDMA_WRITE" : "IBV_WC_RDMA_READ";
        if (w.mr >= 0) {
          named(e.peer(), &wr.wr.rdma.rkey, &wr.wr.rdma.remote_addr);
          break;
        }
        EndpointRes* peer = find(e.peer());
        if (!peer || !peer->mr) {
          return fail("ibv_post_send", EINVAL,
                      fmt::format("{} targets {}'s memory region, which does not exist yet (no QP created there)",
                                  wr_opcode_name(op), e.peer().text()));
        }
        wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(peer->buffer.data() + kRemoteOffset);
        wr.wr.rdma.rkey = peer->mr->rkey;
        break;
      }
    }
    ibv_send_wr* bad = nullptr;
    errno = 0;
    if (int rc = ibv_post_send(ep->qp.qp, &wr, &bad)) return post_fail("ibv_post_send", rc);
    ep->send_wrs[wr.wr_id] = wc_opcode;
    if (bind) {
      // The new rkey is the window's from the post on (a bind that then fails completes with IBV_WC_MW_BIND_ERR and
      // its QP goes to ERR). providers/rxe passes mw->rkey as the window's current key (convert_send_wr: mw_rkey),
      // which the kernel's rxe_bind_mw must find equal to its own, but updates mw->rkey only in rxe_bind_mw (the
      // ibv_bind_mw path, type 1): after a bind posted here, the caller sets it, as rxe_bind_mw does.
      bind->rkey = wr.bind_mw.rkey;
      bind->mw->rkey = bind->rkey;
    }
    return Status::success();
  }

  // Buffer mr of e, which `api` (ibv_reg_mr, ibv_alloc_mw) is about to register: *out, or why not (no such buffer:
  // EINVAL; registered already: EEXIST).
  Status unregistered_buffer(const char* api, Endpoint e, int mr, DataMr** out) {
    if (mr < 0 || mr >= kMaxMrs) return fail(api, EINVAL, fmt::format("no buffer {} (0..{})", mr, kMaxMrs - 1));
    DataMr& d = endpoints_[e].data_mrs[mr];
    if (d.mr) return fail(api, EEXIST, fmt::format("{}'s buffer {} is registered", e.text(), mr));
    *out = &d;
    return Status::success();
  }

  Status reg_mr(Endpoint e, int mr, bool remote) override {
    DataMr* b = nullptr;
    if (Status st = unregistered_buffer("ibv_reg_mr", e, mr, &b); !st.ok()) return st;
    DataMr& d = *b;
    int access = IBV_ACCESS_LOCAL_WRITE | (remote ? IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ : 0);
    d.mr.reset(ibv_reg_mr(pd_.get(), d.buffer.data(), d.buffer.size(), access));
    if (!d.mr) return rdma_fail("ibv_reg_mr", fmt::format("{}'s buffer {}", e.text(), mr));
    d.rkey = d.mr->rkey;  // rxe: 0 without remote access (rxe_mr.c rxe_mr_init); siw: the STag
    return Status::success();
  }

  // A type 2 window of the buffer (alloc_mw): the underlying MR is registered with LOCAL_WRITE | MW_BIND (the bind
  // needs MW_BIND, a writable window LOCAL_WRITE: rxe_mw.c rxe_check_bind_mw, C10-73, C10-74), no remote access of
  // its own. rxe: rxe_alloc_mw gives the window a key of the MW pool, state FREE (no access) until a bind; siw: no
  // alloc_mw (libibverbs' dummy: NULL, errno EOPNOTSUPP).
  Status alloc_mw(Endpoint e, int mr) override {
    DataMr* b = nullptr;
    if (Status st = unregistered_buffer("ibv_alloc_mw", e, mr, &b); !st.ok()) return st;
    DataMr& d = *b;
    d.mr.reset(ibv_reg_mr(pd_.get(), d.buffer.data(), d.buffer.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND));
    if (!d.mr) return rdma_fail("ibv_reg_mr", fmt::format("{}'s buffer {} (MW_BIND, for a window)", e.text(), mr));
    errno = 0;
    d.mw.reset(ibv_alloc_mw(pd_.get(), IBV_MW_TYPE_2));
    if (!d.mw) {
      Status st = rdma_fail("ibv_alloc_mw", fmt::format("{}'s buffer {} (IBV_MW_TYPE_2)", e.text(), mr));
      d.mr.reset();  // the buffer stays unregistered; errno was read first
      return st;
    }
    d.rkey = d.mw->rkey;  // not valid until an IBV_WR_BIND_MW binds it
    return Status::success();
  }

  // A window: ibv_dealloc_mw first (rxe refuses to deregister an MR a window is bound to: rxe_mr.c rxe_dereg_mr,
  // num_mw), then its MR. A handle whose release failed stays owned, and is released again at the end.
  Status dereg_mr(Endpoint e, int mr) override {
    EndpointRes* ep = find(e);
    auto it = ep ? ep->data_mrs.find(mr) : std::map<int, DataMr>::iterator{};
    if (!ep || it == ep->data_mrs.end() || !it->second.mr) {
      return fail("ibv_dereg_mr", EINVAL, fmt::format("{}'s buffer {} is not registered", e.text(), mr));
    }
    DataMr& d = it->second;
    if (d.mw) {
      if (int rc = ibv_dealloc_mw(d.mw.get())) {
        return fail("ibv_dealloc_mw", rc, fmt::format("{}'s buffer {}", e.text(), mr));
      }
      d.mw.release();  // freed by ibv_dealloc_mw
    }
    if (int rc = ibv_dereg_mr(d.mr.get())) return fail("ibv_dereg_mr", rc);
    d.mr.release();  // freed by ibv_dereg_mr
    return Status::success();  // d.rkey stays: a later WR may name it
  }

  Status connect(Endpoint e, const ConnParam& p) override {
    rdma_cm_id* id = cm_id(e);
    if (e.side != Ep::kActive) return fail("rdma_connect", EINVAL, "only an ACTIVE cm_id connects");
    if (!id) return no_id("rdma_connect", e);
    RequestTag tag;
    tag.connection = static_cast<uint8_t>(e.connection);
    tag.data = static_cast<uint8_t>(p.private_data);
    // The tag, then zeros up to the ULP's length (a shorter one still carries the whole tag).
    std::vector<uint8_t> data(std::max<size_t>(sizeof tag, static_cast<size_t>(p.private_data_len)));
    std::memcpy(data.data(), &tag, sizeof tag);
    rdma_conn_param cp = conn_param(p);
    cp.private_data = data.data();
    cp.private_data_len = static_cast<uint8_t>(data.size());
    if (rdma_connect(id, &cp)) return rdma_fail("rdma_connect");
    return Status::success();
  }

  Status accept(Endpoint e, const ConnParam& p) override {
    rdma_cm_id* id = cm_id(e);
    if (e.side != Ep::kPassive || !id) return fail("rdma_accept", EINVAL, e.text() + ": no CONNECT_REQUEST to accept");
    rdma_conn_param cp = conn_param(p);
    const std::vector<uint8_t> data = ulp_private_data(p.private_data, p.private_data_len);
    if (!data.empty()) {
      cp.private_data = data.data();
      cp.private_data_len = static_cast<uint8_t>(data.size());
    }
    if (rdma_accept(id, &cp)) return rdma_fail("rdma_accept");
    return Status::success();
  }

  Status reject(Endpoint e, int private_data, int length) override {
    rdma_cm_id* id = cm_id(e);
    if (e.side != Ep::kPassive || !id) return fail("rdma_reject", EINVAL, e.text() + ": no CONNECT_REQUEST to reject");
    const std::vector<uint8_t> data = ulp_private_data(private_data, length);
    if (rdma_reject(id, data.empty() ? nullptr : data.data(), static_cast<uint8_t>(data.size()))) {
      return rdma_fail("rdma_reject");
    }
    return Status::success();
  }

  Status disconnect(Endpoint e) override {
    rdma_cm_id* id = cm_id(e);
    if (!id) return no_id("rdma_disconnect", e);
    if (rdma_disconnect(id)) return rdma_fail("rdma_disconnect");
    return Status::success();
  }

  Status next_cm_event(Endpoint e, Millis timeout, std::optional<std::string>* out) override {
    out->reset();
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (bool first = true;; first = false) {
      EndpointRes* ep = find(e);
      if (ep && !ep->pending.empty()) {
        *out = ep->pending.front();
        ep->pending.pop_front();
        return Status::success();
      }
      auto left = std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
      if (!first && left.count() <= 0) return Status::success();
      // An endpoint with its own channel reads it; a PASSIVE one before its CONNECT_REQUEST reads the listener's.
      rdma_event_channel* ch = nullptr;
      if (ep && ep->channel && ep->id) {
        ch = ep->channel.get();
      } else if (e.side == Ep::kPassive && !(ep && ep->id_destroyed)) {
        ch = listen_channel_.get();
      } else {
        return fail("rdma_get_cm_event", EINVAL,
                    fmt::format("{} has no cm_id{}", e.text(), ep && ep->id_destroyed ? " (destroyed)" : ""));
      }
      rdma_cm_event* ev = nullptr;
      if (Status st = get_event(ch, std::max(left, Millis(0)), &ev); !st.ok()) return st;
      if (ev) {
        if (Status st = route(ev); !st.ok()) return st;
      } else if (left.count() <= 0) {
        return Status::success();
      }
    }
  }

  Status notify(Endpoint e) override {
    rdma_cm_id* id = cm_id(e);
    if (!id) return no_id("rdma_notify", e);
    if (rdma_notify(id, IBV_EVENT_COMM_EST)) return rdma_fail("rdma_notify");
    return Status::success();
  }

  Status modify_srq(int srq, int limit) override {
    auto it = srqs_.find(srq);
    if (it == srqs_.end() || !it->second.srq) return fail("ibv_modify_srq", EINVAL, fmt::format("no SRQ {}", srq));
    ibv_srq_attr attr{};
    attr.srq_limit = static_cast<uint32_t>(limit);
    if (int rc = ibv_modify_srq(it->second.srq.get(), &attr, IBV_SRQ_LIMIT)) return fail("ibv_modify_srq", rc);
    return Status::success();
  }

  Status next_async_event(Endpoint e, Millis timeout, std::optional<std::string>* out) override {
    return next_async([this, e]() -> std::deque<std::string>* {
      EndpointRes* ep = find(e);
      return ep ? &ep->async : nullptr;
    }, timeout, out);
  }

  Status next_srq_event(int srq, Millis timeout, std::optional<std::string>* out) override {
    return next_async([this, srq]() -> std::deque<std::string>* {
      auto it = srqs_.find(srq);
      return it == srqs_.end() ? nullptr : &it->second.async;
    }, timeout, out);
  }

  // ibv_req_notify_cq returns an errno value (ibv_req_notify_cq.3). rxe: a system call, rxe_req_notify_cq sets
  // cq->notify, and rxe_cq_post raises the event for the next CQE when it is set and clears it; siw: libsiw writes
  // the notify flags it shares with the kernel (providers/siw/siw.c siw_notify_cq), siw_cq_notify_now reads them at
  // the next CQE and clears them. Neither looks at the CQEs already there (no IB_CQ_REPORT_MISSED_EVENTS).
  Status req_notify_cq(Endpoint e, CqKind k) override {
    ibv_cq* cq = nullptr;
    if (Status st = cq_of("ibv_req_notify_cq", e, k, &cq, nullptr); !st.ok()) return st;
    errno = 0;
    if (int rc = ibv_req_notify_cq(cq, 0)) return post_fail("ibv_req_notify_cq", rc);
    return Status::success();
  }

  // Reads the channel of e's CQ `k` (non-blocking, polled: e's own channel, or the shared CQ's) until that CQ has an
  // event or the timeout passes; each event is acknowledged at once and counted for its CQ.
  Status next_cq_event(Endpoint e, CqKind k, Millis timeout, bool* got) override {
    *got = false;
    ibv_cq* cq = nullptr;
    SharedCqRes* shared = nullptr;
    if (Status st = cq_of("ibv_get_cq_event", e, k, &cq, &shared); !st.ok()) return st;
    if (shared) return channel_event(shared->channel.get(), &shared->events, timeout, got, [&](ibv_cq*) {
      ++shared->events;  // the channel is this CQ's alone
    });
    EndpointRes* ep = find(e);
    int& mine = k == CqKind::kSend ? ep->send_events : ep->recv_events;
    return channel_event(ep->comp_channel.get(), &mine, timeout, got, [&](ibv_cq* from) {
      if (from == ep->send_cq.get()) ++ep->send_events;
      if (from == ep->recv_cq.get()) ++ep->recv_events;
    });
  }

  // The two above for shared CQ c named by its number (its own channel).
  Status req_notify_shared_cq(int c) override {
    auto it = shared_cqs_.find(c);
    if (it == shared_cqs_.end()) return fail("ibv_req_notify_cq", EINVAL, fmt::format("no shared CQ {}", c));
    errno = 0;
    if (int rc = ibv_req_notify_cq(it->second.cq.get(), 0)) return post_fail("ibv_req_notify_cq", rc);
    return Status::success();
  }

  Status next_shared_cq_event(int c, Millis timeout, bool* got) override {
    *got = false;
    auto it = shared_cqs_.find(c);
    if (it == shared_cqs_.end()) return fail("ibv_get_cq_event", EINVAL, fmt::format("no shared CQ {}", c));
    SharedCqRes* shared = &it->second;
    return channel_event(shared->channel.get(), &shared->events, timeout, got, [&](ibv_cq*) { ++shared->events; });
  }

  // Reads `channel` until *mine (the events counted for the CQ asked about) is > 0, then takes one, or until the
  // timeout passes; each event read is acknowledged at once and handed to count(cq), which counts it for its CQ.
  template <typename Count>
  Status channel_event(ibv_comp_channel* channel, int* mine, Millis timeout, bool* got, Count count) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (bool first = true;; first = false) {
      if (*mine > 0) {
        --*mine;
        *got = true;
        return Status::success();
      }
      auto left = std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
      if (!first && left.count() <= 0) return Status::success();
      pollfd fd{channel->fd, POLLIN, 0};
      int n = ::poll(&fd, 1, static_cast<int>(std::max(left, Millis(0)).count()));
      if (n < 0 && errno != EINTR) return fail("poll", errno, "completion channel");
      for (;;) {
        ibv_cq* cq = nullptr;
        void* cq_context = nullptr;
        if (ibv_get_cq_event(channel, &cq, &cq_context)) {  // -1, errno set (ibv_get_cq_event.3)
          if (errno == EAGAIN || errno == EWOULDBLOCK) break;
          return fail("ibv_get_cq_event", errno);
        }
        ibv_ack_cq_events(cq, 1);
        count(cq);
      }
    }
  }

  Status next_send_completion(Endpoint e, Millis timeout, std::optional<Completion>* wc) override {
    return poll_own(e, CqKind::kSend, timeout, wc);
  }
  Status next_recv_completion(Endpoint e, Millis timeout, std::optional<Completion>* wc) override {
    return poll_own(e, CqKind::kRecv, timeout, wc);
  }

 private:
  EndpointRes* find(Endpoint e) {
    auto it = endpoints_.find(e);
    return it == endpoints_.end() ? nullptr : &it->second;
  }
  rdma_cm_id* cm_id(Endpoint e) {
    EndpointRes* ep = find(e);
    return ep ? ep->id.get() : nullptr;
  }
  Status no_id(const char* api, Endpoint e) {
    EndpointRes* ep = find(e);
    if (ep && ep->id_destroyed) return fail(api, EINVAL, e.text() + "'s cm_id was destroyed");
    return fail(api, EINVAL, e.side == Ep::kPassive ? e.text() + " has no cm_id (no CONNECT_REQUEST for it yet)"
                                                    : e.text() + " has no cm_id (rdma_create_id not called)");
  }
  int ms() const { return static_cast<int>(timeout_.count()); }

  // Waits up to `timeout` for the queue `queue()` returns to have an event, reading the context's async fd meanwhile.
  template <typename Queue>
  Status next_async(Queue queue, Millis timeout, std::optional<std::string>* out) {
    out->reset();
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (bool first = true;; first = false) {
      if (std::deque<std::string>* q = queue(); q && !q->empty()) {
        *out = q->front();
        q->pop_front();
        return Status::success();
      }
      auto left = std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now());
      if (!first && left.count() <= 0) return Status::success();
      pollfd fd{ctx_->async_fd, POLLIN, 0};
      int n = ::poll(&fd, 1, static_cast<int>(std::max(left, Millis(0)).count()));
      if (n < 0 && errno != EINTR) return fail("poll", errno, "async_fd");
      for (;;) {
        ibv_async_event ev{};
        if (ibv_get_async_event(ctx_, &ev)) {
          if (errno == EAGAIN || errno == EWOULDBLOCK) break;
          return fail("ibv_get_async_event", errno);
        }
        async_route(ev);
        ibv_ack_async_event(&ev);
      }
      if (n == 0 && left.count() <= 0) return Status::success();
    }
  }

  // An async event goes to the endpoint whose QP or CQ it names, to the SRQ it names, or (a port or device event)
  // to every endpoint; an event of an object no endpoint owns any more is dropped. A shared CQ's IBV_EVENT_CQ_ERR
  // names only the CQ, and an overrun drops the CQE that did not fit without saying whose (rxe_cq.c rxe_cq_post:
  // IB_EVENT_CQ_ERR with element.cq, then -EBUSY), so which endpoint's completion went missing cannot be told: the
  // event goes to the lowest endpoint (std::map order: connection, then ACTIVE before PASSIVE) whose QP uses the CQ
  // now, or, when no QP that exists does, whose latest QP used it.
  void async_route(const ibv_async_event& ev) {
    std::string name;
    for (std::string_view n : kAsyncEventNames) {
      if (async_event_value(n) == ev.event_type) name = n;
    }
    if (name.empty()) name = fmt::format("IBV_EVENT_{}", static_cast<int>(ev.event_type));
    switch (ev.event_type) {
      case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR: case IBV_EVENT_QP_ACCESS_ERR: case IBV_EVENT_COMM_EST:
      case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG: case IBV_EVENT_PATH_MIG_ERR:
      case IBV_EVENT_QP_LAST_WQE_REACHED:
        for (auto& [e, ep] : endpoints_) {
          if (ep.qp.qp && ep.qp.qp == ev.element.qp) ep.async.push_back(name);
        }
        return;
      case IBV_EVENT_CQ_ERR:
        for (auto& [e, ep] : endpoints_) {
          if (ep.send_cq.get() == ev.element.cq || ep.recv_cq.get() == ev.element.cq) ep.async.push_back(name);
        }
        for (auto& [c, r] : shared_cqs_) {
          if (r.cq.get() != ev.element.cq) continue;
          EndpointRes* live = nullptr;
          EndpointRes* latest = nullptr;
          for (auto& [e, ep] : endpoints_) {
            if (ep.cqs.send != c && ep.cqs.recv != c) continue;
            if (!latest) latest = &ep;
            if (!live && ep.qp.qp) live = &ep;
          }
          if (EndpointRes* to = live ? live : latest) to->async.push_back(name);
        }
        return;
      case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED:
        for (auto& [s, r] : srqs_) {
          if (r.srq.get() == ev.element.srq) r.async.push_back(name);
        }
        return;
      default:
        for (auto& [e, ep] : endpoints_) ep.async.push_back(name);
        return;
    }
  }

  static int async_event_value(std::string_view n) {
    static const std::map<std::string_view, int> values{
        {"IBV_EVENT_CQ_ERR", IBV_EVENT_CQ_ERR}, {"IBV_EVENT_QP_FATAL", IBV_EVENT_QP_FATAL},
        {"IBV_EVENT_QP_REQ_ERR", IBV_EVENT_QP_REQ_ERR}, {"IBV_EVENT_QP_ACCESS_ERR", IBV_EVENT_QP_ACCESS_ERR},
        {"IBV_EVENT_COMM_EST", IBV_EVENT_COMM_EST}, {"IBV_EVENT_SQ_DRAINED", IBV_EVENT_SQ_DRAINED},
        {"IBV_EVENT_PATH_MIG", IBV_EVENT_PATH_MIG}, {"IBV_EVENT_PATH_MIG_ERR", IBV_EVENT_PATH_MIG_ERR},
        {"IBV_EVENT_DEVICE_FATAL", IBV_EVENT_DEVICE_FATAL}, {"IBV_EVENT_PORT_ACTIVE", IBV_EVENT_PORT_ACTIVE},
        {"IBV_EVENT_PORT_ERR", IBV_EVENT_PORT_ERR}, {"IBV_EVENT_LID_CHANGE", IBV_EVENT_LID_CHANGE},
        {"IBV_EVENT_PKEY_CHANGE", IBV_EVENT_PKEY_CHANGE}, {"IBV_EVENT_SM_CHANGE", IBV_EVENT_SM_CHANGE},
        {"IBV_EVENT_SRQ_ERR", IBV_EVENT_SRQ_ERR}, {"IBV_EVENT_SRQ_LIMIT_REACHED", IBV_EVENT_SRQ_LIMIT_REACHED},
        {"IBV_EVENT_QP_LAST_WQE_REACHED", IBV_EVENT_QP_LAST_WQE_REACHED},
        {"IBV_EVENT_CLIENT_REREGISTER", IBV_EVENT_CLIENT_REREGISTER},
        {"IBV_EVENT_GID_CHANGE", IBV_EVENT_GID_CHANGE}, {"IBV_EVENT_WQ_FATAL", IBV_EVENT_WQ_FATAL}};
    auto it = values.find(n);
    return it == values.end() ? -1 : it->second;
  }

  static Status nonblocking(rdma_event_channel* ch) {
    int flags = fcntl(ch->fd, F_GETFL);
    if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) return rdma_fail("fcntl", "event channel");
    return Status::success();
  }
  static Status nonblocking(ibv_comp_channel* ch) {
    int flags = fcntl(ch->fd, F_GETFL);
    if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
      return fail("fcntl", errno, "completion channel O_NONBLOCK");
    }
    return Status::success();
  }

  // e's MR, completion channel and own CQs (made at its first QP that uses them; a later QP of e reuses them) and the
  // init attributes of an RC QP on them, or on the shared CQs `cqs` names (which must exist: else EINVAL from `api`,
  // naming the CQ, before anything is made). The own CQs are on e's channel (comp_vector 0); a CQ that is never armed
  // (req_notify_cq) raises no event there, so traces that do not arm see the CQs as before.
  Status qp_init(const char* api, Endpoint e, EndpointRes& ep, int srq, const QpCqs& cqs, ibv_qp_init_attr* attr) {
    for (CqKind k : {CqKind::kSend, CqKind::kRecv}) {
      if (cqs.of(k) >= 0 && !shared_cqs_.count(cqs.of(k))) {
        return fail(api, EINVAL, fmt::format("{}: no shared CQ {}", cq_kind_name(k), cqs.of(k)));
      }
    }
    if (!ep.mr) {
      ep.mr.reset(ibv_reg_mr(pd_.get(), ep.buffer.data(), ep.buffer.size(),
                             IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
      if (!ep.mr) return rdma_fail("ibv_reg_mr", e.text());
    }
    if (!ep.comp_channel && (cqs.send < 0 || cqs.recv < 0)) {
      ep.comp_channel.reset(ibv_create_comp_channel(ctx_));
      if (!ep.comp_channel) return rdma_fail("ibv_create_comp_channel", e.text());
      if (Status st = nonblocking(ep.comp_channel.get()); !st.ok()) return st;
    }
    if (!ep.send_cq && cqs.send < 0) {
      ep.send_cq.reset(ibv_create_cq(ctx_, kCqDepth, nullptr, ep.comp_channel.get(), 0));
      if (!ep.send_cq) return rdma_fail("ibv_create_cq", "send CQ");
    }
    if (!ep.recv_cq && cqs.recv < 0) {
      ep.recv_cq.reset(ibv_create_cq(ctx_, kCqDepth, nullptr, ep.comp_channel.get(), 0));
      if (!ep.recv_cq) return rdma_fail("ibv_create_cq", "receive CQ");
    }
    attr->send_cq = cqs.send >= 0 ? shared_cqs_.at(cqs.send).cq.get() : ep.send_cq.get();
    attr->recv_cq = cqs.recv >= 0 ? shared_cqs_.at(cqs.recv).cq.get() : ep.recv_cq.get();
    if (srq >= 0) {
      auto it = srqs_.find(srq);
      if (it == srqs_.end() || !it->second.srq) return fail(api, EINVAL, fmt::format("no SRQ {}", srq));
      attr->srq = it->second.srq.get();
    }
    attr->cap.max_send_wr = kSendDepth;
    attr->cap.max_recv_wr = srq >= 0 ? 0 : kSlots;
    attr->cap.max_send_sge = 1;
    attr->cap.max_recv_sge = 1;
    attr->qp_type = IBV_QPT_RC;
    attr->sq_sig_all = 0;  // every WR says whether it is signaled (post_send_unsignaled)
    return Status::success();
  }

  // A QP of e was created on `cqs`: its completions in a shared CQ are routed to e by its number, which stays e's
  // after the QP is destroyed (its completions stay in the CQ). A number the device gives again to a later QP is
  // that QP's from then on.
  void adopt(Endpoint e, EndpointRes& ep, const QpCqs& cqs) {
    ep.cqs = cqs;
    qp_owner_[ep.qp.qp->qp_num] = e;
  }

  // The CQ of kind k of e's latest QP: its own, or the shared CQ it was created on (then *shared, when asked for, is
  // that CQ's resources). EINVAL from `api` before e has a QP, and for a shared CQ destroyed since.
  Status cq_of(const char* api, Endpoint e, CqKind k, ibv_cq** cq, SharedCqRes** shared) {
    *cq = nullptr;
    if (shared) *shared = nullptr;
    EndpointRes* ep = find(e);
    int c = ep ? ep->cqs.of(k) : -1;
    if (c >= 0) {
      auto it = shared_cqs_.find(c);
      if (it == shared_cqs_.end()) {
        return fail(api, EINVAL,
                    fmt::format("{}'s {} is shared CQ {}, which does not exist (destroyed)", e.text(), cq_kind_name(k), c));
      }
      *cq = it->second.cq.get();
      if (shared) *shared = &it->second;
      return Status::success();
    }
    *cq = ep ? (k == CqKind::kSend ? ep->send_cq.get() : ep->recv_cq.get()) : nullptr;
    if (!*cq) return fail(api, EINVAL, "no CQ (no QP created on this endpoint)");
    return Status::success();
  }

  // The state a cm_id's QP is in, when this device did not move it last: ibv_query_qp (siw always reports RESET
  // there, rdma-semantics.md: then RTS takes the state alone, which is what an established cm QP needs).
  std::optional<QpState> current_state(EndpointRes& ep) {
    if (ep.state) return ep.state;
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    if (ibv_query_qp(ep.qp.qp, &attr, IBV_QP_STATE, &init)) return std::nullopt;
    return static_cast<QpState>(attr.qp_state);
  }

  // The RoCE v2 GID of the device's IPv4 address (::ffff:a.b.c.d) and its index, from the port's GID table.
  Status roce_gid(int* index, ibv_gid* gid) {
    std::array<ibv_gid_entry, 64> table{};
    ssize_t n = ibv_query_gid_table(ctx_, table.data(), table.size(), 0);
    if (n < 0) return fail("ibv_query_gid_table", static_cast<int>(-n));
    for (ssize_t i = 0; i < n; ++i) {
      const ibv_gid_entry& g = table[i];
      const uint8_t* raw = g.gid.raw;
      bool v4 = std::all_of(raw, raw + 10, [](uint8_t b) { return b == 0; }) && raw[10] == 0xff && raw[11] == 0xff &&
                std::memcmp(raw + 12, &addr_.sin_addr, 4) == 0;
      if (g.port_num == 1 && g.gid_type == IBV_GID_TYPE_ROCE_V2 && v4) {
        *index = static_cast<int>(g.gid_index);
        *gid = g.gid;
        return Status::success();
      }
    }
    char text[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &addr_.sin_addr, text, sizeof text);
    return fail("ibv_query_gid_table", ENOENT, fmt::format("no RoCE v2 GID for {} on port 1", text));
  }

  // Routes an event read from a channel to its endpoint's pending list and acknowledges it. A CONNECT_REQUEST goes
  // to PASSIVE[c] for the connection index in its private data; its new cm_id moves to PASSIVE[c]'s own channel.
  Status route(rdma_cm_event* ev) {
    std::string name = event_name(ev->event);
    if (ev->status) name += fmt::format(" (status {})", ev->status);
    const auto* pd = static_cast<const uint8_t*>(ev->param.conn.private_data);
    const size_t pd_len = ev->param.conn.private_data_len;
    if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
      RequestTag tag;
      bool tagged = pd && pd_len >= sizeof tag && std::memcmp(pd, tag.magic.data(), 4) == 0;
      if (tagged && pd[5]) name += fmt::format(" (data {})", pd[5]);
      rdma_cm_id* id = ev->id;
      if (!tagged) {
        rdma_ack_cm_event(ev);
        rdma_reject(id, nullptr, 0);
        rdma_destroy_id(id);
        return Status::success();  // not a request of this replay
      }
      Endpoint e{Ep::kPassive, pd[4]};
      EndpointRes& ep = endpoints_[e];
      if (ep.id || ep.id_destroyed) {
        rdma_ack_cm_event(ev);
        rdma_reject(id, nullptr, 0);
        rdma_destroy_id(id);
        ep.pending.push_back(name + " (another one for this connection, rejected)");
        return Status::success();
      }
      ep.channel.reset(rdma_create_event_channel());
      if (!ep.channel) {
        rdma_ack_cm_event(ev);
        return channel_fail();
      }
      if (Status st = nonblocking(ep.channel.get()); !st.ok()) return st;
      ep.id.reset(id);
      if (rdma_ack_cm_event(ev)) return rdma_fail("rdma_ack_cm_event");
      if (rdma_migrate_id(id, ep.channel.get())) return rdma_fail("rdma_migrate_id", e.text());
      ep.pending.push_back(name);
      return Status::success();
    }
    EndpointRes* target = nullptr;
    for (auto& [e, ep] : endpoints_) {
      if (ep.id.get() == ev->id) target = &ep;
    }
    // the REP's (ESTABLISHED at the active side) and a REJ's private data; IB delivers the whole field, zero-filled
    const bool with_data = ev->event == RDMA_CM_EVENT_ESTABLISHED || ev->event == RDMA_CM_EVENT_REJECTED ||
                           ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE;
    if (with_data && pd && pd_len >= 1 && pd[0]) name += fmt::format(" (data {})", pd[0]);
    if (rdma_ack_cm_event(ev)) return rdma_fail("rdma_ack_cm_event");
    if (target) target->pending.push_back(name);  // else the listener's own event (none is predicted)
    return Status::success();
  }

  static rdma_conn_param conn_param(const ConnParam& p) {
    rdma_conn_param cp{};
    cp.responder_resources = static_cast<uint8_t>(p.responder_resources);
    cp.initiator_depth = static_cast<uint8_t>(p.initiator_depth);
    cp.retry_count = static_cast<uint8_t>(p.retry_count);
    cp.rnr_retry_count = static_cast<uint8_t>(p.rnr_retry_count);
    return cp;
  }

  static std::string event_name(rdma_cm_event_type t) {
    int v = static_cast<int>(t);
    if (v >= 0 && v < static_cast<int>(kCmEventNames.size())) {
      return "RDMA_CM_EVENT_" + std::string(kCmEventNames[v]);
    }
    return fmt::format("RDMA_CM_EVENT_{}", v);
  }

  // librdmacm reports a /dev/infiniband/rdma_cm it may not open as ENODEV/ENOENT (it finds no usable device): name
  // the permission problem when that is what it is.
  static Status channel_fail() {
    int err = errno;
    for (const char* dev : {"/dev/infiniband/rdma_cm", "/dev/infiniband/uverbs0"}) {
      if (access(dev, R_OK | W_OK) != 0 && errno == EACCES) {
        return fail("rdma_create_event_channel", EACCES, fmt::format("{}: no read/write permission for this user", dev));
      }
    }
    return fail("rdma_create_event_channel", err, "/dev/infiniband/rdma_cm");
  }

  // The named ibv device must exist; the list itself needs /sys/class/infiniband and the uverbs module.
  Status check_device() {
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (!list) return fail("ibv_get_device_list", errno, "no RDMA support (ib_uverbs not loaded?)");
    std::string names;
    bool found = false;
    for (int i = 0; i < n; ++i) {
      std::string d = ibv_get_device_name(list[i]);
      names += (names.empty() ? "" : ", ") + d;
      if (d == device_) found = true;
    }
    ibv_free_device_list(list);
    if (n == 0) return fail("ibv_get_device_list", ENODEV, "no RDMA device on this machine");
    if (!found) return fail("ibv_get_device_list", ENODEV, fmt::format("no device {} (devices: {})", device_, names));
    return Status::success();
  }

  // The IPv4 address to use: --address, or the first local one librdmacm binds to the device.
  Status find_address(sockaddr_in* out) {
    out->sin_family = AF_INET;
    if (!address_.empty()) {
      if (inet_pton(AF_INET, address_.c_str(), &out->sin_addr) != 1) {
        return fail("inet_pton", EINVAL, fmt::format("not an IPv4 address: {}", address_));
      }
      return Status::success();
    }
    ifaddrs* ifs = nullptr;
    if (getifaddrs(&ifs)) return rdma_fail("getifaddrs");
    std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> guard(ifs, freeifaddrs);
    for (ifaddrs* i = ifs; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
      rdma_cm_id* probe = nullptr;
      if (rdma_create_id(nullptr, &probe, nullptr, RDMA_PS_TCP)) return rdma_fail("rdma_create_id", "address probe");
      IdHandle held(probe);
      sockaddr_in a = *reinterpret_cast<sockaddr_in*>(i->ifa_addr);
      a.sin_port = 0;
      if (rdma_bind_addr(probe, reinterpret_cast<sockaddr*>(&a)) == 0 && probe->verbs &&
          device_ == ibv_get_device_name(probe->verbs->device)) {
        *out = a;
        return Status::success();
      }
    }
    return fail("rdma_bind_addr", EADDRNOTAVAIL, fmt::format("no local IPv4 address belongs to {}", device_));
  }

  Status get_event(rdma_event_channel* ch, Millis timeout, rdma_cm_event** ev) {
    *ev = nullptr;
    pollfd p{ch->fd, POLLIN, 0};
    int rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (rc < 0) return rdma_fail("poll", "CM event channel");
    if (rc == 0) return Status::success();
    if (rdma_get_cm_event(ch, ev)) {
      *ev = nullptr;
      if (errno == EAGAIN) return Status::success();  // librdmacm consumed an internal event
      return rdma_fail("rdma_get_cm_event");
    }
    return Status::success();
  }

  // Polls `cq` until one completion or the timeout (1 ms naps between empty polls); *got says whether *wc has one.
  Status poll_cq(ibv_cq* cq, Millis timeout, ibv_wc* wc, bool* got) {
    *got = false;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      int n = ibv_poll_cq(cq, 1, wc);
      if (n < 0) return fail("ibv_poll_cq", EIO);
      if (n == 1) {
        *got = true;
        return Status::success();
      }
      if (std::chrono::steady_clock::now() >= deadline) return Status::success();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // e's next completion of kind k from its own CQ of that kind (the shared ones: next_cq_completion).
  Status poll_own(Endpoint e, CqKind k, Millis timeout, std::optional<Completion>* out) {
    out->reset();
    EndpointRes* ep = find(e);
    ibv_cq* cq = ep ? (k == CqKind::kSend ? ep->send_cq.get() : ep->recv_cq.get()) : nullptr;
    if (!cq) {
      return fail("ibv_poll_cq", EINVAL, ep && ep->mr ? fmt::format("no own {} (the endpoint's QPs use shared CQs)",
                                                                       cq_kind_name(k))
                                                         : "no CQ (no QP created on this endpoint)");
    }
    ibv_wc wc{};
    bool got = false;
    if (Status st = poll_cq(cq, timeout, &wc, &got); !st.ok() || !got) return st;
    *out = completion(e, *ep, wc, k == CqKind::kSend);
    return Status::success();
  }

  // A work completion of e's QP as the conductor compares it. A send completion's opcode is that of the WR posted
  // under its wr_id (wc.opcode is valid only on success: ibv_poll_cq.3); a receive completion's source (the QP's
  // receive queue or an SRQ) is in its wr_id; with IBV_WC_WITH_INV, the rkey in wc.invalidated_rkey is named by e's
  // data buffer whose current or last rkey it is.
  static Completion completion(Endpoint e, EndpointRes& ep, const ibv_wc& wc, bool send) {
    int s = static_cast<int>(wc.status);
    Completion c;
    c.status = s;
    c.name = s >= 0 && s < static_cast<int>(kWcStatusNames.size()) ? std::string(kWcStatusNames[s])
                                                                   : fmt::format("IBV_WC_STATUS_{}", s);
    if (send) {
      auto it = ep.send_wrs.find(wc.wr_id);
      c.opcode = it != ep.send_wrs.end() ? it->second : fmt::format("(wr_id {} not posted here)", wc.wr_id);
      if (it != ep.send_wrs.end()) ep.send_wrs.erase(it);
    } else {
      c.opcode = "IBV_WC_RECV";
      c.srq = static_cast<int>(wc.wr_id >> kWrSourceShift) - 1;
      if (wc.wc_flags & IBV_WC_WITH_INV) {
        for (const auto& [i, d] : ep.data_mrs) {
          if (d.rkey != 0 && d.rkey == wc.invalidated_rkey) c.inv_mr = i;
        }
        c.invalidated = c.inv_mr >= 0 ? fmt::format("MR {}", c.inv_mr)
                                      : fmt::format("rkey {:#x} (none of {}'s memory regions)", wc.invalidated_rkey,
                                                    e.text());
      }
    }
    return c;
  }

  std::string device_, address_;
  Millis timeout_{5000};
  sockaddr_in addr_{};
  uint16_t listen_port_ = 0;
  bool listening_ = false;
  ibv_port_attr port_{};
  ibv_context* ctx_ = nullptr;  // owned by librdmacm, held open by devices_
  // Declared in creation order; destroyed in reverse: endpoints (QP, CQs, completion channel, MR, cm_id, channel
  // each), shared CQs (each before its channel; after every QP, so that none is still associated with one), SRQs,
  // listener, its channel, the PD, the device list.
  DevicesHandle devices_;
  PdHandle pd_;
  ChannelHandle listen_channel_;
  IdHandle listener_;
  std::map<int, SrqRes> srqs_;
  std::map<int, SharedCqRes> shared_cqs_;
  std::map<Endpoint, EndpointRes> endpoints_;
  // QP number -> the endpoint whose QP has it (destroyed QPs included): how a shared CQ's completions are routed.
  std::map<uint32_t, Endpoint> qp_owner_;
};

}  // namespace

std::unique_ptr<Device> make_rdma_device(const std::string& device, const std::string& address) {
  return std::make_unique<RdmaDevice>(device, address);
}

}  // namespace qpcheck::verbs
