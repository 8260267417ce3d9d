// The typed, compiled model: what the front end (checker/lang/typecheck.h) produces and the transition system
// (model_system.h) executes. Every value is a 64-bit integer at run time: bool 0/1, an enum constant's ordinal,
// an integer. A state is a vector of scalar *slots*, one per leaf of every variable and one program counter per
// process instance; composite values (records, arrays, queues) occupy consecutive slots.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checker/lang/source.h"

namespace qpcheck::model {

using lang::Span;

enum class TypeKind { kBool, kInt, kEnum, kRecord, kArray, kQueue };

struct Type {
  TypeKind kind = TypeKind::kInt;
  int64_t lo = 0;                         // scalars: smallest value (enum: 0, bool: 0)
  int64_t hi = 0;                         // scalars: largest value
  std::string name;                       // enum name (nominal identity is the Type's address)
  std::vector<std::string> constants;     // kEnum: every constant's rendered name, by ordinal
  // kEnum with indexed constants (`enum { ACTIVE[Conn], PASSIVE[Conn] }`): the family names and their common index
  // type. Constant F[i] has ordinal (i - family_index->lo) * families.size() + (position of F); it renders as "F"
  // when the index type has one value, else "F[i]". Empty / nullptr for a plain enum.
  std::vector<std::string> families;
  const Type* family_index = nullptr;
  std::vector<std::string> field_names;   // kRecord
  std::vector<const Type*> field_types;   // kRecord
  std::vector<int> field_offsets;         // kRecord: slot offset of each field
  const Type* index = nullptr;            // kArray: a scalar type
  const Type* elem = nullptr;             // kArray, kQueue
  int capacity = 0;                       // kQueue
  int slots = 1;                          // number of scalar slots a value occupies (a queue: 1 length + elements)
  // A range bound or queue capacity computed from parameters: which ones and how to change them, for the runtime
  // error of a value or push that does not fit ("set by param max_recv = 4; raise it with --param max_recv=N").
  // Empty when the bounds are literals.
  std::string bound_note;
  // A range type declared `symmetric` (docs/language.md, "Symmetry"): nominal, its values interchangeable (only
  // ==, != and indexing; no constant, arithmetic or order). At most one per model (Model::symmetry).
  bool symmetric = false;
  bool scalar() const { return kind == TypeKind::kBool || kind == TypeKind::kInt || kind == TypeKind::kEnum; }
  int64_t count() const { return hi - lo + 1; }  // scalars: number of values
};

// Renders a scalar value of type t ("true", "RTS", "3").
std::string render_scalar(const Type* t, int64_t v);
// Renders a type for messages ("0..7", "QpState", "queue[2] of Msg").
std::string type_name(const Type* t);

struct Fn;
struct Proc;

enum class Op {
  kConst, kFrame,                           // a constant; a bound variable (parameter, quantifier, loop variable)
  kSlot, kIndex, kField, kHead,             // locations: a static slot; a[i]; r.f; head(q)
  kNot, kNeg, kAdd, kSub, kMul, kDiv, kMod, kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr, kImplies, kTernary,
  kCallFn, kAt, kForall, kExists, kLen, kEmpty, kFull, kContains,
};

struct Expr {
  Op op = Op::kConst;
  const Type* type = nullptr;
  Span span;
  int64_t value = 0;       // kConst: the value; kSlot: slot index; kFrame: frame index; kField: slot offset;
                           // kAt: program counter value; kForall/kExists: frame index of the bound variable
  const Expr* a = nullptr;
  const Expr* b = nullptr;
  const Expr* c = nullptr;
  std::vector<const Expr*> args;
  const Fn* fn = nullptr;  // kCallFn
  int64_t lo = 0;          // kIndex: index type's lowest value; kAt: instance index's lowest value;
                           // quantifiers: domain low
  int64_t count = 0;       // kIndex: number of elements; kAt: number of instances; quantifiers: domain size
  int stride = 0;          // kIndex: slots per element; kAt: pc slot of the first instance
  bool equal_composite = false;  // kEq/kNe over composite values: compares `type->slots` slots
};

// kRefuse: the verbs/CM call of the innermost procedure call with a replay clause fails (the device returns an
// error); it changes no state (eval.h CallRecord::refused, docs/language.md "Refused calls").
enum class SOp { kAssign, kCall, kIf, kFor, kRequire, kFail, kAssert, kPush, kPop, kClear, kSkip, kRefuse };

struct Stmt {
  SOp op = SOp::kSkip;
  Span span;
  const Expr* lhs = nullptr;          // kAssign target, kPush/kPop/kClear queue
  const Expr* rhs = nullptr;          // kAssign/kPush value; kIf/kRequire/kAssert condition
  std::vector<const Stmt*> body;      // kIf then, kFor
  std::vector<const Stmt*> else_body; // kIf
  const Proc* proc = nullptr;         // kCall
  std::vector<const Expr*> args;      // kCall
  int frame = 0;                      // kFor variable
  int64_t lo = 0, hi = 0;             // kFor domain
  std::string property;               // kFail/kAssert: the property violated
  std::string message;                // kFail/kAssert; kRefuse: the error (errno first: "ECONNREFUSED: ...")
};

struct Fn {
  std::string name;
  std::vector<int> param_frames;
  std::vector<const Type*> param_types;
  const Expr* body = nullptr;
};

// One `replay OP(args)` of a procedure, checked against the replay vocabulary (checker/lang/replay_vocabulary.h;
// verbs_backend/replay_ops.h). Each argument is a constant (Op::kConst) or one of the procedure's parameters
// (Op::kFrame); the trace writes argument i as prefixes[i] followed by its value ("RDMA_CM_EVENT_" + "ESTABLISHED").
struct ReplayOp {
  std::string op;
  std::vector<const Expr*> args;
  std::vector<std::string> prefixes;  // one per argument
  Span span;
};

struct Proc {
  std::string name;
  std::string verbs;                  // the verbs/CM call or fabric event it models ("" if none)
  std::vector<ReplayOp> replay;       // what replaying a call on a device does, in order (docs/replay.md)
  Span span;
  std::vector<std::string> param_names;
  std::vector<int> param_frames;
  std::vector<const Type*> param_types;
  std::vector<const Stmt*> body;
};

// One atomic step of a process: enabled when the edge's conditions and `guard` hold and every `require` on the
// body's path holds; then runs `body` and moves the program counter to `next_pc`.
struct Step {
  Span span;                          // the statement's source (first line shown in traces)
  const Expr* guard = nullptr;        // nullptr: always
  std::vector<const Stmt*> body;
  int next_pc = 0;
};

struct Edge {
  std::vector<const Expr*> conds;     // branch conditions folded in from if/while (already negated where needed)
  const Step* step = nullptr;
};

struct ProcessInstance {
  std::string name;                   // "client", "phil[3]"
  std::string process;                // "phil"
  int pc_slot = 0;
  std::vector<std::vector<Edge>> edges;   // per program counter value
  std::vector<bool> valid_end;            // per pc: terminated or at an `end` label, whatever the state
  // per pc: otherwise, condition lists under which control falls through to the end or an `end` label
  // (a loop head whose loop is over); any list whose conditions all hold makes the state a valid end.
  std::vector<std::vector<std::vector<const Expr*>>> end_conds;
  std::vector<std::string> pc_names;      // per program counter value: "eat", "line 12", "end"
  std::vector<Span> pc_spans;             // per program counter value: the statement there (the process if "end")
};

struct Rule {
  std::string name;
  std::string verbs;
  Span span;
  std::vector<std::string> param_names;
  std::vector<int> param_frames;
  std::vector<const Type*> param_types;
  const Expr* guard = nullptr;
  std::vector<const Stmt*> body;
  int64_t instances = 1;              // product of the parameter domains
};

struct Invariant {
  std::string name;
  Span span;
  const Expr* expr = nullptr;
};

// `liveness NAME: ...;` (docs/language.md, "Liveness"): a property of every infinite run, and of every finite run
// that ends in a state where nothing is enabled (which then stays there forever). Checked under the model's fairness
// by explore::check_liveness; P and Q are state expressions like an invariant's.
struct Liveness {
  enum class Kind {
    kEventually,        // eventually P: every run reaches a state where P holds
    kAlwaysEventually,  // always eventually P: P holds infinitely often in every run
    kLeadsTo,           // P leads_to Q: every state where P holds is followed (or met) by one where Q holds
  };
  std::string name;
  Span span;
  Kind kind = Kind::kEventually;
  const Expr* p = nullptr;
  const Expr* q = nullptr;            // kLeadsTo only
};

// `fair weak|strong NAME, ...;`: every instance of the named processes and every parameter tuple of the named rules
// is a fairness unit of that kind. Weak: a unit that is enabled in every state from some point on takes a step
// infinitely often. Strong: a unit that is enabled infinitely often takes a step infinitely often. A unit named by
// both a weak and a strong declaration is strong. Units not named are not treated fairly (docs/language.md,
// "Fairness").
struct Fairness {
  bool strong = false;
  Span span;                          // the declaration
  std::vector<int> processes;         // process instance indexes (every instance of each named process)
  std::vector<int> rules;             // rule indexes (each parameter tuple is a unit of its own)
  std::vector<std::string> names;     // as written, for reports
};

struct SlotInfo {
  int64_t lo = 0, hi = 0;             // value range
  const Type* type = nullptr;         // scalar type (for rendering)
  // An element slot of a queue: the slot of that (innermost) queue's length and the element's position in it. A
  // slot at a position >= the length holds its type's lowest value (a pop resets it: eval.cc), which symmetry
  // leaves as it is (model/symmetry.cc). -1: not in a queue.
  int queue_len = -1;
  int queue_pos = 0;
};

// A unit of rendering in traces: a scalar variable leaf, or a whole queue.
struct Unit {
  std::string name;                   // "qp[ACTIVE]", "cm_wire[PASSIVE]"
  const Type* type = nullptr;
  int first_slot = 0;
  int process = -1;                   // >= 0: this unit is that process instance's program counter
};

// A declaration of an imported file that the spec replaced with `override` (shown in the report's header).
struct Override {
  std::string kind;                   // "proc", "rule", "type", "invariant"
  std::string name;                   // as displayed
  Span original;                      // the replaced declaration
  Span by;                            // the override
};

// A property named by `disable` (not checked: an invariant is not evaluated, a fail/assert of it does nothing,
// deadlock is not reported) or by `check` (only the properties so named are checked).
struct PropertyChoice {
  std::string name;
  std::string kind;                   // "invariant", "fail", "deadlock", "runtime_error"
  Span by;                            // the `disable` / `check` declaration
  std::string reason;                 // disable: the reason written after the names, if any
};

// `retired NAME "message";`: any use of NAME is an error with the message.
struct Retired {
  std::string name;
  std::string message;
  Span span;
};

// `symmetric TYPE;` (docs/language.md, "Symmetry"): the type checker has shown that renaming the values of `type`
// by any permutation maps the transition relation and every property onto themselves, so a search may store one
// state of each orbit (model/symmetry.h). The state's slots fall in two kinds: slots whose place depends on values
// of the type (an element of an array indexed by it or by an enum family indexed by it, a program counter or local of
// an instance of a process array indexed by it) form classes, each holding one slot per coordinate tuple; every
// other slot stays in place. Slots holding a value of the type (or of an enum family indexed by it) are renamed.
struct Symmetry {
  const Type* type = nullptr;         // the symmetric range type
  std::string name;                   // as declared ("Conn")
  Span span;                          // the `symmetric` declaration
  int64_t count = 0;                  // values of the type (n)
  struct Class {
    std::string name;                 // for messages and tests: "qp[*]", "client[*]@", "x[*][*]"
    int dims = 1;                     // 1: slots[i]; 2: slots[i * n + j]
    std::vector<int> slots;           // n^dims slots
  };
  std::vector<Class> classes;
  // Per slot: 0 kept as is; 1 a value of the type (v - type->lo is an index); 2 an enum constant F[i] of a family
  // indexed by the type (ordinal (i - lo) * families + f).
  std::vector<uint8_t> rename;
  std::vector<int64_t> families;      // per slot with rename 2: the enum's number of families
  // The process arrays indexed by the type (families 1) or by an enum family indexed by it (its number of
  // families): their instances are renamed.
  std::vector<std::pair<std::string, int64_t>> processes;
};

struct Model {
  // owners
  std::deque<Type> types;
  std::deque<Expr> exprs;
  std::deque<Stmt> stmts;
  std::deque<Fn> fns;
  std::deque<Proc> procs;
  std::deque<Step> steps;

  std::vector<SlotInfo> slots;
  std::vector<Unit> units;
  std::vector<int64_t> initial;       // initial value of each slot
  std::vector<ProcessInstance> processes;
  std::vector<Rule> rules;
  std::vector<Invariant> invariants;
  std::vector<Liveness> liveness;     // declaration order; disabled ones are left out
  std::vector<Fairness> fairness;     // declaration order
  int frame_size = 0;                 // number of bound-variable frames
  std::vector<std::pair<std::string, std::string>> params;  // name, value as rendered, declaration order
  std::vector<Override> overrides;    // in the order the overrides are declared
  std::vector<PropertyChoice> disabled;  // `disable`: not checked, whichever engine runs
  std::vector<PropertyChoice> checks;    // `check`: when any, only these are checked (and reported)
  std::vector<Retired> retired;
  std::optional<Symmetry> symmetry;   // `symmetric TYPE;`, if declared
  const lang::SourceManager* sources = nullptr;
  bool deadlock_disabled() const {
    for (const PropertyChoice& d : disabled) {
      if (d.name == "deadlock") return true;
    }
    return false;
  }
};

}  // namespace qpcheck::model
