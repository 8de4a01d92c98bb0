/* mhd_load_int.h - libmicrohttpd, the HTTP server of `schedmate serve`,
 * loaded on first use (mhd_load.c).
 *
 * Linked, libmicrohttpd (with GnuTLS and what that pulls in) cost every
 * process about 1.5 ms at start-up; only `schedmate serve` uses it.
 * microhttpd.h stays a build-time requirement; the MHD_* names used after
 * including this header (instead of microhttpd.h) call through a table
 * that sm__mhd_load fills from the library (the soname the build found,
 * SM_MHD_SONAME, or the file named by SCHEDMATE_MHD_LIB).  The variadic
 * ones (MHD_start_daemon, MHD_get_*_info) are called through pointers of
 * their own variadic type: the arguments pass as in a direct call. */
#ifndef SM_SERVE_MHD_LOAD_INT_H
#define SM_SERVE_MHD_LOAD_INT_H

#include <microhttpd.h>

#include "schedmate/sm_base.h"

/* The functions the server calls. */
#define SM__MHD_FUNCS(XX)                                                      \
  XX(MHD_start_daemon)                                                         \
  XX(MHD_stop_daemon)                                                          \
  XX(MHD_quiesce_daemon)                                                       \
  XX(MHD_get_daemon_info)                                                      \
  XX(MHD_get_connection_info)                                                  \
  XX(MHD_lookup_connection_value)                                              \
  XX(MHD_suspend_connection)                                                   \
  XX(MHD_resume_connection)                                                    \
  XX(MHD_create_response_from_buffer)                                          \
  XX(MHD_add_response_header)                                                  \
  XX(MHD_queue_response)                                                       \
  XX(MHD_destroy_response)

typedef struct sm__mhd_api {
#define SM__XX(f) __typeof__(f) *f;
  SM__MHD_FUNCS(SM__XX)
#undef SM__XX
} sm__mhd_api;

/* Filled by the first successful sm__mhd_load; read only after one. */
extern sm__mhd_api sm__mhd;

/* Loads libmicrohttpd once (thread-safe).  Returns 0, or SM_ENOENT /
 * SM_EUNSUPP with one line saying why (the file and the loader's
 * reason). */
int sm__mhd_load(sm_err *err);

#ifndef SM__MHD_LOADER
#define MHD_start_daemon (*sm__mhd.MHD_start_daemon)
#define MHD_stop_daemon (*sm__mhd.MHD_stop_daemon)
#define MHD_quiesce_daemon (*sm__mhd.MHD_quiesce_daemon)
#define MHD_get_daemon_info (*sm__mhd.MHD_get_daemon_info)
#define MHD_get_connection_info (*sm__mhd.MHD_get_connection_info)
#define MHD_lookup_connection_value (*sm__mhd.MHD_lookup_connection_value)
#define MHD_suspend_connection (*sm__mhd.MHD_suspend_connection)
#define MHD_resume_connection (*sm__mhd.MHD_resume_connection)
#define MHD_create_response_from_buffer                                        \
  (*sm__mhd.MHD_create_response_from_buffer)
#define MHD_add_response_header (*sm__mhd.MHD_add_response_header)
#define MHD_queue_response (*sm__mhd.MHD_queue_response)
#define MHD_destroy_response (*sm__mhd.MHD_destroy_response)
#endif

#endif /* SM_SERVE_MHD_LOAD_INT_H */
