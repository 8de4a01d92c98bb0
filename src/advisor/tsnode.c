/* tsnode.c - tree-sitter node helpers shared by the Advisor's syntax
 * tree readers (see tsnode.h). */
#include <string.h>

#include "advisor/tsnode.h"

int sm__ts_is(TSNode n, const char *t) {
  return !ts_node_is_null(n) && strcmp(ts_node_type(n), t) == 0;
}

TSNode sm__ts_field(TSNode n, const char *name) {
  return ts_node_child_by_field_name(n, name, (uint32_t)strlen(name));
}

int sm__ts_line(TSNode n) {
  return (int)ts_node_start_point(n).row + 1;
}
