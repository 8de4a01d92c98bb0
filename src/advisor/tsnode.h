/* tsnode.h - the three tree-sitter node helpers that every reader of a
 * syntax tree in the Advisor uses (the Python scanner and evaluator, the
 * shell interpreter, the TOML reader): is a node of a type, a field
 * child by name, the 1-based line a node starts on. */
#ifndef SM_ADVISOR_TSNODE_H
#define SM_ADVISOR_TSNODE_H

#include <string.h>

#include <tree_sitter/api.h>

static inline int is(TSNode n, const char *t) {
  return !ts_node_is_null(n) && strcmp(ts_node_type(n), t) == 0;
}

static inline TSNode field(TSNode n, const char *name) {
  return ts_node_child_by_field_name(n, name, (uint32_t)strlen(name));
}

static inline int line_of(TSNode n) {
  return (int)ts_node_start_point(n).row + 1;
}

#endif
