/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo shim: forced (-include) into glibc's stress tests, which run
   their threads for as long as the main thread sleeps.  sleep and
   nanosleep in the test then last $GLIBC_STRESS_SCALE times as long
   (default 1: glibc's own durations), so that make check can run them
   for a fraction of that.  */
#ifndef LIBBRAVO_GLIBC_SHIM_STRESS_H
#define LIBBRAVO_GLIBC_SHIM_STRESS_H
#include <time.h>
#include <unistd.h>
unsigned int shim_stress_sleep (unsigned int seconds);
int shim_stress_nanosleep (const struct timespec *req, struct timespec *rem);
#define sleep(s) shim_stress_sleep (s)
#define nanosleep(req, rem) shim_stress_nanosleep (req, rem)
#endif
