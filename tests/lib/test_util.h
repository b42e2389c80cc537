/*
 * test_util.h - small helpers shared by the test programs that run under
 * LD_PRELOAD (tests/preload, tests/stress):
 * error names, which library is under test, and time arithmetic.
 * Header-only (static inline), no test framework.
 */
#ifndef LIBBRAVO_TESTS_TEST_UTIL_H
#define LIBBRAVO_TESTS_TEST_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "0", or the errno's name (EBUSY, ...). */
static inline const char *errname(int rc)
{
	const char *s;

	if (rc == 0)
		return "0";
	s = strerrorname_np(rc);
	return s ? s : "unknown error";
}

/* The run driver says RWLOCK_UNDER_TEST=glibc when nothing is preloaded. */
static inline bool under_glibc(void)
{
	const char *s = getenv("RWLOCK_UNDER_TEST");

	return s && strcmp(s, "glibc") == 0;
}

/*
 * The lock the program gets is glibc's own, bias aside: under glibc, and
 * under BRAVO-pthread (the run driver names the library it preloads).
 */
static inline bool lock_underneath_is_glibcs(void)
{
	const char *s = getenv("EXPECT_RWLOCK_LIB");

	return under_glibc() || (s && strcmp(s, "libbravo-bravo-pthread.so") == 0);
}

/*
 * libbravo's strict mode: BRAVO_CHECK=1 in the environment (the run
 * drivers add it for the strict runs); never under glibc.  Default mode
 * gives glibc's results; strict mode POSIX's recommended errors (EPERM,
 * EBUSY from destroy, EINVAL on a destroyed lock).
 */
static inline bool strict_mode(void)
{
	const char *s = getenv("BRAVO_CHECK");

	return !under_glibc() && s && strcmp(s, "1") == 0;
}

static inline struct timespec ts_now(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return t;
}

/* t plus ms milliseconds (negative: earlier), normalized. */
static inline struct timespec ts_add_ms(struct timespec t, long ms)
{
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	} else if (t.tv_nsec < 0) {
		t.tv_sec--;
		t.tv_nsec += 1000000000L;
	}
	return t;
}

/* a - b in nanoseconds */
static inline long long ts_diff_ns(struct timespec a, struct timespec b)
{
	return (long long)(a.tv_sec - b.tv_sec) * 1000000000LL + (a.tv_nsec - b.tv_nsec);
}

/* Milliseconds on CLOCK_MONOTONIC since start. */
static inline long long ms_since(struct timespec start)
{
	return ts_diff_ns(ts_now(CLOCK_MONOTONIC), start) / 1000000LL;
}

/* Sleep ms milliseconds, resuming after signals. */
static inline void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

#ifdef ck_assert_msg
/* rc of a pthread call must equal an expected value; report names. */
#define ck_assert_rc(expr, expected)                                          \
	do {                                                                  \
		int rc_ = (expr);                                             \
		int ex_ = (expected);                                         \
		ck_assert_msg(rc_ == ex_, "%s returned %s, expected %s",      \
			      #expr, errname(rc_), errname(ex_));             \
	} while (0)
#endif

#endif
