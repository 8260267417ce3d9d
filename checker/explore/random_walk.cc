#include "checker/explore/random_walk.h"

#include <functional>
#include <random>

namespace qpcheck::explore {

namespace {

using State = std::vector<uint64_t>;

struct Moves : model::SuccessorSink {
  model::TransitionSystem* system = nullptr;
  std::vector<std::pair<uint32_t, State>> safe;
  void successor(uint32_t action, const uint64_t* state) override {
    if (system->check_invariants(state)) return;  // a violation is a counterexample, not a schedule
    safe.emplace_back(action, State(state, state + system->state_words()));
  }
  void failure(uint32_t, const model::Violation&) override {}
};

std::vector<std::pair<uint32_t, State>> safe_moves(model::TransitionSystem& system, const State& s) {
  Moves m;
  m.system = &system;
  system.successors(s.data(), m);
  return std::move(m.safe);
}

// Depth-first; false once `visit` asked to stop.
bool extend(model::TransitionSystem& system, model::Path& path, size_t max_length,
            const std::function<bool(const model::Path&)>& visit) {
  std::vector<std::pair<uint32_t, State>> moves;
  if (path.actions.size() < max_length) moves = safe_moves(system, path.states.back());
  if (moves.empty()) return visit(path);
  for (auto& [action, next] : moves) {
    path.actions.push_back(action);
    path.states.push_back(std::move(next));
    bool go_on = extend(system, path, max_length, visit);
    path.actions.pop_back();
    path.states.pop_back();
    if (!go_on) return false;
  }
  return true;
}

}  // namespace

model::Path random_walk(model::TransitionSystem& system, const WalkOptions& options) {
  std::mt19937_64 rng(options.seed);
  model::Path path;
  path.states.push_back(system.initial_states().at(0));
  while (path.actions.size() < options.max_length) {
    std::vector<std::pair<uint32_t, State>> moves = safe_moves(system, path.states.back());
    if (moves.empty()) break;
    std::uniform_int_distribution<size_t> pick(0, moves.size() - 1);
    auto& [action, next] = moves[pick(rng)];
    path.actions.push_back(action);
    path.states.push_back(std::move(next));
  }
  return path;
}

bool for_each_schedule(model::TransitionSystem& system, size_t max_length,
                       const std::function<bool(const model::Path&)>& visit) {
  model::Path path;
  path.states.push_back(system.initial_states().at(0));
  return extend(system, path, max_length, visit);
}

std::vector<model::Path> all_schedules(model::TransitionSystem& system, size_t max_length, size_t limit,
                                       bool* complete) {
  std::vector<model::Path> out;
  bool done = true;
  for_each_schedule(system, max_length, [&](const model::Path& p) {
    if (limit && out.size() >= limit) {
      done = false;
      return false;
    }
    out.push_back(p);
    return true;
  });
  if (complete) *complete = done;
  return out;
}

}  // namespace qpcheck::explore
