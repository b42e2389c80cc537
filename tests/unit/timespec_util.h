/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timespec_util.h - deadlines for the unit tests of the locks.
 */
#ifndef LIBBRAVO_TESTS_TIMESPEC_UTIL_H
#define LIBBRAVO_TESTS_TIMESPEC_UTIL_H

#include <time.h>

#include "../../locks/wait.h"

/* The clocks a deadline may be on. */
static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC };

/* ts plus us microseconds (negative: earlier), normalized. */
static inline struct timespec ts_add_us(struct timespec ts, long us)
{
	ts.tv_sec += us / 1000000;
	ts.tv_nsec += (us % 1000000) * 1000L;
	while (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while (ts.tv_nsec < 0) {
		ts.tv_sec--;
		ts.tv_nsec += 1000000000L;
	}
	return ts;
}

/* Now plus us microseconds (negative: in the past) on clock. */
static inline struct timespec ts_from_now(clockid_t clock, long us)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts_add_us(ts, us);
}

/*
 * A deadline us microseconds from now (negative: in the past) on clock clk,
 * its time kept for as long as the enclosing block runs.
 */
#define DEADLINE_IN(clk, us)                                                                   \
	((struct deadline){ .abstime = &(struct timespec[1]){ ts_from_now((clk), (us)) }[0], \
			    .clock = (clk) })

#endif
