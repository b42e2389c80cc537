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
#include <check.h>
#include <errno.h>
#include <pthread.h>
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
#include "../../locks/percpu.h"

#define TCASE_TIMEOUT 60

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

#define WAIT_UNTIL(cond)                 \
	do {                             \
		while (!(cond))          \
			usleep(100);     \
	} while (0)

/* A thread that takes the lock once and holds it until told. */
struct actor {
	struct percpu_lock *l;
	unsigned idx;
	bool write;
	pthread_t thread;
	atomic_bool entered, release;
	int result;
};

static void *actor_main(void *arg)
{
	struct actor *a = arg;

	a->result = a->write ? percpu_write_lock(a->l, NULL) : percpu_read_lock(a->l, a->idx, NULL);
	if (a->result == 0) {
		atomic_store(&a->entered, true);
		WAIT_UNTIL(atomic_load(&a->release));
		if (a->write)
			percpu_write_unlock(a->l);
		else
			percpu_read_unlock(a->l, a->idx);
	}
	return NULL;
}

static void actor_start(struct actor *a, struct percpu_lock *l, unsigned idx, bool write)
{
	memset(a, 0, sizeof(*a));
	a->l = l;
	a->idx = idx;
	a->write = write;
	ck_assert_int_eq(pthread_create(&a->thread, NULL, actor_main, a), 0);
}

static void actor_finish(struct actor *a)
{
	atomic_store(&a->release, true);
	ck_assert_int_eq(pthread_join(a->thread, NULL), 0);
	ck_assert_int_eq(a->result, 0);
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

START_TEST(readers_in_counts_each_sublocks_readers)
{
	struct percpu_lock *l = lock_new(3);

	ck_assert_int_eq(percpu_read_lock(l, 0, NULL), 0);
	ck_assert_int_eq(percpu_read_lock(l, 0, NULL), 0);
	ck_assert_int_eq(percpu_read_lock(l, 2, NULL), 0);
	ck_assert_uint_eq(percpu_readers_in(l, 0), 2);
	ck_assert_uint_eq(percpu_readers_in(l, 1), 0);
	ck_assert_uint_eq(percpu_readers_in(l, 2), 1);
	percpu_read_unlock(l, 0);
	percpu_read_unlock(l, 2);
	ck_assert_uint_eq(percpu_readers_in(l, 0), 1);
	ck_assert_uint_eq(percpu_readers_in(l, 2), 0);
	percpu_read_unlock(l, 0);
	ck_assert_uint_eq(percpu_readers_in(l, 0), 0);
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
	actor_start(&r, l, 1, false);
	WAIT_UNTIL(arrivals(l, 1) == 2); /* the reader waits behind the writer */
	ck_assert_uint_eq(percpu_readers_in(l, 0), 0);
	ck_assert_uint_eq(percpu_readers_in(l, 1), 0);
	percpu_write_unlock(l);
	WAIT_UNTIL(atomic_load(&r.entered));
	ck_assert_uint_eq(percpu_readers_in(l, 1), 1);
	actor_finish(&r);
	ck_assert(percpu_is_idle(l));
	free(l);
}
END_TEST

static void *read_lock_and_leave(void *arg)
{
	ck_assert_int_eq(percpu_read_lock(arg, 1, NULL), 0);
	return NULL; /* holds it: another thread will release it */
}

/* What variant_read_release_other does: release one hold found on some sub-lock. */
static bool release_one_reader(struct percpu_lock *l)
{
	for (unsigned i = 0; i < l->nsub; i++) {
		if (percpu_readers_in(l, i)) {
			percpu_read_unlock(l, i);
			return true;
		}
	}
	return false;
}

START_TEST(read_hold_released_by_another_thread_lets_a_draining_writer_in)
{
	struct percpu_lock *l = lock_new(3);
	struct actor w, late;
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, read_lock_and_leave, l), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	actor_start(&w, l, 0, true);
	for (unsigned i = 0; i < 3; i++)
		WAIT_UNTIL(writer_present(l, i));
	/* The writer waits for the reader; it counts once the writer took its ticket. */
	WAIT_UNTIL(percpu_readers_in(l, 1) == 1);
	ck_assert(!atomic_load(&w.entered));
	/* A reader arriving now waits behind the writer: not counted. */
	actor_start(&late, l, 1, false);
	WAIT_UNTIL(arrivals(l, 1) == 2);
	ck_assert_uint_eq(percpu_readers_in(l, 1), 1);

	ck_assert(release_one_reader(l));
	WAIT_UNTIL(atomic_load(&w.entered));
	ck_assert(!release_one_reader(l)); /* write-held */
	ck_assert(!atomic_load(&late.entered));
	actor_finish(&w);
	WAIT_UNTIL(atomic_load(&late.entered));
	ck_assert_uint_eq(percpu_readers_in(l, 1), 1);
	actor_finish(&late);
	ck_assert(!release_one_reader(l));
	ck_assert(percpu_is_idle(l));
	free(l);
}
END_TEST

/* ----------------------------------------------------------------- stress */

struct stress {
	struct percpu_lock *l;
	int ops;
	bool timed;
	pthread_barrier_t start;
	struct invariant inv;
};

struct stress_thread {
	struct stress *s;
	pthread_t thread;
	unsigned seed;
	unsigned long reads, writes, timeouts;
};

static void *stress_main(void *arg)
{
	struct stress_thread *st = arg;
	struct stress *s = st->s;

	pthread_barrier_wait(&s->start);
	for (int n = 0; n < s->ops; n++) {
		unsigned x = xorshift(&st->seed);
		unsigned op = x % 100;
		unsigned idx = (x >> 12) % s->l->nsub; /* as a thread that migrates */
		struct timespec ts;
		struct deadline dl = { .abstime = NULL, .clock = clocks[(x >> 8) & 1] };
		int r;

		if (s->timed && (op % 10) >= 7) {
			ts = ts_from_now(dl.clock, (long)((x >> 9) % 300) - 20);
			dl.abstime = &ts;
		}
		if (op < 50) {
			r = percpu_read_lock(s->l, idx, &dl);
			if (r == ETIMEDOUT) {
				st->timeouts++;
				continue;
			}
			if (r != 0)
				violation(&s->inv, "read lock returned an error");
			invariant_read_section(&s->inv, x);
			st->reads++;
			percpu_read_unlock(s->l, idx);
		} else if (op < 62) {
			if (!percpu_read_trylock(s->l, idx))
				continue;
			invariant_read_section(&s->inv, x);
			st->reads++;
			percpu_read_unlock(s->l, idx);
		} else if (op < 90) {
			r = percpu_write_lock(s->l, &dl);
			if (r == ETIMEDOUT) {
				st->timeouts++;
				continue;
			}
			if (r != 0)
				violation(&s->inv, "write lock returned an error");
			invariant_write_section(&s->inv, x);
			st->writes++;
			percpu_write_unlock(s->l);
		} else {
			if (!percpu_write_trylock(s->l))
				continue;
			invariant_write_section(&s->inv, x);
			st->writes++;
			percpu_write_unlock(s->l);
		}
	}
	return NULL;
}

static void run_stress(int threads, int ops, bool timed, unsigned nsub)
{
	static struct stress s;
	struct stress_thread *st = calloc((size_t)threads, sizeof(*st));
	unsigned long reads = 0, writes = 0, timeouts = 0;

	ck_assert_ptr_nonnull(st);
	memset(&s, 0, sizeof(s));
	s.l = lock_new(nsub);
	s.ops = ops;
	s.timed = timed;
	pthread_barrier_init(&s.start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		st[i].s = &s;
		st[i].seed = 0x9e3779b9u * (unsigned)(i + 1) | 1;
		ck_assert_int_eq(pthread_create(&st[i].thread, NULL, stress_main, &st[i]), 0);
	}
	for (int i = 0; i < threads; i++) {
		ck_assert_int_eq(pthread_join(st[i].thread, NULL), 0);
		reads += st[i].reads;
		writes += st[i].writes;
		timeouts += st[i].timeouts;
	}
	free(st);
	pthread_barrier_destroy(&s.start);
	ck_assert_msg(atomic_load(&s.inv.violations) == 0, "%u violations, first: %s",
		      atomic_load(&s.inv.violations), s.inv.first_violation);
	ck_assert_uint_eq(s.inv.wtotal, writes);
	ck_assert_uint_eq(atomic_load(&s.inv.rtotal), reads);
	ck_assert_uint_gt(reads, 0);
	ck_assert_uint_gt(writes, 0);
	if (timed)
		ck_assert_uint_gt(timeouts, 0);
	ck_assert(percpu_is_idle(s.l));
	for (unsigned i = 0; i < nsub; i++)
		ck_assert_uint_eq(percpu_readers_in(s.l, i), 0);
	free(s.l);
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

	tc = tcase_create("state");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, size_is_a_header_sector_plus_one_per_sublock);
	tcase_add_test(tc, any_cpu_number_folds_into_a_sublock);
	tcase_add_loop_test(tc, init_makes_any_bytes_an_idle_lock, 1, 5);
	tcase_add_test(tc, a_reader_excludes_writers_but_not_readers_of_other_sublocks);
	suite_add_tcase(s, tc);

	tc = tcase_create("readers_in");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, readers_in_counts_each_sublocks_readers);
	tcase_add_test(tc, readers_in_is_zero_while_a_writer_holds_with_readers_waiting);
	tcase_add_test(tc, read_hold_released_by_another_thread_lets_a_draining_writer_in);
	suite_add_tcase(s, tc);

	tc = tcase_create("stress");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, mixed_ops_on_four_sublocks_keep_mutual_exclusion);
	tcase_add_test(tc, mixed_ops_with_deadlines_keep_mutual_exclusion);
	tcase_add_test(tc, mixed_ops_on_one_sublock_keep_mutual_exclusion);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(percpu_suite());
}
