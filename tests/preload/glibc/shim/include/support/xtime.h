/* SPDX-License-Identifier: BSD-2-Clause */
/* libbravo shim: clock_gettime that ends the test on error.  */
#ifndef LIBBRAVO_GLIBC_SHIM_XTIME_H
#define LIBBRAVO_GLIBC_SHIM_XTIME_H
#include <support/shim.h>
void xclock_gettime (clockid_t clock, struct timespec *ts);
#endif
