/* tsnode.h - the three tree-sitter node helpers that every reader of a
 * syntax tree in the Advisor uses (the Python scanner and evaluator, the
 * shell interpreter, the TOML reader): is a node of a type, a field
 * child by name, the 1-based line a node starts on (tsnode.c). */
#ifndef SM_ADVISOR_TSNODE_H
#define SM_ADVISOR_TSNODE_H

#include <tree_sitter/api.h>

#include "schedmate/sm_util.h"

int sm__ts_is(TSNode n, const char *t);
TSNode sm__ts_field(TSNode n, const char *name);
int sm__ts_line(TSNode n);

/* The arithmetic step that the RPN compilers of the scanner and the
 * evaluator share: a binary operator + - * / % (or a two-character form
 * such as // or **) in SRC compiles its two operands through SUB, then
 * appends the operator; -1 for another operator or a failed operand. */
/* Calls FN(CTX, child, DEPTH + 1) for each named child of N in order,
 * walking the siblings with a cursor (constant time each). */
void sm__ts_each_named(TSNode n, void (*fn)(void *ctx, TSNode k, int depth),
                       void *ctx, int depth);

typedef int (*sm__ts_rpn_fn)(void *ctx, TSNode n, sm_buf *out, int depth);
int sm__ts_rpn_binop(const char *src, TSNode n, sm_buf *out, int depth,
                     sm__ts_rpn_fn sub, void *ctx);

/* Calls, not inlined bodies: under the sanitizers each inlined copy
 * would keep its own stack slot in the recursive walkers. */
#define is(n, t) sm__ts_is((n), (t))
#define field(n, name) sm__ts_field((n), (name))
#define line_of(n) sm__ts_line(n)

#endif
