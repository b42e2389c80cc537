/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_cohort.c - unit tests for C-RW-WP, the NUMA-aware writer-preference
 * reader-writer lock with a cohort mutex (locks/cohort.h), through its own
 * API.
 *
 * Tests never assert timings.  Where a test needs a thread to have reached
 * a blocking point it observes the lock words (WACTIVE, a parked reader, a
 * writer counted on a local lock or waiting for the global one) rather than
 * sleeping; the probes below are the only code that knows their layout.
 * Every tcase has a time-out, so a hang is reported as a failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "invariant.h"
#include "../lib/check_run.h"
#include "timespec_util.h"
#include "../../locks/cohort.h"

#define TCASE_TIMEOUT 60

/* ---------------------------------------------------------------- helpers */


/* A lock on garbage-filled memory: cohort_rw_init must not rely on zeroes. */
static struct cohort_rw *lock_new(unsigned nnodes, unsigned bound)
{
	size_t size = cohort_rw_size(nnodes);
	struct cohort_rw *l = aligned_alloc(COHORT_SECTOR, size);

	ck_assert_ptr_nonnull(l);
	memset(l, 0xa5, size);
	cohort_rw_init(l, nnodes, bound);
	return l;
}

/*
 * Probes of the lock state (cohort.h's layout).  The tests use them to see
 * that a thread has reached a blocking point, never to decide what the
 * right behaviour is.
 */
static bool writer_active(struct cohort_rw *l)
{
	return atomic_load(&l->central.wstate) & COHORT_WACTIVE;
}

static bool reader_parked(struct cohort_rw *l)
{
	return atomic_load(&l->central.wstate) & COHORT_RPARK;
}

/* Readers of node that arrived (inside, or backing out) and have not left. */
static uint32_t readers_present(struct cohort_rw *l, unsigned node)
{
	uint32_t in = atomic_load(&l->node[node].ri.ingress);
	uint32_t out = atomic_load(&l->node[node].ri.egress) & ~COHORT_WPARK;

	return ((in - out) / COHORT_RI_INC) & 0x7fffffff;
}

static uint32_t local_waiters(struct cohort_rw *l, unsigned node)
{
	return atomic_load(&l->node[node].local.lstate) / COHORT_LWAITER;
}

static bool local_locked(struct cohort_rw *l, unsigned node)
{
	return atomic_load(&l->node[node].local.lstate) & COHORT_LLOCKED;
}

/* The local lock is free and carries the global lock (a local hand-off). */
static bool local_passed(struct cohort_rw *l, unsigned node)
{
	return atomic_load(&l->node[node].local.lstate) & COHORT_LGPASS;
}

/* -1: the global lock is free; else the node that owns it. */
static int global_owner(struct cohort_rw *l)
{
	return (int)(atomic_load(&l->global.gstate) & COHORT_GOWNER) - 1;
}

static bool waits_for_global(struct cohort_rw *l, unsigned node)
{
	return atomic_load(&l->global.gstate) & COHORT_GWAITING(node);
}

static uint64_t handoffs(struct cohort_rw *l)
{
	return atomic_load(&l->global.handoffs);
}

/* Poll until cond holds; the tcase time-out bounds a cond that never does. */
#define WAIT_UNTIL(cond)                 \
	do {                             \
		while (!(cond))          \
			usleep(100);     \
	} while (0)

/*
 * An actor: a thread that takes the lock once (read or write, on a node,
 * optionally with a deadline), records when it got in, holds the lock until
 * released, then unlocks with the same node.
 */
enum { ACT_READ, ACT_WRITE };

static atomic_uint entry_seq;

struct actor {
	struct cohort_rw *l;
	unsigned node;
	int kind;
	bool timed;
	struct timespec abstime; /* read by the actor whenever it checks its deadline */
	clockid_t clock;
	bool hold;               /* hold until release is set */
	pthread_t thread;
	atomic_bool started;
	atomic_bool entered;
	atomic_bool done;
	atomic_bool release;
	unsigned order;          /* value of entry_seq at entry */
	int result;
};

static void *actor_main(void *arg)
{
	struct actor *a = arg;
	struct deadline dl = { .abstime = a->timed ? &a->abstime : NULL, .clock = a->clock };
	int r;

	atomic_store(&a->started, true);
	r = a->kind == ACT_READ ? cohort_rw_read_lock(a->l, a->node, &dl)
				: cohort_rw_write_lock(a->l, a->node, &dl);
	a->result = r;
	if (r == 0) {
		a->order = atomic_fetch_add(&entry_seq, 1);
		atomic_store(&a->entered, true);
		if (a->hold)
			WAIT_UNTIL(atomic_load(&a->release));
		if (a->kind == ACT_READ)
			cohort_rw_read_unlock(a->l, a->node);
		else
			cohort_rw_write_unlock(a->l, a->node);
	}
	atomic_store(&a->done, true);
	return NULL;
}

/* timeout_us: 0 for no deadline. */
static void actor_start_on(struct actor *a, struct cohort_rw *l, unsigned node, int kind,
			   long timeout_us, clockid_t clock, bool hold)
{
	memset(a, 0, sizeof(*a));
	a->l = l;
	a->node = node;
	a->kind = kind;
	a->timed = timeout_us != 0;
	a->clock = clock;
	if (a->timed)
		a->abstime = ts_from_now(clock, timeout_us);
	a->hold = hold;
	ck_assert_int_eq(pthread_create(&a->thread, NULL, actor_main, a), 0);
	WAIT_UNTIL(atomic_load(&a->started));
}

static void actor_start(struct actor *a, struct cohort_rw *l, unsigned node, int kind,
			long timeout_us, bool hold)
{
	actor_start_on(a, l, node, kind, timeout_us, CLOCK_MONOTONIC, hold);
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

/*
 * SIGUSR1 freezes a thread in a handler until told to go on: a way to hold
 * a blocked waiter still, deterministically, while its deadline passes and
 * the lock is handed to it.
 */
static atomic_bool frozen, thaw;

static void freeze_handler(int sig)
{
	struct timespec nap = { 0, 100000 };

	(void)sig;
	atomic_store(&frozen, true);
	while (!atomic_load(&thaw))
		nanosleep(&nap, NULL);
}

static void install_freeze_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = freeze_handler;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0); /* no SA_RESTART */
}

/* Freeze a's thread, then move its deadline into the past. */
static void freeze_past_deadline(struct actor *a)
{
	pthread_kill(a->thread, SIGUSR1);
	WAIT_UNTIL(atomic_load(&frozen));
	a->abstime.tv_sec = 0; /* the actor reads it again only after thawing */
	a->abstime.tv_nsec = 0;
}

/* ------------------------------------------------------------ basic state */

START_TEST(size_is_two_sectors_plus_two_per_node)
{
	ck_assert_uint_eq(cohort_rw_size(1), 512);
	ck_assert_uint_eq(cohort_rw_size(2), 768);
	for (unsigned n = 1; n <= COHORT_MAX_NODES; n++)
		ck_assert_uint_eq(cohort_rw_size(n) % COHORT_SECTOR, 0);
	/* Each node's reader indicator and local lock start a sector of their own. */
	ck_assert_uint_eq(offsetof(struct cohort_rw, node) % COHORT_SECTOR, 0);
	ck_assert_uint_eq(offsetof(struct cohort_node, local) % COHORT_SECTOR, 0);
}
END_TEST

START_TEST(init_makes_any_bytes_an_idle_lock)
{
	unsigned nnodes = (unsigned)_i;
	struct cohort_rw *l = lock_new(nnodes, COHORT_DEFAULT_HANDOFF_BOUND);

	ck_assert(cohort_rw_is_idle(l));
	ck_assert(cohort_rw_write_trylock(l, nnodes - 1));
	cohort_rw_write_unlock(l, nnodes - 1);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(readers_on_every_node_share_the_lock)
{
	struct cohort_rw *l = lock_new(4, COHORT_DEFAULT_HANDOFF_BOUND);

	for (unsigned n = 0; n < 4; n++) {
		ck_assert_int_eq(cohort_rw_read_lock(l, n, NULL), 0);
		ck_assert(cohort_rw_read_trylock(l, n));
	}
	for (unsigned n = 0; n < 4; n++)
		ck_assert_uint_eq(readers_present(l, n), 2);
	ck_assert(!cohort_rw_is_idle(l));
	for (unsigned n = 0; n < 4; n++) {
		cohort_rw_read_unlock(l, n);
		cohort_rw_read_unlock(l, n);
	}
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(held_lock_is_not_idle)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);

	ck_assert_int_eq(cohort_rw_write_lock(l, 1, NULL), 0);
	ck_assert(!cohort_rw_is_idle(l));
	cohort_rw_write_unlock(l, 1);
	ck_assert_int_eq(cohort_rw_read_lock(l, 1, NULL), 0);
	ck_assert(!cohort_rw_is_idle(l));
	cohort_rw_read_unlock(l, 1);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(every_node_index_takes_and_releases_both_modes)
{
	unsigned nnodes = (unsigned)_i;
	struct cohort_rw *l = lock_new(nnodes, COHORT_DEFAULT_HANDOFF_BOUND);

	for (unsigned n = 0; n < nnodes; n++) {
		ck_assert_int_eq(cohort_rw_write_lock(l, n, NULL), 0);
		ck_assert_int_eq(global_owner(l), (int)n);
		ck_assert(!cohort_rw_read_trylock(l, (n + 1) % nnodes));
		cohort_rw_write_unlock(l, n);
		ck_assert(cohort_rw_is_idle(l));
		ck_assert(cohort_rw_write_trylock(l, n));
		cohort_rw_write_unlock(l, n);
		ck_assert_int_eq(cohort_rw_read_lock(l, n, NULL), 0);
		ck_assert(!cohort_rw_write_trylock(l, (n + 1) % nnodes));
		cohort_rw_read_unlock(l, n);
		ck_assert(cohort_rw_is_idle(l));
	}
	free(l);
}
END_TEST

/* --------------------------------------------------------------- trylocks */

START_TEST(read_trylock_fails_while_writer_holds)
{
	size_t size = cohort_rw_size(2);
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	void *before = malloc(size);

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	memcpy(before, l, size);
	ck_assert(!cohort_rw_read_trylock(l, 0));
	ck_assert(!cohort_rw_read_trylock(l, 1));
	ck_assert(memcmp(before, l, size) == 0); /* no arrival was made */
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert(cohort_rw_read_trylock(l, 1));
	cohort_rw_read_unlock(l, 1);
	free(before);
	free(l);
}
END_TEST

START_TEST(write_trylock_fails_with_reader_inside_and_leaves_lock_unchanged)
{
	size_t size = cohort_rw_size(2);
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	void *before = malloc(size);

	ck_assert_int_eq(cohort_rw_read_lock(l, 1, NULL), 0);
	memcpy(before, l, size);
	ck_assert(!cohort_rw_write_trylock(l, 0));
	ck_assert(!cohort_rw_write_trylock(l, 1));
	ck_assert(memcmp(before, l, size) == 0); /* nothing disturbed */
	/* The reader is still fully in: another reader joins it freely. */
	ck_assert(cohort_rw_read_trylock(l, 0));
	cohort_rw_read_unlock(l, 0);
	cohort_rw_read_unlock(l, 1);
	ck_assert(cohort_rw_is_idle(l));
	free(before);
	free(l);
}
END_TEST

START_TEST(write_trylock_fails_while_writer_of_same_node_holds)
{
	size_t size = cohort_rw_size(2);
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	void *before = malloc(size);

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	memcpy(before, l, size);
	ck_assert(!cohort_rw_write_trylock(l, 0));
	ck_assert(memcmp(before, l, size) == 0);
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	free(before);
	free(l);
}
END_TEST

START_TEST(write_trylock_fails_while_writer_of_other_node_holds)
{
	size_t size = cohort_rw_size(2);
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	void *before = malloc(size);

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	memcpy(before, l, size);
	ck_assert(!cohort_rw_write_trylock(l, 1));
	ck_assert(memcmp(before, l, size) == 0);
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert(cohort_rw_write_trylock(l, 1));
	cohort_rw_write_unlock(l, 1);
	free(before);
	free(l);
}
END_TEST

START_TEST(write_trylock_succeeds_once_last_reader_leaves)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);
	ck_assert_int_eq(cohort_rw_read_lock(l, 1, NULL), 0);
	cohort_rw_read_unlock(l, 0);
	ck_assert(!cohort_rw_write_trylock(l, 0));
	cohort_rw_read_unlock(l, 1);
	ck_assert(cohort_rw_write_trylock(l, 0));
	ck_assert(!cohort_rw_read_trylock(l, 1));
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

/* ------------------------------------------------------- writer preference */

/*
 * The last reader's departure counted without its wake (what a thread
 * interrupted by a signal handler between the two leaves, while the
 * handler waits behind the writer): the writer still enters, by its own
 * re-check (wait_park_polled).
 */
START_TEST(writer_enters_when_the_last_departure_wake_never_comes)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w;

	ck_assert_int_eq(cohort_rw_read_lock(l, 1, NULL), 0);
	actor_start(&w, l, 0, ACT_WRITE, 0, true);
	WAIT_UNTIL(atomic_load(&l->node[1].ri.egress) & COHORT_WPARK);
	atomic_fetch_add_explicit(&l->node[1].ri.egress, COHORT_RI_INC, memory_order_release);
	WAIT_UNTIL(entered(&w));
	ck_assert_uint_eq(readers_present(l, 1), 0);
	actor_finish(&w);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(writer_waits_for_readers_on_every_node)
{
	struct cohort_rw *l = lock_new(3, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w;

	for (unsigned n = 0; n < 3; n++)
		ck_assert_int_eq(cohort_rw_read_lock(l, n, NULL), 0);
	actor_start(&w, l, 1, ACT_WRITE, 0, true);
	WAIT_UNTIL(writer_active(l));
	for (unsigned n = 0; n < 3; n++) {
		usleep(10000);
		ck_assert(!entered(&w));
		cohort_rw_read_unlock(l, (n + 2) % 3);
	}
	WAIT_UNTIL(entered(&w));
	for (unsigned n = 0; n < 3; n++)
		ck_assert_uint_eq(readers_present(l, n), 0);
	actor_finish(&w);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(read_trylock_fails_while_writer_waits_for_readers)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w;

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);
	actor_start(&w, l, 1, ACT_WRITE, 0, false);
	WAIT_UNTIL(writer_active(l));
	ck_assert(!cohort_rw_read_trylock(l, 0));
	ck_assert(!cohort_rw_read_trylock(l, 1));
	ck_assert_uint_eq(readers_present(l, 0), 1);
	ck_assert_uint_eq(readers_present(l, 1), 0);
	ck_assert(!entered(&w));
	cohort_rw_read_unlock(l, 0);
	actor_finish(&w);
	ck_assert_int_eq(w.result, 0);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(reader_arriving_while_writer_waits_enters_after_it)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w, r2;

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0); /* R1 */
	actor_start(&w, l, 1, ACT_WRITE, 0, true);
	WAIT_UNTIL(writer_active(l));
	actor_start(&r2, l, 0, ACT_READ, 0, true);            /* arrives behind W */
	WAIT_UNTIL(reader_parked(l));
	cohort_rw_read_unlock(l, 0);
	WAIT_UNTIL(entered(&w) || entered(&r2));
	ck_assert_msg(entered(&w) && !entered(&r2),
		      "a reader that arrived behind a waiting writer overtook it");
	usleep(10000);
	ck_assert(!entered(&r2));
	actor_finish(&w);
	WAIT_UNTIL(entered(&r2));
	ck_assert_uint_lt(w.order, r2.order);
	actor_finish(&r2);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(readers_parked_behind_writer_all_enter_when_it_leaves)
{
	enum { NR = 4 };
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor r[NR];

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	for (int i = 0; i < NR; i++)
		actor_start(&r[i], l, (unsigned)i % 2, ACT_READ, 0, true);
	WAIT_UNTIL(reader_parked(l));
	usleep(10000);
	cohort_rw_write_unlock(l, 0);
	/* All of them hold the lock at once. */
	for (int i = 0; i < NR; i++)
		WAIT_UNTIL(entered(&r[i]));
	ck_assert_uint_eq(readers_present(l, 0) + readers_present(l, 1), NR);
	for (int i = 0; i < NR; i++)
		actor_finish(&r[i]);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(readers_stay_out_across_local_handoff)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w2, r;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);  /* W1 */
	actor_start(&w2, l, 0, ACT_WRITE, 0, true);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	actor_start(&r, l, 1, ACT_READ, 0, true);
	WAIT_UNTIL(reader_parked(l));
	cohort_rw_write_unlock(l, 0);                           /* hands off to W2 */
	WAIT_UNTIL(entered(&w2));
	ck_assert(writer_active(l));
	usleep(10000);
	ck_assert_msg(!entered(&r), "a reader slipped in at a local hand-off");
	ck_assert(!cohort_rw_read_trylock(l, 1));
	actor_finish(&w2);
	WAIT_UNTIL(entered(&r));
	actor_finish(&r);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

/* -------------------------------------------------------------- migration */

struct locker_arg {
	struct cohort_rw *l;
	unsigned node;
	int kind;
};

static void *lock_and_exit(void *arg)
{
	struct locker_arg *a = arg;

	if (a->kind == ACT_READ)
		ck_assert_int_eq(cohort_rw_read_lock(a->l, a->node, NULL), 0);
	else
		ck_assert_int_eq(cohort_rw_write_lock(a->l, a->node, NULL), 0);
	return NULL;
}

START_TEST(read_unlock_elsewhere_with_the_lock_node_balances_the_indicator)
{
	/* Locked with node 1 on one thread, unlocked with node 1 on another. */
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct locker_arg a = { .l = l, .node = 1, .kind = ACT_READ };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, lock_and_exit, &a), 0);
	pthread_join(t, NULL);
	ck_assert_uint_eq(readers_present(l, 1), 1);
	ck_assert(!cohort_rw_write_trylock(l, 0));
	cohort_rw_read_unlock(l, 1);
	ck_assert_uint_eq(readers_present(l, 0), 0);
	ck_assert_uint_eq(readers_present(l, 1), 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert(cohort_rw_write_trylock(l, 0));
	cohort_rw_write_unlock(l, 0);
	free(l);
}
END_TEST

START_TEST(write_unlock_elsewhere_with_the_lock_node_releases_the_cohort)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct locker_arg a = { .l = l, .node = 1, .kind = ACT_WRITE };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, lock_and_exit, &a), 0);
	pthread_join(t, NULL);
	ck_assert(local_locked(l, 1));
	cohort_rw_write_unlock(l, 1);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);
	cohort_rw_read_unlock(l, 0);
	free(l);
}
END_TEST

/* ------------------------------------------------------------ cohort mutex */

START_TEST(release_with_local_waiter_hands_off_without_freeing_global)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w2;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	actor_start(&w2, l, 0, ACT_WRITE, 0, true);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	ck_assert_uint_eq(handoffs(l), 0);
	cohort_rw_write_unlock(l, 0);
	WAIT_UNTIL(entered(&w2));
	ck_assert_uint_eq(handoffs(l), 1);
	ck_assert_int_eq(global_owner(l), 0);
	actor_finish(&w2);
	ck_assert_uint_eq(handoffs(l), 1);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(release_without_local_waiter_frees_global)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	ck_assert_int_eq(global_owner(l), 0);
	cohort_rw_write_unlock(l, 0);
	ck_assert_int_eq(global_owner(l), -1);
	ck_assert(!writer_active(l));
	ck_assert_uint_eq(handoffs(l), 0);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(handoff_bound_zero_never_hands_off)
{
	struct cohort_rw *l = lock_new(2, 0);
	struct actor w2;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	actor_start(&w2, l, 0, ACT_WRITE, 0, true);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	cohort_rw_write_unlock(l, 0);
	WAIT_UNTIL(entered(&w2));
	ck_assert_uint_eq(handoffs(l), 0);
	actor_finish(&w2);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(handoffs_stop_after_bound_in_a_row)
{
	/* Bound 2, three writers of node 0 queued: two hand-offs, then a global release. */
	enum { NW = 3, BOUND = 2 };
	struct cohort_rw *l = lock_new(2, BOUND);
	struct actor w[NW];
	bool finished[NW] = { false };

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	for (int i = 0; i < NW; i++)
		actor_start(&w[i], l, 0, ACT_WRITE, 0, true);
	WAIT_UNTIL(local_waiters(l, 0) == NW);
	cohort_rw_write_unlock(l, 0);
	for (int k = 0; k < NW; k++) {
		int in = -1;

		while (in < 0) {
			for (int i = 0; i < NW; i++)
				if (!finished[i] && entered(&w[i]))
					in = i;
			usleep(100);
		}
		/* The k-th successor got in by hand-off while k < BOUND. */
		ck_assert_uint_eq(handoffs(l), (uint64_t)(k < BOUND ? k + 1 : BOUND));
		actor_finish(&w[in]);
		finished[in] = true;
	}
	ck_assert_uint_eq(handoffs(l), BOUND);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

/*
 * Writers of node 0 re-acquire continuously, each holding the lock until
 * another writer of node 0 is counted on the local lock (so that every
 * release could hand off).  Each node-0 critical section that runs while
 * the node-1 writer waits for the global lock is charged to that writer's
 * wait; the cohort bound allows handoff_bound + 1 (the rest of the tenure
 * under way when it started waiting).
 */
enum { BOUND_NODE0_WRITERS = 3, BOUND_B = 4, BOUND_ROUNDS = 100 };

struct bound_run {
	struct cohort_rw *l;
	atomic_bool stop;
	atomic_uint ahead;       /* node-0 entries while node 1 waits */
	atomic_ulong node0_entries;
	atomic_uint inside;
	atomic_uint violations;
};

static void *bound_node0_writer(void *arg)
{
	struct bound_run *b = arg;

	while (!atomic_load(&b->stop)) {
		ck_assert_int_eq(cohort_rw_write_lock(b->l, 0, NULL), 0);
		if (atomic_fetch_add(&b->inside, 1) != 0)
			atomic_fetch_add(&b->violations, 1);
		if (waits_for_global(b->l, 1))
			atomic_fetch_add(&b->ahead, 1);
		atomic_fetch_add(&b->node0_entries, 1);
		while (local_waiters(b->l, 0) == 0 && !atomic_load(&b->stop))
			sched_yield();
		atomic_fetch_sub(&b->inside, 1);
		cohort_rw_write_unlock(b->l, 0);
	}
	return NULL;
}

START_TEST(remote_writer_waits_at_most_bound_plus_one_local_acquisitions)
{
	struct bound_run b = { .l = lock_new(2, BOUND_B) };
	pthread_t t[BOUND_NODE0_WRITERS];
	unsigned worst = 0;
	struct timespec ts;
	struct deadline dl = { .abstime = &ts, .clock = CLOCK_MONOTONIC };

	for (int i = 0; i < BOUND_NODE0_WRITERS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, bound_node0_writer, &b), 0);
	for (int round = 0; round < BOUND_ROUNDS; round++) {
		unsigned long seen = atomic_load(&b.node0_entries);

		/* Arrive in the middle of a node-0 tenure, at varying points. */
		WAIT_UNTIL(atomic_load(&b.node0_entries) >= seen + 1 + (unsigned)round % 7);
		ts = ts_from_now(CLOCK_MONOTONIC, 10000000);
		ck_assert_msg(cohort_rw_write_lock(b.l, 1, &dl) == 0,
			      "node 1 starved by node 0's writers (round %d)", round);
		if (atomic_fetch_add(&b.inside, 1) != 0)
			atomic_fetch_add(&b.violations, 1);
		if (atomic_load(&b.ahead) > worst)
			worst = atomic_load(&b.ahead);
		atomic_store(&b.ahead, 0);
		atomic_fetch_sub(&b.inside, 1);
		cohort_rw_write_unlock(b.l, 1);
	}
	atomic_store(&b.stop, true);
	for (int i = 0; i < BOUND_NODE0_WRITERS; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(atomic_load(&b.violations), 0);
	ck_assert_msg(worst <= BOUND_B + 1, "node 1 waited for %u node-0 entries (bound %d)",
		      worst, BOUND_B + 1);
	ck_assert_uint_gt(handoffs(b.l), 0);
	ck_assert(cohort_rw_is_idle(b.l));
	free(b.l);
}
END_TEST

START_TEST(global_lock_goes_round_robin_among_waiting_nodes)
{
	/* Node 1 holds; nodes 0 and 2 wait: node 2 is next after 1, then 0. */
	struct cohort_rw *l = lock_new(3, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w0, w2;

	ck_assert_int_eq(cohort_rw_write_lock(l, 1, NULL), 0);
	actor_start(&w0, l, 0, ACT_WRITE, 0, true);
	WAIT_UNTIL(waits_for_global(l, 0));
	actor_start(&w2, l, 2, ACT_WRITE, 0, true);
	WAIT_UNTIL(waits_for_global(l, 2));
	cohort_rw_write_unlock(l, 1);
	ck_assert_int_eq(global_owner(l), 2);
	WAIT_UNTIL(entered(&w2));
	ck_assert(!entered(&w0));
	actor_finish(&w2);
	ck_assert_int_eq(global_owner(l), 0);
	WAIT_UNTIL(entered(&w0));
	actor_finish(&w0);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

/* ------------------------------------------------------------ timed locks */

START_TEST(timed_read_lock_times_out_while_writer_holds)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct timespec ts = ts_from_now(clocks[_i], 20000);
	struct deadline dl = { .abstime = &ts, .clock = clocks[_i] };

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	ck_assert_int_eq(cohort_rw_read_lock(l, 1, &dl), ETIMEDOUT);
	ck_assert(deadline_passed(&dl));
	ck_assert_uint_eq(readers_present(l, 1), 0);
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert_int_eq(cohort_rw_read_lock(l, 1, &dl), 0); /* free: no waiting, no time-out */
	cohort_rw_read_unlock(l, 1);
	free(l);
}
END_TEST

START_TEST(timed_locks_at_past_deadline_succeed_on_free_lock)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct timespec ts = ts_from_now(clocks[_i], -1000000);
	struct deadline dl = { .abstime = &ts, .clock = clocks[_i] };

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, &dl), 0);
	cohort_rw_read_unlock(l, 0);
	ck_assert_int_eq(cohort_rw_write_lock(l, 1, &dl), 0);
	cohort_rw_write_unlock(l, 1);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(timed_write_lock_times_out_while_reader_holds)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct timespec ts = ts_from_now(clocks[_i], 20000);
	struct deadline dl = { .abstime = &ts, .clock = clocks[_i] };

	ck_assert_int_eq(cohort_rw_read_lock(l, 1, NULL), 0);
	ck_assert_int_eq(cohort_rw_write_lock(l, 0, &dl), ETIMEDOUT);
	ck_assert(deadline_passed(&dl));
	/* The writer is gone: readers enter freely, the cohort mutex is free. */
	ck_assert(!writer_active(l));
	ck_assert_int_eq(global_owner(l), -1);
	ck_assert(!local_locked(l, 0));
	ck_assert(cohort_rw_read_trylock(l, 0));
	cohort_rw_read_unlock(l, 0);
	cohort_rw_read_unlock(l, 1);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert(cohort_rw_write_trylock(l, 0));
	cohort_rw_write_unlock(l, 0);
	free(l);
}
END_TEST

START_TEST(timed_write_lock_times_out_behind_writer_of_same_node)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	actor_start_on(&w, l, 0, ACT_WRITE, 20000, clocks[_i], false);  /* waits on the local lock */
	actor_finish(&w);
	ck_assert_int_eq(w.result, ETIMEDOUT);
	ck_assert_uint_eq(local_waiters(l, 0), 0);
	/* Nobody to hand off to: the release frees the global lock. */
	cohort_rw_write_unlock(l, 0);
	ck_assert_uint_eq(handoffs(l), 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert_int_eq(cohort_rw_write_lock(l, 1, NULL), 0);
	cohort_rw_write_unlock(l, 1);
	free(l);
}
END_TEST

START_TEST(timed_write_lock_times_out_behind_writer_of_other_node)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	actor_start_on(&w, l, 1, ACT_WRITE, 20000, clocks[_i], false); /* waits for the global lock */
	actor_finish(&w);
	ck_assert_int_eq(w.result, ETIMEDOUT);
	ck_assert(!waits_for_global(l, 1));
	ck_assert(!local_locked(l, 1));
	/* Nobody to grant to: the release frees the global lock. */
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert_int_eq(cohort_rw_write_lock(l, 1, NULL), 0);
	cohort_rw_write_unlock(l, 1);
	free(l);
}
END_TEST

START_TEST(timed_out_writer_lets_readers_parked_behind_it_in)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w, r2;

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);  /* R1 holds */
	actor_start(&w, l, 1, ACT_WRITE, 200000, false);       /* W waits for R1 */
	WAIT_UNTIL(writer_active(l) || done(&w));
	ck_assert(!done(&w));
	actor_start(&r2, l, 1, ACT_READ, 0, true);             /* R2 parks behind W */
	WAIT_UNTIL(reader_parked(l) || entered(&r2));
	/* W times out; R2 must then get in while R1 still holds. */
	pthread_join(w.thread, NULL);
	ck_assert_int_eq(w.result, ETIMEDOUT);
	WAIT_UNTIL(entered(&r2));
	ck_assert_uint_eq(readers_present(l, 0) + readers_present(l, 1), 2);
	actor_finish(&r2);
	cohort_rw_read_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(timed_out_draining_writer_grants_global_to_waiting_node)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w1, w2;

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);  /* R holds */
	actor_start(&w1, l, 0, ACT_WRITE, 200000, false);      /* W1 waits for R */
	WAIT_UNTIL(writer_active(l) || done(&w1));
	ck_assert(!done(&w1));
	actor_start(&w2, l, 1, ACT_WRITE, 0, true);            /* W2 waits for W1 */
	WAIT_UNTIL(waits_for_global(l, 1));
	pthread_join(w1.thread, NULL);
	ck_assert_int_eq(w1.result, ETIMEDOUT);
	/* W2 now owns the global lock, readers stay out, and it waits for R. */
	WAIT_UNTIL(global_owner(l) == 1);
	ck_assert(writer_active(l));
	ck_assert(!local_locked(l, 0));
	usleep(10000);
	ck_assert(!entered(&w2));
	cohort_rw_read_unlock(l, 0);
	WAIT_UNTIL(entered(&w2));
	actor_finish(&w2);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(local_waiter_handed_the_lock_after_its_deadline_keeps_it)
{
	/*
	 * W2 is counted on node 0's local lock and frozen there; its deadline
	 * passes.  W1 releases and, W2 being counted, hands it the cohort
	 * mutex.  W2 must not walk away from it: it gets in (late success).
	 */
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w2;

	install_freeze_handler();
	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);          /* W1 */
	actor_start(&w2, l, 0, ACT_WRITE, 60000000, false);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	freeze_past_deadline(&w2);
	cohort_rw_write_unlock(l, 0);
	ck_assert(local_passed(l, 0));
	ck_assert_int_eq(global_owner(l), 0);
	atomic_store(&thaw, true);
	pthread_join(w2.thread, NULL);
	ck_assert_int_eq(w2.result, 0);
	ck_assert_uint_eq(handoffs(l), 1);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(global_waiter_granted_the_lock_after_its_deadline_keeps_it)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w2;

	install_freeze_handler();
	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);          /* W1 */
	actor_start(&w2, l, 1, ACT_WRITE, 60000000, false);
	WAIT_UNTIL(waits_for_global(l, 1));
	freeze_past_deadline(&w2);
	cohort_rw_write_unlock(l, 0);
	ck_assert_int_eq(global_owner(l), 1);    /* granted to node 1 */
	ck_assert(writer_active(l));             /* being handed over: readers stay out */
	atomic_store(&thaw, true);
	pthread_join(w2.thread, NULL);
	ck_assert_int_eq(w2.result, 0);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(timed_out_local_waiter_does_not_strand_a_later_one)
{
	/* W2 (timed) and W3 wait on node 0's local lock; W2 gives up; W3 gets in. */
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w2, w3;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	actor_start(&w3, l, 0, ACT_WRITE, 0, true);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	actor_start(&w2, l, 0, ACT_WRITE, 50000, false);
	pthread_join(w2.thread, NULL);
	ck_assert_int_eq(w2.result, ETIMEDOUT);
	ck_assert_uint_eq(local_waiters(l, 0), 1);
	cohort_rw_write_unlock(l, 0);
	WAIT_UNTIL(entered(&w3));
	actor_finish(&w3);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

/*
 * A timed writer waits behind a writer of node 0 (on the local lock when it
 * is of node 0, for the global lock when it is of node 1), and the holder
 * releases at a point swept across the waiter's deadline, so that over the
 * runs some hand-offs or grants land while the waiter is giving up.
 * Whatever the waiter returns, nothing may be left held afterwards.
 */
enum { RACE_RUNS = 5000, RACE_DEADLINE_US = 150 };

static bool waiter_counted(struct cohort_rw *l, unsigned node)
{
	return node == 0 ? local_waiters(l, 0) == 1 : waits_for_global(l, node);
}

static void after_deadline(const struct timespec *abstime, long offset_us)
{
	struct timespec at = ts_add_us(*abstime, offset_us), now;

	do {
		cpu_relax();
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < at.tv_sec || (now.tv_sec == at.tv_sec && now.tv_nsec < at.tv_nsec));
}

static void race_release_against_deadline(unsigned waiter_node)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	unsigned got = 0, timed_out = 0;
	char where[256];

	for (int i = 0; i < RACE_RUNS; i++) {
		struct actor w;

		ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
		actor_start(&w, l, waiter_node, ACT_WRITE, RACE_DEADLINE_US, false);
		while (!waiter_counted(l, waiter_node) && !done(&w))
			cpu_relax();
		after_deadline(&w.abstime, (long)(i % 120) - 40);
		cohort_rw_write_unlock(l, 0);
		pthread_join(w.thread, NULL);
		if (w.result == 0)
			got++;
		else
			timed_out++;
		if (!cohort_rw_is_idle(l)) {
			snprintf(where, sizeof(where),
				 "run %d (waiter returned %d): wstate=%#x gstate=%#llx lstate=%#x/%#x",
				 i, w.result, atomic_load(&l->central.wstate),
				 (unsigned long long)atomic_load(&l->global.gstate),
				 atomic_load(&l->node[0].local.lstate),
				 atomic_load(&l->node[1].local.lstate));
			ck_abort_msg("lock left held: %s", where);
		}
	}
	ck_assert_uint_eq(got + timed_out, RACE_RUNS);
	free(l);
}

START_TEST(local_waiter_timing_out_as_it_is_handed_the_lock_leaves_nothing_held)
{
	race_release_against_deadline(0);
}
END_TEST

START_TEST(global_waiter_timing_out_as_it_is_granted_the_lock_leaves_nothing_held)
{
	race_release_against_deadline(1);
}
END_TEST

/* ------------------------------- readers present (a release by another thread) */

START_TEST(readers_present_counts_each_nodes_readers)
{
	struct cohort_rw *l = lock_new(3, COHORT_DEFAULT_HANDOFF_BOUND);

	ck_assert_uint_eq(cohort_rw_readers_present(l, 0), 0);
	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);
	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);
	ck_assert_int_eq(cohort_rw_read_lock(l, 2, NULL), 0);
	ck_assert_uint_eq(cohort_rw_readers_present(l, 0), 2);
	ck_assert_uint_eq(cohort_rw_readers_present(l, 1), 0);
	ck_assert_uint_eq(cohort_rw_readers_present(l, 2), 1);
	cohort_rw_read_unlock(l, 0);
	cohort_rw_read_unlock(l, 2);
	ck_assert_uint_eq(cohort_rw_readers_present(l, 0), 1);
	ck_assert_uint_eq(cohort_rw_readers_present(l, 2), 0);
	cohort_rw_read_unlock(l, 0);
	ck_assert_uint_eq(cohort_rw_readers_present(l, 0), 0);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

START_TEST(readers_present_is_zero_on_every_node_while_a_writer_holds)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor r;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	/* A reader waiting behind the writer is not present. */
	actor_start(&r, l, 1, ACT_READ, 0, false);
	WAIT_UNTIL(reader_parked(l));
	ck_assert_uint_eq(cohort_rw_readers_present(l, 0), 0);
	ck_assert_uint_eq(cohort_rw_readers_present(l, 1), 0);
	cohort_rw_write_unlock(l, 0);
	actor_finish(&r);
	ck_assert_int_eq(r.result, 0);
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

static void *read_lock_and_leave(void *arg)
{
	ck_assert_int_eq(cohort_rw_read_lock(arg, 1, NULL), 0);
	return NULL; /* holds it: another thread will release it */
}

/* What variant_read_release_other does: release one hold found on some node. */
static bool release_one_reader(struct cohort_rw *l)
{
	for (unsigned n = 0; n < l->global.nnodes; n++) {
		if (cohort_rw_readers_present(l, n)) {
			cohort_rw_read_unlock(l, n);
			return true;
		}
	}
	return false;
}

START_TEST(read_hold_released_by_another_thread_lets_a_draining_writer_in)
{
	struct cohort_rw *l = lock_new(2, COHORT_DEFAULT_HANDOFF_BOUND);
	struct actor w;
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, read_lock_and_leave, l), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_eq(cohort_rw_readers_present(l, 1), 1);
	actor_start(&w, l, 0, ACT_WRITE, 0, true);
	WAIT_UNTIL(writer_active(l));
	ck_assert(!entered(&w));
	ck_assert(release_one_reader(l));
	WAIT_UNTIL(entered(&w));
	/* Write-held: no read hold to release. */
	ck_assert(!release_one_reader(l));
	actor_finish(&w);
	ck_assert(!release_one_reader(l));
	ck_assert(cohort_rw_is_idle(l));
	free(l);
}
END_TEST

/* ---------------------------------------------------------------- stress */

/*
 * Invariants in ck's style: a writer moves `plain` from 0 to 1 and back with
 * separate loads and stores (a second writer inside would see 1, or its
 * update would be lost); readers must never see a writer inside or `plain`
 * away from 0; writers must never see a reader inside.  Every acquisition
 * picks a node at random, as a thread that migrates would.  Violations are
 * counted by the threads and asserted by the test thread after the join.
 */
enum stress_timing {
	UNTIMED,        /* blocking and trylock operations only */
	TIMED_ALL,      /* some read and write locks have deadlines */
};

struct stress {
	struct cohort_rw *l;
	unsigned nnodes;
	int ops;
	int timed; /* enum stress_timing */
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

	pthread_barrier_wait(&s->start); /* all threads contend from the start */
	for (int n = 0; n < s->ops; n++) {
		unsigned x = xorshift(&st->seed);
		unsigned op = x % 100;
		unsigned node = (x >> 12) % s->nnodes;
		struct timespec ts;
		struct deadline dl = { .abstime = NULL, .clock = clocks[(x >> 8) & 1] };
		int r;

		if (s->timed != UNTIMED && (op % 10) >= 7) {
			/* 30%: a short deadline, sometimes already past. */
			ts = ts_from_now(dl.clock, (long)((x >> 9) % 300) - 20);
			dl.abstime = &ts;
		}
		if (op < 50) {
			r = cohort_rw_read_lock(s->l, node, &dl);
			if (r == ETIMEDOUT) {
				st->timeouts++;
				continue;
			}
			if (r != 0)
				violation(&s->inv, "read lock returned an error");
			invariant_read_section(&s->inv, x);
			st->reads++;
			cohort_rw_read_unlock(s->l, node);
		} else if (op < 62) {
			if (!cohort_rw_read_trylock(s->l, node))
				continue;
			invariant_read_section(&s->inv, x);
			st->reads++;
			cohort_rw_read_unlock(s->l, node);
		} else if (op < 90) {
			r = cohort_rw_write_lock(s->l, node, &dl);
			if (r == ETIMEDOUT) {
				st->timeouts++;
				continue;
			}
			if (r != 0)
				violation(&s->inv, "write lock returned an error");
			invariant_write_section(&s->inv, x);
			st->writes++;
			cohort_rw_write_unlock(s->l, node);
		} else {
			if (!cohort_rw_write_trylock(s->l, node))
				continue;
			invariant_write_section(&s->inv, x);
			st->writes++;
			cohort_rw_write_unlock(s->l, node);
		}
	}
	return NULL;
}

/* A stress run that is not done after this long is stuck: say where. */
#define STRESS_STUCK_SECONDS 20

static void stress_report_stuck(struct stress *s, char *buf, size_t len)
{
	struct cohort_rw *l = s->l;
	int n = snprintf(buf, len, "wstate=%#x gstate=%#llx",
			 atomic_load(&l->central.wstate),
			 (unsigned long long)atomic_load(&l->global.gstate));

	for (unsigned i = 0; i < s->nnodes && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, " [%u: lstate=%#x in=%#x out=%#x]", i,
			      atomic_load(&l->node[i].local.lstate),
			      atomic_load(&l->node[i].ri.ingress),
			      atomic_load(&l->node[i].ri.egress));
}

static void run_stress(int threads, int ops, enum stress_timing timed, unsigned nnodes,
		       unsigned bound)
{
	static struct stress s;
	struct stress_thread *st = calloc((size_t)threads, sizeof(*st));
	unsigned long reads = 0, writes = 0, timeouts = 0;
	struct timespec stuck = ts_from_now(CLOCK_REALTIME, STRESS_STUCK_SECONDS * 1000000L);
	char where[512];

	ck_assert_ptr_nonnull(st);
	memset(&s, 0, sizeof(s));
	s.l = lock_new(nnodes, bound);
	s.nnodes = nnodes;
	s.ops = ops;
	s.timed = timed;
	pthread_barrier_init(&s.start, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++) {
		st[i].s = &s;
		st[i].seed = 0x9e3779b9u * (unsigned)(i + 1) | 1;
		ck_assert_int_eq(pthread_create(&st[i].thread, NULL, stress_main, &st[i]), 0);
	}
	for (int i = 0; i < threads; i++) {
		if (pthread_timedjoin_np(st[i].thread, NULL, &stuck) != 0) {
			stress_report_stuck(&s, where, sizeof(where));
			ck_abort_msg("stuck after %d s: %s", STRESS_STUCK_SECONDS, where);
		}
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
	if (timed != UNTIMED)
		ck_assert_uint_gt(timeouts, 0);
	ck_assert(cohort_rw_is_idle(s.l));
	free(s.l);
}

/* Run this (forked) test process on at most two CPUs. */
static void confine_to_two_cpus(void)
{
	cpu_set_t all, two;
	int kept = 0;

	ck_assert_int_eq(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&two);
	for (int c = 0; c < CPU_SETSIZE && kept < 2; c++) {
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &two);
			kept++;
		}
	}
	ck_assert_int_eq(sched_setaffinity(0, sizeof(two), &two), 0);
}

START_TEST(mixed_ops_on_two_nodes_keep_mutual_exclusion)
{
	run_stress(6, 20000, UNTIMED, 2, COHORT_DEFAULT_HANDOFF_BOUND);
}
END_TEST

START_TEST(mixed_ops_with_deadlines_keep_mutual_exclusion)
{
	run_stress(6, 20000, TIMED_ALL, 2, COHORT_DEFAULT_HANDOFF_BOUND);
}
END_TEST

START_TEST(mixed_ops_with_short_handoff_bound_keep_mutual_exclusion)
{
	run_stress(6, 20000, TIMED_ALL, 3, 2);
}
END_TEST

START_TEST(mixed_ops_keep_mutual_exclusion_with_one_to_four_nodes)
{
	run_stress(6, 10000, TIMED_ALL, (unsigned)_i, COHORT_DEFAULT_HANDOFF_BOUND);
}
END_TEST

START_TEST(sixteen_threads_on_two_cpus_make_progress)
{
	confine_to_two_cpus();
	run_stress(16, 5000, UNTIMED, 2, COHORT_DEFAULT_HANDOFF_BOUND);
}
END_TEST

START_TEST(sixteen_threads_with_deadlines_on_two_cpus_make_progress)
{
	confine_to_two_cpus();
	run_stress(16, 5000, TIMED_ALL, 4, 4);
}
END_TEST

/* ----------------------------------------------------------------- suite */

static Suite *cohort_suite(void)
{
	Suite *s = suite_create("cohort");
	TCase *tc;

	tc = tcase_create("state");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, size_is_two_sectors_plus_two_per_node);
	tcase_add_loop_test(tc, init_makes_any_bytes_an_idle_lock, 1, 5);
	tcase_add_test(tc, readers_on_every_node_share_the_lock);
	tcase_add_test(tc, held_lock_is_not_idle);
	tcase_add_loop_test(tc, every_node_index_takes_and_releases_both_modes, 1, 5);
	suite_add_tcase(s, tc);

	tc = tcase_create("readers_present");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, readers_present_counts_each_nodes_readers);
	tcase_add_test(tc, readers_present_is_zero_on_every_node_while_a_writer_holds);
	tcase_add_test(tc, read_hold_released_by_another_thread_lets_a_draining_writer_in);
	suite_add_tcase(s, tc);

	tc = tcase_create("trylock");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, read_trylock_fails_while_writer_holds);
	tcase_add_test(tc, write_trylock_fails_with_reader_inside_and_leaves_lock_unchanged);
	tcase_add_test(tc, write_trylock_fails_while_writer_of_same_node_holds);
	tcase_add_test(tc, write_trylock_fails_while_writer_of_other_node_holds);
	tcase_add_test(tc, write_trylock_succeeds_once_last_reader_leaves);
	suite_add_tcase(s, tc);

	tc = tcase_create("writer_preference");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, writer_waits_for_readers_on_every_node);
	tcase_add_test(tc, writer_enters_when_the_last_departure_wake_never_comes);
	tcase_add_test(tc, read_trylock_fails_while_writer_waits_for_readers);
	tcase_add_test(tc, reader_arriving_while_writer_waits_enters_after_it);
	tcase_add_test(tc, readers_parked_behind_writer_all_enter_when_it_leaves);
	tcase_add_test(tc, readers_stay_out_across_local_handoff);
	suite_add_tcase(s, tc);

	tc = tcase_create("migration");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, read_unlock_elsewhere_with_the_lock_node_balances_the_indicator);
	tcase_add_test(tc, write_unlock_elsewhere_with_the_lock_node_releases_the_cohort);
	suite_add_tcase(s, tc);

	tc = tcase_create("cohort");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, release_with_local_waiter_hands_off_without_freeing_global);
	tcase_add_test(tc, release_without_local_waiter_frees_global);
	tcase_add_test(tc, handoff_bound_zero_never_hands_off);
	tcase_add_test(tc, handoffs_stop_after_bound_in_a_row);
	tcase_add_test(tc, remote_writer_waits_at_most_bound_plus_one_local_acquisitions);
	tcase_add_test(tc, global_lock_goes_round_robin_among_waiting_nodes);
	suite_add_tcase(s, tc);

	tc = tcase_create("timed");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_loop_test(tc, timed_read_lock_times_out_while_writer_holds, 0, 2);
	tcase_add_loop_test(tc, timed_locks_at_past_deadline_succeed_on_free_lock, 0, 2);
	tcase_add_loop_test(tc, timed_write_lock_times_out_while_reader_holds, 0, 2);
	tcase_add_loop_test(tc, timed_write_lock_times_out_behind_writer_of_same_node, 0, 2);
	tcase_add_loop_test(tc, timed_write_lock_times_out_behind_writer_of_other_node, 0, 2);
	tcase_add_test(tc, timed_out_writer_lets_readers_parked_behind_it_in);
	tcase_add_test(tc, timed_out_draining_writer_grants_global_to_waiting_node);
	tcase_add_test(tc, local_waiter_handed_the_lock_after_its_deadline_keeps_it);
	tcase_add_test(tc, global_waiter_granted_the_lock_after_its_deadline_keeps_it);
	tcase_add_test(tc, timed_out_local_waiter_does_not_strand_a_later_one);
	tcase_add_test(tc, local_waiter_timing_out_as_it_is_handed_the_lock_leaves_nothing_held);
	tcase_add_test(tc, global_waiter_timing_out_as_it_is_granted_the_lock_leaves_nothing_held);
	suite_add_tcase(s, tc);

	tc = tcase_create("stress");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, mixed_ops_on_two_nodes_keep_mutual_exclusion);
	tcase_add_test(tc, mixed_ops_with_deadlines_keep_mutual_exclusion);
	tcase_add_test(tc, mixed_ops_with_short_handoff_bound_keep_mutual_exclusion);
	tcase_add_loop_test(tc, mixed_ops_keep_mutual_exclusion_with_one_to_four_nodes, 1, 5);
	tcase_add_test(tc, sixteen_threads_on_two_cpus_make_progress);
	tcase_add_test(tc, sixteen_threads_with_deadlines_on_two_cpus_make_progress);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(cohort_suite());
}
