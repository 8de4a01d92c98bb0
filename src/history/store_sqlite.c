/* store_sqlite.c - the embedded history store: one SQLite file in WAL
 * mode, safe for several processes adding at once, with a versioned schema
 * and forward-only migrations.
 *
 * Table jobs: seq (insertion order), id (unique), record (the JSON export
 * form, the source of truth), fp (packed fingerprint), and a few columns
 * copied out of the record for queries by hand.  A committed record
 * survives a crash of the writer (WAL, synchronous=NORMAL: only a power
 * loss can undo the last commits).
 *
 * Writers never starve each other and never give up early: a batch
 * (history import) commits every BATCH_ROWS records or BATCH_SECONDS and
 * then leaves the lock free for a moment; a writer that finds the lock
 * taken polls it every few milliseconds (our busy handler) up to the
 * store's timeout, and a statement that still gets SQLITE_BUSY (WAL
 * snapshot conflicts bypass the busy handler) is retried with a bounded
 * back-off until the same deadline.  A record that cannot be read back is
 * skipped and counted, never fatal to the whole history. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <sqlite3.h>

#include "history/history_int.h"
#include "util/util_int.h"

#define BATCH_ROWS 1000     /* records per transaction of a batch */
#define BATCH_SECONDS 0.1   /* longest a batch keeps the write lock */
#define BATCH_YIELD_US 5000 /* lock left free between two transactions */
#define POLL_MAX_US 2000    /* longest sleep between two lock attempts */

typedef struct sql_store {
  sqlite3 *db;          /* connection */
  char *path;           /* for messages */
  int readonly;         /* opened without SM_STORE_CREATE */
  int version;          /* the file's schema version once open */
  int timeout_ms;       /* bound on every lock wait */
  double busy_since;    /* first busy-handler call of the current wait */
  sqlite3_stmt *insert; /* prepared once */
  int batching;         /* inside sm_store_begin/end */
  int in_txn;           /* a batch transaction is open */
  long long pending;    /* puts in the open transaction */
  long long done;       /* puts of the batch committed */
  double txn_start;     /* when the open transaction began */
  sm__skips skips;      /* records that could not be read back */
} sql_store;

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

/* Polls a taken lock every 0.25..2 ms (with a little jitter, so that two
 * waiters do not move in step) until the store's timeout. */
static int busy_cb(void *arg, int count) {
  sql_store *s = arg;
  double now = sm_now();
  long us;

  if (count == 0)
    s->busy_since = now;
  if ((now - s->busy_since) * 1000.0 >= s->timeout_ms)
    return 0;
  us = 250L << (count < 3 ? count : 3);
  if (us > POLL_MAX_US)
    us = POLL_MAX_US;
  us += (long)(sm_hash_mix((uint64_t)count ^ (uint64_t)(uintptr_t)s) % 250);
  sleep_us(us);
  return 1;
}

static int is_busy(int rc) {
  return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

/* Steps a statement, retrying SQLITE_BUSY with a bounded back-off until
 * the store's timeout.  Returns sqlite3_step's last result. */
static int step_retry(sql_store *s, sqlite3_stmt *st) {
  double deadline = sm_now() + s->timeout_ms / 1000.0;
  long us = 500;
  int rc;

  for (;;) {
    rc = sqlite3_step(st);
    if (!is_busy(rc) || sm_now() >= deadline)
      return rc;
    sqlite3_reset(st);
    sleep_us(us);
    us = us * 2 > 50000 ? 50000 : us * 2;
  }
}

/* Each entry upgrades the schema from version i to i + 1. */
static const char *const migrations[SM_STORE_SCHEMA] = {
    /* 0 -> 1 */
    "CREATE TABLE jobs ("
    "  seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  id TEXT NOT NULL UNIQUE,"
    "  record TEXT NOT NULL,"
    "  fp BLOB NOT NULL,"
    "  end_state TEXT,"
    "  duration_s REAL,"
    "  submit_time REAL,"
    "  added_at REAL"
    ");",
    /* 1 -> 2: the configuration provenance digests, for queries by hand
     * (the record JSON stays the source of truth; records written before
     * have none, which matching treats as unknown). */
    "ALTER TABLE jobs ADD COLUMN config_digest TEXT;"
    "ALTER TABLE jobs ADD COLUMN residue_digest TEXT;"
    "CREATE INDEX jobs_config_digest ON jobs(config_digest);",
};

static int sql_fail(sql_store *s, int rc, const char *what, sm_err *err) {
  int code = SM_EIO;

  if (rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT)
    code = SM_ECORRUPT;
  else if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
    code = SM_EBUSY;
  else if (rc == SQLITE_NOMEM)
    code = SM_ENOMEM;
  else if (rc == SQLITE_CANTOPEN)
    code = SM_ENOENT;
  else if (rc == SQLITE_READONLY || rc == SQLITE_PERM || rc == SQLITE_AUTH)
    code = SM_EACCES;
  return sm_err_set(err, code, "%s: %s: %s", s->path, what,
                    s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
}

/* Runs statements without results (one after another, as many as sql
 * holds), retrying SQLITE_BUSY. */
static int exec(sql_store *s, const char *sql, sm_err *err) {
  while (sql != NULL && *sql != '\0') {
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, &tail);

    if (rc != SQLITE_OK)
      return sql_fail(s, rc, "query failed", err);
    if (st == NULL) /* only white space or a comment was left */
      break;
    rc = step_retry(s, st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
      return sql_fail(s, rc, "query failed", err);
    sql = tail;
  }
  return 0;
}

static int user_version(sql_store *s, int *v, sm_err *err) {
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);

  if (rc != SQLITE_OK)
    return sql_fail(s, rc, "cannot read the schema version", err);
  rc = step_retry(s, st);
  if (rc != SQLITE_ROW) {
    sqlite3_finalize(st);
    return sql_fail(s, rc, "cannot read the schema version", err);
  }
  *v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return 0;
}

/* Brings the schema to SM_STORE_SCHEMA inside one write transaction. */
static int migrate(sql_store *s, sm_err *err) {
  int v, rc;
  char sql[64];

  rc = exec(s, "BEGIN IMMEDIATE", err);
  if (rc != 0)
    return rc;
  rc = user_version(s, &v, err);
  if (rc == 0 && v > SM_STORE_SCHEMA)
    rc = sm_err_set(err, SM_ESCHEMA,
                    "%s: schema version %d is newer than this build's (%d)",
                    s->path, v, SM_STORE_SCHEMA);
  for (; rc == 0 && v < SM_STORE_SCHEMA; v++)
    rc = exec(s, migrations[v], err);
  if (rc == 0) {
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", SM_STORE_SCHEMA);
    rc = exec(s, sql, err);
  }
  if (rc == 0)
    return exec(s, "COMMIT", err);
  sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
  return rc;
}

static void sql_close(void *impl) {
  sql_store *s = impl;

  if (s == NULL)
    return;
  if (s->in_txn)
    sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
  sqlite3_finalize(s->insert);
  sqlite3_close(s->db);
  sm_free(s->path);
  sm_free(s);
}

void *sm__sqlite_open(const char *path, int flags, int timeout_ms,
                      sm_err *err) {
  sql_store *s = sm_calloc(1, sizeof(*s));
  struct stat st;
  int rc, v, oflags;

  if (s == NULL || (s->path = sm_strdup(path)) == NULL) {
    sm_free(s);
    sm_err_set(err, SM_ENOMEM, "history: out of memory");
    return NULL;
  }
  s->readonly = !(flags & SM_STORE_CREATE);
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    sm_err_set(err, SM_ENOTREG, "%s: not a regular file", path);
    sql_close(s);
    return NULL;
  }
  if (s->readonly && stat(path, &st) != 0) {
    sm_err_set(err, SM_ENOENT, "%s: no such history database", path);
    sql_close(s);
    return NULL;
  }
  oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (!s->readonly)
    oflags |= SQLITE_OPEN_CREATE;
  rc = sqlite3_open_v2(path, &s->db, oflags, NULL);
  if (rc != SQLITE_OK) {
    sql_fail(s, rc, "cannot open", err);
    sql_close(s);
    return NULL;
  }
  s->timeout_ms = timeout_ms;
  sqlite3_busy_handler(s->db, busy_cb, s);
  /* journal_mode reads the header: a non-database fails here. */
  rc = exec(s, "PRAGMA journal_mode=WAL", err);
  if (rc == 0)
    rc = exec(s, "PRAGMA synchronous=NORMAL", err);
  if (rc == 0)
    rc = user_version(s, &v, err);
  if (rc == 0 && v > SM_STORE_SCHEMA)
    rc = sm_err_set(err, SM_ESCHEMA,
                    "%s: schema version %d is newer than this build's (%d)",
                    path, v, SM_STORE_SCHEMA);
  if (rc == 0 && v < SM_STORE_SCHEMA) {
    if (s->readonly && v == 0)
      rc = sm_err_set(err, SM_ECORRUPT, "%s: not a SchedMate history", path);
    else if (s->readonly)
      ; /* An older file opened to read (without SM_STORE_CREATE) is read
         * as it is and not upgraded, so older builds sharing it keep
         * opening it: every version keeps the record JSON, and nothing
         * reads the newer columns. */
    else if ((rc = migrate(s, err)) == 0)
      v = SM_STORE_SCHEMA;
  }
  if (rc != 0) {
    sql_close(s);
    return NULL;
  }
  s->version = v;
  return s;
}

/* Commits the open batch transaction and, unless this is the end, leaves
 * the lock free for a moment and opens the next one. */
static int batch_step(sql_store *s, int last, sm_err *err) {
  int rc = 0;

  if (s->in_txn) {
    rc = exec(s, "COMMIT", err);
    if (rc != 0) {
      sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
      s->in_txn = 0;
      s->pending = 0;
      return rc;
    }
    s->in_txn = 0;
    s->done += s->pending;
    s->pending = 0;
  }
  if (last)
    return 0;
  sleep_us(BATCH_YIELD_US);
  rc = exec(s, "BEGIN IMMEDIATE", err);
  if (rc == 0) {
    s->in_txn = 1;
    s->txn_start = sm_now();
  }
  return rc;
}

static int sql_put(void *impl, const sm_record *r, sm_err *err) {
  sql_store *s = impl;
  static const char *sql_v1 =
      "INSERT INTO jobs(id, record, fp, end_state, duration_s, submit_time,"
      " added_at) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
      " ON CONFLICT(id) DO UPDATE SET record = ?2, fp = ?3, end_state = ?4,"
      " duration_s = ?5, submit_time = ?6, added_at = ?7";
  static const char *sql =
      "INSERT INTO jobs(id, record, fp, end_state, duration_s, submit_time,"
      " added_at, config_digest, residue_digest)"
      " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
      " ON CONFLICT(id) DO UPDATE SET record = ?2, fp = ?3, end_state = ?4,"
      " duration_s = ?5, submit_time = ?6, added_at = ?7,"
      " config_digest = ?8, residue_digest = ?9";
  unsigned char blob[SM__FP_BLOB_LEN];
  sqlite3_stmt *st;
  char *json;
  int rc;

  if (s->batching && !s->in_txn) {
    /* The previous step failed to start the next transaction. */
    rc = batch_step(s, 0, err);
    if (rc != 0)
      return rc;
  }
  rc = sm__record_encode(r, &json, blob, err);
  if (rc != 0)
    return rc;
  if (s->insert == NULL) {
    rc = sqlite3_prepare_v2(s->db, s->version >= 2 ? sql : sql_v1, -1,
                            &s->insert, NULL);
    if (rc != SQLITE_OK) {
      sm_free(json);
      return sql_fail(s, rc, "cannot add", err);
    }
  }
  st = s->insert;
  sqlite3_bind_text(st, 1, r->id, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, json, -1, SQLITE_TRANSIENT);
  sqlite3_bind_blob(st, 3, blob, sizeof(blob), SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 4, sm_end_state_name(r->end_state), -1, SQLITE_STATIC);
  if (r->duration_s == r->duration_s)
    sqlite3_bind_double(st, 5, r->duration_s);
  else
    sqlite3_bind_null(st, 5);
  if (r->submit_time == r->submit_time)
    sqlite3_bind_double(st, 6, r->submit_time);
  else
    sqlite3_bind_null(st, 6);
  if (r->added_at == r->added_at)
    sqlite3_bind_double(st, 7, r->added_at);
  else
    sqlite3_bind_null(st, 7);
  if (s->version >= 2) { /* NULL pointers bind as SQL NULL */
    sqlite3_bind_text(st, 8, r->meta.config_digest, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 9, r->meta.residue_digest, -1, SQLITE_TRANSIENT);
  }
  rc = step_retry(s, st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  sm_free(json);
  if (rc != SQLITE_DONE)
    return sql_fail(s, rc, "cannot add", err);
  if (s->batching) {
    s->pending++;
    if (s->pending >= BATCH_ROWS || sm_now() - s->txn_start >= BATCH_SECONDS)
      return batch_step(s, 0, err);
  }
  return 0;
}

/* Reads the record in column col of a row; a record that cannot be read
 * gets a message naming the file, the row and the id. */
static int row_record(sql_store *s, sqlite3_stmt *st, int col, long long seq,
                      const char *id, sm_record *r, sm_err *err) {
  const char *json = (const char *)sqlite3_column_text(st, col);
  int n = sqlite3_column_bytes(st, col);
  sm_err e = {0};

  if (json == NULL)
    return sm_err_set(err, SM_ECORRUPT, "%s: row %lld (id '%s'): no record",
                      s->path, seq, id ? id : "?");
  if (sm_record_from_json(r, json, (size_t)n, &e) != 0)
    return sm_err_set(err, SM_ECORRUPT, "%s: row %lld (id '%s'): %s", s->path,
                      seq, id ? id : "?", e.msg);
  return 0;
}

static int sql_get(void *impl, const char *id, sm_record *r, sm_err *err) {
  sql_store *s = impl;
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(
      s->db, "SELECT record, seq FROM jobs WHERE id = ?1", -1, &st, NULL);

  if (rc != SQLITE_OK)
    return sql_fail(s, rc, "cannot read", err);
  sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
  rc = step_retry(s, st);
  if (rc == SQLITE_ROW)
    rc = row_record(s, st, 0, sqlite3_column_int64(st, 1), id, r, err);
  else if (rc == SQLITE_DONE)
    rc = sm_err_set(err, SM_ENOTFOUND, "%s: no job '%s'", s->path, id);
  else
    rc = sql_fail(s, rc, "cannot read", err);
  sqlite3_finalize(st);
  return rc;
}

static int sql_each(void *impl, int (*fn)(const sm_record *, void *), void *arg,
                    sm_err *err) {
  sql_store *s = impl;
  sqlite3_stmt *st;
  sm_record r;
  int rc = sqlite3_prepare_v2(
      s->db, "SELECT record, seq, id FROM jobs ORDER BY seq", -1, &st, NULL);

  if (rc != SQLITE_OK)
    return sql_fail(s, rc, "cannot read", err);
  sm__skip_reset(&s->skips);
  sm_record_init(&r);
  while ((rc = step_retry(s, st)) == SQLITE_ROW) {
    sm_err e = {0};
    if (row_record(s, st, 0, sqlite3_column_int64(st, 1),
                   (const char *)sqlite3_column_text(st, 2), &r, &e) != 0) {
      /* Skipped and counted; the rest of the history still answers. */
      sm__skip_note(&s->skips, "%s", e.msg);
      continue;
    }
    if (fn(&r, arg) != 0) {
      rc = SQLITE_DONE;
      break;
    }
  }
  sm_record_release(&r);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 0 : sql_fail(s, rc, "cannot read", err);
}

static long long sql_count(void *impl, sm_err *err) {
  sql_store *s = impl;
  sqlite3_stmt *st;
  long long n;
  int rc =
      sqlite3_prepare_v2(s->db, "SELECT count(*) FROM jobs", -1, &st, NULL);

  if (rc != SQLITE_OK)
    return sql_fail(s, rc, "cannot count", err);
  rc = step_retry(s, st);
  n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  return n >= 0 ? n : sql_fail(s, rc, "cannot count", err);
}

/* Changes when any connection commits: data_version (other connections)
 * combined with total_changes (this one). */
static int sql_version(void *impl, uint64_t *v, sm_err *err) {
  sql_store *s = impl;
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(s->db, "PRAGMA data_version", -1, &st, NULL);

  if (rc != SQLITE_OK)
    return sql_fail(s, rc, "cannot read", err);
  rc = step_retry(s, st);
  if (rc != SQLITE_ROW) {
    sqlite3_finalize(st);
    return sql_fail(s, rc, "cannot read", err);
  }
  *v = ((uint64_t)sqlite3_column_int64(st, 0) << 32) ^
       (uint64_t)sqlite3_total_changes(s->db);
  sqlite3_finalize(st);
  return 0;
}

static int sql_load(void *impl, sm_index **ixp, char ***idsp, size_t *np,
                    sm_err *err) {
  sql_store *s = impl;
  sqlite3_stmt *st;
  sm_index *ix = sm_index_new(SM_FP_DIMS);
  char **ids = NULL;
  size_t n = 0, cap = 0;
  int rc;

  if (ix == NULL)
    return sm_err_set(err, SM_ENOMEM, "history: out of memory");
  /* Only ids and fingerprints: the records stay on disk. */
  rc = sqlite3_prepare_v2(s->db, "SELECT id, fp, seq FROM jobs ORDER BY seq",
                          -1, &st, NULL);
  if (rc != SQLITE_OK) {
    sm_index_free(ix);
    return sql_fail(s, rc, "cannot read", err);
  }
  sm__skip_reset(&s->skips);
  while ((rc = step_retry(s, st)) == SQLITE_ROW) {
    float fp[SM_FP_DIMS];
    const unsigned char *blob = sqlite3_column_blob(st, 1);
    const char *id = (const char *)sqlite3_column_text(st, 0);
    if (id == NULL) {
      sm__skip_note(&s->skips, "%s: row %lld: a job without id", s->path,
                    (long long)sqlite3_column_int64(st, 2));
      continue;
    }
    if (blob == NULL ||
        sm__fp_unpack(blob, (size_t)sqlite3_column_bytes(st, 1), fp) != 0) {
      /* Another fingerprint version (or damage): recompute it from the
       * record, which is the source of truth; skip the row if that is
       * damaged too. */
      sm_record r;
      sm_err e = {0};
      int grc;
      sm_record_init(&r);
      grc = sql_get(s, id, &r, &e);
      if (grc == SM_ECORRUPT) {
        sm_record_release(&r);
        sm__skip_note(&s->skips, "%s", e.msg);
        continue;
      }
      if (grc != 0) {
        sm_record_release(&r);
        rc = sm_err_set(err, grc, "%s", e.msg);
        break;
      }
      memcpy(fp, r.fp, sizeof(fp));
      sm_record_release(&r);
    }
    if (SM__GROW(ids, n + 1, cap) != 0) {
      rc = SM_ENOMEM;
      break;
    }
    if ((ids[n] = sm_strdup(id)) == NULL || sm_index_add(ix, fp) != 0) {
      sm_free(ids[n]);
      rc = SM_ENOMEM;
      break;
    }
    n++;
  }
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    for (size_t i = 0; i < n; i++)
      sm_free(ids[i]);
    sm_free(ids);
    sm_index_free(ix);
    if (rc == SM_ENOMEM)
      return sm_err_set(err, rc, "history: out of memory");
    if (rc < 0)
      return rc;
    return sql_fail(s, rc, "cannot read", err);
  }
  *ixp = ix;
  *idsp = ids;
  *np = n;
  return 0;
}

static int sql_begin(void *impl, sm_err *err) {
  sql_store *s = impl;
  int rc = exec(s, "BEGIN IMMEDIATE", err);

  s->batching = 1;
  s->pending = 0;
  s->done = 0;
  if (rc == 0) {
    s->in_txn = 1;
    s->txn_start = sm_now();
  }
  return rc;
}

static int sql_end(void *impl, sm_err *err) {
  sql_store *s = impl;
  int rc = batch_step(s, 1, err);

  s->batching = 0;
  return rc;
}

static sm__skips *sql_skips(void *impl) {
  return &((sql_store *)impl)->skips;
}

static long long sql_batch_done(void *impl) {
  return ((sql_store *)impl)->done;
}

const sm__store_ops sm__sqlite_ops = {
    "sqlite", sql_put,   sql_get, sql_each,  sql_count, sql_version,   sql_load,
    NULL,     sql_begin, sql_end, sql_close, sql_skips, sql_batch_done};
