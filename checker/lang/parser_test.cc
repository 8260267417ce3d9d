#include "checker/lang/parser.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

namespace qpcheck::lang {
namespace {

std::vector<Decl*> parse_text(SourceManager& sm, Ast& ast, const std::string& text) {
  return parse_file(sm, sm.add("t.qpspec", text), ast);
}

std::string parse_error(const std::string& text) {
  SourceManager sm;
  Ast ast;
  try {
    parse_text(sm, ast, text);
  } catch (const SpecError& e) {
    return sm.location(e.diagnostics()[0].span) + ": " + e.what();
  }
  return "no error";
}

TEST_CASE("parser: every declaration form") {
  SourceManager sm;
  Ast ast;
  auto d = parse_text(sm, ast, R"(
    import "lib/x.qpspec";
    param n: 0..7 = 3;
    const K = 2;
    type E = enum { A, B };
    var v: array[E] of queue[2] of 0..3;
    fn f(a: 0..3): bool = a > 1;
    proc p(e: E) verbs "ibv_post_recv" { require v[e] != v[e]; }
    process q[i in 0..1] { end idle: await true; }
    rule r(e: E) verbs "fabric" when true { skip; }
    invariant inv: forall e in E: len(v[e]) <= 2;
  )");
  REQUIRE(d.size() == 10);
  CHECK(d[0]->kind == DeclKind::kImport);
  CHECK(d[0]->path == "lib/x.qpspec");
  CHECK(d[1]->kind == DeclKind::kParam);
  CHECK(d[4]->type->kind == TypeKind::kArray);
  CHECK(d[4]->type->elem->kind == TypeKind::kQueue);
  CHECK(d[6]->verbs == "ibv_post_recv");
  CHECK(d[7]->index.name == "i");
  CHECK(d[7]->body[0]->kind == StmtKind::kLabel);
  CHECK(d[7]->body[0]->end_label);
  CHECK(d[8]->params.size() == 1);
  CHECK(d[8]->guard != nullptr);
  CHECK(d[9]->value->kind == ExprKind::kForall);
}

TEST_CASE("parser: precedence: implies < or < and < equality < relational < additive < multiplicative") {
  SourceManager sm;
  Ast ast;
  auto d = parse_text(sm, ast, "invariant i: a || b && c == 1 + 2 * 3 => d;");
  const Expr* e = d[0]->value;
  REQUIRE(e->kind == ExprKind::kBinary);
  CHECK(e->binop == BinOp::kImplies);
  CHECK(e->a->binop == BinOp::kOr);
  CHECK(e->a->b->binop == BinOp::kAnd);
  CHECK(e->a->b->b->binop == BinOp::kEq);
  CHECK(e->a->b->b->b->binop == BinOp::kAdd);
  CHECK(e->a->b->b->b->b->binop == BinOp::kMul);
}

TEST_CASE("parser: quantifiers may stand as the right operand of => && ||") {
  SourceManager sm;
  Ast ast;
  auto d = parse_text(sm, ast, "invariant i: a => exists c in 0..3: c == 1 || b;");
  const Expr* e = d[0]->value;
  REQUIRE(e->binop == BinOp::kImplies);
  CHECK(e->b->kind == ExprKind::kExists);
  CHECK(e->b->a->binop == BinOp::kOr);  // the body extends as far right as possible
}

TEST_CASE("parser: statements: labels, if/else if, while, choose/or, goto, when, atomic") {
  SourceManager sm;
  Ast ast;
  auto d = parse_text(sm, ast, R"(process p {
    l: if a { x = 1; } else if b { x = 2; } else { x = 3; }
    while true { choose { await a; } or { when b { x = 1; } } or { atomic { x = 2; } } }
    goto l;
  })");
  const auto& body = d[0]->body;
  REQUIRE(body.size() == 3);
  CHECK(body[0]->kind == StmtKind::kLabel);
  CHECK(body[0]->body[0]->kind == StmtKind::kIf);
  CHECK(body[0]->body[0]->else_body[0]->kind == StmtKind::kIf);
  CHECK(body[1]->body[0]->alternatives.size() == 3);
  CHECK(body[2]->kind == StmtKind::kGoto);
}

TEST_CASE("parser: matrix and expect declarations; matrix and expect stay usable as names elsewhere") {
  SourceManager sm;
  Ast ast;
  auto d = parse_text(sm, ast,
                      "var expect: bool;\n"
                      "matrix { transport in { IB, IWARP }; rnr_retry = -1; }\n"
                      "expect deadlock: violated when transport in { IB }, rnr_retry = 7;\n"
                      "expect x: holds;\n");
  REQUIRE(d.size() == 4);
  CHECK(d[0]->name.name == "expect");
  REQUIRE(d[1]->kind == DeclKind::kMatrix);
  REQUIRE(d[1]->values.size() == 2);
  CHECK(d[1]->values[0].param.name == "transport");
  CHECK(d[1]->values[0].values.size() == 2);
  CHECK(d[1]->values[0].values[1].name == "IWARP");
  CHECK(d[1]->values[1].values[0].name == "-1");
  CHECK(sm.location(d[1]->values[1].values[0].span) == "t.qpspec:2:50");
  REQUIRE(d[2]->kind == DeclKind::kExpect);
  CHECK(d[2]->name.name == "deadlock");
  CHECK(d[2]->verdict.name == "violated");
  CHECK(d[2]->values.size() == 2);
  CHECK(d[3]->values.empty());
}

TEST_CASE("parser: syntax errors name the position and what was expected") {
  CHECK(parse_error("var x: bool") == "t.qpspec:1:12: expected ';' after variable declaration");
  CHECK(parse_error("process p { x = ; }") == "t.qpspec:1:17: expected an expression, found ';'");
  CHECK(parse_error("banana") ==
        "t.qpspec:1:1: expected a declaration (import, param, set, const, type, var, fn, proc, process, rule, "
        "invariant, liveness, fair, symmetric, matrix, expect, disable, check, retired or override), found 'banana'");
  CHECK(parse_error("matrix { n: 1; }") == "t.qpspec:1:11: expected 'in { V, ... }' or '= V' after the parameter name, "
                                          "found ':'");
  CHECK(parse_error("expect p violated;") == "t.qpspec:1:10: expected ':', found 'violated'");
  CHECK(parse_error("process p { x = 1; ") == "t.qpspec:1:20: expected '}', found end of file");
  CHECK(parse_error("param n: 0..3;") == "t.qpspec:1:14: expected '=' (a parameter needs a default value), found ';'");
  CHECK(parse_error("process p { 3; }") == "t.qpspec:1:13: expected a statement (an assignment 'x = e;' or a call 'p(...);')");
}

TEST_CASE("parser: hostile nesting is an error, not a stack overflow") {
  std::string deep = "invariant i: " + std::string(100000, '(') + "true" + std::string(100000, ')') + ";";
  CHECK(parse_error(deep) == "t.qpspec:1:270: nesting deeper than 512 levels");
  std::string chain = "const C = 1" + std::string();
  for (int i = 0; i < 30000; ++i) chain += " + 1";
  CHECK(parse_error(chain + ";").find("expression more than 1000 levels deep; split it up") != std::string::npos);
  std::string nots = "invariant i: " + std::string(100000, '!') + "true;";
  CHECK(parse_error(nots).find("nesting deeper than 512 levels") != std::string::npos);
  // `=>` is right-associative: each arrow is one level of recursion (7,200 of them crashed the parser).
  std::string implies = "invariant i: true";
  for (int i = 0; i < 7200; ++i) implies += " => true";
  CHECK(parse_error(implies + ";") == "t.qpspec:1:57617: expression more than 1000 levels deep; split it up");
  std::string ternary = "const C = true";
  for (int i = 0; i < 7200; ++i) ternary += " ? 1 : true";
  CHECK(parse_error(ternary + " ? 1 : 2;").find("nesting deeper than 512 levels") != std::string::npos);
}

// The first diagnostic of load_program on `main` (written to a fresh folder), or "no error".
std::string load_error(const std::string& main) {
  namespace fs = std::filesystem;
  const char* t = std::getenv("TEST_TMPDIR");
  fs::path dir = fs::path(t ? t : "/tmp") / "parser_test_imports";
  fs::remove_all(dir);
  fs::create_directories(dir / "folder.qpspec");
  ::mkfifo((dir / "fifo.qpspec").c_str(), 0600);
  std::ofstream(dir / "main.qpspec") << main;
  SourceManager sm;
  Ast ast;
  try {
    load_program(sm, ast, (dir / "main.qpspec").string(), lib_dirs_only({(dir / "lib").string()}));
  } catch (const SpecError& e) {
    return e.diagnostics()[0].message;
  }
  return "no error";
}

TEST_CASE("import: a folder, a device or a FIFO is named as such; a long path is shown once, shortened") {
  CHECK(load_error("import \"folder.qpspec\";").find("folder.qpspec\": it is a folder, not a spec file") !=
        std::string::npos);
  CHECK(load_error("import \"fifo.qpspec\";").find("fifo.qpspec\": it is a FIFO, not a spec file") != std::string::npos);
  CHECK(load_error("import \"/dev/zero\";") == "cannot import \"/dev/zero\": it is a character device, not a spec file");
  std::string missing = load_error("import \"" + std::string(1 << 20, 'a') + "\";");
  CHECK(missing.rfind("cannot find imported file \"aaaa", 0) == 0);
  CHECK(missing.find("... (1048576 bytes)") != std::string::npos);
  CHECK(missing.size() < 1000);
  CHECK(load_error("import \"no/such.qpspec\";").find("; looked in:\n    ") != std::string::npos);
}

TEST_CASE("diagnostics: control characters of the source line are shown as '?', the caret in its column") {
  SourceManager sm;
  int f = sm.add("esc.qpspec", "x /* \x1b[2J */ oops");
  std::string d = format_diagnostic(sm, Diagnostic{Severity::kError, Span{f, 13, 17}, "bad"});
  CHECK(d == "esc.qpspec:1:14: error: bad\n  x /* ?[2J */ oops\n               ^~~~\n");
}

TEST_CASE("diagnostics: a long source line is shown as a window around the caret") {
  SourceManager sm;
  std::string line = std::string(1000, ' ') + "oops";
  int f = sm.add("long.qpspec", line);
  std::string text = format_diagnostic(sm, Diagnostic{Severity::kError, Span{f, 1000, 1004}, "here"});
  CHECK(text.find("long.qpspec:1:1001: error: here\n  ...") == 0);
  CHECK(text.size() < 400);
  CHECK(text.find("^~~~") != std::string::npos);
}

}  // namespace
}  // namespace qpcheck::lang
