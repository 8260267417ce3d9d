#include "verbs_backend/fake_device.h"

#include <cerrno>

#include "checker/lang/replay_ops.h"

namespace qpcheck::verbs {

namespace {

Completion wc(int status) { return Completion{status, std::string(lang::kWcStatusNames.at(status))}; }
constexpr int kSuccess = 0, kFlush = 5, kRnrRetryExc = 13;

}  // namespace

bool FakeDevice::injected(const char* api, Status* st) {
  if (opt_.fail_api != api) return false;
  opt_.fail_api.clear();
  *st = fail(api, opt_.fail_errno, "injected by the test");
  return true;
}

Status FakeDevice::open(Millis) {
  if (!opt_.open_error.ok()) return opt_.open_error;
  open_ = true;
  active_.id = true;
  return Status::success();
}

Status FakeDevice::create_qp(Ep e) {
  Status st;
  if (injected("rdma_create_qp", &st)) return st;
  Side& s = side(e);
  if (!s.id) return fail("rdma_create_qp", EINVAL, "no cm_id yet (PASSIVE: before its CONNECT_REQUEST)");
  if (s.qp != Qp::kNone) return fail("rdma_create_qp", EINVAL, "the cm_id already has a QP");
  s.qp = Qp::kInit;
  return st;
}

Status FakeDevice::post_recv(Ep e, int count) {
  Status st;
  if (injected("ibv_post_recv", &st)) return st;
  Side& s = side(e);
  if (s.qp == Qp::kNone) return fail("ibv_post_recv", EINVAL, "no QP");
  if (s.qp == Qp::kErr) {
    for (int i = 0; i < count; ++i) s.recv_wcs.push_back(wc(kFlush));
    return st;
  }
  s.recvs += count;
  deliver(e);
  return st;
}

Status FakeDevice::post_send(Ep e) {
  Status st;
  if (injected("ibv_post_send", &st)) return st;
  Side& s = side(e);
  if (s.qp == Qp::kErr) {
    s.send_wcs.push_back(wc(kFlush));
    return st;
  }
  if (s.qp != Qp::kRts) return fail("ibv_post_send", EINVAL, "QP not in RTS");
  ++peer(e).inbound;
  deliver(other(e));
  return st;
}

Status FakeDevice::connect(Ep e, const ConnParam& param) {
  Status st;
  if (injected("rdma_connect", &st)) return st;
  if (e != Ep::kActive) return fail("rdma_connect", EINVAL, "only the ACTIVE cm_id connects");
  if (active_.qp != Qp::kInit) return fail("rdma_connect", EINVAL, "no QP in INIT");
  passive_.rnr_retry = param.rnr_retry_count;
  passive_.id = true;
  passive_.events.push_back("RDMA_CM_EVENT_CONNECT_REQUEST");
  return st;
}

Status FakeDevice::accept(Ep e, const ConnParam& param) {
  Status st;
  if (injected("rdma_accept", &st)) return st;
  if (e != Ep::kPassive || passive_.qp != Qp::kInit) return fail("rdma_accept", EINVAL, "no passive QP in INIT");
  active_.rnr_retry = param.rnr_retry_count;
  passive_.qp = Qp::kRts;
  if (opt_.transport == Transport::kIB) {
    active_.rep_pending = true;
  } else {
    // iw_cm: both QPs move to RTS in the kernel; the MPA exchange completes without the ULP.
    passive_.events.push_back("RDMA_CM_EVENT_ESTABLISHED");
    active_.qp = Qp::kRts;
    active_.events.push_back("RDMA_CM_EVENT_ESTABLISHED");
  }
  deliver(Ep::kActive);
  deliver(Ep::kPassive);
  return st;
}

Status FakeDevice::reject(Ep e) {
  Status st;
  if (injected("rdma_reject", &st)) return st;
  if (e != Ep::kPassive || !passive_.id) return fail("rdma_reject", EINVAL, "no connection request");
  active_.events.push_back("RDMA_CM_EVENT_REJECTED");
  if (active_.qp != Qp::kNone) to_err(Ep::kActive);
  return st;
}

Status FakeDevice::disconnect(Ep e) {
  Status st;
  if (injected("rdma_disconnect", &st)) return st;
  Side& s = side(e);
  if (s.qp == Qp::kNone) return fail("rdma_disconnect", EINVAL, "not connected");
  to_err(e);
  if (!s.disconnected) {
    s.disconnected = true;
    s.events.push_back("RDMA_CM_EVENT_DISCONNECTED");  // after the DREP
    Side& p = peer(e);
    if (!p.disconnected) {
      p.disconnected = true;
      p.events.push_back("RDMA_CM_EVENT_DISCONNECTED");  // DREQ received
    }
  }
  return st;
}

void FakeDevice::to_err(Ep e) {
  Side& s = side(e);
  s.qp = Qp::kErr;
  for (; s.recvs > 0; --s.recvs) s.recv_wcs.push_back(wc(kFlush));
  // this side's unACKed Sends are flushed
  for (; peer(e).inbound > 0; --peer(e).inbound) s.send_wcs.push_back(wc(kFlush));
}

void FakeDevice::deliver(Ep e) {
  Side& s = side(e);
  Side& sender = peer(e);
  while (s.inbound > 0 && (s.qp == Qp::kRtr || s.qp == Qp::kRts)) {
    if (s.recvs > 0) {
      --s.recvs;
      --s.inbound;
      s.recv_wcs.push_back(wc(kSuccess));
      sender.send_wcs.push_back(wc(kSuccess));
      continue;
    }
    if (opt_.transport == Transport::kIB) {
      if (sender.rnr_retry == 7) return;  // RNR NAK, retried until a receive is posted
      --s.inbound;
      sender.send_wcs.push_back(wc(kRnrRetryExc));
      to_err(other(e));
      return;
    }
    // iWARP: DDP TERMINATE, both sides torn down.
    --s.inbound;
    sender.send_wcs.push_back(wc(kSuccess));
    for (Ep x : {Ep::kActive, Ep::kPassive}) {
      to_err(x);
      if (!side(x).disconnected) {
        side(x).disconnected = true;
        side(x).events.push_back("RDMA_CM_EVENT_DISCONNECTED");
      }
    }
    return;
  }
}

Status FakeDevice::next_cm_event(Ep e, Millis, std::optional<std::string>* event) {
  Side& s = side(e);
  if (e == Ep::kActive && s.rep_pending) {  // librdmacm: CONNECT_RESPONSE -> RTR, RTS, RTU -> ESTABLISHED
    s.rep_pending = false;
    if (s.qp == Qp::kInit) {
      s.qp = Qp::kRts;
      s.events.push_back("RDMA_CM_EVENT_ESTABLISHED");
      passive_.events.push_back("RDMA_CM_EVENT_ESTABLISHED");
      deliver(Ep::kActive);
    }
  }
  event->reset();
  if (!s.events.empty()) {
    *event = s.events.front();
    s.events.pop_front();
  }
  return Status::success();
}

Status FakeDevice::next_send_completion(Ep e, Millis, std::optional<Completion>* out) {
  Side& s = side(e);
  out->reset();
  if (!s.send_wcs.empty()) {
    *out = s.send_wcs.front();
    s.send_wcs.pop_front();
  }
  return Status::success();
}

Status FakeDevice::next_recv_completion(Ep e, Millis, std::optional<Completion>* out) {
  Side& s = side(e);
  out->reset();
  if (!s.recv_wcs.empty()) {
    *out = s.recv_wcs.front();
    s.recv_wcs.pop_front();
  }
  return Status::success();
}

}  // namespace qpcheck::verbs
