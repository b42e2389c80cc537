/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * posix_rwlock.h - what the files of tests/preload/posix_rwlock_test share:
 * lock operations by number, the helper threads (holder, one-shot,
 * waiter) of harness.c, the registration macros of the [libbravo],
 * [default], [strict], [list] and [glibc reads] checks, and each file's
 * part of the suite.
 *
 * One program, one suite (main.c); each other .c holds the tests of one
 * or a few sections and adds them to the test cases main.c creates, in
 * the order main.c names the test cases.
 */
#ifndef LIBBRAVO_TESTS_POSIX_RWLOCK_H
#define LIBBRAVO_TESTS_POSIX_RWLOCK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/test_util.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Small helpers (harness.c) ---- */

const char *clock_name(clockid_t c);
void init_default(pthread_rwlock_t *l);
void init_kind(pthread_rwlock_t *l, int kind, int pshared);
void init_prefer_writer(pthread_rwlock_t *l);

/* ---- Lock operations by number (harness.c) ---- */

enum op {
	OP_RD,
	OP_TRYRD,
	OP_TIMEDRD,
	OP_CLOCKRD_RT,
	OP_CLOCKRD_MONO,
	OP_WR,
	OP_TRYWR,
	OP_TIMEDWR,
	OP_CLOCKWR_RT,
	OP_CLOCKWR_MONO,
	OP_COUNT
};

extern const char *const op_names[OP_COUNT];
extern const enum op rd_timed_ops[3];
extern const enum op wr_timed_ops[3];
extern const enum op rd_blocking_ops[4];
extern const enum op wr_blocking_ops[4];

bool op_is_write(enum op op);
bool op_is_try(enum op op);
bool op_is_timed(enum op op);
clockid_t op_clock(enum op op);
int op_abs(pthread_rwlock_t *l, enum op op, const struct timespec *abs);
int op_rel(pthread_rwlock_t *l, enum op op, long ms);

/* ---- Helper threads (harness.c) ---- */

/* A thread that takes the lock and keeps it until told to release it. */
struct holder {
	pthread_rwlock_t *lock;
	bool write;
	int warm;               /* read lock/unlock cycles before taking it */
	pthread_t th;
	sem_t acquired, release;
	int lock_rc, unlock_rc;
	bool keep;              /* leave without unlocking (its hold was released for it) */
};

void *holder_main(void *p);
void holder_start_warm(struct holder *h, pthread_rwlock_t *l, bool write, int warm);
void holder_start(struct holder *h, pthread_rwlock_t *l, bool write);
void holder_stop(struct holder *h);
void holder_stop_keeping(struct holder *h);

int other_thread_op(pthread_rwlock_t *l, enum op op, long ms);

#define ck_assert_other(l, op, ms, expected)                                  \
	do {                                                                  \
		int rc_ = other_thread_op((l), (op), (ms));                   \
		ck_assert_msg(rc_ == (expected),                              \
			      "%s in another thread returned %s, expected %s", \
			      op_names[op], errname(rc_), errname(expected)); \
	} while (0)

/* A thread that blocks in op; records when it got through. */
struct waiter {
	pthread_rwlock_t *lock;
	enum op op;
	long ms;
	bool hold;              /* keep the lock until waiter_release() */
	pthread_t th;
	_Atomic pid_t tid;
	atomic_int done;
	long seq;               /* order in which waiters got through */
	int rc, unlock_rc;
	sem_t started, finished, release;
};

void waiter_start(struct waiter *w, pthread_rwlock_t *l, enum op op, long ms, bool hold);
void waiter_expect_blocked(struct waiter *w);
bool waiter_wait_done(struct waiter *w, long ms);
void waiter_release_and_join(struct waiter *w);
void wait_until_new_readers_refused(pthread_rwlock_t *l, struct waiter *writer);

#define ck_assert_waiter_gets_through(w, expected_rc, what)                   \
	do {                                                                  \
		ck_assert_msg(waiter_wait_done((w), 5000),                    \
			      "%s: %s still blocked 5 s after it should have got the lock", \
			      (what), op_names[(w)->op]);                     \
		ck_assert_msg((w)->rc == (expected_rc), "%s: %s returned %s, expected %s", \
			      (what), op_names[(w)->op], errname((w)->rc),    \
			      errname(expected_rc));                          \
	} while (0)

/* ---- Checks several sections use (harness.c) ---- */

void expect_still_write_held_then_release(pthread_rwlock_t *l);
void expect_still_read_held_then_release(pthread_rwlock_t *l);
void warm_reads(pthread_rwlock_t *l, int n);
void check_basic_usage(pthread_rwlock_t *l);

/* ---- Registration ---- */

/*
 * A test not registered here (the macros below): one line on stderr, and
 * counted when it belongs to the test case CK_RUN_CASE selects (main.c).
 */
void test_left_out(const char *why, const char *fn);

/* [libbravo]: libbravo's promise where glibc differs; not run under glibc. */
#define ADD_LIBBRAVO_TEST(tc, fn)                                             \
	do {                                                                  \
		if (under_glibc())                                            \
			test_left_out("not run under glibc ([libbravo] only)", #fn); \
		else                                                          \
			tcase_add_test(tc, fn);                               \
	} while (0)

/* [default]: glibc's result, libbravo's default mode; not in strict mode. */
#define ADD_DEFAULT_TEST(tc, fn)                                              \
	do {                                                                  \
		if (strict_mode())                                            \
			test_left_out("not run in strict mode ([default])", #fn); \
		else                                                          \
			tcase_add_test(tc, fn);                               \
	} while (0)

/* [libbravo] and [default]: libbravo's default mode only. */
#define ADD_LIBBRAVO_DEFAULT_TEST(tc, fn)                                     \
	do {                                                                  \
		if (under_glibc() || strict_mode())                           \
			test_left_out("not run under glibc or in strict mode", #fn); \
		else                                                          \
			tcase_add_test(tc, fn);                               \
	} while (0)

/*
 * [list]: libbravo's answers from the caller's list of its own holds
 * where glibc waits (a write lock by a reader: EDEADLK); not under glibc,
 * nor where glibc's lock answers for reads (reads_answered_as_glibc:
 * BRAVO-pthread outside strict mode, whose write by a reader waits).
 */
#define ADD_LISTED_TEST(tc, fn)                                               \
	do {                                                                  \
		if (under_glibc() || reads_answered_as_glibc())               \
			test_left_out("not run where glibc's lock answers for reads ([list])", #fn); \
		else                                                          \
			tcase_add_test(tc, fn);                               \
	} while (0)

/*
 * [glibc reads]: glibc's answers to a reader's own calls on what it
 * reads, where libbravo's list would answer otherwise: under glibc, and
 * where glibc's lock answers for reads (reads_answered_as_glibc).
 */
#define ADD_GLIBC_READS_TEST(tc, fn)                                          \
	do {                                                                  \
		if (!reads_answered_as_glibc())                               \
			test_left_out("not run where the held-lock list answers ([glibc reads])", #fn); \
		else                                                          \
			tcase_add_test(tc, fn);                               \
	} while (0)

/* Each file's tests, added to the test case main.c names. */
void add_edeadlk_tests(TCase *tc);              /* edeadlk_ebusy.c */
void add_ebusy_tests(TCase *tc);                /* edeadlk_ebusy.c */
void add_strict_edeadlk_tests(TCase *tc);       /* edeadlk_ebusy.c */
void add_reader_calls_tests(TCase *tc);         /* reader_calls.c */
void add_unlock_unheld_tests(TCase *tc);        /* unlock_unheld.c */
void add_strict_unlock_tests(TCase *tc);        /* unlock_unheld.c */
void add_strict_destroy_tests(TCase *tc);       /* lifecycle.c */
void add_strict_pshared_tests(TCase *tc);       /* pshared.c */
void add_timed_tests(TCase *tc);                /* timed.c */
void add_exclusion_tests(TCase *tc);            /* exclusion.c */
void add_phases_tests(TCase *tc);               /* exclusion.c */
void add_recursion_tests(TCase *tc);            /* exclusion.c */
void add_initializers_tests(TCase *tc);         /* lifecycle.c */
void add_writer_preference_tests(TCase *tc);    /* lifecycle.c */
void add_destroy_tests(TCase *tc);              /* lifecycle.c */
void add_pshared_tests(TCase *tc);              /* pshared.c */
void add_scale_threads_tests(TCase *tc);        /* scale.c */
void add_scale_churn_tests(TCase *tc);          /* churn.c */
void add_scale_leak_tests(TCase *tc);           /* leak.c */
void add_symbols_tests(TCase *tc);              /* symbols.c */

/* Entry points of the re-executed program (main.c dispatches). */
int unlock_misuse_child(int argc, char **argv); /* unlock_unheld.c */
int pshared_exec_child(int argc, char **argv);  /* pshared.c */

#endif
