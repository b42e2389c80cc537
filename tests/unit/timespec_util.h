/*
 * timespec_util.h - deadlines for the unit tests of the locks.
 */
#ifndef LIBBRAVO_TESTS_TIMESPEC_UTIL_H
#define LIBBRAVO_TESTS_TIMESPEC_UTIL_H

#include <time.h>

/* The clocks a deadline may be on. */
static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_MONOTONIC };

/* Now plus us microseconds (negative: in the past) on clock. */
static struct timespec ts_from_now(clockid_t clock, long us)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
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

#endif
