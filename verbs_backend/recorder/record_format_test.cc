#include "verbs_backend/recorder/record_format.h"

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <netinet/in.h>

#include <doctest/doctest.h>

namespace qpcheck::recorder {
namespace {

TEST_CASE("rdma-core names as verbs.h spells them, numbers for the unnamed") {
  CHECK(wc_status_name(IBV_WC_SUCCESS) == "IBV_WC_SUCCESS");
  CHECK(wc_status_name(IBV_WC_WR_FLUSH_ERR) == "IBV_WC_WR_FLUSH_ERR");
  CHECK(wc_status_name(IBV_WC_RNR_RETRY_EXC_ERR) == "IBV_WC_RNR_RETRY_EXC_ERR");
  CHECK(wc_status_name(99) == "IBV_WC_STATUS_99");
  CHECK(wc_opcode_name(IBV_WC_RECV) == "IBV_WC_RECV");
  CHECK(wc_opcode_name(IBV_WC_RDMA_READ) == "IBV_WC_RDMA_READ");
  CHECK(wr_opcode_name(IBV_WR_SEND) == "IBV_WR_SEND");
  CHECK(wr_opcode_name(IBV_WR_RDMA_WRITE) == "IBV_WR_RDMA_WRITE");
  CHECK(qp_state_name(IBV_QPS_RTR) == "IBV_QPS_RTR");
  CHECK(qp_state_name(IBV_QPS_ERR) == "IBV_QPS_ERR");
  CHECK(qp_type_name(IBV_QPT_RC) == "IBV_QPT_RC");
  CHECK(port_space_name(RDMA_PS_TCP) == "RDMA_PS_TCP");
}

TEST_CASE("handles, addresses and lines") {
  CHECK(handle(nullptr).is_null());
  CHECK(handle(reinterpret_cast<void*>(0x7f12ab40)) == "0x7f12ab40");
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(20079);
  inet_pton(AF_INET, "10.0.0.1", &in.sin_addr);
  CHECK(address(reinterpret_cast<sockaddr*>(&in)) == "10.0.0.1:20079");
  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  in6.sin6_port = htons(7);
  inet_pton(AF_INET6, "fe80::1", &in6.sin6_addr);
  CHECK(address(reinterpret_cast<sockaddr*>(&in6)) == "[fe80::1]:7");
  CHECK(address(nullptr).empty());
  CHECK(line(nlohmann::json{{"a", 1}}) == "{\"a\":1}\n");
  // not UTF-8 (a program name from argv): replaced, the line stays JSON
  std::string l = line(nlohmann::json{{"program", std::string("x\xff")}});
  CHECK(nlohmann::json::parse(l)["program"] == "x\xEF\xBF\xBD");
  nlohmann::json h = header(12, "/bin/p", {"p", "-s"}, 5);
  CHECK(h["qpcheck_record"] == 1);
  CHECK(h["clock"] == "CLOCK_MONOTONIC");
  CHECK(trailer(3, 0, 2) == nlohmann::json{{"end", true}, {"records", 3}, {"lost", 0}, {"empty_polls", 2}});
}

}  // namespace
}  // namespace qpcheck::recorder
