/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_percpu.c - unit tests for the Per-CPU lock (locks/percpu.h): one BA
 * sub-lock per CPU, readers on their own sub-lock, writers on all of them,
 * through its own API.
 *
 * Tests never assert timings: where a thread must have reached a blocking
 * point, the test watches the sub-locks' words (a writer phase announced,
 * a reader's arrival counted).  Every tcase has a time-out.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "harness.h"
#include "../lib/check_run.h"
#include "../../locks/percpu.h"

#define TCASE_TIMEOUT 60

/* The lock's calls, for the harness's actors and stress runs. */
static int take(struct acquisition *q, const struct deadline *dl)
{
	struct percpu_lock *l = q->lock;

	if (q->kind & ACT_TRY)
		return (q->kind & ACT_WRITE ? percpu_write_trylock(l)
					    : percpu_read_trylock(l, q->node)) ? 0 : EBUSY;
	return q->kind & ACT_WRITE ? percpu_write_lock(l, dl) : percpu_read_lock(l, q->node, dl);
}

static void give_back(struct acquisition *q)
{
	if (q->kind & ACT_WRITE)
		percpu_write_unlock(q->lock);
	else
		percpu_read_unlock(q->lock, q->node);
}

/* A lock on garbage-filled memory: percpu_init must not rely on zeroes. */
static struct percpu_lock *lock_new(unsigned nsub)
{
	size_t size = percpu_size(nsub);
	struct percpu_lock *l = aligned_alloc(PERCPU_SECTOR, size);

	ck_assert_ptr_nonnull(l);
	memset(l, 0xa5, size);
	percpu_init(l, nsub);
	return l;
}

/* Probes of the BA words (ba.h's layout), to see a thread has blocked. */
static bool writer_present(struct percpu_lock *l, unsigned i)
{
	return atomic_load(&l->sub[i].ba.rin) & BA_PRES;
}

static uint32_t arrivals(struct percpu_lock *l, unsigned i)
{
	return (uint32_t)(atomic_load(&l->sub[i].ba.rin) >> 32) & BA_COUNT_MASK;
}

/* ------------------------------------------------------------ basic state */

START_TEST(size_is_a_header_sector_plus_one_per_sublock)
{
	ck_assert_uint_eq(percpu_size(1), 2 * PERCPU_SECTOR);
	ck_assert_uint_eq(percpu_size(8), 9 * PERCPU_SECTOR);
}
END_TEST

START_TEST(any_cpu_number_folds_into_a_sublock)
{
	struct percpu_lock *l = lock_new(3);

	ck_assert_uint_eq(percpu_index(l, 2), 2);
	ck_assert_uint_eq(percpu_index(l, 3), 0);
	ck_assert_uint_eq(percpu_index(l, 7), 1);
	free(l);
}
END_TEST

START_TEST(init_makes_any_bytes_an_idle_lock)
{
	struct percpu_lock *l = lock_new((unsigned)_i);

	ck_assert(percpu_is_idle(l));
	for (unsigned i = 0; i < l->nsub; i++)
		ck_assert_uint_eq(percpu_readers_in(l, i), 0);
	ck_assert(percpu_write_trylock(l));
	percpu_write_unlock(l);
	ck_assert(percpu_is_idle(l));
	free(l);
}
END_TEST

START_TEST(a_reader_excludes_writers_but_not_readers_of_other_sublocks)
{
	struct percpu_lock *l = lock_new(4);

	ck_assert_int_eq(percpu_read_lock(l, 2, NULL), 0);
	ck_assert(!percpu_is_idle(l));
	ck_assert(!percpu_write_trylock(l));
	ck_assert(percpu_read_trylock(l, 0));
	ck_assert(percpu_read_trylock(l, 2));
	percpu_read_unlock(l, 0);
	percpu_read_unlock(l, 2);
	percpu_read_unlock(l, 2);
	ck_assert(percpu_is_idle(l));
	ck_assert(percpu_write_trylock(l));
	for (unsigned i = 0; i < 4; i++)
		ck_assert(!percpu_read_trylock(l, i));
	percpu_write_unlock(l);
	ck_assert(percpu_is_idle(l));
	free(l);
}
END_TEST

/* ---------------------------- readers in (a release by another thread) */

static unsigned readers_on(void *l, unsigned i)
{
	return percpu_readers_in(l, i);
}

START_TEST(readers_in_counts_each_sublocks_readers)
{
	struct percpu_lock *l = lock_new(3);

	readers_are_counted_per_node(l, readers_on);
	ck_assert(percpu_is_idle(l));
	free(l);
}
END_TEST

START_TEST(readers_in_is_zero_while_a_writer_holds_with_readers_waiting)
{
	struct percpu_lock *l = lock_new(2);
	struct actor r;

	/* A writer phase that drained readers first: its ticket is not 0. */
	ck_assert_int_eq(percpu_read_lock(l, 1, NULL), 0);
	percpu_read_unlock(l, 1);
	ck_assert_int_eq(percpu_write_lock(l, NULL), 0);
	start_reader(&r, l, .node = 1, .holds = true);
	WAIT_UNTIL(arrivals(l, 1) == 2); /* the reader waits behind the writer */
	ck_assert_uint_eq(percpu_readers_in(l, 0), 0);
	ck_assert_uint_eq(percpu_readers_in(l, 1), 0);
	percpu_write_unlock(l);
	WAIT_UNTIL(entered(&r));
	ck_assert_uint_eq(percpu_readers_in(l, 1), 1);
	ck_assert_int_eq(actor_finish(&r), 0);
	ck_assert(percpu_is_idle(l));
	free(l);
}
END_TEST

START_TEST(read_hold_released_by_another_thread_lets_a_draining_writer_in)
{
	struct percpu_lock *l = lock_new(3);
	struct actor w, late;

	take_elsewhere((struct acquisition){ .lock = l, .kind = ACT_READ, .node = 1 });
	start_writer(&w, l, .holds = true);
	for (unsigned i = 0; i < 3; i++)
		WAIT_UNTIL(writer_present(l, i));
	/* The writer waits for the reader; it counts once the writer took its ticket. */
	WAIT_UNTIL(percpu_readers_in(l, 1) == 1);
	ck_assert(!entered(&w));
	/* A reader arriving now waits behind the writer: not counted. */
	start_reader(&late, l, .node = 1, .holds = true);
	WAIT_UNTIL(arrivals(l, 1) == 2);
	ck_assert_uint_eq(percpu_readers_in(l, 1), 1);

	ck_assert(release_one_reader(l, l->nsub, readers_on));
	WAIT_UNTIL(entered(&w));
	ck_assert(!release_one_reader(l, l->nsub, readers_on)); /* write-held */
	ck_assert(!entered(&late));
	ck_assert_int_eq(actor_finish(&w), 0);
	WAIT_UNTIL(entered(&late));
	ck_assert_uint_eq(percpu_readers_in(l, 1), 1);
	ck_assert_int_eq(actor_finish(&late), 0);
	ck_assert(!release_one_reader(l, l->nsub, readers_on));
	ck_assert(percpu_is_idle(l));
	free(l);
}
END_TEST

/* ----------------------------------------------------------------- stress */

static void run_stress(int threads, int ops, bool timed, unsigned nsub)
{
	struct stress s = { .lock = lock_new(nsub), .nodes = nsub, STANDARD_MIX,
			    .timed_reads = timed, .timed_writes = timed };

	stress_run(&s, threads, ops);
	ck_assert(percpu_is_idle(s.lock));
	for (unsigned i = 0; i < nsub; i++)
		ck_assert_uint_eq(percpu_readers_in(s.lock, i), 0);
	free(s.lock);
}

START_TEST(mixed_ops_on_four_sublocks_keep_mutual_exclusion)
{
	run_stress(6, 20000, false, 4);
}
END_TEST

START_TEST(mixed_ops_with_deadlines_keep_mutual_exclusion)
{
	run_stress(6, 20000, true, 3);
}
END_TEST

START_TEST(mixed_ops_on_one_sublock_keep_mutual_exclusion)
{
	run_stress(4, 20000, false, 1);
}
END_TEST

static Suite *percpu_suite(void)
{
	Suite *s = suite_create("percpu");
	TCase *tc;

	tc = timed_tcase(s, "state", TCASE_TIMEOUT);
	tcase_add_test(tc, size_is_a_header_sector_plus_one_per_sublock);
	tcase_add_test(tc, any_cpu_number_folds_into_a_sublock);
	tcase_add_loop_test(tc, init_makes_any_bytes_an_idle_lock, 1, 5);
	tcase_add_test(tc, a_reader_excludes_writers_but_not_readers_of_other_sublocks);

	tc = timed_tcase(s, "readers_in", TCASE_TIMEOUT);
	tcase_add_test(tc, readers_in_counts_each_sublocks_readers);
	tcase_add_test(tc, readers_in_is_zero_while_a_writer_holds_with_readers_waiting);
	tcase_add_test(tc, read_hold_released_by_another_thread_lets_a_draining_writer_in);

	tc = timed_tcase(s, "stress", 120);
	tcase_add_test(tc, mixed_ops_on_four_sublocks_keep_mutual_exclusion);
	tcase_add_test(tc, mixed_ops_with_deadlines_keep_mutual_exclusion);
	tcase_add_test(tc, mixed_ops_on_one_sublock_keep_mutual_exclusion);
	return s;
}

int main(void)
{
	return run_suite(percpu_suite());
}
