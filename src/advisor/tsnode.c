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

int sm__ts_rpn_binop(const char *src, TSNode n, sm_buf *out, int depth,
                     sm__ts_rpn_fn sub, void *ctx) {
  TSNode op = sm__ts_field(n, "operator");
  uint32_t a = ts_node_start_byte(op), b = ts_node_end_byte(op);
  size_t len = b - a;
  const char *o = src + a;
  if (len > 2 || strchr("+-*/%", o[0]) == NULL)
    return -1;
  if (sub(ctx, sm__ts_field(n, "left"), out, depth + 1) != 0 ||
      sub(ctx, sm__ts_field(n, "right"), out, depth + 1) != 0)
    return -1;
  sm_buf_addc(out, ' ');
  sm_buf_add(out, o, len);
  return 0;
}

void sm__ts_each_named(TSNode n, void (*fn)(void *ctx, TSNode k, int depth),
                       void *ctx, int depth) {
  TSTreeCursor cur = ts_tree_cursor_new(n);
  if (ts_tree_cursor_goto_first_child(&cur)) {
    do {
      TSNode k = ts_tree_cursor_current_node(&cur);
      if (ts_node_is_named(k))
        fn(ctx, k, depth + 1);
    } while (ts_tree_cursor_goto_next_sibling(&cur));
  }
  ts_tree_cursor_delete(&cur);
}
