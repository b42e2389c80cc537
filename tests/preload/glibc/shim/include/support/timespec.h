/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo shim: the timespec helpers glibc's rwlock tests use.  */
#ifndef LIBBRAVO_GLIBC_SHIM_TIMESPEC_H
#define LIBBRAVO_GLIBC_SHIM_TIMESPEC_H
#include <support/shim.h>

static inline struct timespec
make_timespec (time_t s, long int ns)
{
  struct timespec ts = { .tv_sec = s, .tv_nsec = ns };
  return ts;
}

/* a + b, normalized; both are non-negative in these tests.  */
struct timespec timespec_add (struct timespec a, struct timespec b);

/* Fail unless CLOCK now reads at least TS.  */
void shim_timespec_now_or_after (const char *file, int line,
                                 clockid_t clock, struct timespec ts);
#define TEST_TIMESPEC_NOW_OR_AFTER(clock, ts) \
  shim_timespec_now_or_after (__FILE__, __LINE__, (clock), (ts))
#endif
