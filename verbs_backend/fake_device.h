// A testonly in-process Device: a small synchronous simulation of one RC connection on one device, enough to test the
// conductor without hardware. It follows the behaviour measured on rxe and siw (docs/rdma-semantics.md):
//  - rdma_create_qp leaves the QP in INIT (LEGACY); posting on a QP that is not there, or a Send before RTS, fails
//    with EINVAL; posts on a QP in ERR complete with IBV_WC_WR_FLUSH_ERR;
//  - IB: rdma_accept moves the passive QP to RTS; the active QP reaches RTS when its ULP retrieves the CM event that
//    follows the REP (librdmacm processes CONNECT_RESPONSE inside rdma_get_cm_event), which also sends the RTU
//    (passive ESTABLISHED). A Send meeting an empty receive queue is RNR-NAKed: with rnr_retry 7 it waits for a
//    receive, otherwise the retries are exhausted at once (no timers here): the sender's WC is
//    IBV_WC_RNR_RETRY_EXC_ERR and its QP goes to ERR;
//  - iWARP: no RNR: a Send meeting an empty receive queue is answered by a TERMINATE: the sender's WC is
//    IBV_WC_SUCCESS, both QPs go to ERR and both sides get RDMA_CM_EVENT_DISCONNECTED.
// Sends to a QP not yet in RTR/RTS stay queued (the transport retries). Waits never block: nothing pending means
// a timeout at once.
#pragma once

#include <deque>
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
  };
  explicit FakeDevice(Options options) : opt_(std::move(options)) {}

  std::string name() const override { return opt_.name; }
  Status open(Millis timeout) override;
  Status create_qp(Ep e) override;
  Status post_recv(Ep e, int count) override;
  Status post_send(Ep e) override;
  Status connect(Ep e, const ConnParam& param) override;
  Status accept(Ep e, const ConnParam& param) override;
  Status reject(Ep e) override;
  Status disconnect(Ep e) override;
  Status next_cm_event(Ep e, Millis timeout, std::optional<std::string>* event) override;
  Status next_send_completion(Ep e, Millis timeout, std::optional<Completion>* wc) override;
  Status next_recv_completion(Ep e, Millis timeout, std::optional<Completion>* wc) override;

 private:
  enum class Qp { kNone, kInit, kRtr, kRts, kErr };
  struct Side {
    bool id = false;              // has a cm_id (ACTIVE: after open; PASSIVE: after CONNECT_REQUEST)
    Qp qp = Qp::kNone;
    int recvs = 0;                // posted receive WRs
    int rnr_retry = 7;            // this QP's RNR retry limit (from the OTHER side's conn_param)
    int inbound = 0;              // Sends travelling to this side, not yet ACKed
    bool rep_pending = false;     // ACTIVE: a REP waits for the ULP's rdma_get_cm_event
    bool disconnected = false;
    std::deque<std::string> events;
    std::deque<Completion> send_wcs, recv_wcs;
  };
  Side& side(Ep e) { return e == Ep::kActive ? active_ : passive_; }
  Side& peer(Ep e) { return e == Ep::kActive ? passive_ : active_; }
  static Ep other(Ep e) { return e == Ep::kActive ? Ep::kPassive : Ep::kActive; }
  bool injected(const char* api, Status* st);
  void to_err(Ep e);
  void deliver(Ep e);             // moves Sends travelling to e as far as they can go

  Options opt_;
  bool open_ = false;
  Side active_, passive_;
};

}  // namespace qpcheck::verbs
