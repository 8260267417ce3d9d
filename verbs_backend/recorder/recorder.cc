// The call recorder: a shared library loaded with LD_PRELOAD into an unmodified RDMA program. It records every
// librdmacm call and the libibverbs calls that matter for ordering, with a monotonic time and the thread, as the call
// log of docs/record-log.md (schema version 1), for `qpcheck conform` (docs/conform.md).
//
// - Exported librdmacm / libibverbs functions are interposed by name and call the next definition
//   (dlsym(RTLD_NEXT)). The inline verbs (ibv_post_send, ibv_post_recv, ibv_post_srq_recv, ibv_poll_cq: verbs.h
//   calls them through the context's ops table) are reached by replacing those four pointers of every context this
//   process opens (ibv_open_device, or first seen at ibv_create_cq / ibv_create_qp) with wrappers that call the saved
//   ones.
// - It never changes what the program does: every call's return value and errno are passed through unchanged. A
//   failure to record (the log cannot be opened or written) is said once on stderr and counted in the trailer's
//   "lost", never a crash and never an error of the program's call.
// - Each line is written with one write(2) on an O_APPEND descriptor under a mutex, so a program that crashes keeps
//   every complete line; the trailer is written at exit (a destructor). A forked child writes a log of its own.
// - A call made while another recorded call of the same thread runs (librdmacm's rdma_accept calls ibv_modify_qp)
//   carries "inside": the outer call.
// Environment: QPCHECK_RECORD, the log's path ("%p" is replaced by the pid; default qpcheck-record.%p.jsonl).
#include <dlfcn.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <signal.h>
#include <rdma/rdma_cma.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "verbs_backend/recorder/record_format.h"

namespace {

using nlohmann::json;
using namespace qpcheck::recorder;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t thread_id() { return static_cast<int64_t>(syscall(SYS_gettid)); }

std::vector<std::string> own_argv() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> out;
  std::string arg;
  while (std::getline(in, arg, '\0')) out.push_back(arg);
  return out;
}

class Log {
 public:
  void write(json record) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_locked()) {
      ++lost_;
      return;
    }
    record["seq"] = ++seq_;
    put_locked(line(record));
    // Fault injection (docs/faults.md): QPCHECK_RECORD_KILL_AT=N kills the process with SIGKILL right after its Nth
    // record is written, so that the log ends there without its trailer, between two calls of the program.
    if (kill_at_ > 0 && seq_ == kill_at_) ::kill(::getpid(), SIGKILL);
  }
  void empty_poll() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++empty_polls_;
  }
  void finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fd_ >= 0) {
      put_locked(line(trailer(seq_, lost_, empty_polls_)));
      ::close(fd_);
      fd_ = -1;
    }
    if (lost_ > 0) std::fprintf(stderr, "qpcheck recorder: %lld records could not be written\n",
                                static_cast<long long>(lost_));
    finished_ = true;
  }
  // In a forked child: a log of its own (the parent's descriptor and counts are the parent's).
  void forked() {
    fd_ = -1;
    seq_ = lost_ = empty_polls_ = kill_at_ = 0;
    warned_ = false;
    child_ = true;
  }

 private:
  bool open_locked() {
    if (fd_ >= 0) return true;
    if (warned_ || finished_) return false;
    const char* env = std::getenv("QPCHECK_RECORD");
    std::string path = env && *env ? env : "qpcheck-record.%p.jsonl";
    std::string pid = std::to_string(getpid());
    bool has_pid = false;
    for (size_t at; (at = path.find("%p")) != std::string::npos; has_pid = true) path.replace(at, 2, pid);
    if (child_ && !has_pid) path += "." + pid;  // never over the parent's log
    path_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      std::fprintf(stderr, "qpcheck recorder: cannot open the call log '%s': %s (nothing is recorded)\n",
                   path.c_str(), std::strerror(errno));
      warned_ = true;
      return false;
    }
    std::vector<std::string> argv = own_argv();
    put_locked(line(header(getpid(), argv.empty() ? "" : argv[0], argv, now_ns())));
    if (const char* k = std::getenv("QPCHECK_RECORD_KILL_AT"); k && *k) kill_at_ = std::strtoll(k, nullptr, 10);
    return true;
  }
  void put_locked(const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ++lost_;
        if (!warned_) {
          std::fprintf(stderr, "qpcheck recorder: writing the call log '%s' failed: %s\n", path_.c_str(),
                       std::strerror(errno));
          warned_ = true;
        }
        return;
      }
      done += static_cast<size_t>(n);
    }
  }

  std::mutex mutex_;
  int fd_ = -1;
  int64_t seq_ = 0, lost_ = 0, empty_polls_ = 0, kill_at_ = 0;
  bool warned_ = false, finished_ = false, child_ = false;
  std::string path_;
};

Log& log() {
  static Log* l = [] {
    auto* p = new Log;  // never destroyed: calls from other destructors may still record
    pthread_atfork(nullptr, nullptr, [] { log().forked(); });
    return p;
  }();
  return *l;
}

__attribute__((destructor)) void finish_log() { log().finish(); }

// The recorded call a thread is in, for "inside".
thread_local const char* outer_call = nullptr;

// One recorded call: marks the thread as inside it while it runs; fills the common fields.
class Call {
 public:
  explicit Call(const char* name) : name_(name), outer_(outer_call), t_(now_ns()) {
    if (!outer_call) outer_call = name;
  }
  ~Call() {
    if (!outer_) outer_call = nullptr;
  }
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  // The record of a call that returned `ret` with `err` (0: no error) and was stamped at its entry, or at its return
  // when `at_return` (a call that delivers an observation).
  json record(int64_t ret, int err, bool at_return = false) const {
    json j{{"t", at_return ? now_ns() : t_}, {"tid", thread_id()}, {"call", name_}, {"ret", ret}};
    if (err) j["errno"] = err;
    if (outer_) j["inside"] = outer_;
    return j;
  }

 private:
  const char* name_;
  const char* outer_;
  int64_t t_;
};

// The next definition of `name` (librdmacm's, libibverbs'), or nullptr.
template <typename F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

#define NEXT(fn)                                                         \
  static const auto real = next<decltype(&::fn)>(#fn);                   \
  if (real == nullptr) {                                                 \
    std::fprintf(stderr, "qpcheck recorder: no %s to call\n", #fn);      \
    errno = ENOSYS;                                                      \
  }

// The saved ops of every context whose ops were replaced.
struct SavedOps {
  ibv_context* ctx;
  decltype(ibv_context_ops::post_send) post_send;
  decltype(ibv_context_ops::post_recv) post_recv;
  decltype(ibv_context_ops::post_srq_recv) post_srq_recv;
  decltype(ibv_context_ops::poll_cq) poll_cq;
};
std::mutex ops_mutex;
std::vector<SavedOps>& saved_ops() {
  static auto* v = new std::vector<SavedOps>;
  return *v;
}

SavedOps saved(ibv_context* ctx) {
  std::lock_guard<std::mutex> lock(ops_mutex);
  for (const SavedOps& s : saved_ops()) {
    if (s.ctx == ctx) return s;
  }
  return SavedOps{ctx, ctx->ops.post_send, ctx->ops.post_recv, ctx->ops.post_srq_recv, ctx->ops.poll_cq};
}

int wrap_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int wrap_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
int wrap_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad);
int wrap_poll_cq(ibv_cq* cq, int n, ibv_wc* wc);

void patch(ibv_context* ctx) {
  if (ctx == nullptr) return;
  std::lock_guard<std::mutex> lock(ops_mutex);
  for (const SavedOps& s : saved_ops()) {
    if (s.ctx == ctx) return;
  }
  saved_ops().push_back(SavedOps{ctx, ctx->ops.post_send, ctx->ops.post_recv, ctx->ops.post_srq_recv, ctx->ops.poll_cq});
  if (ctx->ops.post_send) ctx->ops.post_send = wrap_post_send;
  if (ctx->ops.post_recv) ctx->ops.post_recv = wrap_post_recv;
  if (ctx->ops.post_srq_recv) ctx->ops.post_srq_recv = wrap_post_srq_recv;
  if (ctx->ops.poll_cq) ctx->ops.poll_cq = wrap_poll_cq;
}

void forget(ibv_context* ctx) {
  std::lock_guard<std::mutex> lock(ops_mutex);
  auto& v = saved_ops();
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].ctx == ctx) {
      v.erase(v.begin() + static_cast<long>(i));
      return;
    }
  }
}

constexpr int kMaxChain = 4096;  // WRs listed per post (a longer chain is counted, its tail not listed)

int wrap_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  SavedOps s = saved(qp->context);
  Call c("ibv_post_send");
  int ret = s.post_send(qp, wr, bad);
  int err = errno;
  json j = c.record(ret, ret);
  j["qp"] = handle(qp);
  j["qp_num"] = qp->qp_num;
  json wrs = json::array();
  int i = 0;
  for (ibv_send_wr* w = wr; w && i < kMaxChain; w = w->next, ++i) {
    wrs.push_back(json{{"opcode", wr_opcode_name(w->opcode)}, {"wr_id", w->wr_id},
                       {"signaled", (w->send_flags & IBV_SEND_SIGNALED) != 0}});
    if (ret && bad && *bad == w) j["bad"] = i;
  }
  j["wrs"] = wrs;
  log().write(std::move(j));
  errno = err;
  return ret;
}

json recv_chain(ibv_recv_wr* wr, int ret, ibv_recv_wr** bad, json& j) {
  json ids = json::array();
  int i = 0;
  for (ibv_recv_wr* w = wr; w && i < kMaxChain; w = w->next, ++i) {
    ids.push_back(w->wr_id);
    if (ret && bad && *bad == w) j["bad"] = i;
  }
  j["count"] = i;
  return ids;
}

int wrap_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  SavedOps s = saved(qp->context);
  Call c("ibv_post_recv");
  int ret = s.post_recv(qp, wr, bad);
  int err = errno;
  json j = c.record(ret, ret);
  j["qp"] = handle(qp);
  j["qp_num"] = qp->qp_num;
  j["wr_ids"] = recv_chain(wr, ret, bad, j);
  log().write(std::move(j));
  errno = err;
  return ret;
}

int wrap_post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  SavedOps s = saved(srq->context);
  Call c("ibv_post_srq_recv");
  int ret = s.post_srq_recv(srq, wr, bad);
  int err = errno;
  json j = c.record(ret, ret);
  j["srq"] = handle(srq);
  j["wr_ids"] = recv_chain(wr, ret, bad, j);
  log().write(std::move(j));
  errno = err;
  return ret;
}

int wrap_poll_cq(ibv_cq* cq, int n, ibv_wc* wc) {
  SavedOps s = saved(cq->context);
  Call c("ibv_poll_cq");
  int ret = s.poll_cq(cq, n, wc);
  int err = errno;
  if (ret == 0) {
    log().empty_poll();
  } else {
    json j = c.record(ret, ret < 0 ? err : 0, true);
    j["cq"] = handle(cq);
    json wcs = json::array();
    for (int i = 0; i < ret; ++i) {
      wcs.push_back(json{{"wr_id", wc[i].wr_id}, {"status", wc_status_name(wc[i].status)},
                         {"opcode", wc_opcode_name(wc[i].opcode)}, {"qp_num", wc[i].qp_num}});
    }
    j["wc"] = wcs;
    log().write(std::move(j));
  }
  errno = err;
  return ret;
}

// rdma_* return 0 or -1 with errno.
int rdma_err(int ret, int err) { return ret ? err : 0; }

json conn_param_json(const rdma_conn_param* p) {
  if (p == nullptr) return nullptr;
  return json{{"rnr_retry", p->rnr_retry_count}, {"initiator_depth", p->initiator_depth},
              {"responder_resources", p->responder_resources}, {"retry_count", p->retry_count}};
}

void addresses(json& j, rdma_cm_id* id) {
  if (id == nullptr) return;
  std::string local = address(rdma_get_local_addr(id)), peer = address(rdma_get_peer_addr(id));
  if (!local.empty()) j["local"] = local;
  if (!peer.empty()) j["peer"] = peer;
}

// A call on one cm_id: the common record and "id".
template <typename F>
int id_call(const char* name, rdma_cm_id* id, F&& f, bool at_return = false) {
  Call c(name);
  int ret = f();
  int err = errno;
  json j = c.record(ret, rdma_err(ret, err), at_return);
  j["id"] = handle(id);
  log().write(std::move(j));
  errno = err;
  return ret;
}

}  // namespace

extern "C" {

// Recorded so that what librdmacm does inside it (its first call runs ucma_init, which probes AF_IB support with an
// rdma_create_id, rdma_bind_addr and rdma_destroy_id of its own) is marked "inside".
rdma_event_channel* rdma_create_event_channel(void) {
  NEXT(rdma_create_event_channel);
  if (!real) return nullptr;
  Call c("rdma_create_event_channel");
  rdma_event_channel* ch = real();
  int err = errno;
  json j = c.record(ch ? 0 : -1, ch ? 0 : err);
  j["channel"] = handle(ch);
  log().write(std::move(j));
  errno = err;
  return ch;
}

int rdma_create_id(rdma_event_channel* channel, rdma_cm_id** id, void* context, rdma_port_space ps) {
  NEXT(rdma_create_id);
  if (!real) return -1;
  Call c("rdma_create_id");
  int ret = real(channel, id, context, ps);
  int err = errno;
  json j = c.record(ret, rdma_err(ret, err));
  j["id"] = ret == 0 && id ? handle(*id) : json(nullptr);
  j["ps"] = port_space_name(ps);
  log().write(std::move(j));
  errno = err;
  return ret;
}

int rdma_bind_addr(rdma_cm_id* id, sockaddr* addr) {
  NEXT(rdma_bind_addr);
  if (!real) return -1;
  return id_call("rdma_bind_addr", id, [&] { return real(id, addr); });
}

int rdma_resolve_addr(rdma_cm_id* id, sockaddr* src, sockaddr* dst, int timeout_ms) {
  NEXT(rdma_resolve_addr);
  if (!real) return -1;
  return id_call("rdma_resolve_addr", id, [&] { return real(id, src, dst, timeout_ms); });
}

int rdma_resolve_route(rdma_cm_id* id, int timeout_ms) {
  NEXT(rdma_resolve_route);
  if (!real) return -1;
  return id_call("rdma_resolve_route", id, [&] { return real(id, timeout_ms); });
}

int rdma_listen(rdma_cm_id* id, int backlog) {
  NEXT(rdma_listen);
  if (!real) return -1;
  Call c("rdma_listen");
  int ret = real(id, backlog);
  int err = errno;
  json j = c.record(ret, rdma_err(ret, err));
  j["id"] = handle(id);
  j["backlog"] = backlog;
  log().write(std::move(j));
  errno = err;
  return ret;
}

int rdma_create_qp(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr* attr) {
  NEXT(rdma_create_qp);
  if (!real) return -1;
  if (pd) patch(pd->context);
  Call c("rdma_create_qp");
  int ret = real(id, pd, attr);
  int err = errno;
  json j = c.record(ret, rdma_err(ret, err));
  j["id"] = handle(id);
  ibv_qp* qp = ret == 0 && id ? id->qp : nullptr;
  j["qp"] = handle(qp);
  if (qp) {
    patch(qp->context);
    j["qp_num"] = qp->qp_num;
    j["send_cq"] = handle(qp->send_cq);
    j["recv_cq"] = handle(qp->recv_cq);
    j["srq"] = handle(qp->srq);
  } else {
    j["srq"] = handle(attr ? attr->srq : nullptr);
  }
  if (attr) j["sq_sig_all"] = attr->sq_sig_all != 0;
  log().write(std::move(j));
  errno = err;
  return ret;
}

int rdma_connect(rdma_cm_id* id, rdma_conn_param* param) {
  NEXT(rdma_connect);
  if (!real) return -1;
  Call c("rdma_connect");
  int ret = real(id, param);
  int err = errno;
  json j = c.record(ret, rdma_err(ret, err));
  j["id"] = handle(id);
  j["conn_param"] = conn_param_json(param);
  addresses(j, id);
  log().write(std::move(j));
  errno = err;
  return ret;
}

int rdma_accept(rdma_cm_id* id, rdma_conn_param* param) {
  NEXT(rdma_accept);
  if (!real) return -1;
  Call c("rdma_accept");
  int ret = real(id, param);
  int err = errno;
  json j = c.record(ret, rdma_err(ret, err));
  j["id"] = handle(id);
  j["conn_param"] = conn_param_json(param);
  log().write(std::move(j));
  errno = err;
  return ret;
}

int rdma_reject(rdma_cm_id* id, const void* data, uint8_t len) {
  NEXT(rdma_reject);
  if (!real) return -1;
  return id_call("rdma_reject", id, [&] { return real(id, data, len); });
}

int rdma_disconnect(rdma_cm_id* id) {
  NEXT(rdma_disconnect);
  if (!real) return -1;
  return id_call("rdma_disconnect", id, [&] { return real(id); });
}

void rdma_destroy_qp(rdma_cm_id* id) {
  NEXT(rdma_destroy_qp);
  if (!real) return;
  Call c("rdma_destroy_qp");
  real(id);
  int err = errno;
  json j = c.record(0, 0);
  j["id"] = handle(id);
  log().write(std::move(j));
  errno = err;
}

// rdma_notify.3: "id", "event" (the ibv_event_type passed, IBV_EVENT_COMM_EST for a connection).
int rdma_notify(rdma_cm_id* id, ibv_event_type event) {
  NEXT(rdma_notify);
  if (!real) return -1;
  Call c("rdma_notify");
  int ret = real(id, event);
  int err = errno;
  json j = c.record(ret, rdma_err(ret, err));
  j["id"] = handle(id);
  j["event"] = async_event_name(event);
  log().write(std::move(j));
  errno = err;
  return ret;
}

// Stamped at its return: librdmacm's rdma_destroy_id (rdma-core 44 cma.c) destroys the kernel id, then waits until
// every event the kernel had reported for it is acked, so another thread's rdma_get_cm_event can return one of its
// events while this call is running (seen on rxe: a DISCONNECTED returned inside the client's rdma_destroy_id). That
// event was taken before the kernel id went (ucma_destroy_id frees the events not yet read), and an entry stamp
// would order the destroy before it.
int rdma_destroy_id(rdma_cm_id* id) {
  NEXT(rdma_destroy_id);
  if (!real) return -1;
  return id_call("rdma_destroy_id", id, [&] { return real(id); }, true);
}

int rdma_get_cm_event(rdma_event_channel* channel, rdma_cm_event** event) {
  NEXT(rdma_get_cm_event);
  if (!real) return -1;
  Call c("rdma_get_cm_event");
  int ret = real(channel, event);
  int err = errno;
  if (ret != 0 && (err == EAGAIN || err == EWOULDBLOCK)) {  // a non-blocking channel with no event: an empty poll
    log().empty_poll();
    errno = err;
    return ret;
  }
  json j = c.record(ret, rdma_err(ret, err), true);
  if (ret == 0 && event && *event) {
    const rdma_cm_event* e = *event;
    j["event"] = rdma_event_str(e->event);
    j["status"] = e->status;
    j["id"] = handle(e->id);
    if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST) j["listen_id"] = handle(e->listen_id);
    addresses(j, e->id);
  }
  log().write(std::move(j));
  errno = err;
  return ret;
}

// rdma_create_ep.3: one call that creates a synchronous cm_id and, for an active rdma_addrinfo (no RAI_PASSIVE),
// resolves its address and route and, given a qp_init_attr, creates its QP; librdmacm makes the cm_id and resolves
// the address with internal functions that no wrapper sees (rdma_create_id2, rdma_resolve_addr2 in rdma-core 44), so
// the call is recorded as a whole, stamped at its return, with what it made: "id", "passive", the addresses, and the
// QP as rdma_create_qp records it.
int rdma_create_ep(rdma_cm_id** id, rdma_addrinfo* res, ibv_pd* pd, ibv_qp_init_attr* attr) {
  NEXT(rdma_create_ep);
  if (!real) return -1;
  if (pd) patch(pd->context);
  Call c("rdma_create_ep");
  int ret = real(id, res, pd, attr);
  int err = errno;
  json j = c.record(ret, rdma_err(ret, err), true);
  j["passive"] = res != nullptr && (res->ai_flags & RAI_PASSIVE) != 0;
  rdma_cm_id* made = ret == 0 && id ? *id : nullptr;
  j["id"] = handle(made);
  addresses(j, made);
  if (ibv_qp* qp = made ? made->qp : nullptr) {
    patch(qp->context);
    j["qp"] = handle(qp);
    j["qp_num"] = qp->qp_num;
    j["send_cq"] = handle(qp->send_cq);
    j["recv_cq"] = handle(qp->recv_cq);
    j["srq"] = handle(qp->srq);
    j["sq_sig_all"] = attr != nullptr && attr->sq_sig_all != 0;
  }
  log().write(std::move(j));
  errno = err;
  return ret;
}

int rdma_get_request(rdma_cm_id* listen, rdma_cm_id** id) {
  NEXT(rdma_get_request);
  if (!real) return -1;
  Call c("rdma_get_request");
  int ret = real(listen, id);
  int err = errno;
  json j = c.record(ret, rdma_err(ret, err), true);
  j["listen_id"] = handle(listen);
  if (ret == 0 && id) {
    j["id"] = handle(*id);
    addresses(j, *id);
    // a listener made with rdma_create_ep and a qp_init_attr: librdmacm created the new cm_id's QP inside
    if (ibv_qp* qp = (*id)->qp) {
      patch(qp->context);
      j["qp"] = handle(qp);
      j["qp_num"] = qp->qp_num;
      j["send_cq"] = handle(qp->send_cq);
      j["recv_cq"] = handle(qp->recv_cq);
      j["srq"] = handle(qp->srq);
    }
  }
  log().write(std::move(j));
  errno = err;
  return ret;
}

ibv_context* ibv_open_device(ibv_device* device) {
  NEXT(ibv_open_device);
  if (!real) return nullptr;
  ibv_context* ctx = real(device);
  int err = errno;
  patch(ctx);
  errno = err;
  return ctx;
}

int ibv_close_device(ibv_context* ctx) {
  NEXT(ibv_close_device);
  if (!real) return ENOSYS;
  forget(ctx);
  return real(ctx);
}

ibv_cq* ibv_create_cq(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel* channel, int vector) {
  NEXT(ibv_create_cq);
  if (!real) return nullptr;
  patch(ctx);
  Call c("ibv_create_cq");
  ibv_cq* cq = real(ctx, cqe, cq_context, channel, vector);
  int err = errno;
  json j = c.record(cq ? 0 : -1, cq ? 0 : err);
  j["cq"] = handle(cq);
  j["cqe"] = cqe;                            // asked for
  if (cq) j["cqe_actual"] = cq->cqe;         // what the provider gave (ibv_create_cq.3: at least cqe)
  log().write(std::move(j));
  errno = err;
  return cq;
}

int ibv_destroy_cq(ibv_cq* cq) {
  NEXT(ibv_destroy_cq);
  if (!real) return ENOSYS;
  Call c("ibv_destroy_cq");
  int ret = real(cq);
  int err = errno;
  json j = c.record(ret, ret);
  j["cq"] = handle(cq);
  log().write(std::move(j));
  errno = err;
  return ret;
}

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  NEXT(ibv_create_qp);
  if (!real) return nullptr;
  if (pd) patch(pd->context);
  Call c("ibv_create_qp");
  ibv_qp* qp = real(pd, attr);
  int err = errno;
  json j = c.record(qp ? 0 : -1, qp ? 0 : err);
  j["qp"] = handle(qp);
  if (qp) {
    j["qp_num"] = qp->qp_num;
    j["qp_type"] = qp_type_name(qp->qp_type);
  }
  if (attr) {
    j["send_cq"] = handle(attr->send_cq);
    j["recv_cq"] = handle(attr->recv_cq);
    j["srq"] = handle(attr->srq);
    j["sq_sig_all"] = attr->sq_sig_all != 0;
  }
  log().write(std::move(j));
  errno = err;
  return qp;
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  NEXT(ibv_modify_qp);
  if (!real) return ENOSYS;
  Call c("ibv_modify_qp");
  int ret = real(qp, attr, mask);
  int err = errno;
  json j = c.record(ret, ret);
  j["qp"] = handle(qp);
  j["qp_num"] = qp ? qp->qp_num : 0;
  j["mask"] = mask;
  if (attr) {
    if (mask & IBV_QP_STATE) j["state"] = qp_state_name(attr->qp_state);
    if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) j["max_dest_rd_atomic"] = attr->max_dest_rd_atomic;
    if (mask & IBV_QP_MIN_RNR_TIMER) j["min_rnr_timer"] = attr->min_rnr_timer;
    if (mask & IBV_QP_RNR_RETRY) j["rnr_retry"] = attr->rnr_retry;
    if (mask & IBV_QP_RETRY_CNT) j["retry_cnt"] = attr->retry_cnt;
    if (mask & IBV_QP_MAX_QP_RD_ATOMIC) j["max_rd_atomic"] = attr->max_rd_atomic;
    if (mask & IBV_QP_DEST_QPN) j["dest_qp_num"] = attr->dest_qp_num;
  }
  log().write(std::move(j));
  errno = err;
  return ret;
}

int ibv_destroy_qp(ibv_qp* qp) {
  NEXT(ibv_destroy_qp);
  if (!real) return ENOSYS;
  uint32_t num = qp ? qp->qp_num : 0;
  Call c("ibv_destroy_qp");
  int ret = real(qp);
  int err = errno;
  json j = c.record(ret, ret);
  j["qp"] = handle(qp);
  j["qp_num"] = num;
  log().write(std::move(j));
  errno = err;
  return ret;
}

// ibv_get_async_event.3: the next async event of the context, stamped at its return; on a non-blocking async_fd with
// none waiting (EAGAIN) it is counted as an empty poll. "event" and the object it is about ("qp" with "qp_num",
// "cq", "srq", or "port"). ibv_ack_async_event is not recorded.
int ibv_get_async_event(ibv_context* ctx, ibv_async_event* event) {
  NEXT(ibv_get_async_event);
  if (!real) return -1;
  Call c("ibv_get_async_event");
  int ret = real(ctx, event);
  int err = errno;
  if (ret != 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
    log().empty_poll();
    errno = err;
    return ret;
  }
  json j = c.record(ret, ret ? err : 0, true);
  j["context"] = handle(ctx);
  if (ret == 0 && event) {
    j["event"] = async_event_name(event->event_type);
    std::string element = async_event_element(event->event_type);
    if (element == "qp") {
      j["qp"] = handle(event->element.qp);
      j["qp_num"] = event->element.qp ? event->element.qp->qp_num : 0;
    } else if (element == "cq") {
      j["cq"] = handle(event->element.cq);
    } else if (element == "srq") {
      j["srq"] = handle(event->element.srq);
    } else if (element == "port") {
      j["port"] = event->element.port_num;
    }
  }
  log().write(std::move(j));
  errno = err;
  return ret;
}

// ibv_modify_srq.3: "srq", "mask", and "max_wr" / "srq_limit" where the mask sets them (IBV_SRQ_LIMIT arms
// IBV_EVENT_SRQ_LIMIT_REACHED).
int ibv_modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int mask) {
  NEXT(ibv_modify_srq);
  if (!real) return ENOSYS;
  Call c("ibv_modify_srq");
  int ret = real(srq, attr, mask);
  int err = errno;
  json j = c.record(ret, ret);
  j["srq"] = handle(srq);
  j["mask"] = mask;
  if (attr) {
    if (mask & IBV_SRQ_MAX_WR) j["max_wr"] = attr->max_wr;
    if (mask & IBV_SRQ_LIMIT) j["srq_limit"] = attr->srq_limit;
  }
  log().write(std::move(j));
  errno = err;
  return ret;
}

ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) {
  NEXT(ibv_create_srq);
  if (!real) return nullptr;
  if (pd) patch(pd->context);
  Call c("ibv_create_srq");
  ibv_srq* srq = real(pd, attr);
  int err = errno;
  json j = c.record(srq ? 0 : -1, srq ? 0 : err);
  j["srq"] = handle(srq);
  log().write(std::move(j));
  errno = err;
  return srq;
}

int ibv_destroy_srq(ibv_srq* srq) {
  NEXT(ibv_destroy_srq);
  if (!real) return ENOSYS;
  Call c("ibv_destroy_srq");
  int ret = real(srq);
  int err = errno;
  json j = c.record(ret, ret);
  j["srq"] = handle(srq);
  log().write(std::move(j));
  errno = err;
  return ret;
}

}  // extern "C"
