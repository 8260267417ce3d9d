#include "checker/trace/build.h"

#include <fmt/format.h>


namespace qpcheck::trace {

namespace {

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

std::string render_value(const model::Model& m, const model::Unit& u, const std::vector<int64_t>& v) {
  if (u.process >= 0) return m.processes[u.process].pc_names.at(v[u.first_slot]);
  if (u.type->kind != model::TypeKind::kQueue) return model::render_scalar(u.type, v[u.first_slot]);
  const model::Type* e = u.type->elem;
  std::string out = "[";
  int64_t n = v[u.first_slot];
  for (int64_t i = 0; i < n; ++i) {
    int64_t at = u.first_slot + 1 + i * e->slots;
    if (i) out += ", ";
    if (e->scalar()) {
      out += model::render_scalar(e, v[at]);
    } else {
      // composite element: its scalar leaves in order
      out += "{";
      for (int k = 0; k < e->slots; ++k) out += (k ? " " : "") + std::to_string(v[at + k]);
      out += "}";
    }
  }
  return out + "]";
}

}  // namespace

ReplayStep bind_replay(const model::Proc& proc, const model::ReplayOp& op, const std::vector<int64_t>& args) {
  ReplayStep r;
  r.op = op.op;
  for (size_t i = 0; i < op.args.size(); ++i) {
    const model::Expr* a = op.args[i];
    int64_t v = a->value;
    if (a->op == model::Op::kFrame) {
      for (size_t k = 0; k < proc.param_frames.size(); ++k) {
        if (proc.param_frames[k] == a->value) v = args.at(k);
      }
    }
    std::string text = model::render_scalar(a->type, v);
    if (i < op.prefixes.size()) text = op.prefixes[i] + text;
    r.args.push_back(std::move(text));
  }
  return r;
}

SourceRef source_ref(const lang::SourceManager& sources, const lang::Span& span) {
  SourceRef r;
  if (span.file < 0) return r;
  r.file = sources.file(span.file).path;
  auto [line, col] = sources.line_col(span);
  r.line = line;
  r.col = col;
  r.text = trim(sources.line_text(span));
  return r;
}

Stats trace_stats(const model::SearchStats& stats, int state_bits) {
  Stats out;
  out.states = stats.states;
  out.transitions = stats.transitions;
  out.depth = stats.depth;
  out.seconds = stats.seconds;
  out.store_bytes = stats.store_bytes;
  out.peak_rss_bytes = stats.peak_rss_bytes;
  out.state_bits = state_bits;
  return out;
}

Trace build_trace(model::ModelSystem& system, const model::CheckResult& result, const std::string& spec,
                  const std::string& strategy) {
  const model::Model& m = system.model();
  const lang::SourceManager& sources = *m.sources;
  Trace t;
  t.spec = spec;
  t.params = m.params;
  t.strategy = strategy;
  t.limit = result.limit;
  t.stats = trace_stats(result.stats, system.layout().bits());
  for (const model::PropertyChoice& d : m.disabled) {
    t.not_checked.push_back(PropertyNote{d.name, "disable", source_ref(sources, d.by), d.reason});
  }
  for (const model::Override& o : m.overrides) {
    t.overrides.push_back(OverrideNote{o.kind, o.name, source_ref(sources, o.original), source_ref(sources, o.by)});
  }
  switch (result.outcome) {
    case model::Outcome::kHolds:
      t.verdict = "holds";
      if (result.path.states.empty()) return t;  // a witness schedule (verify --witness) is rendered below
      break;
    case model::Outcome::kInconclusive:
      t.verdict = "inconclusive";
      return t;
    case model::Outcome::kViolated:
      t.verdict = "violated";
      break;
  }
  if (result.violation) {
    const model::Violation& v = *result.violation;
    t.property = v.property;
    t.message = v.message;
    t.kind = v.property == "runtime_error"                  ? "runtime_error"
             : v.kind == model::Violation::Kind::kInvariant ? "invariant"
             : v.kind == model::Violation::Kind::kDeadlock  ? "deadlock"
                                                            : "fail";
    t.property_source = source_ref(sources, v.span);
  }
  t.shortest = result.shortest;
  if (result.cycle_start) t.cycle_start = static_cast<int>(*result.cycle_start);

  const auto& path = result.path;
  std::vector<int64_t> before = system.unpack(path.states.at(0).data());
  for (const model::Unit& u : m.units) {
    std::string val = render_value(m, u, before);
    t.initial.push_back(Change{u.name, val, val});
  }
  for (size_t i = 0; i < path.actions.size(); ++i) {
    Step s;
    s.index = static_cast<int>(i) + 1;
    std::vector<model::CallRecord> calls;
    model::ActionInfo info = system.describe(path.states[i].data(), path.actions[i], &calls);
    s.actor = info.actor;
    s.is_rule = info.is_rule;
    s.source = source_ref(sources, info.span);
    // An unlabelled program counter is named after the statement there ("line 12"); when control statements (an
    // `if`, a `while`) fold into the step, that is their line, not the step's: a step is labelled with the line of
    // the statement it executes.
    s.at = info.pc_before.rfind("line ", 0) == 0 && !s.source.file.empty() ? fmt::format("line {}", s.source.line)
                                                                            : info.pc_before;
    s.verbs = info.verbs;
    for (const model::CallRecord& c : calls) {
      Call call{c.proc->name, {}, c.proc->verbs};
      for (size_t k = 0; k < c.args.size(); ++k) call.args.push_back(model::render_scalar(c.proc->param_types[k], c.args[k]));
      for (const model::ReplayOp& op : c.proc->replay) call.replay.push_back(bind_replay(*c.proc, op, c.args));
      if (!call.replay.empty()) call.replay.back().refused = c.refused;
      s.calls.push_back(std::move(call));
    }
    if (i + 1 < path.states.size()) {
      std::vector<int64_t> after = system.unpack(path.states[i + 1].data());
      for (const model::Unit& u : m.units) {
        std::string a = render_value(m, u, before), b = render_value(m, u, after);
        if (a != b) s.changes.push_back(Change{u.name, a, b});
      }
      before = std::move(after);
    } else {
      s.failed = true;
    }
    t.steps.push_back(std::move(s));
  }
  const uint64_t* last = path.states.back().data();
  std::vector<int64_t> values = system.unpack(last);
  for (size_t p = 0; p < m.processes.size(); ++p) {
    const model::ProcessInstance& pi = m.processes[p];
    int64_t pc = values[pi.pc_slot];
    Position pos;
    pos.process = pi.name;
    pos.at = pi.pc_names[pc];
    if (pos.at != "end") pos.source = source_ref(sources, pi.pc_spans[pc]);
    pos.blocked = !system.process_enabled(last, static_cast<int>(p));
    t.final.push_back(std::move(pos));
  }
  return t;
}

}  // namespace qpcheck::trace
