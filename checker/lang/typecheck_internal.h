// The type checker's declaration pass (typecheck.h): one Checker per typecheck() call, walking the program's
// declarations in order and building the model. Its jobs live in files of their own, each a section below:
//   typecheck.cc             the driver (typecheck(), the order of the passes) and the model's allocators
//   typecheck_types.cc       type expressions, enums and families, compatibility, bound notes
//   typecheck_properties.cc  `disable` and `check`
//   typecheck_overrides.cc   `override type/proc/rule/invariant`
//   typecheck_slots.cc       the state vector's slots and initial values
//   typecheck_decls.cc       each declaration kind: param, const, type, var, fn, proc, rule, process
//   typecheck_stmts.cc       atomic statements, calls, messages
//   typecheck_expr.cc        expressions, constant folding
// and the jobs with narrow state of their own are classes or functions apart: names and scopes (typecheck_names.h),
// parameters and their settings (typecheck_params.h), replay clauses (replay_clauses.h), process control flow
// (control_flow.h). A check that fails throws SpecError at the offending span.
// Private to checker/lang.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "checker/lang/ast.h"
#include "checker/lang/control_flow.h"
#include "checker/lang/parser.h"
#include "checker/lang/replay_clauses.h"
#include "checker/lang/resolve.h"
#include "checker/lang/source.h"
#include "checker/lang/typecheck.h"
#include "checker/lang/typecheck_names.h"
#include "checker/lang/typecheck_params.h"
#include "checker/model/model.h"

namespace qpcheck::lang::typecheck_internal {

// In here Type, TypeKind, Op are the model's (the AST's types are lang::TypeKind, written so).
using model::Op;
using model::SOp;
using model::Type;
using model::TypeKind;

struct ProcessInfo {
  std::string name;
  const Type* index_type = nullptr;  // nullptr: a single process
  int first_pc_slot = 0;
  int64_t count = 1;
  std::map<std::string, int> label_pc;  // label -> pc value (same for every instance)
  std::set<std::string> label_never_at;  // labels no run stands at (compile_process_body)
  int end_pc = -1;                       // the program counter of the process's end (P@end); -1: never reached
};

class Checker : private StepChecker {
 public:
  Checker(const SourceManager& sources, const ParamOverrides& overrides, const ReplayVocabulary& vocabulary)
      : sources_(sources), param_overrides_(overrides), vocabulary_(vocabulary), m_(std::make_unique<model::Model>()) {
    m_->sources = &sources;
    bool_ = new_type(TypeKind::kBool, 0, 1);
    Type* i = new_type(TypeKind::kInt, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
    i->name = "int";  // the type of literals and arithmetic; ranges are checked when a value is stored
    int_ = i;
  }

  // typecheck() (typecheck.h), in passes: names, params and the `set`/--param settings indexed and resolved; the
  // `disable` choices and `override type`s collected; every declaration in program order; settings that set
  // nothing reported; the `check` choices; the call nesting bounded (nesting.h).
  Compiled run(const Program& program);
  // run() up to what the parameters need: types, consts and params are declared; vars, fns, procs, processes, rules
  // and properties are skipped, and so are the checks that need them (typecheck_params).
  Compiled run_params(const Program& program) {
    params_only_ = true;
    return run(program);
  }

 private:
  bool params_only_ = false;  // run_params

  // ---------------------------------------------------------------- the model being built (typecheck.cc)
  [[noreturn]] void error(Span span, std::string message) { throw SpecError(span, std::move(message)); }
  void warn(Span span, std::string message) override;
  Type* new_type(TypeKind k, int64_t lo, int64_t hi);
  model::Expr* new_expr(Op op, const Type* type, Span span);
  model::Expr* constant(int64_t v, const Type* type, Span span);
  model::Stmt* new_stmt(SOp op, Span span);
  int new_frame() { return m_->frame_size++; }
  std::string where(Span s) const { return sources_.location(s); }

  // ---------------------------------------------------------------- types (typecheck_types.cc)
  static bool is_int(const Type* t) { return t->kind == TypeKind::kInt; }
  static bool is_bool(const Type* t) { return t->kind == TypeKind::kBool; }

  // Structural equality, except enums: nominal.
  static bool same_type(const Type* a, const Type* b);
  // Can a value of type `from` be stored in / passed as `to`? Integers of any range mix (checked at run time).
  static bool compatible(const Type* to, const Type* from);
  // SpecError at e unless e fits `to` (compatible, and a constant within its range); `what` names the target.
  void expect_compatible(const Type* to, const model::Expr* e, const std::string& what);
  void expect_bool(const model::Expr* e, const char* what);
  // SpecError at e if it has the symmetric type: arithmetic and order are refused on it (`what`: the operator).
  void expect_unordered(const model::Expr* e, const char* what);
  void expect_int(const model::Expr* e, const char* what);
  // The value of a constant integer expression (a range bound, a queue capacity).
  int64_t const_int(const Expr* ast, const char* what);
  // A slot, an element, a field or a queue head: what may be assigned or passed as a composite.
  static bool is_location(const model::Expr* e);

  // The params whose values `x` (a constant expression, as written) is computed from: for the bound_note of a type.
  std::vector<std::string> params_in(const Expr* x);
  std::string bound_note(const std::vector<std::string>& params, bool raise) const;

  // The type `t` denotes; `name` names a declared enum or record. An enum's constants are defined in the current
  // file (Names::define).
  const Type* type(const TypeExpr* t, const std::string& name = "");

  // An enum of plain constants, or of families indexed by one common type (`enum { ACTIVE[Conn], PASSIVE[Conn] }`):
  // the constants are F[i] for every family F and index value i, connection-major (ordinal (i - lo) * families +
  // family), so that an index type of one value gives the ordinals a plain enum of the family names would have.
  const Type* enum_type(const TypeExpr* t, const std::string& name);

  // ---------------------------------------------------------------- symmetry (typecheck_symmetry.cc)
  // `symmetric TYPE;`: finds the type declaration it names before any declaration is checked (so that every use,
  // the library's included, is checked against the symmetry), marks that range type symmetric when it is declared,
  // records where each slot stands with respect to it (allocate, declare_process), and builds Model::symmetry.
  void collect_symmetry(const Program& program);
  static constexpr int64_t kMaxSymmetricValues = 4096;
  void mark_symmetric(const Decl* type_decl, Type* t);
  void finish_symmetry();
  // "declared symmetric at FILE:LINE:COL"
  std::string symmetric_where() const;
  // Slot bookkeeping: the class of a slot (by its key: the variable and the path to it with the symmetric
  // coordinates left out) and its coordinates.
  void sym_slot(const std::string& key, const std::vector<int64_t>& coords, int slot);
  const Decl* symmetric_decl_ = nullptr;       // the `symmetric` declaration
  const Decl* symmetric_type_decl_ = nullptr;  // the `type` declaration it names
  const Type* symmetric_ = nullptr;            // that type, once declared
  struct SymClassBuild {
    std::string name;
    int dims = 0;
    std::map<std::vector<int64_t>, int> slot_at;
  };
  std::map<std::string, int> sym_class_ids_;
  std::vector<SymClassBuild> sym_classes_;
  // Where instance `v` of process array `p` stands: its class key prefix ("client[*]", "handler[ACTIVE[*]]") and its
  // coordinate, when the array is indexed by the symmetric type or by an enum family indexed by it; else nullopt.
  std::optional<std::pair<std::string, int64_t>> sym_instance(const ProcessInfo& p, int64_t v) const;
  // While such an instance compiles: sym_instance() of it (its locals are then one more coordinate).
  std::optional<std::pair<std::string, int64_t>> sym_instance_;

  // ---------------------------------------------------------------- property choices: `disable`, `check`
  // (typecheck_properties.cc)
  void collect_property_choices(const Program& program);
  void note_disabled(const std::string& property, const char* kind);
  // The properties the program can violate, for "unknown property" messages.
  std::string known_properties() const;
  void check_property_name(const Ident& n, const char* what);
  // `deadlock` and `runtime_error` name the built-in properties: an invariant or a fail/assert property of either
  // name is an error at `n` (`what`: "an invariant", "a fail property", "an assert property").
  void reserve_property_name(const Ident& n, const char* what);
  void finish_property_choices(const Program& program);

  // ---------------------------------------------------------------- overrides (typecheck_overrides.cc)
  void collect_type_overrides(const Program& program);
  // The type expression a `type` declaration of the current file is checked with: its own, or the override's. An
  // enum may be replaced by an enum that keeps its constants, in order, and adds others after them, so that
  // every use in the imported file stays valid.
  const TypeExpr* replacement_type(const Decl* d);
  void finish_type_override(const Decl* d);
  // The parameters of an override must be those of the original: same number, same types (names may differ).
  // Binds them to fresh frames (returned), so that a call of `original` (below) from the override's body cannot
  // overwrite the override's own parameters.
  std::vector<int> bind_override_params(const Decl* d, const std::vector<const Type*>& types, const char* what,
                                        Span original);
  // `override proc`: the imported procedure keeps its identity (every call of it, in any file, runs the new body)
  // and gets this body, and this verbs label and replay clause when given.
  void override_proc(const Decl* d);
  // `override rule`: the imported rule keeps its name, parameters and action ids, with this guard and body (and
  // verbs label when given); traces and coverage point at the override.
  void override_rule(const Decl* d);
  void override_invariant(const Decl* d);
  // Inside the body of `override proc|rule NAME`, `original(ARGS);` runs the declaration being replaced (its body as
  // it was, under its own parameters; for a rule, without its guard) as a procedure call: the replaced declaration,
  // made into a procedure on the first such call. Returns nullptr outside an override body.
  const model::Proc* original_proc(Span at);
  struct Overriding {
    std::string what;               // "proc", "rule"
    std::string name;
    Span span;                      // the original's
    std::vector<std::string> param_names;
    std::vector<int> param_frames;  // the original's frames (its body reads them)
    std::vector<const Type*> param_types;
    std::string verbs;
    std::vector<const model::Stmt*> body;
    const model::Proc* made = nullptr;
  };
  std::optional<Overriding> overriding_;

  // ---------------------------------------------------------------- slots (typecheck_slots.cc)
  static constexpr size_t kMaxSlots = 1 << 16;  // scalar slots per state: bounds memory on hostile specs
  // Values a quantifier, a for loop or a rule's parameters range over: each is enumerated in every state.
  static constexpr int64_t kMaxDomain = 1 << 16;
  void check_domain(const Type* t, Span span, const char* what);
  // Allocates slots for a value of type t named `name`; `init` is a scalar broadcast to every leaf, or nullopt.
  int64_t allocate(const std::string& name, const Type* t, std::optional<int64_t> init, Span init_span);

  // ---------------------------------------------------------------- declarations (typecheck_decls.cc)
  // One top-level declaration, in the file it belongs to (Names::set_file).
  void declare(const Decl* d);
  void declare_param(const Decl* d);

  void declare_params_as_frames(const std::vector<Param>& params, std::vector<std::string>* names,
                                std::vector<int>* frames, std::vector<const Type*>* types, const char* what);
  void declare_fn(const Decl* d);

  void declare_proc(const Decl* d);

  // One `replay OP(args)` clause, checked against the vocabulary typecheck() was handed (replay_clauses.h); its
  // arguments are expressions in the procedure's scope.
  model::ReplayOp replay_op(const ReplayCall& c);
  void declare_rule(const Decl* d);
  // `liveness NAME: ...;` and `fair weak|strong NAME, ...;` (model.h: Liveness, Fairness).
  void declare_liveness(const Decl* d);
  void declare_fair(const Decl* d);

  void declare_process(const Decl* d);
  void compile_instance(const Decl* d, ProcessInfo& info, int instance, int64_t index_value);

  // ---------------------------------------------------------------- statements (typecheck_stmts.cc)
  // StepChecker (control_flow.h): a process body's conditions and atomic statements.
  const model::Expr* condition(const Expr* e, const char* what) override;
  std::vector<const model::Stmt*> atomic_block(const std::vector<Stmt*>& stmts, const char* where) override;

  const model::Stmt* atomic_stmt(const Stmt* s, const char* where_) override;
  const model::Stmt* call_stmt(const Stmt* s);
  // A for loop over the symmetric type (or an enum family indexed by it): SpecError unless its iterations are
  // independent of their order (typecheck_stmts.cc).
  void symmetric_loop(const std::vector<const model::Stmt*>& body, int frame, const Stmt* loop, const Type* t);

  // A fail/assert message with `{NAME}` replaced by the value of the param or const NAME, rendered as in traces
  // ("raise max_recv_wr (now {max_recv_wr})" -> "... (now 4)"); `{{` and `}}` are literal braces, and a brace that
  // does not enclose a name is kept as written. Values are fixed when the spec is compiled, so only params and consts
  // can be shown: any other name is a diagnostic.
  std::string interpolate(const std::string& text, Span span);

  // ---------------------------------------------------------------- expressions (typecheck_expr.cc)
  const model::Expr* fold(model::Expr* e);
  // The typed, constant-folded model expression for x, in the current scopes.
  const model::Expr* expr(const Expr* x);

  const model::Expr* name_expr(const Expr* x);
  const model::Expr* binary_expr(const Expr* x);

  const model::Expr* call_expr(const Expr* x);
  const model::Expr* at_expr(const Expr* x);

  // F[i] for an indexed family: a constant when i is, else a call of the family's constructor F(i: index): enum,
  // whose argument is range-checked at run time like any function argument.
  const model::Expr* family_value(const Symbol& fam, const std::string& name, const Expr* index_ast, Span span);

  // index(x): the index i of the indexed constant F[i] that x holds.
  const model::Expr* index_of(const Expr* x);

  struct Disabled {
    const Decl* decl;
    Span span;            // the name in the `disable` declaration
    std::string kind;     // filled when the property is met: "invariant", "fail", "deadlock"
  };
  const SourceManager& sources_;
  const ParamOverrides& param_overrides_;
  const ReplayVocabulary& vocabulary_;
  ParamSettings params_{sources_};
  Span current_decl_span_;
  std::unique_ptr<ImportGraph> graph_;
  Names names_{sources_, [this](Span span, std::string message) { warn(span, std::move(message)); }};
  std::map<std::string, Disabled> disabled_;
  std::vector<std::string> disabled_order_;
  std::set<std::string> fail_names_;                     // every fail/assert property met
  std::map<std::string, Span> invariant_spans_;          // every invariant declared (disabled ones too)
  std::map<std::string, Span> liveness_spans_;           // every liveness property declared (disabled ones too)
  std::map<std::pair<int, std::string>, const Decl*> type_overrides_;  // (file, type) -> its override
  std::set<const Decl*> applied_type_overrides_;
  std::map<const model::Proc*, Span> replaced_;          // procs replaced by an override, and where
  std::map<std::string, Span> replaced_rules_;           // rules ("invariant N" for invariants) replaced
  std::unique_ptr<model::Model> m_;
  std::vector<Diagnostic> warnings_;
  const Type* bool_;
  const Type* int_;
  std::vector<ProcessInfo> process_infos_;
  std::map<const model::Fn*, const Type*> fn_result_;
  std::map<std::pair<const Type*, int64_t>, const model::Fn*> family_fns_;  // F(i) of each indexed family
  std::map<const Type*, const model::Fn*> index_fns_;                        // index(x) per indexed enum
};

}  // namespace qpcheck::lang::typecheck_internal
