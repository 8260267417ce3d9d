// A counterexample as a message sequence chart: a lane per process instance (the endpoints) and one for the fabric
// (the rules), a row per step, arrows for messages (an element pushed into a queue by one step and popped by a
// later one: REQ/REP/RTU, Sends, CM events, receive completions), marks for each step's call (ibv_post_recv,
// RNR NAK, TERMINATE highlighted), completions with their IBV_WC status, and the violated property at the step where
// it breaks; a lasso's cycle as a loop frame. Generic: lanes and arrows come from the Trace's actors, calls and queue changes only.
#pragma once

#include <string>
#include <vector>

#include "checker/trace/trace.h"

namespace qpcheck::trace {

enum class MarkKind { kCall, kPostRecv, kRnrNak, kTerminate, kCompletion, kCompletionError, kFabric };

struct MscMark {
  int row = 0;                 // 0-based step index
  int lane = 0;
  MarkKind kind = MarkKind::kCall;
  std::string label;           // "ibv_post_recv(ACTIVE, 2)", "fabric: RNR NAK", "WC IBV_WC_SUCCESS"
  std::string detail;          // the step's source line, for tooltips
};

struct MscArrow {
  int from_lane = 0, to_lane = 0;
  int from_row = -1;           // -1: already in flight in the initial state
  int to_row = 0;              // the step that popped it; rows (one past the last step): still in flight
  std::string label;           // the element ("REQ", "UNSOL")
  std::string queue;           // the queue unit ("cm_wire[PASSIVE]")
  bool in_flight = false;
  // Removed by a step that put its sender's QP into an error state (a change of a unit on the sender's lane to ERR,
  // or to an IBV_WC_* status other than IBV_WC_SUCCESS): flushed, never delivered. Drawn ending in a cross.
  bool discarded = false;
};

struct Msc {
  std::vector<std::string> lanes;  // process instances in the trace's order, "fabric" in the middle if any rule
  int rows = 0;                    // number of steps
  std::vector<MscMark> marks;
  std::vector<MscArrow> arrows;
  int violation_row = -1;          // the row at which the property breaks (rows: after the last step)
  std::string violation;           // "invariant passive_send_after_peer_recv is false"
  std::string title;               // "spec/03_...qpspec: passive_send_after_peer_recv violated"
  std::vector<std::string> observed;  // per row: the recorded calls the step matched (Step::observed), or ""
  // A lasso (docs/liveness.md): rows cycle_start..rows-1 repeat forever, drawn as a loop frame; rows: nothing is
  // enabled after the last row and the run stays there; -1: not a lasso.
  int cycle_start = -1;
};

// Lays out a violated trace or a witness (a `holds` trace with steps). A trace without steps gives a chart with lanes
// only.
Msc build_msc(const Trace& trace);

// A standalone SVG document (no scripts, no external resources).
std::string to_svg(const Trace& trace);
// A standalone HTML page: the SVG inline, the parameters, and the steps with their source lines.
std::string to_html(const Trace& trace);
// Mermaid sequenceDiagram text (for Markdown): deliveries as arrows, calls and marks as notes.
std::string to_mermaid(const Trace& trace);

}  // namespace qpcheck::trace
