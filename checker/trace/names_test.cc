// --names kernel: whole identifiers only, replay operations untouched.
#include "checker/trace/names.h"

#include <doctest/doctest.h>

namespace qpcheck::trace {
namespace {

TEST_CASE("kernel names replace whole user-space identifiers and prefixes, nothing else") {
  CHECK(kernel_names("ibv_poll_cq + ibv_post_recv") == "ib_poll_cq + ib_post_recv");
  CHECK(kernel_names("send_wc[ACTIVE]: NO_COMPLETION -> IBV_WC_RNR_RETRY_EXC_ERR") ==
        "send_wc[ACTIVE]: NO_COMPLETION -> IB_WC_RNR_RETRY_EXC_ERR");
  CHECK(kernel_names("ibv_modify_qp(e, IBV_QPS_RTS)") == "ib_modify_qp(e, IB_QPS_RTS)");
  CHECK(kernel_names("rdma_get_cm_event = get_cm_event(ACTIVE, ESTABLISHED)") ==
        "rdma_cm event_handler = get_cm_event(ACTIVE, ESTABLISHED)");
  CHECK(kernel_names("rdma_connect, rdma_accept, RDMA_CM_EVENT_ESTABLISHED") ==
        "rdma_connect, rdma_accept, RDMA_CM_EVENT_ESTABLISHED");
  CHECK(kernel_names("my_ibv_post_recv ibv_post_recvx IBV_WC_") == "my_ibv_post_recv ibv_post_recvx IBV_WC_");
  CHECK(kernel_names("ibv_create_cq ibv_drain_qp") == "ib_alloc_cq ib_drain_qp");
}

TEST_CASE("with_names renames what is shown and keeps the replay operations replayable") {
  Trace t;
  t.message = "ibv_post_send on a QP not in RTS";
  Step s;
  s.verbs = "fabric: RNR NAK";
  s.calls.push_back(Call{"send_completion", {"PASSIVE", "IBV_WC_RNR_RETRY_EXC_ERR"}, "ibv_poll_cq",
                         {{"expect_send_wc", {"PASSIVE", "IBV_WC_RNR_RETRY_EXC_ERR"}}}});
  s.changes.push_back(Change{"send_wc[PASSIVE]", "NO_COMPLETION", "IBV_WC_RNR_RETRY_EXC_ERR"});
  s.source.text = "send_completion(peer(e), IBV_WC_RNR_RETRY_EXC_ERR);";
  t.steps.push_back(s);
  Trace k = with_names(t, Names::kKernel);
  CHECK(k.message == "ib_post_send on a QP not in RTS");
  CHECK(k.steps[0].calls[0].verbs == "ib_poll_cq");
  CHECK(k.steps[0].calls[0].args[1] == "IB_WC_RNR_RETRY_EXC_ERR");
  CHECK(k.steps[0].changes[0].after == "IB_WC_RNR_RETRY_EXC_ERR");
  CHECK(k.steps[0].calls[0].replay[0].args[1] == "IBV_WC_RNR_RETRY_EXC_ERR");  // replayable
  CHECK(k.steps[0].source.text == s.source.text);                             // the spec's own text
  CHECK(with_names(t, Names::kUser).steps[0].calls[0].verbs == "ibv_poll_cq");
}

}  // namespace
}  // namespace qpcheck::trace
