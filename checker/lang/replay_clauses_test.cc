// check_replay_clause against a vocabulary of the test's own: the checker knows only the table it is handed.
#include "checker/lang/replay_clauses.h"

#include <array>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace qpcheck::lang {
namespace {

constexpr std::array<ReplayOpSpec, 6> kOps{{
    {"ring", 0, true, {}, 0, "no arguments"},
    {"ring", 0, true, {ReplayArg::kCount}, 1, "a count"},
    {"wait_state", 1, false, {ReplayArg::kQpState}, 1, "a QP state"},
    {"pin", 2, true, {ReplayArg::kMr}, 1, "a memory region"},
    {"arm", 3, true, {ReplayArg::kCqKind}, 1, "a CQ kind"},
    {"share", 4, true, {ReplayArg::kCq}, 1, "a shared CQ"},
}};
constexpr std::array<std::string_view, 2> kStates{"UP", "DOWN"};
constexpr std::array<std::string_view, 2> kCqs{"SEND_CQ", "RECV_CQ"};
const ReplayVocabulary kVocabulary{kOps, {}, {}, {}, {}, kStates, {}, kCqs};

std::string message(const ReplayCall& call, const ReplayArgChecker& arg) {
  try {
    check_replay_clause(call, kVocabulary, arg);
  } catch (const SpecError& e) {
    return e.diagnostics().at(0).message;
  }
  return "";
}

TEST_CASE("replay clauses: checked against the vocabulary handed in, not a global table") {
  model::Type count;
  count.kind = model::TypeKind::kInt;
  count.lo = 0;
  count.hi = 1000;
  model::Type state;
  state.kind = model::TypeKind::kEnum;
  state.name = "S";
  state.constants = {"UP", "SIDEWAYS"};
  state.hi = 1;
  model::Expr value;
  value.op = model::Op::kConst;
  Expr ast{};
  auto returns = [&](const model::Type* t, int64_t v) {
    return [&value, t, v](const Expr*) {
      value.type = t;
      value.value = v;
      return &value;
    };
  };

  ReplayCall call{Ident{"post_send", {}, {}}, {}, {}};
  CHECK(message(call, returns(&count, 1)) ==
        "unknown replay operation 'post_send' (known: ring, wait_state, pin, arm, share)");

  call = ReplayCall{Ident{"ring", {}, {}}, {&ast, &ast}, {}};
  CHECK(message(call, returns(&count, 1)) == "replay operation 'ring' takes 0 or 1 arguments, found 2");

  call = ReplayCall{Ident{"ring", {}, {}}, {&ast}, {}};
  CHECK(message(call, returns(&count, 3)) == "");
  CHECK(message(call, returns(&count, 0)) ==
        "argument 1 of 'ring' is a number of work requests: expected an integer >= 1, found 0");
  model::ReplayOp op = check_replay_clause(call, kVocabulary, returns(&count, 3));
  CHECK(op.op == "ring");
  CHECK(op.args.size() == 1);

  call = ReplayCall{Ident{"wait_state", {}, {}}, {&ast}, {}};
  CHECK(message(call, returns(&state, 0)) == "");
  CHECK(message(call, returns(&state, 1)) ==
        "SIDEWAYS is not a QP state (RESET, INIT, RTR, RTS, SQD, SQE, ERR: enum ibv_qp_state)");

  // a memory region: a constant 0..15, or a parameter whose type lies within 0..15
  call = ReplayCall{Ident{"pin", {}, {}}, {&ast}, {}};
  CHECK(message(call, returns(&count, 15)) == "");
  CHECK(message(call, returns(&count, 16)) ==
        "argument 1 of 'pin' is a memory region of an endpoint: expected an integer in 0..15, found 16");
  model::Expr param;
  param.op = model::Op::kFrame;
  param.type = &count;  // 0..1000
  CHECK(message(call, [&](const Expr*) { return &param; }) ==
        "argument 1 of 'pin' is a memory region of an endpoint: expected an integer in 0..15, found 0..1000");
  model::Type mrs = count;
  mrs.hi = 15;
  param.type = &mrs;
  CHECK(message(call, [&](const Expr*) { return &param; }) == "");
  CHECK(check_replay_clause(call, kVocabulary, returns(&count, 2)).prefixes == std::vector<std::string>{""});

  // a CQ kind: a constant of the vocabulary's cq_kinds (written without a prefix), or a parameter whose enum has
  // only such constants
  model::Type cqs;
  cqs.kind = model::TypeKind::kEnum;
  cqs.name = "Cq";
  cqs.constants = {"SEND_CQ", "RECV_CQ", "SRQ_CQ"};
  cqs.hi = 2;
  call = ReplayCall{Ident{"arm", {}, {}}, {&ast}, {}};
  CHECK(message(call, returns(&cqs, 1)) == "");
  CHECK(check_replay_clause(call, kVocabulary, returns(&cqs, 0)).prefixes == std::vector<std::string>{""});
  CHECK(message(call, returns(&cqs, 2)) ==
        "SRQ_CQ is not a CQ kind (SEND_CQ or RECV_CQ: the endpoint's send or receive CQ)");
  CHECK(message(call, returns(&count, 1)) ==
        "argument 1 of 'arm' is a completion queue of an endpoint: expected an enum, found 0..1000");
  param.type = &cqs;
  CHECK(message(call, [&](const Expr*) { return &param; }) ==
        "enum Cq has constant SRQ_CQ, not a CQ kind (SEND_CQ or RECV_CQ: the endpoint's send or receive CQ)");
  cqs.constants.pop_back();
  cqs.hi = 1;
  CHECK(message(call, [&](const Expr*) { return &param; }) == "");

  // a shared CQ: a constant 0..15, or a parameter whose type lies within 0..15 (not an enum)
  call = ReplayCall{Ident{"share", {}, {}}, {&ast}, {}};
  CHECK(message(call, returns(&count, 0)) == "");
  CHECK(message(call, returns(&count, 15)) == "");
  CHECK(message(call, returns(&count, 16)) ==
        "argument 1 of 'share' is a shared completion queue: expected an integer in 0..15, found 16");
  param.type = &count;  // 0..1000
  CHECK(message(call, [&](const Expr*) { return &param; }) ==
        "argument 1 of 'share' is a shared completion queue: expected an integer in 0..15, found 0..1000");
  param.type = &mrs;  // 0..15
  CHECK(message(call, [&](const Expr*) { return &param; }) == "");
  CHECK(message(call, returns(&cqs, 0)) ==
        "argument 1 of 'share' is a shared completion queue: expected an integer in 0..15, found Cq");
  CHECK(check_replay_clause(call, kVocabulary, returns(&count, 3)).prefixes == std::vector<std::string>{""});
}

}  // namespace
}  // namespace qpcheck::lang
