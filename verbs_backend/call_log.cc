#include "verbs_backend/call_log.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

namespace qpcheck::verbs {

namespace {

using nlohmann::json;

// A record's nesting is at most a few levels (wc arrays of objects); deeper input is refused before parsing.
constexpr int kMaxDepth = 8;
// Lines longer than this are not a record (an ibv_poll_cq of a few hundred completions is ~30 kB).
constexpr size_t kMaxLine = size_t{4} << 20;

std::string shown(std::string_view s) {
  std::string out;
  // printable ASCII only: a control, a C1 control in UTF-8 or a broken sequence never reaches the terminal
  for (char c : s.substr(0, 80)) out += (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) ? '?' : c;
  if (s.size() > 80) out += "...";
  return out;
}

int nesting(std::string_view line) {
  int depth = 0, most = 0;
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      most = std::max(most, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return most;
}

class Reader {
 public:
  Reader(const std::string& name) : name_(name) {}
  [[noreturn]] void fail(int line, const std::string& field, const std::string& what) const {
    throw CallLogError(name_, line, field, what);
  }
  int64_t integer(const json& j, int line, const char* field, bool required = true) const {
    auto it = j.find(field);
    if (it == j.end()) {
      if (required) fail(line, field, "missing");
      return 0;
    }
    if (!it->is_number_integer()) fail(line, field, fmt::format("expected an integer, found {}", shown(it->dump())));
    return it->get<int64_t>();
  }
  std::string text(const json& j, int line, const char* field, bool required = true) const {
    auto it = j.find(field);
    if (it == j.end() || it->is_null()) {
      if (required) fail(line, field, "missing");
      return "";
    }
    if (!it->is_string()) fail(line, field, fmt::format("expected a string, found {}", shown(it->dump())));
    return it->get<std::string>();
  }

 private:
  std::string name_;
};

}  // namespace

CallLogError::CallLogError(const std::string& file_, int line_, const std::string& field_, const std::string& what)
    : std::runtime_error(field_.empty() ? fmt::format("{}:{}: {}", file_, line_, what)
                                        : fmt::format("{}:{}: field '{}': {}", file_, line_, field_, what)),
      file(file_),
      line(line_),
      field(field_) {}

CallLog parse_call_log(const std::string& name, const std::string& text) {
  Reader rd(name);
  CallLog log;
  log.path = name;
  std::map<int64_t, int64_t> last_t;  // per thread
  size_t at = 0;
  int line = 0;
  while (at < text.size()) {
    ++line;
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) rd.fail(line, "", "the last line is cut off (no newline): the log is truncated");
    std::string_view raw(text.data() + at, nl - at);
    at = nl + 1;
    if (log.ended) rd.fail(line, "", "a line after the trailer (\"end\": true)");
    if (raw.empty()) rd.fail(line, "", "an empty line");
    if (raw.size() > kMaxLine) rd.fail(line, "", fmt::format("a line of {} bytes (at most {})", raw.size(), kMaxLine));
    if (nesting(raw) > kMaxDepth) rd.fail(line, "", fmt::format("nested deeper than {} levels", kMaxDepth));
    json j = json::parse(raw, nullptr, false);
    if (j.is_discarded()) rd.fail(line, "", fmt::format("not JSON: {}", shown(raw)));
    if (!j.is_object()) rd.fail(line, "", "not a JSON object");
    if (line == 1) {
      if (!j.contains("qpcheck_record")) rd.fail(line, "qpcheck_record", "missing: not a qpcheck call log");
      int64_t v = rd.integer(j, line, "qpcheck_record");
      if (v != kCallLogVersion) {
        rd.fail(line, "qpcheck_record", fmt::format("schema version {}; this qpcheck reads version {}", v,
                                                    kCallLogVersion));
      }
      rd.integer(j, line, "pid");
      // logs are merged by their times: every one must use the recorder's clock
      if (j.contains("clock") && (!j["clock"].is_string() || j["clock"].get<std::string>() != "CLOCK_MONOTONIC")) {
        rd.fail(line, "clock", "expected \"CLOCK_MONOTONIC\" (the logs of a run are merged by their times)");
      }
      log.header = std::move(j);
      continue;
    }
    if (j.contains("end")) {
      if (!j["end"].is_boolean() || !j["end"].get<bool>()) rd.fail(line, "end", "expected true");
      int64_t n = rd.integer(j, line, "records");
      if (n != static_cast<int64_t>(log.calls.size())) {
        rd.fail(line, "records", fmt::format("the trailer counts {} records, the log has {}", n, log.calls.size()));
      }
      log.lost = rd.integer(j, line, "lost", false);
      log.empty_polls = rd.integer(j, line, "empty_polls", false);
      log.ended = true;
      continue;
    }
    LoggedCall c;
    c.line = line;
    c.seq = rd.integer(j, line, "seq");
    if (c.seq != static_cast<int64_t>(log.calls.size()) + 1) {
      rd.fail(line, "seq", fmt::format("{} out of order (expected {})", c.seq, log.calls.size() + 1));
    }
    c.t_ns = rd.integer(j, line, "t");
    c.tid = rd.integer(j, line, "tid");
    c.call = rd.text(j, line, "call");
    c.ret = rd.integer(j, line, "ret");
    c.err = rd.integer(j, line, "errno", false);
    c.inside = rd.text(j, line, "inside", false);
    if (c.t_ns < 0) rd.fail(line, "t", "negative");
    // A nested call is written before the call it was made in, and stamped later: only a thread's outermost
    // calls are in time order.
    if (c.inside.empty()) {
      if (auto it = last_t.find(c.tid); it != last_t.end() && c.t_ns < it->second) {
        rd.fail(line, "t", fmt::format("{} ns is before the thread's previous record ({} ns): out of order", c.t_ns,
                                       it->second));
      }
      last_t[c.tid] = c.t_ns;
    }
    c.fields = std::move(j);
    log.calls.push_back(std::move(c));
  }
  if (line == 0) rd.fail(1, "", "empty: not a qpcheck call log");
  return log;
}

CallLog read_call_log(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw CallLogFileError(fmt::format("cannot read call log '{}' (missing, unreadable or not a regular file)",
                                       shown(path)));
  }
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxCallLogBytes) {
    throw CallLogFileError(fmt::format("call log '{}' is larger than {} MiB", shown(path), kMaxCallLogBytes >> 20));
  }
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw CallLogFileError(fmt::format("cannot read call log '{}'", shown(path)));
  return parse_call_log(path, text);
}

namespace {

// One record of the merged run.
struct At {
  size_t log;
  const LoggedCall* call;
};

// Names the run's handles as the spec does, and writes each call as observations.
class Observer {
 public:
  Observer(const std::vector<CallLog>& logs, const std::vector<std::string>& ops,
           const std::vector<std::vector<std::string>>& plain_qps)
      : logs_(logs), ops_(ops.begin(), ops.end()), plain_qps_(plain_qps), plain_used_(logs.size(), 0) {
    plain_qps_.resize(logs.size());
  }

  Observed run() {
    std::vector<At> all;
    for (size_t l = 0; l < logs_.size(); ++l) {
      for (const LoggedCall& c : logs_[l].calls) all.push_back(At{l, &c});
      if (!logs_[l].ended) {
        out_.ended = false;
        out_.notes.push_back(fmt::format("{}: no trailer: the program did not exit normally (checked the {} records "
                                         "it has)",
                                         logs_[l].path, logs_[l].calls.size()));
      }
      if (logs_[l].lost) {
        out_.notes.push_back(fmt::format("{}: the recorder lost {} records: the log is incomplete", logs_[l].path,
                                         logs_[l].lost));
      }
    }
    std::stable_sort(all.begin(), all.end(), [](const At& a, const At& b) {
      if (a.call->t_ns != b.call->t_ns) return a.call->t_ns < b.call->t_ns;
      if (a.log != b.log) return a.log < b.log;
      return a.call->seq < b.call->seq;
    });
    explicit_setup_ = ops_.count("resolve_addr") > 0;
    // ibv_create_qp.3: sq_sig_all makes every send WR signaled; the QP's ibv_create_qp is often made inside another
    // call (rdma_create_qp, rdma_create_ep, rdma_get_request), whose records are otherwise skipped.
    for (const At& a : all) {
      auto sig = a.call->fields.find("sq_sig_all");
      auto qp = a.call->fields.find("qp");
      if (!failed(*a.call) && sig != a.call->fields.end() && sig->is_boolean() && qp != a.call->fields.end() &&
          qp->is_string()) {
        sq_sig_all_[key(a, qp->get<std::string>())] = sig->get<bool>();
      }
    }
    for (const At& a : all) one(a);
    if (unsignaled_ > 0) {
      out_.notes.push_back(fmt::format(
          "{} send WRs were posted unsignaled (no IBV_SEND_SIGNALED, on a QP without sq_sig_all): the library "
          "models every WR as signaled, so the model has a send completion for each that the program never polls",
          unsignaled_));
    }
    for (const auto& [k, c] : created_) {
      (void)k;
      ++skipped_[{c->call, "a cm_id that never became an endpoint (a listener, or one librdmacm made for itself)"}];
    }
    // An rdma_create_id is written when its cm_id turns active, at its own time.
    std::stable_sort(out_.observations.begin(), out_.observations.end(),
                     [](const conform::Observation& x, const conform::Observation& y) { return x.t_ns < y.t_ns; });
    for (const auto& [key, n] : skipped_) out_.skipped.push_back(conform::Skipped{key.first, key.second, n});
    return std::move(out_);
  }

 private:
  struct Qp {
    std::string endpoint;
  };
  struct Cq {
    std::string endpoint;  // a CQ shared by several QPs: the completion's qp_num decides
    bool send = false, recv = false;
  };

  std::string key(const At& a, const std::string& handle) const { return fmt::format("{}:{}", a.log, handle); }
  std::string where(const At& a) const { return fmt::format("{}:{}", logs_[a.log].path, a.call->line); }
  [[noreturn]] void fail(const At& a, const std::string& field, const std::string& what) const {
    throw CallLogError(logs_[a.log].path, a.call->line, field, what);
  }
  std::string handle(const At& a, const char* field) const {
    auto it = a.call->fields.find(field);
    if (it == a.call->fields.end() || !it->is_string()) fail(a, field, "missing or not a handle string");
    return it->get<std::string>();
  }
  std::string opt_handle(const At& a, const char* field) const {
    auto it = a.call->fields.find(field);
    return it != a.call->fields.end() && it->is_string() ? it->get<std::string>() : "";
  }
  int64_t number(const At& a, const json& j, const char* field) const {
    auto it = j.find(field);
    if (it == j.end() || !it->is_number_integer()) fail(a, field, "missing or not an integer");
    return it->get<int64_t>();
  }
  // A number the API's type bounds (a WR count, a uint8_t of struct rdma_conn_param or ibv_qp_attr, a QP number).
  int64_t number(const At& a, const json& j, const char* field, int64_t lo, int64_t hi) const {
    int64_t v = number(a, j, field);
    if (v < lo || v > hi) fail(a, field, fmt::format("{} is out of the call's range {}..{}", v, lo, hi));
    return v;
  }
  std::string name(const At& a, const json& j, const char* field) const {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string()) fail(a, field, "missing or not a string");
    return it->get<std::string>();
  }

  void skip(const At& a, const std::string& why) { ++skipped_[{a.call->call, why}]; }

  // Emits `op(args)` for the call `a`, unless the spec never makes `op`.
  void emit(const At& a, const std::string& op, std::vector<std::string> args,
            std::vector<std::pair<std::string, std::vector<std::string>>> alternatives = {}) {
    bool any = ops_.count(op) > 0;
    for (const auto& alt : alternatives) any = any || ops_.count(alt.first) > 0;
    if (!any) {
      skip(a, fmt::format("the spec makes no {}", op));
      return;
    }
    conform::Observation o;
    o.op = op;
    o.args = std::move(args);
    for (auto& [alt_op, alt_args] : alternatives) {
      if (ops_.count(alt_op)) o.alternatives.push_back(conform::Observation::Form{alt_op, std::move(alt_args)});
    }
    o.failed = failed(*a.call);
    o.call = a.call->call;
    o.source = where(a);
    o.t_ns = a.call->t_ns;
    o.tid = a.call->tid;
    out_.observations.push_back(std::move(o));
  }

  static bool failed(const LoggedCall& c) {
    if (c.call == "ibv_poll_cq") return c.ret < 0;
    return c.ret != 0;
  }

  std::string endpoint_of_id(const At& a, const std::string& id, const char* field) {
    auto it = ids_.find(key(a, id));
    if (it == ids_.end() || it->second.empty()) {
      fail(a, field, fmt::format("cm_id {} is not an endpoint of the run (not connected, not from a CONNECT_REQUEST)",
                                 shown(id)));
    }
    return it->second;
  }

  // The first use of an active cm_id names it ACTIVE[k].
  std::string activate(const At& a, const std::string& id) {
    std::string& e = ids_[key(a, id)];
    if (e.empty()) {
      e = fmt::format("ACTIVE[{}]", actives_);
      active_conn_[key(a, id)] = actives_++;
    }
    return e;
  }

  void address(const At& a, const std::string& id) {
    std::string local = opt_handle(a, "local");
    if (!local.empty()) local_addr_[key(a, id)] = local;
  }

  std::string passive_for(const At& a, const std::string& peer) {
    if (!peer.empty()) {
      for (const auto& [k, addr] : local_addr_) {
        auto c = active_conn_.find(k);
        if (addr == peer && c != active_conn_.end() && !paired_.count(c->second)) {
          paired_.insert(c->second);
          return fmt::format("PASSIVE[{}]", c->second);
        }
      }
    }
    int c = 0;
    while (paired_.count(c)) ++c;
    paired_.insert(c);
    if (!peer.empty()) {
      out_.notes.push_back(fmt::format("{}: no active cm_id has the address {}: named PASSIVE[{}] by order",
                                       where(a), shown(peer), c));
    }
    return fmt::format("PASSIVE[{}]", c);
  }

  void one(const At& a) {
    const LoggedCall& c = *a.call;
    const json& f = c.fields;
    const std::string& call = c.call;
    // librdmacm's synchronous API (a cm_id without an event channel of the program's) takes the call's event
    // inside it: that event is the program's to observe, right after the call.
    bool sync_event = call == "rdma_get_cm_event" &&
                      (c.inside == "rdma_resolve_addr" || c.inside == "rdma_resolve_route" ||
                       c.inside == "rdma_connect" || c.inside == "rdma_accept" || c.inside == "rdma_disconnect" ||
                       c.inside == "rdma_listen");  // rdma_get_request is itself the CONNECT_REQUEST's observation
    if (!c.inside.empty() && !sync_event) return skip(a, "made inside " + c.inside);
    if (call == "rdma_create_id") {
      if (failed(c)) return skip(a, "failed");
      if (!explicit_setup_) return skip(a, "the spec has no create_id (the endpoint is set up before it)");
      created_[key(a, handle(a, "id"))] = &c;  // emitted when the cm_id turns out to be active
      return;
    }
    if (call == "rdma_create_ep") return create_ep(a);
    if (call == "rdma_bind_addr") return skip(a, "part of listen (rdma_bind_addr + rdma_listen)");
    if (call == "rdma_listen") {
      listeners_.insert(key(a, handle(a, "id")));
      return emit(a, "listen", {});
    }
    if (call == "rdma_resolve_addr" || call == "rdma_connect") {
      std::string id = handle(a, "id");
      bool first = ids_[key(a, id)].empty();
      std::string e = activate(a, id);
      if (first && explicit_setup_) {
        // the rdma_create_id of this cm_id, at its own time
        auto cr = created_.find(key(a, id));
        if (cr != created_.end()) {
          emit(At{a.log, cr->second}, "create_id", {e});
          created_.erase(cr);
        }
      }
      if (call == "rdma_resolve_addr") {
        if (!explicit_setup_) return skip(a, "the spec has no address resolution (the endpoint is set up before it)");
        return emit(a, "resolve_addr", {e});
      }
      return emit(a, "connect", conn_param(a, e));
    }
    if (call == "rdma_resolve_route") {
      // rdma_create_ep resolves the address without a recorded call: the route makes the cm_id active too
      std::string e = activate(a, handle(a, "id"));
      if (!explicit_setup_) return skip(a, "the spec has no address resolution (the endpoint is set up before it)");
      return emit(a, "resolve_route", {e});
    }
    if (call == "rdma_get_cm_event" || call == "rdma_get_request") {
      if (failed(c)) return skip(a, "failed (no event)");
      std::string ev = call == "rdma_get_request" ? "RDMA_CM_EVENT_CONNECT_REQUEST" : name(a, f, "event");
      std::string id = handle(a, "id");
      if (ev == "RDMA_CM_EVENT_CONNECT_REQUEST") {
        std::string& e = ids_[key(a, id)];
        if (e.empty()) e = passive_for(a, opt_handle(a, "peer"));
        std::string ep = e;
        emit(a, "get_cm_event", {ep, ev});
        // rdma_get_request of a listener with a qp_init_attr (rdma_create_ep): the QP was created inside it
        if (call == "rdma_get_request" && !opt_handle(a, "qp").empty()) {
          add_qp(a, ep);
          emit(a, "create_qp", {ep});
        }
        return;
      }
      if (listeners_.count(key(a, id))) return skip(a, "an event of the listening cm_id");
      bool resolution = ev == "RDMA_CM_EVENT_ADDR_RESOLVED" || ev == "RDMA_CM_EVENT_ADDR_ERROR" ||
                        ev == "RDMA_CM_EVENT_ROUTE_RESOLVED" || ev == "RDMA_CM_EVENT_ROUTE_ERROR";
      std::string e = resolution ? activate(a, id) : endpoint_of_id(a, id, "id");
      address(a, id);
      if ((ev == "RDMA_CM_EVENT_ADDR_RESOLVED" || ev == "RDMA_CM_EVENT_ROUTE_RESOLVED") && !explicit_setup_) {
        return skip(a, "the spec has no address resolution (the endpoint is set up before it)");
      }
      return emit(a, "get_cm_event", {e, ev});
    }
    if (call == "rdma_create_qp") {
      std::string id = handle(a, "id");
      std::string e = endpoint_of_id(a, id, "id");
      if (!failed(c)) add_qp(a, e);
      std::string srq = opt_handle(a, "srq");
      if (!srq.empty()) return emit(a, "create_qp_srq", {e, srq_index(a, srq)});
      return emit(a, "create_qp", {e});
    }
    if (call == "rdma_accept") return emit(a, "accept", conn_param(a, endpoint_of_id(a, handle(a, "id"), "id")));
    if (call == "rdma_reject") return emit(a, "reject", {endpoint_of_id(a, handle(a, "id"), "id")});
    if (call == "rdma_disconnect") return emit(a, "disconnect", {endpoint_of_id(a, handle(a, "id"), "id")});
    if (call == "rdma_destroy_qp") return emit(a, "destroy_qp", {endpoint_of_id(a, handle(a, "id"), "id")});
    if (call == "rdma_destroy_id") {
      std::string id = handle(a, "id");
      if (listeners_.count(key(a, id))) return skip(a, "the listening cm_id");
      auto it = ids_.find(key(a, id));
      if (it == ids_.end() || it->second.empty()) return skip(a, "a cm_id that never became an endpoint");
      return emit(a, "destroy_id", {it->second});
    }
    if (call == "ibv_create_srq") {
      if (!failed(c)) srq_index(a, handle(a, "srq"));
      return emit(a, "create_srq", {failed(c) ? "*" : srq_index(a, handle(a, "srq"))});
    }
    if (call == "ibv_post_srq_recv") {
      return emit(a, "post_srq_recv",
                  {srq_index(a, handle(a, "srq")), std::to_string(number(a, f, "count", 0, INT32_MAX))});
    }
    if (call == "ibv_create_qp") {
      // A plain-verbs QP (no cm_id): its endpoint is the next one the map gives this log (--map LOG=EP,...).
      if (failed(c)) return skip(a, "failed (no QP)");
      std::vector<std::string>& names = plain_qps_[a.log];
      size_t& used = plain_used_[a.log];
      if (used >= names.size()) {
        fail(a, "qp", fmt::format("a QP created with ibv_create_qp, without a cm_id: conform cannot name its endpoint "
                                  "from the log; name the QPs this log creates with --map {}=ENDPOINT[,ENDPOINT...] "
                                  "({} named so far)",
                                  shown(logs_[a.log].path), used));
      }
      std::string e = names[used++];
      add_qp(a, e);
      return emit(a, "ibv_create_qp", {e});
    }
    if (call == "ibv_modify_qp") return emit(a, "modify_qp", modify_args(a));
    if (call == "ibv_destroy_qp") return emit(a, "destroy_qp", {qp_endpoint(a)});
    if (call == "ibv_post_recv") {
      std::string e = qp_endpoint(a);
      remember_wr_ids(e, f, "wr_ids", nullptr, true);
      return emit(a, "post_recv", {e, std::to_string(number(a, f, "count", 0, INT32_MAX))});
    }
    if (call == "ibv_post_send") {
      std::string e = qp_endpoint(a);
      auto wrs = f.find("wrs");
      if (wrs == f.end() || !wrs->is_array()) fail(a, "wrs", "missing or not an array");
      remember_wr_ids(e, f, "wrs", "wr_id", false);
      auto sig_all = sq_sig_all_.find(key(a, handle(a, "qp")));
      bool all_signaled = sig_all != sq_sig_all_.end() && sig_all->second;
      for (const json& wr : *wrs) {
        if (!wr.is_object()) fail(a, "wrs", "an element is not an object");
        auto sig = wr.find("signaled");
        if (!all_signaled && sig != wr.end() && sig->is_boolean() && !sig->get<bool>()) ++unsignaled_;
        emit(a, "post_send", {e, name(a, wr, "opcode")});
      }
      return;
    }
    if (call == "ibv_poll_cq") {
      auto wcs = f.find("wc");
      if (wcs == f.end() || !wcs->is_array()) fail(a, "wc", "missing or not an array");
      std::string cqh = handle(a, "cq");
      auto cq = cqs_.find(key(a, cqh));
      if (cq == cqs_.end()) fail(a, "cq", fmt::format("CQ {} belongs to no QP of an endpoint", shown(cqh)));
      for (const json& wc : *wcs) {
        if (!wc.is_object()) fail(a, "wc", "an element is not an object");
        std::string status = name(a, wc, "status");
        std::string opcode = wc.contains("opcode") && wc["opcode"].is_string() ? wc["opcode"].get<std::string>() : "";
        std::string e = cq->second.endpoint;
        if (e == "*") {
          auto q = qp_nums_.find({a.log, number(a, wc, "qp_num", 0, UINT32_MAX)});
          if (q == qp_nums_.end()) fail(a, "qp_num", "a completion of a QP that is no endpoint's");
          e = q->second;
        }
        bool recv = cq->second.recv && !cq->second.send;
        if (cq->second.recv && cq->second.send) {
          // One CQ for both queues: the opcode says which for a successful completion; an error completion's
          // opcode is not valid (ibv_poll_cq.3), its wr_id is: the queue it was last posted to.
          if (status == "IBV_WC_SUCCESS") {
            recv = opcode.rfind("IBV_WC_RECV", 0) == 0;
          } else {
            uint64_t id = wc.contains("wr_id") && wc["wr_id"].is_number_unsigned() ? wc["wr_id"].get<uint64_t>()
                                                                                    : ~uint64_t{0};
            auto w = wr_queue_.find({e, id});
            if (w == wr_queue_.end() || w->second == kBoth) {
              // posted to both queues (rping uses wr_id 0 for every WR), or to neither: either queue's
              emit(a, "poll_send", {e, status, "*"}, {{"poll_recv", {e, status}}});
              continue;
            }
            recv = w->second == kRecvQueue;
          }
        }
        if (recv) {
          emit(a, "poll_recv", {e, status});
        } else {
          // ibv_poll_cq.3: an error completion's opcode is not valid
          emit(a, "poll_send", {e, status, status == "IBV_WC_SUCCESS" && !opcode.empty() ? opcode : "*"});
        }
      }
      return;
    }
    if (call == "rdma_notify") return emit(a, "notify", {endpoint_of_id(a, handle(a, "id"), "id")});
    if (call == "ibv_modify_srq") {
      // ibv_modify_srq.3: only an IBV_SRQ_LIMIT change is an operation (modify_srq); a resize is not modelled
      if (!f.contains("srq_limit")) return skip(a, "no srq_limit in its mask (an SRQ resize is not modelled)");
      return emit(a, "modify_srq",
                  {srq_index(a, handle(a, "srq")), std::to_string(number(a, f, "srq_limit", 0, UINT32_MAX))});
    }
    if (call == "ibv_get_async_event") return async_event(a);
    skip(a, "no replay operation stands for it");
  }

  // ibv_get_async_event.3: the event names the object it is about. A QP's or a CQ's event is its endpoint's
  // (get_async_event(e, EVENT)), an SRQ's is the SRQ's (get_srq_event(s, EVENT)); a port or device event belongs to
  // the device context, which the model gives each endpoint: the endpoint of this log's QPs, or any of them when
  // the process has several (alternatives).
  void async_event(const At& a) {
    const json& f = a.call->fields;
    if (failed(*a.call)) return skip(a, "failed (no event)");
    std::string ev = name(a, f, "event");
    if (f.contains("qp")) return emit(a, "get_async_event", {qp_endpoint(a), ev});
    if (f.contains("srq")) return emit(a, "get_srq_event", {srq_index(a, handle(a, "srq")), ev});
    if (f.contains("cq")) {
      std::string cqh = handle(a, "cq");
      auto cq = cqs_.find(key(a, cqh));
      if (cq == cqs_.end()) fail(a, "cq", fmt::format("CQ {} belongs to no QP of an endpoint", shown(cqh)));
      if (cq->second.endpoint == "*") {
        // a CQ shared by the QPs of several endpoints: the event is any of theirs
        std::vector<std::string> owners;
        for (const auto& [k, q] : qps_) {
          if (k.rfind(fmt::format("{}:", a.log), 0) == 0) owners.push_back(q.endpoint);
        }
        if (owners.empty()) return skip(a, "a CQ event of no endpoint");
        std::vector<std::pair<std::string, std::vector<std::string>>> alts;
        for (size_t i = 1; i < owners.size(); ++i) alts.push_back({"get_async_event", {owners[i], ev}});
        return emit(a, "get_async_event", {owners[0], ev}, std::move(alts));
      }
      return emit(a, "get_async_event", {cq->second.endpoint, ev});
    }
    auto mine = log_endpoints_.find(a.log);
    if (mine == log_endpoints_.end() || mine->second.empty()) {
      return skip(a, "a port or device event before the process had an endpoint");
    }
    std::vector<std::pair<std::string, std::vector<std::string>>> alts;
    for (size_t i = 1; i < mine->second.size(); ++i) alts.push_back({"get_async_event", {mine->second[i], ev}});
    emit(a, "get_async_event", {mine->second[0], ev}, std::move(alts));
  }

  // rdma_create_ep.3 (recorded as one call, its internal calls "inside" it): a passive rdma_addrinfo makes the
  // listening cm_id (its rdma_listen follows); an active one makes the cm_id, resolves the address and the route
  // synchronously (rdma_resolve_addr, rdma_resolve_route, each taking its event) and, given a qp_init_attr, creates
  // the QP: those observations, in that order, at the call's return.
  void create_ep(const At& a) {
    const json& f = a.call->fields;
    if (failed(*a.call)) return skip(a, "failed");
    auto passive = f.find("passive");
    if (passive == f.end() || !passive->is_boolean()) fail(a, "passive", "missing or not a boolean");
    std::string id = handle(a, "id");
    if (passive->get<bool>()) return skip(a, "a passive endpoint: the listening cm_id of the rdma_listen that follows");
    std::string e = activate(a, id);
    address(a, id);
    if (explicit_setup_) {
      emit(a, "create_id", {e});
      emit(a, "resolve_addr", {e});
      emit(a, "get_cm_event", {e, "RDMA_CM_EVENT_ADDR_RESOLVED"});
      emit(a, "resolve_route", {e});
      emit(a, "get_cm_event", {e, "RDMA_CM_EVENT_ROUTE_RESOLVED"});
    } else {
      skip(a, "the spec has no address resolution (the endpoint is set up before it)");
    }
    if (opt_handle(a, "qp").empty()) return;
    add_qp(a, e);
    std::string srq = opt_handle(a, "srq");
    if (!srq.empty()) return emit(a, "create_qp_srq", {e, srq_index(a, srq)});
    emit(a, "create_qp", {e});
  }

  // The queues each wr_id of endpoint `e` was posted to, for error completions on a shared CQ.
  void remember_wr_ids(const std::string& e, const json& f, const char* list, const char* member, bool recv) {
    auto it = f.find(list);
    if (it == f.end() || !it->is_array()) return;
    for (const json& x : *it) {
      const json* id = member ? (x.is_object() && x.contains(member) ? &x[member] : nullptr) : &x;
      if (!id || !id->is_number_unsigned()) continue;
      int& q = wr_queue_[{e, id->get<uint64_t>()}];
      int mine = recv ? kRecvQueue : kSendQueue;
      q = q == 0 || q == mine ? mine : kBoth;
    }
  }

  // The QP of record `a` ("qp", "qp_num", "send_cq", "recv_cq") is endpoint e's.
  void add_qp(const At& a, const std::string& e) {
    const json& f = a.call->fields;
    qps_[key(a, handle(a, "qp"))] = Qp{e};
    std::vector<std::string>& mine = log_endpoints_[a.log];
    if (std::find(mine.begin(), mine.end(), e) == mine.end()) mine.push_back(e);
    qp_nums_[{a.log, number(a, f, "qp_num", 0, UINT32_MAX)}] = e;
    for (const char* side : {"send_cq", "recv_cq"}) {
      Cq& cq = cqs_[key(a, handle(a, side))];
      cq.endpoint = cq.endpoint.empty() || cq.endpoint == e ? e : "*";
      (std::string_view(side) == "send_cq" ? cq.send : cq.recv) = true;
    }
  }

  std::vector<std::string> conn_param(const At& a, const std::string& e) {
    auto it = a.call->fields.find("conn_param");
    if (it == a.call->fields.end() || it->is_null()) return {e, "*", "*", "*"};
    if (!it->is_object()) fail(a, "conn_param", "not an object");
    return {e, std::to_string(number(a, *it, "rnr_retry", 0, UINT8_MAX)),
            std::to_string(number(a, *it, "initiator_depth", 0, UINT8_MAX)),
            std::to_string(number(a, *it, "responder_resources", 0, UINT8_MAX))};
  }

  std::vector<std::string> modify_args(const At& a) {
    const json& f = a.call->fields;
    std::vector<std::string> args{qp_endpoint(a)};
    auto st = f.find("state");
    if (st == f.end()) {
      args.push_back("*");  // the mask has no IBV_QP_STATE
    } else {
      if (!st->is_string()) fail(a, "state", "not a string");
      args.push_back(st->get<std::string>());
    }
    // the 6-argument form: max_dest_rd_atomic, rnr_retry, retry_cnt, max_rd_atomic, where the mask sets them
    for (const char* attr : {"max_dest_rd_atomic", "rnr_retry", "retry_cnt", "max_rd_atomic"}) {
      auto it = f.find(attr);
      args.push_back(it != f.end() && it->is_number_integer() ? std::to_string(it->get<int64_t>()) : "*");
    }
    return args;
  }

  std::string qp_endpoint(const At& a) {
    std::string qp = handle(a, "qp");
    auto it = qps_.find(key(a, qp));
    if (it == qps_.end()) fail(a, "qp", fmt::format("QP {} was not created by rdma_create_qp in this log", shown(qp)));
    return it->second.endpoint;
  }

  std::string srq_index(const At& a, const std::string& srq) {
    auto [it, fresh] = srqs_.emplace(key(a, srq), static_cast<int>(srqs_.size()));
    (void)fresh;
    return std::to_string(it->second);
  }

  const std::vector<CallLog>& logs_;
  std::set<std::string> ops_;
  std::vector<std::vector<std::string>> plain_qps_;  // per log: the endpoints of its plain-verbs QPs, in order
  std::vector<size_t> plain_used_;
  bool explicit_setup_ = false;
  Observed out_;
  std::map<std::pair<std::string, std::string>, int> skipped_;
  std::map<std::string, const LoggedCall*> created_;   // cm_id -> its rdma_create_id
  std::map<std::string, std::string> ids_;             // cm_id -> endpoint ("" while unnamed)
  std::map<std::string, int> active_conn_;             // active cm_id -> its connection index
  std::map<std::string, std::string> local_addr_;      // active cm_id -> its local address
  std::set<int> paired_;
  std::set<std::string> listeners_;
  std::map<int, std::vector<std::string>> log_endpoints_;  // per log: the endpoints whose QPs it created, in order
  std::map<std::string, Qp> qps_;
  std::map<std::pair<size_t, int64_t>, std::string> qp_nums_;
  std::map<std::string, Cq> cqs_;
  std::map<std::string, int> srqs_;
  static constexpr int kSendQueue = 1, kRecvQueue = 2, kBoth = 3;
  std::map<std::pair<std::string, uint64_t>, int> wr_queue_;  // the queues each wr_id was posted to
  std::map<std::string, bool> sq_sig_all_;  // QP -> its ibv_qp_init_attr.sq_sig_all, where recorded
  int unsignaled_ = 0;
  int actives_ = 0;
};

}  // namespace

Observed observe(const std::vector<CallLog>& logs, const std::vector<std::string>& spec_ops,
                 const std::vector<std::vector<std::string>>& plain_qps) {
  return Observer(logs, spec_ops, plain_qps).run();
}

std::string endpoint_name(const std::string& text) {
  for (const char* side : {"ACTIVE", "PASSIVE"}) {
    std::string_view t(text), s(side);
    if (t.substr(0, s.size()) != s) continue;
    std::string_view rest = t.substr(s.size());
    if (rest.empty()) return std::string(side) + "[0]";
    if (rest.size() >= 3 && rest.front() == '[' && rest.back() == ']' && rest.size() <= 6) {
      std::string_view digits = rest.substr(1, rest.size() - 2);
      if (std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
        return std::string(side) + "[" + std::to_string(std::stoi(std::string(digits))) + "]";
      }
    }
  }
  return "";
}

}  // namespace qpcheck::verbs
