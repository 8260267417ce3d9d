#include "verbs_backend/conductor.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "checker/trace/render.h"
#include "verbs_backend/replay_ops.h"

namespace qpcheck::verbs {

namespace {

using lang::ReplayArg;

// The largest depth create_cq may ask for (a device may refuse less: its max_cqe, ibv_query_device.3).
constexpr int kMaxCqDepth = 65536;

// The event->status value of a REJECTED status name (kRejStatusNames; the plan checked the name).
int rej_status_value(const std::string& name) {
  for (size_t i = 0; i < kRejStatusNames.size(); ++i) {
    if (kRejStatusNames[i] == name) return kRejStatusValues[i];
  }
  return 0;
}

// The first byte of an event's private data, as the device reports it (" (data N)"; none: 0).
int event_data(const std::string& event) {
  size_t at = event.find(" (data ");
  return at == std::string::npos ? 0 : std::atoi(event.c_str() + at + 7);
}

// Decimal digits only, as the trace writer renders counts: no sign, no blanks, no "0x".
int parse_int(const std::string& s, int lo, int hi, const std::string& where) {
  bool digits = !s.empty() && s.size() <= 9 &&
                std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  long v = digits ? std::strtol(s.c_str(), nullptr, 10) : 0;
  if (!digits || v < lo || v > hi) {
    throw PlanError(fmt::format("{}: expected an integer in {}..{}, found {}", where, lo, hi, trace::quote_value(s)));
  }
  return static_cast<int>(v);
}

PlannedOp plan_op(const trace::ReplayStep& r, const std::string& where) {
  const lang::ReplayVocabulary& vocabulary = replay_vocabulary();
  if (!vocabulary.find(r.op)) {
    throw PlanError(fmt::format("{}: unknown replay operation {}", where, trace::quote_value(r.op)));
  }
  const lang::ReplayOpSpec* spec = vocabulary.find(r.op, static_cast<int>(r.args.size()));
  if (!spec) {
    std::string arities;
    for (const lang::ReplayOpSpec& o : kReplayOps) {
      if (o.name == r.op) arities += fmt::format("{}{}", arities.empty() ? "" : " or ", o.arity);
    }
    throw PlanError(fmt::format("{}: replay operation {} takes {} arguments, found {}", where, r.op, arities,
                                r.args.size()));
  }
  PlannedOp op;
  op.op = r.op;
  op.spec = spec;
  op.refused = r.refused;
  const ReplayOpId id = op_id(*spec);
  for (int i = 0; i < spec->arity; ++i) {
    const std::string& a = r.args[i];
    std::string at = fmt::format("{}: {} argument {}", where, r.op, i + 1);
    auto name = [&](bool known, std::string_view what) {
      if (!known) throw PlanError(fmt::format("{}: not {}: {}", at, what, trace::quote_value(a)));
      op.names.push_back(a);
    };
    // An enum argument as the trace writes it: the kind's prefix (replay_arg_prefix), then one of its names.
    auto known = [&](ReplayArg kind) {
      std::string_view prefix = lang::replay_arg_prefix(kind);
      return a.rfind(prefix, 0) == 0 && vocabulary.known(kind, std::string_view(a).substr(prefix.size()));
    };
    switch (spec->args[i]) {
      case ReplayArg::kEndpoint: {
        std::optional<Endpoint> e = parse_endpoint(a);
        if (!e) {
          throw PlanError(fmt::format("{}: expected an endpoint (ACTIVE, PASSIVE, ACTIVE[c] or PASSIVE[c]), found {}",
                                      at, trace::quote_value(a)));
        }
        op.endpoints.push_back(*e);
        break;
      }
      // a number of WRs (at most the 64 receive buffers of an endpoint), or create_cq's depth
      case ReplayArg::kCount:
        op.numbers.push_back(parse_int(a, 1, id == ReplayOpId::kCreateCq ? kMaxCqDepth : 64, at));
        break;
      case ReplayArg::kRetry: op.numbers.push_back(parse_int(a, 0, 7, at)); break;
      case ReplayArg::kDepth: op.numbers.push_back(parse_int(a, 0, 255, at)); break;
      case ReplayArg::kSrq: op.numbers.push_back(parse_int(a, 0, 15, at)); break;
      case ReplayArg::kLimit: op.numbers.push_back(parse_int(a, 0, 65535, at)); break;
      case ReplayArg::kMr: op.numbers.push_back(parse_int(a, 0, kMaxMrs - 1, at)); break;
      case ReplayArg::kCq: op.numbers.push_back(parse_int(a, 0, kMaxSharedCqs - 1, at)); break;
      case ReplayArg::kPrivateData:
      case ReplayArg::kPrivateDataLen: op.numbers.push_back(parse_int(a, 0, 255, at)); break;
      case ReplayArg::kAsyncEvent: name(known(ReplayArg::kAsyncEvent), "an IBV_EVENT_* async event"); break;
      case ReplayArg::kCmEvent: name(known(ReplayArg::kCmEvent), "an RDMA_CM_EVENT_* name"); break;
      case ReplayArg::kWcStatus: name(known(ReplayArg::kWcStatus), "an IBV_WC_* status"); break;
      case ReplayArg::kWcOpcode: name(known(ReplayArg::kWcOpcode), "an IBV_WC_* opcode"); break;
      case ReplayArg::kWrOpcode: name(known(ReplayArg::kWrOpcode), "an IBV_WR_* opcode replay posts"); break;
      case ReplayArg::kQpState: name(known(ReplayArg::kQpState), "an IBV_QPS_* state"); break;
      case ReplayArg::kCqKind: name(known(ReplayArg::kCqKind), "a CQ kind (SEND_CQ or RECV_CQ)"); break;
      case ReplayArg::kRejStatus:
        name(known(ReplayArg::kRejStatus), "a REJECTED status (IB_CM_REJ_*, ECONNRESET, ECONNREFUSED)");
        break;
    }
  }
  if (!op.endpoints.empty()) op.ep = op.endpoints[0];
  if (!op.numbers.empty()) op.number = op.numbers[0];
  if (!op.names.empty()) op.name = op.names[0];
  // An invalidation names an rkey and a bind a window: only the forms with a memory region can post one.
  if ((id == ReplayOpId::kPostSend || id == ReplayOpId::kPostSendUnsignaled) && spec->arity == 2 &&
      (op.name == "IBV_WR_SEND_WITH_INV" || op.name == "IBV_WR_LOCAL_INV" || op.name == "IBV_WR_BIND_MW")) {
    throw PlanError(fmt::format("{}: {} of {} names a memory region: use {}(ENDPOINT, {}, MR)", where, r.op, op.name,
                                r.op, op.name));
  }
  return op;
}

}  // namespace

std::string PlannedOp::text() const {
  std::string out = op + "(";
  size_t e = 0, n = 0, s = 0;
  for (int i = 0; spec && i < spec->arity; ++i) {
    if (i) out += ", ";
    switch (spec->args[i]) {
      case ReplayArg::kEndpoint: out += endpoints.at(e++).text(); break;
      case ReplayArg::kCount:
      case ReplayArg::kRetry:
      case ReplayArg::kDepth:
      case ReplayArg::kSrq:
      case ReplayArg::kLimit:
      case ReplayArg::kMr:
      case ReplayArg::kCq:
      case ReplayArg::kPrivateData:
      case ReplayArg::kPrivateDataLen: out += std::to_string(numbers.at(n++)); break;
      default: out += names.at(s++); break;
    }
  }
  return out + ")";
}

std::optional<Endpoint> parse_endpoint(const std::string& text) {
  for (Ep side : {Ep::kActive, Ep::kPassive}) {
    std::string name = ep_name(side);
    if (text == name) return Endpoint{side, 0};
    if (text.size() > name.size() + 2 && text.rfind(name + "[", 0) == 0 && text.back() == ']') {
      std::string digits = text.substr(name.size() + 1, text.size() - name.size() - 2);
      if (digits.empty() || digits.size() > 2 ||
          !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return std::nullopt;
      }
      return Endpoint{side, std::stoi(digits), true};
    }
  }
  return std::nullopt;
}

Plan make_plan(const trace::Trace& t) {
  Plan p;
  p.spec = t.spec;
  p.trace_verdict = t.verdict;
  p.property = t.property;
  p.params = t.params;
  if (t.verdict != "violated" && t.verdict != "holds") {
    throw PlanError(fmt::format("the trace's verdict is {}: there is no schedule to replay", trace::quote_value(t.verdict)));
  }
  p.cycle_start = t.cycle_start;  // from_json checked it against the steps
  if (t.steps.empty()) {
    throw PlanError("the trace has no steps (a report of a spec that holds carries a schedule only when written by "
                    "verify --witness)");
  }
  size_t ops = 0;
  for (const trace::Step& s : t.steps) {
    PlannedStep ps;
    ps.index = s.index;
    ps.actor = s.actor;
    ps.failed = s.failed;
    for (const trace::Call& c : s.calls) {
      for (const trace::ReplayStep& r : c.replay) {
        ps.ops.push_back(plan_op(r, fmt::format("step {} ({}), call {}", s.index, trace::printable(s.actor, 80),
                                                trace::printable(c.proc, 80))));
      }
    }
    ops += ps.ops.size();
    p.steps.push_back(std::move(ps));
  }
  if (ops == 0) {
    throw PlanError("the trace carries no replay operations (its spec's procedures declare no `replay` clause, or "
                    "it was written by a qpcheck without replay support)");
  }
  return p;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kReproduced: return "REPRODUCED";
    case Verdict::kNotReproduced: return "NOT REPRODUCED";
    case Verdict::kDiverged: return "DIVERGED";
    case Verdict::kEnvironment: return "ENVIRONMENT";
  }
  return "?";
}

namespace {

// What one endpoint's device reported so far, in arrival order, with the cursors that read it.
struct Observed {
  std::vector<std::string> events;
  size_t event_expect = 0, event_get = 0;   // expect_cm_event / get_cm_event
  std::vector<Completion> sends;
  size_t send_expect = 0, send_poll = 0;    // expect_send_wc / poll_send
  std::vector<Completion> recvs;            // every receive completion, IBV_WC_WR_FLUSH_ERR included
  size_t recv_expect = 0, recv_poll = 0;    // expect_recv, expect_srq_recv / poll_recv
  std::vector<std::string> async;           // async events (an endpoint's, or an SRQ's)
  size_t async_expect = 0, async_get = 0;   // expect_async_event / get_async_event (expect_srq_event / get_srq_event)
};

// One entry of a shared CQ: whose completion and of which kind, and where it is in that endpoint's Observed list
// (sends or recvs).
struct SharedEntry {
  Endpoint ep;
  CqKind kind = CqKind::kSend;
  size_t index = 0;
};

// A shared CQ as the conductor read it: every entry in the order ibv_poll_cq returned it (the order the device
// produced them), and how many of them the ULP's polls have taken (or destroy_cq discarded). The ULP's ibv_poll_cq
// of the CQ returns entries[polled] next, whichever QP it is of.
struct SharedCq {
  std::vector<SharedEntry> entries;
  size_t polled = 0;
  std::vector<bool> observed;     // per entry: an observation (expect_*) of the trace matched it
};

const char* kind_word(CqKind k) { return k == CqKind::kSend ? "send" : "receive"; }

// What a receive completion's IBV_WC_WITH_INV names, as the report shows it: ", IBV_WC_WITH_INV of MR 0", or "" when
// the flag is not set.
std::string inv_text(const Completion& c) {
  return c.invalidated.empty() ? "" : ", IBV_WC_WITH_INV of " + c.invalidated;
}

// A receive completion with its SRQ, as expect_srq_recv compares it: "IBV_WC_SUCCESS", "IBV_WC_SUCCESS (SRQ 0)".
std::string srq_text(const Completion& c) { return c.srq >= 0 ? fmt::format("{} (SRQ {})", c.name, c.srq) : c.name; }

// A receive completion as the report shows it: srq_text and inv_text ("IBV_WC_SUCCESS, IBV_WC_WITH_INV of MR 0").
std::string recv_text(const Completion& c) { return srq_text(c) + inv_text(c); }

bool is_flush(const Completion& c) { return c.name == "IBV_WC_WR_FLUSH_ERR"; }

QpState qp_state(const std::string& name) {  // "IBV_QPS_RTS"; make_plan checked it
  std::string_view s = std::string_view(name).substr(8);
  for (size_t i = 0; i < kQpStateNames.size(); ++i) {
    if (kQpStateNames[i] == s) return static_cast<QpState>(i);
  }
  return QpState::kErr;
}

CqKind cq_kind(const std::string& name) { return name == "SEND_CQ" ? CqKind::kSend : CqKind::kRecv; }  // checked

WrOpcode wr_opcode(const std::string& name) {  // make_plan checked it
  if (name == "IBV_WR_RDMA_WRITE") return WrOpcode::kRdmaWrite;
  if (name == "IBV_WR_RDMA_READ") return WrOpcode::kRdmaRead;
  if (name == "IBV_WR_SEND_WITH_INV") return WrOpcode::kSendWithInv;
  if (name == "IBV_WR_LOCAL_INV") return WrOpcode::kLocalInv;
  if (name == "IBV_WR_BIND_MW") return WrOpcode::kBindMw;
  return WrOpcode::kSend;
}

class Run {
 public:
  Run(const Plan& plan, Device& dev, const ConductorOptions& opt) : plan_(plan), dev_(dev), opt_(opt) {}

  Outcome go() {
    auto start = std::chrono::steady_clock::now();
    Status st = dev_.open(opt_.timeout);
    if (st.ok()) st = setup();
    if (!st.ok()) {
      out_.verdict = Verdict::kEnvironment;
      out_.reason = st.text();
      out_.observed = st.text();
    } else {
      run_steps();
    }
    out_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out_;
  }

 private:
  Observed& obs(Endpoint e) { return observed_[e]; }
  Observed& srq_obs(int srq) { return srq_observed_[srq]; }

  // What the conductor does before step 1 (docs/replay.md, "Setup"): listen unless the trace does; create and
  // resolve every ACTIVE endpoint the trace names but does not create itself. A failure is an environment problem.
  Status setup() {
    bool listens = false;
    std::set<Endpoint> created, actives;
    for (const PlannedStep& s : plan_.steps) {
      for (const PlannedOp& op : s.ops) {
        if (op_id(*op.spec) == ReplayOpId::kListen) listens = true;
        if (op_id(*op.spec) == ReplayOpId::kCreateId) created.insert(op.ep);
        for (const Endpoint& e : op.endpoints) {
          if (e.side == Ep::kActive) actives.insert(e);
        }
      }
    }
    if (!listens) {
      if (Status st = dev_.listen(); !st.ok()) return st;
    }
    for (const Endpoint& e : actives) {
      if (created.count(e)) continue;
      if (Status st = dev_.create_id(e); !st.ok()) return st;
      if (Status st = dev_.resolve_addr(e); !st.ok()) return st;
      if (Status st = setup_event(e, "RDMA_CM_EVENT_ADDR_RESOLVED"); !st.ok()) return st;
      if (Status st = dev_.resolve_route(e); !st.ok()) return st;
      if (Status st = setup_event(e, "RDMA_CM_EVENT_ROUTE_RESOLVED"); !st.ok()) return st;
    }
    return Status::success();
  }

  Status setup_event(Endpoint e, const std::string& want) {
    std::optional<std::string> ev;
    if (Status st = dev_.next_cm_event(e, opt_.timeout, &ev); !st.ok()) return st;
    if (!ev) {
      return fail("rdma_get_cm_event", ETIMEDOUT,
                  fmt::format("setup of {}: no {} within {} ms", e.text(), want, opt_.timeout.count()));
    }
    if (*ev != want) {
      return fail("rdma_get_cm_event", EPROTO, fmt::format("setup of {}: expected {}, got {}", e.text(), want, *ev));
    }
    return Status::success();
  }

  // Pumps the device (`pump` waits up to the time left itself and says whether it got something) until `ready()`
  // or the timeout. Returns ready(); a device error is left in *error.
  template <typename Ready, typename Pump>
  bool wait_until(Ready ready, Millis timeout, Pump pump, Status* error) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    // Pumps at least once, even when the timeout is shorter than a millisecond, and on while the pump finds
    // something (what the device reported before the deadline counts, however long it takes to read). A pump that
    // returns nothing has used the time up.
    for (bool got = true; !ready();) {
      auto left = std::max(Millis(0), std::chrono::duration_cast<Millis>(deadline - std::chrono::steady_clock::now()));
      if (!got && left.count() == 0) return false;
      got = false;
      *error = pump(left, &got);
      if (!error->ok()) return false;
      if (!got) return ready();
    }
    return true;
  }

  bool wait_event(Endpoint e, size_t cursor, Status* error, std::optional<Millis> timeout = std::nullopt) {
    Observed& o = obs(e);
    return wait_until([&] { return o.events.size() > cursor; }, timeout.value_or(opt_.timeout),
                      [&](Millis left, bool* got) {
                        std::optional<std::string> ev;
                        Status st = dev_.next_cm_event(e, left, &ev);
                        if (ev) o.events.push_back(*ev);
                        *got = ev.has_value();
                        return st;
                      }, error);
  }

  // Async events of an endpoint (srq < 0) or of SRQ srq.
  bool wait_async(Endpoint e, int srq, size_t cursor, Status* error) {
    Observed& o = srq < 0 ? obs(e) : srq_obs(srq);
    return wait_until([&] { return o.async.size() > cursor; }, opt_.timeout,
                      [&](Millis left, bool* got) {
                        std::optional<std::string> ev;
                        Status st = srq < 0 ? dev_.next_async_event(e, left, &ev) : dev_.next_srq_event(srq, left, &ev);
                        if (ev) o.async.push_back(*ev);
                        *got = ev.has_value();
                        return st;
                      }, error);
  }

  bool wait_send(Endpoint e, size_t cursor, Status* error, std::optional<Millis> timeout = std::nullopt) {
    Observed& o = obs(e);
    return wait_until([&] { return o.sends.size() > cursor; }, timeout.value_or(opt_.timeout),
                      [&](Millis left, bool* got) { return pump_wc(e, CqKind::kSend, left, got); }, error);
  }

  // Receive completions. `skip_flush` (the first library's expect_recv(e) / poll_recv(e), which mean "a Send
  // arrived"): a receive WR given back with IBV_WC_WR_FLUSH_ERR when the QP entered ERR is not an arrival; the
  // cursor moves past it and *flushed counts it.
  bool wait_recv(Endpoint e, size_t* cursor, bool skip_flush, int* flushed, Status* error,
                 std::optional<Millis> timeout = std::nullopt) {
    Observed& o = obs(e);
    return wait_until(
        [&] {
          while (skip_flush && *cursor < o.recvs.size() && is_flush(o.recvs[*cursor])) {
            ++*cursor;
            ++*flushed;
          }
          return o.recvs.size() > *cursor;
        },
        timeout.value_or(opt_.timeout), [&](Millis left, bool* got) { return pump_wc(e, CqKind::kRecv, left, got); },
        error);
  }

  // The shared CQ that e's completions of `kind` go to (its latest QP's, qp_cq), or -1: e's own CQ of that kind.
  int shared_cq(Endpoint e, CqKind kind) const {
    auto it = cq_of_.find({e, kind});
    return it == cq_of_.end() ? -1 : it->second;
  }

  // Reads one completion of e of `kind` from the device, waiting up to `left`: from e's own CQ, or, when e's QP is on
  // a shared CQ for that kind, that CQ's next entry, which may be another endpoint's (pump_shared). *got: one was read.
  Status pump_wc(Endpoint e, CqKind kind, Millis left, bool* got) {
    if (int c = shared_cq(e, kind); c >= 0) return pump_shared(c, left, got);
    std::optional<Completion> wc;
    Status st = kind == CqKind::kSend ? dev_.next_send_completion(e, left, &wc) : dev_.next_recv_completion(e, left, &wc);
    if (wc) (kind == CqKind::kSend ? obs(e).sends : obs(e).recvs).push_back(*wc);
    *got = wc.has_value();
    return st;
  }

  // Reads shared CQ c's next entry, waiting up to `left`, and routes it: to its endpoint's list of that kind (what
  // expect_send_wc / expect_recv read, as for an own CQ) and to the end of c's entries (what the ULP's polls read).
  Status pump_shared(int c, Millis left, bool* got) {
    std::optional<CqEntry> x;
    Status st = dev_.next_cq_completion(c, left, &x);
    *got = x.has_value();
    if (x) {
      Endpoint e = written(x->ep);
      std::vector<Completion>& list = x->kind == CqKind::kSend ? obs(e).sends : obs(e).recvs;
      list.push_back(x->wc);
      shared_[c].entries.push_back({e, x->kind, list.size() - 1});
    }
    return st;
  }

  // The endpoint as the trace writes it ("PASSIVE[0]" or "PASSIVE"), for messages about a device's entry.
  Endpoint written(Endpoint e) const {
    for (const PlannedStep& s : plan_.steps) {
      for (const PlannedOp& op : s.ops) {
        for (const Endpoint& x : op.endpoints) {
          if (x == e) return x;
        }
      }
    }
    return e;
  }

  // An observation of the trace (expect_send_wc, expect_recv, expect_srq_recv) matched e's completion `index` of
  // `kind`, which is in shared CQ c: the model says it was added to c after every entry observed before it, so every
  // entry the device put in c ahead of it must have been observed already, except flushed ones (IBV_WC_WR_FLUSH_ERR:
  // the model does not observe those when they are produced). Returns "" when that holds, else what came first.
  std::string shared_order(int c, Endpoint e, CqKind kind, size_t index) {
    SharedCq& q = shared_[c];
    q.observed.resize(q.entries.size(), false);
    size_t at = q.entries.size();
    for (size_t i = 0; i < q.entries.size(); ++i) {
      if (q.entries[i].ep == e && q.entries[i].kind == kind && q.entries[i].index == index) at = i;
    }
    if (at == q.entries.size()) return "";  // not read from c (destroyed and re-created since): nothing to compare
    for (size_t i = 0; i < at; ++i) {
      if (!q.observed[i] && !is_flush(completion_of(q.entries[i]))) {
        return fmt::format("shared CQ {} got {}'s {} completion ({}) first", c, q.entries[i].ep.text(),
                           kind_word(q.entries[i].kind), entry_text(q.entries[i]));
      }
    }
    q.observed[at] = true;
    return "";
  }

  const Completion& completion_of(const SharedEntry& x) {
    return (x.kind == CqKind::kSend ? obs(x.ep).sends : obs(x.ep).recvs).at(x.index);
  }
  // "IBV_WC_SUCCESS, IBV_WC_SEND" (a send) or "IBV_WC_SUCCESS (SRQ 0)" (a receive: recv_text).
  std::string entry_text(const SharedEntry& x) {
    const Completion& c = completion_of(x);
    return x.kind == CqKind::kSend ? fmt::format("{}, {}", c.name, c.opcode) : recv_text(c);
  }

  // Waits up to `timeout` for shared CQ c to hold an entry no poll has taken (reading the device meanwhile); returns
  // the oldest such entry, or nullopt.
  std::optional<SharedEntry> oldest(int c, Status* error, Millis timeout) {
    SharedCq& q = shared_[c];
    bool got = wait_until([&] { return q.entries.size() > q.polled; }, timeout,
                          [&](Millis left, bool* g) { return pump_shared(c, left, g); }, error);
    return got ? std::optional<SharedEntry>(q.entries[q.polled]) : std::nullopt;
  }

  // The ULP's ibv_poll_cq of shared CQ c for e's completion of `kind`: c's oldest entry not yet polled, which must be
  // e's and of that kind. Taken, it moves c's and e's poll cursors past it and *seen is the completion as the
  // non-shared poll shows it; `skip_flush` (the first library's poll_recv(e)): e's own receive flushes at the head are
  // taken and counted in *flushed. Another endpoint's entry, or one of the other kind, stays, and *seen names it.
  // Returns false when c has no entry within the timeout.
  bool poll_shared(int c, Endpoint e, CqKind kind, bool skip_flush, int* flushed, Status* error, std::string* seen) {
    for (;;) {
      std::optional<SharedEntry> x = oldest(c, error, opt_.timeout);
      if (!x) return false;
      const Completion& wc = completion_of(*x);
      if (!(x->ep == e && x->kind == kind)) {
        *seen = fmt::format("the oldest completion of shared CQ {} is {}'s {} ({}), not {}'s{}", c, x->ep.text(),
                            kind_word(x->kind), entry_text(*x), e.text(),
                            x->kind == kind ? "" : std::string(" ") + kind_word(kind));
        return true;
      }
      ++shared_[c].polled;
      size_t& cursor = kind == CqKind::kSend ? obs(e).send_poll : obs(e).recv_poll;
      cursor = std::max(cursor, x->index + 1);
      if (skip_flush && is_flush(wc)) {
        ++*flushed;
        continue;
      }
      *seen = kind == CqKind::kSend ? fmt::format("{}, {}", wc.name, wc.opcode) : wc.name + inv_text(wc);
      return true;
    }
  }

  // The CQs e's next QP gets: the qp_cq records for e, else its own.
  QpCqs next_cqs(Endpoint e) const {
    QpCqs cqs;
    for (CqKind k : {CqKind::kSend, CqKind::kRecv}) {
      auto it = next_cq_.find({e, k});
      (k == CqKind::kSend ? cqs.send : cqs.recv) = it == next_cq_.end() ? -1 : it->second;
    }
    return cqs;
  }

  // After a create of e's QP on `cqs`: when it succeeded, e's completions are read from those CQs from now on and the
  // qp_cq records are used up (a failed create made no QP: they stay for the next one). Returns r.
  Status created(Endpoint e, const QpCqs& cqs, Status r) {
    if (!r.ok()) return r;
    for (CqKind k : {CqKind::kSend, CqKind::kRecv}) {
      if (cqs.of(k) >= 0) {
        cq_of_[{e, k}] = cqs.of(k);
      } else {
        cq_of_.erase({e, k});
      }
      next_cq_.erase({e, k});
    }
    return r;
  }

  // destroy_cq(c) succeeded: its entries no poll has taken are gone (the ULP's polls and the observations never see
  // them: both cursors of their endpoints move past them); a new c starts empty.
  void discard_shared(int c) {
    auto it = shared_.find(c);
    if (it == shared_.end()) return;
    for (size_t i = it->second.polled; i < it->second.entries.size(); ++i) {
      const SharedEntry& x = it->second.entries[i];
      Observed& o = obs(x.ep);
      for (size_t* cursor : x.kind == CqKind::kSend ? std::array<size_t*, 2>{&o.send_poll, &o.send_expect}
                                                      : std::array<size_t*, 2>{&o.recv_poll, &o.recv_expect}) {
        *cursor = std::max(*cursor, x.index + 1);
      }
    }
    shared_.erase(it);
  }

  std::string nothing() const {
    return fmt::format("nothing within {} ms", opt_.timeout.count());
  }

  // Runs one operation; returns false when the replay is decided.
  bool run_op(const PlannedStep& s, const PlannedOp& op, bool last) {
    OpRecord rec{s.index, repetition_, s.actor, op.text(), "ok", "", true};
    Status st;
    // A host call: ok is expected, except in a step the model itself calls a violation (an illegal post or
    // modify), where the device refusing the call reproduces it.
    auto host = [&](Status r) {
      rec.observed = r.ok() ? "ok" : r.text();
      if (!op.refused.empty()) {
        // The model has the device refuse this call (a `refuse` in its procedure): an error is the prediction.
        rec.expected = "an error (" + op.refused + ")";
        rec.match = !r.ok();
        log(rec);
        if (!r.ok()) return true;
        decide(Verdict::kDiverged, s.index, rec.expected, "ok", "the device let a call pass that the model refuses");
        return false;
      }
      if (s.failed) rec.expected = "ok, or an error (the model's fail)";
      rec.match = r.ok() || s.failed;
      log(rec);
      if (r.ok()) return true;
      if (s.failed) {
        decide(Verdict::kReproduced, s.index, "an error (the model's fail)", rec.observed,
               "the device refused the call as the model predicts");
      } else {
        decide(Verdict::kDiverged, s.index, "ok", rec.observed, "a verbs/CM call failed that the model allows");
      }
      return false;
    };
    // `exact`: a part compared apart (a CM event's private data) is equal; `name`: what the prefix rule below
    // compares instead of `expected` (which then also shows that part)
    auto observe = [&](bool got, const std::string& expected, const std::string& seen, bool exact = true,
                       const std::string& name = "") {
      const std::string& want = name.empty() ? expected : name;
      rec.expected = expected;
      rec.observed = !st.ok() ? st.text() : got ? seen : nothing();
      // an event may carry its status and private data: "RDMA_CM_EVENT_REJECTED (status 28) (data 2)" is a REJECTED
      rec.match = st.ok() && got && exact && (seen == want || seen.rfind(want + " (", 0) == 0);
      log(rec);
      if (rec.match) return true;
      bool signature = last && plan_.trace_verdict == "violated";
      decide(signature ? Verdict::kNotReproduced : Verdict::kDiverged, s.index, rec.expected, rec.observed,
             signature ? "the violation's signature did not appear: the device behaved safely"
                       : "the device did something the model did not predict");
      return false;
    };
    const int arity = op.spec->arity;
    Observed& o = obs(op.ep);
    const ReplayOpId id = op_id(*op.spec);
    switch (id) {  // every ReplayOpId has a case: -Werror=switch (BUILD.bazel)
      case ReplayOpId::kListen: return host(dev_.listen());
      case ReplayOpId::kCreateId: return host(dev_.create_id(op.ep));
      case ReplayOpId::kResolveAddr: return host(dev_.resolve_addr(op.ep));
      case ReplayOpId::kResolveRoute: return host(dev_.resolve_route(op.ep));
      case ReplayOpId::kCreateQp:
      case ReplayOpId::kCreateQpSrq:
      case ReplayOpId::kIbvCreateQp: {
        const QpCqs cqs = next_cqs(op.ep);
        Status r = id == ReplayOpId::kIbvCreateQp ? dev_.create_plain_qp(op.ep, cqs)
                                                  : dev_.create_qp(op.ep, id == ReplayOpId::kCreateQpSrq ? op.number : -1,
                                                                   cqs);
        return host(created(op.ep, cqs, r));
      }
      case ReplayOpId::kCreateCq: {
        Status r = dev_.create_cq(op.numbers[0], op.numbers[1]);
        if (r.ok()) shared_.erase(op.numbers[0]);
        return host(r);
      }
      case ReplayOpId::kDestroyCq: {
        Status r = dev_.destroy_cq(op.number);
        if (r.ok()) discard_shared(op.number);
        return host(r);
      }
      case ReplayOpId::kQpCq:
        // no verbs call: what e's next QP's ibv_qp_init_attr will name (created)
        next_cq_[{op.ep, cq_kind(op.name)}] = op.number;
        return host(Status::success());
      case ReplayOpId::kModifyQp: {
        // modify_qp(e, state, max_dest_rd_atomic, rnr_retry, retry_cnt, max_rd_atomic); the short form: QpAttrs'
        // defaults
        QpAttrs a;
        if (arity == 6) {
          a.max_dest_rd_atomic = op.numbers[0];
          a.rnr_retry = op.numbers[1];
          a.retry_cnt = op.numbers[2];
          a.max_rd_atomic = op.numbers[3];
        }
        return host(dev_.modify_qp(op.ep, qp_state(op.name), a));
      }
      case ReplayOpId::kDestroyQp: return host(dev_.destroy_qp(op.ep));
      case ReplayOpId::kDestroyId: return host(dev_.destroy_id(op.ep));
      case ReplayOpId::kCreateSrq: return host(dev_.create_srq(op.number));
      case ReplayOpId::kPostSrqRecv: return host(dev_.post_srq_recv(op.numbers[0], op.numbers[1]));
      case ReplayOpId::kPostRecv: return host(dev_.post_recv(op.ep, op.number));
      case ReplayOpId::kPostSend:
      case ReplayOpId::kPostSendUnsignaled: {
        SendWr wr;
        wr.op = arity == 1 ? WrOpcode::kSend : wr_opcode(op.name);
        wr.signaled = id == ReplayOpId::kPostSend;
        if (arity == 3 && wr.op != WrOpcode::kSend) wr.mr = op.number;  // a Send names no memory region
        if (wr.op == WrOpcode::kBindMw && !windows_.count({op.ep, wr.mr})) {
          // The model binds only the windows it allocated (alloc_mw): the trace is not one of its runs.
          rec.observed = fmt::format("not posted: {}'s buffer {} is not a memory window (no alloc_mw)", op.ep.text(),
                                     wr.mr);
          rec.match = false;
          log(rec);
          decide(Verdict::kDiverged, s.index, "ok", rec.observed,
                 "conductor error: the trace binds a memory region that is not a memory window (IBV_WR_BIND_MW names "
                 "the poster's own window, made by alloc_mw)");
          return false;
        }
        bool ok = host(dev_.post_send(op.ep, wr));
        // A WR that names a buffer never registered carries rkey 0: the log says so.
        Endpoint owner = wr.op == WrOpcode::kLocalInv || wr.op == WrOpcode::kBindMw ? op.ep : op.ep.peer();
        if (wr.mr >= 0 && !mrs_.count({owner, wr.mr})) {
          out_.log.back().observed +=
              fmt::format(" ({}'s buffer {} was never registered: rkey 0)", owner.text(), wr.mr);
          if (!ok) out_.observed = out_.log.back().observed;
        }
        return ok;
      }
      case ReplayOpId::kRegMr:
      case ReplayOpId::kRegMrLocal:
      case ReplayOpId::kAllocMw: {
        auto it = mrs_.find({op.ep, op.number});
        if (it != mrs_.end() && it->second) {
          // The model never registers a registered buffer: the trace is not one of its runs.
          rec.observed = fmt::format("not called: {}'s buffer {} is registered already", op.ep.text(), op.number);
          rec.match = false;
          log(rec);
          decide(Verdict::kDiverged, s.index, "ok", rec.observed,
                 "conductor error: the trace registers a memory region that is registered (the model never does)");
          return false;
        }
        Status r = id == ReplayOpId::kAllocMw ? dev_.alloc_mw(op.ep, op.number)
                                              : dev_.reg_mr(op.ep, op.number, id == ReplayOpId::kRegMr);
        if (r.ok()) mrs_[{op.ep, op.number}] = true;
        if (r.ok() && id == ReplayOpId::kAllocMw) windows_.insert({op.ep, op.number});
        return host(r);
      }
      case ReplayOpId::kDeregMr: {
        Status r = dev_.dereg_mr(op.ep, op.number);
        if (r.ok()) {
          mrs_[{op.ep, op.number}] = false;
          windows_.erase({op.ep, op.number});
        }
        return host(r);
      }
      case ReplayOpId::kConnect:
      case ReplayOpId::kAccept: {
        ConnParam cp;
        cp.rnr_retry_count = op.numbers[0];
        if (op.numbers.size() == 3) {
          cp.initiator_depth = op.numbers[1];
          cp.responder_resources = op.numbers[2];
        }
        if (op.numbers.size() >= 4) cp.private_data = op.numbers[3];
        if (op.numbers.size() == 5) cp.private_data_len = op.numbers[4];
        return host(id == ReplayOpId::kConnect ? dev_.connect(op.ep, cp) : dev_.accept(op.ep, cp));
      }
      case ReplayOpId::kReject:
        return host(dev_.reject(op.ep, op.numbers.empty() ? 0 : op.numbers[0], op.numbers.size() == 2 ? op.numbers[1] : 0));
      case ReplayOpId::kDisconnect: return host(dev_.disconnect(op.ep));
      case ReplayOpId::kNotify: return host(dev_.notify(op.ep));
      case ReplayOpId::kModifySrq: return host(dev_.modify_srq(op.numbers[0], op.numbers[1]));
      case ReplayOpId::kGetAsyncEvent:
      case ReplayOpId::kExpectAsyncEvent:
      case ReplayOpId::kGetSrqEvent:
      case ReplayOpId::kExpectSrqEvent: {
        const bool srq = id == ReplayOpId::kGetSrqEvent || id == ReplayOpId::kExpectSrqEvent;
        Observed& a = srq ? srq_obs(op.number) : o;
        size_t& cursor = id == ReplayOpId::kGetAsyncEvent || id == ReplayOpId::kGetSrqEvent ? a.async_get
                                                                                             : a.async_expect;
        bool got = wait_async(op.ep, srq ? op.number : -1, cursor, &st);
        std::string seen = got ? a.async[cursor] : "";
        if (got) ++cursor;
        return observe(got, op.name, seen);
      }
      case ReplayOpId::kGetCmEvent:
      case ReplayOpId::kExpectCmEvent: {
        size_t& cursor = id == ReplayOpId::kGetCmEvent ? o.event_get : o.event_expect;
        bool got = wait_event(op.ep, cursor, &st);
        std::string seen = got ? o.events[cursor] : "";
        if (got) ++cursor;
        // expect_cm_event's 3-argument form names the event's status: "RDMA_CM_EVENT_REJECTED (status 28)";
        // get_cm_event's names the first byte of its private data, which must be the device's (0: none)
        std::string expected = op.name;
        if (op.names.size() == 2) expected = fmt::format("{} (status {})", op.name, rej_status_value(op.names[1]));
        if (id == ReplayOpId::kGetCmEvent && !op.numbers.empty()) {
          // the data part is compared exactly (none on the device is data 0), the rest as the 2-argument form
          const int data = op.numbers[0];
          const bool same_data = !got || event_data(seen) == data;
          return observe(got, data ? fmt::format("{} (data {})", op.name, data) : op.name, seen, same_data, op.name);
        }
        return observe(got, expected, seen);
      }
      case ReplayOpId::kExpectSendWc:
      case ReplayOpId::kPollSend: {
        size_t& cursor = id == ReplayOpId::kPollSend ? o.send_poll : o.send_expect;
        bool with_opcode = op.names.size() == 2;
        const std::string expected = with_opcode ? fmt::format("{}, {}", op.names[0], op.names[1]) : op.names[0];
        std::string seen;
        if (int c = shared_cq(op.ep, CqKind::kSend); id == ReplayOpId::kPollSend && c >= 0) {
          // the ULP's poll of a shared CQ takes its oldest entry, whoever's it is
          int flushed = 0;
          bool got = poll_shared(c, op.ep, CqKind::kSend, false, &flushed, &st, &seen);
          return observe(got, expected, seen);
        }
        bool got = wait_send(op.ep, cursor, &st);
        if (got) {
          const Completion& c = o.sends[cursor++];
          seen = with_opcode ? fmt::format("{}, {}", c.name, c.opcode) : c.name;
          if (int sc = shared_cq(op.ep, CqKind::kSend); sc >= 0) {
            if (std::string first = shared_order(sc, op.ep, CqKind::kSend, cursor - 1); !first.empty()) seen = first;
          }
        }
        return observe(got, expected, seen);
      }
      case ReplayOpId::kExpectRecv:
      case ReplayOpId::kPollRecv:
      case ReplayOpId::kExpectSrqRecv: {
        const bool srq = id == ReplayOpId::kExpectSrqRecv;
        size_t& cursor = id == ReplayOpId::kPollRecv ? o.recv_poll : o.recv_expect;
        bool arrival = arity == 1;  // the first library's forms: a successful arrival, flushes skipped
        // The 3-argument forms: the completion carries IBV_WC_WITH_INV of the endpoint's buffer MR; the others: it
        // does not (the comparison includes inv_text).
        std::string expected = srq         ? fmt::format("IBV_WC_SUCCESS (SRQ {})", op.number)
                               : arrival   ? "IBV_WC_SUCCESS"
                               : arity == 3 ? fmt::format("{}, IBV_WC_WITH_INV of MR {}", op.name, op.numbers[0])
                                            : op.name;
        int flushed = 0;
        // Only expect_srq_recv names the SRQ (and it does not compare IBV_WC_WITH_INV); poll_recv and expect_recv
        // compare the status and IBV_WC_WITH_INV (a QP's receives come from its SRQ or its own receive queue by how
        // it was created, not by what the poll asks).
        std::string seen;
        bool got = false;
        if (int c = shared_cq(op.ep, CqKind::kRecv); id == ReplayOpId::kPollRecv && c >= 0) {
          // the ULP's poll of a shared CQ takes its oldest entry, whoever's it is
          got = poll_shared(c, op.ep, CqKind::kRecv, arrival, &flushed, &st, &seen);
        } else if ((got = wait_recv(op.ep, &cursor, arrival, &flushed, &st))) {
          const Completion& c = o.recvs[cursor++];
          seen = srq ? srq_text(c) : c.name + inv_text(c);  // expect_srq_recv does not compare IBV_WC_WITH_INV
          if (int sc = shared_cq(op.ep, CqKind::kRecv); sc >= 0 && id != ReplayOpId::kPollRecv) {
            if (std::string first = shared_order(sc, op.ep, CqKind::kRecv, cursor - 1); !first.empty()) seen = first;
          }
        }
        bool ok = observe(got, expected, seen);
        if (!got && st.ok() && flushed > 0) {
          // the receives came back flushed: the QP went to ERR instead (say so beside "nothing")
          out_.log.back().observed += fmt::format(" ({} receive WRs completed with IBV_WC_WR_FLUSH_ERR)", flushed);
          if (out_.step == s.index) out_.observed = out_.log.back().observed;
        }
        return ok;
      }
      case ReplayOpId::kReqNotifyCq: return host(dev_.req_notify_cq(op.ep, cq_kind(op.name)));
      case ReplayOpId::kReqNotifySharedCq: return host(dev_.req_notify_shared_cq(op.number));
      case ReplayOpId::kGetSharedCqEvent: {
        bool got = false;
        st = dev_.next_shared_cq_event(op.number, opt_.timeout, &got);
        const std::string event = fmt::format("a completion event of shared CQ {}", op.number);
        return observe(got, event, event);
      }
      case ReplayOpId::kPollSharedCqEmpty: {
        // as poll_*_empty on a shared CQ: no entry of any QP that no poll has taken
        std::string seen;
        std::optional<SharedEntry> x = oldest(op.number, &st, Millis(0));
        if (x) seen = fmt::format("{}'s {} completion {}", x->ep.text(), kind_word(x->kind), entry_text(*x));
        const std::string empty = fmt::format("shared CQ {} empty", op.number);
        return observe(true, empty, seen.empty() ? empty : seen);
      }
      case ReplayOpId::kGetCqEvent: {
        // The CQ's own event: one of the endpoint's other CQ that comes first stays with the device for later.
        bool got = false;
        st = dev_.next_cq_event(op.ep, cq_kind(op.name), opt_.timeout, &got);
        const std::string event = "a completion event of " + op.name;
        return observe(got, event, event);
      }
      case ReplayOpId::kPollSendEmpty:
      case ReplayOpId::kPollRecvEmpty: {
        // ibv_poll_cq returns 0 now: nothing waits in the CQ, neither on the device (polled once, no wait) nor read
        // from it already by an observation and not yet taken by the ULP's poll.
        const bool send = id == ReplayOpId::kPollSendEmpty;
        std::string seen;
        if (int c = shared_cq(op.ep, send ? CqKind::kSend : CqKind::kRecv); c >= 0) {
          // a shared CQ: no entry of any QP that no poll has taken
          std::optional<SharedEntry> x = oldest(c, &st, Millis(0));
          if (x) seen = fmt::format("{}'s {} completion {}", x->ep.text(), kind_word(x->kind), entry_text(*x));
          const std::string empty = fmt::format("the {} CQ (shared CQ {}) empty", send ? "send" : "receive", c);
          return observe(true, empty, seen.empty() ? empty : seen);
        }
        if (send && wait_send(op.ep, o.send_poll, &st, Millis(0))) {
          seen = fmt::format("a send completion {}, {}", o.sends[o.send_poll].name, o.sends[o.send_poll].opcode);
        }
        size_t cursor = o.recv_poll;
        int flushed = 0;
        if (!send && wait_recv(op.ep, &cursor, false, &flushed, &st, Millis(0))) {
          seen = "a receive completion " + recv_text(o.recvs[cursor]);
        }
        const std::string empty = fmt::format("the {} CQ empty", send ? "send" : "receive");
        return observe(true, empty, seen.empty() ? empty : seen);
      }
      case ReplayOpId::kExpectNoCompletion: {
        // Silence: within the window, neither CQ reports a completion beyond those the trace has read.
        Millis window = std::min(opt_.timeout, Millis(200));
        std::string seen;
        while (wait_send(op.ep, o.sends.size(), &st, window) && st.ok()) {}
        for (size_t i = std::max(o.send_expect, o.send_poll); st.ok() && i < o.sends.size() && seen.empty(); ++i) {
          seen = fmt::format("a send completion {}, {}", o.sends[i].name, o.sends[i].opcode);
        }
        size_t end = o.recvs.size();
        int flushed = 0;
        while (st.ok() && wait_recv(op.ep, &end, false, &flushed, &st, window) && st.ok()) end = o.recvs.size();
        for (size_t i = std::max(o.recv_expect, o.recv_poll); st.ok() && i < o.recvs.size() && seen.empty(); ++i) {
          seen = "a receive completion " + recv_text(o.recvs[i]);
        }
        const std::string silence = fmt::format("no completion within {} ms", window.count());
        return observe(true, silence, seen.empty() ? silence : seen);
      }
    }
    // An id outside the enumeration (a table entry with a bad id): reported, never undefined behaviour.
    rec.observed = "not implemented";
    rec.match = false;
    log(rec);
    decide(Verdict::kDiverged, s.index, "ok", rec.observed, "replay operation not implemented: " + op.text());
    return false;
  }

  void run_steps() {
    const bool lasso = plan_.cycle_start >= 0;
    const size_t prefix = lasso ? static_cast<size_t>(plan_.cycle_start) : plan_.steps.size();
    if (lasso) out_.reached = "the prefix";
    for (size_t i = 0; i < prefix; ++i) {
      const PlannedStep& s = plan_.steps[i];
      bool last = !lasso && i + 1 == plan_.steps.size();  // a lasso's violation is its cycle, not a last step
      for (const PlannedOp& op : s.ops) {
        if (!run_op(s, op, last)) return;
      }
      if (s.failed) {
        decide(Verdict::kNotReproduced, s.index, "an error (the model's fail)", "every call succeeded",
               "the device accepted what the model calls a violation");
        return;
      }
    }
    if (lasso) {
      run_cycle();
      return;
    }
    const PlannedStep& end = plan_.steps.back();
    if (plan_.trace_verdict == "violated") {
      decide(Verdict::kReproduced, end.index, "the violation's signature", "as predicted",
             end.ops.empty() ? fmt::format("the device followed the whole schedule; the last step declares nothing "
                                           "observable, so {} is a property of the program's own order",
                                           plan_.property)
                             : "every predicted event and completion was observed, the violation's included");
    } else if (std::string bad = unpredicted(); !bad.empty()) {
      decide(Verdict::kDiverged, end.index, "nothing more", bad,
             "after the schedule's last step the device reported an error the model did not predict");
    } else {
      decide(Verdict::kNotReproduced, 0, "no violation", "no violation",
             "the device followed the whole schedule of a spec that holds, as predicted");
    }
  }

  // A lasso's cycle, after its prefix ran as predicted: the cycle's steps opt_.cycles times, each repetition followed
  // by a quiet window in which nothing may complete or arrive beyond what the cycle predicts (that would be the
  // progress the liveness violation says never comes). The device's counters are read before and after.
  void run_cycle() {
    const size_t first = static_cast<size_t>(plan_.cycle_start);
    const int index = first < plan_.steps.size() ? plan_.steps[first].index : plan_.steps.back().index;
    std::map<std::string, uint64_t> before = dev_.counters();
    out_.cycles = opt_.cycles;
    out_.reached = "the prefix";
    auto counted = [&] {
      for (const auto& [name, after] : dev_.counters()) {
        auto it = before.find(name);
        if (it != before.end() && after > it->second) out_.counter_increase[name] = after - it->second;
      }
    };
    for (int rep = 1; rep <= opt_.cycles; ++rep) {
      repetition_ = rep;
      for (size_t i = first; i < plan_.steps.size(); ++i) {
        for (const PlannedOp& op : plan_.steps[i].ops) {
          if (!run_op(plan_.steps[i], op, false)) {
            out_.reached = fmt::format("cycle repetition {} of {}", rep, opt_.cycles);
            counted();
            return;
          }
        }
      }
      if (std::string left = progress(); !left.empty()) {
        out_.reached = fmt::format("cycle repetition {} of {}", rep, opt_.cycles);
        counted();
        decide(Verdict::kNotReproduced, index, "no progress (the cycle again)", left,
               fmt::format("the device left the cycle in repetition {} of {}: the run made progress that the "
                           "model's cycle never makes", rep, opt_.cycles));
        return;
      }
      out_.repetitions = rep;
    }
    repetition_ = 0;
    counted();
    out_.reached = fmt::format("all {} cycle repetitions", opt_.cycles);
    std::string counters;
    for (const auto& [name, n] : out_.counter_increase) counters += fmt::format("{}{} +{}", counters.empty() ? "" : ", ", name, n);
    decide(Verdict::kReproduced, index, "the cycle, repeated", fmt::format("{} repetitions without progress",
                                                                          opt_.cycles),
           fmt::format("the device stayed in the cycle for {} repetitions ({} ms quiet after each): nothing "
                       "completed or arrived that leaves it; device counters that increased meanwhile: {}",
                       opt_.cycles, opt_.cycle_window.count(), counters.empty() ? "none" : counters));
  }

  // Within opt_.cycle_window: the first CM event, send or receive completion on any endpoint of the trace beyond
  // those its operations have read (as "RDMA_CM_EVENT_ESTABLISHED on ACTIVE"), or "". An endpoint the device cannot
  // wait on (no cm_id, no CQ) is skipped.
  std::string progress() {
    std::set<Endpoint> all;
    for (const PlannedStep& s : plan_.steps) {
      for (const PlannedOp& op : s.ops) all.insert(op.endpoints.begin(), op.endpoints.end());
    }
    const Millis slice(std::max<int64_t>(1, std::min<int64_t>(20, opt_.cycle_window.count())));
    auto deadline = std::chrono::steady_clock::now() + opt_.cycle_window;
    do {
      for (const Endpoint& e : all) {
        Observed& o = obs(e);
        std::optional<std::string> ev;
        if (dev_.next_cm_event(e, slice, &ev).ok() && ev) o.events.push_back(*ev);
        bool got = false;
        pump_wc(e, CqKind::kSend, slice, &got);  // an endpoint without a CQ (or a shared one gone): skipped
        pump_wc(e, CqKind::kRecv, slice, &got);
        if (o.events.size() > std::max(o.event_expect, o.event_get)) {
          return fmt::format("{} on {}", o.events[std::max(o.event_expect, o.event_get)], e.text());
        }
        if (o.sends.size() > std::max(o.send_expect, o.send_poll)) {
          const Completion& c = o.sends[std::max(o.send_expect, o.send_poll)];
          return fmt::format("a send completion {}, {} on {}", c.name, c.opcode, e.text());
        }
        if (o.recvs.size() > std::max(o.recv_expect, o.recv_poll)) {
          return fmt::format("a receive completion {} on {}", recv_text(o.recvs[std::max(o.recv_expect, o.recv_poll)]),
                             e.text());
        }
      }
    } while (std::chrono::steady_clock::now() < deadline);
    return "";
  }

  // After a holds schedule: drains what the device still reports on every endpoint the trace names (each wait at
  // most 200 ms) and returns the first error nobody predicted (a send/receive completion other than success or
  // flush; a failing CM event), or "". An endpoint the device cannot wait on (no cm_id, no CQ) is skipped.
  std::string unpredicted() {
    Millis window = std::min(opt_.timeout, Millis(200));
    std::set<Endpoint> all;
    for (const PlannedStep& s : plan_.steps) {
      for (const PlannedOp& op : s.ops) all.insert(op.endpoints.begin(), op.endpoints.end());
    }
    for (const Endpoint& e : all) {
      Observed& o = obs(e);
      Status st;
      while (wait_event(e, o.events.size(), &st, window) && st.ok()) {}
      for (size_t i = std::max(o.event_expect, o.event_get); i < o.events.size(); ++i) {
        for (const char* bad : {"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE", "RDMA_CM_EVENT_REJECTED",
                                "RDMA_CM_EVENT_DEVICE_REMOVAL"}) {
          if (o.events[i].rfind(bad, 0) == 0) return fmt::format("{} on {}", o.events[i], e.text());
        }
      }
      st = Status::success();
      while (wait_send(e, o.sends.size(), &st, window) && st.ok()) {}
      for (size_t i = std::max(o.send_expect, o.send_poll); i < o.sends.size(); ++i) {
        if (o.sends[i].name != "IBV_WC_SUCCESS" && !is_flush(o.sends[i])) {
          return fmt::format("a send completion {} on {}", o.sends[i].name, e.text());
        }
      }
      st = Status::success();
      size_t end = o.recvs.size();
      int flushed = 0;
      while (wait_recv(e, &end, false, &flushed, &st, window) && st.ok()) end = o.recvs.size();
      for (size_t i = std::max(o.recv_expect, o.recv_poll); i < o.recvs.size(); ++i) {
        if (o.recvs[i].name != "IBV_WC_SUCCESS" && !is_flush(o.recvs[i])) {
          return fmt::format("a receive completion {} on {}", o.recvs[i].name, e.text());
        }
      }
    }
    return "";
  }

  void log(const OpRecord& r) { out_.log.push_back(r); }
  void decide(Verdict v, int step, std::string expected, std::string observed, std::string reason) {
    out_.verdict = v;
    out_.step = step;
    out_.expected = std::move(expected);
    out_.observed = std::move(observed);
    out_.reason = std::move(reason);
  }

  const Plan& plan_;
  Device& dev_;
  const ConductorOptions& opt_;
  std::map<Endpoint, Observed> observed_;
  std::map<int, Observed> srq_observed_;
  // Each (endpoint, buffer) reg_mr or alloc_mw named: true while registered, false once deregistered (absent: never
  // registered).
  std::map<std::pair<Endpoint, int>, bool> mrs_;
  // The (endpoint, buffer) pairs that are memory windows now: alloc_mw until their dereg_mr (what BIND_MW may name).
  std::set<std::pair<Endpoint, int>> windows_;
  // Shared CQs as read so far (create_cq .. destroy_cq), the shared CQ e's latest QP uses for a kind (absent: its own
  // CQ), and the qp_cq records for e's next QP.
  std::map<int, SharedCq> shared_;
  std::map<std::pair<Endpoint, CqKind>, int> cq_of_;
  std::map<std::pair<Endpoint, CqKind>, int> next_cq_;
  int repetition_ = 0;  // the cycle repetition being replayed (0: the prefix)
  Outcome out_;
};

}  // namespace

Outcome replay(const Plan& plan, Device& device, const ConductorOptions& options) {
  return Run(plan, device, options).go();
}

nlohmann::json outcome_json(const Plan& plan, const Outcome& o, const std::string& trace_file,
                            const std::string& device) {
  nlohmann::json j;
  j["schema"] = "qpcheck.replay";
  j["version"] = 1;
  j["trace"] = trace_file;
  j["spec"] = plan.spec;
  j["trace_verdict"] = plan.trace_verdict;
  if (!plan.property.empty()) j["property"] = plan.property;
  j["device"] = device;
  j["verdict"] = verdict_name(o.verdict);
  j["step"] = o.step;
  j["expected"] = o.expected;
  j["observed"] = o.observed;
  j["reason"] = o.reason;
  j["seconds"] = o.seconds;
  j["operations"] = nlohmann::json::array();
  for (const OpRecord& r : o.log) {
    j["operations"].push_back({{"step", r.step}, {"actor", r.actor}, {"op", r.op}, {"expected", r.expected},
                               {"observed", r.observed}, {"match", r.match}});
    if (r.repetition > 0) j["operations"].back()["repetition"] = r.repetition;
  }
  if (plan.cycle_start >= 0) {
    j["lasso"] = {{"cycle_start", plan.cycle_start + 1}, {"cycles", o.cycles}, {"repetitions", o.repetitions},
                  {"reached", o.reached}, {"counters", o.counter_increase}};
  }
  return j;
}

// Strings from the trace file and the command line are escaped (trace::printable): no terminal control sequence
// reaches the terminal.
std::string outcome_text(const Plan& plan, const Outcome& o, const std::string& raw_device) {
  using trace::printable;
  std::string device = printable(raw_device, 80);
  std::string out = fmt::format("replay of {} ({}{}) on {}\n", printable(plan.spec, 200), printable(plan.trace_verdict),
                                plan.property.empty() ? "" : ": " + printable(plan.property, 200), device);
  size_t w = 10;
  for (const OpRecord& r : o.log) w = std::max(w, r.op.size());
  out += fmt::format("{:>4}  {:<28} {:<{}}  {:<30} {}\n", "step", "actor", "operation", w, "model predicts",
                     "device did");
  for (const OpRecord& r : o.log) {
    std::string actor = printable(r.actor, 80);
    if (r.repetition > 0) actor += fmt::format(" [cycle {}]", r.repetition);
    out += fmt::format("{:>4}  {:<28} {:<{}}  {:<30} {}{}\n", r.step, actor, r.op, w,
                       printable(r.expected), printable(r.observed), r.match ? "" : "   <-- differs");
  }
  if (o.verdict == Verdict::kEnvironment) {
    out += fmt::format("{}: {}\n", device, printable(o.reason));
  } else if (o.step > 0) {
    out += fmt::format("{} at step {}: expected {} | observed {}\n  ({})\n", verdict_name(o.verdict), o.step,
                       printable(o.expected), printable(o.observed), printable(o.reason));
  } else {
    out += fmt::format("{}: {}\n", verdict_name(o.verdict), printable(o.reason));
  }
  if (plan.cycle_start >= 0 && o.verdict != Verdict::kEnvironment) {
    std::string counters;
    for (const auto& [name, n] : o.counter_increase) counters += fmt::format("{}{} +{}", counters.empty() ? "" : ", ", name, n);
    out += fmt::format("lasso: reached {} (cycle from step {}); device counters that increased during the cycle: {}\n",
                       o.reached.empty() ? "the prefix" : o.reached, plan.cycle_start + 1,
                       counters.empty() ? "none (or the device has no counters)" : counters);
  }
  out += fmt::format("replay took {:.3f} s\n", o.seconds);
  return out;
}

}  // namespace qpcheck::verbs
