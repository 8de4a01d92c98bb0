/* extract.c - sm_extract: the order of the work.  The command (or the
 * inline batch script) is read first (launcher, scripts, entry), then the
 * entry script and the local modules it imports, then the entry's
 * arguments and the config files they name (and --config files), then the
 * fields are resolved. */
#include <string.h>

#include "advisor/advisor_int.h"
#include "advisor/unexplained.h"

void sm__ctx_init(sm__ctx *c, const sm_extract_req *req, sm_extract_res *res) {
  c->req = req;
  c->res = res;
  c->root_fd = -1;
  /* Bounded memory: files are capped at 64 MiB in all, and what is made
   * from them is capped here. */
  sm_arena_init(&c->arena, 0, (size_t)512 << 20);
  sm__vec_init(&c->read_paths, sizeof(const char *));
  sm__vec_init(&c->params, sizeof(sm__param));
  sm__vec_init(&c->models, sizeof(sm__cand));
  sm__vec_init(&c->datasets, sizeof(sm__cand));
  sm__vec_init(&c->presets, sizeof(sm__kv));
  sm__vec_init(&c->factories, sizeof(sm__kv));
  sm__vec_init(&c->pyqueue, sizeof(sm__pyfile));
  sm__vec_init(&c->flags, sizeof(const char *));
  sm__vec_init(&c->classes, sizeof(const char *));
  sm__vec_init(&c->optalias, 2 * sizeof(const char *));
  sm__vec_init(&c->positionals, sizeof(const char *));
  /* srcs, cfgs and pymods are set up by their modules on first use. */
  c->up.py_config_tree = sm__py_config_tree;
  c->up.gin_tree = sm__vt_gin;
  c->up.package_dir = sm__py_package_dir;
  c->up.launch_words = sm__launch_words;
  c->up.note_file = NULL; /* set by sm_extract */
}

void sm__ctx_release(sm__ctx *c) {
  sm__repo_close(c);
  sm__vec_release(&c->read_paths);
  sm__vec_release(&c->params);
  sm__vec_release(&c->models);
  sm__vec_release(&c->datasets);
  sm__vec_release(&c->presets);
  sm__vec_release(&c->factories);
  sm__vec_release(&c->pyqueue);
  sm__vec_release(&c->flags);
  sm__vec_release(&c->classes);
  sm__vec_release(&c->optalias);
  sm__vec_release(&c->positionals);
  sm__src_release(c);
  sm__vec_release(&c->cfgs);
  sm__vec_release(&c->pymods);
  sm__vec_release(&c->pycalls);
  sm__vec_release(&c->model_vars);
  sm__vec_release(&c->dc_instances);
  sm__vec_release(&c->built);
  sm__vec_release(&c->uses);
  sm__vec_release(&c->guarded);
  sm_arena_discard(&c->arena);
}

int sm_extract(const sm_extract_req *req, sm_extract_res *res, sm_err *err) {
  sm__ctx *c;
  double t0 = sm_now();
  int rc;

  memset(res, 0, sizeof(*res));
  sm_meta_init(&res->meta);
  if (req == NULL ||
      (req->script == NULL && (req->argv == NULL || req->argc <= 0)))
    return sm_err_set(err, SM_EINVAL, "no launch command given");
  if (req->argc > 0 && req->argv == NULL)
    return sm_err_set(err, SM_EINVAL, "launch command words missing");
  for (int i = 0; i < req->argc; i++)
    if (req->argv[i] == NULL)
      return sm_err_set(err, SM_EINVAL, "launch command word %d is NULL", i);
  c = sm_calloc(1, sizeof(*c));
  if (c == NULL)
    return sm_err_set(err, SM_ENOMEM, "out of memory");
  sm__ctx_init(c, req, res);
  c->up.note_file = sm__unexp_note_file;
  rc = sm__repo_open(c, err);
  if (rc == 0 && req->script != NULL)
    rc = sm__command_script(c, req->script, req->script_len,
                            req->script_name && req->script_name[0]
                                ? req->script_name
                                : "batch_script",
                            req->argv, req->argc > 0 ? req->argc : 0);
  else if (rc == 0)
    rc = sm__command(c, req->argv, req->argc);
  if (rc == 0) {
    sm__py_scan_all(c);
    sm__command_args(c);
    for (int i = 0; i < req->n_configs; i++) {
      const char *p =
          req->configs[i] ? sm__repo_join(c, c->cwd, req->configs[i]) : NULL;
      if (p == NULL || !sm__repo_is_file(c, p))
        sm__warn(c, "--config %s: not a file in the repository",
                 req->configs[i] ? req->configs[i] : "(null)");
      else
        sm__config_load(c, p, NULL, SM__L_CONFIG);
    }
    sm__named_presets(c);
    /* Code that the configs bring onto the path: experiment classes, and
     * the classes Hydra/LazyConfig `_target_`s instantiate. */
    sm__config_targets(c);
    sm__py_scan_all(c);
    /* Names the job selects that the code read so far does not define:
     * the registries that do. */
    sm__config_registry(c);
    sm__registry_lookup(c);
    sm__py_scan_all(c);
    sm__resolve(c);
  }
  sm__unexp_finish(c, rc == 0);
  res->elapsed_ms = (sm_now() - t0) * 1000.0;
  sm__ctx_release(c);
  sm_free(c);
  if (rc != 0) {
    sm_extract_res_release(res);
    res->elapsed_ms = (sm_now() - t0) * 1000.0;
  }
  return rc;
}

void sm_extract_res_release(sm_extract_res *res) {
  if (res == NULL)
    return;
  sm_meta_release(&res->meta);
  for (int i = 0; i < res->n_warnings; i++)
    sm_free(res->warnings[i]);
  sm_free(res->warnings);
  sm_free(res->provenance_json);
  res->provenance_json = NULL;
  sm__unexp_drop(res);
  res->warnings = NULL;
  res->n_warnings = 0;
  res->files_read = 0;
}

int sm_extract_load_aliases(const char *text, size_t len, sm_err *err) {
  if (text == NULL)
    return sm_err_set(err, SM_EINVAL, "aliases: no text");
  return sm__alias_load(text, len, err);
}

void sm_extract_write_json(const sm_extract_res *res, sm_jw *w) {
  sm_jw_obj_begin(w);
  sm_jw_key(w, "metadata");
  sm_meta_write_json(&res->meta, w);
  sm_jw_key(w, "evidence");
  sm_meta_write_evidence(&res->meta, w);
  sm_jw_kv_int(w, "files_read", res->files_read);
  sm_jw_kv_num(w, "elapsed_ms",
               (double)(long long)(res->elapsed_ms * 1000.0) / 1000.0);
  sm_jw_key(w, "warnings");
  sm_jw_arr_begin(w);
  for (int i = 0; i < res->n_warnings; i++)
    sm_jw_str(w, res->warnings[i]);
  sm_jw_arr_end(w);
  if (res->provenance_json != NULL) {
    sm_jw_key(w, "configuration");
    sm_jw_raw(w, res->provenance_json);
  }
  sm_jw_obj_end(w);
}
