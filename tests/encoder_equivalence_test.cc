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
#include <set>
#include <sstream>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <z3++.h>

#include "checker/model/transition_system.h"
#include "checker/symbolic/encode.h"
#include "checker/lang/parser.h"
#include "checker/lang/typecheck.h"
#include "tests/support/compile.h"

namespace qpcheck {
namespace {

namespace fs = std::filesystem;
using model::ModelSystem;
using model::Violation;

lang::ParamOverrides header_params(const fs::path& file) {
  std::ifstream in(file);
  lang::ParamOverrides params;
  std::string line;
  while (std::getline(in, line) && line.rfind("//", 0) == 0) {
    std::istringstream ss(line.substr(2));
    std::string key, kv;
    ss >> key;
    if (key != "params:") continue;
    while (ss >> kv) params.emplace_back(kv.substr(0, kv.find('=')), kv.substr(kv.find('=') + 1));
  }
  return params;
}

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

void compare(const model::Model& m, const std::string& name, size_t max_states, Counts& counts) {
  ModelSystem sys(m);
  z3::context ctx;
  symbolic::Encoder enc(ctx, m);
  REQUIRE(enc.actions().size() == sys.action_count());
  Reference ref;
  ref.sys = &sys;
  std::set<std::vector<uint64_t>> seen;
  std::deque<std::vector<uint64_t>> queue;
  for (auto& s : sys.initial_states()) {
    if (seen.insert(s).second) queue.push_back(s);
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
    ref.by_action.clear();
    sys.reference_successors(s.data(), ref);
    ++counts.states;
    for (uint32_t a = 0; a < sys.action_count(); ++a) {
      INFO(name, ": state ", counts.states, ", action ", a, " (", sys.describe(s.data(), a, nullptr).actor,
           ")");
      symbolic::Effect eff = enc.action(st, enc.actions()[a]);
      bool ok = value(eff.ok, "ok") != 0;
      bool failed = ok && value(eff.failed, "failed") != 0;
      auto it = ref.by_action.find(a);
      ++counts.actions;
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
        CHECK(value(by->second, "failed_by") == 1);
        continue;
      }
      REQUIRE_MESSAGE(!failed, "the encoder's step fails, the interpreter's does not");
      REQUIRE(eff.next.size() == o.next->size());
      for (size_t i = 0; i < eff.next.size(); ++i) {
        INFO("slot ", i);
        CHECK(value(eff.next[i].e, "successor slot") == (*o.next)[i]);
      }
    }
    std::optional<Violation> inv = sys.check_invariants(s.data());
    std::optional<size_t> first;
    for (size_t i = 0; i < m.invariants.size() && !first; ++i) {
      if (value(enc.invariant_violated(st, i), "invariant_violated") != 0) first = i;
    }
    INFO(name, ": state ", counts.states, " invariants");
    CHECK(first.has_value() == inv.has_value());
    if (first && inv && inv->property != "runtime_error") CHECK(m.invariants[*first].name == inv->property);
    CHECK((value(enc.valid_end(st), "valid_end") != 0) == sys.valid_end(s.data()));
    if (inv) continue;  // a counterexample ends here: its successors are not reachable runs
    for (auto& [a, o] : ref.by_action) {
      if (!o.next || seen.size() >= max_states) continue;
      std::vector<uint64_t> t(sys.state_words());
      sys.layout().pack(*o.next, t.data());
      if (seen.insert(t).second) queue.push_back(std::move(t));
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
      lang::SourceManager sources;
      lang::Ast ast;
      lang::Program program = lang::load_program(sources, ast, f.string(), {});
      lang::Compiled compiled = lang::typecheck(program, sources, header_params(f));
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
                        "argument 3 of PASSIVE() out of range 0..1 (0..1 is set by param k = 2: raise it with --param k=N)",
                        "argument 3 of half() out of range 0..2", "less() returned -1, out of its result type 0..1",
                        "value 4 out of range 0..3 for the assignment to x"}) {
    std::string seen;
    for (const std::string& f : counts.failure_messages) seen += "\n  " + f;
    INFO(std::string(m), " among:", seen);
    CHECK(counts.failure_messages.count(m));
  }
}

}  // namespace
}  // namespace qpcheck
