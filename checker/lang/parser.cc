#include "checker/lang/parser.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "checker/lang/lexer.h"
#include "checker/lang/nesting.h"

namespace qpcheck::lang {

namespace {

Span join(Span a, Span b) { return Span{a.file, a.begin, b.end > a.begin ? b.end : a.end}; }

class Parser {
 public:
  Parser(const SourceManager& sources, int file, Ast& ast) : lexer_(sources, file), ast_(ast) {}

  std::vector<Decl*> file() {
    std::vector<Decl*> out;
    while (!at(Tok::kEof)) out.push_back(decl());
    return out;
  }

 private:
  // The token k ahead (0..3: the grammar needs no more); kEof from the end on. A reference stays valid until that
  // token is taken and four more are read.
  const Token& peek(int k = 0) {
    if (k < count_) [[likely]] return ahead_[(head_ + k) & 3];
    while (count_ <= k && !(count_ > 0 && ahead_[(head_ + count_ - 1) & 3].kind == Tok::kEof)) {
      ahead_[(head_ + count_) & 3] = lexer_.next();
      ++count_;
    }
    return ahead_[(head_ + std::min(k, count_ - 1)) & 3];
  }
  bool at(Tok k) { return peek().kind == k; }
  // Nesting guard: every production that can recurse into itself (expr, unary, type, stmt) takes one level, so
  // recursive descent cannot overflow the stack on hostile input; chains of binary operators are loops (nesting.h).
  struct Nest {
    Parser* p;
    explicit Nest(Parser* parser) : p(parser) {
      if (++p->depth_ > kMaxNesting) {
        throw SpecError(p->peek().span, fmt::format("nesting deeper than {} levels", kMaxNesting));
      }
    }
    ~Nest() { --p->depth_; }
  };

  Token take() {
    Token t = peek();
    if (t.kind != Tok::kEof) {
      head_ = (head_ + 1) & 3;
      --count_;
      prev_ = t.span;
      taken_ = true;
    }
    return t;
  }
  bool accept(Tok k) { if (at(k)) { take(); return true; } return false; }
  // The last token taken (the first token's span before any).
  Span prev_span() { return taken_ ? prev_ : peek().span; }

  [[noreturn]] void fail_expected(const std::string& what) {
    const Token& t = peek();
    std::string found = t.kind == Tok::kEof ? "end of file"
                        : t.kind == Tok::kString ? "a string"
                                                 : fmt::format("'{}'", t.text);
    throw SpecError(t.span, fmt::format("expected {}, found {}", what, found));
  }
  Token expect(Tok k, const char* context = nullptr) {
    if (!at(k)) {
      // A missing ';' is reported right after the previous token, where it belongs.
      if (k == Tok::kSemi && taken_) {
        Span s = prev_span();
        throw SpecError(Span{s.file, s.end, s.end + 1},
                        fmt::format("expected ';'{}{}", context ? " after " : "", context ? context : ""));
      }
      fail_expected(context ? fmt::format("{} {}", token_name(k), context) : std::string(token_name(k)));
    }
    return take();
  }
  Ident ident(const char* what = "a name") {
    if (!at(Tok::kIdent)) fail_expected(what);
    Token t = take();
    return Ident{std::string(t.text), t.span, {}};
  }
  // NAME or MODULE::NAME (a reference to a declaration, docs/language.md "Names and modules").
  Ident qualified_ident(const char* what = "a name") {
    Ident id = ident(what);
    if (!accept(Tok::kColonColon)) return id;
    Ident name = ident(what);
    return Ident{name.name, join(id.span, name.span), id.name};
  }

  // `replay OP(ARGS), OP(ARGS)`: `replay` is a contextual keyword (a name elsewhere).
  std::vector<ReplayCall> replay_clause() {
    take();
    std::vector<ReplayCall> out;
    do {
      ReplayCall c;
      c.op = ident("a replay operation (docs/replay.md)");
      expect(Tok::kLParen, "(the replay operation's arguments)");
      if (!at(Tok::kRParen)) {
        do {
          c.args.push_back(expr());
        } while (accept(Tok::kComma));
      }
      expect(Tok::kRParen, "(closing the replay operation's arguments)");
      c.span = join(c.op.span, prev_span());
      out.push_back(std::move(c));
    } while (accept(Tok::kComma));
    return out;
  }

  // ---- declarations ----
  Decl* decl() {
    Span start = peek().span;
    switch (peek().kind) {
      case Tok::kImport: {
        take();
        Token s = expect(Tok::kString, "(the file to import)");
        Decl* d = ast_.decl(DeclKind::kImport, join(start, s.span));
        d->path = s.text;
        d->name = Ident{std::string(s.text), s.span, {}};
        expect(Tok::kSemi, "import");
        return d;
      }
      case Tok::kParam: {
        take();
        Decl* d = ast_.decl(DeclKind::kParam, start);
        d->name = ident("a parameter name");
        expect(Tok::kColon);
        d->type = type();
        expect(Tok::kAssign, "(a parameter needs a default value)");
        d->value = expr();
        expect(Tok::kSemi, "parameter declaration");
        d->span = join(start, prev_span());
        return d;
      }
      case Tok::kSet: {
        // `set NAME = VALUE;` -- a spec's own parameter choice, applied like --param (which overrides it).
        take();
        Decl* d = ast_.decl(DeclKind::kSet, start);
        d->name = qualified_ident("a parameter name");
        expect(Tok::kAssign);
        Span vs = peek().span;
        bool neg = accept(Tok::kMinus);
        if (!at(Tok::kInt) && !at(Tok::kIdent) && !at(Tok::kTrue) && !at(Tok::kFalse)) {
          fail_expected("a parameter value (an integer, true, false or an enum constant)");
        }
        Token v = take();
        d->path = (neg ? "-" : "") + std::string(v.text);
        d->index = Ident{d->path, join(vs, v.span), {}};  // the value as written, with its own span
        expect(Tok::kSemi, "set");
        d->span = join(start, prev_span());
        return d;
      }
      case Tok::kConst: {
        take();
        Decl* d = ast_.decl(DeclKind::kConst, start);
        d->name = ident("a constant name");
        expect(Tok::kAssign);
        d->value = expr();
        expect(Tok::kSemi, "constant declaration");
        d->span = join(start, prev_span());
        return d;
      }
      case Tok::kType: {
        take();
        Decl* d = ast_.decl(DeclKind::kType, start);
        d->name = ident("a type name");
        expect(Tok::kAssign);
        d->type = type();
        expect(Tok::kSemi, "type declaration");
        d->span = join(start, prev_span());
        return d;
      }
      case Tok::kVar: {
        take();
        Decl* d = ast_.decl(DeclKind::kVar, start);
        d->name = ident("a variable name");
        expect(Tok::kColon);
        d->type = type();
        if (accept(Tok::kAssign)) d->value = expr();
        expect(Tok::kSemi, "variable declaration");
        d->span = join(start, prev_span());
        return d;
      }
      case Tok::kFn: {
        take();
        Decl* d = ast_.decl(DeclKind::kFn, start);
        d->name = ident("a function name");
        d->params = params(true);
        expect(Tok::kColon, "(the function's result type)");
        d->type = type();
        expect(Tok::kAssign);
        d->value = expr();
        expect(Tok::kSemi, "function declaration");
        d->span = join(start, prev_span());
        return d;
      }
      case Tok::kProc: {
        take();
        Decl* d = ast_.decl(DeclKind::kProc, start);
        d->name = ident("a procedure name");
        d->params = params(true);
        if (accept(Tok::kVerbs)) d->verbs = expect(Tok::kString, "(the verbs call modelled)").text;
        if (at(Tok::kIdent) && peek().text == "replay") d->replay = replay_clause();
        d->span = join(start, prev_span());
        d->body = block();
        return d;
      }
      case Tok::kProcess: {
        take();
        Decl* d = ast_.decl(DeclKind::kProcess, start);
        d->name = ident("a process name");
        if (accept(Tok::kLBracket)) {
          d->index = ident("an instance variable");
          expect(Tok::kIn);
          d->index_type = type();
          expect(Tok::kRBracket);
        }
        if (at(Tok::kIdent) && peek().text == "until") {
          take();
          d->guard = expr();
        }
        d->span = join(start, prev_span());
        d->body = block();
        return d;
      }
      case Tok::kRule: {
        take();
        Decl* d = ast_.decl(DeclKind::kRule, start);
        d->name = ident("a rule name");
        if (at(Tok::kLParen)) d->params = params(true);
        if (accept(Tok::kVerbs)) d->verbs = expect(Tok::kString, "(the event modelled)").text;
        if (accept(Tok::kWhen)) d->guard = expr();
        d->span = join(start, prev_span());
        d->body = block();
        return d;
      }
      case Tok::kInvariant: {
        take();
        Decl* d = ast_.decl(DeclKind::kInvariant, start);
        d->name = ident("an invariant name");
        expect(Tok::kColon);
        d->value = expr();
        expect(Tok::kSemi, "invariant");
        d->span = join(start, prev_span());
        return d;
      }
      default:
        // `matrix`, `expect`, `disable`, `check`, `retired` and `override` are contextual keywords: only a
        // declaration can start with them.
        if (at(Tok::kIdent) && peek().text == "matrix") return matrix_decl();
        if (at(Tok::kIdent) && peek().text == "expect") return expect_decl();
        if (at(Tok::kIdent) && (peek().text == "disable" || peek().text == "check")) return property_list_decl();
        if (at(Tok::kIdent) && peek().text == "retired") return retired_decl();
        if (at(Tok::kIdent) && peek().text == "liveness") return liveness_decl();
        if (at(Tok::kIdent) && peek().text == "fair") return fair_decl();
        if (at(Tok::kIdent) && peek().text == "symmetric") {  // `symmetric TYPE;`
          take();
          Decl* d = ast_.decl(DeclKind::kSymmetric, start);
          d->name = Ident{"symmetric", start, {}};
          d->names.push_back(qualified_ident("a range type name (symmetric TYPE;)"));
          expect(Tok::kSemi, "symmetric");
          d->span = join(start, prev_span());
          return d;
        }
        if (at(Tok::kIdent) && peek().text == "override") {
          take();
          if (!at(Tok::kProc) && !at(Tok::kRule) && !at(Tok::kType) && !at(Tok::kInvariant)) {
            fail_expected("proc, rule, type or invariant after 'override'");
          }
          Decl* d = decl();
          d->is_override = true;
          d->span = join(start, d->span);
          return d;
        }
        fail_expected("a declaration (import, param, set, const, type, var, fn, proc, process, rule, invariant, "
                      "liveness, fair, symmetric, matrix, expect, disable, check, retired or override)");
    }
  }

  // `disable P, Q ["why"];` or `check P, Q;`.
  Decl* property_list_decl() {
    Token kw = take();
    bool disable = kw.text == "disable";
    Decl* d = ast_.decl(disable ? DeclKind::kDisable : DeclKind::kCheck, kw.span);
    d->name = Ident{std::string(kw.text), kw.span, {}};
    do {
      d->names.push_back(qualified_ident("a property name (an invariant, a fail/assert property, deadlock or "
                                         "runtime_error)"));
    } while (accept(Tok::kComma));
    if (disable && at(Tok::kString)) d->message = take().text;
    expect(Tok::kSemi, disable ? "disable" : "check");
    d->span = join(kw.span, prev_span());
    return d;
  }
  // `liveness NAME: eventually P;`, `liveness NAME: always eventually P;`, `liveness NAME: P leads_to Q;`
  // (`eventually`, `always` and `leads_to` are contextual keywords here only).
  Decl* liveness_decl() {
    Span start = take().span;
    Decl* d = ast_.decl(DeclKind::kLiveness, start);
    d->name = ident("a liveness property name");
    expect(Tok::kColon);
    auto word = [&](const char* w) { return at(Tok::kIdent) && peek().text == w; };
    if (word("always")) {
      take();
      if (!word("eventually")) fail_expected("'eventually' after 'always' (liveness: always eventually P)");
      take();
      d->temporal = "always_eventually";
      d->value = expr();
    } else if (word("eventually")) {
      take();
      d->temporal = "eventually";
      d->value = expr();
    } else {
      d->value = expr();
      if (!word("leads_to")) {
        fail_expected("'leads_to' (liveness: eventually P, always eventually P or P leads_to Q)");
      }
      take();
      d->temporal = "leads_to";
      d->guard = expr();
    }
    expect(Tok::kSemi, "liveness");
    d->span = join(start, prev_span());
    return d;
  }
  // `fair weak NAME, ...;` or `fair strong NAME, ...;`: each NAME a process or a rule.
  Decl* fair_decl() {
    Span start = take().span;
    Decl* d = ast_.decl(DeclKind::kFair, start);
    d->name = Ident{"fair", start, {}};
    if (!at(Tok::kIdent) || (peek().text != "weak" && peek().text != "strong")) {
      fail_expected("'weak' or 'strong' after 'fair'");
    }
    d->temporal = take().text;
    do d->names.push_back(qualified_ident("a process or rule name")); while (accept(Tok::kComma));
    expect(Tok::kSemi, "fair");
    d->span = join(start, prev_span());
    return d;
  }
  // `retired NAME "message";`
  Decl* retired_decl() {
    Span start = take().span;
    Decl* d = ast_.decl(DeclKind::kRetired, start);
    d->name = ident("the retired name");
    d->message = expect(Tok::kString, "(what to use instead)").text;
    expect(Tok::kSemi, "retired");
    d->span = join(start, prev_span());
    return d;
  }

  // A parameter value as in `set`: an integer (optionally negative), true, false or an enum constant.
  Ident param_value() {
    Span vs = peek().span;
    bool neg = accept(Tok::kMinus);
    if (!at(Tok::kInt) && !at(Tok::kIdent) && !at(Tok::kTrue) && !at(Tok::kFalse)) {
      fail_expected("a parameter value (an integer, true, false or an enum constant)");
    }
    Token v = take();
    return Ident{(neg ? "-" : "") + std::string(v.text), join(vs, v.span), {}};
  }
  // `NAME in { V, ... }` or `NAME = V`.
  ParamValues param_values() {
    ParamValues pv;
    pv.param = qualified_ident("a parameter name");
    if (accept(Tok::kIn)) {
      expect(Tok::kLBrace, "(a set of values: { V, ... })");
      do pv.values.push_back(param_value()); while (accept(Tok::kComma));
      expect(Tok::kRBrace);
    } else if (accept(Tok::kAssign)) {
      pv.values.push_back(param_value());
    } else {
      fail_expected("'in { V, ... }' or '= V' after the parameter name");
    }
    return pv;
  }
  Decl* matrix_decl() {
    Span start = take().span;
    Decl* d = ast_.decl(DeclKind::kMatrix, start);
    d->name = Ident{"matrix", start, {}};
    expect(Tok::kLBrace, "(the matrix: one 'PARAM in { V, ... };' per line)");
    while (!at(Tok::kRBrace)) {
      if (at(Tok::kEof)) fail_expected("'}'");
      d->values.push_back(param_values());
      expect(Tok::kSemi, "matrix row");
    }
    take();
    d->span = join(start, prev_span());
    return d;
  }
  Decl* expect_decl() {
    Span start = take().span;
    Decl* d = ast_.decl(DeclKind::kExpect, start);
    d->name = qualified_ident("a property name (an invariant, a fail/assert property, deadlock or runtime_error)");
    expect(Tok::kColon);
    d->verdict = ident("a verdict (holds or violated)");
    if (accept(Tok::kWhen)) {
      do d->values.push_back(param_values()); while (accept(Tok::kComma));
    }
    expect(Tok::kSemi, "expect");
    d->span = join(start, prev_span());
    return d;
  }

  std::vector<Param> params(bool parens) {
    std::vector<Param> out;
    expect(Tok::kLParen);
    if (!at(Tok::kRParen)) {
      do {
        Param p;
        p.name = ident("a parameter name");
        expect(Tok::kColon, "(each parameter needs a type)");
        p.type = type();
        out.push_back(p);
      } while (accept(Tok::kComma));
    }
    expect(Tok::kRParen);
    return out;
  }

  // ---- types ----
  TypeExpr* type() {
    Nest nest(this);
    Span start = peek().span;
    if (accept(Tok::kBool)) return ast_.type(TypeKind::kBool, start);
    if (accept(Tok::kEnum)) {
      TypeExpr* t = ast_.type(TypeKind::kEnum, start);
      expect(Tok::kLBrace);
      // A constant may be a family indexed by a type: `ACTIVE[Conn]` (docs/language.md, "Indexed enum constants").
      do {
        t->names.push_back(ident("an enum constant"));
        TypeExpr* index = nullptr;
        if (accept(Tok::kLBracket)) {
          index = type();
          expect(Tok::kRBracket);
        }
        t->fields.push_back(index);
      } while (accept(Tok::kComma));
      expect(Tok::kRBrace);
      t->span = join(start, prev_span());
      return t;
    }
    if (accept(Tok::kRecord)) {
      TypeExpr* t = ast_.type(TypeKind::kRecord, start);
      expect(Tok::kLBrace);
      while (!at(Tok::kRBrace)) {
        t->names.push_back(ident("a field name"));
        expect(Tok::kColon);
        t->fields.push_back(type());
        expect(Tok::kSemi, "record field");
      }
      expect(Tok::kRBrace);
      t->span = join(start, prev_span());
      return t;
    }
    if (accept(Tok::kArray)) {
      TypeExpr* t = ast_.type(TypeKind::kArray, start);
      expect(Tok::kLBracket);
      t->index = type();
      expect(Tok::kRBracket);
      expect(Tok::kOf);
      t->elem = type();
      t->span = join(start, prev_span());
      return t;
    }
    if (accept(Tok::kQueue)) {
      TypeExpr* t = ast_.type(TypeKind::kQueue, start);
      expect(Tok::kLBracket);
      t->capacity = expr();
      expect(Tok::kRBracket);
      expect(Tok::kOf);
      t->elem = type();
      t->span = join(start, prev_span());
      return t;
    }
    bool qualified_bound = at(Tok::kIdent) && peek(1).kind == Tok::kColonColon && peek(3).kind == Tok::kDotDot;
    if (at(Tok::kIdent) && peek(1).kind != Tok::kDotDot && !qualified_bound) {
      TypeExpr* t = ast_.type(TypeKind::kNamed, start);
      t->names.push_back(qualified_ident());
      return t;
    }
    if (!at(Tok::kIdent) && !at(Tok::kInt) && !at(Tok::kMinus) && !at(Tok::kLParen)) {
      fail_expected("a type (bool, LO..HI, enum, record, array, queue or a type name)");
    }
    TypeExpr* t = ast_.type(TypeKind::kRange, start);
    t->lo = additive();
    expect(Tok::kDotDot, "in a range type LO..HI");
    t->hi = additive();
    t->span = join(start, prev_span());
    return t;
  }

  // ---- statements ----
  std::vector<Stmt*> block() {
    expect(Tok::kLBrace);
    std::vector<Stmt*> out;
    while (!at(Tok::kRBrace)) {
      if (at(Tok::kEof)) fail_expected("'}'");
      out.push_back(stmt());
    }
    take();
    return out;
  }

  Stmt* stmt() {
    Nest nest(this);
    Span start = peek().span;
    auto finish = [&](Stmt* s) { s->span = join(start, prev_span()); return s; };
    // labels: `L:` and `end L:`
    if ((at(Tok::kIdent) && peek(1).kind == Tok::kColon) ||
        (at(Tok::kEnd) && peek(1).kind == Tok::kIdent && peek(2).kind == Tok::kColon)) {
      Stmt* s = ast_.stmt(StmtKind::kLabel, start);
      s->end_label = accept(Tok::kEnd);
      s->name = ident();
      take();  // ':'
      if (at(Tok::kRBrace)) {
        throw SpecError(s->name.span, fmt::format("label '{}' must be followed by a statement", s->name.name));
      }
      s->body.push_back(stmt());
      s->span = join(start, s->name.span);
      return s;
    }
    switch (peek().kind) {
      case Tok::kVar: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kVar, start);
        s->name = ident("a variable name");
        expect(Tok::kColon);
        s->type = type();
        if (accept(Tok::kAssign)) s->expr = expr();
        expect(Tok::kSemi, "variable declaration");
        return finish(s);
      }
      case Tok::kAwait: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kAwait, start);
        s->expr = expr();
        expect(Tok::kSemi, "await");
        return finish(s);
      }
      case Tok::kRequire: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kRequire, start);
        s->expr = expr();
        expect(Tok::kSemi, "require");
        return finish(s);
      }
      case Tok::kWhen:
      case Tok::kAtomic: {
        bool when = take().kind == Tok::kWhen;
        Stmt* s = ast_.stmt(StmtKind::kWhen, start);
        if (when) s->expr = expr();
        s->span = join(start, prev_span());
        s->body = block();
        return s;
      }
      case Tok::kIf: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kIf, start);
        s->expr = expr();
        s->span = join(start, prev_span());
        s->body = block();
        if (accept(Tok::kElse)) {
          s->has_else = true;
          if (at(Tok::kIf)) s->else_body.push_back(stmt());
          else s->else_body = block();
        }
        return s;
      }
      case Tok::kWhile: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kWhile, start);
        s->expr = expr();
        s->span = join(start, prev_span());
        s->body = block();
        return s;
      }
      case Tok::kFor: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kFor, start);
        s->name = ident("a loop variable");
        expect(Tok::kIn);
        s->type = type();
        s->span = join(start, prev_span());
        s->body = block();
        return s;
      }
      case Tok::kChoose: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kChoose, start);
        s->alternatives.push_back(block());
        while (accept(Tok::kOr_)) s->alternatives.push_back(block());
        return s;
      }
      case Tok::kGoto: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kGoto, start);
        s->name = ident("a label");
        expect(Tok::kSemi, "goto");
        return finish(s);
      }
      case Tok::kBreak: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kBreak, start);
        expect(Tok::kSemi, "break");
        return finish(s);
      }
      case Tok::kSkip: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kSkip, start);
        expect(Tok::kSemi, "skip");
        return finish(s);
      }
      case Tok::kFail: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kFail, start);
        if (at(Tok::kIdent)) s->name = ident();
        s->message = expect(Tok::kString, "(the failure message)").text;
        expect(Tok::kSemi, "fail");
        return finish(s);
      }
      case Tok::kAssert: {
        take();
        Stmt* s = ast_.stmt(StmtKind::kAssert, start);
        s->expr = expr();
        if (at(Tok::kIdent)) s->name = ident();
        if (at(Tok::kString)) s->message = take().text;
        expect(Tok::kSemi, "assert");
        return finish(s);
      }
      default:
        break;
    }
    // `refuse "ERRNO: why";` (a contextual word: `refuse` stays usable as a name)
    if (at(Tok::kIdent) && peek().text == "refuse" && peek(1).kind == Tok::kString) {
      take();
      Stmt* s = ast_.stmt(StmtKind::kRefuse, start);
      s->message = take().text;
      expect(Tok::kSemi, "refuse");
      return finish(s);
    }
    // assignment or call
    Expr* e = postfix();
    if (accept(Tok::kAssign)) {
      Stmt* s = ast_.stmt(StmtKind::kAssign, start);
      s->lhs = e;
      s->expr = expr();
      expect(Tok::kSemi, "assignment");
      return finish(s);
    }
    if (e->kind != ExprKind::kCall) {
      throw SpecError(e->span, "expected a statement (an assignment 'x = e;' or a call 'p(...);')");
    }
    Stmt* s = ast_.stmt(StmtKind::kCall, start);
    s->expr = e;
    expect(Tok::kSemi, "call");
    return finish(s);
  }

  // ---- expressions ----
  Expr* expr() {
    Nest nest(this);
    Expr* c = implies();
    if (accept(Tok::kQuestion)) {
      Expr* e = ast_.expr(ExprKind::kTernary, c->span);
      e->a = c;
      e->b = expr();
      expect(Tok::kColon, "in a conditional expression");
      e->c = expr();
      e->span = join(c->span, e->c->span);
      return sized(e);
    }
    return c;
  }
  // Sets e's height from its children; a flat chain such as 1 + 1 + ... + 1 builds a deep tree without deep
  // parser recursion, so the bound is enforced here, where every node is made.
  static constexpr int kMaxHeight = kMaxExprHeight;
  Expr* sized(Expr* e) {
    int h = 0;
    for (const Expr* c : {e->a, e->b, e->c}) {
      if (c != nullptr) h = std::max(h, c->height);
    }
    for (const Expr* c : e->args) h = std::max(h, c->height);
    e->height = h + 1;
    if (e->height > kMaxHeight) {
      throw SpecError(e->span.end - e->span.begin > 200 ? Span{e->span.file, e->span.end - 1, e->span.end} : e->span,
                      fmt::format("expression more than {} levels deep; split it up", kMaxHeight));
    }
    return e;
  }
  Expr* binary(Expr* l, BinOp op, Expr* r) {
    Expr* e = ast_.expr(ExprKind::kBinary, join(l->span, r->span));
    e->binop = op;
    e->a = l;
    e->b = r;
    return sized(e);
  }
  // Right-associative (a => b => c is a => (b => c)), parsed as a loop and folded from the right: a chain of arrows
  // must not recurse once per arrow (a long chain would overflow the stack); sized() bounds the tree's height.
  Expr* implies() {
    std::vector<Expr*> operands{or_()};
    while (accept(Tok::kImplies)) operands.push_back(or_());
    Expr* r = operands.back();
    for (size_t i = operands.size() - 1; i-- > 0;) r = binary(operands[i], BinOp::kImplies, r);
    return r;
  }
  Expr* or_() {
    Expr* l = and_();
    while (accept(Tok::kOr)) l = binary(l, BinOp::kOr, and_());
    return l;
  }
  Expr* and_() {
    Expr* l = equality();
    while (accept(Tok::kAnd)) l = binary(l, BinOp::kAnd, equality());
    return l;
  }
  Expr* equality() {
    Expr* l = relational();
    while (at(Tok::kEq) || at(Tok::kNe)) {
      BinOp op = take().kind == Tok::kEq ? BinOp::kEq : BinOp::kNe;
      l = binary(l, op, relational());
    }
    return l;
  }
  Expr* relational() {
    Expr* l = additive();
    while (at(Tok::kLt) || at(Tok::kLe) || at(Tok::kGt) || at(Tok::kGe)) {
      Tok k = take().kind;
      BinOp op = k == Tok::kLt ? BinOp::kLt : k == Tok::kLe ? BinOp::kLe : k == Tok::kGt ? BinOp::kGt : BinOp::kGe;
      l = binary(l, op, additive());
    }
    return l;
  }
  Expr* additive() {
    Expr* l = multiplicative();
    while (at(Tok::kPlus) || at(Tok::kMinus)) {
      BinOp op = take().kind == Tok::kPlus ? BinOp::kAdd : BinOp::kSub;
      l = binary(l, op, multiplicative());
    }
    return l;
  }
  Expr* multiplicative() {
    Expr* l = unary();
    while (at(Tok::kStar) || at(Tok::kSlash) || at(Tok::kPercent)) {
      Tok k = take().kind;
      BinOp op = k == Tok::kStar ? BinOp::kMul : k == Tok::kSlash ? BinOp::kDiv : BinOp::kMod;
      l = binary(l, op, unary());
    }
    return l;
  }
  Expr* unary() {
    Nest nest(this);
    // Quantifiers bind as far right as possible, so they may stand wherever an operand may: a => forall x in T: e.
    if (at(Tok::kForall) || at(Tok::kExists)) {
      Span start = peek().span;
      bool all = take().kind == Tok::kForall;
      Expr* e = ast_.expr(all ? ExprKind::kForall : ExprKind::kExists, start);
      e->name = ident("a bound variable");
      expect(Tok::kIn);
      e->domain = type();
      expect(Tok::kColon);
      e->a = expr();
      e->span = join(start, e->a->span);
      return sized(e);
    }
    if (at(Tok::kNot) || at(Tok::kMinus)) {
      Token t = take();
      Expr* e = ast_.expr(ExprKind::kUnary, t.span);
      e->unop = t.kind == Tok::kNot ? UnOp::kNot : UnOp::kNeg;
      e->a = unary();
      e->span = join(t.span, e->a->span);
      return sized(e);
    }
    return postfix();
  }
  Expr* postfix() {
    Expr* e = primary();
    while (true) {
      if (accept(Tok::kLBracket)) {
        Expr* x = ast_.expr(ExprKind::kIndex, e->span);
        x->a = e;
        x->b = expr();
        expect(Tok::kRBracket);
        x->span = join(e->span, prev_span());
        e = sized(x);
      } else if (accept(Tok::kDot)) {
        Expr* x = ast_.expr(ExprKind::kField, e->span);
        x->a = e;
        x->name = ident("a field name");
        x->span = join(e->span, x->name.span);
        e = sized(x);
      } else if (accept(Tok::kAt)) {
        Expr* x = ast_.expr(ExprKind::kAt, e->span);
        x->a = e;
        if (at(Tok::kEnd)) {  // P@end: P has finished (no label can be called `end`)
          Token t = take();
          x->name = Ident{"end", t.span, {}};
        } else {
          x->name = ident("a label (or end)");
        }
        x->span = join(e->span, x->name.span);
        e = sized(x);
      } else {
        return e;
      }
    }
  }
  Expr* primary() {
    const Token& t = peek();
    switch (t.kind) {
      case Tok::kInt: {
        Expr* e = ast_.expr(ExprKind::kInt, t.span);
        e->value = t.value;
        take();
        return e;
      }
      case Tok::kTrue:
      case Tok::kFalse: {
        Expr* e = ast_.expr(ExprKind::kBool, t.span);
        e->value = t.kind == Tok::kTrue;
        take();
        return e;
      }
      case Tok::kLParen: {
        take();
        Expr* e = expr();
        expect(Tok::kRParen);
        return e;
      }
      case Tok::kIdent: {
        Ident id = qualified_ident();
        if (accept(Tok::kLParen)) {
          Expr* e = ast_.expr(ExprKind::kCall, id.span);
          e->name = id;
          if (!at(Tok::kRParen)) {
            do e->args.push_back(expr()); while (accept(Tok::kComma));
          }
          expect(Tok::kRParen, "closing the argument list");
          e->span = join(id.span, prev_span());
          return sized(e);
        }
        Expr* e = ast_.expr(ExprKind::kName, id.span);
        e->name = id;
        return e;
      }
      default:
        fail_expected("an expression");
    }
  }

  Lexer lexer_;
  Token ahead_[4];  // tokens read but not taken: count_ of them from head_, a ring
  int head_ = 0;
  int count_ = 0;
  Span prev_;
  bool taken_ = false;
  int depth_ = 0;
  Ast& ast_;
};

constexpr size_t kMaxSpecBytes = 16 << 20;

// A path for a message: control characters as '?', at most 200 bytes of it (then "..." and its size): an import path
// may be a megabyte long.
std::string shown(const std::string& path) {
  std::string s = path.size() > 200 ? path.substr(0, 200) : path;
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return path.size() > 200 ? fmt::format("{}... ({} bytes)", s, path.size()) : s;
}

// Reads at most kMaxSpecBytes + 1 bytes (a device such as /dev/zero must not exhaust memory).
std::string read_file(const std::string& path, bool* ok, bool* too_big) {
  *too_big = false;
  std::error_code ec;
  // Only regular files: a FIFO would block forever, a device (/dev/zero) never ends.
  if (!std::filesystem::is_regular_file(path, ec)) { *ok = false; return {}; }
  std::ifstream in(path, std::ios::binary);
  if (!in) { *ok = false; return {}; }
  // Grows with what is read (64 KiB at a time): a zero-filled 16 MiB buffer per file cost ~8,000 page faults, about
  // half of a shipped spec's run time.
  std::string text;
  // Sized once from the file's size where it has one (a string grown by doubling touches twice the pages).
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec) text.reserve(static_cast<size_t>(std::min<uintmax_t>(size, kMaxSpecBytes) + 1));
  char chunk[1 << 16];
  while (text.size() <= kMaxSpecBytes && in.read(chunk, sizeof chunk).gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  *ok = !in.bad();
  *too_big = text.size() > kMaxSpecBytes;
  if (*too_big) text.resize(kMaxSpecBytes + 1);
  return text;
}

}  // namespace

std::vector<Decl*> parse_file(const SourceManager& sources, int file, Ast& ast) {
  return Parser(sources, file, ast).file();
}

Program load_program(SourceManager& sources, Ast& ast, const std::string& path, const SearchPath& search) {
  namespace fs = std::filesystem;
  Program prog;
  std::map<std::string, int> loaded;  // canonical path -> file index
  auto add_edge = [&](int from, int to) {
    if (prog.imports.size() <= static_cast<size_t>(std::max(from, to))) prog.imports.resize(std::max(from, to) + 1);
    prog.imports[from].push_back(to);
  };
  // Depth-first: a file's imports are emitted before its own declarations.
  auto load = [&](auto&& self, const std::string& file_path, int file_index) -> void {
    std::vector<Decl*> decls = parse_file(sources, file_index, ast);
    for (Decl* d : decls) {
      if (d->kind != DeclKind::kImport) continue;
      struct Candidate {
        fs::path folder;   // empty for an absolute path
        fs::path file;
        std::string why;   // why it is searched
      };
      std::vector<Candidate> candidates;
      fs::path rel(d->path);
      if (rel.is_absolute()) {
        candidates.push_back({{}, rel, "absolute path"});
      } else {
        fs::path own = fs::path(file_path).parent_path();
        candidates.push_back({own, own / rel, "relative to the importing file"});
        for (const LibDir& dir : search) candidates.push_back({dir.dir, fs::path(dir.dir) / rel, dir.origin});
      }
      std::string found, display;
      std::string not_regular;  // the first candidate that exists but is not a regular file, and what it is
      for (const auto& [folder, c, why] : candidates) {
        std::error_code ec;
        fs::file_status st = fs::status(c, ec);
        if (fs::is_regular_file(st)) {
          found = c.string();
          // A file of the checkout that Bazel links into the binary's runfiles is shown at its place in the checkout.
          display = fs::path(found).lexically_normal().string();
          if (why == "checkout next to the binary") {
            fs::path real = fs::canonical(c, ec);
            if (!ec) display = real.string();
          }
          break;
        }
        if (not_regular.empty() && fs::exists(st)) {
          const char* what = fs::is_directory(st)       ? "a folder"
                             : fs::is_fifo(st)          ? "a FIFO"
                             : fs::is_character_file(st) ? "a character device"
                             : fs::is_block_file(st)    ? "a block device"
                             : fs::is_socket(st)        ? "a socket"
                                                        : "not a regular file";
          not_regular = fmt::format("\"{}\": it is {}, not a spec file", shown(c.lexically_normal().string()), what);
        }
      }
      if (found.empty() && !not_regular.empty()) {
        throw SpecError(d->name.span, fmt::format("cannot import {}", not_regular));
      }
      if (found.empty()) {
        std::string where;
        // Each place with why it was searched. A long import path (up to megabytes) is shown once, in the message,
        // and each place as its folder only.
        const bool long_path = d->path.size() > 200;
        for (const auto& [folder, c, why] : candidates) {
          fs::path place = long_path && !rel.is_absolute() ? folder : c;
          std::error_code ec;
          fs::path abs = fs::absolute(place.empty() ? fs::path(".") : place, ec);
          where += fmt::format("\n    {} ({})", shown((ec ? place : abs).lexically_normal().string()), why);
        }
        throw SpecError(d->name.span,
                        fmt::format("cannot find imported file \"{}\"; looked in:{}\n  add the folder that holds it "
                                    "with --lib-dir DIR or {}=DIR[:DIR...] (docs/language.md, \"Imports\")",
                                    shown(d->path), where, kLibPathVariable));
      }
      std::error_code ec;
      std::string key = fs::weakly_canonical(found, ec).string();
      if (auto it = loaded.find(key); it != loaded.end()) {
        add_edge(file_index, it->second);
        continue;
      }
      bool ok = true, too_big = false;
      std::string text = read_file(found, &ok, &too_big);
      if (!ok) throw SpecError(d->name.span, fmt::format("cannot read imported file \"{}\"", shown(found)));
      if (too_big) {
        throw SpecError(d->name.span, fmt::format("imported file \"{}\" is larger than 16 MiB", shown(found)));
      }
      int idx = sources.add(display, std::move(text));
      loaded.emplace(key, idx);
      add_edge(file_index, idx);
      self(self, found, idx);
    }
    for (Decl* d : decls) {
      if (d->kind != DeclKind::kImport) prog.decls.push_back(d);
    }
  };
  bool ok = true, too_big = false;
  std::string text = read_file(path, &ok, &too_big);
  if (!ok) {
    throw UsageError(fmt::format("cannot read spec file '{}' (missing, unreadable or not a regular file)", path));
  }
  if (too_big) throw UsageError(fmt::format("spec file '{}' is larger than 16 MiB", path));
  std::error_code ec;
  prog.main_file = sources.add(path, std::move(text));
  loaded.emplace(fs::weakly_canonical(path, ec).string(), prog.main_file);
  load(load, path, prog.main_file);
  prog.imports.resize(sources.size());
  return prog;
}

}  // namespace qpcheck::lang
