// Lexer for the qpspec language (docs/language.md, "Lexical structure").
#pragma once

#include <cstdint>
#include <string>
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

struct Token {
  Tok kind = Tok::kEof;
  Span span;
  std::string text;   // identifier name, string contents (unescaped), or the token's source text
  int64_t value = 0;  // for kInt
};

// Human-readable name of a token kind, for "expected X" messages.
const char* token_name(Tok kind);

// Splits a file into tokens, ending with kEof. Throws SpecError on a malformed token (unterminated string or
// comment, an unknown character, an integer that does not fit in 63 bits).
std::vector<Token> lex(const SourceManager& sources, int file);

}  // namespace qpcheck::lang
