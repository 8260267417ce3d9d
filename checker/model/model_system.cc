#include "checker/model/model_system.h"

#include <algorithm>
#include <bit>
#include <type_traits>

#include <fmt/format.h>

#include "checker/model/footprints.h"

namespace qpcheck::model {

ModelSystem::ModelSystem(const Model& model, BuildLimits limits)
    : model_(model),
      layout_(model.slots),
      build_limits_(limits),
      machine_(model),
      inv_machine_(model),
      simplifier_(model),
      packed_(layout_.words()) {
  first_action_.resize(model.processes.size());
  for (size_t p = 0; p < model.processes.size(); ++p) {
    const ProcessInstance& pi = model.processes[p];
    for (size_t pc = 0; pc < pi.edges.size(); ++pc) {
      first_action_[p].push_back(static_cast<uint32_t>(sites_.size()));
      for (size_t e = 0; e < pi.edges[pc].size(); ++e) {
        sites_.push_back(tier::ActionSite{static_cast<int>(p), static_cast<int>(pc), static_cast<int>(e), -1, 0});
      }
    }
  }
  for (size_t r = 0; r < model.rules.size(); ++r) {
    rule_first_action_.push_back(static_cast<uint32_t>(sites_.size()));
    for (int64_t t = 0; t < model.rules[r].instances; ++t) {
      sites_.push_back(tier::ActionSite{-1, 0, 0, static_cast<int>(r), t});
    }
  }
  machine_.state = model.initial;
  machine_.track_writes();
  inv_machine_.state = model.initial;
  build_tiers();
  invariants_.build(model_, layout_, specialised_invariants_, specialised_);
}

void ModelSystem::build_tiers() {
  // Rules are specialised per parameter tuple unless that would make too many copies.
  constexpr int64_t kMaxSpecialised = 1 << 16;
  int64_t rule_instances = 0;
  for (const Rule& r : model_.rules) rule_instances += r.instances;
  Simplifier& s = simplifier_;
  s.set_max_bytes(build_limits_.max_bytes);
  specialised_.reserve(sites_.size());
  for (size_t id = 0; id < sites_.size(); ++id) {
    // Past the deadline (or an interrupt), or with the specialised program at its size bound, an action is kept as
    // written: a rule's parameters are then bound at run time, like those of a rule with too many tuples.
    if ((id & 63) == 0 && !s.exhausted() &&
        ((build_limits_.deadline && std::chrono::steady_clock::now() >= *build_limits_.deadline) ||
         (build_limits_.interrupt != nullptr && build_limits_.interrupt->load(std::memory_order_relaxed)))) {
      s.exhaust();
    }
    specialised_.push_back(
        tier::specialise_action(model_, layout_, s, sites_[id], !s.exhausted(), rule_instances <= kMaxSpecialised));
  }
  for (size_t p = 0; p < model_.processes.size(); ++p) {
    proc_pc_slot_.push_back(model_.processes[p].pc_slot);
    proc_range_base_.push_back(static_cast<uint32_t>(pc_range_.size()));
    for (size_t pc = 0; pc < model_.processes[p].edges.size(); ++pc) {
      uint32_t first = first_action_[p][pc];
      pc_range_.push_back(tier::Range{first, first + static_cast<uint32_t>(model_.processes[p].edges[pc].size())});
    }
  }
  const bool no_slots = model_.slots.empty();
  for (tier::SpecialisedAction& f : specialised_) {
    f.packed = tier::packable(f, model_);
    if (!no_slots) {
      for (tier::SlotCondition& c : f.conds) tier::locate(c, layout_);
      for (tier::FlatOp& o : f.ops) tier::locate(o.test, layout_);
    }
    dispatch_.add_action(f, model_, layout_);
  }
  for (tier::Range& r : pc_range_) dispatch_.build_blocks(r, specialised_, layout_);
  if (!rule_first_action_.empty()) {
    rule_range_ = tier::Range{rule_first_action_[0], static_cast<uint32_t>(sites_.size())};
    dispatch_.build_blocks(rule_range_, specialised_, layout_);
  }
  packed_actions_.build(specialised_, layout_, no_slots);
  work_.assign(layout_.words(), 0);
  memos_.build(pc_range_, rule_range_, specialised_, packed_actions_, layout_, no_slots);
  for (const Invariant& inv : model_.invariants) specialised_invariants_.push_back(s.expr(inv.expr));
  end_conds_.resize(model_.processes.size());
  for (size_t p = 0; p < model_.processes.size(); ++p) {
    for (const auto& lists : model_.processes[p].end_conds) {
      auto& out = end_conds_[p].emplace_back();
      for (const auto& conds : lists) {
        auto& l = out.emplace_back();
        for (const Expr* c : conds) l.push_back(s.expr(c));
      }
    }
  }
}

ModelSystem::MemoStats ModelSystem::memo_stats() const {
  MemoStats st;
  for (const tier::MemoisedRange& m : memos_.memos()) {
    ++st.ranges;
    st.off += m.off;
    st.entries += static_cast<int>(m.entries);
    st.uncached += static_cast<int>(m.uncached);
  }
  return st;
}

ModelSystem::DispatchStats ModelSystem::dispatch_stats() const {
  DispatchStats st;
  for (const tier::Range& r : pc_range_) st.plain_ranges += r.block_begin == r.block_end;
  st.plain_ranges += rule_range_.first < rule_range_.end && rule_range_.block_begin == rule_range_.block_end;
  for (const tier::Block& b : dispatch_.blocks()) {
    ++st.blocks;
    if (b.key_begin == b.key_end) continue;
    ++st.keyed_blocks;
    st.keys += static_cast<int>(b.key_end - b.key_begin);
    uint64_t keyed = 0;
    for (uint32_t k = b.key_begin; k < b.key_end; ++k) keyed |= dispatch_.keyed_actions(k);
    st.keyed_actions += std::popcount(keyed);
  }
  return st;
}

bool ModelSystem::conds_hold(const tier::SpecialisedAction& f) {
  if (f.never) return false;
  if (f.rule >= 0) bind_rule_tuple(model_.rules[f.rule], f.tuple);
  const int64_t* st = machine_.state.data();
  for (size_t i = f.prefiltered ? 1 : 0, n = f.conds.size(); i < n; ++i) {
    const tier::SlotCondition& t = f.conds[i];
    if (!(t.kind == tier::SlotCondition::Kind::kGeneral ? machine_.eval(t.e) != 0 : tier::holds(t, st))) return false;
  }
  return true;
}

TransitionSystem::Independence ModelSystem::independence() const {
  return tier::independence_of(model_, specialised_, specialised_invariants_);
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

bool ModelSystem::holds(const std::vector<const Expr*>& conds) { return holds(machine_, conds); }

bool ModelSystem::holds(Machine& m, const std::vector<const Expr*>& conds) {
  for (const Expr* c : conds) {
    if (!m.eval(c)) return false;
  }
  return true;
}

bool ModelSystem::run(const tier::ActionSite& a) {
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

void ModelSystem::attempt_machine(uint32_t id, const uint64_t* src, SuccessorSink& sink, int& enabled,
                                  bool& unpacked) {
  const tier::SpecialisedAction& f = specialised_[id];
  const int words = layout_.words();
  memos_.spoil_record();  // not memoised: the machine may report a failure, and its writes are not tracked here
  if (!unpacked) {
    layout_.unpack(src, base_);
    machine_.state = base_;
    unpacked = true;
  }
  auto undo = [&]() {
    for (int32_t slot : machine_.written()) machine_.state[slot] = base_[slot];
  };
  bool ok;
  try {
    if (!conds_hold(f)) return;  // conditions only read: nothing to undo
    if (f.constant) {
      ++enabled;
      for (int w = 0; w < words; ++w) packed_[w] = src[w];
      for (const tier::SpecialisedAction::Patch& p : f.patch) packed_[p.word] = (packed_[p.word] & ~p.clear) | p.bits;
      sink.successor(id, packed_.data());
      return;
    }
    machine_.begin_step();
    ok = tier::run_flat_ops(f.ops, machine_);
    if (ok && f.pc_slot >= 0) machine_.set(f.pc_slot, f.next_pc);
  } catch (const StepFailure& e) {
    undo();
    ++enabled;
    sink.failure(id, step_failure(e));
    return;
  } catch (...) {
    undo();
    throw;
  }
  if (!ok) { undo(); return; }
  ++enabled;
  for (int w = 0; w < words; ++w) packed_[w] = src[w];
  for (int32_t slot : machine_.written()) layout_.set(packed_.data(), slot, machine_.state[slot]);
  undo();
  sink.successor(id, packed_.data());
}

int ModelSystem::successors(const uint64_t* state, SuccessorSink& sink) {
  // Packed actions (quick tests, direct ops) patch work_, a copy of the source, and restore the words they wrote
  // after the sink has seen the successor. The others (and a packed action's error path) run on the machine
  // (attempt_machine): the source is unpacked into machine_.state once, when the first such action is met.
  // `state` may live in the caller's store, which can move while the sink inserts: keep a copy.
  const int words = layout_.words();
  source_.assign(state, state + words);
  const uint64_t* src = source_.data();
  uint64_t* work = work_.data();
  for (int w = 0; w < words; ++w) work[w] = src[w];
  bool unpacked = false;
  int enabled = 0;
  auto restore = [&](const tier::PackedAction& h) __attribute__((always_inline)) {
    if (packed_actions_.restore_all()) [[unlikely]] {
      for (int w = 0; w < words; ++w) work[w] = src[w];
      return;
    }
    for (uint64_t m = h.words; m != 0; m &= m - 1) {
      const int w = std::countr_zero(m);
      work[w] = src[w];
    }
  };
  // `rec` (std::true_type or std::false_type): record what the action reports for the memo of its range.
  auto attempt = [&](uint32_t id, auto rec) __attribute__((always_inline)) {
    const tier::PackedAction& h = packed_actions_.action(id);
    if (h.kind == tier::PackedAction::Kind::kMachine) [[unlikely]] {
      return attempt_machine(id, src, sink, enabled, unpacked);
    }
    for (uint32_t t = h.test_begin; t < h.test_end; ++t) {
      if (!packed_actions_.test(packed_actions_.test_at(t), src, layout_)) return;
    }
    if (h.kind == tier::PackedAction::Kind::kPatch) {
      for (uint32_t i = h.op_begin; i < h.op_end; ++i) {
        const tier::PackedOp& o = packed_actions_.op_at(i);
        work[o.word] = (work[o.word] & ~o.clear) | o.bits;
      }
      ++enabled;
      if constexpr (decltype(rec)::value) memos_.record(id, work, src);
      sink.successor(id, work);
      restore(h);
      return;
    }
    const tier::PackedRun r = packed_actions_.run(h, work, layout_);
    if (r == tier::PackedRun::kDone) {
      ++enabled;
      if constexpr (decltype(rec)::value) memos_.record(id, work, src);
      sink.successor(id, work);
      restore(h);
      return;
    }
    restore(h);
    // kSlow: an error path; the machine reproduces the exact failure.
    if (r == tier::PackedRun::kSlow) attempt_machine(id, src, sink, enabled, unpacked);
  };
  // The prefilter rejects most disabled actions with one test, before any call; keyed blocks find the candidates
  // with one table lookup per key.
  auto run_range = [&](const tier::Range& r, auto rec) __attribute__((always_inline)) {
    if (r.block_begin == r.block_end) {
      for (uint32_t id = r.first; id < r.end; ++id) {
        if (dispatch_.prefilter(id, src, layout_)) attempt(id, rec);
      }
      return;
    }
    for (uint32_t k = r.block_begin; k < r.block_end; ++k) {
      const tier::Block& b = dispatch_.block(k);
      if (b.key_begin == b.key_end) {
        for (uint32_t id = b.first, end = b.first + b.count; id < end; ++id) {
          if (dispatch_.prefilter(id, src, layout_)) attempt(id, rec);
        }
        continue;
      }
      for (uint64_t c = dispatch_.candidates(b, src); c != 0; c &= c - 1) {
        const int i = std::countr_zero(c);
        if (((b.test >> i) & 1) && !dispatch_.prefilter(b.first + i, src, layout_)) continue;
        attempt(b.first + i, rec);
      }
    }
  };
  // A memoised range: look its key up; a cached entry reports the recorded successors (patching work and restoring
  // it as above), an uncached one runs the range, a new key runs it and records what it reports.
  uint64_t key[tier::MemoisedRanges::kMaxWords];
  auto replay = [&](uint32_t id, const uint64_t* d, uint32_t diffs) __attribute__((always_inline)) {
    for (uint32_t k = 0; k < diffs; ++k) work[d[2 * k]] ^= d[2 * k + 1];
    ++enabled;
    sink.successor(id, work);
    for (uint32_t k = 0; k < diffs; ++k) work[d[2 * k]] = src[d[2 * k]];
  };
  auto memo_visit = [&](const tier::Range& r) __attribute__((always_inline)) {
    tier::MemoisedRange& m = memos_.memo(r.memo);
    tier::MemoLookup found;
    switch (m.nk) {
      case 1: found = memos_.lookup<1>(m, src, key, replay); break;
      case 2: found = memos_.lookup<2>(m, src, key, replay); break;
      case 3: found = memos_.lookup<3>(m, src, key, replay); break;
      case 4: found = memos_.lookup<4>(m, src, key, replay); break;
      default: found = memos_.lookup<0>(m, src, key, replay); break;
    }
    if (found == tier::MemoLookup::kHit) return;
    if (found == tier::MemoLookup::kUncached) return run_range(r, std::false_type{});
    memos_.begin_record(m);
    try {
      run_range(r, std::true_type{});
    } catch (...) {
      memos_.abort_record();
      throw;
    }
    memos_.end_record(key);
  };
  auto visit = [&](const tier::Range& r) __attribute__((always_inline)) {
    if (r.memo >= 0 && !memos_.memo(r.memo).off) return memo_visit(r);
    run_range(r, std::false_type{});
  };
  for (size_t p = 0; p < proc_pc_slot_.size(); ++p) {
    int64_t pc = layout_.get(src, proc_pc_slot_[p]);
    visit(pc_range_[proc_range_base_[p] + static_cast<uint32_t>(pc)]);
  }
  visit(rule_range_);
  return enabled;
}

int ModelSystem::reference_successors(const uint64_t* state, SuccessorSink& sink) {
  std::vector<int64_t> base;
  layout_.unpack(state, base);
  std::vector<uint64_t> packed(layout_.words());
  int enabled = 0;
  auto attempt = [&](uint32_t id) {
    machine_.state = base;
    bool ok;
    try {
      ok = run(sites_[id]);
    } catch (const StepFailure& f) {
      ++enabled;
      sink.failure(id, step_failure(f));
      return;
    }
    if (!ok) return;
    ++enabled;
    layout_.pack(machine_.state, packed.data());
    sink.successor(id, packed.data());
  };
  for (size_t p = 0; p < model_.processes.size(); ++p) {
    int pc = static_cast<int>(base[model_.processes[p].pc_slot]);
    for (size_t e = 0; e < model_.processes[p].edges[pc].size(); ++e) attempt(first_action_[p][pc] + e);
  }
  for (size_t r = 0; r < model_.rules.size(); ++r) {
    for (int64_t t = 0; t < model_.rules[r].instances; ++t) attempt(rule_first_action_[r] + static_cast<uint32_t>(t));
  }
  machine_.state = base;
  return enabled;
}

std::optional<Violation> ModelSystem::check_invariants(const uint64_t* state) {
  if (model_.invariants.empty()) return std::nullopt;
  layout_.unpack(state, inv_machine_.state);
  for (size_t i = 0; i < model_.invariants.size(); ++i) {
    const Invariant& inv = model_.invariants[i];
    try {
      if (!inv_machine_.eval(specialised_invariants_[i])) {
        return invariant_false(inv);
      }
    } catch (const StepFailure& f) {
      return invariant_unevaluable(inv, f);
    }
  }
  return std::nullopt;
}

bool ModelSystem::holds_in(const Expr* e, const uint64_t* state) {
  layout_.unpack(state, inv_machine_.state);
  return inv_machine_.eval(e) != 0;
}

std::optional<Violation> ModelSystem::check_conjunct(int i, const Expr* conj) {
  const Invariant& inv = model_.invariants[i];
  try {
    if (!inv_machine_.eval(conj)) {
      return invariant_false(inv);
    }
  } catch (const StepFailure& f) {
    return invariant_unevaluable(inv, f);
  }
  return std::nullopt;
}

std::optional<Violation> ModelSystem::check_invariants_after(uint32_t action, const uint64_t* state) {
  if (model_.invariants.empty()) return std::nullopt;
  if (invariants_.check_all(action)) return check_invariants(state);
  // Only the slots the selected conjuncts read are unpacked; the others keep stale values nothing reads.
  int64_t* st = inv_machine_.state.data();
  for (uint32_t k = invariants_.slot_begin(action), e = invariants_.slot_begin(action + 1); k < e; ++k) {
    st[invariants_.slot(k)] = layout_.get(state, static_cast<int>(invariants_.slot(k)));
  }
  for (uint32_t k = invariants_.conj_begin(action), e = invariants_.conj_begin(action + 1); k < e; ++k) {
    const uint32_t ci = invariants_.conjunct_id(k);
    const tier::Conjunct& c = invariants_.conjunct(ci);
    const tier::QuickConjunct& q = invariants_.quick(ci);
    if (q.root >= 0) {
      if (invariants_.holds(q, state, layout_)) continue;
      const Invariant& inv = model_.invariants[c.invariant];
      return invariant_false(inv);
    }
    if (auto v = check_conjunct(c.invariant, c.e)) return v;
  }
  return std::nullopt;
}

bool ModelSystem::valid_end(const uint64_t* state) {
  layout_.unpack(state, inv_machine_.state);
  for (size_t p = 0; p < model_.processes.size(); ++p) {
    const ProcessInstance& pi = model_.processes[p];
    int64_t pc = inv_machine_.state[pi.pc_slot];
    if (pi.valid_end[pc]) continue;
    bool ended = false;
    for (const auto& conds : end_conds_[p][pc]) {
      try {
        if (holds(inv_machine_, conds)) { ended = true; break; }
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
      if (run(sites_[first_action_[p][pc] + e])) return true;
    } catch (const StepFailure&) {
      return true;
    }
  }
  return false;
}

ActionInfo ModelSystem::describe(const uint64_t* state, uint32_t action, std::vector<CallRecord>* calls) {
  ActionInfo info;
  const tier::ActionSite& a = sites_.at(action);
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
