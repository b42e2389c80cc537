/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo's stand-in for the few pieces of glibc's support/ library that
   glibc's tst-rwlock* tests use (written for libbravo, not copied from
   glibc).  The implementations are in ../../shim.c, linked into every
   test.  */
#ifndef LIBBRAVO_GLIBC_SHIM_H
#define LIBBRAVO_GLIBC_SHIM_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <pthread.h>

/* glibc's default per-test limit, in seconds, before TIMEOUTFACTOR.  */
#define DEFAULT_TIMEOUT 20

/* Mark the test as failed; main reports it when do_test returns.  */
void support_record_failure (void);

/* Run TEST in a child process, killed after TIMEOUT * $TIMEOUTFACTOR
   seconds; return the exit status for main.  --direct runs it in place.  */
int shim_test_main (int argc, char **argv, int (*test) (void), int timeout);

/* Print a failure message with its location; exit (1) if EXIT.  */
void shim_fail (int exit_now, const char *file, int line,
                const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));
void shim_compare_failed (const char *file, int line,
                          const char *left_expr, long long left,
                          const char *right_expr, long long right);

/* Set by --verbose; verbose_printf prints only then.  */
extern int test_verbose;
#define verbose_printf(...) \
  do { if (test_verbose > 0) printf (__VA_ARGS__); } while (0)

/* Start a thread that ends the process with status 0 after SECONDS.  */
void delayed_exit (int seconds);

#endif
