/* test_failure_sigdb.c - the signature file: parsing, malformed input,
 * literal extraction for the prefilter, precedence of operator files and
 * matching of realistic lines against the built-in knowledge. */
#include "failure/failure_int.h"
#include "harness.h"

static sm_sigdb *builtin(void) {
  sm_sigdb *db = sm_sigdb_new();
  sm_err err = {0};

  if (db == NULL || sm_sigdb_load_builtin(db, &err) != 0)
    SM_FAIL_AT("built-in signatures: %s", err.msg);
  return db;
}

static int load(sm_sigdb *db, const char *text, sm_err *err) {
  sm_err_clear(err);
  return sm_sigdb_load_text(db, text, strlen(text), "test.ini", err);
}

SM_TEST(failure_needles_are_required_literals) {
  char n[16][64];

  ASSERT_EQ(sm__regex_needles("CUDA out of memory", n, 16), 1);
  ASSERT_STREQ(n[0], "cuda out of memory");
  ASSERT_EQ(sm__regex_needles("(foo|bar)? xyzzy [0-9]+", n, 16), 1);
  ASSERT_STREQ(n[0], " xyzzy ");
  ASSERT_EQ(sm__regex_needles("abc|defg", n, 16), 2);
  ASSERT_STREQ(n[0], "abc");
  ASSERT_STREQ(n[1], "defg");
  /* An alternative without a literal of three bytes disables the filter. */
  ASSERT_EQ(sm__regex_needles("abcdef|x[0-9]", n, 16), 0);
  /* Quantified characters are optional; escapes are literal. */
  ASSERT_EQ(sm__regex_needles("ab*cdef", n, 16), 1);
  ASSERT_STREQ(n[0], "cdef");
  ASSERT_EQ(sm__regex_needles("\\[c10d\\] client", n, 16), 1);
  ASSERT_STREQ(n[0], "[c10d] client");
  ASSERT_EQ(sm__regex_needles("^Killed$", n, 16), 1);
  ASSERT_STREQ(n[0], "killed");
  ASSERT_EQ(sm__regex_needles("\\bEFA\\b.*error", n, 16), 1);
  ASSERT_STREQ(n[0], "error");
  ASSERT_EQ(sm__regex_needles("", n, 16), 0);
  /* A required group gives one literal per alternative. */
  ASSERT_EQ(sm__regex_needles("(UserWarning|FutureWarning):", n, 16), 2);
  ASSERT_STREQ(n[0], "userwarning");
  ASSERT_STREQ(n[1], "futurewarning");
  ASSERT_EQ(sm__regex_needles("^ *(abc|de)", n, 16), 0);
  ASSERT_EQ(sm__regex_needles("(optional)? t", n, 16), 0);
  ASSERT_EQ(sm__regex_needles("(optional)? tailing", n, 16), 1);
  ASSERT_STREQ(n[0], " tailing");
}

SM_TEST(failure_builtin_signatures_load_and_all_have_literals) {
  sm_sigdb *db = builtin();

  ASSERT(sm_sigdb_count(db) > 150);
  /* Every built-in expression can be skipped by the literal prefilter, so
   * matching costs one pass over a line, not one regex per signature. */
  ASSERT_EQ(db->n_unfiltered, 0);
  sm_sigdb_free(db);
}

SM_TEST(failure_builtin_matches_families) {
  sm_sigdb *db = builtin();
  sm_sigmatch m;
  static const struct {
    const char *line, *name, *role, *category, *component;
  } cases[] = {
      {"RuntimeError: CUDA error: uncorrectable ECC error encountered",
       "gpu-ecc-uncorrectable", "cause", "infrastructure", "gpu"},
      {"[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to "
       "allocate 2.00 GiB",
       "cuda-oom", "cause", "user", "gpu_memory"},
      {"node7:12:40 [1] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: "
       "cannot open shared object file: No such file or directory",
       "benign-nccl-net-plugin", "benign", "unknown", "none"},
      {"Gradient overflow.  Skipping step, loss scaler 0 reducing loss "
       "scale to 8192.0",
       "benign-amp-overflow", "benign", "unknown", "none"},
      {"[2024-01-01 00:00:00,000] torch.distributed.elastic.multiprocessing"
       ".api: [WARNING] Sending process 12 closing signal SIGTERM",
       "torchrun-sigterm", "symptom", "unknown", "none"},
      {"ImportError: /x/site-packages/ext.so: undefined symbol: _ZN3c10",
       "undefined-symbol", "cause", "framework", "none"},
      {"OSError: [Errno 116] Stale file handle", "storage-stale-handle",
       "cause", "infrastructure", "storage"},
      {"include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space "
       "left on device",
       "node-shm-exhausted", "cause", "infrastructure", "node"},
      {"OSError: [Errno 28] No space left on device: '/ckpt/a.pt'",
       "storage-enospc", "cause", "infrastructure", "storage"},
  };

  for (size_t i = 0; i < SM_ARRAY_LEN(cases); i++) {
    if (!sm_sigdb_match(db, cases[i].line, strlen(cases[i].line), &m))
      SM_FAIL_AT("no match: %s", cases[i].line);
    ASSERT_STREQ(m.name, cases[i].name);
    ASSERT_STREQ(m.role, cases[i].role);
    ASSERT_STREQ(m.category, cases[i].category);
    ASSERT_STREQ(m.component, cases[i].component);
  }
  ASSERT(!sm_sigdb_match(db, "step 100 loss 2.31", 18, &m));
  ASSERT(!sm_sigdb_match(db, "", 0, &m));
  sm_sigdb_free(db);
}

SM_TEST(failure_xid_codes_use_the_table) {
  sm_sigdb *db = builtin();
  sm_sigmatch m;
  const char *l79 = "Mar  1 10:00:00 gpu7 kernel: NVRM: Xid (PCI:0000:3b:00): "
                    "79, pid=1, GPU has fallen off the bus.";
  const char *l45 = "NVRM: Xid (PCI:0000:3b:00): 45, pid=1, Ch 00000010";
  const char *l13 = "NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception";

  ASSERT(sm_sigdb_match(db, l79, strlen(l79), &m));
  ASSERT_EQ(m.xid, 79);
  ASSERT_STREQ(m.category, "infrastructure");
  ASSERT_STREQ(m.component, "gpu");
  ASSERT(sm_sigdb_match(db, l45, strlen(l45), &m));
  ASSERT_EQ(m.xid, 45);
  ASSERT_STREQ(m.role, "symptom");
  ASSERT(sm_sigdb_match(db, l13, strlen(l13), &m));
  ASSERT_STREQ(m.category, "user");
  sm_sigdb_free(db);
}

SM_TEST(failure_sigdb_operator_file_takes_precedence) {
  sm_sigdb *db = builtin();
  sm_sigmatch m;
  sm_err err;
  const char *line = "RuntimeError: CUDA out of memory while loading rack7";

  ASSERT(sm_sigdb_match(db, line, strlen(line), &m));
  ASSERT_STREQ(m.name, "cuda-oom");
  /* An operator knows that rack 7 had a power fault. */
  ASSERT_OK(load(db,
                 "# site knowledge\n"
                 "[signature site-rack7-power]\n"
                 "match = rack7\n"
                 "category = infrastructure\n"
                 "component = node\n"
                 "confidence = 0.9\n",
                 &err));
  ASSERT(sm_sigdb_match(db, line, strlen(line), &m));
  ASSERT_STREQ(m.name, "site-rack7-power");
  ASSERT_STREQ(m.component, "node");
  /* Redefining a built-in name replaces it. */
  ASSERT_OK(load(db,
                 "[signature cuda-oom]\nmatch = CUDA out of memory\n"
                 "category = framework\n",
                 &err));
  line = "RuntimeError: CUDA out of memory.";
  ASSERT(sm_sigdb_match(db, line, strlen(line), &m));
  ASSERT_STREQ(m.name, "cuda-oom");
  ASSERT_STREQ(m.category, "framework");
  sm_sigdb_free(db);
}

SM_TEST(failure_sigdb_rejects_malformed_text_with_line_numbers) {
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"[signature a]\nmatch = x(\n", "test.ini:2: bad regular expression"},
      {"[signature a]\ncolour = red\n", "test.ini:2: unknown key 'colour'"},
      {"[signature a]\nmatch = abc\ncategory = hardware\n",
       "test.ini:3: unknown category 'hardware'"},
      {"[signature a]\ncategory = user\n", "has no 'match' line"},
      {"[signature]\nmatch = abc\n", "test.ini:1: signature needs a name"},
      {"[xid ninety]\n", "test.ini:1: xid needs a numeric code"},
      {"[gizmo x]\n", "test.ini:1: unknown section '[gizmo]'"},
      {"match = abc\n", "test.ini:1: key 'match' outside a section"},
      {"[signature a]\nmatch abc\n", "test.ini:2: expected 'key = value'"},
      {"[signature a]\nmatch = abc\nconfidence = 1.5\n",
       "confidence must be a number in [0, 1]"},
      {"[signature a]\nmatch = abc\nretryable = maybe\n", "expected yes or no"},
      {"[hostnames]\nmatch = node[0-9]+\n", "needs a capture group"},
      {"[signature a]\nmatch = abc\n[signature a]\nmatch = abd\n",
       "defined twice"},
      {"[signature a\n", "section header must be"},
      {"[signature a]\nmatch =\n", "has no value"},
      {"[signature a]\nmatch = (ab)x{300}\n", "repetition count above 255"},
      {"[signature a]\nmatch = (ab)x\\1\n", "back-references"},
      {"[signature a]\nmatch = e+++++++++++++++++++++++++++++\n",
       "too complex"},
      {"[signature a]\nmatch = (((a{200}){200}){200})\n", "too complex"},
      {"[setting s]\nmatch = NCCL_X=\n", "needs 'match' and 'explains'"},
      {"[setting s]\nexplains = nccl-socket-error\n",
       "needs 'match' and 'explains'"},
      {"[setting s]\nmatch = a\nexplains = bad/name\n", "bad signature name"},
      {"[setting s]\nmatch = a\nexplains = x\ncolour = red\n",
       "unknown key 'colour' in a setting"},
      {"[setting]\n", "setting needs a name"},
      {"[progress]\nmatch = step(\n", "bad regular expression"},
      {"[progress]\nwhen = x\n", "unknown key 'when' in [progress]"},
      {"[progress x]\n", "unknown section"},
      {"[signature a]\nmatch = abc\nresolver = magic\n",
       "resolver must be import, traceback, oom, memory, cgroup-memory or "
       "none"},
  };
  sm_sigdb *db = builtin();
  size_t before = sm_sigdb_count(db);
  sm_err err;
  sm_sigmatch m;

  for (size_t i = 0; i < SM_ARRAY_LEN(bad); i++) {
    int rc = load(db, bad[i].text, &err);
    if (rc != SM_EPARSE)
      SM_FAIL_AT("case %zu: rc %d", i, rc);
    if (strstr(err.msg, bad[i].msg) == NULL)
      SM_FAIL_AT("case %zu: message '%s' lacks '%s'", i, err.msg, bad[i].msg);
    /* Nothing of a broken text is kept; the database still works. */
    ASSERT_EQ(sm_sigdb_count(db), before);
  }
  ASSERT(sm_sigdb_match(db, "GPU has fallen off the bus", 26, &m));
  ASSERT_STREQ(m.name, "gpu-fallen-off-bus");
  sm_sigdb_free(db);
}

SM_TEST(failure_sigdb_rejects_binary_and_huge_lines) {
  sm_sigdb *db = sm_sigdb_new();
  sm_err err = {0};
  char *big = malloc(10000);
  static const char nul[] = "[signature a]\nmatch = a\0bc\n";

  ASSERT_EQ(sm_sigdb_load_text(db, nul, sizeof(nul) - 1, "bin", &err),
            SM_EPARSE);
  ASSERT(strstr(err.msg, "NUL") != NULL);
  memset(big, 'a', 9999);
  big[9999] = '\0';
  sm_err_clear(&err);
  ASSERT_EQ(load(db, big, &err), SM_EPARSE);
  ASSERT(strstr(err.msg, "longer than") != NULL);
  /* Empty text and comments only are fine. */
  ASSERT_OK(load(db, "", &err));
  ASSERT_OK(load(db, "# nothing\n\n; also nothing\n", &err));
  ASSERT_EQ(sm_sigdb_count(db), 0);
  free(big);
  sm_sigdb_free(db);
}

SM_TEST(failure_sigdb_file_errors_name_the_file) {
  sm_sigdb *db = sm_sigdb_new();
  sm_err err = {0};

  ASSERT_EQ(sm_sigdb_load_file(db, "tests/data/failure/no-such.ini", &err),
            SM_ENOENT);
  ASSERT(strstr(err.msg, "no-such.ini") != NULL);
  sm_err_clear(&err);
  ASSERT(sm_sigdb_load_file(db, "tests/data/failure", &err) < 0);
  ASSERT(strstr(err.msg, "directory") != NULL);
  sm_sigdb_free(db);
  sm_sigdb_free(NULL);
}

SM_TEST(failure_unless_vetoes_a_match) {
  sm_sigdb *db = sm_sigdb_new();
  sm_err err = {0};
  sm_sigmatch m;

  ASSERT_OK(load(db,
                 "[signature link]\nmatch = link down\nunless = expected\n"
                 "category = infrastructure\ncomponent = network\n",
                 &err));
  ASSERT(sm_sigdb_match(db, "eth3: link down", 15, &m));
  ASSERT(!sm_sigdb_match(db, "eth3: link down (expected, drained)", 35, &m));
  sm_sigdb_free(db);
}

extern const char sm__embed_signatures[];
extern const unsigned long sm__embed_signatures_len;

/* The knowledge table says, entry by entry, what class each record
 * covers: a comment line directly above every [section]. */
SM_TEST(failure_builtin_entries_each_have_a_comment) {
  const char *s = sm__embed_signatures, *end = s + sm__embed_signatures_len;
  const char *prev = NULL;
  int entries = 0;

  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    const char *e = nl ? nl : end;
    if (s < e && *s == '[') {
      entries++;
      if (prev == NULL || *prev != '#')
        SM_FAIL_AT("entry without a comment: %.*s", (int)(e - s), s);
    }
    prev = s;
    s = e + 1;
  }
  ASSERT(entries > 150);
}
