/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_bravo_pthread.c - unit tests of the generic BRAVO wrapper
 * (locks/bravo.h) over glibc's pthread_rwlock_t, composed as BRAVO-pthread
 * composes it (src/variants/glue_bravo.h): an rw_ops whose blocking calls are
 * glibc's rdlock/wrlock, or clockrdlock/clockwrlock with a deadline, and
 * the two ways of waiting for fast readers that glibc's two kinds need:
 *
 *   default kind (reader-preferring): a writer that finds fast readers
 *     lets go of glibc's lock while they drain (reader_pref, BRAVO_RELEASE),
 *     since glibc lets readers in while a writer waits;
 *   PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: the writer keeps glibc's
 *     lock and shuts the fast path while it waits (writer_pref).
 *
 * test_bravo.c tests the wrapper over BA; these are the paths that differ
 * over glibc.  No preload: pthread_rwlock_* are glibc's own.  Tests never
 * assert timings: a thread's arrival at a blocking point is seen in the
 * BRAVO word (RBias cleared, DRAINING set); every tcase has a time-out;
 * each test runs in its own process (CK_FORK), so the visible readers
 * table starts fresh.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "invariant.h"
#include "../lib/check_run.h"
#include "timespec_util.h"
#include "../../locks/bravo.h"

#define TCASE_TIMEOUT 30

/* ------------------------------------------- glibc's rwlock as rw_ops */

static int pt_read_lock(void *u, const struct deadline *dl)
{
	int r;

	do
		r = dl && dl->abstime ? pthread_rwlock_clockrdlock(u, dl->clock, dl->abstime)
				      : pthread_rwlock_rdlock(u);
	while (r == EAGAIN); /* glibc's reader count overflowed: wait */
	return r;
}

static bool pt_read_trylock(void *u)
{
	return pthread_rwlock_tryrdlock(u) == 0;
}

static void pt_unlock(void *u)
{
	pthread_rwlock_unlock(u);
}

static int pt_write_lock(void *u, const struct deadline *dl)
{
	return dl && dl->abstime ? pthread_rwlock_clockwrlock(u, dl->clock, dl->abstime)
				 : pthread_rwlock_wrlock(u);
}

static bool pt_write_trylock(void *u)
{
	return pthread_rwlock_trywrlock(u) == 0;
}

static bool pt_guest_ok(void *u)
{
	return wait_writer_pending_is(u);
}

static const struct rw_ops pt_ops = {
	.scope = VR_SHARED,
	.guest_ok = pt_guest_ok,
	.read_lock = pt_read_lock,
	.read_trylock = pt_read_trylock,
	.read_unlock = pt_unlock,
	.write_lock = pt_write_lock,
	.write_trylock = pt_write_trylock,
	.write_unlock = pt_unlock,
};

/* A BRAVO word over a glibc lock of one kind, as BRAVO-pthread has them. */
struct bpt {
	struct bravo b;
	pthread_rwlock_t u;
	bool prefer_writer; /* the glibc kind: writer_pref, else reader_pref */
};

static void bpt_init(struct bpt *l, bool prefer_writer)
{
	pthread_rwlockattr_t a;

	memset(l, 0, sizeof(*l));
	l->prefer_writer = prefer_writer;
	ck_assert_int_eq(pthread_rwlockattr_init(&a), 0);
	ck_assert_int_eq(pthread_rwlockattr_setkind_np(&a, prefer_writer ?
			 PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP : PTHREAD_RWLOCK_PREFER_READER_NP), 0);
	ck_assert_int_eq(pthread_rwlock_init(&l->u, &a), 0);
	ck_assert_int_eq(pthread_rwlockattr_destroy(&a), 0);
}

static int rd_lock(struct bpt *l, uintptr_t *cookie, const struct deadline *dl)
{
	return bravo_read_lock(&l->b, &l->u, &pt_ops, cookie, dl);
}

static void rd_unlock(struct bpt *l, uintptr_t cookie)
{
	bravo_read_unlock(&l->u, &pt_ops, cookie);
}

/* The writer is "named" at once: its waiting-writer mark goes (bravo.h). */
static int wr_lock(struct bpt *l, const struct deadline *dl)
{
	const void *pending = wait_writer_pending_get();
	int r = bravo_write_lock(&l->b, &l->u, &pt_ops, l->prefer_writer, !l->prefer_writer, dl);

	wait_writer_pending_restore(pending);
	return r;
}

static void wr_unlock(struct bpt *l)
{
	bravo_write_unlock(&l->u, &pt_ops);
}

/* ---------------------------------------------------------------- probes */

static uint64_t word_of(struct bpt *l)
{
	return atomic_load(&l->b.word);
}

static bool biased(struct bpt *l)
{
	return word_of(l) & BRAVO_RBIAS;
}

/* glibc's own answer: can a writer take its lock right now? */
static bool glibc_lock_free(struct bpt *l)
{
	if (pthread_rwlock_trywrlock(&l->u) != 0)
		return false;
	ck_assert_int_eq(pthread_rwlock_unlock(&l->u), 0);
	return true;
}

#define WAIT_UNTIL(cond)                 \
	do {                             \
		while (!(cond))          \
			usleep(100);     \
	} while (0)

/* A deadline ms milliseconds from now on CLOCK_MONOTONIC. */
static struct deadline deadline_in(struct timespec *ts, long ms)
{
	*ts = ts_from_now(CLOCK_MONOTONIC, ms * 1000);
	return (struct deadline){ .abstime = ts, .clock = CLOCK_MONOTONIC };
}

/* The lock's first slow-path read turns bias on. */
static void enable_bias(struct bpt *l)
{
	uintptr_t cookie;

	ck_assert_int_eq(rd_lock(l, &cookie, NULL), 0);
	rd_unlock(l, cookie);
	ck_assert_msg(biased(l), "a slow-path read did not enable bias");
}

/* A read on the fast path (bias must be on); returns its cookie. */
static uintptr_t fast_read(struct bpt *l)
{
	uintptr_t cookie;

	ck_assert_int_eq(rd_lock(l, &cookie, NULL), 0);
	ck_assert_msg(cookie != 0, "read took the slow path with bias on");
	return cookie;
}

/* A thread that takes the lock once (read or write) and holds it until released. */
struct actor {
	struct bpt *l;
	bool write;
	long timeout_ms; /* 0: no deadline */
	pthread_t thread;
	atomic_bool entered, done, release;
	uintptr_t cookie;
	int result;
};

static void *actor_main(void *arg)
{
	struct actor *a = arg;
	struct timespec ts;
	struct deadline dl = { .abstime = NULL, .clock = CLOCK_MONOTONIC };

	if (a->timeout_ms)
		dl = deadline_in(&ts, a->timeout_ms);
	a->result = a->write ? wr_lock(a->l, &dl) : rd_lock(a->l, &a->cookie, &dl);
	if (a->result == 0) {
		atomic_store(&a->entered, true);
		WAIT_UNTIL(atomic_load(&a->release));
		if (a->write)
			wr_unlock(a->l);
		else
			rd_unlock(a->l, a->cookie);
	}
	atomic_store(&a->done, true);
	return NULL;
}

static void actor_start(struct actor *a, struct bpt *l, bool write, long timeout_ms)
{
	memset(a, 0, sizeof(*a));
	a->l = l;
	a->write = write;
	a->timeout_ms = timeout_ms;
	ck_assert_int_eq(pthread_create(&a->thread, NULL, actor_main, a), 0);
}

static bool entered(struct actor *a)
{
	return atomic_load(&a->entered);
}

static void actor_finish(struct actor *a)
{
	atomic_store(&a->release, true);
	ck_assert_int_eq(pthread_join(a->thread, NULL), 0);
}

/* ------------------------------------------------------------- fast path */

START_TEST(first_slow_read_holds_the_glibc_lock_and_enables_bias)
{
	struct bpt l;
	uintptr_t cookie = 1;

	bpt_init(&l, false);
	ck_assert(!biased(&l));
	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	ck_assert_uint_eq(cookie, 0); /* slow path: glibc's read lock */
	ck_assert(!glibc_lock_free(&l));
	ck_assert(biased(&l));
	rd_unlock(&l, cookie);
	ck_assert(glibc_lock_free(&l));
}
END_TEST

START_TEST(fast_read_leaves_the_glibc_lock_untouched)
{
	struct bpt l;
	uintptr_t cookie;

	bpt_init(&l, false);
	enable_bias(&l);
	cookie = fast_read(&l);
	/* the reader is in the table only: glibc's lock is free underneath */
	ck_assert(glibc_lock_free(&l));
	rd_unlock(&l, cookie);
	ck_assert(!bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
}
END_TEST

START_TEST(read_trylock_takes_the_fast_path_when_biased)
{
	struct bpt l;
	uintptr_t cookie;

	bpt_init(&l, false);
	enable_bias(&l);
	ck_assert(bravo_read_trylock(&l.b, &l.u, &pt_ops, &cookie));
	ck_assert_msg(cookie != 0, "read try-lock took the slow path with bias on");
	ck_assert(glibc_lock_free(&l));
	rd_unlock(&l, cookie);
}
END_TEST

/* ------------------------------------------------------------ revocation */

/* Writer-preferring kind: the writer keeps glibc's lock while it waits. */
START_TEST(writer_revocation_waits_for_a_fast_reader)
{
	struct bpt l;
	uintptr_t cookie;
	struct actor w;

	bpt_init(&l, true);
	enable_bias(&l);
	cookie = fast_read(&l);
	actor_start(&w, &l, true, 0);
	WAIT_UNTIL(!biased(&l) || entered(&w)); /* revoking */
	usleep(10000);
	ck_assert_msg(!entered(&w), "writer entered while a fast reader holds");
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w));
	ck_assert(!bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
	actor_finish(&w);
	ck_assert_int_eq(w.result, 0);
	ck_assert(glibc_lock_free(&l));
}
END_TEST

/*
 * Default kind: a writer draining fast readers holds nothing of glibc's
 * lock, so slow readers get in meanwhile, as glibc would let them in.
 */
START_TEST(draining_writer_lets_slow_readers_through_the_glibc_lock)
{
	struct bpt l;
	uintptr_t cookie;
	struct actor w, r;

	bpt_init(&l, false);
	enable_bias(&l);
	cookie = fast_read(&l);
	actor_start(&w, &l, true, 0);
	WAIT_UNTIL(word_of(&l) & BRAVO_DRAINING);
	actor_start(&r, &l, false, 0);
	WAIT_UNTIL(entered(&r)); /* a hang here: the drain kept glibc's lock */
	ck_assert_uint_eq(r.cookie, 0); /* bias is off: through glibc */
	ck_assert(!entered(&w));
	rd_unlock(&l, cookie);
	actor_finish(&r);
	WAIT_UNTIL(entered(&w));
	actor_finish(&w);
	ck_assert_int_eq(w.result, 0);
	ck_assert(glibc_lock_free(&l));
}
END_TEST

/* ------------------------------------------------- writer holds the lock */

static void write_lock_now(struct bpt *l)
{
	ck_assert_int_eq(wr_lock(l, NULL), 0);
	ck_assert(!biased(l));
	ck_assert(!glibc_lock_free(l));
}

START_TEST(slow_reader_waits_for_the_writer)
{
	struct bpt l;
	struct actor r;

	bpt_init(&l, _i);
	enable_bias(&l);
	write_lock_now(&l);
	actor_start(&r, &l, false, 0);
	usleep(10000);
	ck_assert_msg(!entered(&r), "a reader entered while the writer holds");
	wr_unlock(&l);
	WAIT_UNTIL(entered(&r));
	ck_assert_uint_eq(r.cookie, 0); /* through glibc: bias was off when it came */
	actor_finish(&r);
	ck_assert_int_eq(r.result, 0);
}
END_TEST

START_TEST(read_trylock_fails_while_the_writer_holds)
{
	struct bpt l;
	uintptr_t cookie;

	bpt_init(&l, _i);
	enable_bias(&l);
	write_lock_now(&l);
	ck_assert(!bravo_read_trylock(&l.b, &l.u, &pt_ops, &cookie));
	wr_unlock(&l);
	ck_assert(bravo_read_trylock(&l.b, &l.u, &pt_ops, &cookie));
	rd_unlock(&l, cookie);
}
END_TEST

START_TEST(timed_read_times_out_while_the_writer_holds)
{
	struct bpt l;
	struct actor r;

	bpt_init(&l, _i);
	enable_bias(&l);
	write_lock_now(&l);
	actor_start(&r, &l, false, 20);
	WAIT_UNTIL(atomic_load(&r.done));
	ck_assert_int_eq(r.result, ETIMEDOUT);
	actor_finish(&r);
	wr_unlock(&l);
	ck_assert(glibc_lock_free(&l));
}
END_TEST

/* ------------------------------------------------ write try and time-out */

START_TEST(write_trylock_with_a_fast_reader_inside_fails_and_keeps_bias)
{
	struct bpt l;
	uintptr_t cookie;

	bpt_init(&l, _i);
	enable_bias(&l);
	cookie = fast_read(&l);
	ck_assert(!bravo_write_trylock(&l.b, &l.u, &pt_ops));
	ck_assert_msg(biased(&l), "a failed write try-lock left bias off");
	ck_assert(glibc_lock_free(&l));
	rd_unlock(&l, cookie);
	ck_assert(bravo_write_trylock(&l.b, &l.u, &pt_ops));
	ck_assert(!biased(&l));
	wr_unlock(&l);
}
END_TEST

START_TEST(timed_write_with_a_fast_reader_inside_times_out_and_frees_the_glibc_lock)
{
	struct bpt l;
	struct timespec ts;
	struct deadline dl;
	uintptr_t cookie;

	bpt_init(&l, _i);
	enable_bias(&l);
	cookie = fast_read(&l);
	dl = deadline_in(&ts, 20);
	ck_assert_int_eq(wr_lock(&l, &dl), ETIMEDOUT);
	ck_assert(glibc_lock_free(&l));
	/* the fast reader still holds: a new writer still waits for it */
	ck_assert(!bravo_write_trylock(&l.b, &l.u, &pt_ops));
	rd_unlock(&l, cookie);
	ck_assert_int_eq(wr_lock(&l, NULL), 0);
	wr_unlock(&l);
}
END_TEST

/* A timed writer that gives up without draining sets bias again (writer-preferring kind). */
START_TEST(timed_out_revocation_sets_bias_again)
{
	struct bpt l;
	struct timespec ts;
	struct deadline dl;
	uintptr_t cookie;

	bpt_init(&l, true);
	enable_bias(&l);
	cookie = fast_read(&l);
	dl = deadline_in(&ts, 20);
	ck_assert_int_eq(wr_lock(&l, &dl), ETIMEDOUT);
	ck_assert_msg(biased(&l), "the timed-out revocation left bias off");
	rd_unlock(&l, cookie);
}
END_TEST

/* ---------------------------------------------------------------- stress */

enum { STRESS_THREADS = 4, STRESS_OPS = 20000 };

struct stress {
	struct bpt l;
	struct invariant inv;
};

static void *stress_main(void *arg)
{
	struct stress *s = arg;
	unsigned x = (unsigned)(uintptr_t)pthread_self() | 1;

	for (int i = 0; i < STRESS_OPS; i++) {
		unsigned r = xorshift(&x);
		struct timespec ts;
		struct deadline dl = { .abstime = NULL, .clock = CLOCK_MONOTONIC };
		uintptr_t cookie;

		if (r % 4 == 0)
			dl = deadline_in(&ts, 1);
		if (r % 8 == 1) { /* one in eight writes */
			if (wr_lock(&s->l, &dl) != 0)
				continue;
			invariant_write_section(&s->inv, r);
			wr_unlock(&s->l);
		} else if (r % 8 == 2) {
			if (!bravo_write_trylock(&s->l.b, &s->l.u, &pt_ops))
				continue;
			invariant_write_section(&s->inv, r);
			wr_unlock(&s->l);
		} else {
			if (rd_lock(&s->l, &cookie, &dl) != 0)
				continue;
			invariant_read_section(&s->inv, r);
			rd_unlock(&s->l, cookie);
		}
	}
	return NULL;
}

START_TEST(fast_slow_readers_and_writers_keep_mutual_exclusion_over_glibc)
{
	static struct stress s;
	pthread_t t[STRESS_THREADS];

	bpt_init(&s.l, _i);
	bravo_slowdown_n = 0; /* bias back at once: many revocations */
	for (int i = 0; i < STRESS_THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, stress_main, &s), 0);
	for (int i = 0; i < STRESS_THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_msg(atomic_load(&s.inv.violations) == 0, "%u violations, first: %s",
		      atomic_load(&s.inv.violations), s.inv.first_violation);
	ck_assert(s.inv.wtotal > 0 && atomic_load(&s.inv.rtotal) > 0);
	ck_assert(glibc_lock_free(&s.l));
}
END_TEST

/*
 * Loop tests run once per glibc kind: _i 0 the default (reader-preferring,
 * drain with glibc's lock released), 1 writer-preferring (held).
 */
static Suite *bravo_pthread_suite(void)
{
	Suite *s = suite_create("bravo_pthread");
	TCase *tc;

	tc = tcase_create("fast_path");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, first_slow_read_holds_the_glibc_lock_and_enables_bias);
	tcase_add_test(tc, fast_read_leaves_the_glibc_lock_untouched);
	tcase_add_test(tc, read_trylock_takes_the_fast_path_when_biased);
	suite_add_tcase(s, tc);

	tc = tcase_create("revocation");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, writer_revocation_waits_for_a_fast_reader);
	tcase_add_test(tc, draining_writer_lets_slow_readers_through_the_glibc_lock);
	tcase_add_loop_test(tc, slow_reader_waits_for_the_writer, 0, 2);
	tcase_add_loop_test(tc, read_trylock_fails_while_the_writer_holds, 0, 2);
	tcase_add_loop_test(tc, timed_read_times_out_while_the_writer_holds, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("try_timed");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_loop_test(tc, write_trylock_with_a_fast_reader_inside_fails_and_keeps_bias, 0, 2);
	tcase_add_loop_test(tc, timed_write_with_a_fast_reader_inside_times_out_and_frees_the_glibc_lock,
			    0, 2);
	tcase_add_test(tc, timed_out_revocation_sets_bias_again);
	suite_add_tcase(s, tc);

	tc = tcase_create("stress");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_loop_test(tc, fast_slow_readers_and_writers_keep_mutual_exclusion_over_glibc, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

/* The paper's classic policy: the first slow read turns bias on. */
int main(void)
{
	bravo_policy = BRAVO_POLICY_CLASSIC;
	return run_suite(bravo_pthread_suite());
}
