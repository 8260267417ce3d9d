// The pure part of the call recorder (recorder.cc): the rdma-core names a call log writes (docs/record-log.md,
// schema version 1) and the log's lines. No device, no interposition: tested by record_format_test.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace qpcheck::recorder {

inline constexpr int kSchemaVersion = 1;

// enum ibv_wc_status, ibv_wc_opcode, ibv_wr_opcode, ibv_qp_state, ibv_qp_type, rdma_port_space names as verbs.h and
// rdma_cma.h spell them ("IBV_WC_SUCCESS", "IBV_QPS_RTR", "RDMA_PS_TCP"); a value without a name is written as its
// number in decimal ("IBV_WC_STATUS_99").
std::string wc_status_name(int status);
std::string wc_opcode_name(int opcode);
std::string wr_opcode_name(int opcode);
std::string qp_state_name(int state);
std::string qp_type_name(int type);
std::string port_space_name(int ps);
// enum ibv_event_type names ("IBV_EVENT_COMM_EST", "IBV_EVENT_QP_LAST_WQE_REACHED"); an unknown one as
// "IBV_EVENT_99". The object an event is about (ibv_get_async_event.3): "qp", "cq", "srq", "port" or "device".
std::string async_event_name(int type);
std::string async_event_element(int type);

// A handle as the log writes it: "0x7f12ab40" (lower-case hex), or null for nullptr.
nlohmann::json handle(const void* p);

// "10.0.0.1:20079" or "[fe80::1]:20079" for an AF_INET / AF_INET6 address; "" for nullptr or another family.
std::string address(const sockaddr* sa);

// The header line's object (line 1): schema version, pid, program, argv, clock, start time.
nlohmann::json header(int64_t pid, const std::string& program, const std::vector<std::string>& argv,
                      int64_t start_ns);

// The trailer's object (the last line).
nlohmann::json trailer(int64_t records, int64_t lost, int64_t empty_polls);

// `record` as one log line: compact JSON and '\n'. Strings that are not valid UTF-8 are written with replacement
// characters (the line is always valid JSON).
std::string line(const nlohmann::json& record);

}  // namespace qpcheck::recorder
