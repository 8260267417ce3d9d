#include "checker/explore/random_walk.h"

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

void extend(model::TransitionSystem& system, model::Path& path, size_t max_length, size_t limit,
            std::vector<model::Path>& out, bool& complete) {
  if (limit && out.size() >= limit) {
    complete = false;
    return;
  }
  std::vector<std::pair<uint32_t, State>> moves;
  if (path.actions.size() < max_length) moves = safe_moves(system, path.states.back());
  if (moves.empty()) {
    out.push_back(path);
    return;
  }
  for (auto& [action, next] : moves) {
    path.actions.push_back(action);
    path.states.push_back(std::move(next));
    extend(system, path, max_length, limit, out, complete);
    path.actions.pop_back();
    path.states.pop_back();
    if (!complete) return;
  }
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

std::vector<model::Path> all_schedules(model::TransitionSystem& system, size_t max_length, size_t limit,
                                       bool* complete) {
  std::vector<model::Path> out;
  bool done = true;
  model::Path path;
  path.states.push_back(system.initial_states().at(0));
  extend(system, path, max_length, limit, out, done);
  if (complete) *complete = done;
  return out;
}

}  // namespace qpcheck::explore
