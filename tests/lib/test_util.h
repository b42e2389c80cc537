/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_util.h - small helpers shared by the test programs that run under
 * LD_PRELOAD (tests/preload, tests/stress): error names, which library is
 * under test and which one answered the program's calls, and time
 * arithmetic.
 * Header-only (static inline), no test framework.
 */
#ifndef LIBBRAVO_TESTS_TEST_UTIL_H
#define LIBBRAVO_TESTS_TEST_UTIL_H

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
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

/*
 * The state letter of thread tid of this process (/proc/self/task/TID/stat:
 * R running, S sleeping, ...), or '?' if it cannot be read.  How a test
 * knows a thread sleeps in a lock call, not by timing.
 */
static inline char task_state(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", (long)tid);
	f = fopen(path, "re");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return p && p[1] == ' ' ? p[2] : '?';
}

/* The run driver says RWLOCK_UNDER_TEST=glibc when nothing is preloaded. */
static inline bool under_glibc(void)
{
	const char *s = getenv("RWLOCK_UNDER_TEST");

	return s && strcmp(s, "glibc") == 0;
}

/*
 * The lock the program gets is glibc's own, bias aside: under glibc, under
 * BRAVO-pthread and under the profile's pass-through to glibc's lock (the
 * run driver names the library it preloads).
 */
static inline bool lock_underneath_is_glibcs(void)
{
	const char *s = getenv("EXPECT_RWLOCK_LIB");

	return under_glibc() || (s && (strcmp(s, "libbravo-bravo-pthread.so") == 0 ||
				       strcmp(s, "libbravo-glibc.so") == 0));
}

/*
 * The object that must define the pthread_rwlock_* functions the program
 * calls: EXPECT_RWLOCK_LIB (a basename: libbravo-ba.so, libc.so.6), which
 * every driver sets; libc.so.6 when it is unset.
 */
static inline const char *expected_rwlock_lib(void)
{
	const char *e = getenv("EXPECT_RWLOCK_LIB");

	return (e && *e) ? e : "libc.so.6";
}

/* The name after p in a comma-separated list, or NULL. */
static inline const char *rwlock_lib_next_(const char *p)
{
	p = strchr(p, ',');
	return p ? p + 1 : NULL;
}

/* Index of base in the comma-separated list want, or -1. */
static inline int rwlock_lib_index_(const char *want, const char *base)
{
	size_t n = strlen(base);
	int i = 0;

	for (const char *p = want; p; p = rwlock_lib_next_(p), i++)
		if (strncmp(p, base, n) == 0 && (p[n] == ',' || p[n] == 0))
			return i;
	return -1;
}

/* The eleven pthread_rwlock_* functions: name, and where this program's own calls go. */
struct rwlock_fn {
	const char *name;
	void *addr;
};

#define RWLOCK_FN_(n) { #n, (void *)&n }
static const struct rwlock_fn rwlock_fns[] = {
	RWLOCK_FN_(pthread_rwlock_init),        RWLOCK_FN_(pthread_rwlock_destroy),
	RWLOCK_FN_(pthread_rwlock_rdlock),      RWLOCK_FN_(pthread_rwlock_tryrdlock),
	RWLOCK_FN_(pthread_rwlock_timedrdlock), RWLOCK_FN_(pthread_rwlock_clockrdlock),
	RWLOCK_FN_(pthread_rwlock_wrlock),      RWLOCK_FN_(pthread_rwlock_trywrlock),
	RWLOCK_FN_(pthread_rwlock_timedwrlock), RWLOCK_FN_(pthread_rwlock_clockwrlock),
	RWLOCK_FN_(pthread_rwlock_unlock),
};
#undef RWLOCK_FN_

/*
 * Which library answered: 0 when each of the eleven pthread_rwlock_*
 * functions, at the address this program's own calls go to, is defined in
 * the object want names (a basename), otherwise -1 and, in why, the first
 * that is not and where it is.  want may name several objects, comma-
 * separated, for a wrapper preloaded in front of the lock (oprand's
 * faulty.so): each function must come from one of them, and each of them
 * must define at least one.
 */
static inline int rwlock_lib_check_in(const char *want, char *why, size_t len)
{
	unsigned long used = 0;
	int k = 0;

	for (size_t i = 0; i < sizeof(rwlock_fns) / sizeof(rwlock_fns[0]); i++) {
		const char *base;
		Dl_info info;

		if (!dladdr(rwlock_fns[i].addr, &info) || !info.dli_fname) {
			snprintf(why, len, "%s: dladdr finds no object for it", rwlock_fns[i].name);
			return -1;
		}
		base = strrchr(info.dli_fname, '/');
		base = base ? base + 1 : info.dli_fname;
		k = rwlock_lib_index_(want, base);
		if (k < 0) {
			snprintf(why, len, "%s is defined in %s, expected %s", rwlock_fns[i].name,
				 info.dli_fname, want);
			return -1;
		}
		used |= 1UL << (k & 63);
	}
	k = 0;
	for (const char *p = want; p; p = rwlock_lib_next_(p), k++)
		if (!(used & (1UL << (k & 63)))) {
			snprintf(why, len, "no pthread_rwlock_* function is defined in %.*s (expected %s)",
				 (int)strcspn(p, ","), p, want);
			return -1;
		}
	return 0;
}

/*
 * rwlock_lib_check_in(expected_rwlock_lib()): programs run under
 * LD_PRELOAD call it first, so that a run that lost its preload (a
 * wrapper that drops it, a driver that forgot it) fails instead of
 * passing on glibc's lock.
 */
static inline int rwlock_lib_check(char *why, size_t len)
{
	return rwlock_lib_check_in(expected_rwlock_lib(), why, len);
}

/*
 * rwlock_lib_check() for a program without a test framework: on a
 * mismatch, one line on stderr, "PROG: ...", and exit status 1.
 */
static inline void rwlock_lib_require(const char *prog)
{
	char why[PATH_MAX + 256];

	if (rwlock_lib_check(why, sizeof(why)) != 0) {
		fprintf(stderr, "%s: FAIL: %s (EXPECT_RWLOCK_LIB)\n", prog, why);
		exit(1);
	}
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

/*
 * Readers glibc's own bytes count in l (nptl: __readers from bit 3, in a
 * read phase): under BRAVO-pthread, the reads that went to glibc's lock.
 */
static inline unsigned glibc_readers(pthread_rwlock_t *l)
{
	return __atomic_load_n(&l->__data.__readers, __ATOMIC_RELAXED) >> 3;
}

/*
 * Every read hold the program takes is answered for as glibc's lock
 * answers: under glibc, and under BRAVO-pthread outside strict mode,
 * which lists only its fast holds (doc/compatibility.md): a read
 * re-entry is a new hold (on a writer-preferring lock it waits behind a
 * waiting writer), a write lock by a reader waits (for ever, or until its
 * deadline), an unlock by another thread releases one hold.  Elsewhere
 * libbravo's list of the thread's holds answers: a re-entry only counted,
 * EDEADLK for a write by a reader.
 */
static inline bool reads_answered_as_glibc(void)
{
	return lock_underneath_is_glibcs() && !strict_mode();
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
/*
 * rc of a pthread call must equal an expected value; report names.  Check
 * is told only of a mismatch: every ck_assert that passes also records
 * its line with the runner (a write to a pipe in fork mode), which made
 * loops of a few hundred thousand calls take seconds of system time.
 */
#define ck_assert_rc(expr, expected)                                          \
	do {                                                                  \
		int rc_ = (expr);                                             \
		int ex_ = (expected);                                         \
		if (rc_ != ex_)                                               \
			ck_abort_msg("%s returned %s, expected %s", #expr,    \
				     errname(rc_), errname(ex_));             \
	} while (0)
#endif

#endif
