// Lexer for the qpspec language (docs/language.md, "Lexical structure").
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "checker/lang/source.h"

namespace qpcheck::lang {

enum class Tok {
  kEof, kIdent, kInt, kString,
  // punctuation
  kLBrace, kRBrace, kLParen, kRParen, kLBracket, kRBracket, kSemi, kColon, kColonColon, kComma, kDot, kDotDot, kAt,
  kQuestion, kAssign, kEq, kNe, kLt, kLe, kGt, kGe, kPlus, kMinus, kStar, kSlash, kPercent, kNot, kAnd, kOr,
  kImplies,
  // keywords
  kImport, kParam, kConst, kType, kVar, kFn, kProc, kProcess, kRule, kInvariant, kBool, kEnum, kRecord, kArray,
  kQueue, kOf, kIn, kWhen, kAwait, kAtomic, kIf, kElse, kWhile, kChoose, kOr_, kGoto, kBreak, kSkip, kRequire,
  kFail, kAssert, kFor, kForall, kExists, kTrue, kFalse, kEnd, kVerbs, kSet,
};

// A token's text is a view: of the source file's text (kept by the SourceManager) or, for a string literal with an
// escape sequence, of the unescaped copy its Lexer keeps; it lives as long as both.
struct Token {
  Tok kind = Tok::kEof;
  Span span;
  std::string_view text;  // identifier name, string contents (unescaped), or the token's source text
  int64_t value = 0;      // for kInt
};

// Human-readable name of a token kind, for "expected X" messages.
const char* token_name(Tok kind);

// Reads a file's tokens one at a time, as the parser asks for them (no token array: the library's 20,000 tokens
// would cost a shipped spec's run a few hundred page faults). next() returns kEof at the end, and again if asked
// again. Throws SpecError on a malformed token (unterminated string or comment, an unknown character, an integer
// that does not fit in 63 bits) when it reaches it.
class Lexer {
 public:
  Lexer(const SourceManager& sources, int file);
  Token next();

 private:
  Span span(uint32_t b, uint32_t e) const { return Span{file_, b, e}; }

  std::string_view s_;
  int file_;
  uint32_t i_ = 0;
  std::deque<std::string> unescaped_;  // string literals with an escape sequence
};

// The rest of `lexer`'s tokens, ending with kEof (for tests and tools; the parser reads one at a time). Their texts
// may view `lexer`'s copies of escaped string literals: keep it alive while they are used.
std::vector<Token> lex_all(Lexer& lexer);

}  // namespace qpcheck::lang
