#include "verbs_backend/device.h"

#include <cstring>

#include <fmt/format.h>

namespace qpcheck::verbs {

std::string Status::text() const {
  if (ok()) return "ok";
  return fmt::format("{}: {}", api, message);
}

Status fail(std::string api, int err, std::string context) {
  Status s;
  s.api = std::move(api);
  s.err = err;
  s.message = err ? fmt::format("{} (errno {})", std::strerror(err), err) : std::string("failed");
  if (!context.empty()) s.message += ": " + context;
  return s;
}

const char* ep_name(Ep e) { return e == Ep::kActive ? "ACTIVE" : "PASSIVE"; }

std::string Endpoint::text() const {
  return connection == 0 && !indexed ? ep_name(side) : fmt::format("{}[{}]", ep_name(side), connection);
}

const char* qp_state_name(QpState s) {
  switch (s) {
    case QpState::kReset: return "IBV_QPS_RESET";
    case QpState::kInit: return "IBV_QPS_INIT";
    case QpState::kRtr: return "IBV_QPS_RTR";
    case QpState::kRts: return "IBV_QPS_RTS";
    case QpState::kSqd: return "IBV_QPS_SQD";
    case QpState::kSqe: return "IBV_QPS_SQE";
    case QpState::kErr: return "IBV_QPS_ERR";
  }
  return "IBV_QPS_?";
}

const char* wr_opcode_name(WrOpcode o) {
  switch (o) {
    case WrOpcode::kSend: return "IBV_WR_SEND";
    case WrOpcode::kRdmaWrite: return "IBV_WR_RDMA_WRITE";
    case WrOpcode::kRdmaRead: return "IBV_WR_RDMA_READ";
    case WrOpcode::kSendWithInv: return "IBV_WR_SEND_WITH_INV";
    case WrOpcode::kLocalInv: return "IBV_WR_LOCAL_INV";
    case WrOpcode::kBindMw: return "IBV_WR_BIND_MW";
  }
  return "IBV_WR_?";
}

const char* cq_kind_name(CqKind k) { return k == CqKind::kSend ? "SEND_CQ" : "RECV_CQ"; }

}  // namespace qpcheck::verbs
