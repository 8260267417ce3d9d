#include "checker/lang/replay_clauses.h"

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "checker/lang/source.h"

namespace qpcheck::lang {

namespace {

[[noreturn]] void error(Span span, std::string message) { throw SpecError(span, std::move(message)); }

bool listed(std::span<const std::string_view> names, std::string_view name) {
  for (std::string_view n : names) {
    if (n == name) return true;
  }
  return false;
}

// The operation NAME of `arity` arguments (any arity when arity < 0), the first in the table; or nullptr.
const ReplayOpSpec* find_op(std::span<const ReplayOpSpec> ops, std::string_view name, int arity) {
  for (const ReplayOpSpec& op : ops) {
    if (op.name == name && (arity < 0 || op.arity == arity)) return &op;
  }
  return nullptr;
}

}  // namespace

model::ReplayOp check_replay_clause(const ReplayCall& c, const ReplayVocabulary& vocabulary,
                                    const ReplayArgChecker& check_arg) {
  using model::Op;
  using model::Type;
  using model::TypeKind;
  if (!find_op(vocabulary.ops, c.op.name, -1)) {
    std::string all;
    for (const ReplayOpSpec& o : vocabulary.ops) {
      if (all.find(fmt::format(" {},", o.name)) == std::string::npos) all += fmt::format(" {},", o.name);
    }
    all.pop_back();
    error(c.op.span, fmt::format("unknown replay operation '{}' (known:{})", c.op.name, all));
  }
  const ReplayOpSpec* spec = find_op(vocabulary.ops, c.op.name, static_cast<int>(c.args.size()));
  if (!spec) {
    std::string arities;
    for (const ReplayOpSpec& o : vocabulary.ops) {
      if (o.name == c.op.name) arities += fmt::format("{}{}", arities.empty() ? "" : " or ", o.arity);
    }
    error(c.span, fmt::format("replay operation '{}' takes {} argument{}, found {}", c.op.name, arities,
                              arities == "1" ? "" : "s", c.args.size()));
  }
  model::ReplayOp op;
  op.op = c.op.name;
  op.span = c.span;
  for (size_t i = 0; i < c.args.size(); ++i) {
    const model::Expr* a = check_arg(c.args[i]);
    if (a->op != Op::kConst && a->op != Op::kFrame) {
      error(c.args[i]->span, "a replay argument must be a parameter of the procedure, a param, a const or a "
                             "constant (it is evaluated when the trace is written)");
    }
    const Type* t = a->type;
    auto describe = [&](const model::Expr* x) {
      return x->op == Op::kConst && x->type->kind == TypeKind::kInt ? std::to_string(x->value)
                                                                    : model::type_name(x->type);
    };
    auto enum_names = [&]() { return t->kind == TypeKind::kEnum ? t->constants : std::vector<std::string>{}; };
    auto has = [&](const std::string& n) {
      for (const std::string& k : enum_names()) {
        if (k == n) return true;
      }
      return false;
    };
    // An integer argument in lo..hi: a constant in range, or a parameter whose type lies within it.
    auto integer = [&](int64_t lo, int64_t hi, const char* what) {
      if (t->kind != TypeKind::kInt ||
          (a->op == Op::kConst ? a->value < lo || a->value > hi : t->lo < lo || t->hi > hi)) {
        std::string range = hi == INT32_MAX ? fmt::format(">= {}", lo) : fmt::format("in {}..{}", lo, hi);
        error(c.args[i]->span, fmt::format("argument {} of '{}' is {}: expected an integer {}, found {}", i + 1,
                                           spec->name, what, range, describe(a)));
      }
    };
    // An enum argument whose constant (when it is one) or every constant (a parameter) is one of `known`.
    auto named = [&](const char* what, const char* names, std::span<const std::string_view> known, bool every) {
      if (t->kind != TypeKind::kEnum) {
        error(c.args[i]->span, fmt::format("argument {} of '{}' is {}: expected an enum, found {}", i + 1,
                                           spec->name, what, model::type_name(t)));
      }
      if (a->op == Op::kConst && !listed(known, t->constants[a->value])) {
        error(c.args[i]->span, fmt::format("{} is not {}", t->constants[a->value], names));
      }
      if (every && a->op != Op::kConst) {
        for (const std::string& k : t->constants) {
          if (!listed(known, k)) {
            error(c.args[i]->span, fmt::format("enum {} has constant {}, not {}", t->name, k, names));
          }
        }
      }
    };
    switch (spec->args[i]) {
      case ReplayArg::kEndpoint: {
        // ACTIVE and PASSIVE (any order), or the families ACTIVE[C] and PASSIVE[C]: replay knows no other endpoint.
        auto pair = [](const std::vector<std::string>& names) {
          return names.size() == 2 && ((names[0] == "ACTIVE" && names[1] == "PASSIVE") ||
                                       (names[0] == "PASSIVE" && names[1] == "ACTIVE"));
        };
        if (t->kind != TypeKind::kEnum ||
            !(t->families.empty() ? has("ACTIVE") && has("PASSIVE") : pair(t->families))) {
          error(c.args[i]->span, fmt::format("argument {} of '{}' is an endpoint: expected an enum with constants "
                                             "ACTIVE and PASSIVE, found {}", i + 1, spec->name, model::type_name(t)));
        }
        if (t->families.empty() && !pair(t->constants)) {
          for (const std::string& k : t->constants) {
            if (k != "ACTIVE" && k != "PASSIVE") {
              error(c.args[i]->span, fmt::format("argument {} of '{}' is an endpoint: enum {} has constant {}, but an "
                                                 "endpoint is ACTIVE or PASSIVE (replay drives no other)", i + 1,
                                                 spec->name, t->name, k));
            }
          }
        }
        break;
      }
      case ReplayArg::kCount: integer(1, INT32_MAX, "a number of work requests"); break;
      case ReplayArg::kRetry: integer(0, 7, "a conn_param retry count"); break;
      case ReplayArg::kDepth: integer(0, 255, "a conn_param initiator_depth / responder_resources"); break;
      case ReplayArg::kSrq: integer(0, 15, "a shared receive queue"); break;
      case ReplayArg::kLimit: integer(0, 65535, "an SRQ limit (work requests)"); break;
      case ReplayArg::kMr: integer(0, 15, "a memory region of an endpoint"); break;
      case ReplayArg::kCq: integer(0, 15, "a shared completion queue"); break;
      case ReplayArg::kPrivateData: integer(0, 255, "the first byte of CM private data"); break;
      case ReplayArg::kPrivateDataLen: integer(0, 255, "a length of CM private data (bytes)"); break;
      case ReplayArg::kCmEvent:
        if (t->kind != TypeKind::kEnum) {
          error(c.args[i]->span, fmt::format("argument {} of '{}' is a CM event: expected an enum, found {}", i + 1,
                                             spec->name, model::type_name(t)));
        }
        for (const std::string& k : t->constants) {
          if (!listed(vocabulary.cm_events, k)) {
            error(c.args[i]->span, fmt::format("enum {} has constant {}, not an RDMA_CM_EVENT_* name (rdma_cma.h)",
                                               t->name, k));
          }
        }
        break;
      case ReplayArg::kWcStatus:
        named("a completion status", "an IBV_WC_* status (verbs.h)", vocabulary.wc_statuses, false);
        break;
      case ReplayArg::kWcOpcode:
        named("a completion opcode", "an IBV_WC_* opcode (verbs.h: enum ibv_wc_opcode)", vocabulary.wc_opcodes, false);
        break;
      case ReplayArg::kWrOpcode:
        named("a work request opcode", "an IBV_WR_* opcode that replay posts (IBV_WR_SEND, IBV_WR_RDMA_WRITE, "
              "IBV_WR_RDMA_READ, IBV_WR_SEND_WITH_INV, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW)",
              vocabulary.wr_opcodes, true);
        break;
      case ReplayArg::kQpState:
        named("a QP state", "a QP state (RESET, INIT, RTR, RTS, SQD, SQE, ERR: enum ibv_qp_state)",
              vocabulary.qp_states, false);
        break;
      case ReplayArg::kAsyncEvent:
        named("an async event", "an IBV_EVENT_* async event (verbs.h: enum ibv_event_type)", vocabulary.async_events,
              false);
        break;
      case ReplayArg::kCqKind:
        named("a completion queue of an endpoint", "a CQ kind (SEND_CQ or RECV_CQ: the endpoint's send or receive CQ)",
              vocabulary.cq_kinds, true);
        break;
      case ReplayArg::kRejStatus:
        named("a reject status", "the status of an RDMA_CM_EVENT_REJECTED (an IB_CM_REJ_* reason, ECONNRESET or "
              "ECONNREFUSED)", vocabulary.rej_statuses, false);
        break;
    }
    op.args.push_back(a);
    op.prefixes.emplace_back(replay_arg_prefix(spec->args[i]));
  }
  return op;
}

}  // namespace qpcheck::lang
