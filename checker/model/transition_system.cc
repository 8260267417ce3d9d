#include "checker/model/transition_system.h"

#include <bit>

#include <fmt/format.h>

namespace qpcheck::model {

StateLayout::StateLayout(const std::vector<SlotInfo>& slots) {
  int word = 0, used = 0;
  for (const SlotInfo& s : slots) {
    uint64_t range = static_cast<uint64_t>(s.hi - s.lo);
    int width = range == 0 ? 0 : 64 - std::countl_zero(range);
    if (used + width > 64) { ++word; used = 0; }
    fields_.push_back(Field{word, used, width, s.lo});
    used += width;
    bits_ += width;
  }
  words_ = (slots.empty() || (word == 0 && used == 0)) ? 1 : word + 1;
}

void StateLayout::pack(const std::vector<int64_t>& values, uint64_t* out) const {
  for (int w = 0; w < words_; ++w) out[w] = 0;
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    if (f.width == 0) continue;
    out[f.word] |= static_cast<uint64_t>(values[i] - f.lo) << f.shift;
  }
}

void StateLayout::unpack(const uint64_t* in, std::vector<int64_t>& values) const {
  values.resize(fields_.size());
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    if (f.width == 0) { values[i] = f.lo; continue; }
    uint64_t mask = f.width == 64 ? ~0ULL : ((1ULL << f.width) - 1);
    values[i] = static_cast<int64_t>((in[f.word] >> f.shift) & mask) + f.lo;
  }
}

ModelSystem::ModelSystem(const Model& model)
    : model_(model), layout_(model.slots), machine_(model), packed_(layout_.words()) {
  first_action_.resize(model.processes.size());
  for (size_t p = 0; p < model.processes.size(); ++p) {
    const ProcessInstance& pi = model.processes[p];
    for (size_t pc = 0; pc < pi.edges.size(); ++pc) {
      first_action_[p].push_back(static_cast<uint32_t>(actions_.size()));
      for (size_t e = 0; e < pi.edges[pc].size(); ++e) {
        actions_.push_back(Action{static_cast<int>(p), static_cast<int>(pc), static_cast<int>(e), -1, 0});
      }
    }
  }
  for (size_t r = 0; r < model.rules.size(); ++r) {
    rule_first_action_.push_back(static_cast<uint32_t>(actions_.size()));
    for (int64_t t = 0; t < model.rules[r].instances; ++t) actions_.push_back(Action{-1, 0, 0, static_cast<int>(r), t});
  }
}

std::vector<int64_t> ModelSystem::unpack(const uint64_t* state) const {
  std::vector<int64_t> v;
  layout_.unpack(state, v);
  return v;
}

std::vector<std::vector<uint64_t>> ModelSystem::initial_states() {
  std::vector<uint64_t> s(layout_.words());
  layout_.pack(model_.initial, s.data());
  return {s};
}

void ModelSystem::bind_rule_tuple(const Rule& r, int64_t tuple) {
  // Lexicographic order: the last parameter varies fastest.
  for (size_t i = r.param_types.size(); i-- > 0;) {
    const Type* t = r.param_types[i];
    machine_.bind(r.param_frames[i], t->lo + tuple % t->count());
    tuple /= t->count();
  }
}

bool ModelSystem::holds(const std::vector<const Expr*>& conds) {
  for (const Expr* c : conds) {
    if (!machine_.eval(c)) return false;
  }
  return true;
}

bool ModelSystem::run(const Action& a) {
  if (a.process >= 0) {
    const ProcessInstance& pi = model_.processes[a.process];
    const Edge& e = pi.edges[a.pc][a.edge];
    if (!holds(e.conds)) return false;
    if (e.step->guard != nullptr && !machine_.eval(e.step->guard)) return false;
    if (!machine_.exec(e.step->body)) return false;
    machine_.state[pi.pc_slot] = e.step->next_pc;
    return true;
  }
  const Rule& r = model_.rules[a.rule];
  bind_rule_tuple(r, a.tuple);
  if (r.guard != nullptr && !machine_.eval(r.guard)) return false;
  return machine_.exec(r.body);
}

int ModelSystem::successors(const uint64_t* state, SuccessorSink& sink) {
  layout_.unpack(state, base_);
  int enabled = 0;
  auto attempt = [&](uint32_t id) {
    machine_.state = base_;
    try {
      if (!run(actions_[id])) return;
    } catch (const StepFailure& f) {
      ++enabled;
      sink.failure(id, Violation{Violation::Kind::kStepFailure, f.property, f.message, f.span});
      return;
    }
    ++enabled;
    layout_.pack(machine_.state, packed_.data());
    sink.successor(id, packed_.data());
  };
  for (size_t p = 0; p < model_.processes.size(); ++p) {
    const ProcessInstance& pi = model_.processes[p];
    int pc = static_cast<int>(base_[pi.pc_slot]);
    uint32_t first = first_action_[p][pc];
    for (size_t e = 0; e < pi.edges[pc].size(); ++e) attempt(first + static_cast<uint32_t>(e));
  }
  for (size_t r = 0; r < model_.rules.size(); ++r) {
    for (int64_t t = 0; t < model_.rules[r].instances; ++t) attempt(rule_first_action_[r] + static_cast<uint32_t>(t));
  }
  return enabled;
}

std::optional<Violation> ModelSystem::check_invariants(const uint64_t* state) {
  layout_.unpack(state, machine_.state);
  for (const Invariant& inv : model_.invariants) {
    try {
      if (!machine_.eval(inv.expr)) {
        return Violation{Violation::Kind::kInvariant, inv.name, fmt::format("invariant {} is false", inv.name),
                         inv.span};
      }
    } catch (const StepFailure& f) {
      return Violation{Violation::Kind::kInvariant, "runtime_error",
                       fmt::format("invariant {} cannot be evaluated: {}", inv.name, f.message), f.span};
    }
  }
  return std::nullopt;
}

bool ModelSystem::valid_end(const uint64_t* state) {
  layout_.unpack(state, machine_.state);
  for (const ProcessInstance& pi : model_.processes) {
    int64_t pc = machine_.state[pi.pc_slot];
    if (pi.valid_end[pc]) continue;
    bool ended = false;
    for (const auto& conds : pi.end_conds[pc]) {
      try {
        if (holds(conds)) { ended = true; break; }
      } catch (const StepFailure&) {
        // reported by successors() for the same state; not an end
      }
    }
    if (!ended) return false;
  }
  return true;
}

bool ModelSystem::process_enabled(const uint64_t* state, int p) {
  layout_.unpack(state, base_);
  const ProcessInstance& pi = model_.processes.at(p);
  int pc = static_cast<int>(base_[pi.pc_slot]);
  for (size_t e = 0; e < pi.edges[pc].size(); ++e) {
    machine_.state = base_;
    try {
      if (run(actions_[first_action_[p][pc] + e])) return true;
    } catch (const StepFailure&) {
      return true;
    }
  }
  return false;
}

ActionInfo ModelSystem::describe(const uint64_t* state, uint32_t action, std::vector<CallRecord>* calls) {
  ActionInfo info;
  const Action& a = actions_.at(action);
  layout_.unpack(state, base_);
  machine_.state = base_;
  machine_.calls = calls;
  try {
    run(a);
  } catch (const StepFailure&) {
  }
  machine_.calls = nullptr;
  if (a.process >= 0) {
    const ProcessInstance& pi = model_.processes[a.process];
    info.actor = pi.name;
    info.span = pi.edges[a.pc][a.edge].step->span;
    info.pc_before = pi.pc_names[a.pc];
  } else {
    const Rule& r = model_.rules[a.rule];
    info.is_rule = true;
    info.span = r.span;
    info.verbs = r.verbs;
    std::string args;
    int64_t tuple = a.tuple;
    std::vector<std::string> vals(r.param_types.size());
    for (size_t i = r.param_types.size(); i-- > 0;) {
      const Type* t = r.param_types[i];
      vals[i] = render_scalar(t, t->lo + tuple % t->count());
      tuple /= t->count();
    }
    for (size_t i = 0; i < vals.size(); ++i) args += (i ? ", " : "") + r.param_names[i] + "=" + vals[i];
    info.actor = r.param_types.empty() ? r.name : fmt::format("{}({})", r.name, args);
  }
  return info;
}

}  // namespace qpcheck::model
