/* tsnode.h - the three tree-sitter node helpers that every reader of a
 * syntax tree in the Advisor uses (the Python scanner and evaluator, the
 * shell interpreter, the TOML reader): is a node of a type, a field
 * child by name, the 1-based line a node starts on (tsnode.c). */
#ifndef SM_ADVISOR_TSNODE_H
#define SM_ADVISOR_TSNODE_H

#include <tree_sitter/api.h>

int sm__ts_is(TSNode n, const char *t);
TSNode sm__ts_field(TSNode n, const char *name);
int sm__ts_line(TSNode n);

/* Calls, not inlined bodies: under the sanitizers each inlined copy
 * would keep its own stack slot in the recursive walkers. */
#define is(n, t) sm__ts_is((n), (t))
#define field(n, name) sm__ts_field((n), (name))
#define line_of(n) sm__ts_line(n)

#endif
