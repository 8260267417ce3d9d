// The Z3 encoder against the reference interpreter, action by action, on reachable states of every shipped spec and
// corpus model (STYLE habit 17; architecture review 3.5). The differential test compares the two engines' verdicts;
// this one compares what they say one action does from one concrete state, so that an encoder that drops an error
// path or a guard (a wrong "holds" from k-induction) is caught here even where no verdict shows it.
//
// For each state s of a bounded BFS (all states for small models) the state is encoded as constants, so every term
// the Encoder builds folds to a constant, and for every action a:
// - ModelSystem::reference_successors reports a successor t  <=>  Effect.ok and not Effect.failed, and next == t;
// - it reports a failure of property P                      <=>  Effect.ok and Effect.failed, with failed_by[P];
// - it does not report a                                   <=>  not Effect.ok.
// Also per state: the first invariant Encoder::invariant_violated flags is the one check_invariants reports, and
// Encoder::valid_end agrees with ModelSystem::valid_end.
#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <z3++.h>

#include "checker/frontend/frontend.h"
#include "checker/model/model_system.h"
#include "checker/symbolic/encode.h"
#include "checker/symbolic/family.h"
#include "checker/symbolic/load.h"
#include "tests/support/compile.h"
#include "tests/support/corpus_header.h"

namespace qpcheck {
namespace {

namespace fs = std::filesystem;
using model::ModelSystem;
using model::Violation;

lang::ParamOverrides header_params(const fs::path& file) { return testing::read_corpus_header(file).overrides(); }

// What the reference does with one action from one state.
struct Outcome {
  bool enabled = false;
  std::optional<std::vector<int64_t>> next;  // a successor
  std::optional<Violation> failure;          // or a failure
};

struct Reference : model::SuccessorSink {
  const ModelSystem* sys = nullptr;
  std::map<uint32_t, Outcome> by_action;
  void successor(uint32_t action, const uint64_t* s) override {
    by_action[action] = Outcome{true, sys->unpack(s), std::nullopt};
  }
  void failure(uint32_t action, const Violation& v) override { by_action[action] = Outcome{true, std::nullopt, v}; }
};

// The value of a closed term: it must fold (simplify) to a numeral or a Boolean constant.
int64_t value(const z3::expr& e, const std::string& what) {
  z3::expr s = e.simplify();
  if (s.is_true()) return 1;
  if (s.is_false()) return 0;
  int64_t v = 0;
  if (s.is_numeral_i64(v)) return v;
  FAIL("the encoder's ", what, " does not fold to a constant on a constant state: ", s.to_string());
  return 0;
}

struct Counts {
  size_t states = 0, actions = 0, enabled = 0, failures = 0;
  std::set<std::string> failure_messages;
};

// How compare() builds the encoder's terms.
struct Mode {
  // false: each state is encoded as constants, so every term folds as the encoder builds it. true: the actions,
  // invariants and valid_end are encoded once over fresh constants (bounded by the slots' ranges, as the engines'
  // unrolled states are), and each state's values are substituted into those terms: this checks the encoder's
  // folding by static bounds (Val::lo/hi), which a constant state never exercises.
  bool symbolic = false;
  // false: a state that violates an invariant is a counterexample's end and its successors are not sampled. true:
  // they are (an engine checking one property walks through states that violate the others).
  bool past_violations = false;
  // Non-null: `m` is member `member` of a family whose member 0 is `base`, aligned as `aligned` (family.h); the
  // encoder works on `base` with the differing constants selected by a parameter index (as symbolic::check does),
  // the parameter index being the member's in constant mode and a fresh constant substituted in symbolic mode.
  const model::Model* base = nullptr;
  const symbolic::Aligned* aligned = nullptr;
  int member = 0;
  // Non-zero: instead of a BFS, this many random well-formed states (every slot in its range, each queue's elements
  // past its length at their defaults: Encoder::well_formed, what k-induction's first state satisfies).
  size_t random_states = 0;
};

// A random well-formed state of `m` (see Mode::random_states).
std::vector<int64_t> random_state(const model::Model& m, std::mt19937_64& rng) {
  std::vector<int64_t> v(m.slots.size());
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = std::uniform_int_distribution<int64_t>(m.slots[i].lo, m.slots[i].hi)(rng);
  }
  for (const model::Unit& u : m.units) {
    if (u.process >= 0 || u.type == nullptr || u.type->kind != model::TypeKind::kQueue) continue;
    int es = u.type->elem->slots;
    for (int64_t j = v[u.first_slot]; j < u.type->capacity; ++j) {
      for (int k = 0; k < es; ++k) {
        int64_t slot = u.first_slot + 1 + j * es + k;
        v[slot] = m.slots[slot].lo;
      }
    }
  }
  return v;
}

void compare(const model::Model& m, const std::string& name, size_t max_states, Counts& counts, Mode mode = {}) {
  ModelSystem sys(m);
  z3::context ctx;
  z3::expr pidx = ctx.int_const("param_index");
  symbolic::ConstOverrides overrides;
  if (mode.base != nullptr) {
    for (const auto& [e, values] : mode.aligned->constants) {
      bool is_bool = e->type != nullptr && e->type->kind == model::TypeKind::kBool;
      auto num = [&](int64_t v) { return is_bool ? ctx.bool_val(v != 0) : ctx.int_val(v); };
      int64_t lo = *std::min_element(values.begin(), values.end());
      int64_t hi = *std::max_element(values.begin(), values.end());
      if (!mode.symbolic) {
        overrides.emplace(e, symbolic::Val{num(values[mode.member]), values[mode.member], values[mode.member]});
        continue;
      }
      z3::expr sel = num(values.back());
      for (size_t k = values.size() - 1; k-- > 0;) sel = z3::ite(pidx == ctx.int_val(static_cast<int64_t>(k)), num(values[k]), sel);
      overrides.emplace(e, symbolic::Val{sel, lo, hi});
    }
  }
  symbolic::Encoder enc(ctx, mode.base != nullptr ? *mode.base : m, mode.base != nullptr ? &overrides : nullptr);
  REQUIRE(enc.actions().size() == sys.action_count());
  Reference ref;
  ref.sys = &sys;
  // Symbolic mode: the terms over fresh constants, and the constants to substitute.
  std::vector<symbolic::Val> fresh;
  std::vector<symbolic::Effect> effects;
  std::vector<z3::expr> inv_terms;
  std::optional<z3::expr> end_term;
  z3::expr_vector vars(ctx);
  std::vector<size_t> var_slots;
  if (mode.symbolic) {
    fresh = enc.fresh_state("s");
    for (uint32_t a = 0; a < sys.action_count(); ++a) effects.push_back(enc.action(fresh, enc.actions()[a]));
    for (size_t i = 0; i < m.invariants.size(); ++i) inv_terms.push_back(enc.invariant_violated(fresh, i));
    end_term = enc.valid_end(fresh);
    for (size_t i = 0; i < fresh.size(); ++i) {
      if (fresh[i].e.is_const() && !fresh[i].e.is_numeral() && !fresh[i].e.is_true() && !fresh[i].e.is_false()) {
        vars.push_back(fresh[i].e);
        var_slots.push_back(i);
      }
    }
    if (mode.base != nullptr) vars.push_back(pidx);
  }
  std::set<std::vector<uint64_t>> seen;
  std::deque<std::vector<uint64_t>> queue;
  if (mode.random_states > 0) {
    std::mt19937_64 rng(1);
    for (size_t i = 0; i < mode.random_states; ++i) {
      std::vector<uint64_t> t(sys.state_words());
      sys.layout().pack(random_state(m, rng), t.data());
      queue.push_back(std::move(t));
    }
  } else {
    for (auto& s : sys.initial_states()) {
      if (seen.insert(s).second) queue.push_back(s);
    }
  }
  while (!queue.empty()) {
    std::vector<uint64_t> s = std::move(queue.front());
    queue.pop_front();
    std::vector<int64_t> values = sys.unpack(s.data());
    std::vector<symbolic::Val> st;
    for (size_t i = 0; i < values.size(); ++i) {
      int64_t v = values[i];
      bool is_bool = m.slots[i].type->kind == model::TypeKind::kBool;
      st.push_back(symbolic::Val{is_bool ? ctx.bool_val(v != 0) : ctx.int_val(v), v, v});
    }
    z3::expr_vector vals(ctx);
    for (size_t i : var_slots) vals.push_back(st[i].e);
    if (mode.base != nullptr) vals.push_back(ctx.int_val(mode.member));
    // A term of this state: built over it (constant mode) or substituted into the symbolic one.
    auto at = [&](const z3::expr& e) { return mode.symbolic ? z3::expr(e).substitute(vars, vals) : e; };
    ref.by_action.clear();
    sys.reference_successors(s.data(), ref);
    ++counts.states;
    for (uint32_t a = 0; a < sys.action_count(); ++a) {
      INFO(name, ": state ", counts.states, ", action ", a, " (", sys.describe(s.data(), a, nullptr).actor,
           ")");
      symbolic::Effect eff = mode.symbolic ? effects[a] : enc.action(st, enc.actions()[a]);
      bool ok = value(at(eff.ok), "ok") != 0;
      bool failed = value(at(eff.failed), "failed") != 0;
      CHECK_MESSAGE((ok || !failed), "the encoder's step fails without being enabled");
      auto it = ref.by_action.find(a);
      ++counts.actions;
      // The interpreter stops at a step's first failure: exactly that property's failed_by holds, no other one.
      std::string first_failure = it != ref.by_action.end() && it->second.failure ? it->second.failure->property : "";
      for (const auto& [property, cond] : eff.failed_by) {
        INFO("failed_by[", property, "]");
        CHECK(value(at(cond), "failed_by") == (property == first_failure ? 1 : 0));
      }
      if (it == ref.by_action.end()) {
        CHECK_MESSAGE(!ok, "the encoder enables an action the interpreter does not");
        continue;
      }
      ++counts.enabled;
      REQUIRE_MESSAGE(ok, "the interpreter enables an action the encoder does not");
      const Outcome& o = it->second;
      if (o.failure) {
        ++counts.failures;
        counts.failure_messages.insert(o.failure->message);
        INFO("the interpreter's failure: ", o.failure->property, ": ", o.failure->message);
        REQUIRE_MESSAGE(failed, "the interpreter's step fails, the encoder's does not");
        auto by = eff.failed_by.find(o.failure->property);
        REQUIRE_MESSAGE(by != eff.failed_by.end(), "the encoder does not know the failing property");
        CHECK(value(at(by->second), "failed_by") == 1);
        continue;
      }
      REQUIRE_MESSAGE(!failed, "the encoder's step fails, the interpreter's does not");
      REQUIRE(eff.next.size() == o.next->size());
      for (size_t i = 0; i < eff.next.size(); ++i) {
        INFO("slot ", i);
        CHECK(value(at(eff.next[i].e), "successor slot") == (*o.next)[i]);
      }
    }
    std::optional<Violation> inv = sys.check_invariants(s.data());
    std::optional<size_t> first;
    for (size_t i = 0; i < m.invariants.size() && !first; ++i) {
      z3::expr v = mode.symbolic ? at(inv_terms[i]) : enc.invariant_violated(st, i);
      if (value(v, "invariant_violated") != 0) first = i;
    }
    INFO(name, ": state ", counts.states, " invariants");
    CHECK(first.has_value() == inv.has_value());
    if (first && inv) CHECK(m.invariants[*first].name == inv->property);  // also when it cannot be evaluated
    CHECK((value(mode.symbolic ? at(*end_term) : enc.valid_end(st), "valid_end") != 0) == sys.valid_end(s.data()));
    if (mode.random_states > 0 || (inv && !mode.past_violations)) continue;  // a counterexample ends here: its successors are not reachable runs
    for (auto& [a, o] : ref.by_action) {
      if (!o.next || seen.size() >= max_states) continue;
      std::vector<uint64_t> t(sys.state_words());
      sys.layout().pack(*o.next, t.data());
      if (seen.insert(t).second) queue.push_back(std::move(t));
    }
  }
}


// The states the engines reach that a BFS from the initial state, stopping at counterexamples, does not: a search for
// one property walks through states that violate the others, and k-induction starts anywhere well-formed. There a
// step can fail twice on one run (tests/corpus/first_failure_wins.qpspec; spec 03's deliver_send reading
// head(wire_msg[e]) of an empty queue before recv_arrival's assertion), and terms are built over unknown slots.
TEST_CASE("the Z3 encoder does what the interpreter does past violations, on random well-formed states, symbolically") {
  struct Case {
    std::string file;
    lang::ParamOverrides params;
    size_t random;  // random well-formed states (constant mode)
  };
  const Case cases[] = {
      {"tests/corpus/first_failure_wins.qpspec", {}, 200},
      {"spec/03_patch_passive_first_ib.qpspec", {{"connect_rnr_retry", "0"}}, 1500},
      {"spec/03_patch_passive_first_ib.qpspec", {{"connect_rnr_retry", "1"}}, 0},
  };
  for (const Case& k : cases) {
    frontend::Spec spec;
    spec.read(k.file, {});
    lang::Compiled compiled = spec.compile(k.params);
    for (bool symbolic : {false, true}) {
      Counts c;
      Mode mode;
      mode.symbolic = symbolic;
      mode.past_violations = true;
      compare(*compiled.model, k.file, 100000, c, mode);
      MESSAGE(fmt::format("{} ({}): {} states past violations, {} enabled, {} failing", k.file,
                          symbolic ? "symbolic" : "constant", c.states, c.enabled, c.failures));
      CHECK(c.enabled > 0);
    }
    if (k.random == 0) continue;
    Counts c;
    Mode mode;
    mode.random_states = k.random;
    compare(*compiled.model, k.file, 0, c, mode);
    MESSAGE(fmt::format("{}: {} random well-formed states, {} enabled, {} failing", k.file, c.states, c.enabled,
                        c.failures));
    CHECK(c.failures > 0);
  }
}

// Member 1 of a family as the engines see it: member 0's model with the differing constants selected by a
// parameter index (symbolic::check), against member 1's own interpreter, on every state past violations.
TEST_CASE("the Z3 encoder of a family (symbolic parameter) does what each member's interpreter does") {
  auto spec = symbolic::load_spec("spec/03_patch_passive_first_ib.qpspec", {}, {}, {{"connect_rnr_retry", "0,1"}});
  symbolic::Aligned aligned = symbolic::align_family(spec->family);
  REQUIRE(!aligned.constants.empty());
  for (int member = 0; member < 2; ++member) {
    for (bool symbolic : {false, true}) {
      Counts c;
      Mode mode{symbolic, true, &spec->family.members[0]->model(), &aligned, member};
      compare(spec->family.members[member]->model(), fmt::format("spec 03, connect_rnr_retry member {}", member),
              100000, c, mode);
      CHECK(c.states == (member == 0 ? 125u : 209u));  // with every invariant ignored, as `verify` counts them
    }
  }
}

TEST_CASE("the Z3 encoder does what the interpreter does, action by action, on every corpus spec's reachable states") {
  Counts total;
  size_t specs = 0;
  std::vector<fs::path> files;
  for (const char* dir : {"spec", "tests/corpus"}) {
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".qpspec") files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    {
      frontend::Spec spec;
      spec.read(f.string(), {});
      lang::Compiled compiled = spec.compile(header_params(f));
      Counts c;
      compare(*compiled.model, f.string(), 400, c);
      ++specs;
      MESSAGE(fmt::format("{}: {} states, {} (state, action) pairs, {} enabled, {} failing", f.string(), c.states,
                          c.actions, c.enabled, c.failures));
      total.states += c.states;
      total.actions += c.actions;
      total.enabled += c.enabled;
      total.failures += c.failures;
    }
  }
  CHECK(specs >= 25);
  // the comparison saw enabled steps and failing steps (an illegal post, an assertion, a runtime error)
  CHECK(total.enabled > 1000);
  CHECK(total.failures > 0);
}

TEST_CASE("the Z3 encoder does what the interpreter does on every error path") {
  // Every runtime error of docs/language.md (a store out of range, an index out of range, a push onto a full queue, a
  // pop and a head of an empty queue, division by zero, overflow, a function argument or result out of range, an
  // indexed enum constant out of range), an assertion, a fail and a require on the path, each reachable.
  auto c = testing::compile(R"(
    param k: 1..2 = 2;
    type C = 0..k-1;
    type Ep = enum { ACTIVE[C], PASSIVE[C] };
    type M = enum { A, B };
    var q: queue[1] of M;
    var x: 0..3;
    var big: 0..1073741824 = 1073741824;
    var arr: array[0..1] of 0..3;
    var e: Ep;
    var i: 0..3;
    fn half(v: 0..2): 0..1 = v / 2 + v % 2;
    fn less(v: 0..3): 0..1 = v - 1;
    rule store when x < 3 { x = x + 2; }
    rule grow_i { i = (i + 1) % 4; }
    rule index_it { arr[i] = 1; }
    rule push_it { push(q, A); }
    rule pop_it { pop(q); }
    rule head_it { if head(q) == A { x = 0; } }
    rule divide { x = 3 / (x - 1); }
    rule overflow when x == 3 { big = (big * big * big) % 2; }
    rule fn_arg { x = half(i); }
    rule fn_result { x = less(i); }
    rule enum_index { e = PASSIVE[i]; }
    rule asserting { assert i != 2 i_not_2 "i reached 2"; }
    rule failing when i == 3 && x == 1 { fail x_and_i "i is 3 and x is 1"; }
    rule requiring { require x != 2; x = 1; }
  )");
  Counts counts;
  compare(*c->compiled.model, "error paths", 5000, counts);
  CHECK(counts.states > 100);
  for (const char* m : {"head of an empty queue", "push onto the full queue q (capacity 1)", "pop from the empty queue q",
                        "i reached 2", "i is 3 and x is 1", "division by zero", "index 2 out of range 0..1",
                        "integer overflow (results must fit in 64 bits)",
                        "argument 1 of PASSIVE() is 3, out of range 0..1 (0..1 is set by param k = 2: raise it with --param k=N)",
                        "argument 1 of half() is 3, out of range 0..2", "less() returned -1, out of its result type 0..1",
                        "value 4 out of range 0..3 for the assignment to x"}) {
    std::string seen;
    for (const std::string& f : counts.failure_messages) seen += "\n  " + f;
    INFO(std::string(m), " among:", seen);
    CHECK(counts.failure_messages.count(m));
  }
}

}  // namespace
}  // namespace qpcheck
