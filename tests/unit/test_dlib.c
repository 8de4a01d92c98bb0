/* test_dlib.c - optional libraries loaded on first use (util/dlib.c): a
 * library that opens with every function asked for; a file that is not
 * there; a library without one of the functions; the variable that names
 * another file; a long loader reason that must not push the hint out of
 * the one-line message. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "util/dlib_int.h"

SM_TEST(dlib_opens_and_resolves) {
  sm__dlib d = {"zlib", "libz.so.1", NULL, "install zlib1g"};
  sm_err err = {0};

  ASSERT_OK(sm__dlib_open(&d));
  ASSERT(sm__dlib_sym(&d, "zlibVersion") != NULL);
  ASSERT(sm__dlib_sym(&d, "inflate") != NULL);
  ASSERT_OK(sm__dlib_status(&d, &err));
  ASSERT_EQ(err.code, 0);
}

SM_TEST(dlib_missing_file_and_symbol) {
  sm__dlib d = {"the Foo solver", "libNoSuchFoo.so.7", NULL,
                "install foo, or use --bar"};
  sm__dlib z = {"the Foo solver", "libz.so.1", NULL, "install foo"};
  sm_err err = {0};

  ASSERT_EQ(sm__dlib_open(&d), SM_ENOENT);
  ASSERT(sm__dlib_sym(&d, "foo_new") == NULL); /* no crash, still ENOENT */
  ASSERT_EQ(sm__dlib_status(&d, &err), SM_ENOENT);
  ASSERT(strstr(err.msg, "the Foo solver could not be loaded (") == err.msg);
  ASSERT(strstr(err.msg, "libNoSuchFoo.so.7") != NULL);
  ASSERT(strstr(err.msg, "; install foo, or use --bar") != NULL);
  ASSERT(strchr(err.msg, '\n') == NULL);
  /* Opens, but is not the library: the first missing function is named. */
  ASSERT_OK(sm__dlib_open(&z));
  ASSERT(sm__dlib_sym(&z, "zlibVersion") != NULL);
  ASSERT(sm__dlib_sym(&z, "foo_new") == NULL);
  ASSERT(sm__dlib_sym(&z, "foo_free") == NULL);
  memset(&err, 0, sizeof(err));
  ASSERT_EQ(sm__dlib_status(&z, &err), SM_EUNSUPP);
  ASSERT(strstr(err.msg, "(libz.so.1 has no foo_new); install foo") != NULL);
  ASSERT_EQ(sm__dlib_status(&z, NULL), SM_EUNSUPP); /* err may be NULL */
}

SM_TEST(dlib_variable_names_the_file) {
  static char path[200];
  sm__dlib d = {"zlib", "libNoSuchZ.so.1", "SM_TEST_DLIB_FILE", NULL};
  sm__dlib e = {"zlib", "libz.so.1", "SM_TEST_DLIB_FILE", "x"};
  sm_err err = {0};

  setenv("SM_TEST_DLIB_FILE", "libz.so.1", 1);
  ASSERT_OK(sm__dlib_open(&d)); /* the variable wins over the soname */
  ASSERT(sm__dlib_sym(&d, "zlibVersion") != NULL);
  /* A path of 180 characters: the message is cut in the reason, and
   * still ends with the hint. */
  memset(path, 'd', sizeof(path));
  memcpy(path, "/nonexistent/", 13);
  strcpy(path + 180, "/libz.so.1");
  setenv("SM_TEST_DLIB_FILE", path, 1);
  e.hint = "install zlib1g, or run the other one with --param x.y=z";
  ASSERT_EQ(sm__dlib_open(&e), SM_ENOENT);
  ASSERT_EQ(sm__dlib_status(&e, &err), SM_ENOENT);
  ASSERT(strlen(err.msg) < SM_ERR_MSG_SIZE);
  ASSERT(strlen(err.msg) > 200);
  ASSERT(strstr(err.msg, "zlib could not be loaded (/nonexistent/ddd") ==
         err.msg);
  ASSERT(strstr(err.msg, "); install zlib1g, or run the other one with "
                         "--param x.y=z") != NULL);
  /* An empty variable is no name: the soname is opened. */
  setenv("SM_TEST_DLIB_FILE", "", 1);
  memset(&e, 0, sizeof(e));
  e.what = "zlib";
  e.file = "libz.so.1";
  e.env = "SM_TEST_DLIB_FILE";
  ASSERT_OK(sm__dlib_open(&e));
  unsetenv("SM_TEST_DLIB_FILE");
}
