#include "verbs_backend/recorder/record_format.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include <cstdio>

namespace qpcheck::recorder {

namespace {

std::string unnamed(const char* kind, int v) { return std::string(kind) + "_" + std::to_string(v); }

}  // namespace

std::string wc_status_name(int s) {
  switch (static_cast<ibv_wc_status>(s)) {
    case IBV_WC_SUCCESS: return "IBV_WC_SUCCESS";
    case IBV_WC_LOC_LEN_ERR: return "IBV_WC_LOC_LEN_ERR";
    case IBV_WC_LOC_QP_OP_ERR: return "IBV_WC_LOC_QP_OP_ERR";
    case IBV_WC_LOC_EEC_OP_ERR: return "IBV_WC_LOC_EEC_OP_ERR";
    case IBV_WC_LOC_PROT_ERR: return "IBV_WC_LOC_PROT_ERR";
    case IBV_WC_WR_FLUSH_ERR: return "IBV_WC_WR_FLUSH_ERR";
    case IBV_WC_MW_BIND_ERR: return "IBV_WC_MW_BIND_ERR";
    case IBV_WC_BAD_RESP_ERR: return "IBV_WC_BAD_RESP_ERR";
    case IBV_WC_LOC_ACCESS_ERR: return "IBV_WC_LOC_ACCESS_ERR";
    case IBV_WC_REM_INV_REQ_ERR: return "IBV_WC_REM_INV_REQ_ERR";
    case IBV_WC_REM_ACCESS_ERR: return "IBV_WC_REM_ACCESS_ERR";
    case IBV_WC_REM_OP_ERR: return "IBV_WC_REM_OP_ERR";
    case IBV_WC_RETRY_EXC_ERR: return "IBV_WC_RETRY_EXC_ERR";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "IBV_WC_RNR_RETRY_EXC_ERR";
    case IBV_WC_LOC_RDD_VIOL_ERR: return "IBV_WC_LOC_RDD_VIOL_ERR";
    case IBV_WC_REM_INV_RD_REQ_ERR: return "IBV_WC_REM_INV_RD_REQ_ERR";
    case IBV_WC_REM_ABORT_ERR: return "IBV_WC_REM_ABORT_ERR";
    case IBV_WC_INV_EECN_ERR: return "IBV_WC_INV_EECN_ERR";
    case IBV_WC_INV_EEC_STATE_ERR: return "IBV_WC_INV_EEC_STATE_ERR";
    case IBV_WC_FATAL_ERR: return "IBV_WC_FATAL_ERR";
    case IBV_WC_RESP_TIMEOUT_ERR: return "IBV_WC_RESP_TIMEOUT_ERR";
    case IBV_WC_GENERAL_ERR: return "IBV_WC_GENERAL_ERR";
    default: return unnamed("IBV_WC_STATUS", s);
  }
}

std::string async_event_name(int type) {
  switch (static_cast<ibv_event_type>(type)) {
    case IBV_EVENT_CQ_ERR: return "IBV_EVENT_CQ_ERR";
    case IBV_EVENT_QP_FATAL: return "IBV_EVENT_QP_FATAL";
    case IBV_EVENT_QP_REQ_ERR: return "IBV_EVENT_QP_REQ_ERR";
    case IBV_EVENT_QP_ACCESS_ERR: return "IBV_EVENT_QP_ACCESS_ERR";
    case IBV_EVENT_COMM_EST: return "IBV_EVENT_COMM_EST";
    case IBV_EVENT_SQ_DRAINED: return "IBV_EVENT_SQ_DRAINED";
    case IBV_EVENT_PATH_MIG: return "IBV_EVENT_PATH_MIG";
    case IBV_EVENT_PATH_MIG_ERR: return "IBV_EVENT_PATH_MIG_ERR";
    case IBV_EVENT_DEVICE_FATAL: return "IBV_EVENT_DEVICE_FATAL";
    case IBV_EVENT_PORT_ACTIVE: return "IBV_EVENT_PORT_ACTIVE";
    case IBV_EVENT_PORT_ERR: return "IBV_EVENT_PORT_ERR";
    case IBV_EVENT_LID_CHANGE: return "IBV_EVENT_LID_CHANGE";
    case IBV_EVENT_PKEY_CHANGE: return "IBV_EVENT_PKEY_CHANGE";
    case IBV_EVENT_SM_CHANGE: return "IBV_EVENT_SM_CHANGE";
    case IBV_EVENT_SRQ_ERR: return "IBV_EVENT_SRQ_ERR";
    case IBV_EVENT_SRQ_LIMIT_REACHED: return "IBV_EVENT_SRQ_LIMIT_REACHED";
    case IBV_EVENT_QP_LAST_WQE_REACHED: return "IBV_EVENT_QP_LAST_WQE_REACHED";
    case IBV_EVENT_CLIENT_REREGISTER: return "IBV_EVENT_CLIENT_REREGISTER";
    case IBV_EVENT_GID_CHANGE: return "IBV_EVENT_GID_CHANGE";
    case IBV_EVENT_WQ_FATAL: return "IBV_EVENT_WQ_FATAL";
    default: return unnamed("IBV_EVENT", type);
  }
}

std::string async_event_element(int type) {
  switch (static_cast<ibv_event_type>(type)) {
    case IBV_EVENT_CQ_ERR: return "cq";
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED: return "qp";
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED: return "srq";
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE: return "port";
    default: return "device";
  }
}

std::string wc_opcode_name(int op) {
  switch (static_cast<ibv_wc_opcode>(op)) {
    case IBV_WC_SEND: return "IBV_WC_SEND";
    case IBV_WC_RDMA_WRITE: return "IBV_WC_RDMA_WRITE";
    case IBV_WC_RDMA_READ: return "IBV_WC_RDMA_READ";
    case IBV_WC_COMP_SWAP: return "IBV_WC_COMP_SWAP";
    case IBV_WC_FETCH_ADD: return "IBV_WC_FETCH_ADD";
    case IBV_WC_BIND_MW: return "IBV_WC_BIND_MW";
    case IBV_WC_LOCAL_INV: return "IBV_WC_LOCAL_INV";
    case IBV_WC_RECV: return "IBV_WC_RECV";
    case IBV_WC_RECV_RDMA_WITH_IMM: return "IBV_WC_RECV_RDMA_WITH_IMM";
    default: return unnamed("IBV_WC_OPCODE", op);
  }
}

std::string wr_opcode_name(int op) {
  switch (static_cast<ibv_wr_opcode>(op)) {
    case IBV_WR_RDMA_WRITE: return "IBV_WR_RDMA_WRITE";
    case IBV_WR_RDMA_WRITE_WITH_IMM: return "IBV_WR_RDMA_WRITE_WITH_IMM";
    case IBV_WR_SEND: return "IBV_WR_SEND";
    case IBV_WR_SEND_WITH_IMM: return "IBV_WR_SEND_WITH_IMM";
    case IBV_WR_RDMA_READ: return "IBV_WR_RDMA_READ";
    case IBV_WR_ATOMIC_CMP_AND_SWP: return "IBV_WR_ATOMIC_CMP_AND_SWP";
    case IBV_WR_ATOMIC_FETCH_AND_ADD: return "IBV_WR_ATOMIC_FETCH_AND_ADD";
    case IBV_WR_LOCAL_INV: return "IBV_WR_LOCAL_INV";
    case IBV_WR_BIND_MW: return "IBV_WR_BIND_MW";
    case IBV_WR_SEND_WITH_INV: return "IBV_WR_SEND_WITH_INV";
    default: return unnamed("IBV_WR_OPCODE", op);
  }
}

std::string qp_state_name(int s) {
  switch (static_cast<ibv_qp_state>(s)) {
    case IBV_QPS_RESET: return "IBV_QPS_RESET";
    case IBV_QPS_INIT: return "IBV_QPS_INIT";
    case IBV_QPS_RTR: return "IBV_QPS_RTR";
    case IBV_QPS_RTS: return "IBV_QPS_RTS";
    case IBV_QPS_SQD: return "IBV_QPS_SQD";
    case IBV_QPS_SQE: return "IBV_QPS_SQE";
    case IBV_QPS_ERR: return "IBV_QPS_ERR";
    default: return unnamed("IBV_QPS", s);
  }
}

std::string qp_type_name(int t) {
  switch (static_cast<ibv_qp_type>(t)) {
    case IBV_QPT_RC: return "IBV_QPT_RC";
    case IBV_QPT_UC: return "IBV_QPT_UC";
    case IBV_QPT_UD: return "IBV_QPT_UD";
    case IBV_QPT_RAW_PACKET: return "IBV_QPT_RAW_PACKET";
    case IBV_QPT_XRC_SEND: return "IBV_QPT_XRC_SEND";
    case IBV_QPT_XRC_RECV: return "IBV_QPT_XRC_RECV";
    default: return unnamed("IBV_QPT", t);
  }
}

std::string port_space_name(int ps) {
  switch (static_cast<rdma_port_space>(ps)) {
    case RDMA_PS_TCP: return "RDMA_PS_TCP";
    case RDMA_PS_UDP: return "RDMA_PS_UDP";
    case RDMA_PS_IB: return "RDMA_PS_IB";
    case RDMA_PS_IPOIB: return "RDMA_PS_IPOIB";
    default: return unnamed("RDMA_PS", ps);
  }
}

nlohmann::json handle(const void* p) {
  if (p == nullptr) return nullptr;
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  return buf;
}

std::string address(const sockaddr* sa) {
  if (sa == nullptr) return "";
  char ip[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    if (!inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip)) return "";
    return std::string(ip) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (sa->sa_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    if (!inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip)) return "";
    return "[" + std::string(ip) + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return "";
}

nlohmann::json header(int64_t pid, const std::string& program, const std::vector<std::string>& argv,
                      int64_t start_ns) {
  return nlohmann::json{{"qpcheck_record", kSchemaVersion}, {"pid", pid},           {"program", program},
                        {"argv", argv},                     {"clock", "CLOCK_MONOTONIC"}, {"start_ns", start_ns}};
}

nlohmann::json trailer(int64_t records, int64_t lost, int64_t empty_polls) {
  return nlohmann::json{{"end", true}, {"records", records}, {"lost", lost}, {"empty_polls", empty_polls}};
}

std::string line(const nlohmann::json& record) {
  return record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace qpcheck::recorder
