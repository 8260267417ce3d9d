// How deep a spec may nest, and the check that every later recursive phase stays within it.
//
// Every phase after the parser walks the compiled model recursively: the type checker's own passes, the
// specialiser (checker/model/simplify.h), the interpreter (eval.h), the Z3 encoder and the footprint analyses. A
// function call is walked into (inlined or evaluated), so their recursion depth is not an expression's height but its
// height counting the bodies of the functions it calls, and likewise for statements and called procedures. The parser
// bounds one file's nesting (kMaxNesting) and an expression tree's height (kMaxExprHeight); check_nesting bounds the
// depth through calls (kMaxCallDepth), so that no phase can exhaust its stack on any spec that passes the front end.
#pragma once

#include "checker/lang/source.h"
#include "checker/model/model.h"

namespace qpcheck::lang {

// Parentheses, blocks, statements and types nested in one file (the parser's recursion).
inline constexpr int kMaxNesting = 512;
// Levels of one expression tree as written (a flat chain 1 + 1 + ... + 1 builds one without deep recursion).
inline constexpr int kMaxExprHeight = 1000;
// Levels of an expression or statement counting the bodies of the functions and procedures it calls, transitively.
inline constexpr int kMaxCallDepth = 2048;

// Throws SpecError at the first call (in declaration order: functions, procedures, then processes' steps, rules,
// invariants) whose depth through calls exceeds kMaxCallDepth. Linear in the model's size: each function's and
// procedure's depth is computed once, in declaration order (a body calls only what was declared before it).
void check_nesting(const model::Model& model);

}  // namespace qpcheck::lang
