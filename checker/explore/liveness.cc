// The liveness check (liveness.h). Three phases:
//  1. BFS over the product of the reachable states and a one-bit monitor, storing each product state once (the
//     StateStore of the safety searches, one extra word for the monitor) and its outgoing edges (target, action) in
//     CSR arrays; a failing step is an edge without a target (it counts for enabledness only). A product state is
//     *bad* when a run that stays in bad states forever violates the property:
//       eventually P:         bad = !P; a state where P holds is not expanded (every run through it is fine);
//       always eventually P:  bad = !P;
//       P leads_to Q:         the monitor m is "a P state was met and no Q state since": m' = (m || P(s')) && !Q(s'),
//                             bad = m'.
//  2. Tarjan's SCC algorithm (iterative) over the bad states. A component C with at least one edge inside is fair
//     when no weak unit is enabled in every state of C without an edge of C labelled by it, and no strong unit is
//     enabled in some state of C without such an edge: a cycle through every state and edge of C is then a fair run.
//     A weak violation holds for every part of C too (C is rejected). Strong violations remove the states where the
//     offending units are enabled; the rest is split into components again and each is checked the same way
//     (Emerson and Lei, "Modalities for model checking", 1987; the Streett emptiness check of Latvala and Heljanko,
//     "Coping with strong fairness", 2000). A bad state where nothing at all is enabled is fair on its own: the run
//     stays there forever (SPIN's stutter extension of a finite run).
//  3. Of the fair components, the one holding the lowest state id (ids are in BFS order, so the shallowest state)
//     gives the lasso: the BFS prefix to that state, then a cycle inside the component from it through an edge of
//     every fair unit it takes (or a state where a weak unit is disabled), and back. The prefix is a shortest one
//     to any state on a fair violating cycle; the cycle is not promised shortest.
#include "checker/explore/liveness.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>

#include "checker/explore/searcher.h"
#include "checker/explore/state_store.h"

namespace qpcheck::explore {
namespace {

using model::Violation;

constexpr uint8_t kBad = 1;
constexpr uint8_t kExpanded = 2;

class LivenessSearch : public internal::Searcher {
 public:
  LivenessSearch(model::TransitionSystem& sys, const LivenessQuery& q, const Options& opt, LivenessStats* out)
      : Searcher(sys, opt), q_(q), words_(sys.state_words()), out_(out) {
    std::vector<int> bits = sys.word_bits();
    bits.push_back(1);  // the monitor
    store_ = std::make_unique<StateStore>(bits);
    units_ = static_cast<int>(q.strong.size());
    count_.assign(units_, 0);
    taken_.assign(units_, 0);
    last_.assign(units_, 0);
  }

 private:
  // What successors() reports for one state: successor states (copied) and failing actions.
  struct Collect : model::SuccessorSink {
    int words = 0;
    std::vector<uint64_t> states;
    std::vector<uint32_t> actions;  // per successor
    std::vector<uint32_t> failures;
    void successor(uint32_t a, const uint64_t* s) override {
      states.insert(states.end(), s, s + words);
      actions.push_back(a);
    }
    void failure(uint32_t a, const Violation&) override { failures.push_back(a); }
  };

  // The monitor of a successor `s` reached from monitor `m`, and whether the product state is bad. Throws
  // StepFailure when P or Q cannot be evaluated in `s`.
  std::pair<uint64_t, bool> monitor(uint64_t m, const uint64_t* s) {
    switch (q_.kind) {
      case LivenessQuery::Kind::kEventually:
      case LivenessQuery::Kind::kAlwaysEventually: return {0, !q_.p(s)};
      case LivenessQuery::Kind::kLeadsTo: {
        bool pending = (m != 0 || q_.p(s)) && !q_.q(s);
        return {pending ? 1 : 0, pending};
      }
    }
    return {0, false};
  }

  // Stores product state (s, m) reached from `pred`; returns its id, or kNoState (limit_ set) when it is new and
  // max-states are stored already: as in the safety searches, the store holds at most max-states states and a search
  // that needs no more completes.
  uint32_t add(const uint64_t* s, uint64_t m, uint32_t pred, bool bad) {
    std::copy(s, s + words_, buf_.begin());
    buf_[words_] = m;
    if (opt_.limits.max_states && store_->size() >= opt_.limits.max_states && !store_->contains(buf_.data())) {
      limit_ = "max-states";
      return kNoState;
    }
    auto [id, fresh] = store_->insert(buf_.data(), pred);
    if (fresh) {
      flags_.push_back(bad ? kBad : 0);
      depth_.push_back(pred == kNoState ? 0 : depth_[pred] + 1);
    }
    return id;
  }

  // The product state of successor `s` from monitor `m`, or nullopt (found_ set) when P or Q cannot be evaluated.
  std::optional<uint32_t> product(const uint64_t* s, uint64_t m, uint32_t pred) {
    try {
      auto [m2, bad] = monitor(m, s);
      uint32_t id = add(s, m2, pred, bad);
      if (id == kNoState) return std::nullopt;  // max-states
      return id;
    } catch (const model::StepFailure& f) {
      uint32_t id = add(s, m, pred, false);
      if (id == kNoState) return std::nullopt;  // max-states
      found_ = internal::Found{Violation{Violation::Kind::kInvariant, q_.property,
                                         "liveness property " + q_.property + " cannot be evaluated: " + f.message,
                                         f.span},
                               id, kNoState};
      return std::nullopt;
    }
  }

  bool limit_hit() {
    if (!limit_.empty()) return true;
    if (interrupted()) {
      limit_ = "interrupted";
      return true;
    }
    const model::SearchLimits& l = opt_.limits;
    if (l.max_memory_bytes && bytes() + sys_.memory_bytes() >= l.max_memory_bytes) {
      limit_ = "max-memory";
      return true;
    }
    if (l.time_limit_seconds > 0 && elapsed() >= l.time_limit_seconds) {
      limit_ = "time-limit";
      return true;
    }
    return false;
  }
  uint64_t edge_bytes() const { return (to_.capacity() + act_.capacity() + begin_.capacity()) * 4; }
  uint64_t bytes() const { return store_->bytes() + edge_bytes() + flags_.capacity() * 5 + scc_bytes_; }

  void search() override {
    buf_.assign(words_ + 1, 0);
    for (const std::vector<uint64_t>& s0 : sys_.initial_states()) {
      // The monitor's value before the run: m = 0, so an initial state's monitor is that of a successor of m = 0.
      if (!product(s0.data(), 0, kNoState)) return;
    }
    if (!explore_product()) return;
    find_fair_component();
  }

  // Phase 1. False when it stopped (a limit, or a predicate that cannot be evaluated).
  bool explore_product() {
    Collect c;
    c.words = words_;
    std::vector<uint64_t> cur(words_ + 1);
    for (uint32_t id = 0; id < store_->size(); ++id) {
      if ((id & 1023) == 0) {
        if (limit_hit()) return false;
        report_progress(id);
      }
      begin_.push_back(static_cast<uint32_t>(to_.size()));
      store_->load(id, cur.data());
      if (q_.kind == LivenessQuery::Kind::kEventually && !(flags_[id] & kBad)) continue;  // P holds: satisfied
      flags_[id] |= kExpanded;
      c.states.clear();
      c.actions.clear();
      c.failures.clear();
      sys_.successors(cur.data(), c);
      stats_.depth = std::max<uint64_t>(stats_.depth, depth_[id]);
      for (size_t i = 0; i < c.actions.size(); ++i) {
        std::optional<uint32_t> t = product(&c.states[i * words_], cur[words_], id);
        if (!t) return false;
        to_.push_back(*t);
        act_.push_back(c.actions[i]);
        fire(c.actions[i]);
      }
      for (uint32_t a : c.failures) {
        to_.push_back(kNoState);
        act_.push_back(a);
        fire(a);
      }
      stats_.transitions += c.actions.size() + c.failures.size();
    }
    begin_.push_back(static_cast<uint32_t>(to_.size()));
    return true;
  }

  void report_progress(uint32_t head) {
    if (!opt_.progress) return;
    double now = elapsed();
    if (now < next_progress_) return;
    next_progress_ = now + 1.0;
    model::SearchStats s = stats_;
    s.states = store_->size();
    s.seconds = now;
    s.store_bytes = bytes();
    s.queue = store_->size() - head;
    opt_.progress(s);
  }

  // --- Phase 2: components ---------------------------------------------------------------------------------------

  bool in(uint32_t s) const { return mark_[s] == epoch_; }
  template <class F>
  void internal_edges(uint32_t s, F f) const {
    for (uint32_t e = begin_[s]; e < begin_[s + 1]; ++e) {
      if (to_[e] != kNoState && in(to_[e])) f(to_[e], act_[e]);
    }
  }

  // Tarjan over the states marked with the current epoch, from each of `roots`; calls emit(component) for each
  // strongly connected component (iteratively: no recursion on deep graphs).
  template <class Emit>
  void tarjan(const std::vector<uint32_t>& roots, Emit emit) {
    for (uint32_t r : roots) index_[r] = kNoState;
    uint32_t next = 0;
    struct Frame {
      uint32_t s, e;
    };
    std::vector<Frame> call;
    std::vector<uint32_t> stack;
    for (uint32_t r : roots) {
      if (index_[r] != kNoState) continue;
      auto open = [&](uint32_t s) {
        index_[s] = low_[s] = next++;
        stack.push_back(s);
        on_stack_[s] = 1;
        call.push_back(Frame{s, begin_[s]});
      };
      open(r);
      while (!call.empty()) {
        Frame& f = call.back();
        uint32_t s = f.s;
        bool descended = false;
        while (f.e < begin_[s + 1]) {
          uint32_t t = to_[f.e++];
          if (t == kNoState || !in(t)) continue;
          if (index_[t] == kNoState) {
            open(t);
            descended = true;
            break;
          }
          if (on_stack_[t]) low_[s] = std::min(low_[s], index_[t]);
        }
        if (descended) continue;
        call.pop_back();
        if (!call.empty()) low_[call.back().s] = std::min(low_[call.back().s], low_[s]);
        if (low_[s] == index_[s]) {
          std::vector<uint32_t> comp;
          uint32_t t;
          do {
            t = stack.back();
            stack.pop_back();
            on_stack_[t] = 0;
            comp.push_back(t);
          } while (t != s);
          emit(std::move(comp));
        }
      }
    }
  }

  struct Verdict {
    bool fair = false;
    std::vector<uint32_t> remove;  // strong units enabled but not taken: the states where they are enabled
  };

  int32_t unit(uint32_t e) const { return act_[e] < q_.unit_of.size() ? q_.unit_of[act_[e]] : -1; }

  // Is a cycle through every state and internal edge of `comp` (marked with the current epoch) fair?
  Verdict judge(const std::vector<uint32_t>& comp) {
    Verdict v;
    bool has_edge = false;
    std::vector<int32_t> seen;  // units enabled somewhere in comp
    for (uint32_t s : comp) {
      for (uint32_t e = begin_[s]; e < begin_[s + 1]; ++e) {
        int32_t u = unit(e);
        bool inside = to_[e] != kNoState && in(to_[e]);
        has_edge |= inside;
        if (u < 0) continue;
        if (count_[u] == 0 && !taken_[u] && last_[u] != s + 1) seen.push_back(u);
        if (last_[u] != s + 1) {  // count each state once per unit
          last_[u] = s + 1;
          ++count_[u];
        }
        if (inside) taken_[u] = 1;
      }
    }
    if (!has_edge) {
      uint32_t s = comp.front();
      v.fair = comp.size() == 1 && (flags_[s] & kExpanded) && begin_[s] == begin_[s + 1];  // nothing enabled
    } else {
      v.fair = true;
      std::vector<int32_t> strong_bad;
      for (int32_t u : seen) {
        if (taken_[u]) continue;
        if (q_.strong[u]) {
          strong_bad.push_back(u);
        } else if (count_[u] == comp.size()) {
          v.fair = false;  // weak unit enabled throughout and never taken: no part of comp is fair either
          strong_bad.clear();
          break;
        }
      }
      if (v.fair && !strong_bad.empty()) {
        v.fair = false;
        for (uint32_t s : comp) {
          bool drop = false;
          for (uint32_t e = begin_[s]; e < begin_[s + 1] && !drop; ++e) {
            int32_t u = unit(e);
            drop = u >= 0 && std::find(strong_bad.begin(), strong_bad.end(), u) != strong_bad.end();
          }
          if (drop) v.remove.push_back(s);
        }
      }
    }
    for (int32_t u : seen) {
      count_[u] = 0;
      taken_[u] = 0;
      last_[u] = 0;
    }
    return v;
  }

  void find_fair_component() {
    const uint32_t n = static_cast<uint32_t>(store_->size());
    mark_.assign(n, 0);
    index_.assign(n, kNoState);
    low_.assign(n, 0);
    on_stack_.assign(n, 0);
    scc_bytes_ = uint64_t{n} * 13;
    epoch_ = 1;
    std::vector<uint32_t> bad;
    for (uint32_t s = 0; s < n; ++s) {
      if (flags_[s] & kBad) {
        mark_[s] = epoch_;
        bad.push_back(s);
      }
    }
    if (limit_hit()) return;
    // Components to judge, each with the epoch its states are marked with.
    std::deque<std::vector<uint32_t>> work;
    tarjan(bad, [&](std::vector<uint32_t> c) { work.push_back(std::move(c)); });
    std::optional<std::vector<uint32_t>> best;
    uint32_t best_min = kNoState;
    uint64_t judged = 0;
    while (!work.empty()) {
      if ((++judged & 255) == 0 && limit_hit()) return;
      std::vector<uint32_t> comp = std::move(work.front());
      work.pop_front();
      uint32_t lowest = *std::min_element(comp.begin(), comp.end());
      if (best && lowest >= best_min) continue;  // it cannot give a shallower lasso
      ++epoch_;
      for (uint32_t s : comp) mark_[s] = epoch_;
      Verdict v = judge(comp);
      if (comp.size() > 1 || v.fair || !v.remove.empty()) ++ls_.components;
      if (v.fair) {
        best = comp;
        best_min = lowest;
        continue;
      }
      if (v.remove.empty()) continue;
      ++ls_.refinements;
      for (uint32_t s : v.remove) mark_[s] = 0;
      std::vector<uint32_t> rest;
      for (uint32_t s : comp) {
        if (in(s)) rest.push_back(s);
      }
      tarjan(rest, [&](std::vector<uint32_t> c) { work.push_back(std::move(c)); });
    }
    if (!best) return;
    ++epoch_;
    for (uint32_t s : *best) mark_[s] = epoch_;
    lasso(*best, best_min);
  }

  // --- Phase 3: the lasso ----------------------------------------------------------------------------------------

  // A shortest path inside the current component from `from` to a state for which goal(s) holds: the (action,
  // state) steps, empty when `from` satisfies it.
  template <class Goal>
  std::vector<std::pair<uint32_t, uint32_t>> path_within(uint32_t from, Goal goal) {
    if (goal(from)) return {};
    std::vector<uint32_t> order{from};
    std::vector<std::pair<uint32_t, uint32_t>> via;  // per order index: (parent index, action)
    via.push_back({kNoState, kNoState});
    seen_stamp_++;
    seen_[from] = seen_stamp_;
    for (size_t h = 0; h < order.size(); ++h) {
      uint32_t s = order[h];
      for (uint32_t e = begin_[s]; e < begin_[s + 1]; ++e) {
        uint32_t t = to_[e];
        if (t == kNoState || !in(t) || seen_[t] == seen_stamp_) continue;
        seen_[t] = seen_stamp_;
        order.push_back(t);
        via.push_back({static_cast<uint32_t>(h), act_[e]});
        if (goal(t)) {
          std::vector<std::pair<uint32_t, uint32_t>> steps;
          for (size_t i = order.size() - 1; via[i].first != kNoState; i = via[i].first) {
            steps.push_back({via[i].second, order[i]});
          }
          std::reverse(steps.begin(), steps.end());
          return steps;
        }
      }
    }
    return {};  // unreachable inside a strongly connected component
  }

  void lasso(const std::vector<uint32_t>& comp, uint32_t entry) {
    seen_.assign(store_->size(), 0);
    seen_stamp_ = 0;
    std::vector<std::pair<uint32_t, uint32_t>> cycle;  // (action, state reached)
    uint32_t cur = entry;
    auto append = [&](const std::vector<std::pair<uint32_t, uint32_t>>& steps) {
      cycle.insert(cycle.end(), steps.begin(), steps.end());
      if (!steps.empty()) cur = steps.back().second;
    };
    bool stutter = comp.size() == 1 && begin_[entry] == begin_[entry + 1];
    if (!stutter) {
      // Which fair units the cycle must serve: those enabled somewhere in the component. One that the component
      // takes gets an edge of it; a weak one it does not take is disabled somewhere (judge), so the cycle visits
      // such a state.
      std::vector<int32_t> enabled, takes;
      for (uint32_t s : comp) {
        for (uint32_t e = begin_[s]; e < begin_[s + 1]; ++e) {
          int32_t u = unit(e);
          if (u < 0) continue;
          if (std::find(enabled.begin(), enabled.end(), u) == enabled.end()) enabled.push_back(u);
          if (to_[e] != kNoState && in(to_[e]) && std::find(takes.begin(), takes.end(), u) == takes.end()) {
            takes.push_back(u);
          }
        }
      }
      std::sort(enabled.begin(), enabled.end());
      for (int32_t u : enabled) {
        if (std::find(takes.begin(), takes.end(), u) != takes.end()) {
          auto has_edge = [&](uint32_t s) {
            for (uint32_t e = begin_[s]; e < begin_[s + 1]; ++e) {
              if (unit(e) == u && to_[e] != kNoState && in(to_[e])) return true;
            }
            return false;
          };
          append(path_within(cur, has_edge));
          for (uint32_t e = begin_[cur]; e < begin_[cur + 1]; ++e) {
            if (unit(e) == u && to_[e] != kNoState && in(to_[e])) {
              append({{act_[e], to_[e]}});
              break;
            }
          }
        } else {
          auto disabled = [&](uint32_t s) {
            for (uint32_t e = begin_[s]; e < begin_[s + 1]; ++e) {
              if (unit(e) == u) return false;
            }
            return true;
          };
          append(path_within(cur, disabled));
        }
      }
      if (cycle.empty()) {  // no fair unit involved: any internal edge out of the entry, then back
        internal_edges(entry, [&](uint32_t t, uint32_t a) {
          if (cycle.empty()) append({{a, t}});
        });
      }
      append(path_within(cur, [&](uint32_t s) { return s == entry; }));
    }
    // The prefix: predecessor links back from the entry, each step's action found among its source's edges.
    std::vector<uint32_t> chain;
    for (uint32_t s = entry; s != kNoState; s = store_->predecessor(s)) chain.push_back(s);
    std::reverse(chain.begin(), chain.end());
    model::Path p;
    std::vector<uint64_t> st(words_ + 1);
    auto push_state = [&](uint32_t id) {
      store_->load(id, st.data());
      p.states.emplace_back(st.begin(), st.begin() + words_);
    };
    push_state(chain[0]);
    for (size_t i = 1; i < chain.size(); ++i) {
      uint32_t a = kNoState;
      for (uint32_t e = begin_[chain[i - 1]]; e < begin_[chain[i - 1] + 1]; ++e) {
        if (to_[e] == chain[i]) {
          a = act_[e];
          break;
        }
      }
      p.actions.push_back(a);
      push_state(chain[i]);
    }
    cycle_start_ = p.actions.size();
    for (auto [a, s] : cycle) {
      p.actions.push_back(a);
      push_state(s);
    }
    lasso_ = std::move(p);
    violated_ = true;
  }

  model::CheckResult finish() override {
    close_stats(store_->size(), bytes());
    ls_.edges_bytes = edge_bytes();
    if (out_) *out_ = ls_;
    model::CheckResult r;
    r.limit = limit_;
    r.stats = stats_;
    if (found_) {  // a predicate that cannot be evaluated
      r.outcome = model::Outcome::kViolated;
      r.violation = found_->violation;
      r.path = internal::rebuild_path(
          sys_, found_->state,
          [&](uint32_t id, uint64_t* out) {
            std::vector<uint64_t> s(words_ + 1);
            store_->load(id, s.data());
            std::copy(s.begin(), s.begin() + words_, out);
          },
          [&](uint32_t id) { return store_->predecessor(id); });
    } else if (violated_) {
      r.outcome = model::Outcome::kViolated;
      r.violation = Violation{Violation::Kind::kInvariant, q_.property, "", {}};
      r.path = std::move(lasso_);
      r.cycle_start = cycle_start_;
      r.limit.clear();
    } else {
      r.outcome = limit_.empty() ? model::Outcome::kHolds : model::Outcome::kInconclusive;
    }
    r.action_fired = std::move(fired_);
    return r;
  }

  const LivenessQuery& q_;
  const int words_;
  LivenessStats* out_;
  LivenessStats ls_;
  int units_ = 0;
  std::unique_ptr<StateStore> store_;
  std::vector<uint64_t> buf_;
  std::vector<uint8_t> flags_;   // per product state: kBad, kExpanded
  std::vector<uint32_t> depth_;  // per product state: BFS depth
  std::vector<uint32_t> begin_, to_, act_;  // CSR edges; to_ = kNoState for a failing step
  // Phase 2
  std::vector<uint32_t> mark_, index_, low_;
  std::vector<uint8_t> on_stack_;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> count_;   // per unit: states of the component where it is enabled
  std::vector<uint8_t> taken_;    // per unit: an internal edge of the component is labelled by it
  std::vector<uint32_t> last_;    // per unit: 1 + the last state counted in count_
  uint64_t scc_bytes_ = 0;
  // Phase 3
  std::vector<uint32_t> seen_;
  uint32_t seen_stamp_ = 0;
  bool violated_ = false;
  model::Path lasso_;
  size_t cycle_start_ = 0;
  double next_progress_ = 1.0;
};

}  // namespace

model::CheckResult check_liveness(model::TransitionSystem& system, const LivenessQuery& query, const Options& options,
                                  LivenessStats* stats) {
  LivenessSearch s(system, query, options, stats);
  return s.run();
}

}  // namespace qpcheck::explore
