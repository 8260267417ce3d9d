#include "verbs_backend/rdma_device.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "checker/lang/replay_ops.h"

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
using ChannelHandle = Handle<rdma_event_channel, destroy_channel>;
using IdHandle = Handle<rdma_cm_id, rdma_destroy_id>;
using PdHandle = Handle<ibv_pd, ibv_dealloc_pd>;
using MrHandle = Handle<ibv_mr, ibv_dereg_mr>;
using CqHandle = Handle<ibv_cq, ibv_destroy_cq>;

// The QP belongs to its cm_id: rdma_destroy_qp(id).
struct QpHandle {
  rdma_cm_id* id = nullptr;
  QpHandle() = default;
  QpHandle(const QpHandle&) = delete;
  QpHandle& operator=(const QpHandle&) = delete;
  ~QpHandle() {
    if (id) rdma_destroy_qp(id);
  }
};

Status rdma_fail(const char* api, std::string context = "") { return fail(api, errno, std::move(context)); }

constexpr int kSlots = 64;           // receive buffers per endpoint (post_recv count is at most 64)
constexpr size_t kSlotBytes = 64;

// One endpoint's resources, declared in creation order (destroyed in reverse: QP, CQs, MR, PD, cm_id).
struct Endpoint {
  IdHandle id;
  PdHandle pd;
  std::vector<char> buffer = std::vector<char>(kSlots * kSlotBytes * 2);
  MrHandle mr;
  CqHandle send_cq, recv_cq;
  QpHandle qp;
  int next_slot = 0;
  uint64_t next_wr_id = 1;
};

class RdmaDevice : public Device {
 public:
  RdmaDevice(std::string device, std::string address) : device_(std::move(device)), address_(std::move(address)) {}

  std::string name() const override { return device_; }

  Status open(Millis timeout) override {
    timeout_ = timeout;
    if (Status st = check_device(); !st.ok()) return st;
    passive_channel_.reset(rdma_create_event_channel());
    if (!passive_channel_) return channel_fail();
    active_channel_.reset(rdma_create_event_channel());
    if (!active_channel_) return channel_fail();
    for (rdma_event_channel* ch : {passive_channel_.get(), active_channel_.get()}) {
      int flags = fcntl(ch->fd, F_GETFL);
      if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) return rdma_fail("fcntl", "event channel");
    }
    sockaddr_in addr{};
    if (Status st = find_address(&addr); !st.ok()) return st;
    // Passive: listen on the device's address, any port.
    rdma_cm_id* id = nullptr;
    if (rdma_create_id(passive_channel_.get(), &id, nullptr, RDMA_PS_TCP)) return rdma_fail("rdma_create_id");
    listener_.reset(id);
    if (rdma_bind_addr(listener_.get(), reinterpret_cast<sockaddr*>(&addr))) return rdma_fail("rdma_bind_addr");
    if (rdma_listen(listener_.get(), 4)) return rdma_fail("rdma_listen");
    sockaddr_in dst = addr;
    dst.sin_port = rdma_get_src_port(listener_.get());
    // Active: resolve the same address (the device's own), then the route.
    if (rdma_create_id(active_channel_.get(), &id, nullptr, RDMA_PS_TCP)) return rdma_fail("rdma_create_id");
    active_.id.reset(id);
    sockaddr_in src = addr;
    src.sin_port = 0;
    int ms = static_cast<int>(timeout.count());
    if (rdma_resolve_addr(active_.id.get(), reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&dst), ms)) {
      return rdma_fail("rdma_resolve_addr");
    }
    if (Status st = setup_event(RDMA_CM_EVENT_ADDR_RESOLVED); !st.ok()) return st;
    if (rdma_resolve_route(active_.id.get(), ms)) return rdma_fail("rdma_resolve_route");
    return setup_event(RDMA_CM_EVENT_ROUTE_RESOLVED);
  }

  Status create_qp(Ep e) override {
    Endpoint& ep = side(e);
    if (!ep.id) return fail("rdma_create_qp", EINVAL, "PASSIVE has no cm_id before its CONNECT_REQUEST");
    if (ep.qp.id) return fail("rdma_create_qp", EEXIST, "the cm_id already has a QP");
    ibv_context* ctx = ep.id->verbs;
    ep.pd.reset(ibv_alloc_pd(ctx));
    if (!ep.pd) return rdma_fail("ibv_alloc_pd");
    ep.mr.reset(ibv_reg_mr(ep.pd.get(), ep.buffer.data(), ep.buffer.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!ep.mr) return rdma_fail("ibv_reg_mr");
    ep.send_cq.reset(ibv_create_cq(ctx, kSlots, nullptr, nullptr, 0));
    if (!ep.send_cq) return rdma_fail("ibv_create_cq", "send CQ");
    ep.recv_cq.reset(ibv_create_cq(ctx, kSlots, nullptr, nullptr, 0));
    if (!ep.recv_cq) return rdma_fail("ibv_create_cq", "receive CQ");
    ibv_qp_init_attr attr{};
    attr.send_cq = ep.send_cq.get();
    attr.recv_cq = ep.recv_cq.get();
    attr.cap.max_send_wr = 16;
    attr.cap.max_recv_wr = kSlots;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    attr.qp_type = IBV_QPT_RC;
    attr.sq_sig_all = 1;
    if (rdma_create_qp(ep.id.get(), ep.pd.get(), &attr)) return rdma_fail("rdma_create_qp");
    ep.qp.id = ep.id.get();
    return Status::success();
  }

  Status post_recv(Ep e, int count) override {
    Endpoint& ep = side(e);
    if (!ep.qp.id) return fail("ibv_post_recv", EINVAL, "no QP (rdma_create_qp not called)");
    for (int i = 0; i < count; ++i) {
      ibv_sge sge{};
      sge.addr = reinterpret_cast<uintptr_t>(ep.buffer.data() + (ep.next_slot++ % kSlots) * kSlotBytes);
      sge.length = kSlotBytes;
      sge.lkey = ep.mr->lkey;
      ibv_recv_wr wr{};
      wr.wr_id = ep.next_wr_id++;
      wr.sg_list = &sge;
      wr.num_sge = 1;
      ibv_recv_wr* bad = nullptr;
      if (int rc = ibv_post_recv(ep.id->qp, &wr, &bad)) return fail("ibv_post_recv", rc);  // returns errno
    }
    return Status::success();
  }

  Status post_send(Ep e) override {
    Endpoint& ep = side(e);
    if (!ep.qp.id) return fail("ibv_post_send", EINVAL, "no QP (rdma_create_qp not called)");
    char* msg = ep.buffer.data() + kSlots * kSlotBytes;
    std::snprintf(msg, kSlotBytes, "qpcheck replay %s", ep_name(e));
    ibv_sge sge{};
    sge.addr = reinterpret_cast<uintptr_t>(msg);
    sge.length = 32;
    sge.lkey = ep.mr->lkey;
    ibv_send_wr wr{};
    wr.wr_id = ep.next_wr_id++;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (int rc = ibv_post_send(ep.id->qp, &wr, &bad)) return fail("ibv_post_send", rc);  // returns errno
    return Status::success();
  }

  Status connect(Ep e, const ConnParam& p) override {
    if (e != Ep::kActive) return fail("rdma_connect", EINVAL, "only the ACTIVE cm_id connects");
    rdma_conn_param cp = conn_param(p);
    if (rdma_connect(active_.id.get(), &cp)) return rdma_fail("rdma_connect");
    return Status::success();
  }

  Status accept(Ep e, const ConnParam& p) override {
    if (e != Ep::kPassive || !passive_.id) return fail("rdma_accept", EINVAL, "no CONNECT_REQUEST to accept");
    rdma_conn_param cp = conn_param(p);
    if (rdma_accept(passive_.id.get(), &cp)) return rdma_fail("rdma_accept");
    return Status::success();
  }

  Status reject(Ep e) override {
    if (e != Ep::kPassive || !passive_.id) return fail("rdma_reject", EINVAL, "no CONNECT_REQUEST to reject");
    if (rdma_reject(passive_.id.get(), nullptr, 0)) return rdma_fail("rdma_reject");
    return Status::success();
  }

  Status disconnect(Ep e) override {
    Endpoint& ep = side(e);
    if (!ep.id) return fail("rdma_disconnect", EINVAL, "no cm_id");
    if (rdma_disconnect(ep.id.get())) return rdma_fail("rdma_disconnect");
    return Status::success();
  }

  Status next_cm_event(Ep e, Millis timeout, std::optional<std::string>* out) override {
    out->reset();
    rdma_event_channel* ch = e == Ep::kActive ? active_channel_.get() : passive_channel_.get();
    rdma_cm_event* ev = nullptr;
    if (Status st = get_event(ch, timeout, &ev); !st.ok() || !ev) return st;
    std::string name = event_name(ev->event);
    if (e == Ep::kPassive && ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
      if (passive_.id) {
        rdma_reject(ev->id, nullptr, 0);  // one connection per replay: a second request is refused
        rdma_destroy_id_later_.push_back(IdHandle(ev->id));
        name += " (a second one, rejected)";
      } else {
        passive_.id.reset(ev->id);  // owned from now on; destroyed before the listener
      }
    }
    if (ev->status) name += fmt::format(" (status {})", ev->status);
    if (rdma_ack_cm_event(ev)) return rdma_fail("rdma_ack_cm_event");
    *out = name;
    return Status::success();
  }

  Status next_send_completion(Ep e, Millis timeout, std::optional<Completion>* wc) override {
    return poll(side(e).send_cq.get(), timeout, wc);
  }
  Status next_recv_completion(Ep e, Millis timeout, std::optional<Completion>* wc) override {
    return poll(side(e).recv_cq.get(), timeout, wc);
  }

 private:
  Endpoint& side(Ep e) { return e == Ep::kActive ? active_ : passive_; }

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
    if (v >= 0 && v < static_cast<int>(lang::kCmEventNames.size())) {
      return "RDMA_CM_EVENT_" + std::string(lang::kCmEventNames[v]);
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

  // Setup events on the active channel (address and route resolution) before the trace starts.
  Status setup_event(rdma_cm_event_type want) {
    rdma_cm_event* ev = nullptr;
    if (Status st = get_event(active_channel_.get(), timeout_, &ev); !st.ok()) return st;
    if (!ev) return fail("rdma_get_cm_event", ETIMEDOUT, fmt::format("no {} within {} ms", event_name(want), timeout_.count()));
    rdma_cm_event_type got = ev->event;
    int status = ev->status;
    rdma_ack_cm_event(ev);
    if (got != want) {
      return fail("rdma_get_cm_event", status < 0 ? -status : EPROTO,
                  fmt::format("expected {}, got {} (status {})", event_name(want), event_name(got), status));
    }
    return Status::success();
  }

  // Polls a CQ until one completion or the timeout (1 ms naps between empty polls).
  Status poll(ibv_cq* cq, Millis timeout, std::optional<Completion>* out) {
    out->reset();
    if (!cq) return fail("ibv_poll_cq", EINVAL, "no CQ (rdma_create_qp not called)");
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      ibv_wc wc{};
      int n = ibv_poll_cq(cq, 1, &wc);
      if (n < 0) return fail("ibv_poll_cq", EIO);
      if (n == 1) {
        int s = static_cast<int>(wc.status);
        std::string name = s >= 0 && s < static_cast<int>(lang::kWcStatusNames.size())
                               ? std::string(lang::kWcStatusNames[s])
                               : fmt::format("IBV_WC_STATUS_{}", s);
        *out = Completion{s, name};
        return Status::success();
      }
      if (std::chrono::steady_clock::now() >= deadline) return Status::success();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  std::string device_, address_;
  Millis timeout_{5000};
  // Declared in creation order; destroyed in reverse: passive endpoint, active endpoint, listener, channels.
  ChannelHandle passive_channel_, active_channel_;
  IdHandle listener_;
  std::vector<IdHandle> rdma_destroy_id_later_;
  Endpoint active_, passive_;
};

}  // namespace

std::unique_ptr<Device> make_rdma_device(const std::string& device, const std::string& address) {
  return std::make_unique<RdmaDevice>(device, address);
}

}  // namespace qpcheck::verbs
