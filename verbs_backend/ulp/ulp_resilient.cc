// A small upper-layer protocol over librdmacm that survives faults: the program of the fault-injection suite
// (tests/live/run_faults.sh, docs/faults.md) and of tests/live/specs/ulp_resilient.qpspec, which describes it call for call.
// One RC connection; the client sends `--msgs` CALLs one at a time, the server answers each with a REPLY, then the
// client disconnects. Unlike ulp_pingpong, every wait takes whatever comes: each CM event (rdma_get_cm_event.3), each
// affiliated or unaffiliated async event (ibv_get_async_event.3) and each completion status (ibv_poll_cq.3) has its
// branch, and every path ends in the same teardown: rdma_disconnect if the connection got that far, the outstanding
// work requests taken from the CQs (their flushes, IBTA 10.3.1) for as long as they come, rdma_destroy_qp,
// rdma_destroy_id (rdma_destroy_id.3: the QP first).
//
//   ulp_resilient -s ADDR PORT [options]        the server, listening on ADDR:PORT
//   ulp_resilient -c ADDR PORT [options]        the client, connecting to ADDR:PORT
//     --src ADDR      the client's source address (rdma_resolve_addr's src_addr)
//     --msgs N        CALLs the client sends (default 1; the spec models 1 or 2: its param calls)
//     --recvs N       receive WRs each side keeps posted (default 2)
//     --cqe N         entries asked for each CQ (ibv_create_cq's cqe, default 8): the fault suite sizes it too small
//     --wait-ms N     how long a wait lasts before the program gives up (default 8000)
//     --gap-ms N      the client's pause before each CALL, taking events meanwhile (default 0): gives a fault
//                     injected at a random time a connection to hit
//
// Exit status: 0 the exchange completed and the connection closed in order; 3 a fault ended it (the reason is
// printed: "ulp: fail: ..."), after the teardown; 1 a call the program does not expect to fail failed; 2 usage.
// Every line the program prints starts with "ulp: " and the time since start in ms, so a fault run's output can be
// read beside its call log.
#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <time.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr size_t kMsg = 64;
constexpr int kMaxRecvs = 8;

struct Options {
  bool server = false;
  sockaddr_in addr{};
  sockaddr_in src{};
  bool has_src = false;
  int msgs = 1;
  int recvs = 2;
  int cqe = 8;
  int wait_ms = 8000;
  int gap_ms = 0;
};

timespec g_start{};

int64_t now_ms() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (t.tv_sec - g_start.tv_sec) * 1000 + (t.tv_nsec - g_start.tv_nsec) / 1000000;
}

void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char* fmt, ...) {
  std::printf("ulp: %6lld ", static_cast<long long>(now_ms()));
  va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
  std::printf("\n");
  std::fflush(stdout);
}

[[noreturn]] void die(const char* what, int err) {
  say("%s failed: %s", what, std::strerror(err));
  std::exit(1);
}

void set_nonblocking(int fd, const char* what) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) die(what, errno);
}

// Why a run ended early; kNone while it goes on.
enum class Fault { kNone, kCmEvent, kCompletion, kAsync, kTimeout, kCall };

// One endpoint: its cm_id, the verbs resources, and what is outstanding on its QP.
struct Endpoint {
  rdma_event_channel* ch = nullptr;
  rdma_cm_id* id = nullptr;
  rdma_cm_id* listener = nullptr;  // server only
  ibv_context* verbs = nullptr;     // the device context whose async events are taken
  ibv_pd* pd = nullptr;
  ibv_cq* scq = nullptr;
  ibv_cq* rcq = nullptr;
  ibv_mr* mr = nullptr;
  char buf[(kMaxRecvs + 1) * kMsg] = {};
  int recvs_out = 0;        // receive WRs posted and not completed
  int sends_out = 0;        // send WRs posted and not completed
  bool connected = false;   // ESTABLISHED was taken
  bool disconnected = false;  // DISCONNECTED was taken
  bool disconnect_called = false;
  bool device_gone = false;   // DEVICE_REMOVAL was taken: no verbs call is made on the device any more
  int sends_done = 0;       // successful send completions
  int recvs_done = 0;       // successful receive completions
  Fault fault = Fault::kNone;
  std::string why;
};

void fail(Endpoint& e, Fault f, const std::string& why) {
  if (e.fault != Fault::kNone) return;
  e.fault = f;
  e.why = why;
  say("fail: %s", why.c_str());
}

void post_recv(Endpoint& e) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(e.buf), kMsg, e.mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  int ret = ibv_post_recv(e.id->qp, &wr, &bad);
  if (ret) {
    fail(e, Fault::kCall, std::string("ibv_post_recv: ") + std::strerror(ret));
    return;
  }
  ++e.recvs_out;
}

void post_send(Endpoint& e, const char* msg) {
  std::snprintf(e.buf + kMaxRecvs * kMsg, kMsg, "%s", msg);
  ibv_sge sge{reinterpret_cast<uintptr_t>(e.buf + kMaxRecvs * kMsg), kMsg, e.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 2;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  int ret = ibv_post_send(e.id->qp, &wr, &bad);
  if (ret) {
    fail(e, Fault::kCall, std::string("ibv_post_send: ") + std::strerror(ret));
    return;
  }
  ++e.sends_out;
}

// Takes one CM event if one is waiting; handles it. The events of the listener (server) come on the same channel.
// Returns the event type taken, or -1 when none was waiting.
int take_cm_event(Endpoint& e) {
  rdma_cm_event* ev = nullptr;
  if (rdma_get_cm_event(e.ch, &ev)) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
    die("rdma_get_cm_event", errno);
  }
  rdma_cm_event_type type = ev->event;
  int status = ev->status;
  rdma_cm_id* id = ev->id;
  if (type == RDMA_CM_EVENT_CONNECT_REQUEST && e.id == nullptr) e.id = id;
  if (rdma_ack_cm_event(ev)) die("rdma_ack_cm_event", errno);
  say("cm event %s (status %d)%s", rdma_event_str(type), status, id == e.listener ? " on the listener" : "");
  switch (type) {
    case RDMA_CM_EVENT_ESTABLISHED: e.connected = true; break;
    case RDMA_CM_EVENT_DISCONNECTED:
      // The server's run ends with it; for the client it is a fault unless the client disconnected first.
      e.disconnected = true;
      if (e.listener == nullptr && !e.disconnect_called) fail(e, Fault::kCmEvent, "RDMA_CM_EVENT_DISCONNECTED");
      break;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      e.device_gone = true;
      fail(e, Fault::kCmEvent, "RDMA_CM_EVENT_DEVICE_REMOVAL");
      break;
    case RDMA_CM_EVENT_ADDR_CHANGE:
      // rdma_get_cm_event.3: the cm_id's address changed (bonding failover); the connection is the ULP's to redo.
      fail(e, Fault::kCmEvent, "RDMA_CM_EVENT_ADDR_CHANGE");
      break;
    case RDMA_CM_EVENT_CONNECT_REQUEST:
    case RDMA_CM_EVENT_ADDR_RESOLVED:
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
      break;
    default:
      fail(e, Fault::kCmEvent, std::string(rdma_event_str(type)));
      break;
  }
  return type;
}

// Takes one async event of the device context if one is waiting.
bool take_async_event(Endpoint& e) {
  if (e.verbs == nullptr || e.device_gone) return false;
  ibv_async_event ev{};
  if (ibv_get_async_event(e.verbs, &ev)) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    die("ibv_get_async_event", errno);
  }
  ibv_event_type type = ev.event_type;
  ibv_ack_async_event(&ev);
  say("async event %s", ibv_event_type_str(type));
  switch (type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_CQ_ERR:
    case IBV_EVENT_DEVICE_FATAL:
      fail(e, Fault::kAsync, ibv_event_type_str(type));
      break;
    default:  // COMM_EST, PORT_ERR, PORT_ACTIVE, GID_CHANGE, ...: informational for this ULP
      break;
  }
  return true;
}

// Polls one completion from `cq`, if any. A successful receive or send is counted; a receive re-posts its buffer
// when `repost` (the run goes on); any error status is a fault. Returns whether one was taken.
bool take_completion(Endpoint& e, ibv_cq* cq, bool repost) {
  if (e.device_gone || cq == nullptr) return false;
  ibv_wc wc{};
  int n = ibv_poll_cq(cq, 1, &wc);
  if (n < 0) die("ibv_poll_cq", -n);
  if (n == 0) return false;
  bool recv = cq == e.rcq;
  if (recv) --e.recvs_out; else --e.sends_out;
  // Once the connection is being closed (this side called rdma_disconnect, or took DISCONNECTED), the QP is in ERR
  // or about to be, and every outstanding WR completes with IBV_WC_WR_FLUSH_ERR: expected, not a fault.
  if (wc.status == IBV_WC_WR_FLUSH_ERR && (e.disconnect_called || e.disconnected)) return true;
  if (wc.status != IBV_WC_SUCCESS) {
    if (e.fault == Fault::kNone) say("%s completion %s", recv ? "receive" : "send", ibv_wc_status_str(wc.status));
    fail(e, Fault::kCompletion, std::string(recv ? "receive " : "send ") + ibv_wc_status_str(wc.status));
    return true;
  }
  if (recv) {
    ++e.recvs_done;
    say("received %s", e.buf);
    if (repost && e.fault == Fault::kNone) post_recv(e);
  } else {
    ++e.sends_done;
  }
  return true;
}

// One round of the event loop: waits up to 1 ms for the CM channel or the async fd, then takes whatever is there and
// polls both CQs once.
void pump(Endpoint& e, bool repost) {
  pollfd fds[2] = {{e.ch->fd, POLLIN, 0}, {e.verbs && !e.device_gone ? e.verbs->async_fd : -1, POLLIN, 0}};
  if (poll(fds, 2, 1) < 0 && errno != EINTR) die("poll", errno);
  while (take_cm_event(e) >= 0) {
  }
  while (take_async_event(e)) {
  }
  while (take_completion(e, e.scq, repost) || take_completion(e, e.rcq, repost)) {
  }
}

// Runs the event loop until `done(e)` or a fault or `wait_ms`; a timeout is a fault.
template <typename Done>
void wait_until(Endpoint& e, const Options& o, const char* what, Done done) {
  int64_t until = now_ms() + o.wait_ms;
  while (e.fault == Fault::kNone && !done(e)) {
    if (now_ms() > until) {
      fail(e, Fault::kTimeout, std::string("no ") + what + " within " + std::to_string(o.wait_ms) + " ms");
      return;
    }
    pump(e, true);
  }
}

void create_resources(Endpoint& e, const Options& o) {
  e.verbs = e.id->verbs;
  set_nonblocking(e.verbs->async_fd, "fcntl(async_fd)");
  e.pd = ibv_alloc_pd(e.verbs);
  if (!e.pd) die("ibv_alloc_pd", errno);
  e.scq = ibv_create_cq(e.verbs, o.cqe, nullptr, nullptr, 0);
  e.rcq = ibv_create_cq(e.verbs, o.cqe, nullptr, nullptr, 0);
  if (!e.scq || !e.rcq) die("ibv_create_cq", errno);
  ibv_qp_init_attr attr{};
  attr.send_cq = e.scq;
  attr.recv_cq = e.rcq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = 2;
  attr.cap.max_recv_wr = 4;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  // A passive cm_id whose attempt ended under it (the peer's REJ) refuses its QP (EINVAL): a fault, not a crash.
  if (rdma_create_qp(e.id, e.pd, &attr)) {
    fail(e, Fault::kCall, std::string("rdma_create_qp: ") + std::strerror(errno));
    return;
  }
  e.mr = ibv_reg_mr(e.pd, e.buf, sizeof e.buf, IBV_ACCESS_LOCAL_WRITE);
  if (!e.mr) die("ibv_reg_mr", errno);
}

// The one teardown (see the header). After DEVICE_REMOVAL no verbs call is made on the device: its resources are
// released with the cm_id (rdma_cm.h: the ULP destroys its cm_id; librdmacm and the kernel free the rest).
void teardown(Endpoint& e) {
  if (e.id && e.id->qp && e.connected && !e.disconnect_called && !e.device_gone) {
    e.disconnect_called = true;
    if (rdma_disconnect(e.id)) say("rdma_disconnect: %s", std::strerror(errno));
  }
  // The outstanding WRs complete with IBV_WC_WR_FLUSH_ERR once the QP is in ERR; take them while they come (a
  // provider that never flushes, such as user-space QPs on rxe and siw for WRs posted in ERR, is waited for 500 ms).
  int64_t quiet_since = now_ms();
  while (!e.device_gone && (e.recvs_out > 0 || e.sends_out > 0) && now_ms() - quiet_since < 500) {
    int before = e.recvs_out + e.sends_out;
    pump(e, false);
    if (e.recvs_out + e.sends_out != before) quiet_since = now_ms();
  }
  if (e.recvs_out > 0 || e.sends_out > 0) say("teardown: %d receive and %d send WRs never completed", e.recvs_out,
                                              e.sends_out);
  if (e.id && e.id->qp) rdma_destroy_qp(e.id);
  if (e.mr && ibv_dereg_mr(e.mr)) say("ibv_dereg_mr: %s", std::strerror(errno));
  if (e.scq && ibv_destroy_cq(e.scq)) say("ibv_destroy_cq: %s", std::strerror(errno));
  if (e.rcq && ibv_destroy_cq(e.rcq)) say("ibv_destroy_cq: %s", std::strerror(errno));
  if (e.pd && ibv_dealloc_pd(e.pd)) say("ibv_dealloc_pd: %s", std::strerror(errno));
  if (e.id && rdma_destroy_id(e.id)) say("rdma_destroy_id: %s", std::strerror(errno));
  e.id = nullptr;
}

rdma_conn_param conn_param(uint8_t rnr_retry) {
  rdma_conn_param p{};
  p.initiator_depth = 1;
  p.responder_resources = 1;
  p.retry_count = 7;
  p.rnr_retry_count = rnr_retry;
  return p;
}

int finish(Endpoint& e) {
  teardown(e);
  if (e.listener && rdma_destroy_id(e.listener)) say("rdma_destroy_id(listener): %s", std::strerror(errno));
  say("%s: %d sent, %d received", e.fault == Fault::kNone ? "done" : "ended by a fault", e.sends_done,
      e.recvs_done);
  return e.fault == Fault::kNone ? 0 : 3;
}

int server(Endpoint& e, const Options& o) {
  if (rdma_create_id(e.ch, &e.listener, nullptr, RDMA_PS_TCP)) die("rdma_create_id", errno);
  sockaddr_in a = o.addr;
  if (rdma_bind_addr(e.listener, reinterpret_cast<sockaddr*>(&a))) die("rdma_bind_addr", errno);
  if (rdma_listen(e.listener, 1)) die("rdma_listen", errno);
  say("server listening");
  Options first = o;
  first.wait_ms = 4 * o.wait_ms;  // the client may start late
  wait_until(e, first, "CONNECT_REQUEST", [](Endpoint& x) { return x.id != nullptr; });
  if (e.fault != Fault::kNone) return finish(e);
  create_resources(e, o);
  for (int i = 0; i < o.recvs && e.fault == Fault::kNone; ++i) post_recv(e);
  rdma_conn_param p = conn_param(7);
  if (e.fault == Fault::kNone && rdma_accept(e.id, &p)) fail(e, Fault::kCall, std::string("rdma_accept: ") +
                                                                                   std::strerror(errno));
  // Answer every CALL (also one that comes before ESTABLISHED: the QP is in RTS since rdma_accept) until the client
  // disconnects.
  int answered = 0;
  int64_t until = now_ms() + 2 * o.wait_ms;
  while (e.fault == Fault::kNone && !e.disconnected) {
    if (now_ms() > until) {
      fail(e, Fault::kTimeout, "no DISCONNECTED within " + std::to_string(2 * o.wait_ms) + " ms");
      break;
    }
    pump(e, true);
    if (e.fault == Fault::kNone && !e.disconnected && e.recvs_done > answered && e.sends_out == 0) {
      ++answered;
      post_send(e, "REPLY");
    }
  }
  return finish(e);
}

int client(Endpoint& e, const Options& o) {
  if (rdma_create_id(e.ch, &e.id, nullptr, RDMA_PS_TCP)) die("rdma_create_id", errno);
  sockaddr_in src = o.src;
  sockaddr_in dst = o.addr;
  if (rdma_resolve_addr(e.id, o.has_src ? reinterpret_cast<sockaddr*>(&src) : nullptr,
                        reinterpret_cast<sockaddr*>(&dst), 2000)) {
    fail(e, Fault::kCall, std::string("rdma_resolve_addr: ") + std::strerror(errno));
    return finish(e);
  }
  bool resolved = false;
  auto take_until = [&](rdma_cm_event_type want) {
    resolved = false;
    int64_t until = now_ms() + o.wait_ms;
    while (e.fault == Fault::kNone && !resolved) {
      if (now_ms() > until) {
        fail(e, Fault::kTimeout, std::string("no ") + rdma_event_str(want));
        return;
      }
      pollfd fd{e.ch->fd, POLLIN, 0};
      if (poll(&fd, 1, 1) < 0 && errno != EINTR) die("poll", errno);
      int t = take_cm_event(e);
      if (t == want) resolved = true;
    }
  };
  take_until(RDMA_CM_EVENT_ADDR_RESOLVED);
  if (e.fault != Fault::kNone) return finish(e);
  if (rdma_resolve_route(e.id, 2000)) {
    fail(e, Fault::kCall, std::string("rdma_resolve_route: ") + std::strerror(errno));
    return finish(e);
  }
  take_until(RDMA_CM_EVENT_ROUTE_RESOLVED);
  if (e.fault != Fault::kNone) return finish(e);
  create_resources(e, o);
  for (int i = 0; i < o.recvs && e.fault == Fault::kNone; ++i) post_recv(e);
  rdma_conn_param p = conn_param(7);
  if (e.fault == Fault::kNone && rdma_connect(e.id, &p)) fail(e, Fault::kCall, std::string("rdma_connect: ") +
                                                                                    std::strerror(errno));
  wait_until(e, o, "ESTABLISHED", [](Endpoint& x) { return x.connected; });
  for (int k = 0; k < o.msgs && e.fault == Fault::kNone; ++k) {
    for (int64_t until = now_ms() + o.gap_ms; e.fault == Fault::kNone && now_ms() < until;) pump(e, true);
    if (e.fault != Fault::kNone) break;
    post_send(e, "CALL");
    wait_until(e, o, "REPLY", [k](Endpoint& x) { return x.sends_done > k && x.recvs_done > k; });
  }
  if (e.fault == Fault::kNone) {
    e.disconnect_called = true;
    if (rdma_disconnect(e.id)) fail(e, Fault::kCall, std::string("rdma_disconnect: ") + std::strerror(errno));
    wait_until(e, o, "DISCONNECTED", [](Endpoint& x) { return x.disconnected; });
  }
  return finish(e);
}

bool parse_addr(const char* s, sockaddr_in* a) {
  a->sin_family = AF_INET;
  return inet_pton(AF_INET, s, &a->sin_addr) == 1;
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s -s|-c IPV4 PORT [--src IPV4] [--msgs N] [--recvs N] [--cqe N] [--wait-ms N] "
               "[--gap-ms N]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  clock_gettime(CLOCK_MONOTONIC, &g_start);
  Options o;
  if (argc < 4) return usage(argv[0]);
  std::string role = argv[1];
  if (role != "-s" && role != "-c") return usage(argv[0]);
  o.server = role == "-s";
  if (!parse_addr(argv[2], &o.addr)) return usage(argv[0]);
  int port = std::atoi(argv[3]);
  if (port <= 0 || port > 65535) return usage(argv[0]);
  o.addr.sin_port = htons(static_cast<uint16_t>(port));
  for (int i = 4; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) return usage(argv[0]);
    const char* v = argv[++i];
    if (a == "--src") {
      if (!parse_addr(v, &o.src)) return usage(argv[0]);
      o.has_src = true;
    } else if (a == "--msgs" || a == "--recvs" || a == "--cqe" || a == "--wait-ms" || a == "--gap-ms") {
      char* end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (*end != '\0' || n < 1 || n > 100000) return usage(argv[0]);
      if (a == "--msgs") o.msgs = static_cast<int>(n);
      if (a == "--recvs") o.recvs = static_cast<int>(n);
      if (a == "--cqe") o.cqe = static_cast<int>(n);
      if (a == "--wait-ms") o.wait_ms = static_cast<int>(n);
      if (a == "--gap-ms") o.gap_ms = static_cast<int>(n);
    } else {
      return usage(argv[0]);
    }
  }
  if (o.recvs > kMaxRecvs) return usage(argv[0]);
  Endpoint e;
  e.ch = rdma_create_event_channel();
  if (!e.ch) die("rdma_create_event_channel", errno);
  set_nonblocking(e.ch->fd, "fcntl(event channel)");
  int rc = o.server ? server(e, o) : client(e, o);
  rdma_destroy_event_channel(e.ch);
  return rc;
}
