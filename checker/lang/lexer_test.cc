#include "checker/lang/lexer.h"

#include <doctest/doctest.h>

namespace qpcheck::lang {
namespace {

// The tokens of `text`; the lexer is kept (its copies of escaped string literals are what their texts view).
std::vector<Token> lex_text(SourceManager& sm, const std::string& text) {
  static std::deque<Lexer> lexers;
  return lex_all(lexers.emplace_back(sm, sm.add("t.qpspec", text)));
}

TEST_CASE("lexer: keywords, identifiers, numbers, strings and two-character operators") {
  SourceManager sm;
  auto t = lex_text(sm, "process p { x = 12 .. 3; } // c\n/* block */ \"a\\\"b\" => == != <= >= && || @");
  std::vector<Tok> kinds;
  for (const Token& k : t) kinds.push_back(k.kind);
  std::vector<Tok> want = {Tok::kProcess, Tok::kIdent, Tok::kLBrace, Tok::kIdent, Tok::kAssign, Tok::kInt,
                           Tok::kDotDot, Tok::kInt, Tok::kSemi, Tok::kRBrace, Tok::kString, Tok::kImplies, Tok::kEq,
                           Tok::kNe, Tok::kLe, Tok::kGe, Tok::kAnd, Tok::kOr, Tok::kAt, Tok::kEof};
  CHECK(kinds == want);
  CHECK(t[5].value == 12);
  CHECK(t[10].text == "a\"b");
  CHECK(sm.line_col(t[10].span) == std::pair<int, int>{2, 13});
}

TEST_CASE("lexer: a string literal's text is its contents, unescaped only where it has an escape sequence") {
  SourceManager sm;
  auto t = lex_text(sm, "\"plain\" \"a\\nb\\\\c\" \"\"");
  REQUIRE(t.size() == 4);
  CHECK(t[0].text == "plain");
  CHECK(t[1].text == "a\nb\\c");
  CHECK(t[2].text.empty());
  CHECK(sm.line_col(t[1].span) == std::pair<int, int>{1, 9});
}

TEST_CASE("lexer: after the end, kEof again") {
  SourceManager sm;
  Lexer lexer(sm, sm.add("t.qpspec", "x // trailing comment"));
  CHECK(lexer.next().kind == Tok::kIdent);
  CHECK(lexer.next().kind == Tok::kEof);
  CHECK(lexer.next().kind == Tok::kEof);
}

TEST_CASE("lexer: range without spaces is INT DOTDOT INT") {
  SourceManager sm;
  auto t = lex_text(sm, "0..7");
  REQUIRE(t.size() == 4);
  CHECK(t[0].kind == Tok::kInt);
  CHECK(t[1].kind == Tok::kDotDot);
  CHECK(t[2].value == 7);
}

TEST_CASE("lexer: malformed tokens are SpecErrors with a position") {
  auto err = [](const std::string& text) {
    SourceManager sm;
    try {
      lex_text(sm, text);
    } catch (const SpecError& e) {
      auto [l, c] = sm.line_col(e.diagnostics()[0].span);
      return std::to_string(l) + ":" + std::to_string(c) + " " + e.what();
    }
    return std::string("no error");
  };
  CHECK(err("x = \"abc\n") == "1:5 unterminated string literal");
  CHECK(err("\n  /* never closed") == "2:3 unterminated comment: '/*' has no matching '*/'");
  CHECK(err("a # b") == "1:3 unexpected character '#'");
  CHECK(err("99999999999999999999") == "1:1 integer literal too large");
  CHECK(err("12abc") == "1:1 malformed number '12a'");
}

}  // namespace
}  // namespace qpcheck::lang
