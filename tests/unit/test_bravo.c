/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_bravo.c - unit tests for the generic BRAVO wrapper (locks/bravo.h),
 * composed over the BA lock through an rw_ops adapter, as in BRAVO-BA.
 *
 * Tests never assert timings.  Where a test needs a thread to have reached
 * a blocking point it observes lock state: RBias cleared (a writer is
 * revoking), the waiter bits of the BRAVO word (a writer-preferring writer
 * waits), BA_PRES in the underlying lock (a writer is announced there).
 * Every tcase has a time-out, so a hang is reported as a failure.  Each test
 * runs in its own process (CK_FORK), so the process-wide visible readers
 * table and bravo_slowdown_n start fresh in every test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "invariant.h"
#include "../lib/check_run.h"
#include "timespec_util.h"
#include "../../locks/ba.h"
#include "../../locks/bravo.h"
#include "../../locks/events.h"

#define TCASE_TIMEOUT 30

/* ------------------------------------------------------- BRAVO over BA */

struct bba {
	struct bravo b;
	struct ba_lock u;
};

static int ba_ops_read_lock(void *u, const struct deadline *dl)
{
	return ba_read_lock(u, dl);
}

static bool ba_ops_read_trylock(void *u)
{
	return ba_read_trylock(u);
}

static void ba_ops_read_unlock(void *u)
{
	ba_read_unlock(u);
}

static int ba_ops_write_lock(void *u, const struct deadline *dl)
{
	return ba_write_lock(u, dl);
}

static bool ba_ops_write_trylock(void *u)
{
	return ba_write_trylock(u);
}

static void ba_ops_write_unlock(void *u)
{
	ba_write_unlock(u);
}

static bool ba_ops_guest_ok(void *u)
{
	return ba_guest_ok(u);
}

static const struct rw_ops ba_ops = {
	.scope = VR_SHARED,
	.guest_ok = ba_ops_guest_ok,
	.read_lock = ba_ops_read_lock,
	.read_trylock = ba_ops_read_trylock,
	.read_unlock = ba_ops_read_unlock,
	.write_lock = ba_ops_write_lock,
	.write_trylock = ba_ops_write_trylock,
	.write_unlock = ba_ops_write_unlock,
};

/* The same, its fast readers publishing in a table of each lock's own. */
static const struct rw_ops ba_per_lock_ops = {
	.scope = VR_PER_LOCK,
	.guest_ok = ba_ops_guest_ok,
	.read_lock = ba_ops_read_lock,
	.read_trylock = ba_ops_read_trylock,
	.read_unlock = ba_ops_read_unlock,
	.write_lock = ba_ops_write_lock,
	.write_trylock = ba_ops_write_trylock,
	.write_unlock = ba_ops_write_unlock,
};

/* The composition the helpers below use (a test may switch it first). */
static const struct rw_ops *ops = &ba_ops;

static int rd_lock(struct bba *l, uintptr_t *cookie, const struct deadline *dl)
{
	return bravo_read_lock(&l->b, &l->u, ops, cookie, dl);
}

static bool rd_trylock(struct bba *l, uintptr_t *cookie)
{
	return bravo_read_trylock(&l->b, &l->u, ops, cookie);
}

static void rd_unlock(struct bba *l, uintptr_t cookie)
{
	bravo_read_unlock(&l->u, ops, cookie);
}

/* What the lock's fast readers publish in their slots. */
static const void *token_of(struct bba *l)
{
	return (const void *)(uintptr_t)atomic_load(&l->b.token);
}

/*
 * Writers of the tests below hold BA while fast readers drain, as under
 * BRAVO-BA, unless a test makes them behave as over a reader-preferring
 * lock (BRAVO-pthread's default kind): let go of it meanwhile.
 */
static bool writers_release_while_draining;

/* The writer is "named" at once: its waiting-writer mark goes (bravo.h). */
static int wr_lock(struct bba *l, bool writer_pref, const struct deadline *dl)
{
	const void *pending = wait_writer_pending_get();
	int r = bravo_write_lock(&l->b, &l->u, ops, writer_pref, writers_release_while_draining, dl);

	wait_writer_pending_restore(pending);
	return r;
}

static bool wr_trylock(struct bba *l)
{
	return bravo_write_trylock(&l->b, &l->u, ops);
}

static void wr_unlock(struct bba *l)
{
	bravo_write_unlock(&l->u, ops);
}

/* ---------------------------------------------------------------- helpers */


static uint64_t word_of(struct bba *l)
{
	return atomic_load(&l->b.word);
}

static bool biased(struct bba *l)
{
	return word_of(l) & BRAVO_RBIAS;
}

static struct vr_table *table(void)
{
	return atomic_load(&vr_table);
}

/*
 * Probes of the underlying BA lock; the only code here that knows its word
 * layout (ba.h).  Slow-path readers are the readers BA has counted.
 */
static uint32_t slow_readers(struct bba *l)
{
	return (ba_rin_count(atomic_load(&l->u.rin)) - ba_rout_count(atomic_load(&l->u.rout))) &
	       BA_COUNT_MASK;
}

/* A writer has announced itself in BA (it waits for readers, or is in). */
static bool ba_writer_present(struct bba *l)
{
	return atomic_load(&l->u.rin) & BA_PRES;
}

#define WAIT_UNTIL(cond)                 \
	do {                             \
		while (!(cond))          \
			usleep(100);     \
	} while (0)

/* Take a read lock that enables bias (the lock's first slow-path read). */
static void enable_bias(struct bba *l)
{
	uintptr_t cookie;

	ck_assert_int_eq(rd_lock(l, &cookie, NULL), 0);
	rd_unlock(l, cookie);
	ck_assert_msg(biased(l), "a slow-path read did not enable bias");
}

/* Take a fast-path read lock (bias must be on); returns the cookie. */
static uintptr_t fast_read(struct bba *l)
{
	uintptr_t cookie;

	ck_assert_int_eq(rd_lock(l, &cookie, NULL), 0);
	ck_assert_msg(cookie != 0, "read took the slow path with bias on");
	return cookie;
}

/* An actor thread: one read or write acquisition, optionally held. */
enum { ACT_READ, ACT_WRITE, ACT_TRY_READ, ACT_TRY_WRITE };

struct actor {
	struct bba *l;
	int kind;
	bool writer_pref;
	long timeout_us; /* 0: no deadline */
	bool hold;
	pthread_t thread;
	atomic_bool started, entered, done, release;
	uintptr_t cookie;
	int result; /* 0, ETIMEDOUT, or EBUSY for a failed trylock */
};

static void *actor_main(void *arg)
{
	struct actor *a = arg;
	struct timespec ts;
	struct deadline dl = { .abstime = NULL, .clock = CLOCK_MONOTONIC };
	int r;

	if (a->timeout_us) {
		ts = ts_from_now(CLOCK_MONOTONIC, a->timeout_us);
		dl.abstime = &ts;
	}
	atomic_store(&a->started, true);
	switch (a->kind) {
	case ACT_READ:
		r = rd_lock(a->l, &a->cookie, &dl);
		break;
	case ACT_TRY_READ:
		r = rd_trylock(a->l, &a->cookie) ? 0 : EBUSY;
		break;
	case ACT_WRITE:
		r = wr_lock(a->l, a->writer_pref, &dl);
		break;
	default:
		r = wr_trylock(a->l) ? 0 : EBUSY;
		break;
	}
	a->result = r;
	if (r == 0) {
		atomic_store(&a->entered, true);
		if (a->hold)
			WAIT_UNTIL(atomic_load(&a->release));
		if (a->kind == ACT_READ || a->kind == ACT_TRY_READ)
			rd_unlock(a->l, a->cookie);
		else
			wr_unlock(a->l);
	}
	atomic_store(&a->done, true);
	return NULL;
}

static void actor_start(struct actor *a, struct bba *l, int kind, bool writer_pref,
			long timeout_us, bool hold)
{
	memset(a, 0, sizeof(*a));
	a->l = l;
	a->kind = kind;
	a->writer_pref = writer_pref;
	a->timeout_us = timeout_us;
	a->hold = hold;
	ck_assert_int_eq(pthread_create(&a->thread, NULL, actor_main, a), 0);
	WAIT_UNTIL(atomic_load(&a->started));
}

static bool entered(struct actor *a)
{
	return atomic_load(&a->entered);
}

static bool done(struct actor *a)
{
	return atomic_load(&a->done);
}

static void actor_finish(struct actor *a)
{
	atomic_store(&a->release, true);
	pthread_join(a->thread, NULL);
}

static bool idle(struct bba *l)
{
	return ba_is_idle(&l->u) && !bravo_has_fast_readers(&l->b, ops->scope, &l->u);
}

/* ------------------------------------------------ drain, tokens, waiting */

START_TEST(draining_writer_lets_slow_readers_in_while_fast_reader_holds)
{
	struct bba l = { 0 };
	uintptr_t cookie, slow;
	struct actor w;

	writers_release_while_draining = true;
	enable_bias(&l);
	cookie = fast_read(&l);
	actor_start(&w, &l, ACT_WRITE, false, 0, true);
	/* The writer revoked bias and let go of BA while the table drains. */
	WAIT_UNTIL(word_of(&l) & BRAVO_DRAINING);
	WAIT_UNTIL(!ba_writer_present(&l));
	ck_assert_int_eq(rd_lock(&l, &slow, NULL), 0);
	ck_assert_uint_eq(slow, 0);           /* through BA: bias stays off */
	ck_assert(!biased(&l));
	ck_assert(!entered(&w));
	rd_unlock(&l, slow);
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w));
	ck_assert(!(word_of(&l) & BRAVO_DRAINING)); /* the writer ended the drain */
	actor_finish(&w);
	ck_assert_int_eq(w.result, 0);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(second_writer_waits_for_the_drain_too)
{
	struct bba l = { 0 };
	uintptr_t cookie;
	struct actor w1, w2;

	writers_release_while_draining = true;
	enable_bias(&l);
	cookie = fast_read(&l);
	actor_start(&w1, &l, ACT_WRITE, false, 0, true);
	WAIT_UNTIL(word_of(&l) & BRAVO_DRAINING);
	actor_start(&w2, &l, ACT_WRITE, false, 0, true);
	usleep(20000);
	ck_assert_msg(!entered(&w1) && !entered(&w2), "a writer entered beside a fast reader");
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w1) || entered(&w2));
	ck_assert(!(entered(&w1) && entered(&w2)));
	atomic_store(&w2.release, true); /* whichever is inside leaves first */
	actor_finish(&w1);
	actor_finish(&w2);
	ck_assert_int_eq(w1.result, 0);
	ck_assert_int_eq(w2.result, 0);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(timed_draining_writer_times_out_and_leaves_lock_free_for_readers)
{
	struct bba l = { 0 };
	uintptr_t cookie, slow;
	struct actor w;

	writers_release_while_draining = true;
	enable_bias(&l);
	cookie = fast_read(&l);
	actor_start(&w, &l, ACT_WRITE, false, 50000, false);
	WAIT_UNTIL(done(&w));
	actor_finish(&w);
	ck_assert_int_eq(w.result, ETIMEDOUT);
	ck_assert_int_eq(rd_lock(&l, &slow, NULL), 0);
	rd_unlock(&l, slow);
	ck_assert(!wr_trylock(&l));            /* the fast reader is still inside */
	rd_unlock(&l, cookie);
	ck_assert(wr_trylock(&l));             /* and the drain ends here */
	ck_assert(!(word_of(&l) & BRAVO_DRAINING));
	wr_unlock(&l);
}
END_TEST

START_TEST(zeroed_lock_ignores_slot_left_by_its_previous_life)
{
	static struct bba l;
	uintptr_t stale;

	enable_bias(&l);
	stale = fast_read(&l); /* a reader that will never unlock (it "exited") */
	memset(&l, 0, sizeof(l));
	ck_assert(wr_trylock(&l));
	wr_unlock(&l);
	enable_bias(&l);       /* a new token: the old slot is not this lock's */
	ck_assert(wr_trylock(&l));
	wr_unlock(&l);
	ck_assert_ptr_nonnull(atomic_load((vr_slot_t *)stale));
}
END_TEST

START_TEST(tokens_differ_between_lives_of_a_lock)
{
	static struct bba l;
	uint64_t first;

	enable_bias(&l);
	first = atomic_load(&l.b.token);
	ck_assert_uint_ne(first, 0);
	memset(&l, 0, sizeof(l));
	enable_bias(&l);
	ck_assert_uint_ne(atomic_load(&l.b.token), 0);
	ck_assert_uint_ne(atomic_load(&l.b.token), first);
}
END_TEST

static unsigned long one_tolerated(const void *lock)
{
	(void)lock;
	return 1;
}

START_TEST(writer_tolerates_slots_released_on_their_readers_behalf)
{
	struct bba l = { 0 };
	uintptr_t a;
	struct actor r, w;

	enable_bias(&l);
	a = fast_read(&l);                  /* left behind: "handed off" */
	actor_start(&r, &l, ACT_READ, false, 0, true);
	WAIT_UNTIL(entered(&r));
	ck_assert_msg(r.cookie != 0, "second reader missed the fast path");
	bravo_tolerated_slots = one_tolerated;
	actor_start(&w, &l, ACT_WRITE, false, 0, true);
	usleep(20000);
	ck_assert_msg(!entered(&w), "writer entered beside a fast reader it may not tolerate");
	actor_finish(&r);                   /* one slot left, one tolerated */
	WAIT_UNTIL(entered(&w));
	actor_finish(&w);
	ck_assert_int_eq(w.result, 0);
	bravo_tolerated_slots = NULL;
	rd_unlock(&l, a);
}
END_TEST

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct sleepy_writer {
	struct bba *l;
	bool release;
	double cpu;
};

static void *sleepy_writer_main(void *arg)
{
	struct sleepy_writer *s = arg;
	double t0 = thread_cpu_seconds();

	writers_release_while_draining = s->release;
	ck_assert_int_eq(wr_lock(s->l, false, NULL), 0);
	s->cpu = thread_cpu_seconds() - t0;
	wr_unlock(s->l);
	return NULL;
}

/* A behaviour, not a speed: a waiting writer must not burn its CPU. */
static void writer_behind_long_fast_read_sleeps(bool release)
{
	struct bba l = { 0 };
	struct sleepy_writer s = { &l, release, 0 };
	uintptr_t cookie;
	pthread_t t;

	enable_bias(&l);
	cookie = fast_read(&l);
	ck_assert_int_eq(pthread_create(&t, NULL, sleepy_writer_main, &s), 0);
	usleep(600000);
	rd_unlock(&l, cookie);
	pthread_join(t, NULL);
	ck_assert_msg(s.cpu < 0.15, "the writer used %.3f s of CPU waiting 0.6 s", s.cpu);
}

START_TEST(writer_holding_ba_behind_long_fast_read_sleeps)
{
	writer_behind_long_fast_read_sleeps(false);
}
END_TEST

START_TEST(draining_writer_behind_long_fast_read_sleeps)
{
	writer_behind_long_fast_read_sleeps(true);
}
END_TEST

/* ------------------------------------------------------------ vr_table */

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

START_TEST(vr_table_is_absent_until_initialized)
{
	ck_assert_ptr_null(table());
	ck_assert_uint_eq(vr_table_slots(), 0);
}
END_TEST

START_TEST(vr_table_rounds_slot_count_up_to_power_of_two)
{
	ck_assert(vr_table_init(5000));
	ck_assert_uint_eq(vr_table_slots(), 8192);
	ck_assert_uint_eq(table()->mask, 8191);
}
END_TEST

START_TEST(vr_table_keeps_slot_count_that_is_power_of_two)
{
	ck_assert(vr_table_init(16384));
	ck_assert_uint_eq(vr_table_slots(), 16384);
}
END_TEST

START_TEST(vr_table_is_never_smaller_than_4096_slots)
{
	static const uint32_t small[] = { 1, 2, 3, 100, 1000, 4095 };

	ck_assert(vr_table_init(small[_i]));
	ck_assert_uint_eq(vr_table_slots(), VR_TABLE_MIN_SLOTS);
	ck_assert_uint_eq(VR_TABLE_MIN_SLOTS, 4096);
}
END_TEST

START_TEST(vr_table_default_size_is_power_of_two_of_at_least_4096)
{
	uint32_t def = vr_table_default_slots();

	ck_assert(is_pow2(def));
	ck_assert_uint_ge(def, 4096);
	ck_assert(vr_table_init(0));
	ck_assert_uint_eq(vr_table_slots(), def);
}
END_TEST

START_TEST(vr_table_init_is_idempotent)
{
	struct vr_table *t;

	ck_assert(vr_table_init(8192));
	t = table();
	ck_assert(vr_table_init(4096));
	ck_assert(vr_table_init(0));
	ck_assert_ptr_eq(table(), t);
	ck_assert_uint_eq(vr_table_slots(), 8192);
}
END_TEST

START_TEST(vr_table_starts_with_every_slot_empty)
{
	ck_assert(vr_table_init(0));
	for (uint32_t i = 0; i <= table()->mask; i++)
		ck_assert_ptr_null(atomic_load(&table()->slot[i]));
}
END_TEST

static pthread_barrier_t init_gate;

static void *racing_init(void *arg)
{
	pthread_barrier_wait(&init_gate);
	*(bool *)arg = vr_table_init(0);
	return (void *)table();
}

START_TEST(concurrent_vr_table_inits_publish_one_table)
{
	enum { N = 8 };
	pthread_t t[N];
	bool ok[N];
	void *seen[N];

	pthread_barrier_init(&init_gate, NULL, N);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, racing_init, &ok[i]), 0);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], &seen[i]);
	for (int i = 0; i < N; i++) {
		ck_assert(ok[i]);
		ck_assert_ptr_eq(seen[i], table());
	}
	pthread_barrier_destroy(&init_gate);
}
END_TEST

/* ------------------------------------------------------------ fast path */

START_TEST(zeroed_lock_is_unlocked_and_unbiased)
{
	static struct bba l; /* all-zero bytes */
	uintptr_t cookie;

	ck_assert_uint_eq(word_of(&l), 0);
	ck_assert(idle(&l));
	ck_assert(wr_trylock(&l));
	wr_unlock(&l);
	ck_assert(rd_trylock(&l, &cookie));
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(first_slow_read_enables_bias)
{
	struct bba l = { 0 };
	uintptr_t cookie = 1;

	ck_assert(!biased(&l));
	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	ck_assert_uint_eq(cookie, 0);          /* slow path */
	ck_assert_uint_eq(slow_readers(&l), 1); /* holds BA read permission */
	ck_assert(biased(&l));
	ck_assert_ptr_nonnull(table());        /* bias brought up the table */
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(read_with_bias_set_takes_fast_path_in_own_slot)
{
	struct bba l = { 0 };
	uintptr_t cookie;
	vr_slot_t *slot;

	enable_bias(&l);
	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	slot = (vr_slot_t *)cookie;
	ck_assert_ptr_nonnull(slot);
	/* In the token's column, whatever the row (2D: the CPU it ran on). */
	ck_assert_uint_eq((uint32_t)(slot - table()->slot) % VR_COLUMNS,
			  vr_column_of((uint64_t)(uintptr_t)token_of(&l)));
	ck_assert_ptr_eq(atomic_load(slot), token_of(&l)); /* the lock's token */
	ck_assert_uint_eq(slow_readers(&l), 0); /* BA never saw this reader */
	ck_assert(bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
	rd_unlock(&l, cookie);
	ck_assert_ptr_null(atomic_load(slot));
	ck_assert(!bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
	ck_assert(biased(&l));
	ck_assert(idle(&l));
}
END_TEST

START_TEST(read_trylock_with_bias_set_takes_fast_path)
{
	struct bba l = { 0 };
	uintptr_t cookie;

	enable_bias(&l);
	ck_assert(rd_trylock(&l, &cookie));
	ck_assert_ptr_eq(atomic_load((vr_slot_t *)cookie), token_of(&l));
	ck_assert_uint_eq(slow_readers(&l), 0);
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(fast_reader_and_slow_reader_share_the_lock)
{
	struct bba l = { 0 };
	uintptr_t fast, slow;

	enable_bias(&l);
	fast = fast_read(&l);
	/* A second read by the same thread finds its own slot busy. */
	ck_assert_int_eq(rd_lock(&l, &slow, NULL), 0);
	ck_assert_uint_eq(slow, 0);
	ck_assert_uint_eq(slow_readers(&l), 1);
	ck_assert(bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
	rd_unlock(&l, fast);
	rd_unlock(&l, slow);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(timed_read_takes_fast_path_even_at_past_deadline)
{
	struct bba l = { 0 };
	struct timespec ts = ts_from_now(CLOCK_MONOTONIC, -1000000);
	struct deadline dl = { .abstime = &ts, .clock = CLOCK_MONOTONIC };
	uintptr_t cookie;

	enable_bias(&l);
	ck_assert_int_eq(rd_lock(&l, &cookie, &dl), 0);
	ck_assert_uint_ne(cookie, 0);
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

/* ----------------------------------------------------------- revocation */

START_TEST(writer_waits_for_fast_reader)
{
	struct bba l = { 0 };
	uintptr_t cookie;
	struct actor w;

	enable_bias(&l);
	cookie = fast_read(&l);
	actor_start(&w, &l, ACT_WRITE, false, 0, true);
	/* The writer holds BA and is revoking. */
	WAIT_UNTIL(!biased(&l) || entered(&w));
	usleep(10000);
	ck_assert_msg(!entered(&w), "writer entered while a fast reader holds");
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w));
	ck_assert(!bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
	actor_finish(&w);
	ck_assert_int_eq(w.result, 0);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(writer_waits_for_slow_reader)
{
	struct bba l = { 0 };
	uintptr_t cookie;
	struct actor w;

	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	ck_assert_uint_eq(cookie, 0);
	actor_start(&w, &l, ACT_WRITE, false, 0, true);
	WAIT_UNTIL(ba_writer_present(&l));
	usleep(10000);
	ck_assert(!entered(&w));
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w));
	actor_finish(&w);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(revocation_turns_bias_off)
{
	struct bba l = { 0 };
	uintptr_t cookie;

	enable_bias(&l);
	ck_assert_int_eq(wr_lock(&l, false, NULL), 0);
	ck_assert(!biased(&l));
	wr_unlock(&l);
	ck_assert(!biased(&l));
	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	ck_assert_uint_eq(cookie, 0);
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(reader_waits_for_writer_after_revocation)
{
	struct bba l = { 0 };
	struct actor r;

	enable_bias(&l);
	ck_assert_int_eq(wr_lock(&l, false, NULL), 0);
	actor_start(&r, &l, ACT_READ, false, 0, false);
	/* Arrived at BA, behind us. */
	WAIT_UNTIL(slow_readers(&l) == 1 || entered(&r));
	usleep(10000);
	ck_assert(!entered(&r));
	wr_unlock(&l);
	actor_finish(&r);
	ck_assert_int_eq(r.result, 0);
	ck_assert_uint_eq(r.cookie, 0);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(write_trylock_with_fast_reader_inside_fails_without_waiting)
{
	struct bba l = { 0 };
	uintptr_t cookie;

	enable_bias(&l);
	cookie = fast_read(&l);
	/* Same thread: waiting for our own slot would never end. */
	ck_assert(!wr_trylock(&l));
	/* The underlying lock was released again. */
	ck_assert(ba_is_idle(&l.u));
	ck_assert(bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
	rd_unlock(&l, cookie);
	ck_assert(wr_trylock(&l));
	wr_unlock(&l);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(write_trylock_keeps_failing_while_fast_reader_inside)
{
	struct bba l = { 0 };
	uintptr_t cookie;
	bool second;

	enable_bias(&l);
	cookie = fast_read(&l);
	ck_assert(!wr_trylock(&l));
	second = wr_trylock(&l);
	if (second)
		wr_unlock(&l);
	ck_assert_msg(!second, "write_trylock succeeded with a fast reader inside "
		      "(the failed try cleared RBias and left the reader behind)");
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(timed_write_lock_with_fast_reader_inside_times_out)
{
	struct bba l = { 0 };
	uintptr_t cookie;
	struct actor w;

	enable_bias(&l);
	cookie = fast_read(&l);
	actor_start(&w, &l, ACT_WRITE, false, 20000, false);
	pthread_join(w.thread, NULL);
	ck_assert_int_eq(w.result, ETIMEDOUT);
	ck_assert(ba_is_idle(&l.u)); /* the underlying lock was released */
	rd_unlock(&l, cookie);
	ck_assert_int_eq(wr_lock(&l, false, NULL), 0);
	wr_unlock(&l);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(writer_after_timed_out_revocation_still_waits_for_fast_reader)
{
	struct bba l = { 0 };
	uintptr_t cookie;
	struct actor w1, w2;

	enable_bias(&l);
	cookie = fast_read(&l);
	actor_start(&w1, &l, ACT_WRITE, false, 20000, false);
	pthread_join(w1.thread, NULL);
	ck_assert_int_eq(w1.result, ETIMEDOUT);
	/* The fast reader is still inside: the next writer must not enter. */
	actor_start(&w2, &l, ACT_WRITE, false, 20000, false);
	pthread_join(w2.thread, NULL);
	ck_assert_msg(w2.result == ETIMEDOUT, "writer entered with a fast reader inside "
		      "(the timed-out revocation cleared RBias and left the reader behind)");
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(reader_gets_no_fast_path_while_preferring_writer_waits)
{
	struct bba l = { 0 };
	uintptr_t cookie;
	struct actor w, r;

	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0); /* slow; enables bias */
	ck_assert(biased(&l));
	actor_start(&w, &l, ACT_WRITE, true, 0, true);
	/* Announced in the BRAVO word, and waiting in BA for our read. */
	WAIT_UNTIL((word_of(&l) & BRAVO_WAITERS_MASK) && (ba_writer_present(&l)));
	ck_assert(biased(&l));
	actor_start(&r, &l, ACT_TRY_READ, false, 0, false);
	actor_finish(&r);
	ck_assert_int_eq(r.result, EBUSY);
	ck_assert_uint_eq(r.cookie, 0);
	ck_assert(!bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
	ck_assert(!entered(&w));
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w));
	actor_finish(&w);
	ck_assert_uint_eq(word_of(&l) & BRAVO_WAITERS_MASK, 0);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(reader_may_take_fast_path_past_waiting_writer_without_preference)
{
	/* The contrast to the test above: bias alone does let the reader in. */
	struct bba l = { 0 };
	uintptr_t cookie;
	struct actor w, r;

	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	ck_assert(biased(&l));
	actor_start(&w, &l, ACT_WRITE, false, 0, true);
	WAIT_UNTIL(ba_writer_present(&l));
	ck_assert_uint_eq(word_of(&l) & BRAVO_WAITERS_MASK, 0);
	actor_start(&r, &l, ACT_TRY_READ, false, 0, false);
	actor_finish(&r);
	ck_assert_int_eq(r.result, 0);
	ck_assert_uint_ne(r.cookie, 0);
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w));
	actor_finish(&w);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(preferring_writer_withdraws_its_announcement_after_timing_out)
{
	struct bba l = { 0 };
	uintptr_t cookie;
	struct actor w;

	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	actor_start(&w, &l, ACT_WRITE, true, 20000, false);
	pthread_join(w.thread, NULL);
	ck_assert_int_eq(w.result, ETIMEDOUT);
	ck_assert_uint_eq(word_of(&l) & BRAVO_WAITERS_MASK, 0);
	rd_unlock(&l, cookie);
	/* With nobody waiting, bias is back in use. */
	ck_assert(biased(&l));
	cookie = fast_read(&l);
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

/* ------------------------------------------------------------ inhibition */

/*
 * A revocation that must wait for a fast reader: the reader lets go at
 * least hold_us after the writer started revoking, so the revocation takes
 * a non-zero time T (the inhibition window is N * T).
 */
static void revoke_past_fast_reader(struct bba *l, useconds_t hold_us)
{
	uintptr_t cookie = fast_read(l);
	struct actor w;

	actor_start(&w, l, ACT_WRITE, false, 0, false);
	WAIT_UNTIL(!biased(l) || done(&w));
	ck_assert(!done(&w));
	usleep(hold_us);
	rd_unlock(l, cookie);
	actor_finish(&w);
	ck_assert_int_eq(w.result, 0);
}

START_TEST(slow_read_does_not_reenable_bias_right_after_revocation_when_n_is_large)
{
	struct bba l = { 0 };
	uintptr_t cookie;

	/* Large, but N * T stays far from the 2^47 units where time wraps. */
	bravo_slowdown_n = 1u << 20;
	enable_bias(&l);
	revoke_past_fast_reader(&l, 2000);
	ck_assert(bravo_inhibited(word_of(&l), bravo_now()));
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
		ck_assert_uint_eq(cookie, 0);
		ck_assert_msg(!biased(&l), "bias re-enabled inside the inhibition window");
		rd_unlock(&l, cookie);
	}
	ck_assert(idle(&l));
}
END_TEST

START_TEST(slow_read_reenables_bias_right_after_revocation_when_n_is_zero)
{
	struct bba l = { 0 };
	uintptr_t cookie;

	bravo_slowdown_n = 0;
	enable_bias(&l);
	revoke_past_fast_reader(&l, 2000);
	ck_assert(!biased(&l));
	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	ck_assert_uint_eq(cookie, 0);
	ck_assert(biased(&l));
	rd_unlock(&l, cookie);
	cookie = fast_read(&l);
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(slow_read_reenables_bias_once_inhibition_window_ends)
{
	struct bba l = { 0 };
	uintptr_t cookie;

	bravo_slowdown_n = 1;
	enable_bias(&l);
	revoke_past_fast_reader(&l, 2000);
	ck_assert(!biased(&l));
	WAIT_UNTIL(!bravo_inhibited(word_of(&l), bravo_now()));
	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	ck_assert(biased(&l));
	rd_unlock(&l, cookie);
	cookie = fast_read(&l);
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(zero_word_is_not_inhibited)
{
	ck_assert(!bravo_inhibited(0, bravo_now()));
}
END_TEST

/* ------------------------------------------------------------- collision */

START_TEST(slot_collision_falls_back_to_slow_path)
{
	struct bba *cand, *a = NULL, *b = NULL;
	uint32_t slots, *first;
	uintptr_t ca, cb;
	vr_slot_t *slot;

	ck_assert(vr_table_init(0));
	slots = vr_table_slots();
	/* slots + 1 locks: two of them must share a slot for this thread. */
	cand = calloc((size_t)slots + 1, sizeof(*cand));
	first = malloc((size_t)slots * sizeof(*first));
	ck_assert_ptr_nonnull(cand);
	ck_assert_ptr_nonnull(first);
	memset(first, 0xff, (size_t)slots * sizeof(*first));
	for (uint32_t i = 0; i <= slots && !b; i++) {
		uint32_t s;

		enable_bias(&cand[i]); /* draws the token the slot is hashed from */
		s = (uint32_t)(vr_slot_of(table(), (uint64_t)(uintptr_t)token_of(&cand[i])) - table()->slot);

		if (first[s] == UINT32_MAX) {
			first[s] = i;
		} else {
			a = &cand[first[s]];
			b = &cand[i];
		}
	}
	ck_assert_ptr_nonnull(b);
	slot = vr_slot_of(table(), (uint64_t)(uintptr_t)token_of(a));
	ck_assert_ptr_eq(slot, vr_slot_of(table(), (uint64_t)(uintptr_t)token_of(b)));
	ca = fast_read(a);
	ck_assert_uint_eq(ca, (uintptr_t)slot);
	ck_assert_int_eq(rd_lock(b, &cb, NULL), 0);
	ck_assert_uint_eq(cb, 0);                   /* slot busy: slow path */
	ck_assert(biased(b));                       /* although bias is on */
	ck_assert_ptr_eq(atomic_load(slot), token_of(a)); /* a's slot untouched */
	ck_assert_uint_eq(slow_readers(b), 1);      /* b's reader is real */
	ck_assert(!wr_trylock(b));                  /* and excludes writers */
	rd_unlock(b, cb);
	ck_assert_ptr_eq(atomic_load(slot), token_of(a));
	ck_assert(wr_trylock(b));                   /* a's reader is not b's */
	wr_unlock(b);
	rd_unlock(a, ca);
	ck_assert_ptr_null(atomic_load(slot));
	ck_assert(idle(a));
	ck_assert(idle(b));
	free(first);
	free(cand);
}
END_TEST

/* ---------------------------------------------------------------- stress */

/* What the stress mixes in besides read_lock, read_trylock and write_lock. */
enum stress_mode {
	BLOCKING = 0,
	WRITE_TRY = 1,   /* write_trylock */
	TIMED_READ = 2,  /* read locks with deadlines */
	TIMED_WRITE = 4, /* write locks with deadlines */
	EVERYTHING = WRITE_TRY | TIMED_READ | TIMED_WRITE,
};

struct stress {
	struct bba l;
	int ops;
	int mode; /* enum stress_mode bits */
	bool writer_pref;
	pthread_barrier_t start;
	struct invariant inv;
};

struct stress_thread {
	struct stress *s;
	pthread_t thread;
	unsigned seed;
	unsigned long fast_reads, slow_reads, writes, timeouts;
};

static void *stress_main(void *arg)
{
	struct stress_thread *st = arg;
	struct stress *s = st->s;

	pthread_barrier_wait(&s->start);
	for (int n = 0; n < s->ops; n++) {
		unsigned x = xorshift(&st->seed);
		unsigned op = x % 100;
		struct timespec ts;
		struct deadline dl = { .abstime = NULL, .clock = clocks[(x >> 8) & 1] };
		uintptr_t cookie;
		int r;

		if ((op % 10) >= 7 && (op < 60 ? s->mode & TIMED_READ : s->mode & TIMED_WRITE)) {
			ts = ts_from_now(dl.clock, (long)((x >> 9) % 300) - 20);
			dl.abstime = &ts;
		}
		if (op < 60) {
			r = rd_lock(&s->l, &cookie, &dl);
			if (r == ETIMEDOUT) {
				st->timeouts++;
				continue;
			}
			if (r != 0)
				violation(&s->inv, "read lock returned an error");
		} else if (op < 72) {
			if (!rd_trylock(&s->l, &cookie))
				continue;
		} else {
			if (op >= 92 && (s->mode & WRITE_TRY)) {
				if (!wr_trylock(&s->l))
					continue;
			} else {
				r = wr_lock(&s->l, s->writer_pref, &dl);
				if (r == ETIMEDOUT) {
					st->timeouts++;
					continue;
				}
				if (r != 0)
					violation(&s->inv, "write lock returned an error");
			}
			invariant_write_section(&s->inv, x);
			st->writes++;
			wr_unlock(&s->l);
			continue;
		}
		invariant_read_section(&s->inv, x);
		if (cookie)
			st->fast_reads++;
		else
			st->slow_reads++;
		rd_unlock(&s->l, cookie);
	}
	return NULL;
}

#define STRESS_STUCK_SECONDS 10

static void run_stress(int threads, int ops, int mode, bool writer_pref,
		       unsigned slowdown_n)
{
	static struct stress s;
	struct stress_thread *st = calloc((size_t)threads, sizeof(*st));
	unsigned long fast = 0, slow = 0, writes = 0, timeouts = 0;
	struct timespec stuck = ts_from_now(CLOCK_REALTIME, STRESS_STUCK_SECONDS * 1000000L);

	ck_assert_ptr_nonnull(st);
	memset(&s, 0, sizeof(s));
	s.ops = ops;
	s.mode = mode;
	s.writer_pref = writer_pref;
	bravo_slowdown_n = slowdown_n;
	pthread_barrier_init(&s.start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		st[i].s = &s;
		st[i].seed = 0x9e3779b9u * (unsigned)(i + 1) | 1;
		ck_assert_int_eq(pthread_create(&st[i].thread, NULL, stress_main, &st[i]), 0);
	}
	for (int i = 0; i < threads; i++) {
		ck_assert_msg(pthread_timedjoin_np(st[i].thread, NULL, &stuck) == 0,
			      "stuck after %d s: word=%#llx rin=%#llx rout=%#x wseq=%u "
			      "fast readers: %d (violations so far: %u, first: %s)",
			      STRESS_STUCK_SECONDS, (unsigned long long)word_of(&s.l),
			      (unsigned long long)atomic_load(&s.l.u.rin), atomic_load(&s.l.u.rout),
			      atomic_load(&s.l.u.wseq),
			      (int)bravo_has_fast_readers(&s.l.b, VR_SHARED, &s.l.u),
			      atomic_load(&s.inv.violations), s.inv.first_violation);
		fast += st[i].fast_reads;
		slow += st[i].slow_reads;
		writes += st[i].writes;
		timeouts += st[i].timeouts;
	}
	free(st);
	pthread_barrier_destroy(&s.start);
	ck_assert_msg(atomic_load(&s.inv.violations) == 0, "%u violations, first: %s",
		      atomic_load(&s.inv.violations), s.inv.first_violation);
	ck_assert_uint_eq(s.inv.wtotal, writes);
	ck_assert_uint_eq(atomic_load(&s.inv.rtotal), fast + slow);
	ck_assert_uint_gt(slow, 0);
	ck_assert_msg(fast > 0, "no read took the fast path");
	ck_assert_uint_gt(writes, 0);
	if (mode & (TIMED_READ | TIMED_WRITE))
		ck_assert_uint_gt(timeouts, 0);
	ck_assert(idle(&s.l));
}

START_TEST(fast_slow_readers_and_writers_keep_mutual_exclusion)
{
	run_stress(6, 20000, BLOCKING, false, 0);
}
END_TEST

START_TEST(mutual_exclusion_holds_with_default_slowdown_guard)
{
	run_stress(6, 20000, BLOCKING, false, 9);
}
END_TEST

START_TEST(mutual_exclusion_holds_with_preferring_writers)
{
	run_stress(6, 20000, BLOCKING, true, 0);
}
END_TEST

START_TEST(mutual_exclusion_holds_with_write_trylocks)
{
	run_stress(6, 20000, WRITE_TRY, false, 0);
}
END_TEST

START_TEST(mutual_exclusion_holds_with_reader_deadlines)
{
	run_stress(6, 20000, TIMED_READ, false, 0);
}
END_TEST

START_TEST(mutual_exclusion_holds_with_every_kind_of_operation)
{
	run_stress(6, 20000, EVERYTHING, false, 0);
}
END_TEST

START_TEST(mutual_exclusion_holds_with_writers_releasing_while_draining)
{
	writers_release_while_draining = true;
	run_stress(6, 20000, EVERYTHING, false, 0);
}
END_TEST

START_TEST(sixteen_threads_on_few_cpus_make_progress)
{
	run_stress(16, 5000, BLOCKING, false, 0);
}
END_TEST

/* ----------------------------------------------------------------- suite */


/* ------------------------------------------------------------ 2D layout */

static uint64_t slots_scanned;

static void count_scanned(enum lock_event ev, uint64_t n)
{
	if (ev == LOCK_EV_SLOTS_SCANNED)
		__atomic_fetch_add(&slots_scanned, n, __ATOMIC_RELAXED);
}

static uint32_t rows_expected(void)
{
	uint32_t rows = 1;

	while (rows < (uint32_t)sysconf(_SC_NPROCESSORS_CONF))
		rows <<= 1;
	return rows;
}

START_TEST(table_2d_has_one_row_of_256_slots_per_cpu)
{
	ck_assert(vr_table_init(0));
	ck_assert_uint_eq(table()->layout, VR_2D);
	ck_assert_uint_eq(vr_table_rows(), rows_expected());
	ck_assert_uint_eq(vr_table_slots(), rows_expected() * VR_COLUMNS);
}
END_TEST

START_TEST(table_2d_ignores_the_1d_size)
{
	ck_assert(vr_table_init(1u << 16));
	ck_assert_uint_eq(vr_table_slots(), rows_expected() * VR_COLUMNS);
}
END_TEST

START_TEST(revocation_in_2d_scans_one_slot_per_row)
{
	struct bba l = { 0 };
	uintptr_t cookie;

	lock_event_count = count_scanned;
	enable_bias(&l);
	cookie = fast_read(&l);
	rd_unlock(&l, cookie); /* USED is set: the writer must scan */
	slots_scanned = 0;
	ck_assert_int_eq(wr_lock(&l, false, NULL), 0);
	ck_assert(!biased(&l));
	ck_assert_uint_eq(slots_scanned, vr_table_rows());
	wr_unlock(&l);
	lock_event_count = NULL;
}
END_TEST

START_TEST(writer_in_2d_waits_for_fast_reader_of_another_row)
{
	struct bba l = { 0 };
	struct vr_table *t;
	vr_slot_t *other;
	struct actor w;
	uintptr_t cookie;

	enable_bias(&l);
	cookie = fast_read(&l);
	rd_unlock(&l, cookie);
	t = table();
	if (t->row_mask == 0)
		return; /* one row: nothing to show (single-CPU machine) */
	/* A reader that migrated: its slot is in a row that is not this CPU's. */
	other = &t->slot[(((cookie - (uintptr_t)t->slot) / sizeof(vr_slot_t)) ^ VR_COLUMNS) & t->mask];
	atomic_store(other, token_of(&l));
	actor_start(&w, &l, ACT_WRITE, false, 0, false);
	usleep(50000);
	ck_assert(!done(&w)); /* the column scan found the other row's reader */
	atomic_store(other, NULL);
	actor_finish(&w);
	ck_assert_int_eq(w.result, 0);
}
END_TEST

/* ----------------------------------------------------- writer fast path */

START_TEST(write_fast_path_takes_an_unbiased_lock)
{
	struct bba l = { 0 };

	ck_assert_int_eq(bravo_write_fast(&l.b, &l.u, &ba_ops), BRAVO_WRITE_HELD);
	ck_assert(ba_writer_present(&l));
	ck_assert(!ba_read_trylock(&l.u)); /* write-held */
	wr_unlock(&l);
	ck_assert(!ba_writer_present(&l));
}
END_TEST

START_TEST(write_fast_path_holds_a_biased_lock_for_its_revocation)
{
	struct bba l = { 0 };

	enable_bias(&l);
	ck_assert_int_eq(bravo_write_fast(&l.b, &l.u, &ba_ops), BRAVO_WRITE_REVOKE);
	ck_assert(biased(&l)); /* nothing revoked yet */
	ck_assert(ba_writer_present(&l));
	ck_assert(bravo_write_fast_revoke(&l.b, &l.u, &ba_ops));
	ck_assert(!biased(&l));
	wr_unlock(&l);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(write_fast_revoke_ends_a_bias_whose_fast_readers_left)
{
	struct bba l = { 0 };

	enable_bias(&l);
	rd_unlock(&l, fast_read(&l));
	ck_assert_int_eq(bravo_write_fast(&l.b, &l.u, &ba_ops), BRAVO_WRITE_REVOKE);
	ck_assert(bravo_write_fast_revoke(&l.b, &l.u, &ba_ops));
	ck_assert(!biased(&l));
	ck_assert(!(word_of(&l) & BRAVO_USED));
	wr_unlock(&l);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(write_fast_revoke_refuses_with_the_callers_own_fast_read_inside)
{
	struct bba l = { 0 };
	uintptr_t cookie;

	enable_bias(&l);
	cookie = fast_read(&l);
	ck_assert_int_eq(bravo_write_fast(&l.b, &l.u, &ba_ops), BRAVO_WRITE_REVOKE);
	/* Waiting for our own slot would never end: give up, bias on again. */
	ck_assert(!bravo_write_fast_revoke(&l.b, &l.u, &ba_ops));
	ck_assert(biased(&l));
	ck_assert(ba_is_idle(&l.u)); /* the lock underneath released */
	ck_assert(bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(write_fast_path_hands_a_drain_to_its_revocation)
{
	struct bba l = { 0 };

	enable_bias(&l);
	atomic_store(&l.b.word, BRAVO_DRAINING);
	ck_assert_int_eq(bravo_write_fast(&l.b, &l.u, &ba_ops), BRAVO_WRITE_REVOKE);
	ck_assert(bravo_write_fast_revoke(&l.b, &l.u, &ba_ops)); /* the table is clear */
	ck_assert(!(word_of(&l) & BRAVO_DRAINING));
	wr_unlock(&l);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(write_fast_path_refuses_a_held_lock)
{
	struct bba l = { 0 };

	ck_assert_int_eq(wr_lock(&l, false, NULL), 0);
	ck_assert_int_eq(bravo_write_fast(&l.b, &l.u, &ba_ops), BRAVO_WRITE_MISS);
	wr_unlock(&l);
	atomic_store(&l.b.word, 0);
	ck_assert(ba_read_trylock(&l.u)); /* a slow reader inside */
	ck_assert_int_eq(bravo_write_fast(&l.b, &l.u, &ba_ops), BRAVO_WRITE_MISS);
	ba_read_unlock(&l.u);
}
END_TEST

/* ------------------------------------------------------ adaptive policy */

static uint64_t strikes_of(struct bba *l)
{
	return word_of(l) >> BRAVO_STRIKE_SHIFT & BRAVO_STRIKE_MAX;
}

static void write_once(struct bba *l)
{
	ck_assert_int_eq(wr_lock(l, false, NULL), 0);
	wr_unlock(l);
}

/* Enable bias (as many slow reads as strikes ask), then write at once: no fast reader used it. */
static void unpaid_bias(struct bba *l)
{
	uintptr_t cookie;

	for (int i = 0; i < 64 && !biased(l); i++) {
		ck_assert_int_eq(rd_lock(l, &cookie, NULL), 0);
		rd_unlock(l, cookie);
	}
	ck_assert(biased(l));
	write_once(l);
}

/*
 * Adaptive, N = 0 (no window), and bias paid for after `payback` fast
 * reads, counted from zero (the count is per thread, across locks).
 */
static void adaptive_policy(unsigned payback)
{
	bravo_policy = BRAVO_POLICY_ADAPTIVE;
	bravo_slowdown_n = 0;
	bravo_payback = payback;
	bravo_unpaid_reads = 0;
}

/* Take n fast reads of l, one after another. */
static void fast_reads(struct bba *l, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		rd_unlock(l, fast_read(l));
}

START_TEST(adaptive_policy_enables_bias_unpaid)
{
	struct bba l = { 0 };

	adaptive_policy(4);
	enable_bias(&l);
	ck_assert(word_of(&l) & BRAVO_UNPAID);
}
END_TEST

START_TEST(classic_policy_enables_bias_without_unpaid)
{
	struct bba l = { 0 };

	bravo_policy = BRAVO_POLICY_CLASSIC;
	enable_bias(&l);
	ck_assert(!(word_of(&l) & BRAVO_UNPAID));
}
END_TEST

START_TEST(adaptive_policy_counts_a_strike_for_bias_nobody_used)
{
	struct bba l = { 0 };

	adaptive_policy(4);
	unpaid_bias(&l);
	ck_assert_uint_eq(strikes_of(&l), 1);
}
END_TEST

START_TEST(adaptive_policy_counts_a_strike_for_bias_with_too_few_fast_reads)
{
	struct bba l = { 0 };

	adaptive_policy(4);
	enable_bias(&l);
	fast_reads(&l, 3);
	ck_assert(word_of(&l) & BRAVO_UNPAID);
	write_once(&l);
	ck_assert_uint_eq(strikes_of(&l), 1);
}
END_TEST

START_TEST(adaptive_policy_payback_fast_reads_clear_unpaid)
{
	struct bba l = { 0 };

	adaptive_policy(4);
	enable_bias(&l);
	fast_reads(&l, 4);
	ck_assert(!(word_of(&l) & BRAVO_UNPAID));
	ck_assert(biased(&l));
}
END_TEST

START_TEST(inline_fast_path_samples_an_unpaid_bias)
{
	struct bba l = { 0 };
	vr_slot_t *slot;

	adaptive_policy(2);
	enable_bias(&l);
	fast_reads(&l, 1); /* the full path sets USED: the inline path is open from now */
	ck_assert(word_of(&l) & BRAVO_UNPAID);
	slot = bravo_read_fast(&l.b, VR_SHARED, true);
	ck_assert_ptr_nonnull(slot);
	bravo_read_fast_unlock(slot);
	ck_assert(!(word_of(&l) & BRAVO_UNPAID));
	ck_assert(biased(&l));
}
END_TEST

START_TEST(adaptive_policy_strikes_stop_at_the_maximum)
{
	struct bba l = { 0 };

	adaptive_policy(4);
	for (uint64_t i = 1; i <= 3; i++) {
		unpaid_bias(&l);
		ck_assert_uint_eq(strikes_of(&l), i);
	}
	/* Saturate without waiting out 4^s slow reads: set the maximum by hand. */
	atomic_store(&l.b.word, BRAVO_STRIKE_MAX << BRAVO_STRIKE_SHIFT | BRAVO_RBIAS | BRAVO_UNPAID);
	write_once(&l);
	ck_assert_uint_eq(strikes_of(&l), BRAVO_STRIKE_MAX);
}
END_TEST

START_TEST(adaptive_policy_halves_the_strikes_after_bias_that_paid)
{
	struct bba l = { 0 };

	adaptive_policy(4);
	enable_bias(&l);
	/* Pretend four strikes, keeping RBias. */
	atomic_fetch_or(&l.b.word, UINT64_C(4) << BRAVO_STRIKE_SHIFT);
	fast_reads(&l, 4);
	write_once(&l);
	ck_assert_uint_eq(strikes_of(&l), 2);
}
END_TEST

/*
 * Slow reads of a lock with 2 strikes until bias comes on, in a thread of
 * its own (its sampling counter fresh); returns how many it took.
 * ask_first: as libbravo's read path, first bravo_read_nowait (BA's
 * try-lock while bias stays off), then, if it declines, the slow path
 * (which may enable bias).
 */
struct bias_reader {
	struct bba *l;
	bool ask_first;
};

static void *slow_reads_until_bias(void *arg)
{
	struct bias_reader *br = arg;
	struct bba *l = br->l;
	uintptr_t reads = 0, cookie;

	while (!biased(l) && reads < 1000) {
		if (br->ask_first && bravo_read_nowait(&l->b, &l->u, &ba_ops) == BRAVO_READ_HELD) {
			ba_read_unlock(&l->u);
		} else {
			ck_assert_int_eq(rd_lock(l, &cookie, NULL), 0);
			rd_unlock(l, cookie);
		}
		reads++;
	}
	return (void *)reads;
}

static uintptr_t reads_until_bias_with_two_strikes(bool ask_first)
{
	struct bba l = { 0 };
	struct bias_reader br = { &l, ask_first };
	pthread_t t;
	void *reads;

	adaptive_policy(4);
	atomic_store(&l.b.word, UINT64_C(2) << BRAVO_STRIKE_SHIFT); /* not inhibited */
	ck_assert_int_eq(pthread_create(&t, NULL, slow_reads_until_bias, &br), 0);
	ck_assert_int_eq(pthread_join(t, &reads), 0);
	return (uintptr_t)reads;
}

START_TEST(adaptive_policy_with_s_strikes_enables_bias_on_one_slow_read_in_4_to_the_s)
{
	ck_assert_uint_eq(reads_until_bias_with_two_strikes(false), 16);
}
END_TEST

START_TEST(read_nowait_counts_each_read_once_toward_the_4_to_the_s)
{
	ck_assert_uint_eq(reads_until_bias_with_two_strikes(true), 16);
}
END_TEST

static enum bravo_read_nowait rd_nowait(struct bba *l)
{
	return bravo_read_nowait(&l->b, &l->u, &ba_ops);
}

START_TEST(read_nowait_declines_a_read_that_would_enable_bias)
{
	struct bba l = { 0 };

	adaptive_policy(4);
	ck_assert_int_eq(rd_nowait(&l), BRAVO_READ_MISS); /* a fresh lock: this read enables */
	ck_assert(!biased(&l));
	ck_assert(ba_is_idle(&l.u));
}
END_TEST

START_TEST(read_nowait_sends_reads_to_the_table_while_bias_is_on)
{
	struct bba l = { 0 };

	enable_bias(&l);
	ck_assert_int_eq(rd_nowait(&l), BRAVO_READ_TABLE);
	ck_assert(ba_is_idle(&l.u)); /* nothing taken */
}
END_TEST

START_TEST(table_read_off_the_inline_path_settles_an_unpaid_bias)
{
	struct bba l = { 0 };
	vr_slot_t *slot;

	adaptive_policy(1);
	enable_bias(&l);
	ck_assert((word_of(&l) & (BRAVO_USED | BRAVO_UNPAID)) == BRAVO_UNPAID);
	ck_assert_ptr_null(bravo_read_fast(&l.b, VR_SHARED, true)); /* the inline path stays shut */
	slot = bravo_read_fast(&l.b, VR_SHARED, false);
	ck_assert_ptr_nonnull(slot);
	/* What the inline path leaves to the slow one: USED set, bias paid (1 read). */
	ck_assert((word_of(&l) & (BRAVO_USED | BRAVO_UNPAID)) == BRAVO_USED);
	bravo_read_fast_unlock(slot);
}
END_TEST

START_TEST(read_nowait_takes_the_lock_underneath_while_bias_stays_off)
{
	struct bba l = { 0 };

	adaptive_policy(4);
	bravo_slowdown_n = 1000000;
	atomic_store(&l.b.word, (bravo_now() + 1000000) << BRAVO_TIME_SHIFT);
	ck_assert_int_eq(rd_nowait(&l), BRAVO_READ_HELD); /* inside the slow-down window */
	ck_assert(!ba_is_idle(&l.u));
	ba_read_unlock(&l.u);
	atomic_store(&l.b.word, BRAVO_DRAINING);
	ck_assert_int_eq(rd_nowait(&l), BRAVO_READ_HELD); /* a drain keeps bias off */
	ba_read_unlock(&l.u);
	ck_assert(ba_is_idle(&l.u));
	ck_assert(!biased(&l));
}
END_TEST

START_TEST(read_nowait_fails_while_the_caller_write_holds_the_lock)
{
	struct bba l = { 0 };

	enable_bias(&l);
	ck_assert_int_eq(wr_lock(&l, false, NULL), 0);
	ck_assert_int_eq(rd_nowait(&l), BRAVO_READ_MISS);
	wr_unlock(&l);
}
END_TEST

START_TEST(classic_policy_never_counts_strikes)
{
	struct bba l = { 0 };

	bravo_policy = BRAVO_POLICY_CLASSIC;
	bravo_slowdown_n = 0;
	unpaid_bias(&l);
	unpaid_bias(&l);
	ck_assert_uint_eq(strikes_of(&l), 0);
	ck_assert(!bravo_inhibited(word_of(&l), bravo_now())); /* N = 0: no window */
}
END_TEST

START_TEST(adaptive_penalty_keeps_the_classic_window_as_its_floor)
{
	struct bba l = { 0 };

	bravo_policy = BRAVO_POLICY_ADAPTIVE;
	bravo_slowdown_n = 1u << 20;
	enable_bias(&l);
	revoke_past_fast_reader(&l, 2000);
	/* Even with the penalty halved to nothing the N*T window holds. */
	ck_assert(bravo_inhibited(word_of(&l), bravo_now() + (UINT64_C(1) << 12)));
}
END_TEST

static bool run_1d = true;

/* ----------------------------------------- a table of each lock's own */

/* The table of l's fast readers under VR_PER_LOCK, and its slot count. */
static struct vr_table *own_table(struct bba *l)
{
	return bravo_table_of(&l->b, VR_PER_LOCK);
}

START_TEST(per_lock_scope_fast_reader_publishes_in_its_locks_own_table)
{
	struct bba a = { 0 }, b = { 0 };
	vr_slot_t *slot;
	struct vr_table *t;

	ops = &ba_per_lock_ops;
	enable_bias(&a);
	enable_bias(&b);
	t = own_table(&a);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_ne(t, table());      /* not the process-wide table */
	ck_assert_ptr_ne(t, own_table(&b)); /* nor the other lock's */
	ck_assert_uint_eq(t->layout, VR_1D);
	slot = (vr_slot_t *)fast_read(&a);
	ck_assert(slot >= t->slot && slot <= &t->slot[t->mask]);
	ck_assert_ptr_eq(atomic_load(slot), token_of(&a));
	ck_assert(bravo_has_fast_readers(&a.b, VR_PER_LOCK, &a.u));
	ck_assert(!bravo_has_fast_readers(&b.b, VR_PER_LOCK, &b.u));
	rd_unlock(&a, (uintptr_t)slot);
	ck_assert(idle(&a));
}
END_TEST

START_TEST(per_lock_scope_writer_waits_for_fast_reader)
{
	struct bba l = { 0 };
	uintptr_t cookie;
	struct actor w;

	ops = &ba_per_lock_ops;
	enable_bias(&l);
	cookie = fast_read(&l);
	actor_start(&w, &l, ACT_WRITE, false, 0, true);
	WAIT_UNTIL(!biased(&l) || entered(&w));
	usleep(10000);
	ck_assert_msg(!entered(&w), "writer entered while a fast reader holds");
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w));
	actor_finish(&w);
	ck_assert_int_eq(w.result, 0);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(per_lock_scope_keeps_one_table_across_bias_periods)
{
	struct bba l = { 0 };
	struct vr_table *t;

	ops = &ba_per_lock_ops;
	bravo_slowdown_n = 0; /* no window, no strikes: the next slow read enables */
	bravo_policy = BRAVO_POLICY_CLASSIC;
	enable_bias(&l);
	t = own_table(&l);
	ck_assert(wr_trylock(&l)); /* revokes */
	wr_unlock(&l);
	ck_assert(!biased(&l));
	enable_bias(&l);
	ck_assert_ptr_eq(own_table(&l), t);
	rd_unlock(&l, fast_read(&l));
	ck_assert(idle(&l));
}
END_TEST

static Suite *bravo_suite(void)
{
	Suite *s = suite_create("bravo");
	TCase *tc;

	tc = tcase_create("table");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, vr_table_is_absent_until_initialized);
	if (!run_1d) {
		tcase_add_test(tc, table_2d_has_one_row_of_256_slots_per_cpu);
		tcase_add_test(tc, table_2d_ignores_the_1d_size);
		tcase_add_test(tc, revocation_in_2d_scans_one_slot_per_row);
		tcase_add_test(tc, writer_in_2d_waits_for_fast_reader_of_another_row);
		tcase_add_test(tc, concurrent_vr_table_inits_publish_one_table);
		suite_add_tcase(s, tc);
		goto common;
	}
	tcase_add_test(tc, vr_table_rounds_slot_count_up_to_power_of_two);
	tcase_add_test(tc, vr_table_keeps_slot_count_that_is_power_of_two);
	tcase_add_loop_test(tc, vr_table_is_never_smaller_than_4096_slots, 0, 6);
	tcase_add_test(tc, vr_table_default_size_is_power_of_two_of_at_least_4096);
	tcase_add_test(tc, vr_table_init_is_idempotent);
	tcase_add_test(tc, vr_table_starts_with_every_slot_empty);
	tcase_add_test(tc, concurrent_vr_table_inits_publish_one_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("adaptive");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, adaptive_policy_enables_bias_unpaid);
	tcase_add_test(tc, classic_policy_enables_bias_without_unpaid);
	tcase_add_test(tc, adaptive_policy_counts_a_strike_for_bias_nobody_used);
	tcase_add_test(tc, adaptive_policy_counts_a_strike_for_bias_with_too_few_fast_reads);
	tcase_add_test(tc, adaptive_policy_payback_fast_reads_clear_unpaid);
	tcase_add_test(tc, inline_fast_path_samples_an_unpaid_bias);
	tcase_add_test(tc, adaptive_policy_strikes_stop_at_the_maximum);
	tcase_add_test(tc, adaptive_policy_halves_the_strikes_after_bias_that_paid);
	tcase_add_test(tc, adaptive_policy_with_s_strikes_enables_bias_on_one_slow_read_in_4_to_the_s);
	tcase_add_test(tc, read_nowait_counts_each_read_once_toward_the_4_to_the_s);
	tcase_add_test(tc, read_nowait_declines_a_read_that_would_enable_bias);
	tcase_add_test(tc, read_nowait_sends_reads_to_the_table_while_bias_is_on);
	tcase_add_test(tc, table_read_off_the_inline_path_settles_an_unpaid_bias);
	tcase_add_test(tc, read_nowait_takes_the_lock_underneath_while_bias_stays_off);
	tcase_add_test(tc, read_nowait_fails_while_the_caller_write_holds_the_lock);
	tcase_add_test(tc, classic_policy_never_counts_strikes);
	tcase_add_test(tc, adaptive_penalty_keeps_the_classic_window_as_its_floor);
	suite_add_tcase(s, tc);

common:
	tc = tcase_create("per-lock");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, per_lock_scope_fast_reader_publishes_in_its_locks_own_table);
	tcase_add_test(tc, per_lock_scope_writer_waits_for_fast_reader);
	tcase_add_test(tc, per_lock_scope_keeps_one_table_across_bias_periods);
	suite_add_tcase(s, tc);

	tc = tcase_create("fast_path");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, zeroed_lock_is_unlocked_and_unbiased);
	tcase_add_test(tc, first_slow_read_enables_bias);
	tcase_add_test(tc, read_with_bias_set_takes_fast_path_in_own_slot);
	tcase_add_test(tc, read_trylock_with_bias_set_takes_fast_path);
	tcase_add_test(tc, fast_reader_and_slow_reader_share_the_lock);
	tcase_add_test(tc, timed_read_takes_fast_path_even_at_past_deadline);
	suite_add_tcase(s, tc);

	tc = tcase_create("write_fast_path");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, write_fast_path_takes_an_unbiased_lock);
	tcase_add_test(tc, write_fast_path_holds_a_biased_lock_for_its_revocation);
	tcase_add_test(tc, write_fast_revoke_ends_a_bias_whose_fast_readers_left);
	tcase_add_test(tc, write_fast_revoke_refuses_with_the_callers_own_fast_read_inside);
	tcase_add_test(tc, write_fast_path_hands_a_drain_to_its_revocation);
	tcase_add_test(tc, write_fast_path_refuses_a_held_lock);
	suite_add_tcase(s, tc);

	tc = tcase_create("revocation");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, writer_waits_for_fast_reader);
	tcase_add_test(tc, writer_waits_for_slow_reader);
	tcase_add_test(tc, revocation_turns_bias_off);
	tcase_add_test(tc, reader_waits_for_writer_after_revocation);
	tcase_add_test(tc, write_trylock_with_fast_reader_inside_fails_without_waiting);
	tcase_add_test(tc, write_trylock_keeps_failing_while_fast_reader_inside);
	tcase_add_test(tc, timed_write_lock_with_fast_reader_inside_times_out);
	tcase_add_test(tc, writer_after_timed_out_revocation_still_waits_for_fast_reader);
	tcase_add_test(tc, reader_gets_no_fast_path_while_preferring_writer_waits);
	tcase_add_test(tc, reader_may_take_fast_path_past_waiting_writer_without_preference);
	tcase_add_test(tc, preferring_writer_withdraws_its_announcement_after_timing_out);
	suite_add_tcase(s, tc);

	tc = tcase_create("inhibition");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, slow_read_does_not_reenable_bias_right_after_revocation_when_n_is_large);
	tcase_add_test(tc, slow_read_reenables_bias_right_after_revocation_when_n_is_zero);
	tcase_add_test(tc, slow_read_reenables_bias_once_inhibition_window_ends);
	tcase_add_test(tc, zero_word_is_not_inhibited);
	suite_add_tcase(s, tc);

	tc = tcase_create("collision");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	if (run_1d) /* needs the slot to stay put: 2D rows follow the CPU */
		tcase_add_test(tc, slot_collision_falls_back_to_slow_path);
	tcase_add_test(tc, draining_writer_lets_slow_readers_in_while_fast_reader_holds);
	tcase_add_test(tc, second_writer_waits_for_the_drain_too);
	tcase_add_test(tc, timed_draining_writer_times_out_and_leaves_lock_free_for_readers);
	tcase_add_test(tc, zeroed_lock_ignores_slot_left_by_its_previous_life);
	tcase_add_test(tc, tokens_differ_between_lives_of_a_lock);
	if (run_1d) /* needs two fast readers at once: in 2D they may share a CPU's slot */
		tcase_add_test(tc, writer_tolerates_slots_released_on_their_readers_behalf);
	tcase_add_test(tc, writer_holding_ba_behind_long_fast_read_sleeps);
	tcase_add_test(tc, draining_writer_behind_long_fast_read_sleeps);
	suite_add_tcase(s, tc);

	tc = tcase_create("stress");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, fast_slow_readers_and_writers_keep_mutual_exclusion);
	tcase_add_test(tc, mutual_exclusion_holds_with_default_slowdown_guard);
	tcase_add_test(tc, mutual_exclusion_holds_with_preferring_writers);
	tcase_add_test(tc, mutual_exclusion_holds_with_write_trylocks);
	tcase_add_test(tc, mutual_exclusion_holds_with_reader_deadlines);
	tcase_add_test(tc, mutual_exclusion_holds_with_every_kind_of_operation);
	tcase_add_test(tc, mutual_exclusion_holds_with_writers_releasing_while_draining);
	tcase_add_test(tc, sixteen_threads_on_few_cpus_make_progress);
	suite_add_tcase(s, tc);
	return s;
}

/*
 * The protocol tests run over both table layouts, under the paper's
 * classic policy (the adaptive tests pick their policy themselves).
 */
int main(void)
{
	int failed;

	bravo_policy = BRAVO_POLICY_CLASSIC;
	vr_layout = VR_1D;
	run_1d = true;
	failed = run_suite(bravo_suite());
	vr_layout = VR_2D;
	run_1d = false;
	return run_suite(bravo_suite()) | failed;
}
