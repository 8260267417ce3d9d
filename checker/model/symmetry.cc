#include "checker/model/symmetry.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace qpcheck::model {

Canonicaliser::Canonicaliser(const Model& model, const StateLayout& layout, uint64_t budget,
                             std::atomic<uint64_t>* over)
    : sym_(*model.symmetry),
      layout_(layout),
      budget_(budget == 0 ? kDefaultBudget : budget),
      n_(static_cast<int>(sym_.count)),
      lo_(sym_.type->lo),
      over_(over) {
  for (const Symmetry::Class& c : sym_.classes) {
    if (c.dims == 1) ++key_len_;
  }
  for (size_t s = 0; s < sym_.rename.size(); ++s) {
    if (sym_.rename[s] != 0) renamed_.push_back(static_cast<int>(s));
  }
  queue_len_.resize(model.slots.size());
  queue_pos_.resize(model.slots.size());
  for (size_t s = 0; s < model.slots.size(); ++s) {
    queue_len_[s] = model.slots[s].queue_len;
    queue_pos_[s] = model.slots[s].queue_pos;
  }
  keys_.resize(static_cast<size_t>(n_) * key_len_);
  order_.resize(static_cast<size_t>(n_));
  p_.resize(static_cast<size_t>(n_));
  q_.resize(static_cast<size_t>(n_));
}

void Canonicaliser::apply(const std::vector<int>& p) {
  const size_t n = static_cast<size_t>(n_);
  for (size_t k = 0; k < n; ++k) q_[static_cast<size_t>(p[k])] = static_cast<int>(k);
  cand_ = vals_;
  for (const Symmetry::Class& c : sym_.classes) {
    if (c.dims == 1) {
      for (size_t k = 0; k < n; ++k) cand_[static_cast<size_t>(c.slots[k])] = vals_[static_cast<size_t>(c.slots[static_cast<size_t>(p[k])])];
    } else {
      for (size_t k = 0; k < n; ++k) {
        for (size_t l = 0; l < n; ++l) {
          const size_t from = static_cast<size_t>(p[k]) * n + static_cast<size_t>(p[l]);
          cand_[static_cast<size_t>(c.slots[k * n + l])] = vals_[static_cast<size_t>(c.slots[from])];
        }
      }
    }
  }
  for (int s : renamed_) {
    int64_t& v = cand_[static_cast<size_t>(s)];
    const int len = queue_len_[static_cast<size_t>(s)];
    if (len >= 0 && queue_pos_[static_cast<size_t>(s)] >= cand_[static_cast<size_t>(len)]) continue;  // past the end
    if (sym_.rename[static_cast<size_t>(s)] == 1) {
      v = lo_ + q_[static_cast<size_t>(v - lo_)];
    } else {
      const int64_t f = sym_.families[static_cast<size_t>(s)];
      v = q_[static_cast<size_t>(v / f)] * f + v % f;
    }
  }
}

void Canonicaliser::canonicalise(const uint64_t* in, uint64_t* out) {
  layout_.unpack(in, vals_);
  const size_t n = static_cast<size_t>(n_);
  // The keys: per value i, its one-dimensional slots, a stored value of the type as "i" (0) or "another" (1).
  size_t col = 0;
  for (const Symmetry::Class& c : sym_.classes) {
    if (c.dims != 1) continue;
    for (size_t i = 0; i < n; ++i) {
      const size_t s = static_cast<size_t>(c.slots[i]);
      int64_t v = vals_[s];
      const int len = queue_len_[s];
      if (sym_.rename[s] != 0 && len >= 0 && queue_pos_[s] >= vals_[static_cast<size_t>(len)]) {
        v = -1;                         // past its queue's end: no value of the type
      } else if (sym_.rename[s] == 1) {
        v = v - lo_ == static_cast<int64_t>(i) ? 0 : 1;
      } else if (sym_.rename[s] == 2) {
        const int64_t f = sym_.families[s];
        v = (v % f) * 2 + (v / f == static_cast<int64_t>(i) ? 0 : 1);
      }
      keys_[i * key_len_ + col] = v;
    }
    ++col;
  }
  auto key_less = [&](int a, int b) {
    const int64_t* ka = &keys_[static_cast<size_t>(a) * key_len_];
    const int64_t* kb = &keys_[static_cast<size_t>(b) * key_len_];
    return std::lexicographical_compare(ka, ka + key_len_, kb, kb + key_len_);
  };
  auto key_equal = [&](int a, int b) {
    return std::equal(&keys_[static_cast<size_t>(a) * key_len_], &keys_[static_cast<size_t>(a) * key_len_] + key_len_,
                      &keys_[static_cast<size_t>(b) * key_len_]);
  };
  for (size_t i = 0; i < n; ++i) order_[i] = static_cast<int>(i);
  std::stable_sort(order_.begin(), order_.end(), key_less);
  // Blocks of equal keys, and how many orders they allow.
  std::vector<std::pair<size_t, size_t>> blocks;  // [begin, end) in order_
  uint64_t orders = 1;
  for (size_t b = 0; b < n;) {
    size_t e = b + 1;
    while (e < n && key_equal(order_[b], order_[e])) ++e;
    if (e - b > 1) {
      blocks.emplace_back(b, e);
      for (size_t k = 2; k <= e - b && orders <= budget_; ++k) orders *= k;
    }
    b = e;
  }
  p_ = order_;
  apply(p_);
  if (blocks.empty()) {
    layout_.pack(cand_, out);
    return;
  }
  if (orders > budget_) {
    over_->fetch_add(1, std::memory_order_relaxed);
    layout_.pack(cand_, out);
    return;
  }
  best_ = cand_;
  // Every order of every block (an odometer of next_permutation over the blocks; each starts sorted).
  for (;;) {
    size_t k = 0;
    for (; k < blocks.size(); ++k) {
      auto first = p_.begin() + static_cast<ptrdiff_t>(blocks[k].first);
      auto last = p_.begin() + static_cast<ptrdiff_t>(blocks[k].second);
      if (std::next_permutation(first, last)) break;  // wrapped blocks are sorted again, and carry on
    }
    if (k == blocks.size()) break;
    apply(p_);
    if (cand_ < best_) best_.swap(cand_);
  }
  layout_.pack(best_, out);
}

namespace {

// The search's sink behind the model's: forwards each successor as its representative.
struct CanonicalSink : SuccessorSink {
  SuccessorSink* out;
  Canonicaliser* canon;
  std::vector<uint64_t>* buf;
  void successor(uint32_t action, const uint64_t* state) override {
    canon->canonicalise(state, buf->data());
    out->successor(action, buf->data());
  }
  void failure(uint32_t action, const Violation& v) override { out->failure(action, v); }
};

// Every successor and failure of one state, in order.
struct Collect : SuccessorSink {
  std::vector<std::pair<uint32_t, std::vector<uint64_t>>> next;
  std::vector<std::pair<uint32_t, Violation>> failed;
  int words = 0;
  void successor(uint32_t action, const uint64_t* state) override {
    next.emplace_back(action, std::vector<uint64_t>(state, state + words));
  }
  void failure(uint32_t action, const Violation& v) override { failed.emplace_back(action, v); }
};

}  // namespace

SymmetricSystem::SymmetricSystem(ModelSystem& inner, uint64_t budget)
    : inner_(inner),
      over_(std::make_shared<std::atomic<uint64_t>>(0)),
      canon_(inner.model(), inner.layout(), budget, over_.get()) {}

SymmetricSystem::SymmetricSystem(std::unique_ptr<ModelSystem> owned, uint64_t budget,
                                 std::shared_ptr<std::atomic<uint64_t>> over)
    : owned_(std::move(owned)),
      inner_(*owned_),
      over_(std::move(over)),
      canon_(inner_.model(), inner_.layout(), budget, over_.get()) {}

std::unique_ptr<TransitionSystem> SymmetricSystem::clone() const {
  std::unique_ptr<TransitionSystem> c = inner_.clone();
  auto* m = dynamic_cast<ModelSystem*>(c.get());
  if (m == nullptr) return nullptr;
  (void)c.release();
  return std::unique_ptr<TransitionSystem>(
      new SymmetricSystem(std::unique_ptr<ModelSystem>(m), canon_.budget(), over_));
}

std::vector<std::vector<uint64_t>> SymmetricSystem::initial_states() {
  std::vector<std::vector<uint64_t>> out;
  for (std::vector<uint64_t>& s : inner_.initial_states()) {
    canon_.canonicalise(s.data(), s.data());
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(std::move(s));
  }
  return out;
}

int SymmetricSystem::successors(const uint64_t* state, SuccessorSink& sink) {
  thread_local std::vector<uint64_t> buf;
  buf.resize(static_cast<size_t>(inner_.state_words()));
  CanonicalSink c;
  c.out = &sink;
  c.canon = &canon_;
  c.buf = &buf;
  return inner_.successors(state, c);
}

void SymmetricSystem::realise(CheckResult& r) {
  const Model& m = inner_.model();
  const Symmetry& sym = *m.symmetry;
  // Coverage: an action fired when one of its renamings did. Its orbit's signature: a process array indexed by
  // the type forgets the instance (all its instances' actions are renamings of each other, at the same offset
  // from the instance's first action); a rule forgets which values of the type its parameters name, keeping their
  // pattern of equalities (first occurrence order) and each enum family.
  if (!r.action_fired.empty()) {
    const uint32_t count = inner_.action_count();
    std::map<int, uint32_t> first_of;  // process instance -> its first action id
    for (uint32_t a = 0; a < count; ++a) {
      ModelSystem::ActionOwner o = inner_.owner(a);
      if (o.process >= 0) first_of.emplace(o.process, a);
    }
    auto signature = [&](uint32_t a) {
      ModelSystem::ActionOwner o = inner_.owner(a);
      std::vector<int64_t> sig;
      if (o.process >= 0) {
        const ProcessInstance& p = m.processes[static_cast<size_t>(o.process)];
        auto renamed = std::find_if(sym.processes.begin(), sym.processes.end(),
                                    [&](const auto& e) { return e.first == p.process; });
        sig = {0, static_cast<int64_t>(a - first_of[o.process])};
        if (renamed == sym.processes.end()) {
          sig.push_back(o.process);
          return sig;
        }
        // The process by its first instance, and the instance's family (ACTIVE[c] is no renaming of PASSIVE[c]).
        int first = o.process;
        while (first > 0 && m.processes[static_cast<size_t>(first - 1)].process == p.process) --first;
        sig.push_back(-1 - first);
        sig.push_back((o.process - first) % renamed->second);
        return sig;
      }
      const Rule& rule = m.rules[static_cast<size_t>(o.rule)];
      sig = {1, o.rule};
      std::vector<int64_t> values(rule.param_types.size());
      int64_t t = o.tuple;
      for (size_t k = rule.param_types.size(); k-- > 0;) {
        const Type* ty = rule.param_types[k];
        values[k] = ty->lo + t % ty->count();
        t /= ty->count();
      }
      std::vector<int64_t> seen;  // values of the type, in first-occurrence order
      auto pattern = [&](int64_t i) {
        auto it = std::find(seen.begin(), seen.end(), i);
        if (it == seen.end()) {
          seen.push_back(i);
          return static_cast<int64_t>(seen.size() - 1);
        }
        return static_cast<int64_t>(it - seen.begin());
      };
      for (size_t k = 0; k < values.size(); ++k) {
        const Type* ty = rule.param_types[k];
        if (ty == sym.type) {
          sig.push_back(-1 - pattern(values[k] - sym.type->lo));
        } else if (ty->kind == TypeKind::kEnum && ty->family_index == sym.type) {
          const auto f = static_cast<int64_t>(ty->families.size());
          sig.push_back(values[k] % f);
          sig.push_back(-1 - pattern(values[k] / f));
        } else {
          sig.push_back(values[k]);
        }
      }
      return sig;
    };
    std::map<std::vector<int64_t>, std::vector<uint32_t>> orbits;
    for (uint32_t a = 0; a < count; ++a) orbits[signature(a)].push_back(a);
    r.action_fired.resize(count, 0);
    for (const auto& [sig, ids] : orbits) {
      bool any = false;
      for (uint32_t a : ids) any = any || r.action_fired[a] != 0;
      if (any) {
        for (uint32_t a : ids) r.action_fired[a] = 1;
      }
    }
  }
  Path& path = r.path;
  if (path.states.empty()) return;
  const int words = inner_.state_words();
  std::vector<uint64_t> c(static_cast<size_t>(words));
  auto representative = [&](const std::vector<uint64_t>& s) {
    canon_.canonicalise(s.data(), c.data());
    return c;
  };
  Path real;
  for (std::vector<uint64_t>& s : inner_.initial_states()) {
    if (representative(s) == path.states[0]) {
      real.states.push_back(std::move(s));
      break;
    }
  }
  if (real.states.empty()) throw std::logic_error("symmetry: no initial state has the path's first representative");
  for (size_t i = 0; i < path.actions.size(); ++i) {
    Collect all;
    all.words = words;
    std::vector<uint64_t> cur = real.states.back();
    inner_.successors(cur.data(), all);
    if (i + 1 < path.states.size()) {
      bool found = false;
      for (auto& [action, next] : all.next) {
        if (representative(next) == path.states[i + 1]) {
          real.actions.push_back(action);
          real.states.push_back(std::move(next));
          found = true;
          break;
        }
      }
      if (!found) throw std::logic_error("symmetry: step " + std::to_string(i + 1) + " of the path has no real match");
      continue;
    }
    // The failing last step: the real state's failure of the same property at the same statement.
    ActionOutcome o = successor_of(inner_, path.states[i].data(), path.actions[i]);
    bool found = false;
    for (const auto& [action, v] : all.failed) {
      if (o.failure && v.property == o.failure->property && v.span.file == o.failure->span.file &&
          v.span.begin == o.failure->span.begin) {
        real.actions.push_back(action);
        r.violation = v;  // a runtime error's message names the real run's locations
        found = true;
        break;
      }
    }
    if (!found) throw std::logic_error("symmetry: the path's failing step has no real match");
  }
  path = std::move(real);
}

}  // namespace qpcheck::model
