#include "checker/lang/lexer.h"

#include <cctype>
#include <unordered_map>

#include <fmt/format.h>

namespace qpcheck::lang {

namespace {

const std::unordered_map<std::string_view, Tok>& keywords() {
  static const std::unordered_map<std::string_view, Tok> k = {
      {"import", Tok::kImport}, {"param", Tok::kParam}, {"const", Tok::kConst}, {"type", Tok::kType},
      {"var", Tok::kVar}, {"fn", Tok::kFn}, {"proc", Tok::kProc}, {"process", Tok::kProcess},
      {"rule", Tok::kRule}, {"invariant", Tok::kInvariant}, {"bool", Tok::kBool}, {"enum", Tok::kEnum},
      {"record", Tok::kRecord}, {"array", Tok::kArray}, {"queue", Tok::kQueue}, {"of", Tok::kOf},
      {"in", Tok::kIn}, {"when", Tok::kWhen}, {"await", Tok::kAwait}, {"atomic", Tok::kAtomic},
      {"if", Tok::kIf}, {"else", Tok::kElse}, {"while", Tok::kWhile}, {"choose", Tok::kChoose},
      {"or", Tok::kOr_}, {"goto", Tok::kGoto}, {"break", Tok::kBreak}, {"skip", Tok::kSkip},
      {"require", Tok::kRequire}, {"fail", Tok::kFail}, {"assert", Tok::kAssert}, {"for", Tok::kFor},
      {"forall", Tok::kForall}, {"exists", Tok::kExists}, {"true", Tok::kTrue}, {"false", Tok::kFalse},
      {"end", Tok::kEnd}, {"verbs", Tok::kVerbs}, {"set", Tok::kSet},
  };
  return k;
}

// The keyword `word` is, or kIdent.
Tok keyword(std::string_view word) {
  auto it = keywords().find(word);
  return it == keywords().end() ? Tok::kIdent : it->second;
}

}  // namespace

const char* token_name(Tok kind) {
  switch (kind) {
    case Tok::kEof: return "end of file";
    case Tok::kIdent: return "identifier";
    case Tok::kInt: return "integer";
    case Tok::kString: return "string";
    case Tok::kLBrace: return "'{'";
    case Tok::kRBrace: return "'}'";
    case Tok::kLParen: return "'('";
    case Tok::kRParen: return "')'";
    case Tok::kLBracket: return "'['";
    case Tok::kRBracket: return "']'";
    case Tok::kSemi: return "';'";
    case Tok::kColon: return "':'";
    case Tok::kColonColon: return "'::'";
    case Tok::kComma: return "','";
    case Tok::kDot: return "'.'";
    case Tok::kDotDot: return "'..'";
    case Tok::kAt: return "'@'";
    case Tok::kQuestion: return "'?'";
    case Tok::kAssign: return "'='";
    case Tok::kEq: return "'=='";
    case Tok::kNe: return "'!='";
    case Tok::kLt: return "'<'";
    case Tok::kLe: return "'<='";
    case Tok::kGt: return "'>'";
    case Tok::kGe: return "'>='";
    case Tok::kPlus: return "'+'";
    case Tok::kMinus: return "'-'";
    case Tok::kStar: return "'*'";
    case Tok::kSlash: return "'/'";
    case Tok::kPercent: return "'%'";
    case Tok::kNot: return "'!'";
    case Tok::kAnd: return "'&&'";
    case Tok::kOr: return "'||'";
    case Tok::kImplies: return "'=>'";
    default: break;
  }
  for (const auto& [name, tok] : keywords()) {
    if (tok == kind) {
      static thread_local std::string buf;
      buf = fmt::format("'{}'", name);
      return buf.c_str();
    }
  }
  return "token";
}

Lexer::Lexer(const SourceManager& sources, int file) : s_(sources.file(file).text), file_(file) {
  if (s_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;  // a UTF-8 byte order mark
}

Token Lexer::next() {
  const std::string_view s = s_;
  const uint32_t n = static_cast<uint32_t>(s.size());
  uint32_t& i = i_;
  auto token = [&](Tok k, uint32_t b, uint32_t e) { return Token{k, span(b, e), s.substr(b, e - b), 0}; };
  while (i < n) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') { ++i; continue; }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      uint32_t b = i;
      i += 2;
      while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) ++i;
      if (i + 1 >= n) throw SpecError(span(b, b + 2), "unterminated comment: '/*' has no matching '*/'");
      i += 2;
      continue;
    }
    uint32_t b = i;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i < n && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      if (i - b > 256) throw SpecError(span(b, b + 1), fmt::format("identifier of {} characters; at most 256", i - b));
      return token(keyword(s.substr(b, i - b)), b, i);
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (i < n && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (v > (INT64_MAX - 9) / 10) throw SpecError(span(b, i + 1), "integer literal too large");
        v = v * 10 + (s[i] - '0');
        ++i;
      }
      if (i < n && (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_')) {
        throw SpecError(span(b, i + 1), fmt::format("malformed number '{}'", s.substr(b, i + 1 - b)));
      }
      Token t = token(Tok::kInt, b, i);
      t.value = v;
      return t;
    }
    if (c == '"') {
      // The contents as written, unless an escape sequence needs an unescaped copy.
      ++i;
      uint32_t first = i;
      std::string* text = nullptr;
      while (true) {
        if (i >= n || s[i] == '\n') throw SpecError(span(b, b + 1), "unterminated string literal");
        if (s[i] == '"') { ++i; break; }
        if (s[i] == '\\' && i + 1 < n) {
          char e = s[i + 1];
          if (e != 'n' && e != '"' && e != '\\') {
            throw SpecError(span(i, i + 2), fmt::format("unknown escape sequence '\\{}'", e));
          }
          if (text == nullptr) text = &unescaped_.emplace_back(s.substr(first, i - first));
          *text += e == 'n' ? '\n' : e;
          i += 2;
          continue;
        }
        if (text != nullptr) *text += s[i];
        ++i;
      }
      Token t{Tok::kString, span(b, i), s.substr(first, i - 1 - first), 0};
      if (text != nullptr) t.text = *text;
      return t;
    }
    auto two = [&](char a, char b2) { return c == a && i + 1 < n && s[i + 1] == b2; };
    Tok k;
    uint32_t len = 2;
    if (two('.', '.')) k = Tok::kDotDot;
    else if (two(':', ':')) k = Tok::kColonColon;
    else if (two('=', '=')) k = Tok::kEq;
    else if (two('!', '=')) k = Tok::kNe;
    else if (two('<', '=')) k = Tok::kLe;
    else if (two('>', '=')) k = Tok::kGe;
    else if (two('&', '&')) k = Tok::kAnd;
    else if (two('|', '|')) k = Tok::kOr;
    else if (two('=', '>')) k = Tok::kImplies;
    else {
      len = 1;
      switch (c) {
        case '{': k = Tok::kLBrace; break;
        case '}': k = Tok::kRBrace; break;
        case '(': k = Tok::kLParen; break;
        case ')': k = Tok::kRParen; break;
        case '[': k = Tok::kLBracket; break;
        case ']': k = Tok::kRBracket; break;
        case ';': k = Tok::kSemi; break;
        case ':': k = Tok::kColon; break;
        case ',': k = Tok::kComma; break;
        case '.': k = Tok::kDot; break;
        case '@': k = Tok::kAt; break;
        case '?': k = Tok::kQuestion; break;
        case '=': k = Tok::kAssign; break;
        case '<': k = Tok::kLt; break;
        case '>': k = Tok::kGt; break;
        case '+': k = Tok::kPlus; break;
        case '-': k = Tok::kMinus; break;
        case '*': k = Tok::kStar; break;
        case '/': k = Tok::kSlash; break;
        case '%': k = Tok::kPercent; break;
        case '!': k = Tok::kNot; break;
        default: {
          unsigned char uc = static_cast<unsigned char>(c);
          std::string shown = std::isprint(uc) ? fmt::format("'{}'", c) : fmt::format("byte 0x{:02x}", uc);
          throw SpecError(span(b, b + 1), fmt::format("unexpected character {}", shown));
        }
      }
    }
    i += len;
    return token(k, b, i);
  }
  return Token{Tok::kEof, span(n, n), {}, 0};
}

std::vector<Token> lex_all(Lexer& lexer) {
  std::vector<Token> out;
  do {
    out.push_back(lexer.next());
  } while (out.back().kind != Tok::kEof);
  return out;
}

}  // namespace qpcheck::lang
