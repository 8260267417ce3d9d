// The names a trace is shown with: user space's (libibverbs/librdmacm, the default) or the kernel's, for kernel ULP
// authors (`verify --names kernel`, `show --names kernel`). A presentation layer over a Trace: the JSON report is
// always written with the user-space names, so its replay operations (IBV_WC_*, IBV_QPS_*) stay replayable.
#pragma once

#include <string>
#include <string_view>

#include "checker/trace/trace.h"

namespace qpcheck::trace {

enum class Names { kUser, kKernel };

// `text` with every user-space verbs name in it, as a whole identifier, replaced by the kernel's: ibv_post_recv ->
// ib_post_recv, ibv_poll_cq -> ib_poll_cq, ibv_create_qp -> ib_create_qp, ibv_modify_qp -> ib_modify_qp,
// ibv_create_cq -> ib_alloc_cq, ..., IBV_WC_* -> IB_WC_*, IBV_QPS_* -> IB_QPS_*, IBV_WR_* -> IB_WR_*,
// IBV_EVENT_* -> IB_EVENT_*; rdma_get_cm_event -> "rdma_cm event_handler" (a kernel ULP has no event channel: the
// CM calls the handler it passed to rdma_create_id with the same RDMA_CM_EVENT_* events); other rdma_* unchanged.
std::string kernel_names(std::string_view text);

// The trace as shown with `names`: for kKernel the verbs labels of steps and calls, the call arguments, the changed
// values, the initial state and the violation message through kernel_names; spec source lines and replay
// operations unchanged. kUser: the trace itself.
Trace with_names(const Trace& trace, Names names);

}  // namespace qpcheck::trace
