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
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "../lib/check_run.h"
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

#define BRAVO_LOCK struct bpt
#include "bravo_harness.h"

/* The lock under test, l: each test makes it of the kind it tests (bpt_init). */
static struct bpt l;

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

static bool rd_trylock(struct bpt *l, uintptr_t *cookie)
{
	return bravo_read_trylock(&l->b, &l->u, &pt_ops, cookie);
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

static bool wr_trylock(struct bpt *l)
{
	return bravo_write_trylock(&l->b, &l->u, &pt_ops);
}

static void wr_unlock(struct bpt *l)
{
	bravo_write_unlock(&l->u, &pt_ops);
}

/* The lock's calls, for the harness's actors and stress runs. */
static int take(struct acquisition *q, const struct deadline *dl)
{
	struct bpt *l = q->lock;

	if (q->kind & ACT_WRITE)
		return q->kind & ACT_TRY ? (wr_trylock(l) ? 0 : EBUSY) : wr_lock(l, dl);
	return q->kind & ACT_TRY ? (rd_trylock(l, &q->cookie) ? 0 : EBUSY)
				 : rd_lock(l, &q->cookie, dl);
}

/* ---------------------------------------------------------------- probes */

/* glibc's own answer: can a writer take its lock right now? */
static bool glibc_lock_free(struct bpt *l)
{
	if (pthread_rwlock_trywrlock(&l->u) != 0)
		return false;
	ck_assert_int_eq(pthread_rwlock_unlock(&l->u), 0);
	return true;
}

/* ------------------------------------------------------------- fast path */

START_TEST(first_slow_read_holds_the_glibc_lock_and_enables_bias)
{
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
	uintptr_t cookie;

	bpt_init(&l, false);
	cookie = fast_reader_in(&l);
	/* the reader is in the table only: glibc's lock is free underneath */
	ck_assert(glibc_lock_free(&l));
	rd_unlock(&l, cookie);
	ck_assert(!bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
}
END_TEST

START_TEST(read_trylock_takes_the_fast_path_when_biased)
{
	uintptr_t cookie;

	bpt_init(&l, false);
	enable_bias(&l);
	ck_assert(rd_trylock(&l, &cookie));
	ck_assert_msg(cookie != 0, "read try-lock took the slow path with bias on");
	ck_assert(glibc_lock_free(&l));
	rd_unlock(&l, cookie);
}
END_TEST

/* ---------------------------------------------- blocking write fast path */

/*
 * bravo_write_fast_wait: glibc's blocking wrlock and then the word.  A
 * free lock without bias: held, nothing to revoke; with bias on: held,
 * the bias left for the caller to revoke.
 */
START_TEST(blocking_write_fast_path_holds_a_free_lock_and_reports_bias_to_revoke)
{
	bpt_init(&l, false);
	ck_assert_int_eq(bravo_write_fast_wait(&l.b, &l.u, &pt_ops), BRAVO_WRITE_HELD);
	ck_assert(!glibc_lock_free(&l));
	wr_unlock(&l);
	enable_bias(&l);
	ck_assert_int_eq(bravo_write_fast_wait(&l.b, &l.u, &pt_ops), BRAVO_WRITE_REVOKE);
	ck_assert(!glibc_lock_free(&l));
	ck_assert(bravo_write_fast_revoke(&l.b, &l.u, &pt_ops)); /* no fast reader: revoked */
	ck_assert(!biased(&l));
	wr_unlock(&l);
	ck_assert(glibc_lock_free(&l));
}
END_TEST

/* What glibc's wrlock refuses (its own writer again: EDEADLK) is a miss, holding nothing more. */
START_TEST(blocking_write_fast_path_misses_when_glibc_refuses)
{
	bpt_init(&l, false);
	ck_assert_int_eq(pthread_rwlock_wrlock(&l.u), 0);
	ck_assert_int_eq(bravo_write_fast_wait(&l.b, &l.u, &pt_ops), BRAVO_WRITE_MISS);
	ck_assert_int_eq(pthread_rwlock_unlock(&l.u), 0);
	ck_assert(glibc_lock_free(&l));
}
END_TEST

/* ------------------------------------------------------------ revocation */

/* Writer-preferring kind: the writer keeps glibc's lock while it waits. */
START_TEST(writer_revocation_waits_for_a_fast_reader)
{
	bpt_init(&l, true);
	writer_waits_for_the_fast_reader(&l, VR_SHARED);
	ck_assert(glibc_lock_free(&l));
}
END_TEST

/*
 * Default kind: a writer draining fast readers holds nothing of glibc's
 * lock, so slow readers get in meanwhile, as glibc would let them in.
 */
START_TEST(draining_writer_lets_slow_readers_through_the_glibc_lock)
{
	uintptr_t cookie;
	struct actor w, r;

	bpt_init(&l, false);
	cookie = fast_reader_in(&l);
	start_writer(&w, &l, .holds = true);
	WAIT_UNTIL(word_of(&l) & BRAVO_DRAINING);
	start_reader(&r, &l, .holds = true);
	WAIT_UNTIL(entered(&r)); /* a hang here: the drain kept glibc's lock */
	ck_assert_uint_eq(r.acq.cookie, 0); /* bias is off: through glibc */
	ck_assert(!entered(&w));
	rd_unlock(&l, cookie);
	actor_finish(&r);
	WAIT_UNTIL(entered(&w));
	ck_assert_int_eq(actor_finish(&w), 0);
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
	struct actor r;

	bpt_init(&l, _i);
	enable_bias(&l);
	write_lock_now(&l);
	start_reader(&r, &l, .holds = true);
	ck_assert_msg(stays_out(&r), "a reader entered while the writer holds");
	wr_unlock(&l);
	WAIT_UNTIL(entered(&r));
	ck_assert_uint_eq(r.acq.cookie, 0); /* through glibc: bias was off when it came */
	ck_assert_int_eq(actor_finish(&r), 0);
}
END_TEST

START_TEST(read_trylock_fails_while_the_writer_holds)
{
	uintptr_t cookie;

	bpt_init(&l, _i);
	enable_bias(&l);
	write_lock_now(&l);
	ck_assert(!rd_trylock(&l, &cookie));
	wr_unlock(&l);
	ck_assert(rd_trylock(&l, &cookie));
	rd_unlock(&l, cookie);
}
END_TEST

START_TEST(timed_read_times_out_while_the_writer_holds)
{
	struct actor r;

	bpt_init(&l, _i);
	enable_bias(&l);
	write_lock_now(&l);
	start_reader(&r, &l, .timeout_us = 20000, .holds = true);
	ck_assert_int_eq(actor_finish(&r), ETIMEDOUT);
	wr_unlock(&l);
	ck_assert(glibc_lock_free(&l));
}
END_TEST

/* ------------------------------------------------ write try and time-out */

START_TEST(write_trylock_with_a_fast_reader_inside_fails_and_keeps_bias)
{
	uintptr_t cookie;

	bpt_init(&l, _i);
	cookie = fast_reader_in(&l);
	ck_assert(!wr_trylock(&l));
	ck_assert_msg(biased(&l), "a failed write try-lock left bias off");
	ck_assert(glibc_lock_free(&l));
	rd_unlock(&l, cookie);
	ck_assert(wr_trylock(&l));
	ck_assert(!biased(&l));
	wr_unlock(&l);
}
END_TEST

START_TEST(timed_write_with_a_fast_reader_inside_times_out_and_frees_the_glibc_lock)
{
	uintptr_t cookie;

	bpt_init(&l, _i);
	cookie = fast_reader_in(&l);
	ck_assert_int_eq(wr_lock(&l, &DEADLINE_IN(CLOCK_MONOTONIC, 20000)), ETIMEDOUT);
	ck_assert(glibc_lock_free(&l));
	/* the fast reader still holds: a new writer still waits for it */
	ck_assert(!wr_trylock(&l));
	rd_unlock(&l, cookie);
	ck_assert_int_eq(wr_lock(&l, NULL), 0);
	wr_unlock(&l);
}
END_TEST

/* A timed writer that gives up without draining sets bias again (writer-preferring kind). */
START_TEST(timed_out_revocation_sets_bias_again)
{
	uintptr_t cookie;

	bpt_init(&l, true);
	cookie = fast_reader_in(&l);
	ck_assert_int_eq(wr_lock(&l, &DEADLINE_IN(CLOCK_MONOTONIC, 20000)), ETIMEDOUT);
	ck_assert_msg(biased(&l), "the timed-out revocation left bias off");
	rd_unlock(&l, cookie);
}
END_TEST

/* ---------------------------------------------------------------- stress */

/*
 * One operation in eight a write, one a write try-lock, the rest reads; a
 * quarter of them with a deadline 1 ms away.
 */
static void glibc_mix(struct stress_thread *t, unsigned x)
{
	struct acquisition q = { .lock = t->s->lock };
	struct deadline dl = x % 4 == 0 ? DEADLINE_IN(CLOCK_MONOTONIC, 1000)
					: (struct deadline){ .abstime = NULL, .clock = CLOCK_MONOTONIC };

	q.kind = x % 8 == 1 ? ACT_WRITE : x % 8 == 2 ? ACT_TRY_WRITE : ACT_READ;
	stress_section(t, &q, &dl, x);
}

START_TEST(fast_slow_readers_and_writers_keep_mutual_exclusion_over_glibc)
{
	struct stress s = { .lock = &l, .op = glibc_mix };

	bpt_init(&l, _i);
	bravo_slowdown_n = 0; /* bias back at once: many revocations */
	stress_run(&s, 4, 20000);
	ck_assert(glibc_lock_free(&l));
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

	tc = timed_tcase(s, "fast_path", TCASE_TIMEOUT);
	tcase_add_test(tc, first_slow_read_holds_the_glibc_lock_and_enables_bias);
	tcase_add_test(tc, fast_read_leaves_the_glibc_lock_untouched);
	tcase_add_test(tc, read_trylock_takes_the_fast_path_when_biased);
	tcase_add_test(tc, blocking_write_fast_path_holds_a_free_lock_and_reports_bias_to_revoke);
	tcase_add_test(tc, blocking_write_fast_path_misses_when_glibc_refuses);

	tc = timed_tcase(s, "revocation", TCASE_TIMEOUT);
	tcase_add_test(tc, writer_revocation_waits_for_a_fast_reader);
	tcase_add_test(tc, draining_writer_lets_slow_readers_through_the_glibc_lock);
	tcase_add_loop_test(tc, slow_reader_waits_for_the_writer, 0, 2);
	tcase_add_loop_test(tc, read_trylock_fails_while_the_writer_holds, 0, 2);
	tcase_add_loop_test(tc, timed_read_times_out_while_the_writer_holds, 0, 2);

	tc = timed_tcase(s, "try_timed", TCASE_TIMEOUT);
	tcase_add_loop_test(tc, write_trylock_with_a_fast_reader_inside_fails_and_keeps_bias, 0, 2);
	tcase_add_loop_test(tc, timed_write_with_a_fast_reader_inside_times_out_and_frees_the_glibc_lock,
			    0, 2);
	tcase_add_test(tc, timed_out_revocation_sets_bias_again);

	tc = timed_tcase(s, "stress", TCASE_TIMEOUT);
	tcase_add_loop_test(tc, fast_slow_readers_and_writers_keep_mutual_exclusion_over_glibc, 0, 2);
	return s;
}

/* The paper's classic policy: the first slow read turns bias on. */
int main(void)
{
	bravo_policy = BRAVO_POLICY_CLASSIC;
	return run_suite(bravo_pthread_suite());
}
