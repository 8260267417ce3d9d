// Abstract syntax of qpspec (docs/language.md). Nodes live in an Ast arena (stable addresses, owned once);
// every node carries the Span of the source text it came from.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "checker/lang/source.h"

namespace qpcheck::lang {

struct Expr;
struct TypeExpr;
struct Stmt;

// A name as written. `module` is the qualifier of `module::name` (docs/language.md, "Names and modules"), empty
// for a plain name; the span covers the whole qualified name.
struct Ident {
  std::string name;
  Span span;
  std::string module;
};

enum class ExprKind { kInt, kBool, kName, kUnary, kBinary, kTernary, kIndex, kField, kCall, kAt, kForall, kExists };
enum class UnOp { kNot, kNeg };
enum class BinOp { kAdd, kSub, kMul, kDiv, kMod, kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr, kImplies };

struct Expr {
  ExprKind kind;
  Span span;
  int64_t value = 0;          // kInt, kBool
  Ident name;                 // kName (the name), kField (field), kCall (callee), kAt (label), quantifiers (var)
  UnOp unop = UnOp::kNot;
  BinOp binop = BinOp::kAdd;
  Expr* a = nullptr;          // operand / base / condition / process / quantifier body
  Expr* b = nullptr;          // right operand / index / then
  Expr* c = nullptr;          // else
  std::vector<Expr*> args;    // kCall
  TypeExpr* domain = nullptr; // quantifiers
  int height = 1;             // levels of the subtree (bounded by the parser: later phases recurse on it)
};

enum class TypeKind { kBool, kRange, kEnum, kRecord, kArray, kQueue, kNamed };

struct TypeExpr {
  TypeKind kind;
  Span span;
  Expr* lo = nullptr;                 // kRange
  Expr* hi = nullptr;                 // kRange
  Expr* capacity = nullptr;           // kQueue
  std::vector<Ident> names;           // kEnum constants; kRecord field names; kNamed: names[0]
  std::vector<TypeExpr*> fields;      // kRecord field types; kEnum: each constant's index type (`ACTIVE[Conn]`)
                                      // or nullptr for a plain constant
  TypeExpr* index = nullptr;          // kArray
  TypeExpr* elem = nullptr;           // kArray, kQueue
};

enum class StmtKind {
  kAssign, kCall, kAwait, kWhen, kIf, kWhile, kChoose, kGoto, kBreak, kSkip, kRequire, kFail, kAssert, kFor,
  kLabel, kVar, kRefuse,
};

struct Stmt {
  StmtKind kind;
  Span span;                          // the whole statement (for traces: its source text)
  Expr* lhs = nullptr;                // kAssign
  Expr* expr = nullptr;               // kAssign rhs, kCall call, kAwait/kWhen/kIf/kWhile/kRequire/kAssert cond,
                                      // kVar initial value
  std::vector<Stmt*> body;            // kWhen, kIf then, kWhile, kFor, kLabel (one statement)
  std::vector<Stmt*> else_body;       // kIf
  std::vector<std::vector<Stmt*>> alternatives;  // kChoose
  Ident name;                         // kGoto/kLabel label, kFail/kAssert property, kFor/kVar variable
  bool end_label = false;             // kLabel: `end L:`
  bool has_else = false;
  std::string message;                // kFail, kAssert, kRefuse
  TypeExpr* type = nullptr;           // kFor domain, kVar type
};

// `replay OP(ARG, ...)` on a procedure: a replay operation from the vocabulary (replay_vocabulary.h), its arguments
// names of the procedure's parameters, params, consts or enum constants, or integer literals.
struct ReplayCall {
  Ident op;
  std::vector<Expr*> args;
  Span span;
};

struct Param {
  Ident name;
  TypeExpr* type = nullptr;
};

// One parameter with a set of values, as written: `transport in { IB, IWARP }` or `rnr_retry = 0`.
struct ParamValues {
  Ident param;
  std::vector<Ident> values;          // literals as written ("IB", "0", "-1", "true"), each with its span
};

enum class DeclKind {
  kImport, kParam, kSet, kConst, kType, kVar, kFn, kProc, kProcess, kRule, kInvariant,
  kMatrix,                            // `matrix { P in { V, ... }; ... }`: the configurations gate checks
  kExpect,                            // `expect PROPERTY: holds|violated [when P = V, ...];`
  kDisable,                           // `disable PROPERTY, ... ["why"];`: not checked (docs/language.md, "Properties")
  kCheck,                             // `check PROPERTY, ...;`: only these are checked
  kRetired,                           // `retired NAME "message";`: any use of NAME is an error with the message
  kLiveness,                          // `liveness NAME: eventually P | always eventually P | P leads_to Q;`
  kFair,                              // `fair weak|strong NAME, ...;`: processes and rules treated fairly
  kSymmetric,                         // `symmetric TYPE;`: the values of a range type are interchangeable
};

struct Decl {
  DeclKind kind;
  Span span;
  Ident name;
  std::string path;                   // kImport; kSet: the value as written (a literal or a name)
  TypeExpr* type = nullptr;           // kParam, kType, kVar; kFn result
  Expr* value = nullptr;              // kParam default, kConst, kVar init, kFn body, kInvariant
  std::vector<Param> params;          // kFn, kProc, kRule
  std::vector<Stmt*> body;            // kProc, kProcess, kRule
  Expr* guard = nullptr;              // kRule; kProcess: the `until` condition (nullptr: none)
  std::string verbs;                  // kProc, kRule: the verbs/CM call or fabric event modelled
  std::vector<ReplayCall> replay;     // kProc: what a replay on a device does for a call (docs/replay.md)
  Ident index;                        // kProcess arrays: the instance variable; kSet: the value
  TypeExpr* index_type = nullptr;     // kProcess arrays
  std::vector<ParamValues> values;    // kMatrix: one row per parameter; kExpect: the `when` selector (empty: all)
  Ident verdict;                      // kExpect: "holds" or "violated" as written (kName: the property)
  std::vector<Ident> names;           // kDisable, kCheck: the properties named
  std::string message;                // kRetired: the message; kDisable: the reason given, if any
  // kLiveness: "eventually", "always_eventually" or "leads_to"; value is P, guard is Q (leads_to only).
  // kFair: "weak" or "strong"; names are the processes and rules. kSymmetric: names[0] is the type.
  std::string temporal;
  // kProc, kRule, kType, kInvariant written `override ...`: replaces the declaration of that name in an imported
  // file (docs/language.md, "Replacing a library declaration").
  bool is_override = false;
};

// Arena owning all nodes of all files of one program.
class Ast {
 public:
  Expr* expr(ExprKind kind, Span span) { return &exprs_.emplace_back(Expr{kind, span}); }
  TypeExpr* type(TypeKind kind, Span span) { return &types_.emplace_back(TypeExpr{kind, span}); }
  Stmt* stmt(StmtKind kind, Span span) { return &stmts_.emplace_back(Stmt{kind, span}); }
  Decl* decl(DeclKind kind, Span span) { return &decls_.emplace_back(Decl{kind, span}); }

 private:
  std::deque<Expr> exprs_;
  std::deque<TypeExpr> types_;
  std::deque<Stmt> stmts_;
  std::deque<Decl> decls_;
};

}  // namespace qpcheck::lang
