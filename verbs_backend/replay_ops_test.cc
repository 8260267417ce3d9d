#include "verbs_backend/replay_ops.h"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <utility>

namespace qpcheck::verbs {
namespace {

TEST_CASE("replay_ops: one id per operation name, every id used, and the vocabulary finds every form") {
  std::map<std::string_view, int> id_of;
  std::set<int> ids;
  for (const lang::ReplayOpSpec& op : kReplayOps) {
    auto [it, fresh] = id_of.emplace(op.name, op.id);
    CHECK_MESSAGE(it->second == op.id, "forms of ", std::string(op.name), " have different ids");
    if (fresh) CHECK_MESSAGE(ids.insert(op.id).second, "two operations share id ", op.id);
    CHECK(replay_vocabulary().find(op.name, op.arity) == &op);
  }
  // The ids are exactly ReplayOpId's enumerators 0..kPollSharedCqEmpty (the last), each named by the table.
  CHECK(ids.size() == static_cast<size_t>(op(ReplayOpId::kPollSharedCqEmpty)) + 1);
  CHECK(*ids.begin() == 0);
  CHECK(*ids.rbegin() == op(ReplayOpId::kPollSharedCqEmpty));
  CHECK(id_of.at("get_async_event") == op(ReplayOpId::kGetAsyncEvent));
  CHECK(replay_vocabulary().known(lang::ReplayArg::kAsyncEvent, "IBV_EVENT_QP_LAST_WQE_REACHED"));
  CHECK(!replay_vocabulary().known(lang::ReplayArg::kAsyncEvent, "QP_LAST_WQE_REACHED"));
  CHECK(id_of.at("connect") == op(ReplayOpId::kConnect));
  CHECK(id_of.at("expect_no_completion") == op(ReplayOpId::kExpectNoCompletion));
  CHECK(replay_vocabulary().find("connect", 3) == nullptr);
  // memory regions, remote invalidation, unsignaled sends: the 3-argument forms name a memory region last
  for (auto [name, arity] : {std::pair{"post_send", 3}, {"post_send_unsignaled", 3}, {"expect_recv", 3},
                             {"poll_recv", 3}, {"reg_mr", 2}, {"reg_mr_local", 2}, {"dereg_mr", 2},
                             {"alloc_mw", 2}}) {
    const lang::ReplayOpSpec* f = replay_vocabulary().find(name, arity);
    REQUIRE_MESSAGE(f, name);
    CHECK(f->args[arity - 1] == lang::ReplayArg::kMr);
  }
  CHECK(id_of.at("post_send_unsignaled") == op(ReplayOpId::kPostSendUnsignaled));
  CHECK(replay_vocabulary().find("post_send_unsignaled", 2)->args[1] == lang::ReplayArg::kWrOpcode);
  CHECK(replay_vocabulary().find("post_send_unsignaled", 1) == nullptr);
  CHECK(id_of.at("reg_mr") != id_of.at("reg_mr_local"));
  // type 2 memory windows: alloc_mw(ENDPOINT, MR) is a host call of one form, appended last
  CHECK(id_of.at("alloc_mw") == op(ReplayOpId::kAllocMw));
  REQUIRE(replay_vocabulary().find("alloc_mw", 2));
  CHECK(replay_vocabulary().find("alloc_mw", 2)->host);
  CHECK(replay_vocabulary().find("alloc_mw", 2)->args[0] == lang::ReplayArg::kEndpoint);
  CHECK(replay_vocabulary().find("alloc_mw", 1) == nullptr);
  CHECK(replay_vocabulary().find("alloc_mw", 3) == nullptr);
  CHECK(replay_vocabulary().find("no_such_op") == nullptr);
  // completion channels: host calls of one form each, appended after alloc_mw; the CQ kind comes second
  CHECK(id_of.at("req_notify_cq") == op(ReplayOpId::kReqNotifyCq));
  CHECK(id_of.at("get_cq_event") == op(ReplayOpId::kGetCqEvent));
  CHECK(id_of.at("poll_send_empty") == op(ReplayOpId::kPollSendEmpty));
  CHECK(id_of.at("poll_recv_empty") == op(ReplayOpId::kPollRecvEmpty));
  CHECK(op(ReplayOpId::kReqNotifyCq) == op(ReplayOpId::kAllocMw) + 1);
  for (const char* name : {"req_notify_cq", "get_cq_event"}) {
    const lang::ReplayOpSpec* f = replay_vocabulary().find(name, 2);
    REQUIRE_MESSAGE(f, name);
    CHECK(f->host);
    CHECK(f->args[0] == lang::ReplayArg::kEndpoint);
    CHECK(f->args[1] == lang::ReplayArg::kCqKind);
    CHECK(replay_vocabulary().find(name, 1) == nullptr);
  }
  for (const char* name : {"poll_send_empty", "poll_recv_empty"}) {
    const lang::ReplayOpSpec* f = replay_vocabulary().find(name, 1);
    REQUIRE_MESSAGE(f, name);
    CHECK(f->host);
    CHECK(f->args[0] == lang::ReplayArg::kEndpoint);
    CHECK(replay_vocabulary().find(name, 2) == nullptr);
  }
}

TEST_CASE("replay_ops: shared CQs: create_cq(c, depth), destroy_cq(c), qp_cq(e, kind, c), host calls of one form each") {
  std::map<std::string_view, int> id_of;
  for (const lang::ReplayOpSpec& o : kReplayOps) id_of.emplace(o.name, o.id);
  // appended after the completion channels' operations, in this order
  CHECK(id_of.at("create_cq") == op(ReplayOpId::kCreateCq));
  CHECK(id_of.at("destroy_cq") == op(ReplayOpId::kDestroyCq));
  CHECK(id_of.at("qp_cq") == op(ReplayOpId::kQpCq));
  CHECK(op(ReplayOpId::kCreateCq) == op(ReplayOpId::kPollRecvEmpty) + 1);
  CHECK(op(ReplayOpId::kQpCq) == op(ReplayOpId::kDestroyCq) + 1);
  CHECK(id_of.at("req_notify_shared_cq") == op(ReplayOpId::kReqNotifySharedCq));
  CHECK(id_of.at("get_shared_cq_event") == op(ReplayOpId::kGetSharedCqEvent));
  CHECK(id_of.at("poll_shared_cq_empty") == op(ReplayOpId::kPollSharedCqEmpty));
  const lang::ReplayVocabulary& v = replay_vocabulary();
  const lang::ReplayOpSpec* create = v.find("create_cq", 2);
  REQUIRE(create);
  CHECK(create->host);
  CHECK(create->args[0] == lang::ReplayArg::kCq);
  CHECK(create->args[1] == lang::ReplayArg::kCount);
  const lang::ReplayOpSpec* destroy = v.find("destroy_cq", 1);
  REQUIRE(destroy);
  CHECK(destroy->host);
  CHECK(destroy->args[0] == lang::ReplayArg::kCq);
  const lang::ReplayOpSpec* qp_cq = v.find("qp_cq", 3);
  REQUIRE(qp_cq);
  CHECK(qp_cq->host);
  CHECK(qp_cq->args[0] == lang::ReplayArg::kEndpoint);
  CHECK(qp_cq->args[1] == lang::ReplayArg::kCqKind);
  CHECK(qp_cq->args[2] == lang::ReplayArg::kCq);
  // one form each
  for (auto [name, arity] : {std::pair{"create_cq", 2}, {"destroy_cq", 1}, {"qp_cq", 3}}) {
    for (int other = 0; other <= 6; ++other) {
      if (other != arity) CHECK_MESSAGE(v.find(name, other) == nullptr, name, " with ", other, " arguments");
    }
  }
  // a shared CQ is an integer kind (no names), written without a prefix
  CHECK(!v.known(lang::ReplayArg::kCq, "0"));
  CHECK(lang::replay_arg_prefix(lang::ReplayArg::kCq).empty());
}

TEST_CASE("replay_ops: enum arguments are checked against rdma-core's names, without their prefix") {
  const lang::ReplayVocabulary& v = replay_vocabulary();
  CHECK(v.known(lang::ReplayArg::kCmEvent, "ESTABLISHED"));
  CHECK(!v.known(lang::ReplayArg::kCmEvent, "RDMA_CM_EVENT_ESTABLISHED"));
  CHECK(v.known(lang::ReplayArg::kWcStatus, "IBV_WC_RNR_RETRY_EXC_ERR"));
  CHECK(v.known(lang::ReplayArg::kQpState, "RTS"));
  CHECK(!v.known(lang::ReplayArg::kQpState, "READY"));
  CHECK(v.known(lang::ReplayArg::kWrOpcode, "IBV_WR_RDMA_READ"));
  CHECK(!v.known(lang::ReplayArg::kWrOpcode, "IBV_WR_ATOMIC_CMP_AND_SWP"));
  CHECK(!v.known(lang::ReplayArg::kCount, "1"));  // not an enum kind
  // enum ibv_wc_status in value order (verbs.h): the index is the value the device reports.
  CHECK(kWcStatusNames[5] == "IBV_WC_WR_FLUSH_ERR");
  CHECK(kWcStatusNames[13] == "IBV_WC_RNR_RETRY_EXC_ERR");
  // enum ibv_wc_opcode in value order up to IBV_WC_LOCAL_INV (6), then the receive opcodes
  CHECK(kWcOpcodeNames[5] == "IBV_WC_BIND_MW");
  CHECK(kWcOpcodeNames[6] == "IBV_WC_LOCAL_INV");
  CHECK(kWcOpcodeNames[7] == "IBV_WC_RECV");
  CHECK(v.known(lang::ReplayArg::kWcOpcode, "IBV_WC_LOCAL_INV"));
  CHECK(v.known(lang::ReplayArg::kWrOpcode, "IBV_WR_SEND_WITH_INV"));
  CHECK(v.known(lang::ReplayArg::kWrOpcode, "IBV_WR_LOCAL_INV"));
  CHECK(v.known(lang::ReplayArg::kWrOpcode, "IBV_WR_BIND_MW"));
  CHECK(!v.known(lang::ReplayArg::kWrOpcode, "BIND_MW"));
  // enum ibv_wr_opcode in value order: RDMA_WRITE 0, SEND 2, RDMA_READ 4, LOCAL_INV 7, BIND_MW 8, SEND_WITH_INV 9
  CHECK(kWrOpcodeNames == std::array<std::string_view, 6>{"IBV_WR_RDMA_WRITE", "IBV_WR_SEND", "IBV_WR_RDMA_READ",
                                                          "IBV_WR_LOCAL_INV", "IBV_WR_BIND_MW",
                                                          "IBV_WR_SEND_WITH_INV"});
  CHECK(!v.known(lang::ReplayArg::kMr, "0"));  // an integer kind
  // which CQ of an endpoint: written without a prefix
  CHECK(kCqKindNames == std::array<std::string_view, 2>{"SEND_CQ", "RECV_CQ"});
  CHECK(v.known(lang::ReplayArg::kCqKind, "SEND_CQ"));
  CHECK(v.known(lang::ReplayArg::kCqKind, "RECV_CQ"));
  CHECK(!v.known(lang::ReplayArg::kCqKind, "IBV_SEND_CQ"));
  CHECK(!v.known(lang::ReplayArg::kCqKind, "SRQ"));
  CHECK(!v.known(lang::ReplayArg::kQpState, "SEND_CQ"));
  CHECK(lang::replay_arg_prefix(lang::ReplayArg::kCqKind).empty());
}

}  // namespace
}  // namespace qpcheck::verbs
