// The verbs boundary: the two endpoints of one RC connection on one device, as the replay conductor drives them.
// One implementation runs over rdma-core (rdma_device.h), a testonly one simulates a device in process
// (fake_device.h). Every call returns a Status normalised at the boundary (STYLE.md habit 8); nothing throws.
#pragma once

#include <chrono>
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

// ACTIVE: the cm_id that calls rdma_connect; PASSIVE: the cm_id delivered by the listener's CONNECT_REQUEST.
enum class Ep { kActive, kPassive };
const char* ep_name(Ep e);  // "ACTIVE", "PASSIVE"

// conn_param fields the conductor controls (rdma_connect.3, rdma_accept.3). Counts are 3-bit: 7 = infinite retries.
struct ConnParam {
  int rnr_retry_count = 7;
  int retry_count = 7;
  int initiator_depth = 1;
  int responder_resources = 1;
};

// One work completion as the device reported it: the ibv_wc_status value and its IBV_WC_* name.
struct Completion {
  int status = 0;
  std::string name;  // "IBV_WC_SUCCESS", "IBV_WC_RNR_RETRY_EXC_ERR"
};

using Millis = std::chrono::milliseconds;

// Both endpoints of one connection on one device, driven from one thread. Not thread-safe.
class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  // Opens the device: the passive side listens on the device's own address, the active side resolves that address
  // and route. A failure here is an environment problem (unknown device, no permission, no address).
  virtual Status open(Millis timeout) = 0;
  // rdma_create_qp on e's cm_id with e's own send CQ and receive CQ. PASSIVE needs its CONNECT_REQUEST first.
  virtual Status create_qp(Ep e) = 0;
  // ibv_post_recv of `count` receive WRs (one buffer each).
  virtual Status post_recv(Ep e, int count) = 0;
  // ibv_post_send of one signaled Send.
  virtual Status post_send(Ep e) = 0;
  virtual Status connect(Ep e, const ConnParam& param) = 0;
  virtual Status accept(Ep e, const ConnParam& param) = 0;
  virtual Status reject(Ep e) = 0;
  virtual Status disconnect(Ep e) = 0;
  // Waits up to `timeout` for e's next CM event (acknowledged at once); *event is "RDMA_CM_EVENT_<NAME>", or
  // nullopt when the timeout passed first.
  virtual Status next_cm_event(Ep e, Millis timeout, std::optional<std::string>* event) = 0;
  // Waits up to `timeout` for e's next send (recv) completion; nullopt on timeout. Every status is returned as is,
  // IBV_WC_WR_FLUSH_ERR included: the caller decides.
  virtual Status next_send_completion(Ep e, Millis timeout, std::optional<Completion>* wc) = 0;
  virtual Status next_recv_completion(Ep e, Millis timeout, std::optional<Completion>* wc) = 0;
};

}  // namespace qpcheck::verbs
