/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * torture.h - shared helpers of the torture programs (tests/stress/).
 *
 * Every torture program is an ordinary pthread program: it knows nothing of
 * libbravo and is run by tests/stress/torture-check under LD_PRELOAD of
 * each variant, and without preload against glibc.  A program is a list of
 * checks, each a function named after the behaviour it asserts; the runner
 * prints "ok NAME" per check that passed and stops at the first failure
 * with "FAIL NAME: why" and exit status 1.  Hangs are the driver's to catch
 * (every run is under timeout).
 *
 * Environment:
 *   TORTURE_SCALE=N        multiply operation counts by N (1 .. 1000,
 *                          default 1; a malformed value gets one line on
 *                          stderr and the default)
 *   RWLOCK_UNDER_TEST=glibc  skip the checks of behaviour that only
 *                          doc/compatibility.md promises (POSIX leaves it
 *                          undefined or glibc does otherwise); each skipped
 *                          check prints "skip NAME (...)".
 *   EXPECT_RWLOCK_LIB=NAME basename of the object that must define the
 *                          pthread_rwlock_* functions (default libc.so.6):
 *                          checked before the first check
 *   BRAVO_CHECK=1          libbravo's strict mode (torture-check's V-strict
 *                          runs): run the checks of its errors (EPERM,
 *                          EBUSY from destroy, EINVAL on a destroyed lock),
 *                          skip those of the default mode's glibc results.
 *
 * Guarded data (struct guarded): the invariant-checking record of the ck
 * validators.  Inside a critical section a thread moves an atomic count of
 * writers or readers away from zero and back, and checks the other one; a
 * writer also rewrites a multi-word record that readers verify word by
 * word, and bumps a plain counter whose final value must equal the number
 * of write acquisitions (a lost update shows there).
 */
#ifndef TORTURE_H
#define TORTURE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/test_util.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- reporting ---- */

static const char *torture_current = "setup";

__attribute__((format(printf, 3, 4), noreturn))
static inline void torture_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "FAIL %s: %s:%d: ", torture_current, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	_exit(1); /* other threads may hold locks: no atexit handlers */
}

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond))                                                  \
			torture_fail(__FILE__, __LINE__, __VA_ARGS__);        \
	} while (0)

/* A pthread call must return exactly want. */
#define CHECK_RC(expr, want)                                                  \
	do {                                                                  \
		int rc_ = (expr);                                             \
		int want_ = (want);                                           \
		CHECK(rc_ == want_, "%s returned %s, expected %s", #expr,     \
		      errname(rc_), errname(want_));                          \
	} while (0)

/* ---- environment ---- */

static inline long torture_scale(void)
{
	static long scale;
	const char *s;
	char *end;
	long v;

	if (scale)
		return scale;
	scale = 1;
	s = getenv("TORTURE_SCALE");
	if (!s || !*s)
		return scale;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > 1000)
		fprintf(stderr, "TORTURE_SCALE=%s is not a number in 1..1000; using 1\n", s);
	else
		scale = v;
	return scale;
}

/* ---- threads ---- */

/* NULL, hidden from the compiler (glibc declares the lock arguments nonnull). */
static inline pthread_rwlock_t *hidden_null(void)
{
	pthread_rwlock_t *p = NULL;

	__asm__("" : "+r"(p));
	return p;
}

/* Initialize l as a default lock, or as a writer-preferring one. */
static inline void init_lock_of_kind(pthread_rwlock_t *l, bool prefer_writer)
{
	pthread_rwlockattr_t a;

	CHECK_RC(pthread_rwlockattr_init(&a), 0);
	if (prefer_writer)
		CHECK_RC(pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), 0);
	CHECK_RC(pthread_rwlock_init(l, &a), 0);
	CHECK_RC(pthread_rwlockattr_destroy(&a), 0);
}

static inline pthread_t spawn(void *(*fn)(void *), void *arg)
{
	pthread_t th;
	int rc = pthread_create(&th, NULL, fn, arg);

	CHECK(rc == 0, "pthread_create: %s", errname(rc));
	return th;
}

static inline void *join(pthread_t th)
{
	void *ret;
	int rc = pthread_join(th, &ret);

	CHECK(rc == 0, "pthread_join: %s", errname(rc));
	return ret;
}

/* Spin on sleep until *flag reaches want, at most ms milliseconds. */
static inline bool wait_for(atomic_int *flag, int want, long ms)
{
	for (long i = 0; i < ms; i++) {
		if (atomic_load(flag) >= want)
			return true;
		sleep_ms(1);
	}
	return atomic_load(flag) >= want;
}

/* ---- guarded data: what a correct lock keeps consistent ---- */

#define RECORD_WORDS 8

struct guarded {
	atomic_int readers;               /* threads inside for reading */
	atomic_int writers;               /* threads inside for writing */
	uint64_t record[RECORD_WORDS];    /* written whole by writers only */
	uint64_t writes;                  /* bumped by each writer, plainly */
};

/* Called right after a read acquisition; returns with the count raised. */
static inline void guarded_read_enter(struct guarded *g)
{
	atomic_fetch_add(&g->readers, 1);
	/* seq_cst: the writer count is read after our reader count is visible */
	CHECK(atomic_load(&g->writers) == 0, "a reader got in while a writer held the lock");
}

static inline void guarded_read_check(struct guarded *g)
{
	uint64_t first = g->record[0];

	for (int i = 1; i < RECORD_WORDS; i++)
		CHECK(g->record[i] == first,
		      "a reader saw a torn record: word 0 = %llu, word %d = %llu",
		      (unsigned long long)first, i, (unsigned long long)g->record[i]);
	CHECK(atomic_load(&g->writers) == 0, "a writer got in while a reader held the lock");
}

static inline void guarded_read_leave(struct guarded *g)
{
	atomic_fetch_sub(&g->readers, 1);
}

static inline void guarded_write_enter(struct guarded *g)
{
	int w = atomic_fetch_add(&g->writers, 1);

	CHECK(w == 0, "a writer got in while %d other writer(s) held the lock", w);
	CHECK(atomic_load(&g->readers) == 0, "a writer got in while %d reader(s) held the lock",
	      atomic_load(&g->readers));
}

/* The writer's update: every word of the record, then the plain counter. */
static inline void guarded_write_update(struct guarded *g, bool yield_midway)
{
	uint64_t v = g->record[0] + 1;

	for (int i = 0; i < RECORD_WORDS; i++) {
		g->record[i] = v;
		if (yield_midway && i == RECORD_WORDS / 2)
			sched_yield(); /* let a broken lock show a torn record */
	}
	g->writes++;
	CHECK(atomic_load(&g->readers) == 0, "a reader got in while a writer held the lock");
}

static inline void guarded_write_leave(struct guarded *g)
{
	int w = atomic_fetch_sub(&g->writers, 1);

	CHECK(w == 1, "%d writers inside at a writer's exit", w);
}

/* ---- lock still works: a short exclusion run on l ---- */

struct exclusion_run {
	pthread_rwlock_t *lock;
	struct guarded *g;
	int ops;
	unsigned seed;
	atomic_long writes_done;
};

static inline unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static inline void *exclusion_worker(void *arg)
{
	struct exclusion_run *x = arg;
	unsigned seed = (unsigned)(uintptr_t)&seed ^ x->seed;

	for (int i = 0; i < x->ops; i++) {
		if (next_rand(&seed) % 4 == 0) {
			CHECK_RC(pthread_rwlock_wrlock(x->lock), 0);
			guarded_write_enter(x->g);
			guarded_write_update(x->g, i % 8 == 0);
			guarded_write_leave(x->g);
			CHECK_RC(pthread_rwlock_unlock(x->lock), 0);
			atomic_fetch_add(&x->writes_done, 1);
		} else {
			CHECK_RC(pthread_rwlock_rdlock(x->lock), 0);
			guarded_read_enter(x->g);
			if (i % 8 == 0)
				sched_yield();
			guarded_read_check(x->g);
			guarded_read_leave(x->g);
			CHECK_RC(pthread_rwlock_unlock(x->lock), 0);
		}
	}
	return NULL;
}

/*
 * An exclusion run on l: threads (at most 16) readers and writers, ops
 * each, each thread running worker on a struct exclusion_run
 * (exclusion_worker, or a function that sets its thread up first and
 * then calls it).  l must give writer exclusion, keep its data
 * consistent, and be free at the end.  Returns the writes made.
 */
static inline long exclusion_check(pthread_rwlock_t *l, int threads, int ops,
				   void *(*worker)(void *))
{
	struct guarded g;
	struct exclusion_run x = { .lock = l, .g = &g, .ops = ops, .seed = 7 };
	pthread_t th[16];

	memset(&g, 0, sizeof(g));
	if (threads > (int)NELEM(th))
		threads = NELEM(th);
	for (int i = 0; i < threads; i++)
		th[i] = spawn(worker, &x);
	for (int i = 0; i < threads; i++)
		join(th[i]);
	CHECK(g.writes == (uint64_t)atomic_load(&x.writes_done),
	      "%llu writes recorded under the lock, %ld write acquisitions: an update was lost",
	      (unsigned long long)g.writes, atomic_load(&x.writes_done));
	CHECK_RC(pthread_rwlock_trywrlock(l), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	return atomic_load(&x.writes_done);
}

/* After a misuse or an odd event: l must still work (exclusion_check). */
static inline void check_lock_still_works(pthread_rwlock_t *l, int threads, int ops)
{
	exclusion_check(l, threads, ops, exclusion_worker);
}

/* ---- the runner ---- */

/* Where a check runs: under glibc, libbravo's default mode, strict mode. */
enum { RUN_GLIBC = 1, RUN_DEFAULT = 2, RUN_STRICT = 4 };

struct torture_check {
	const char *name;
	void (*fn)(void);
	unsigned where;
};

/* everywhere */
#define TORTURE_CHECK(fn) { #fn, fn, RUN_GLIBC | RUN_DEFAULT | RUN_STRICT }
/* behaviour only doc/compatibility.md promises, in both modes */
#define LIBBRAVO_CHECK(fn) { #fn, fn, RUN_DEFAULT | RUN_STRICT }
/* glibc's result, which libbravo's default mode gives (not strict mode) */
#define DEFAULT_CHECK(fn) { #fn, fn, RUN_GLIBC | RUN_DEFAULT }
/* libbravo's default mode only (glibc corrupts its lock there) */
#define LIBBRAVO_DEFAULT_CHECK(fn) { #fn, fn, RUN_DEFAULT }
/* strict mode only (BRAVO_CHECK=1) */
#define STRICT_CHECK(fn) { #fn, fn, RUN_STRICT }

static inline const char *torture_where(unsigned where)
{
	switch (where) {
	case RUN_DEFAULT | RUN_STRICT: return " [libbravo]";
	case RUN_GLIBC | RUN_DEFAULT: return " [default]";
	case RUN_DEFAULT: return " [libbravo, default]";
	case RUN_STRICT: return " [strict]";
	default: return "";
	}
}

/*
 * Which library answered, before any check: every pthread_rwlock_* call
 * of the program must reach the object EXPECT_RWLOCK_LIB names
 * (torture-check sets it for every variant, and libc.so.6 for glibc), or
 * a run that lost its preload would pass on glibc's lock.
 */
static inline void torture_require_rwlock_lib(void)
{
	char why[PATH_MAX + 256];

	torture_current = "rwlock_functions_come_from_the_expected_library";
	CHECK(rwlock_lib_check(why, sizeof(why)) == 0, "%s", why);
	printf("ok %s (%s)\n", torture_current, expected_rwlock_lib());
}

/*
 * Runs every check (or those named on the command line), in order, after
 * torture_require_rwlock_lib().  Returns the exit status for main.
 */
static inline int torture_main(const char *prog, const char *about,
			       const struct torture_check *checks, size_t n,
			       int argc, char **argv)
{
	unsigned here;

	for (int a = 1; a < argc; a++) {
		bool known = false;

		if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
			printf("usage: %s [CHECK...]\n%s\nchecks:\n", prog, about);
			for (size_t i = 0; i < n; i++)
				printf("  %s%s\n", checks[i].name, torture_where(checks[i].where));
			return 0;
		}
		for (size_t i = 0; i < n; i++)
			known |= strcmp(argv[a], checks[i].name) == 0;
		if (!known) {
			fprintf(stderr, "%s: unknown check '%s' (see --help)\n", prog, argv[a]);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	torture_scale(); /* complain about a malformed value once, up front */
	torture_require_rwlock_lib();
	here = under_glibc() ? RUN_GLIBC : strict_mode() ? RUN_STRICT : RUN_DEFAULT;
	for (size_t i = 0; i < n; i++) {
		bool wanted = argc == 1;

		for (int a = 1; a < argc; a++)
			wanted |= strcmp(argv[a], checks[i].name) == 0;
		if (!wanted)
			continue;
		if (!(checks[i].where & here)) {
			printf("skip %s (%s)\n", checks[i].name,
			       here == RUN_GLIBC ? "only libbravo promises this" :
			       here == RUN_STRICT ? "not in strict mode" : "strict mode only");
			continue;
		}
		torture_current = checks[i].name;
		checks[i].fn();
		printf("ok %s\n", checks[i].name);
	}
	return 0;
}

#endif
