#include "checker/trace/names.h"

#include <array>
#include <cctype>
#include <utility>

namespace qpcheck::trace {

namespace {

// Whole identifiers (libibverbs / librdmacm -> the kernel's ib_verbs.h / rdma_cm.h).
constexpr std::array<std::pair<std::string_view, std::string_view>, 18> kWords{{
    {"ibv_post_recv", "ib_post_recv"},
    {"ibv_post_send", "ib_post_send"},
    {"ibv_post_srq_recv", "ib_post_srq_recv"},
    {"ibv_poll_cq", "ib_poll_cq"},
    {"ibv_req_notify_cq", "ib_req_notify_cq"},
    {"ibv_create_cq", "ib_alloc_cq"},
    {"ibv_destroy_cq", "ib_free_cq"},
    {"ibv_create_qp", "ib_create_qp"},
    {"ibv_modify_qp", "ib_modify_qp"},
    {"ibv_query_qp", "ib_query_qp"},
    {"ibv_destroy_qp", "ib_destroy_qp"},
    {"ibv_create_srq", "ib_create_srq"},
    {"ibv_destroy_srq", "ib_destroy_srq"},
    {"ibv_alloc_pd", "ib_alloc_pd"},
    {"ibv_dealloc_pd", "ib_dealloc_pd"},
    {"ibv_drain_qp", "ib_drain_qp"},
    {"ibv_event", "ib_event"},
    {"rdma_get_cm_event", "rdma_cm event_handler"},
}};

// Identifier prefixes: IBV_WC_SUCCESS -> IB_WC_SUCCESS.
constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kPrefixes{{
    {"IBV_WC_", "IB_WC_"},
    {"IBV_QPS_", "IB_QPS_"},
    {"IBV_WR_", "IB_WR_"},
    {"IBV_EVENT_", "IB_EVENT_"},
    {"IBV_SEND_", "IB_SEND_"},
    {"IBV_ACCESS_", "IB_ACCESS_"},
    {"IBV_QPT_", "IB_QPT_"},
    {"IBV_MTU_", "IB_MTU_"},
    {"IBV_QP_", "IB_QP_"},
}};

bool ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string word(std::string_view w) {
  for (const auto& [from, to] : kWords) {
    if (w == from) return std::string(to);
  }
  for (const auto& [from, to] : kPrefixes) {
    if (w.size() > from.size() && w.substr(0, from.size()) == from) return std::string(to) + std::string(w.substr(from.size()));
  }
  return std::string(w);
}

void rename(std::string& s) { s = kernel_names(s); }

}  // namespace

std::string kernel_names(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (!ident(text[i])) {
      out += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && ident(text[j])) ++j;
    out += word(text.substr(i, j - i));
    i = j;
  }
  return out;
}

Trace with_names(const Trace& trace, Names names) {
  Trace t = trace;
  if (names == Names::kUser) return t;
  rename(t.message);
  for (Change& c : t.initial) {
    rename(c.before);
    rename(c.after);
  }
  for (Step& s : t.steps) {
    rename(s.verbs);
    for (Call& c : s.calls) {
      rename(c.verbs);
      for (std::string& a : c.args) rename(a);
    }
    for (Change& c : s.changes) {
      rename(c.before);
      rename(c.after);
    }
  }
  return t;
}

}  // namespace qpcheck::trace
