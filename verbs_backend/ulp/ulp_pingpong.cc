// A small upper-layer protocol over librdmacm, the program of spec/13_ulp_recv_before_connect.qpspec and
// spec/14_ulp_recv_after_established.qpspec (docs/conform.md): one RC connection, the client sends one CALL, the
// server answers one REPLY, then the client disconnects. Built twice from this source: with
// QPCHECK_RECV_AFTER_ESTABLISHED the client posts its receive after RDMA_CM_EVENT_ESTABLISHED (the 2021 xprtrdma
// patch), without it after rdma_create_qp and before rdma_connect (Linux today).
//
//   ulp_recv_before_connect -s ADDR [PORT]     the server, listening on ADDR
//   ulp_recv_before_connect -c ADDR [PORT]     the client, connecting to ADDR
//
// Every call is checked; a failure prints the call and errno (or the completion's status) and exits 1. Waits for
// events and completions are bounded (10 s) so that a peer that never answers ends the run instead of hanging it.
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <time.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kWaitMs = 10000;
constexpr size_t kMsg = 64;

[[noreturn]] void die(const char* what, int err) {
  std::fprintf(stderr, "ulp: %s failed: %s\n", what, std::strerror(err));
  std::exit(1);
}

void check(int ret, const char* what) {
  if (ret) die(what, errno ? errno : ret);
}

// Takes the channel's next event, which must be `want` on `id` (nullptr: any id); returns its cm_id.
rdma_cm_id* expect_event(rdma_event_channel* ch, rdma_cm_event_type want) {
  rdma_cm_event* ev = nullptr;
  check(rdma_get_cm_event(ch, &ev), "rdma_get_cm_event");
  if (ev->event != want) {
    std::fprintf(stderr, "ulp: expected %s, got %s (status %d)\n", rdma_event_str(want), rdma_event_str(ev->event),
                 ev->status);
    std::exit(1);
  }
  rdma_cm_id* id = ev->id;
  check(rdma_ack_cm_event(ev), "rdma_ack_cm_event");
  return id;
}

// The endpoint's verbs resources: a PD, a send and a receive CQ, a buffer with its MR.
struct Endpoint {
  rdma_cm_id* id = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* scq = nullptr;
  ibv_cq* rcq = nullptr;
  ibv_mr* mr = nullptr;
  char buf[2 * kMsg] = {};
};

void create_qp(Endpoint& e) {
  e.pd = ibv_alloc_pd(e.id->verbs);
  if (!e.pd) die("ibv_alloc_pd", errno);
  e.scq = ibv_create_cq(e.id->verbs, 4, nullptr, nullptr, 0);
  e.rcq = ibv_create_cq(e.id->verbs, 4, nullptr, nullptr, 0);
  if (!e.scq || !e.rcq) die("ibv_create_cq", errno);
  ibv_qp_init_attr attr{};
  attr.send_cq = e.scq;
  attr.recv_cq = e.rcq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = 2;
  attr.cap.max_recv_wr = 4;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  check(rdma_create_qp(e.id, e.pd, &attr), "rdma_create_qp");
  e.mr = ibv_reg_mr(e.pd, e.buf, sizeof e.buf, IBV_ACCESS_LOCAL_WRITE);
  if (!e.mr) die("ibv_reg_mr", errno);
}

void post_recv(Endpoint& e) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(e.buf), kMsg, e.mr->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = 1;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  int ret = ibv_post_recv(e.id->qp, &wr, &bad);
  if (ret) die("ibv_post_recv", ret);
}

void post_send(Endpoint& e, const char* msg) {
  std::snprintf(e.buf + kMsg, kMsg, "%s", msg);
  ibv_sge sge{reinterpret_cast<uintptr_t>(e.buf + kMsg), kMsg, e.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 2;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  int ret = ibv_post_send(e.id->qp, &wr, &bad);
  if (ret) die("ibv_post_send", ret);
}

// Polls `cq` until one completion, which must be successful with `opcode`.
void poll_one(ibv_cq* cq, ibv_wc_opcode opcode, const char* what) {
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    ibv_wc wc{};
    int n = ibv_poll_cq(cq, 1, &wc);
    if (n < 0) die("ibv_poll_cq", -n);
    if (n == 1) {
      if (wc.status != IBV_WC_SUCCESS || wc.opcode != opcode) {
        std::fprintf(stderr, "ulp: %s: completion %s, opcode %d\n", what, ibv_wc_status_str(wc.status), wc.opcode);
        std::exit(1);
      }
      return;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 > kWaitMs) {
      std::fprintf(stderr, "ulp: %s: no completion within %d ms\n", what, kWaitMs);
      std::exit(1);
    }
    timespec pause{0, 200000};
    nanosleep(&pause, nullptr);
  }
}

void teardown(Endpoint& e) {
  rdma_destroy_qp(e.id);
  check(ibv_dereg_mr(e.mr), "ibv_dereg_mr");
  check(ibv_destroy_cq(e.scq), "ibv_destroy_cq");
  check(ibv_destroy_cq(e.rcq), "ibv_destroy_cq");
  check(ibv_dealloc_pd(e.pd), "ibv_dealloc_pd");
  check(rdma_destroy_id(e.id), "rdma_destroy_id");
}

sockaddr_in address(const char* ip, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
    std::fprintf(stderr, "ulp: '%s' is not an IPv4 address\n", ip);
    std::exit(2);
  }
  return a;
}

rdma_conn_param conn_param(uint8_t rnr_retry) {
  rdma_conn_param p{};
  p.initiator_depth = 1;
  p.responder_resources = 1;
  p.retry_count = 7;
  p.rnr_retry_count = rnr_retry;
  return p;
}

int server(rdma_event_channel* ch, sockaddr_in addr) {
  rdma_cm_id* listener = nullptr;
  check(rdma_create_id(ch, &listener, nullptr, RDMA_PS_TCP), "rdma_create_id");
  check(rdma_bind_addr(listener, reinterpret_cast<sockaddr*>(&addr)), "rdma_bind_addr");
  check(rdma_listen(listener, 1), "rdma_listen");
  std::printf("ulp: server listening\n");
  std::fflush(stdout);
  Endpoint e;
  e.id = expect_event(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
  create_qp(e);
  post_recv(e);
  rdma_conn_param p = conn_param(0);
  check(rdma_accept(e.id, &p), "rdma_accept");
  expect_event(ch, RDMA_CM_EVENT_ESTABLISHED);
  poll_one(e.rcq, IBV_WC_RECV, "the CALL");
  post_send(e, "REPLY");
  poll_one(e.scq, IBV_WC_SEND, "the REPLY's send completion");
  expect_event(ch, RDMA_CM_EVENT_DISCONNECTED);
  check(rdma_disconnect(e.id), "rdma_disconnect");
  teardown(e);
  check(rdma_destroy_id(listener), "rdma_destroy_id");
  std::printf("ulp: server done\n");
  return 0;
}

int client(rdma_event_channel* ch, sockaddr_in addr) {
  Endpoint e;
  check(rdma_create_id(ch, &e.id, nullptr, RDMA_PS_TCP), "rdma_create_id");
  check(rdma_resolve_addr(e.id, nullptr, reinterpret_cast<sockaddr*>(&addr), 2000), "rdma_resolve_addr");
  expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
  check(rdma_resolve_route(e.id, 2000), "rdma_resolve_route");
  expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
  create_qp(e);
#ifndef QPCHECK_RECV_AFTER_ESTABLISHED
  post_recv(e);  // Linux today: the receive is posted before rdma_connect
#endif
  rdma_conn_param p = conn_param(7);
  check(rdma_connect(e.id, &p), "rdma_connect");
  expect_event(ch, RDMA_CM_EVENT_ESTABLISHED);
#ifdef QPCHECK_RECV_AFTER_ESTABLISHED
  post_recv(e);  // the 2021 patch: only once connected
#endif
  post_send(e, "CALL");
  poll_one(e.scq, IBV_WC_SEND, "the CALL's send completion");
  poll_one(e.rcq, IBV_WC_RECV, "the REPLY");
  check(rdma_disconnect(e.id), "rdma_disconnect");
  expect_event(ch, RDMA_CM_EVENT_DISCONNECTED);
  teardown(e);
  std::printf("ulp: client done\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || (std::string(argv[1]) != "-s" && std::string(argv[1]) != "-c")) {
    std::fprintf(stderr, "usage: %s -s|-c IPV4 [PORT]\n", argv[0]);
    return 2;
  }
  int port = argc > 3 ? std::atoi(argv[3]) : 7471;
  rdma_event_channel* ch = rdma_create_event_channel();
  if (!ch) die("rdma_create_event_channel", errno);
  int rc = std::string(argv[1]) == "-s" ? server(ch, address(argv[2], port)) : client(ch, address(argv[2], port));
  rdma_destroy_event_channel(ch);
  return rc;
}
