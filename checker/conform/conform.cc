#include "checker/conform/conform.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "checker/model/eval.h"
#include "checker/trace/build.h"

namespace qpcheck::conform {

namespace {

using State = std::vector<uint64_t>;

struct StateHash {
  size_t operator()(const State& s) const {
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint64_t w : s) h = (h ^ w) * 0xff51afd7ed558ccdull + (h >> 29);
    return static_cast<size_t>(h);
  }
};

// A model state reached with a prefix of the observations: its predecessor and the action from it.
struct Node {
  State state;
  int parent = -1;
  uint32_t action = 0;
  int matched = -1;  // the first observation the action matched, or -1 (hidden)
};

std::string_view without_index0(std::string_view s) {
  if (s.size() > 3 && s.substr(s.size() - 3) == "[0]") s.remove_suffix(3);
  return s;
}

bool matches_form(const trace::ReplayStep& step, const std::string& op, const std::vector<std::string>& args) {
  if (step.op != op || args.size() < step.args.size()) return false;
  for (size_t i = 0; i < step.args.size(); ++i) {
    if (args[i] != "*" && without_index0(step.args[i]) != without_index0(args[i])) return false;
  }
  return true;
}

bool matches(const trace::ReplayStep& step, const Observation& o) {
  if (matches_form(step, o.op, o.args)) return true;
  for (const Observation::Form& f : o.alternatives) {
    if (matches_form(step, f.op, f.args)) return true;
  }
  return false;
}

// Every enabled action of a state: its successor, or the violation of its failing step.
struct Collect : model::SuccessorSink {
  struct Out {
    uint32_t action;
    State next;
    std::optional<model::Violation> failure;
  };
  int words = 0;
  std::vector<Out> out;
  void successor(uint32_t action, const uint64_t* state) override {
    out.push_back(Out{action, State(state, state + words), std::nullopt});
  }
  void failure(uint32_t action, const model::Violation& v) override { out.push_back(Out{action, {}, v}); }
};

class Checker {
 public:
  Checker(model::ModelSystem& system, const lang::ReplayVocabulary& vocabulary, const std::vector<Observation>& obs,
          const ConformLimits& limits)
      : system_(system), vocabulary_(vocabulary), obs_(obs), limits_(limits), layers_(obs.size() + 1) {}

  ConformResult run(bool require_end) {
    auto start = std::chrono::steady_clock::now();
    ConformResult r;
    try {
      for (const State& s : system_.initial_states()) add(0, Node{s, -1, 0, -1});
      size_t last = 0;  // the last layer that was reached
      for (size_t k = 0; k <= obs_.size(); ++k) {
        if (layers_[k].nodes.empty()) continue;
        last = k;
        close(k);
      }
      finish(r, last, require_end);
    } catch (const Limit& l) {
      r.verdict = ConformResult::Verdict::kInconclusive;
      r.limit = l.what;
      r.event = deepest();
      path_to(r, best_node(r.event));
    } catch (const model::DeadlineExceeded&) {
      r.verdict = ConformResult::Verdict::kInconclusive;
      r.limit = limits_.interrupt && limits_.interrupt->load() ? "interrupted" : "time-limit";
      r.event = deepest();
      path_to(r, best_node(r.event));
    }
    r.states = nodes_.size();
    for (const Layer& l : layers_) r.widest = std::max<uint64_t>(r.widest, l.nodes.size());
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }

 private:
  struct Limit {
    std::string what;
  };
  // The states consistent with observations [0, k): their nodes, in the order reached (BFS: the first node of a
  // state has a shortest run among those through this layer's predecessors).
  struct Layer {
    std::vector<int> nodes;
    std::unordered_map<State, int, StateHash> seen;
  };

  void check_limits() {
    if (limits_.max_states && nodes_.size() >= limits_.max_states) throw Limit{"max-states"};
    if ((nodes_.size() & 1023) == 0) {
      if (limits_.deadline && std::chrono::steady_clock::now() > *limits_.deadline) throw Limit{"time-limit"};
      if (limits_.interrupt && limits_.interrupt->load()) throw Limit{"interrupted"};
    }
  }

  void add(size_t k, Node n) {
    Layer& l = layers_[k];
    if (l.seen.count(n.state)) return;
    check_limits();
    int id = static_cast<int>(nodes_.size());
    l.seen.emplace(n.state, id);
    nodes_.push_back(std::move(n));
    l.nodes.push_back(id);
  }

  // The host operations `action` makes from `state`, bound, in order.
  std::vector<trace::ReplayStep> host_ops(const State& state, uint32_t action) {
    std::vector<model::CallRecord> calls;
    system_.describe(state.data(), action, &calls);
    std::vector<trace::ReplayStep> ops;
    for (const model::CallRecord& c : calls) {
      size_t before = ops.size();
      for (const model::ReplayOp& op : c.proc->replay) {
        const lang::ReplayOpSpec* spec = vocabulary_.find(op.op, static_cast<int>(op.args.size()));
        if (spec && spec->host) ops.push_back(trace::bind_replay(*c.proc, op, c.args));
      }
      // A refused call: its last host operation fails on the device.
      if (!c.refused.empty() && ops.size() > before) ops.back().refused = c.refused;
    }
    return ops;
  }

  // Closes layer k under hidden steps (BFS over the layer's own nodes as they are added) and moves every step that
  // matches observations k, k+1, ... to the layer after them.
  void close(size_t k) {
    Layer& layer = layers_[k];
    for (size_t i = 0; i < layer.nodes.size(); ++i) {
      int id = layer.nodes[i];
      Collect sink;
      sink.words = system_.state_words();
      system_.successors(nodes_[id].state.data(), sink);
      for (Collect::Out& o : sink.out) {
        std::vector<trace::ReplayStep> ops = host_ops(nodes_[id].state, o.action);
        if (ops.empty()) {
          if (!o.failure) add(k, Node{std::move(o.next), id, o.action, -1});
          continue;
        }
        bool fits = k + ops.size() <= obs_.size();
        // A call that failed matches an operation the spec refuses (`refuse`), or the last call of a step that fails
        // a property; that call may also have succeeded (a contract the device does not enforce: rdma_destroy_id
        // with the QP still there). A refused operation matches only a call that failed.
        auto outcome = [&](const trace::ReplayStep& op, const Observation& ob, bool last) {
          if (!op.refused.empty()) return ob.failed;
          return !ob.failed || (o.failure.has_value() && last);
        };
        for (size_t j = 0; fits && j < ops.size(); ++j) {
          fits = matches(ops[j], obs_[k + j]) && outcome(ops[j], obs_[k + j], j + 1 == ops.size());
        }
        // A log cut off inside this step: its first operations are the log's last observations.
        if (!fits && !cut_ && k < obs_.size() && k + ops.size() > obs_.size()) {
          bool head = true;
          for (size_t j = 0; head && k + j < obs_.size(); ++j) {
            head = matches(ops[j], obs_[k + j]) && outcome(ops[j], obs_[k + j], false);
          }
          if (head) cut_ = Cut{id, o.action, obs_.size() - k, ops.size()};
        }
        if (fits && o.failure) {
          // The program made the call the spec forbids, if no state of the layer makes it legally (finish): the
          // first such step for each observation.
          size_t at = k + ops.size() - 1;
          if (!violations_.count(at)) violations_.emplace(at, Violated{*o.failure, id, o.action});
          continue;
        }
        if (fits) add(k + ops.size(), Node{std::move(o.next), id, o.action, static_cast<int>(k)});
      }
      // Layer vectors may grow while iterating (hidden steps): `layer` stays valid, layers_ is not resized.
      (void)layer;
    }
  }

  // The deepest layer reached.
  size_t deepest() const {
    for (size_t k = layers_.size(); k-- > 0;) {
      if (!layers_[k].nodes.empty()) return k;
    }
    return 0;
  }

  int best_node(size_t k) const { return layers_[k].nodes.empty() ? -1 : layers_[k].nodes.front(); }

  void path_to(ConformResult& r, int id, std::optional<uint32_t> last_action = std::nullopt) {
    std::vector<int> chain;
    for (int n = id; n >= 0; n = nodes_[n].parent) chain.push_back(n);
    std::reverse(chain.begin(), chain.end());
    r.path = {};
    r.matched.clear();
    for (size_t i = 0; i < chain.size(); ++i) {
      const Node& n = nodes_[chain[i]];
      if (i > 0) {
        r.path.actions.push_back(n.action);
        r.matched.push_back(n.matched);
      }
      r.path.states.push_back(n.state);
    }
    if (last_action) {
      r.path.actions.push_back(*last_action);
      r.matched.push_back(static_cast<int>(r.event));
    }
  }

  // What the spec allowed at layer k: the host steps enabled in its states (the first of each distinct kind).
  std::vector<Allowed> allowed_at(size_t k) {
    std::vector<Allowed> out;
    std::set<std::string> seen;
    for (int id : layers_[k].nodes) {
      Collect sink;
      sink.words = system_.state_words();
      system_.successors(nodes_[id].state.data(), sink);
      for (const Collect::Out& o : sink.out) {
        std::vector<trace::ReplayStep> ops = host_ops(nodes_[id].state, o.action);
        if (ops.empty()) continue;
        model::ActionInfo info = system_.describe(nodes_[id].state.data(), o.action, nullptr);
        std::string key = info.actor;
        for (const trace::ReplayStep& s : ops) {
          key += "|" + s.op;
          for (const std::string& a : s.args) key += "," + a;
          if (!s.refused.empty()) key += ",refused";
        }
        if (o.failure) key += "|fails " + o.failure->property;
        if (!seen.insert(key).second) continue;
        out.push_back(Allowed{info.actor, ops, info.span, o.failure ? o.failure->property : ""});
        if (out.size() >= 32) return out;
      }
    }
    return out;
  }

  void finish(ConformResult& r, size_t last, bool require_end) {
    // A violation is the verdict only where the legal runs stop: at the observation that no state matched legally.
    // (A state in which the call fails a property, beside others in which it is legal, is one way the spec could have
    // gone, not what the program did: a process killed before the call, say.)
    auto v = violations_.find(last);
    if (last < obs_.size() && v != violations_.end()) {
      violation_ = v->second.violation;
      violation_event_ = v->first;
      violation_node_ = v->second.node;
      violation_action_ = v->second.action;
    }
    if (!violation_ && last < obs_.size() && !require_end && cut_) {
      r.verdict = ConformResult::Verdict::kPrefix;
      r.event = obs_.size();
      r.cut_ops = cut_->have;
      r.step_ops = cut_->of;
      path_to(r, cut_->node);
      r.path.actions.push_back(cut_->action);
      r.matched.push_back(static_cast<int>(obs_.size() - cut_->have));
      return;
    }
    if (violation_) {
      r.verdict = ConformResult::Verdict::kViolates;
      r.event = violation_event_;
      r.violation = violation_;
      r.refused = obs_[violation_event_].failed;
      path_to(r, violation_node_, violation_action_);
      return;
    }
    if (last < obs_.size()) {
      r.verdict = ConformResult::Verdict::kDeviates;
      r.event = last;
      r.allowed = allowed_at(last);
      path_to(r, best_node(last));
      return;
    }
    r.event = obs_.size();
    if (!require_end) {
      r.verdict = ConformResult::Verdict::kConforms;
      path_to(r, best_node(last));
      return;
    }
    for (int id : layers_[last].nodes) {
      if (system_.valid_end(nodes_[id].state.data())) {
        r.verdict = ConformResult::Verdict::kConforms;
        path_to(r, id);
        return;
      }
    }
    r.verdict = ConformResult::Verdict::kDeviates;
    r.allowed = allowed_at(last);
    path_to(r, best_node(last));
  }

  model::ModelSystem& system_;
  const lang::ReplayVocabulary& vocabulary_;
  const std::vector<Observation>& obs_;
  ConformLimits limits_;
  std::deque<Node> nodes_;
  std::vector<Layer> layers_;
  // The first step found whose first operations match the log's last observations (a log cut inside a step).
  struct Cut {
    int node;
    uint32_t action;
    size_t have, of;
  };
  std::optional<Cut> cut_;
  struct Violated {
    model::Violation violation;
    int node;
    uint32_t action;
  };
  std::map<size_t, Violated> violations_;  // per observation: the first step that makes it and fails a property
  std::optional<model::Violation> violation_;
  size_t violation_event_ = 0;
  int violation_node_ = -1;
  uint32_t violation_action_ = 0;
};

void collect_calls(const std::vector<const model::Stmt*>& body, std::set<const model::Proc*>& procs) {
  for (const model::Stmt* s : body) {
    if (s->op == model::SOp::kCall && s->proc && procs.insert(s->proc).second) collect_calls(s->proc->body, procs);
    collect_calls(s->body, procs);
    collect_calls(s->else_body, procs);
  }
}

}  // namespace

ConformResult check_conformance(model::ModelSystem& system, const lang::ReplayVocabulary& vocabulary,
                                const std::vector<Observation>& observations, bool require_end,
                                const ConformLimits& limits) {
  if (limits.deadline) system.set_deadline(*limits.deadline);
  if (limits.interrupt) system.set_interrupt(limits.interrupt);
  Checker c(system, vocabulary, observations, limits);
  return c.run(require_end);
}

std::vector<std::string> replay_ops_used(const model::Model& model) {
  std::set<const model::Proc*> procs;
  for (const model::ProcessInstance& p : model.processes) {
    for (const std::vector<model::Edge>& edges : p.edges) {
      for (const model::Edge& e : edges) {
        if (e.step) collect_calls(e.step->body, procs);
      }
    }
  }
  for (const model::Rule& r : model.rules) collect_calls(r.body, procs);
  std::set<std::string> names;
  for (const model::Proc* p : procs) {
    for (const model::ReplayOp& op : p->replay) names.insert(op.op);
  }
  return {names.begin(), names.end()};
}

}  // namespace qpcheck::conform
