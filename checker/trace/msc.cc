#include "checker/trace/msc.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include <fmt/format.h>

#include "checker/trace/render.h"

namespace qpcheck::trace {

namespace {

// "[REQ, RTU]" -> {"REQ", "RTU"}; nullopt-like empty flag when the value is not a rendered queue.
bool parse_queue(const std::string& v, std::vector<std::string>& out) {
  out.clear();
  if (v.size() < 2 || v.front() != '[' || v.back() != ']') return false;
  std::string body = v.substr(1, v.size() - 2);
  size_t start = 0;
  while (!body.empty() && start <= body.size()) {
    size_t comma = body.find(", ", start);
    out.push_back(body.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 2;
  }
  return true;
}

// The bracketed indexes of a unit name: "cm_wire[PASSIVE]" -> {"PASSIVE"}.
std::vector<std::string> indexes(const std::string& name) {
  std::vector<std::string> out;
  size_t p = 0;
  while ((p = name.find('[', p)) != std::string::npos) {
    size_t q = name.find(']', p);
    if (q == std::string::npos) break;
    out.push_back(name.substr(p + 1, q - p - 1));
    p = q + 1;
  }
  return out;
}

std::string call_label(const Call& c) {
  std::string args;
  for (const std::string& a : c.args) args += (args.empty() ? "" : ", ") + a;
  return fmt::format("{}({})", c.verbs.empty() ? c.proc : c.verbs, args);
}

MarkKind classify(const std::string& label) {
  if (label.find("TERMINATE") != std::string::npos) return MarkKind::kTerminate;
  if (label.find("RNR NAK") != std::string::npos) return MarkKind::kRnrNak;
  if (label.find("ibv_post_recv") != std::string::npos) return MarkKind::kPostRecv;
  return MarkKind::kCall;
}

std::string esc(const std::string& s) { return xml_escape(s); }

std::string shorten(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t cut = n - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // keep UTF-8 whole
  return s.substr(0, cut) + "\u2026";
}

}  // namespace

Msc build_msc(const Trace& t) {
  Msc m;
  m.rows = static_cast<int>(t.steps.size());
  m.title = !t.title.empty()      ? t.title
            : t.property.empty() ? fmt::format("{}: witness ({}: a run to a terminal valid end)", t.spec, t.verdict)
                               : fmt::format("{}: {} violated", t.spec, t.property);
  m.violation = t.message;
  m.cycle_start = t.cycle_start;
  // Lanes: processes in the order of the final positions, then actors not listed there.
  std::vector<std::string> procs;
  for (const Position& p : t.final) procs.push_back(p.process);
  bool any_rule = false;
  for (const Step& s : t.steps) {
    if (s.is_rule) any_rule = true;
    else if (std::find(procs.begin(), procs.end(), s.actor) == procs.end()) procs.push_back(s.actor);
  }
  m.lanes = procs;
  int fabric = -1;
  if (any_rule || procs.empty()) {
    fabric = static_cast<int>(procs.size() / 2);
    m.lanes.insert(m.lanes.begin() + fabric, "fabric");
  }
  auto lane_of = [&](const std::string& actor) -> int {
    for (size_t i = 0; i < m.lanes.size(); ++i) {
      if (m.lanes[i] == actor && static_cast<int>(i) != fabric) return static_cast<int>(i);
    }
    return fabric;
  };
  // Endpoint keys: an argument value that only one process ever passes names that process (ACTIVE -> client). Only
  // the step's own call counts (the first): the library calls it makes may name the peer (a Send pushed onto the
  // wire to ACTIVE by the server's ibv_post_send).
  std::map<std::string, std::set<int>> seen;
  for (const Step& s : t.steps) {
    if (s.is_rule || s.calls.empty()) continue;
    for (const std::string& a : s.calls.front().args) seen[a].insert(lane_of(s.actor));
  }
  std::map<std::string, int> key_lane;
  for (const auto& [v, lanes] : seen) {
    if (lanes.size() == 1) key_lane[v] = *lanes.begin();
  }
  auto unit_lane = [&](const std::string& unit, int otherwise) {
    for (const std::string& i : indexes(unit)) {
      auto it = key_lane.find(i);
      if (it != key_lane.end()) return it->second;
    }
    return otherwise;
  };

  struct Pending {
    std::string value;
    int lane, row;
  };
  std::map<std::string, std::deque<Pending>> pending;
  std::vector<std::string> items, before_items;
  for (const Change& c : t.initial) {
    if (parse_queue(c.after, items)) {
      for (const std::string& v : items) pending[c.name].push_back(Pending{v, unit_lane(c.name, fabric), -1});
    }
  }
  for (size_t r = 0; r < t.steps.size(); ++r) {
    const Step& s = t.steps[r];
    m.observed.push_back(s.observed);
    int row = static_cast<int>(r);
    int lane = s.is_rule ? fabric : lane_of(s.actor);
    std::string label;
    if (s.is_rule) label = s.verbs.empty() ? s.actor : s.verbs;
    else if (!s.calls.empty()) label = call_label(s.calls.front());
    else label = s.source.text;
    MscMark mark{row, lane, classify(label), label, fmt::format("{}: {}", s.actor, s.source.text)};
    if (s.is_rule && mark.kind == MarkKind::kCall) mark.kind = MarkKind::kFabric;
    m.marks.push_back(mark);
    for (size_t k = 1; k < s.calls.size(); ++k) {
      std::string l = call_label(s.calls[k]);
      if (classify(l) == MarkKind::kPostRecv) {
        m.marks.push_back(MscMark{row, lane, MarkKind::kPostRecv, l, mark.detail});
      }
    }
    // Lanes whose QP this step puts into an error state: what they sent and this step removes is flushed.
    std::set<int> failed_lanes;
    for (const Change& c : s.changes) {
      if (c.after == "ERR" || (c.after.rfind("IBV_WC_", 0) == 0 && c.after != "IBV_WC_SUCCESS")) {
        int l = unit_lane(c.name, -1);
        if (l >= 0) failed_lanes.insert(l);
      }
    }
    for (const Change& c : s.changes) {
      if (c.after.rfind("IBV_WC_", 0) == 0) {
        m.marks.push_back(MscMark{row, unit_lane(c.name, lane),
                                  c.after == "IBV_WC_SUCCESS" ? MarkKind::kCompletion : MarkKind::kCompletionError,
                                  "WC " + c.after, c.name});
      }
      if (!parse_queue(c.before, before_items) || !parse_queue(c.after, items)) continue;
      // Pops: a prefix of the old contents is gone (FIFO); pushes: the new contents extend what remains.
      size_t popped = 0;
      while (popped < before_items.size() &&
             !std::equal(before_items.begin() + popped, before_items.end(), items.begin(),
                         items.begin() + std::min(items.size(), before_items.size() - popped))) {
        ++popped;
      }
      if (popped < before_items.size() && items.size() < before_items.size() - popped) popped = before_items.size();
      auto& q = pending[c.name];
      for (size_t k = 0; k < popped && !q.empty(); ++k) {
        Pending p = q.front();
        q.pop_front();
        int to = unit_lane(c.name, lane);
        if (p.lane != to) {
          m.arrows.push_back(MscArrow{p.lane, to, p.row, row, p.value, c.name, false, failed_lanes.count(p.lane) > 0});
        }
      }
      for (size_t k = before_items.size() - popped; k < items.size(); ++k) {
        q.push_back(Pending{items[k], lane, row});
      }
    }
  }
  for (const auto& [unit, q] : pending) {
    for (const Pending& p : q) {
      int to = unit_lane(unit, fabric);
      if (p.row >= 0 && p.lane != to) m.arrows.push_back(MscArrow{p.lane, to, p.row, m.rows, p.value, unit, true});
    }
  }
  // Parallel queues describe one message (the library keeps a Send's opcode and payload in wire_op and wire_msg, a
  // completion's status and opcode in scq_status and scq_op): arrows with the same ends, rows and fate are one arrow,
  // its labels joined in queue order ("UNSOL, IBV_WR_SEND" becomes one label). Integer parts (an MR index, a count
  // the library keeps beside a completion) are left out of a label that has a named part; `queue` lists them all.
  auto numeric = [](const std::string& v) {
    return !v.empty() && v.find_first_not_of("-0123456789") == std::string::npos;
  };
  std::vector<MscArrow> merged;
  for (MscArrow& a : m.arrows) {
    auto same = std::find_if(merged.begin(), merged.end(), [&](const MscArrow& b) {
      return b.from_lane == a.from_lane && b.to_lane == a.to_lane && b.from_row == a.from_row &&
             b.to_row == a.to_row && b.in_flight == a.in_flight && b.discarded == a.discarded;
    });
    if (same == merged.end()) {
      merged.push_back(std::move(a));
    } else if (numeric(a.label)) {
      same->queue += ", " + a.queue;
    } else if (numeric(same->label)) {
      same->label = a.label;
      same->queue += ", " + a.queue;
    } else {
      same->label += ", " + a.label;
      same->queue += ", " + a.queue;
    }
  }
  m.arrows = std::move(merged);
  m.violation_row = !t.steps.empty() && t.steps.back().failed ? m.rows - 1 : m.rows;
  return m;
}

// A rectangle of the chart, for keeping labels off the marks.
struct Box {
  int x, y, w, h;
  bool overlaps(const Box& o) const { return x < o.x + o.w && o.x < x + w && y < o.y + o.h && o.y < y + h; }
};

// `text` cut into lines of at most `width` bytes at `sep` boundaries (a piece longer than a line is shortened).
std::vector<std::string> wrap(const std::vector<std::string>& pieces, size_t width, const std::string& sep) {
  std::vector<std::string> lines;
  for (const std::string& piece : pieces) {
    std::string p = shorten(piece, width);
    if (!lines.empty() && lines.back().size() + sep.size() + p.size() <= width) {
      lines.back() += sep + p;
    } else {
      lines.push_back(p);
    }
  }
  return lines;
}

std::string to_svg(const Trace& t) {
  Msc m = build_msc(t);
  const int lane_w = 230, left = 56, row_h = 46;
  // About 7 px per character at 12 px, 9.5 at the title's 15 px bold (DejaVu Sans, the widest of the fonts named).
  bool observed = std::any_of(m.observed.begin(), m.observed.end(), [](const std::string& o) { return !o.empty(); });
  const int observed_w = observed ? 330 : 0;  // a column of the recorded calls (qpcheck conform)
  int width = left + static_cast<int>(m.lanes.size()) * lane_w + observed_w + 20;
  std::vector<std::string> params;
  for (const auto& [k, v] : t.params) params.push_back(k + "=" + v);
  std::vector<std::string> param_lines = wrap(params, static_cast<size_t>(std::max(20, (width - 20) / 7)), "  ");
  const int top = 78 + 16 * std::max(0, static_cast<int>(param_lines.size()) - 1);
  int height = top + (m.rows + 2) * row_h + 30;
  auto lx = [&](int lane) { return left + lane * lane_w + lane_w / 2; };
  auto ry = [&](int row) { return top + row * row_h + row_h / 2; };
  std::string o;
  o += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
                   "font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n", width, height, width, height);
  o += fmt::format("<title>{}</title>\n", esc(m.title));
  o += "<defs><marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" "
       "orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#1f4e9c\"/></marker>"
       "<marker id=\"loophead\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
       "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#c26a00\"/></marker></defs>\n";
  o += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width, height);
  o += fmt::format("<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                   esc(shorten(m.title, static_cast<size_t>(std::max(20, (width - 20) * 2 / 19)))));
  for (size_t i = 0; i < param_lines.size(); ++i) {
    o += fmt::format("<text x=\"10\" y=\"{}\" fill=\"#555555\">{}</text>\n", 40 + 16 * static_cast<int>(i),
                     esc(param_lines[i]));
  }
  // Lanes.
  for (size_t i = 0; i < m.lanes.size(); ++i) {
    int x = lx(static_cast<int>(i));
    bool fabric = m.lanes[i] == "fabric";
    o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"24\" rx=\"4\" fill=\"{}\" stroke=\"#333333\"/>\n",
                     x - 80, top - 30, 160, fabric ? "#eeeeee" : "#dce8f7");
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>\n", x, top - 13,
                     esc(m.lanes[i]));
    o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888888\" stroke-dasharray=\"{}\"/>\n", x,
                     top - 6, x, top + (m.rows + 1) * row_h, fabric ? "2,4" : "6,3");
  }
  // Step numbers.
  for (int r = 0; r < m.rows; ++r) {
    o += fmt::format("<text x=\"10\" y=\"{}\" fill=\"#555555\">{}</text>\n", ry(r) + 4, r + 1);
  }
  // The recorded calls beside the steps they matched.
  if (observed) {
    int x = left + static_cast<int>(m.lanes.size()) * lane_w + 10;
    o += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">observed (call log)</text>\n", x, top - 13);
    for (int r = 0; r < m.rows; ++r) {
      const std::string& text = m.observed[static_cast<size_t>(r)];
      if (text.empty()) continue;
      o += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#1e7b34\"><title>{}</title>{}</text>\n", x, ry(r) + 4,
                       esc(text), esc(shorten(text, 46)));
    }
  }
  // Marks first (as boxes), so that the arrows' labels can be kept off them.
  std::vector<Box> taken;
  std::string marks;
  std::map<std::pair<int, int>, int> stacked;  // (row, lane) -> marks drawn there so far
  for (const MscMark& k : m.marks) {
    const char* fill = "#ffffff";
    const char* stroke = "#333333";
    switch (k.kind) {
      case MarkKind::kPostRecv: fill = "#d7f5dc"; stroke = "#1e7b34"; break;
      case MarkKind::kRnrNak: fill = "#ffe1c4"; stroke = "#c25700"; break;
      case MarkKind::kTerminate: fill = "#ffd3d3"; stroke = "#b00020"; break;
      case MarkKind::kCompletion: fill = "#e6f0ff"; stroke = "#1f4e9c"; break;
      case MarkKind::kCompletionError: fill = "#ffd3d3"; stroke = "#b00020"; break;
      case MarkKind::kFabric: fill = "#f3f3f3"; stroke = "#777777"; break;
      case MarkKind::kCall: break;
    }
    int n = stacked[{k.row, k.lane}]++;
    int x = lx(k.lane), y = ry(k.row) - 10 + n * 20;
    std::string text = shorten(k.label, 27);
    int w = std::min(lane_w - 8, static_cast<int>(text.size()) * 8 + 12);
    taken.push_back(Box{x - w / 2, y - 3, w, 18});
    marks += fmt::format("<g><title>{}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"18\" rx=\"3\" fill=\"{}\" "
                         "stroke=\"{}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>\n",
                         esc(k.label + " -- " + k.detail), x - w / 2, y - 3, w, fill, stroke, x, y + 10, esc(text));
  }
  // Arrows under the marks, their labels over them: each label at the first place along its arrow (from a quarter
  // of the way) where it covers no mark and no other label.
  std::string labels;
  for (const MscArrow& a : m.arrows) {
    int x1 = lx(a.from_lane), x2 = lx(a.to_lane);
    int y1 = a.from_row < 0 ? top : ry(a.from_row), y2 = a.in_flight ? ry(a.to_row) - row_h / 4 : ry(a.to_row);
    int dir = x2 > x1 ? 1 : -1;
    if (a.discarded) {
      // Flushed on the way: the line stops short of the receiver, ending in a cross.
      int xe = x1 + (x2 - x1) * 3 / 5, ye = y1 + (y2 - y1) * 3 / 5;
      o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#999999\" stroke-width=\"1.6\" "
                       "stroke-dasharray=\"3,3\"><title>{} via {}: discarded (its sender's QP went to an error state)"
                       "</title></line>\n", x1 + dir * 8, y1, xe, ye, esc(a.label), esc(a.queue));
      // The cross goes over the marks, with the labels.
      labels += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#b00020\" font-weight=\"bold\" "
                            "font-size=\"16\">\u2717</text>\n", xe, ye + 6);
      x2 = xe;
      y2 = ye;
    } else {
      o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#1f4e9c\" stroke-width=\"1.6\"{} "
                       "marker-end=\"url(#head)\"><title>{} via {}{}</title></line>\n",
                       x1 + dir * 8, y1, x2 - dir * 8, y2, a.in_flight ? " stroke-dasharray=\"5,4\"" : "",
                       esc(a.label), esc(a.queue), a.in_flight ? " (still in flight)" : "");
    }
    std::string label = a.discarded ? a.label + " (discarded)" : a.label;
    int w = static_cast<int>(label.size()) * 8 + 10;
    Box box{0, 0, w, 16};
    for (int quarter : {25, 35, 15, 45, 55, 65, 75, 85, 5, 95}) {
      int mx = x1 + (x2 - x1) * quarter / 100, my = y1 + (y2 - y1) * quarter / 100;
      Box b{mx - w / 2, my - 12, w, 16};
      bool clear = true;
      for (const Box& k : taken) clear = clear && !b.overlaps(k);
      if (clear || quarter == 25) box = b;
      if (clear) break;
    }
    taken.push_back(box);
    labels += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"16\" fill=\"#ffffff\" opacity=\"0.85\"/>"
                          "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\" font-weight=\"bold\">{}"
                          "</text>\n", box.x, box.y, w, box.x + w / 2, box.y + 12,
                          a.discarded ? "#777777" : "#1f4e9c", esc(label));
  }
  // A lasso's cycle: a frame around its rows and an arrow in the left margin from its end back to its start.
  if (m.cycle_start >= 0 && m.cycle_start < m.rows) {
    int y1 = ry(m.cycle_start) - row_h / 2 + 3, y2 = ry(m.rows - 1) + row_h / 2 - 3;
    o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\" fill=\"none\" stroke=\"#c26a00\" "
                     "stroke-width=\"2\" stroke-dasharray=\"8,4\"/>\n", left - 8, y1, width - 20 - (left - 8), y2 - y1);
    o += fmt::format("<path d=\"M{0},{1} L{2},{1} L{2},{3} L{0},{3}\" fill=\"none\" stroke=\"#c26a00\" "
                     "stroke-width=\"2\" marker-end=\"url(#loophead)\"/>\n", left - 10, y2 - 6, left - 26, y1 + 6);
    o += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#c26a00\" font-weight=\"bold\">loop: steps {}..{} repeat "
                     "forever</text>\n", left, y1 + 13, m.cycle_start + 1, m.rows);
  }
  o += marks;
  o += labels;
  // The violation.
  if (!m.violation.empty()) {
    int y = m.violation_row >= m.rows ? ry(m.rows) : ry(m.violation_row) + row_h / 2 - 4;
    o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#b00020\" stroke-width=\"3\"/>\n", left,
                     y, width - 20, y);
    // wrapped at the chart's width (about 7.5 px per bold character), so that a long message is never cut off
    std::vector<std::string> words;
    for (size_t at = 0; at < m.violation.size();) {
      size_t sp = m.violation.find(' ', at);
      if (sp == std::string::npos) sp = m.violation.size();
      if (sp > at) words.push_back(m.violation.substr(at, sp - at));
      at = sp + 1;
    }
    std::vector<std::string> lines = wrap(words, static_cast<size_t>(std::max(20, (width - left - 40) * 2 / 15)), " ");
    for (size_t i = 0; i < lines.size(); ++i) {
      o += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#b00020\" font-weight=\"bold\">{}{}</text>\n", left,
                       y + 18 + 16 * static_cast<int>(i), i == 0 ? "\u2717 " : "  ", esc(lines[i]));
    }
  }
  o += "</svg>\n";
  return o;
}

std::string to_html(const Trace& t) {
  Msc m = build_msc(t);
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  o += fmt::format("<title>{}</title>\n", esc(m.title));
  o += "<style>body{font-family:sans-serif;margin:1.5em}td,th{padding:2px 8px;text-align:left;vertical-align:top}"
       "code{font-size:90%}.failed{color:#b00020}</style>\n</head>\n<body>\n";
  o += fmt::format("<h1>{}</h1>\n<p>{}</p>\n", esc(m.title), esc(t.message));
  o += "<p>";
  for (const auto& [k, v] : t.params) o += fmt::format("<code>{}={}</code> ", esc(k), esc(v));
  o += "</p>\n";
  std::string svg = to_svg(t);
  o += svg;
  bool observed = std::any_of(t.steps.begin(), t.steps.end(), [](const Step& s) { return !s.observed.empty(); });
  if (m.cycle_start >= 0) {
    o += m.cycle_start < m.rows
             ? fmt::format("<p>A lasso: steps {}..{} (marked &#x21bb;) repeat forever after a prefix of {} steps.</p>\n",
                           m.cycle_start + 1, m.rows, m.cycle_start)
             : "<p>A lasso: after the last step nothing is enabled and the run stays there forever.</p>\n";
  }
  o += fmt::format("<h2>Steps</h2>\n<table>\n<tr><th>#</th><th>actor</th><th>statement</th><th>source</th>{}</tr>\n",
                   observed ? "<th>observed</th>" : "");
  for (const Step& s : t.steps) {
    bool cycle = t.cycle_start >= 0 && s.index > t.cycle_start;
    o += fmt::format("<tr{}><td>{}{}</td><td>{}</td><td><code>{}</code></td><td>{}:{}</td>{}</tr>\n",
                     s.failed ? " class=\"failed\"" : "", s.index, cycle ? " &#x21bb;" : "", esc(s.actor), esc(s.source.text),
                     esc(s.source.file), s.source.line,
                     observed ? fmt::format("<td><code>{}</code></td>", esc(s.observed)) : "");
  }
  o += "</table>\n</body>\n</html>\n";
  return o;
}

std::string to_mermaid(const Trace& t) {
  Msc m = build_msc(t);
  auto text = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '#') out += "#35;";
      else if (c == ';') out += "#59;";
      else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) out += ' ';  // a line break or control
                                                                                // character would end the statement
      else out += c;
    }
    return out;
  };
  std::string o = "sequenceDiagram\n";
  for (size_t i = 0; i < m.lanes.size(); ++i) o += fmt::format("  participant L{} as {}\n", i, text(m.lanes[i]));
  bool loop = m.cycle_start >= 0 && m.cycle_start < m.rows;
  for (int r = 0; r <= m.rows; ++r) {
    if (loop && r == m.cycle_start) o += fmt::format("  loop steps {}..{} repeat forever\n", r + 1, m.rows);
    if (loop && r == m.rows) o += "  end\n";
    for (const MscArrow& a : m.arrows) {
      if (a.to_row != r) continue;
      o += fmt::format("  L{}{}L{}: {}{}\n", a.from_lane, a.discarded ? "-x" : a.in_flight ? "--)" : "->>", a.to_lane,
                       text(a.label), a.discarded ? " (discarded)" : a.in_flight ? " (in flight)" : "");
    }
    for (const MscMark& k : m.marks) {
      if (k.row == r) o += fmt::format("  Note over L{}: {}. {}\n", k.lane, r + 1, text(k.label));
    }
    if (!m.violation.empty() && r == std::min(m.violation_row, m.rows)) {
      o += fmt::format("  Note over L0,L{}: VIOLATED {}\n", m.lanes.size() - 1, text(m.violation));
    }
  }
  return o;
}

}  // namespace qpcheck::trace
