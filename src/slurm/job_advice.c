/* job_advice.c - from a Slurm job to an estimate: which directory is the
 * job's repository, what its batch script says (through the Advisor's
 * extractor, read as `bash SCRIPT ARGS` in the working directory), what
 * Slurm itself knows of the request (GPUs, nodes), the history's answer,
 * and the comment that carries estimate and provenance.
 *
 * The agent runs as root and the repository belongs to a user, so the
 * root is chosen carefully: the job's working directory, or the top of
 * the git work tree that contains it (at most eight levels up), never "/"
 * or a system directory, and by default only a directory owned by the
 * job's user.  Nothing outside the root is read (the extractor's rule);
 * when no root is acceptable the script alone is read. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "slurm/slurm_int.h"

#define MAX_UP 8
#define MAX_ARGS 64

/* Directories that are never a repository. */
static int system_dir(const char *p) {
  static const char *const bad[] = {
      "/proc", "/sys", "/dev",   "/etc", "/usr",     "/boot", "/bin",
      "/sbin", "/lib", "/lib64", "/run", "/var/run", NULL};
  if (strcmp(p, "/") == 0)
    return 1;
  for (int i = 0; bad[i]; i++) {
    size_t n = strlen(bad[i]);
    if (strncmp(p, bad[i], n) == 0 && (p[n] == '/' || p[n] == '\0'))
      return 1;
  }
  return 0;
}

/* A directory the agent may read for this user. */
static int acceptable(const sm_slurm_agent *a, const char *dir, uint32_t uid,
                      char *why, size_t cap) {
  struct stat st;

  if (system_dir(dir)) {
    snprintf(why, cap, "%s: a system directory, not read", dir);
    return 0;
  }
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    snprintf(why, cap, "%s: not a directory", dir);
    return 0;
  }
  if (a->o.check_owner >= 0 && st.st_uid != (uid_t)uid) {
    snprintf(why, cap, "%s: owned by uid %u, not by the job's user %u", dir,
             (unsigned)st.st_uid, (unsigned)uid);
    return 0;
  }
  return 1;
}

/* Chooses the repository root for work_dir: root gets the path, *rel the
 * working directory below it (a pointer into root's buffer space kept in
 * rel_buf).  Returns 1 when a root was found, 0 when the script must be
 * read alone (why says so). */
static int find_root(const sm_slurm_agent *a, uint32_t uid,
                     const char *work_dir, char *root, char *rel_buf, char *why,
                     size_t why_cap) {
  char wd[PATH_MAX], cur[PATH_MAX];

  rel_buf[0] = '\0';
  if (work_dir == NULL || work_dir[0] != '/') {
    snprintf(why, why_cap, "no absolute working directory");
    return 0;
  }
  if (realpath(work_dir, wd) == NULL) {
    snprintf(why, why_cap, "%s: %s", work_dir, strerror(errno));
    return 0;
  }
  if (!acceptable(a, wd, uid, why, why_cap))
    return 0;
  snprintf(root, PATH_MAX, "%s", wd);
  snprintf(cur, sizeof(cur), "%s", wd);
  for (int up = 0; up <= MAX_UP; up++) {
    char git[PATH_MAX + 8];
    struct stat st;
    char *slash;
    char tmp[PATH_MAX];
    if (snprintf(git, sizeof(git), "%s/.git", cur) < (int)sizeof(git) &&
        lstat(git, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) {
      size_t n = strlen(cur);
      snprintf(root, PATH_MAX, "%s", cur);
      snprintf(rel_buf, PATH_MAX, "%s", wd[n] == '/' ? wd + n + 1 : "");
      return 1;
    }
    slash = strrchr(cur, '/');
    if (slash == NULL || slash == cur)
      break;
    *slash = '\0';
    if (!acceptable(a, cur, uid, tmp, sizeof(tmp)))
      break;
  }
  return 1;
}

/* Splits a command line at blanks (Slurm keeps no quoting). */
static int split_words(char *s, const char **out, int max) {
  int n = 0;
  for (char *tok = strtok(s, " \t\n"); tok && n < max;
       tok = strtok(NULL, " \t\n"))
    out[n++] = tok;
  return n;
}

static void fmt_duration(double s, char *out, size_t cap) {
  long long t = (long long)llround(s);
  if (t >= 86400)
    snprintf(out, cap, "%lldd%02lldh", t / 86400, (t % 86400) / 3600);
  else if (t >= 3600)
    snprintf(out, cap, "%lldh%02lldm", t / 3600, (t % 3600) / 60);
  else if (t >= 60)
    snprintf(out, cap, "%lldm%02llds", t / 60, t % 60);
  else
    snprintf(out, cap, "%llds", t);
}

/* Slurm's own record of the request is authoritative for resources:
 * command-line options of sbatch override the script's #SBATCH lines. */
static void apply_request(const sm__advise_in *in, sm_meta *m) {
  double gpus = 0;
  if (in->nodes > 0)
    sm_meta_set_num(m, SM_META_NODES, in->nodes, "slurm:request");
  if (in->gpus_total > 0)
    gpus = in->gpus_total;
  else if (in->gpus_per_node > 0)
    gpus = (double)in->gpus_per_node * (in->nodes > 0 ? in->nodes : 1);
  if (gpus > 0)
    sm_meta_set_num(m, SM_META_GPUS, gpus, "slurm:request");
}

int sm__advise_job(sm_slurm_agent *a, sm_store *s, const sm__advise_in *in,
                   sm__advice_sum *sum, sm_meta *meta, sm_jw *w) {
  char root[PATH_MAX], rel[PATH_MAX], why[PATH_MAX + 64] = "";
  char user[64] = "";
  char *cmd = NULL;
  const char *words[MAX_ARGS];
  int nw = 0, have_root, rc = 0;
  sm_extract_req q;
  sm_extract_res res;
  sm_advise_opts ao = {0};
  sm_fp_extra x;
  sm_advice adv;
  sm_err err = {0};

  memset(sum, 0, sizeof(*sum));
  sum->best = NAN;
  have_root = find_root(a, in->uid, in->work_dir, root, rel, why, sizeof(why));
  memset(&q, 0, sizeof(q));
  q.repo = have_root ? root : a->empty_repo;
  q.cwd = have_root && rel[0] ? rel : NULL;
  q.time_budget_s = in->budget_s > 0 ? in->budget_s : 2.0;
  if (in->script != NULL) {
    q.script = in->script;
    q.script_len = in->script_len;
    q.script_name = "batch_script";
    q.argv = in->argv;
    q.argc = in->argc;
  } else if (in->argc > 0) {
    q.argv = in->argv;
    q.argc = in->argc;
  } else if (in->command != NULL && (cmd = sm_strdup(in->command)) != NULL &&
             (nw = split_words(cmd, words, MAX_ARGS)) > 0) {
    /* An interactive job: its command line is the launch command. */
    q.argv = words;
    q.argc = nw;
  } else {
    q.script = "";
  }
  rc = sm_extract(&q, &res, &err);
  sm_free(cmd);
  if (rc == SM_ENOMEM)
    return rc;
  if (rc == 0)
    rc = sm_meta_copy(meta, &res.meta);
  if (rc == SM_ENOMEM) {
    sm_extract_res_release(&res);
    return rc;
  }
  apply_request(in, meta);

  if (in->user != NULL) {
    snprintf(user, sizeof(user), "%s", in->user);
  } else {
    struct passwd pw, *pp = NULL;
    char pwbuf[1024];
    if (getpwuid_r((uid_t)in->uid, &pw, pwbuf, sizeof(pwbuf), &pp) == 0 && pp)
      snprintf(user, sizeof(user), "%s", pp->pw_name);
    else
      snprintf(user, sizeof(user), "%u", (unsigned)in->uid);
  }
  /* The partition is not part of a job's identity here: the plugin often
   * does not know it yet (the default is chosen after it runs), and a
   * history written by the agent must match both paths the same way. */
  x.user = user;
  x.name = in->name;
  x.vc = NULL;
  ao.top_k = a->o.top_k > 0 ? a->o.top_k : 5;
  ao.threshold = a->o.threshold > 0 ? a->o.threshold : 0.95f;
  sm_advice_init(&adv);
  if (rc != 0) {
    /* The request itself was unusable: say so rather than search. */
    adv.fallback = SM_FALLBACK_EXTRACT_FAILED;
    adv.best_score = NAN;
    snprintf(adv.detail, sizeof(adv.detail), "%s", err.msg);
  } else if (sm_advise(s, meta, &x, &ao, &adv, &err) != 0) {
    sm_advice_release(&adv);
    sm_extract_res_release(&res);
    return SM_ENOMEM;
  }
  sum->best = adv.best_score;
  if (adv.est.valid && adv.est.duration_s > 0) {
    char d[32], sd[32];
    sum->has_est = 1;
    sum->est_s = adv.est.duration_s;
    sum->n = adv.est.n;
    sum->stdev = adv.est.stdev;
    for (int i = 0, k = 0; i < adv.n_matches && k < 3; i++) {
      size_t l = strlen(sum->ids);
      if (adv.matches[i].end_state != SM_END_COMPLETED)
        continue;
      if (l + strlen(adv.matches[i].id) + 2 >= sizeof(sum->ids))
        break;
      snprintf(sum->ids + l, sizeof(sum->ids) - l, "%s%s", k ? "," : "",
               adv.matches[i].id);
      k++;
    }
    fmt_duration(sum->est_s, d, sizeof(d));
    fmt_duration(isnan(sum->stdev) ? 0 : sum->stdev, sd, sizeof(sd));
    snprintf(sum->note, sizeof(sum->note),
             SM__NOTE_PREFIX " est %s (%.0fs, n=%d, sd %s, sim %.2f; like %s)",
             d, sum->est_s, sum->n, sd, (double)adv.best_score, sum->ids);
    if (a->o.tl_margin > 0) {
      double pad = a->o.tl_pad_s > 0 ? a->o.tl_pad_s : 600;
      double m = ceil((sum->est_s * a->o.tl_margin + pad) / 60.0);
      sum->tl_min = m < 1 ? 1 : m > 5e8 ? 500000000u : (uint32_t)m;
    }
  } else {
    const char *fb = sm_fallback_name(adv.fallback);
    snprintf(sum->fallback, sizeof(sum->fallback), "%s", fb ? fb : "none");
    if (isfinite(adv.best_score) && adv.best_score > 0)
      snprintf(sum->note, sizeof(sum->note),
               SM__NOTE_PREFIX " no estimate (%s, best sim %.2f)",
               sum->fallback, (double)adv.best_score);
    else
      snprintf(sum->note, sizeof(sum->note),
               SM__NOTE_PREFIX " no estimate (%s)", sum->fallback);
  }
  if (w != NULL) {
    sm_jw_key(w, "repo");
    if (have_root)
      sm_jw_str(w, root);
    else
      sm_jw_null(w);
    sm_jw_key(w, "metadata");
    sm_meta_write_json(meta, w);
    sm_jw_key(w, "evidence");
    sm_meta_write_evidence(meta, w);
    sm_advice_write_json(&adv, w);
    sm_jw_key(w, "warnings");
    sm_jw_arr_begin(w);
    if (!have_root)
      sm_jw_str(w, why);
    if (rc != 0)
      sm_jw_str(w, err.msg);
    for (int i = 0; rc == 0 && i < res.n_warnings; i++)
      sm_jw_str(w, res.warnings[i]);
    sm_jw_arr_end(w);
  }
  sm_advice_release(&adv);
  sm_extract_res_release(&res);
  return 0;
}

const char *sm__comment_note(const char *comment) {
  return comment ? strstr(comment, SM__NOTE_PREFIX) : NULL;
}

char *sm__comment_merge(const char *old, const char *note) {
  const char *ours = sm__comment_note(old);
  size_t keep = old ? (ours ? (size_t)(ours - old) : strlen(old)) : 0;
  sm_buf b;

  /* Drop the separator (and blanks) between the user's text and ours. */
  while (keep > 0 && (old[keep - 1] == ' ' || old[keep - 1] == '|'))
    keep--;
  sm_buf_init(&b, 4096);
  if (keep > 0) {
    sm_buf_add(&b, old, keep);
    sm_buf_adds(&b, " | ");
  }
  sm_buf_adds(&b, note);
  if (b.len == 0) {
    sm_buf_release(&b);
    return sm_strdup("");
  }
  return sm_buf_take(&b);
}
