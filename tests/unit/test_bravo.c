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
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "../lib/check_run.h"
#include "../../locks/ba.h"
#include "../../locks/bravo.h"
#include "../../locks/events.h"

#define TCASE_TIMEOUT 30

/* ------------------------------------------------------- BRAVO over BA */

struct bba {
	struct bravo b;
	struct ba_lock u;
};

#define BRAVO_LOCK struct bba
#include "bravo_harness.h"

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

#define BA_OPS(vr_scope)                                 \
	{                                                \
		.scope = (vr_scope),                     \
		.guest_ok = ba_ops_guest_ok,             \
		.read_lock = ba_ops_read_lock,           \
		.read_trylock = ba_ops_read_trylock,     \
		.read_unlock = ba_ops_read_unlock,       \
		.write_lock = ba_ops_write_lock,         \
		.write_trylock = ba_ops_write_trylock,   \
		.write_unlock = ba_ops_write_unlock,     \
	}

static const struct rw_ops ba_ops = BA_OPS(VR_SHARED);

/* The same, its fast readers publishing in a table of each lock's own. */
static const struct rw_ops ba_per_lock_ops = BA_OPS(VR_PER_LOCK);

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

/*
 * The lock under test, l: all-zero bytes, which is an unlocked, unbiased
 * lock, at the start of every test (a checked fixture).
 */
static struct bba l;

static void lock_setup(void)
{
	memset(&l, 0, sizeof(l));
}

/* A test case of s whose tests start with l as lock_setup() makes it. */
static TCase *lock_tcase(Suite *s, const char *name)
{
	return fixture_tcase(s, name, TCASE_TIMEOUT, lock_setup, NULL);
}

static struct vr_table *table(void)
{
	return atomic_load(&vr_table);
}

/* Slots per cell of the table (1 in 1D). */
static uint32_t ways(void)
{
	return UINT32_C(1) << table()->way_bits;
}

/* The index in the table of the slot a fast read's cookie names. */
static size_t slot_index(uintptr_t cookie)
{
	return (size_t)((vr_slot_t *)cookie - table()->slot);
}

/* The first slot of the cell that slot belongs to. */
static vr_slot_t *cell_of_slot(vr_slot_t *slot)
{
	return &table()->slot[(size_t)(slot - table()->slot) & ~(size_t)(ways() - 1)];
}

/*
 * Keep this test's thread on the CPU it runs on, so that its 2D row (and
 * so the slot vr_slot_of names) stays put.  Each test runs in a process
 * of its own (CK_FORK): the pinning ends with it.
 */
static void pin_here(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
}

/* The slot this thread's next read of lock tries first (its CPU's row, its way). */
static vr_slot_t *first_try(struct bba *lock)
{
	return vr_slot_of(table(), (uint64_t)(uintptr_t)token_of(lock));
}

/* A token no lock has: what another lock's reader leaves in a slot. */
#define FOREIGN_TOKEN ((const void *)(uintptr_t)3)

/*
 * Put token in every slot a reader could spill to from slot (every way of
 * its cell, and of the same cell in every other row: vr_free_way) but
 * slot itself (NULL: empty them).  Nothing with one way per cell (and in
 * 1D): such a reader never looks past its slot.
 */
static void fill_other_ways(vr_slot_t *slot, const void *token)
{
	struct vr_table *t = table();
	size_t in_row = (size_t)(cell_of_slot(slot) - t->slot) & (((size_t)1 << t->row_shift) - 1);

	if (ways() == 1)
		return;
	for (size_t row = 0; row <= t->row_mask; row++) {
		vr_slot_t *cell = &t->slot[row << t->row_shift | in_row];

		for (uint32_t w = 0; w < ways(); w++)
			if (&cell[w] != slot)
				atomic_store(&cell[w], token);
	}
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

static bool idle(struct bba *l)
{
	return ba_is_idle(&l->u) && !bravo_has_fast_readers(&l->b, ops->scope, &l->u);
}

/* The lock's calls, for the harness's actors and stress runs. */
static int take(struct acquisition *q, const struct deadline *dl)
{
	struct bba *l = q->lock;

	switch (q->kind) {
	case ACT_READ:
		return rd_lock(l, &q->cookie, dl);
	case ACT_TRY_READ:
		return rd_trylock(l, &q->cookie) ? 0 : EBUSY;
	case ACT_WRITE:
		return wr_lock(l, q->writer_pref, dl);
	default:
		return wr_trylock(l) ? 0 : EBUSY;
	}
}

/* ------------------------------------------------ drain, tokens, waiting */

START_TEST(draining_writer_lets_slow_readers_in_while_fast_reader_holds)
{
	uintptr_t cookie, slow;
	struct actor w;

	writers_release_while_draining = true;
	cookie = fast_reader_in(&l);
	start_writer(&w, &l, .holds = true);
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
	ck_assert_int_eq(actor_finish(&w), 0);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(second_writer_waits_for_the_drain_too)
{
	uintptr_t cookie;
	struct actor w1, w2;

	writers_release_while_draining = true;
	cookie = fast_reader_in(&l);
	start_writer(&w1, &l, .holds = true);
	WAIT_UNTIL(word_of(&l) & BRAVO_DRAINING);
	start_writer(&w2, &l, .holds = true);
	usleep(20000);
	ck_assert_msg(!entered(&w1) && !entered(&w2), "a writer entered beside a fast reader");
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w1) || entered(&w2));
	ck_assert(!(entered(&w1) && entered(&w2)));
	actor_let_go(&w2); /* whichever is inside leaves first */
	ck_assert_int_eq(actor_finish(&w1), 0);
	ck_assert_int_eq(actor_finish(&w2), 0);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(timed_draining_writer_times_out_and_leaves_lock_free_for_readers)
{
	uintptr_t cookie, slow;
	struct actor w;

	writers_release_while_draining = true;
	cookie = fast_reader_in(&l);
	start_writer(&w, &l, .timeout_us = 50000);
	ck_assert_int_eq(actor_finish(&w), ETIMEDOUT);
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
	uintptr_t a;
	struct actor r, w;

	a = fast_reader_in(&l);              /* left behind: "handed off" */
	start_reader(&r, &l, .holds = true);
	WAIT_UNTIL(entered(&r));
	ck_assert_msg(r.acq.cookie != 0, "second reader missed the fast path");
	bravo_tolerated_slots = one_tolerated;
	start_writer(&w, &l, .holds = true);
	usleep(20000);
	ck_assert_msg(!entered(&w), "writer entered beside a fast reader it may not tolerate");
	actor_finish(&r);                    /* one slot left, one tolerated */
	WAIT_UNTIL(entered(&w));
	ck_assert_int_eq(actor_finish(&w), 0);
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
	struct sleepy_writer s = { &l, release, 0 };
	uintptr_t cookie;
	pthread_t t;

	cookie = fast_reader_in(&l);
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
	uintptr_t cookie;

	ck_assert_uint_eq(word_of(&l), 0); /* l is all-zero bytes */
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
	uintptr_t cookie;
	vr_slot_t *slot;

	enable_bias(&l);
	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	slot = (vr_slot_t *)cookie;
	ck_assert_ptr_nonnull(slot);
	/* In the token's column, whatever the row (2D: the CPU it ran on) and way. */
	ck_assert_uint_eq((uint32_t)(slot_index(cookie) >> table()->way_bits) % VR_COLUMNS,
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
	uintptr_t fast, slow;

	pin_here();
	fast = fast_reader_in(&l);
	/*
	 * A second read by the same thread finds its own slot busy, and (2D)
	 * every other way of its cell taken by readers of other locks.
	 */
	fill_other_ways((vr_slot_t *)fast, FOREIGN_TOKEN);
	ck_assert_int_eq(rd_lock(&l, &slow, NULL), 0);
	ck_assert_uint_eq(slow, 0);
	ck_assert_uint_eq(slow_readers(&l), 1);
	ck_assert(bravo_has_fast_readers(&l.b, VR_SHARED, &l.u));
	rd_unlock(&l, fast);
	rd_unlock(&l, slow);
	fill_other_ways((vr_slot_t *)fast, NULL);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(timed_read_takes_fast_path_even_at_past_deadline)
{
	struct deadline dl = DEADLINE_IN(CLOCK_MONOTONIC, -1000000);
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
	writer_waits_for_the_fast_reader(&l, VR_SHARED);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(writer_waits_for_slow_reader)
{
	uintptr_t cookie;
	struct actor w;

	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	ck_assert_uint_eq(cookie, 0);
	start_writer(&w, &l, .holds = true);
	WAIT_UNTIL(ba_writer_present(&l));
	ck_assert(stays_out(&w));
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w));
	actor_finish(&w);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(revocation_turns_bias_off)
{
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
	struct actor r;

	enable_bias(&l);
	ck_assert_int_eq(wr_lock(&l, false, NULL), 0);
	start_reader(&r, &l);
	WAIT_BLOCKED(&r, slow_readers(&l) == 1); /* arrived at BA, behind us */
	ck_assert(stays_out(&r));
	wr_unlock(&l);
	ck_assert_int_eq(actor_finish(&r), 0);
	ck_assert_uint_eq(r.acq.cookie, 0);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(write_trylock_with_fast_reader_inside_fails_without_waiting)
{
	uintptr_t cookie;

	cookie = fast_reader_in(&l);
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
	uintptr_t cookie;
	bool second;

	cookie = fast_reader_in(&l);
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
	uintptr_t cookie;
	struct actor w;

	cookie = fast_reader_in(&l);
	start_writer(&w, &l, .timeout_us = 20000);
	ck_assert_int_eq(actor_finish(&w), ETIMEDOUT);
	ck_assert(ba_is_idle(&l.u)); /* the underlying lock was released */
	rd_unlock(&l, cookie);
	ck_assert_int_eq(wr_lock(&l, false, NULL), 0);
	wr_unlock(&l);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(writer_after_timed_out_revocation_still_waits_for_fast_reader)
{
	uintptr_t cookie;
	struct actor w1, w2;

	cookie = fast_reader_in(&l);
	start_writer(&w1, &l, .timeout_us = 20000);
	ck_assert_int_eq(actor_finish(&w1), ETIMEDOUT);
	/* The fast reader is still inside: the next writer must not enter. */
	start_writer(&w2, &l, .timeout_us = 20000);
	ck_assert_msg(actor_finish(&w2) == ETIMEDOUT, "writer entered with a fast reader inside "
		      "(the timed-out revocation cleared RBias and left the reader behind)");
	rd_unlock(&l, cookie);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(reader_gets_no_fast_path_while_preferring_writer_waits)
{
	uintptr_t cookie;
	struct actor w, r;

	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0); /* slow; enables bias */
	ck_assert(biased(&l));
	start_writer(&w, &l, .writer_pref = true, .holds = true);
	/* Announced in the BRAVO word, and waiting in BA for our read. */
	WAIT_UNTIL((word_of(&l) & BRAVO_WAITERS_MASK) && (ba_writer_present(&l)));
	ck_assert(biased(&l));
	start_try_reader(&r, &l);
	ck_assert_int_eq(actor_finish(&r), EBUSY);
	ck_assert_uint_eq(r.acq.cookie, 0);
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
	uintptr_t cookie;
	struct actor w, r;

	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	ck_assert(biased(&l));
	start_writer(&w, &l, .holds = true);
	WAIT_UNTIL(ba_writer_present(&l));
	ck_assert_uint_eq(word_of(&l) & BRAVO_WAITERS_MASK, 0);
	start_try_reader(&r, &l);
	ck_assert_int_eq(actor_finish(&r), 0);
	ck_assert_uint_ne(r.acq.cookie, 0);
	rd_unlock(&l, cookie);
	WAIT_UNTIL(entered(&w));
	actor_finish(&w);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(preferring_writer_withdraws_its_announcement_after_timing_out)
{
	uintptr_t cookie;
	struct actor w;

	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	start_writer(&w, &l, .writer_pref = true, .timeout_us = 20000);
	ck_assert_int_eq(actor_finish(&w), ETIMEDOUT);
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

	start_writer(&w, l);
	WAIT_BLOCKED(&w, !biased(l));
	usleep(hold_us);
	rd_unlock(l, cookie);
	ck_assert_int_eq(actor_finish(&w), 0);
}

START_TEST(slow_read_does_not_reenable_bias_right_after_revocation_when_n_is_large)
{
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

/* ------------------------------------------------------------------ ways */

START_TEST(busy_home_way_sends_the_reader_to_another_way_of_its_cell)
{
	uintptr_t cookie;
	vr_slot_t *home;

	pin_here();
	enable_bias(&l);
	home = first_try(&l);
	atomic_store(home, FOREIGN_TOKEN); /* another lock's reader on this CPU */
	cookie = fast_read(&l);
	ck_assert_ptr_ne((vr_slot_t *)cookie, home);
	ck_assert_ptr_eq(cell_of_slot((vr_slot_t *)cookie), cell_of_slot(home));
	ck_assert_ptr_eq(atomic_load((vr_slot_t *)cookie), token_of(&l));
	ck_assert(!wr_trylock(&l)); /* the revocation's scan finds it */
	rd_unlock(&l, cookie);
	atomic_store(home, NULL);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(full_cell_sends_the_reader_to_its_locks_cell_in_another_row)
{
	struct vr_table *t;
	uintptr_t cookie;
	vr_slot_t *home, *cell;

	pin_here();
	enable_bias(&l);
	t = table();
	if (t->row_mask == 0)
		return; /* one row: nothing to show (single-CPU machine) */
	home = first_try(&l);
	cell = cell_of_slot(home);
	for (uint32_t w = 0; w < ways(); w++)
		atomic_store(&cell[w], FOREIGN_TOKEN); /* readers preempted on this CPU */
	cookie = fast_read(&l);
	ck_assert_ptr_ne(cell_of_slot((vr_slot_t *)cookie), cell);
	/* the same column, another row: a slot the revocation scans */
	ck_assert_uint_eq((slot_index(cookie) >> t->way_bits) % VR_COLUMNS,
			  vr_column_of((uint64_t)(uintptr_t)token_of(&l)));
	ck_assert(!wr_trylock(&l));
	rd_unlock(&l, cookie);
	for (uint32_t w = 0; w < ways(); w++)
		atomic_store(&cell[w], NULL);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(reader_that_found_its_way_taken_tries_the_free_one_first_next_time)
{
	uintptr_t first, again;
	vr_slot_t *home;

	pin_here();
	enable_bias(&l);
	home = first_try(&l);
	atomic_store(home, FOREIGN_TOKEN); /* a reader preempted on this CPU */
	first = fast_read(&l);
	ck_assert_ptr_ne((vr_slot_t *)first, home);
	rd_unlock(&l, first);
	/* the thread's first try is now the way it found free */
	ck_assert_ptr_eq(first_try(&l), (vr_slot_t *)first);
	again = fast_read(&l);
	ck_assert_uint_eq(again, first);
	rd_unlock(&l, again);
	atomic_store(home, NULL);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(second_fast_read_by_the_same_thread_takes_another_way)
{
	uintptr_t first, second;

	pin_here();
	first = fast_reader_in(&l);
	second = fast_read(&l);
	ck_assert_uint_ne(first, second);
	ck_assert_ptr_eq(cell_of_slot((vr_slot_t *)first), cell_of_slot((vr_slot_t *)second));
	ck_assert_uint_eq(bravo_fast_readers(&l.b, VR_SHARED), 2);
	ck_assert_uint_eq(slow_readers(&l), 0);
	rd_unlock(&l, second);
	ck_assert(!wr_trylock(&l)); /* the first hold still excludes writers */
	rd_unlock(&l, first);
	ck_assert(idle(&l));
}
END_TEST

/* _i: the way of this CPU's cell that holds the lock's token. */
START_TEST(writer_waits_for_a_fast_reader_in_any_way_of_the_cell)
{
	uintptr_t cookie;
	struct actor w;
	vr_slot_t *slot;

	pin_here();
	if ((uint32_t)_i >= VR_WAYS_DEFAULT || (uint32_t)_i >= (enable_bias(&l), ways()))
		return; /* a narrower table has no such way */
	cookie = fast_read(&l);
	rd_unlock(&l, cookie); /* USED is set: the writer must scan */
	slot = &cell_of_slot((vr_slot_t *)cookie)[_i];
	atomic_store(slot, token_of(&l)); /* a reader of the lock in way _i */
	start_writer(&w, &l);
	WAIT_BLOCKED(&w, !biased(&l));
	ck_assert_msg(stays_out(&w), "writer entered while way %d held a fast read", _i);
	atomic_store(slot, NULL);
	ck_assert_int_eq(actor_finish(&w), 0);
}
END_TEST

START_TEST(full_cell_is_a_collision_even_when_every_way_holds_the_same_lock)
{
	uintptr_t cookie, seen;
	vr_slot_t *home;

	pin_here();
	enable_bias(&l);
	home = first_try(&l);
	/* Other threads, preempted inside their reads of l. */
	atomic_store(home, token_of(&l));
	fill_other_ways(home, token_of(&l));
	seen = word_of(&l);
	ck_assert_int_eq(rd_lock(&l, &cookie, NULL), 0);
	ck_assert_uint_eq(cookie, 0); /* slow path */
	ck_assert_int_eq(bravo_miss_cause(&l.b, VR_SHARED, seen), BRAVO_MISS_COLLISION);
	rd_unlock(&l, cookie);
	atomic_store(home, NULL);
	fill_other_ways(home, NULL);
	/* With a way free again, a reader that misses lost a race. */
	ck_assert_int_eq(bravo_miss_cause(&l.b, VR_SHARED, seen), BRAVO_MISS_LOST_RACE);
	ck_assert(idle(&l));
}
END_TEST

/* ------------------------------------------------------------- collision */

START_TEST(slot_collision_falls_back_to_slow_path)
{
	struct bba *cand, *a = NULL, *b = NULL;
	uint32_t slots, *first;
	uintptr_t ca, cb;
	vr_slot_t *slot;

	pin_here();
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
	fill_other_ways(slot, FOREIGN_TOKEN); /* (2D) the rest of the cell is taken */
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
	fill_other_ways(slot, NULL);
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

static void describe(struct stress *s, char *buf, size_t len)
{
	struct bba *l = s->lock;

	snprintf(buf, len, "word=%#llx rin=%#llx rout=%#x wseq=%u fast readers: %d",
		 (unsigned long long)word_of(l), (unsigned long long)atomic_load(&l->u.rin),
		 atomic_load(&l->u.rout), atomic_load(&l->u.wseq),
		 (int)bravo_has_fast_readers(&l->b, VR_SHARED, &l->u));
}

/*
 * 60% reads, 12% read try-locks, the rest writes (the last 8% write
 * try-locks in WRITE_TRY mode); a run not done after 10 s is stuck.
 */
static void run_stress(int threads, int ops, int mode, bool writer_pref,
		       unsigned slowdown_n)
{
	struct stress s = { .lock = &l, .writer_pref = writer_pref, .read_end = 60,
			    .tryread_end = 72, .write_end = mode & WRITE_TRY ? 92 : 100,
			    .timed_reads = mode & TIMED_READ, .timed_writes = mode & TIMED_WRITE,
			    .stuck_seconds = 10, .describe = describe };

	bravo_slowdown_n = slowdown_n;
	stress_run(&s, threads, ops);
	ck_assert_uint_gt(s.reads - s.fast_reads, 0);
	ck_assert_msg(s.fast_reads > 0, "no read took the fast path");
	ck_assert(idle(&l));
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

START_TEST(table_2d_has_one_row_of_256_cells_of_the_ways_per_cpu)
{
	ck_assert(vr_table_init(0));
	ck_assert_uint_eq(table()->layout, VR_2D);
	ck_assert_uint_eq(vr_table_rows(), rows_expected());
	ck_assert_uint_eq(vr_table_ways(), vr_ways);
	ck_assert_uint_eq(vr_table_slots(), rows_expected() * VR_COLUMNS * vr_ways);
}
END_TEST

START_TEST(table_2d_ignores_the_1d_size)
{
	ck_assert(vr_table_init(1u << 16));
	ck_assert_uint_eq(vr_table_slots(), rows_expected() * VR_COLUMNS * vr_ways);
}
END_TEST

START_TEST(table_2d_rounds_the_ways_up_to_a_power_of_two)
{
	vr_ways = 5;
	ck_assert(vr_table_init(0));
	ck_assert_uint_eq(vr_table_ways(), 8);
	ck_assert_uint_eq(vr_table_slots(), rows_expected() * VR_COLUMNS * 8);
}
END_TEST

START_TEST(revocation_in_2d_scans_one_cell_per_row)
{
	uintptr_t cookie;

	lock_event_count = count_scanned;
	enable_bias(&l);
	cookie = fast_read(&l);
	rd_unlock(&l, cookie); /* USED is set: the writer must scan */
	slots_scanned = 0;
	ck_assert_int_eq(wr_lock(&l, false, NULL), 0);
	ck_assert(!biased(&l));
	ck_assert_uint_eq(slots_scanned, vr_table_rows() * vr_table_ways());
	wr_unlock(&l);
	lock_event_count = NULL;
}
END_TEST

START_TEST(writer_in_2d_waits_for_fast_reader_of_another_row)
{
	struct vr_table *t;
	vr_slot_t *other;
	struct actor w;
	uintptr_t cookie;

	cookie = fast_reader_in(&l);
	rd_unlock(&l, cookie);
	t = table();
	if (t->row_mask == 0)
		return; /* one row: nothing to show (single-CPU machine) */
	/* A reader that migrated: its slot is in a row that is not this CPU's. */
	other = &t->slot[(slot_index(cookie) ^ (size_t)VR_COLUMNS << t->way_bits) & t->mask];
	atomic_store(other, token_of(&l));
	start_writer(&w, &l);
	usleep(50000);
	ck_assert(!done(&w)); /* the column scan found the other row's reader */
	atomic_store(other, NULL);
	ck_assert_int_eq(actor_finish(&w), 0);
}
END_TEST

/* ----------------------------------------------------- writer fast path */

START_TEST(write_fast_path_takes_an_unbiased_lock)
{
	ck_assert_int_eq(bravo_write_fast(&l.b, &l.u, &ba_ops), BRAVO_WRITE_HELD);
	ck_assert(ba_writer_present(&l));
	ck_assert(!ba_read_trylock(&l.u)); /* write-held */
	wr_unlock(&l);
	ck_assert(!ba_writer_present(&l));
}
END_TEST

START_TEST(write_fast_path_holds_a_biased_lock_for_its_revocation)
{
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
	uintptr_t cookie;

	cookie = fast_reader_in(&l);
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
	bravo_unpaid_trend = 0;
}

/* Take n fast reads of l, one after another. */
static void fast_reads(struct bba *l, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		rd_unlock(l, fast_read(l));
}

START_TEST(adaptive_policy_enables_bias_unpaid)
{
	adaptive_policy(4);
	enable_bias(&l);
	ck_assert(word_of(&l) & BRAVO_UNPAID);
}
END_TEST

START_TEST(classic_policy_enables_bias_without_unpaid)
{
	bravo_policy = BRAVO_POLICY_CLASSIC;
	enable_bias(&l);
	ck_assert(!(word_of(&l) & BRAVO_UNPAID));
}
END_TEST

/*
 * Fresh locks and the page check (bravo.c, fresh_rent_paid): a check that
 * says "private" and counts its calls stands in for the page check.
 */
static atomic_int page_checks;

static bool counted_private_page(const void *addr)
{
	(void)addr;
	atomic_fetch_add(&page_checks, 1);
	return false;
}

/* One slow read of l, released; was bias enabled by it? */
static bool slow_read_enables_bias(struct bba *lock)
{
	uintptr_t cookie;

	ck_assert(!biased(lock));
	ck_assert_int_eq(rd_lock(lock, &cookie, NULL), 0);
	ck_assert_uint_eq(cookie, 0); /* the slow path */
	rd_unlock(lock, cookie);
	return biased(lock);
}

/* n lives of l, each biased by its first slow read (a token drawn each): the rent's threshold. */
static void lock_lives(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		memset(&l, 0, sizeof(l));
		ck_assert(slow_read_enables_bias(&l));
	}
	memset(&l, 0, sizeof(l));
}

START_TEST(fresh_locks_draw_their_tokens_on_their_first_slow_read_in_a_young_process)
{
	adaptive_policy(4);
	bravo_memory_shared = counted_private_page;
	lock_lives(1000); /* each life's first slow read enables bias */
	ck_assert_int_eq(atomic_load(&page_checks), 1000);
}
END_TEST

START_TEST(fresh_lock_rents_before_its_token_once_65536_were_drawn)
{
	adaptive_policy(4);
	bravo_memory_shared = counted_private_page;
	lock_lives(65536);
	atomic_store(&page_checks, 0);
	ck_assert(!slow_read_enables_bias(&l)); /* the rent starts: no check, no bias */
	ck_assert_int_eq(atomic_load(&page_checks), 0);
	ck_assert_uint_ne(word_of(&l) >> BRAVO_TIME_SHIFT, 0); /* an InhibitUntil */
	ck_assert_uint_eq(strikes_of(&l), 6); /* one try in 4^6 slow reads */
	usleep(5000); /* far past a counted check's time */
	bravo_enable_tries = 0;
	for (unsigned i = 1; i < 4096; i++)
		ck_assert(!slow_read_enables_bias(&l));
	ck_assert_int_eq(atomic_load(&page_checks), 0);
	ck_assert(slow_read_enables_bias(&l)); /* the 4096th: bought */
	ck_assert_int_eq(atomic_load(&page_checks), 1);
	ck_assert_uint_eq(strikes_of(&l), 0); /* the rent's strikes were no verdict */
}
END_TEST

START_TEST(classic_policy_never_rents)
{
	bravo_policy = BRAVO_POLICY_CLASSIC;
	bravo_slowdown_n = 0;
	bravo_memory_shared = counted_private_page;
	lock_lives(65536);
	ck_assert(slow_read_enables_bias(&l));
}
END_TEST

START_TEST(adaptive_policy_counts_a_strike_for_bias_nobody_used)
{
	adaptive_policy(4);
	unpaid_bias(&l);
	ck_assert_uint_eq(strikes_of(&l), 1);
}
END_TEST

START_TEST(adaptive_policy_counts_a_strike_for_bias_with_too_few_fast_reads)
{
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
	adaptive_policy(4);
	enable_bias(&l);
	fast_reads(&l, 4);
	ck_assert(!(word_of(&l) & BRAVO_UNPAID));
	ck_assert(biased(&l));
}
END_TEST

START_TEST(inline_fast_path_samples_an_unpaid_bias)
{
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

START_TEST(adaptive_policy_gives_a_thread_trending_unpaid_at_least_its_trend_strikes)
{
	adaptive_policy(4);
	bravo_unpaid_trend = BRAVO_TREND_ON - 1;
	unpaid_bias(&l); /* the trend reaches BRAVO_TREND_ON: 0 strikes become 5, not 1 */
	ck_assert_uint_eq(bravo_unpaid_trend, BRAVO_TREND_ON);
	ck_assert_uint_eq(strikes_of(&l), BRAVO_TREND_STRIKES);
}
END_TEST

START_TEST(adaptive_policy_below_the_trend_threshold_adds_one_strike)
{
	adaptive_policy(4);
	bravo_unpaid_trend = BRAVO_TREND_ON - 2;
	unpaid_bias(&l);
	ck_assert_uint_eq(bravo_unpaid_trend, BRAVO_TREND_ON - 1);
	ck_assert_uint_eq(strikes_of(&l), 1);
}
END_TEST

START_TEST(adaptive_policy_trend_falls_with_bias_that_paid_and_saturates)
{
	adaptive_policy(4);
	bravo_unpaid_trend = BRAVO_TREND_ON;
	enable_bias(&l);
	fast_reads(&l, 4); /* paid */
	write_once(&l);
	ck_assert_uint_eq(bravo_unpaid_trend, BRAVO_TREND_ON - 1);
	ck_assert_uint_eq(strikes_of(&l), 0);
	bravo_unpaid_trend = BRAVO_TREND_MAX;
	unpaid_bias(&l);
	ck_assert_uint_eq(bravo_unpaid_trend, BRAVO_TREND_MAX);
	ck_assert_uint_eq(strikes_of(&l), BRAVO_TREND_STRIKES);
}
END_TEST

START_TEST(adaptive_policy_halves_the_strikes_after_bias_that_paid)
{
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
	adaptive_policy(4);
	ck_assert_int_eq(rd_nowait(&l), BRAVO_READ_MISS); /* a fresh lock: this read enables */
	ck_assert(!biased(&l));
	ck_assert(ba_is_idle(&l.u));
}
END_TEST

START_TEST(read_nowait_sends_reads_to_the_table_while_bias_is_on)
{
	enable_bias(&l);
	ck_assert_int_eq(rd_nowait(&l), BRAVO_READ_TABLE);
	ck_assert(ba_is_idle(&l.u)); /* nothing taken */
}
END_TEST

START_TEST(table_read_off_the_inline_path_settles_an_unpaid_bias)
{
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
	enable_bias(&l);
	ck_assert_int_eq(wr_lock(&l, false, NULL), 0);
	ck_assert_int_eq(rd_nowait(&l), BRAVO_READ_MISS);
	wr_unlock(&l);
}
END_TEST

START_TEST(classic_policy_never_counts_strikes)
{
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
	bravo_policy = BRAVO_POLICY_ADAPTIVE;
	bravo_slowdown_n = 1u << 20;
	enable_bias(&l);
	revoke_past_fast_reader(&l, 2000);
	/* Even with the penalty halved to nothing the N*T window holds. */
	ck_assert(bravo_inhibited(word_of(&l), bravo_now() + (UINT64_C(1) << 12)));
}
END_TEST

/* Which table the suite runs over: 1D, 2D with ways, or the paper's 2D (one way). */
enum table_run { RUN_1D, RUN_2D, RUN_2D_ONE_WAY };
static enum table_run table_run = RUN_1D;
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
	ops = &ba_per_lock_ops;
	writer_waits_for_the_fast_reader(&l, VR_PER_LOCK);
	ck_assert(idle(&l));
}
END_TEST

START_TEST(per_lock_scope_keeps_one_table_across_bias_periods)
{
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

	tc = lock_tcase(s, "table");
	tcase_add_test(tc, vr_table_is_absent_until_initialized);
	if (!run_1d) {
		tcase_add_test(tc, table_2d_has_one_row_of_256_cells_of_the_ways_per_cpu);
		tcase_add_test(tc, table_2d_ignores_the_1d_size);
		tcase_add_test(tc, table_2d_rounds_the_ways_up_to_a_power_of_two);
		tcase_add_test(tc, revocation_in_2d_scans_one_cell_per_row);
		tcase_add_test(tc, writer_in_2d_waits_for_fast_reader_of_another_row);
		tcase_add_test(tc, concurrent_vr_table_inits_publish_one_table);
		tc = lock_tcase(s, "collision");
		tcase_add_test(tc, slot_collision_falls_back_to_slow_path);
		tcase_add_test(tc, full_cell_is_a_collision_even_when_every_way_holds_the_same_lock);
		tc = lock_tcase(s, "fast_path");
		tcase_add_test(tc, fast_reader_and_slow_reader_share_the_lock);
		if (table_run == RUN_2D_ONE_WAY)
			return s; /* the rest does not depend on the ways */
		tc = lock_tcase(s, "ways");
		tcase_add_test(tc, busy_home_way_sends_the_reader_to_another_way_of_its_cell);
		tcase_add_test(tc, full_cell_sends_the_reader_to_its_locks_cell_in_another_row);
		tcase_add_test(tc, reader_that_found_its_way_taken_tries_the_free_one_first_next_time);
		tcase_add_test(tc, second_fast_read_by_the_same_thread_takes_another_way);
		tcase_add_loop_test(tc, writer_waits_for_a_fast_reader_in_any_way_of_the_cell, 0,
				    VR_WAYS_DEFAULT);
		goto common;
	}
	tcase_add_test(tc, vr_table_rounds_slot_count_up_to_power_of_two);
	tcase_add_test(tc, vr_table_keeps_slot_count_that_is_power_of_two);
	tcase_add_loop_test(tc, vr_table_is_never_smaller_than_4096_slots, 0, 6);
	tcase_add_test(tc, vr_table_default_size_is_power_of_two_of_at_least_4096);
	tcase_add_test(tc, vr_table_init_is_idempotent);
	tcase_add_test(tc, vr_table_starts_with_every_slot_empty);
	tcase_add_test(tc, concurrent_vr_table_inits_publish_one_table);

	tc = lock_tcase(s, "adaptive");
	tcase_add_test(tc, adaptive_policy_enables_bias_unpaid);
	tcase_add_test(tc, classic_policy_enables_bias_without_unpaid);
	tcase_add_test(tc, fresh_locks_draw_their_tokens_on_their_first_slow_read_in_a_young_process);
	tcase_add_test(tc, fresh_lock_rents_before_its_token_once_65536_were_drawn);
	tcase_add_test(tc, classic_policy_never_rents);
	tcase_add_test(tc, adaptive_policy_counts_a_strike_for_bias_nobody_used);
	tcase_add_test(tc, adaptive_policy_counts_a_strike_for_bias_with_too_few_fast_reads);
	tcase_add_test(tc, adaptive_policy_payback_fast_reads_clear_unpaid);
	tcase_add_test(tc, inline_fast_path_samples_an_unpaid_bias);
	tcase_add_test(tc, adaptive_policy_strikes_stop_at_the_maximum);
	tcase_add_test(tc, adaptive_policy_gives_a_thread_trending_unpaid_at_least_its_trend_strikes);
	tcase_add_test(tc, adaptive_policy_below_the_trend_threshold_adds_one_strike);
	tcase_add_test(tc, adaptive_policy_trend_falls_with_bias_that_paid_and_saturates);
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

common:
	tc = lock_tcase(s, "per-lock");
	tcase_add_test(tc, per_lock_scope_fast_reader_publishes_in_its_locks_own_table);
	tcase_add_test(tc, per_lock_scope_writer_waits_for_fast_reader);
	tcase_add_test(tc, per_lock_scope_keeps_one_table_across_bias_periods);

	tc = lock_tcase(s, "fast_path");
	tcase_add_test(tc, zeroed_lock_is_unlocked_and_unbiased);
	tcase_add_test(tc, first_slow_read_enables_bias);
	tcase_add_test(tc, read_with_bias_set_takes_fast_path_in_own_slot);
	tcase_add_test(tc, read_trylock_with_bias_set_takes_fast_path);
	if (run_1d) /* (2D: above) */
		tcase_add_test(tc, fast_reader_and_slow_reader_share_the_lock);
	tcase_add_test(tc, timed_read_takes_fast_path_even_at_past_deadline);

	tc = lock_tcase(s, "write_fast_path");
	tcase_add_test(tc, write_fast_path_takes_an_unbiased_lock);
	tcase_add_test(tc, write_fast_path_holds_a_biased_lock_for_its_revocation);
	tcase_add_test(tc, write_fast_revoke_ends_a_bias_whose_fast_readers_left);
	tcase_add_test(tc, write_fast_revoke_refuses_with_the_callers_own_fast_read_inside);
	tcase_add_test(tc, write_fast_path_hands_a_drain_to_its_revocation);
	tcase_add_test(tc, write_fast_path_refuses_a_held_lock);

	tc = lock_tcase(s, "revocation");
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

	tc = lock_tcase(s, "inhibition");
	tcase_add_test(tc, slow_read_does_not_reenable_bias_right_after_revocation_when_n_is_large);
	tcase_add_test(tc, slow_read_reenables_bias_right_after_revocation_when_n_is_zero);
	tcase_add_test(tc, slow_read_reenables_bias_once_inhibition_window_ends);
	tcase_add_test(tc, zero_word_is_not_inhibited);

	if (run_1d) { /* (2D: above, pinned to a CPU) */
		tc = lock_tcase(s, "collision");
		tcase_add_test(tc, slot_collision_falls_back_to_slow_path);
	}

	tc = lock_tcase(s, "drain");
	tcase_add_test(tc, draining_writer_lets_slow_readers_in_while_fast_reader_holds);
	tcase_add_test(tc, second_writer_waits_for_the_drain_too);
	tcase_add_test(tc, timed_draining_writer_times_out_and_leaves_lock_free_for_readers);
	tcase_add_test(tc, zeroed_lock_ignores_slot_left_by_its_previous_life);
	tcase_add_test(tc, tokens_differ_between_lives_of_a_lock);
	/* needs two fast readers at once: with one way they may share a CPU's slot */
	if (table_run != RUN_2D_ONE_WAY)
		tcase_add_test(tc, writer_tolerates_slots_released_on_their_readers_behalf);
	tcase_add_test(tc, writer_holding_ba_behind_long_fast_read_sleeps);
	tcase_add_test(tc, draining_writer_behind_long_fast_read_sleeps);

	tc = lock_tcase(s, "stress");
	tcase_add_test(tc, fast_slow_readers_and_writers_keep_mutual_exclusion);
	tcase_add_test(tc, mutual_exclusion_holds_with_default_slowdown_guard);
	tcase_add_test(tc, mutual_exclusion_holds_with_preferring_writers);
	tcase_add_test(tc, mutual_exclusion_holds_with_write_trylocks);
	tcase_add_test(tc, mutual_exclusion_holds_with_reader_deadlines);
	tcase_add_test(tc, mutual_exclusion_holds_with_every_kind_of_operation);
	tcase_add_test(tc, mutual_exclusion_holds_with_writers_releasing_while_draining);
	tcase_add_test(tc, sixteen_threads_on_few_cpus_make_progress);
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
	table_run = RUN_2D;
	failed |= run_suite(bravo_suite());
	/* The paper's 2D layout (BRAVO_TABLE_WAYS=1): what depends on the ways. */
	vr_ways = 1;
	table_run = RUN_2D_ONE_WAY;
	return run_suite(bravo_suite()) | failed;
}
