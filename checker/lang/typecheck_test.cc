#include "checker/lang/typecheck.h"

#include <doctest/doctest.h>

#include "tests/support/compile.h"

namespace qpcheck::lang {
namespace {

using qpcheck::testing::compile;
using qpcheck::testing::first_error;

const char* kPrelude = "type E = enum { A, B };\nvar x: 0..3;\nvar b: bool;\nvar q: queue[2] of E;\n";

std::string err(const std::string& body) { return first_error(std::string(kPrelude) + body); }

TEST_CASE("typecheck: each diagnostic kind names file:line:col") {
  CHECK(err("process p { y = 1; }") == "test.qpspec:5:13: error: unknown name 'y'");
  CHECK(err("var z: T;") == "test.qpspec:5:8: error: unknown type 'T'");
  CHECK(err("process p { x = b; }") ==
        "test.qpspec:5:17: error: type mismatch: this assignment expects 0..3, but the expression has type bool");
  CHECK(err("process p { x = 4; }") == "test.qpspec:5:17: error: value 4 is out of range 0..3 for this assignment");
  CHECK(err("var x: bool;") == "test.qpspec:5:5: error: duplicate declaration of 'x' (first declared at test.qpspec:2:5)");
  CHECK(err("type F = enum { B, C };") ==
        "test.qpspec:5:17: error: duplicate declaration of 'B' (first declared at test.qpspec:1:20)");
  CHECK(err("proc f(e: E) { x = 1; }\nprocess p { f(A, B); }") ==
        "test.qpspec:6:13: error: procedure 'f' takes 1 argument, 2 given");
  CHECK(err("fn g(a: 0..3): bool = a > 1;\ninvariant i: g();") ==
        "test.qpspec:6:14: error: function 'g' takes 1 argument, 0 given");
  CHECK(err("process p { x = 1; }\ninvariant i: p@nowhere;") ==
        "test.qpspec:6:16: error: process 'p' has no label 'nowhere' (labels: none; or end)");
  CHECK(err("process p { goto nowhere; }") == "test.qpspec:5:18: error: goto to unknown label 'nowhere'");
  CHECK(err("process p { break; }") == "test.qpspec:5:13: error: break outside a while loop");
  CHECK(err("process p { push(x, A); }") ==
        "test.qpspec:5:18: error: push() needs a queue, but the argument has type 0..3");
  CHECK(err("process p { require b; }") ==
        "test.qpspec:5:13: error: require is only allowed in atomic bodies (proc, rule, when, atomic); a process "
        "uses await");
  CHECK(err("proc f() { await b; }\nprocess p { f(); }") ==
        "test.qpspec:5:12: error: await is not allowed inside a procedure: its body runs as one atomic step");
  CHECK(err("var a: array[E] of bool;\nprocess p { a[1] = true; }") ==
        "test.qpspec:6:15: error: type mismatch: the array index expects E, but the expression has type int");
  CHECK(err("var r: 5..3;") == "test.qpspec:5:8: error: empty range 5..3: the upper bound is below the lower");
  CHECK(err("proc f() { f(); }") ==
        "test.qpspec:5:12: error: procedure 'f' calls itself; procedures may not recurse");
  CHECK(err("invariant i: x;") == "test.qpspec:5:14: error: an invariant must be a bool, but has type 0..3");
  CHECK(err("var v: 0..3 = 9;") == "test.qpspec:5:15: error: value 9 is out of range 0..3 for the initial value of 'v'");
  CHECK(err("process p { while true { } }") ==
        "test.qpspec:5:13: error: this loop can go round without taking a step (add an await or a statement)");
  CHECK(err("invariant i: forall k in 0..2000000000: k >= 0;") ==
        "test.qpspec:5:26: error: a quantifier over 2000000001 values; at most 65536 (it is evaluated in every state)");
  CHECK(err("process p { l: skip;\n  l: skip; }") ==
        "test.qpspec:6:3: error: duplicate label 'l' (first at test.qpspec:5:13)");
  CHECK(first_error("var x: bool;") ==
        "test.qpspec:1:1: error: the spec declares no process and no rule: there is nothing to explore");
}

TEST_CASE("typecheck: depth counting called functions and procedures is bounded, so no later phase overflows") {
  // 300 functions, each 900 levels deep and calling the one before: 270,000 levels for the evaluator, the specialiser
  // and the encoder to recurse through (each function alone is within the parser's 1000 levels).
  std::string fns = "var x: 0..3;\nfn f0(a: 0..3): 0..3 = a;\n";
  for (int k = 1; k < 300; ++k) {
    fns += "fn f" + std::to_string(k) + "(a: 0..3): 0..3 = f" + std::to_string(k - 1) + "(a)";
    for (int i = 0; i < 900; ++i) fns += " + 0";
    fns += ";\n";
  }
  fns += "process p { x = 1; }\ninvariant i: f299(x) >= 0;\n";
  std::string e = first_error(fns);
  CHECK(e.find("error: nested more than 2048 levels deep counting the functions and procedures it calls") !=
        std::string::npos);
  CHECK(e.rfind("test.qpspec:5:", 0) == 0);  // in f3, the first function past the bound
  // Procedures: 600 levels of calls, each inside 4 nested ifs.
  std::string procs = "var x: 0..3;\nproc q0() { x = 1; }\n";
  for (int k = 1; k < 600; ++k) {
    procs += "proc q" + std::to_string(k) + "() { if x == 0 { if x == 0 { if x == 0 { q" + std::to_string(k - 1) +
             "(); } } } }\n";
  }
  procs += "process p { q599(); }\n";
  CHECK(first_error(procs).find("nested more than 2048 levels deep") != std::string::npos);
  // Deep but within the bound: compiles.
  CHECK(first_error("var x: 0..3;\nfn f0(a: 0..3): 0..3 = a;\nfn f1(a: 0..3): 0..3 = f0(f0(a));\n"
                    "process p { x = f1(1); }\n") == "");
}

TEST_CASE("typecheck: duplicate invariants are found among many (one lookup each)") {
  std::string text = "var x: bool;\nprocess p { x = true; }\n";
  for (int i = 0; i < 50000; ++i) text += "invariant i" + std::to_string(i) + ": true;\n";
  CHECK(first_error(text) == "");
  CHECK(first_error(text + "invariant i17: x;\n") ==
        "test.qpspec:50003:11: error: duplicate invariant 'i17' (first declared at test.qpspec:20:11)");
}

TEST_CASE("typecheck: --param overrides are type- and range-checked; unknown names are usage errors") {
  const std::string spec = "type T = enum { IB, IWARP };\nparam t: T = IB;\nparam r: 0..7 = 0;\nprocess p { skip; }\n";
  auto c = compile(spec, {{"t", "IWARP"}, {"r", "7"}});
  REQUIRE(c->compiled.model->params.size() == 2);
  CHECK(c->compiled.model->params[0].second == "IWARP");
  CHECK(c->compiled.model->params[1].second == "7");
  auto usage = [&](const ParamOverrides& p) {
    try {
      compile(spec, p);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(usage({{"r", "8"}}) == "--param r=8: value out of range 0..7");
  CHECK(usage({{"r", "x"}}) == "--param r=x: expected an integer in 0..7");
  CHECK(usage({{"t", "ROCE"}}) == "--param t=ROCE: expected one of IB, IWARP");
  CHECK(usage({{"rnr", "1"}}) == "unknown parameter 'rnr' in --param rnr=1 (the spec declares: t, r)");
}

TEST_CASE("typecheck: a spec's own `set` lines choose parameters; --param overrides them") {
  const std::string lib = "type T = enum { IB, IWARP };\nparam t: T = IB;\nparam r: 0..7 = 7;\nvar v: 0..r;\n";
  auto c = compile(lib + "set t = IWARP;\nset r = 2;\nprocess p { skip; }\n");
  CHECK(c->compiled.model->params[0].second == "IWARP");
  CHECK(c->compiled.model->params[1].second == "2");
  CHECK(c->compiled.model->slots[0].hi == 2);  // the type 0..r saw the set value
  auto o = compile(lib + "set r = 2;\nprocess p { skip; }\n", {{"r", "5"}});
  CHECK(o->compiled.model->params[1].second == "5");
  CHECK(first_error(lib + "set r = 9;\nprocess p { skip; }\n") ==
        "test.qpspec:5:9: error: set r = 9: value out of range 0..7");
  CHECK(first_error(lib + "set rr = 1;\nprocess p { skip; }\n") ==
        "test.qpspec:5:5: error: 'set rr': the spec declares no parameter 'rr'");
  CHECK(first_error(lib + "set r = 1;\nset r = 2;\nprocess p { skip; }\n") ==
        "test.qpspec:6:1: error: parameter 'r' is already set at test.qpspec:5:1");
}

TEST_CASE("typecheck: unreachable statements are warnings, not errors") {
  auto c = compile("var x: 0..3;\nprocess p { l: x = 1; goto l; x = 2; }\n");
  REQUIRE(c->compiled.warnings.size() == 1);
  CHECK(c->compiled.warnings[0].severity == Severity::kWarning);
  CHECK(c->sources.location(c->compiled.warnings[0].span) == "test.qpspec:2:31");
}

TEST_CASE("typecheck: control statements fold into the guards of the next step") {
  // if/else: two edges from the start, each one step; the while loop head is one program counter.
  auto c = compile("var x: 0..3;\nvar b: bool;\nprocess p { while true { if b { x = 1; } else { x = 2; } } }\n");
  const model::ProcessInstance& p = c->compiled.model->processes.at(0);
  REQUIRE(p.edges.size() == 1);  // only the loop head is ever stored
  CHECK(p.edges[0].size() == 2);
  CHECK(p.edges[0][0].conds.size() == 2);  // while condition and the if condition
}

TEST_CASE("typecheck: an endpoint argument is ACTIVE or PASSIVE, in either order, and nothing else") {
  auto e = [](const std::string& text) { return first_error(text); };
  CHECK(e("type Ep = enum { PASSIVE, ACTIVE };\nproc p(e: Ep) replay create_qp(e) { skip; }\nprocess q { p(ACTIVE); }") ==
        "");
  CHECK(e("type C = 0..1;\ntype Ep = enum { PASSIVE[C], ACTIVE[C] };\nproc p(e: Ep) replay create_qp(e) { skip; }\n"
          "process q { p(ACTIVE[1]); }") == "");
  CHECK(e("type Ep = enum { ACTIVE, PASSIVE, THIRD };\nproc p(e: Ep) replay create_qp(e) { skip; }\n") ==
        "test.qpspec:2:32: error: argument 1 of 'create_qp' is an endpoint: enum Ep has constant THIRD, but an "
        "endpoint is ACTIVE or PASSIVE (replay drives no other)");
}

TEST_CASE("typecheck: deadlock and runtime_error name built-in properties, no invariant or fail/assert property") {
  CHECK(err("invariant deadlock: x < 3;") ==
        "test.qpspec:5:11: error: 'deadlock' is a built-in property (deadlock, runtime_error): an invariant needs a "
        "name of its own");
  CHECK(err("process p { fail runtime_error \"no\"; }") ==
        "test.qpspec:5:18: error: 'runtime_error' is a built-in property (deadlock, runtime_error): a fail property "
        "needs a name of its own");
  CHECK(err("process p { assert x < 3 deadlock; }") ==
        "test.qpspec:5:26: error: 'deadlock' is a built-in property (deadlock, runtime_error): an assert property "
        "needs a name of its own");
  CHECK(err("invariant deadlocked: x < 3;\nprocess p { assert x < 3 errors; }") == "");
}

TEST_CASE("typecheck: replay clauses are checked against the vocabulary") {
  const std::string pre = "type Ep = enum { ACTIVE, PASSIVE };\ntype Ev = enum { ESTABLISHED, HELLO };\n"
                          "type St = enum { IBV_WC_SUCCESS, NO_COMPLETION };\nparam r: 0..7 = 7;\n";
  auto e = [&](const std::string& decl) { return first_error(pre + decl); };
  CHECK(e("proc p(e: Ep) replay post_recv(e, 2) { skip; }\nprocess q { p(ACTIVE); }") == "");
  CHECK(e("proc p(e: Ep) replay connect(e, r), create_qp(e) { skip; }\nprocess q { p(ACTIVE); }") == "");
  CHECK(e("proc p(e: Ep) replay teleport(e) { skip; }").rfind(
            "test.qpspec:5:22: error: unknown replay operation 'teleport' (known: create_id, resolve_addr, resolve_route, "
            "listen, create_qp,", 0) == 0);
  CHECK(e("proc p(e: Ep) replay connect(e, r, 1) { skip; }") ==
        "test.qpspec:5:22: error: replay operation 'connect' takes 2 or 4 or 5 or 6 arguments, found 3");
  CHECK(e("proc p(e: Ep) replay post_recv(e) { skip; }") ==
        "test.qpspec:5:22: error: replay operation 'post_recv' takes 2 arguments, found 1");
  CHECK(e("proc p(e: Ep) replay connect(e, 9) { skip; }") ==
        "test.qpspec:5:33: error: argument 2 of 'connect' is a conn_param retry count: expected an integer in 0..7, "
        "found 9");
  CHECK(e("proc p(n: 0..3) replay create_qp(n) { skip; }") ==
        "test.qpspec:5:34: error: argument 1 of 'create_qp' is an endpoint: expected an enum with constants ACTIVE and "
        "PASSIVE, found 0..3");
  CHECK(e("proc p(e: Ep, v: Ev) replay get_cm_event(e, v) { skip; }") ==
        "test.qpspec:5:45: error: enum Ev has constant HELLO, not an RDMA_CM_EVENT_* name (rdma_cma.h)");
  CHECK(e("proc p(e: Ep) replay expect_send_wc(e, NO_COMPLETION) { skip; }") ==
        "test.qpspec:5:40: error: NO_COMPLETION is not an IBV_WC_* status (verbs.h)");
  CHECK(e("var v: Ep;\nproc p(e: Ep) replay create_qp(v) { skip; }") ==
        "test.qpspec:6:32: error: a replay argument must be a parameter of the procedure, a param, a const or a "
        "constant (it is evaluated when the trace is written)");
  // the v2 argument kinds
  const std::string v2 = "type Q = enum { NONE, RESET, INIT, RTR, RTS, SQD, SQE, ERR };\n"
                         "type W = enum { IBV_WR_SEND, IBV_WR_RDMA_READ };\ntype O = enum { IBV_WC_SEND, IBV_WC_RECV };\n";
  CHECK(e(v2 + "proc p(e: Ep, w: W, o: O) replay post_send(e, w), modify_qp(e, RTS), poll_send(e, IBV_WC_SUCCESS, o), "
               "connect(e, r, 1, 255), create_qp_srq(e, 2), post_srq_recv(0, 3) { skip; }\nprocess q { p(ACTIVE, "
               "IBV_WR_SEND, IBV_WC_SEND); }") == "");
  CHECK(e(v2 + "proc p(e: Ep) replay connect(e, r, 256, 0) { skip; }") ==
        "test.qpspec:8:36: error: argument 3 of 'connect' is a conn_param initiator_depth / responder_resources: "
        "expected an integer in 0..255, found 256");
  CHECK(e(v2 + "proc p(e: Ep) replay modify_qp(e, NONE) { skip; }") ==
        "test.qpspec:8:35: error: NONE is not a QP state (RESET, INIT, RTR, RTS, SQD, SQE, ERR: enum ibv_qp_state)");
  CHECK(e(v2 + "proc p(e: Ep, q: Q) replay post_send(e, q) { skip; }") ==
        "test.qpspec:8:41: error: enum Q has constant NONE, not an IBV_WR_* opcode that replay posts (IBV_WR_SEND, "
        "IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_SEND_WITH_INV, IBV_WR_LOCAL_INV, IBV_WR_BIND_MW)");
  // memory regions: an integer 0..15, a constant or a parameter whose type lies within it
  CHECK(e(v2 + "proc p(e: Ep, w: W, m: 0..15) replay reg_mr(e, m), reg_mr_local(e, 15), dereg_mr(e, m), "
               "post_send(e, w, m), post_send_unsignaled(e, w), post_send_unsignaled(e, w, 0), "
               "expect_recv(e, IBV_WC_SUCCESS, m), poll_recv(e, IBV_WC_SUCCESS, 0), alloc_mw(e, m) { skip; }\n"
               "process q { p(ACTIVE, IBV_WR_SEND, 3); }") == "");
  CHECK(e(v2 + "proc p(e: Ep, m: 0..16) replay reg_mr(e, m) { skip; }") ==
        "test.qpspec:8:42: error: argument 2 of 'reg_mr' is a memory region of an endpoint: expected an integer in "
        "0..15, found 0..16");
  CHECK(e(v2 + "proc p(e: Ep) replay dereg_mr(e, 16) { skip; }") ==
        "test.qpspec:8:34: error: argument 2 of 'dereg_mr' is a memory region of an endpoint: expected an integer in "
        "0..15, found 16");
  CHECK(e(v2 + "proc p(e: Ep) replay expect_recv(e, IBV_WC_SUCCESS, 0, 1) { skip; }") ==
        "test.qpspec:8:22: error: replay operation 'expect_recv' takes 1 or 2 or 3 arguments, found 4");
  // `replay` stays an ordinary name elsewhere
  CHECK(e("var replay: bool;\nprocess q { replay = true; }") == "");
}

TEST_CASE("typecheck: indexed enum constants are connection-major, render with their index, and index() inverts them") {
  const std::string pre = "param k: 1..3 = 2;\ntype C = 0..k-1;\ntype Ep = enum { ACTIVE[C], PASSIVE[C] };\n";
  auto c = compile(pre + "var e: Ep = PASSIVE[1];\nvar i: C;\nprocess p { i = index(e); e = ACTIVE[i]; }\n");
  const model::Model& m = *c->compiled.model;
  const model::Type* ep = m.slots.at(0).type;
  REQUIRE(ep->kind == model::TypeKind::kEnum);
  CHECK(ep->constants == std::vector<std::string>{"ACTIVE[0]", "PASSIVE[0]", "ACTIVE[1]", "PASSIVE[1]"});
  CHECK(ep->families == std::vector<std::string>{"ACTIVE", "PASSIVE"});
  CHECK(m.initial.at(0) == 3);  // PASSIVE[1]
  // one value in the index type: the constants render (and number) as a plain enum of the family names would
  auto one = compile(pre + "var e: Ep = PASSIVE;\nprocess p { e = ACTIVE; }\n", {{"k", "1"}});
  CHECK(one->compiled.model->slots.at(0).type->constants == std::vector<std::string>{"ACTIVE", "PASSIVE"});
  CHECK(one->compiled.model->initial.at(0) == 1);
}

TEST_CASE("typecheck: a fail or assert message shows params and consts written {NAME}") {
  const std::string pre = "type T = enum { IB, IWARP };\nparam t: T = IWARP;\nparam depth: 1..8 = 4;\nconst K = 3;\n"
                          "var x: 0..8;\n";
  auto c = compile(pre + "process p { fail full \"raise depth (now {depth}, {t}, K={K}) {{literal}} {not a name} {\"; }\n");
  const model::Step& step = *c->compiled.model->processes.at(0).edges.at(0).at(0).step;
  REQUIRE(step.body.size() == 1);
  CHECK(step.body[0]->message == "raise depth (now 4, IWARP, K=3) {literal} {not a name} {");
  auto d = compile(pre + "process p { assert x < 8 \"x reached {depth}\"; }\n", {{"depth", "8"}});
  CHECK(d->compiled.model->processes.at(0).edges.at(0).at(0).step->body.at(0)->message == "x reached 8");
  CHECK(first_error(pre + "process p { fail full \"x is {x}\"; }\n") ==
        "test.qpspec:6:13: error: '{x}' in a message: only a param or a const can be shown (its value is fixed when "
        "the spec is compiled)");
}

TEST_CASE("typecheck: indexed enum constants are checked") {
  const std::string pre = "type C = 0..1;\ntype Ep = enum { ACTIVE[C], PASSIVE[C] };\nvar e: Ep;\n";
  auto e = [&](const std::string& decl) { return first_error(pre + decl); };
  CHECK(e("process p { e = ACTIVE; }") ==
        "test.qpspec:4:17: error: 'ACTIVE' is a family of enum constants indexed by 0..1: write ACTIVE[i]");
  CHECK(e("process p { e = ACTIVE[2]; }") ==
        "test.qpspec:4:24: error: value 2 is out of range 0..1 for the index of 'ACTIVE'");
  CHECK(e("var x: 0..1 = index(1);\nprocess p { skip; }") ==
        "test.qpspec:4:21: error: index() needs a value of an enum with indexed constants (enum { F[T], ... }), "
        "found int");
  CHECK(first_error("type F = enum { A[0..1], B };\nprocess p { skip; }") ==
        "test.qpspec:1:26: error: enum constant 'B': the constants of an enum are either all plain or all indexed "
        "(NAME[TYPE]) by the same type");
  CHECK(first_error("type F = enum { A[0..1], B[0..2] };\nprocess p { skip; }") ==
        "test.qpspec:1:28: error: enum constant 'B' is indexed by 0..2, but 'A' by 0..1: the families of an enum share "
        "one index type");
  CHECK(first_error("type G = enum { X };\ntype F = enum { A[G] };\nprocess p { skip; }") ==
        "test.qpspec:2:19: error: the index of enum constant 'A' must be an integer range or bool, found G");
  CHECK(e("proc q(p: Ep) replay create_qp(p) { skip; }\nprocess p { q(ACTIVE[1]); }") == "");
}

}  // namespace
}  // namespace qpcheck::lang

#include <filesystem>
#include <fstream>

#include "checker/frontend/frontend.h"
#include "checker/lang/parser.h"

namespace qpcheck::lang {
namespace {

namespace fs = std::filesystem;

// Files of a program on disk (imports are resolved relative to the importing file, as for a user's specs).
struct Files {
  fs::path dir;
  Files() {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir = fs::path(tmp ? tmp : "/tmp") / fs::path("modules_" + std::to_string(counter++));
    fs::remove_all(dir);
    fs::create_directories(dir / "lib");
  }
  void add(const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; }
  static inline int counter = 0;
};

struct Loaded {
  frontend::Spec spec;
  Compiled compiled;
  std::string error;  // first diagnostic, rendered like first_error; or the UsageError's message
};

std::unique_ptr<Loaded> load(const Files& f, const std::string& main, const ParamOverrides& params = {}) {
  auto l = std::make_unique<Loaded>();
  try {
    l->spec.read((f.dir / main).string(), {});
    l->compiled = l->spec.compile(params);
  } catch (const SpecError& e) {
    const Diagnostic& d = e.diagnostics().front();
    l->error = fs::path(l->spec.sources().location(d.span)).filename().string() + ": error: " + d.message;
  } catch (const UsageError& e) {
    l->error = e.what();
  }
  return l;
}

TEST_CASE("modules: a spec's param may share a library's name; each is set by its own name") {
  Files f;
  f.add("lib/net.qpspec", "param depth: 1..4 = 2;\nvar used: 0..depth;\nretired max_buffers \"renamed to depth\";\n");
  f.add("main.qpspec", "import \"lib/net.qpspec\";\nparam depth: 0..9 = 5;\nset net::depth = 3;\n"
                       "var x: 0..depth;\nprocess p { x = depth; used = net::depth; }\n");
  auto l = load(f, "main.qpspec");
  REQUIRE(l->error == "");
  const auto& params = l->compiled.model->params;
  REQUIRE(params.size() == 2);
  CHECK(params[0] == std::make_pair(std::string("net::depth"), std::string("3")));  // the library's, qualified
  CHECK(params[1] == std::make_pair(std::string("depth"), std::string("5")));       // the main spec's, plain
  // Units (trace names) of vars are plain unless two files declare one by that name.
  CHECK(l->compiled.model->units[0].name == "used");
  // --param: the plain name is the main spec's; the library's is written with its module.
  auto a = load(f, "main.qpspec", {{"depth", "7"}, {"net::depth", "4"}});
  REQUIRE(a->error == "");
  CHECK(a->compiled.model->params[0].second == "4");
  CHECK(a->compiled.model->params[1].second == "7");
  CHECK(a->compiled.param_targets == std::vector<std::string>{"depth", "net::depth"});
  // A retired name, and a module that does not exist.
  CHECK(load(f, "main.qpspec", {{"max_buffers", "2"}})->error ==
        "--param max_buffers=2: 'max_buffers' is retired (at " + (f.dir / "lib/net.qpspec").string() +
            ":3:9): renamed to depth");
  CHECK(load(f, "main.qpspec", {{"nosuch::depth", "2"}})->error.find("no module 'nosuch'") != std::string::npos);
}

TEST_CASE("modules: an imported name declared by two files that do not import each other is ambiguous only when "
          "used") {
  Files f;
  f.add("lib/a.qpspec", "param depth: 1..4 = 2;\nfn f(): 0..3 = 1;\n");
  f.add("lib/b.qpspec", "param depth: 1..4 = 3;\nfn f(): 0..3 = 2;\n");
  f.add("ok.qpspec", "import \"lib/a.qpspec\";\nimport \"lib/b.qpspec\";\nvar x: 0..3;\n"
                     "process p { x = a::f() + b::f(); }\n");
  auto ok = load(f, "ok.qpspec");
  CHECK(ok->error == "");
  CHECK(ok->compiled.model->params[0].first == "a::depth");
  CHECK(ok->compiled.model->params[1].first == "b::depth");
  f.add("bad.qpspec", "import \"lib/a.qpspec\";\nimport \"lib/b.qpspec\";\nvar x: 0..3;\nprocess p { x = f(); }\n");
  CHECK(load(f, "bad.qpspec")->error ==
        "bad.qpspec:4:17: error: 'f' is ambiguous here: it is declared at " + (f.dir / "lib/a.qpspec").string() +
            ":2:4 (write a::f) and " + (f.dir / "lib/b.qpspec").string() +
            ":2:4 (write b::f), and neither of those files imports the other");
  CHECK(load(f, "ok.qpspec", {{"depth", "1"}})->error.find("--param depth=1: 'depth' is ambiguous here") == 0);
}

TEST_CASE("modules: a file imported through another is seen, and the nearer declaration shadows the farther") {
  Files f;
  f.add("lib/base.qpspec", "fn limit(): 0..3 = 1;\nvar seen: 0..3;\nproc note() { seen = limit(); }\n");
  f.add("lib/mid.qpspec", "import \"base.qpspec\";\nfn limit(): 0..3 = 2;\n");
  f.add("main.qpspec", "import \"lib/mid.qpspec\";\nvar x: 0..3;\nprocess p { note(); x = limit(); }\n"
                       "invariant base_kept: seen != 2;\ninvariant mid_seen: x != 1;\n");
  auto l = load(f, "main.qpspec");
  REQUIRE(l->error == "");
  // mid's limit shadows base's for main (mid imports base), base's own note() keeps base's limit.
  model::ModelSystem sys(*l->compiled.model);
  model::CheckResult r = explore::explore(sys, {});
  CHECK(r.outcome == model::Outcome::kHolds);
  REQUIRE(l->compiled.warnings.size() == 1);
  CHECK(l->compiled.warnings[0].message.rfind("'limit' shadows the function 'limit' of module base", 0) == 0);
}

}  // namespace
}  // namespace qpcheck::lang
