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
#include <sched.h>
#include <stddef.h>

#include "harness.h"
#include "../lib/check_run.h"
#include "../../locks/cohort.h"

#define TCASE_TIMEOUT 60

/* ---------------------------------------------------------------- helpers */

/*
 * The lock under test, l: room for the most nodes, made before each test
 * (a checked fixture) a lock of two nodes with the default hand-off bound,
 * on garbage-filled memory (cohort_rw_init must not rely on zeroes).
 */
static struct cohort_rw *l;

/* Make l a lock of nnodes nodes and hand-off bound bound, on garbage. */
static void lock_as(unsigned nnodes, unsigned bound)
{
	memset(l, 0xa5, cohort_rw_size(COHORT_MAX_NODES));
	cohort_rw_init(l, nnodes, bound);
}

/*
 * The CPUs the waiting policy counts (wait.h, wait_spin_pays), for this
 * (forked) test process.  It decides whether waiters spin and so whether a
 * releasing writer hands off to them (local_pass); the protocol's tests set
 * it, so that they do not depend on the machine's CPUs.
 */
static void policy_cpus(unsigned n)
{
	atomic_store(&wait_ncpus, n);
}

/* More than any test has threads: every waiter spins, every release with a waiter hands off. */
#define PLENTY_CPUS 64

static void lock_setup(void)
{
	l = aligned_alloc(COHORT_SECTOR, cohort_rw_size(COHORT_MAX_NODES));
	ck_assert_ptr_nonnull(l);
	lock_as(2, COHORT_DEFAULT_HANDOFF_BOUND);
	policy_cpus(PLENTY_CPUS);
}

static void lock_teardown(void)
{
	free(l);
}

/* A test case of s whose tests start with l as lock_setup() makes it. */
static TCase *lock_tcase(Suite *s, const char *name)
{
	return fixture_tcase(s, name, TCASE_TIMEOUT, lock_setup, lock_teardown);
}

/* The lock's calls, for the harness's actors and stress runs. */
static int take(struct acquisition *q, const struct deadline *dl)
{
	struct cohort_rw *l = q->lock;

	if (q->kind & ACT_TRY)
		return (q->kind & ACT_WRITE ? cohort_rw_write_trylock(l, q->node)
					    : cohort_rw_read_trylock(l, q->node)) ? 0 : EBUSY;
	return q->kind & ACT_WRITE ? cohort_rw_write_lock(l, q->node, dl)
				   : cohort_rw_read_lock(l, q->node, dl);
}

static void give_back(struct acquisition *q)
{
	(q->kind & ACT_WRITE ? cohort_rw_write_unlock : cohort_rw_read_unlock)(q->lock, q->node);
}

/* A copy of l's bytes, to see later that a call left them all as they were. */
static void *snapshot(struct cohort_rw *l)
{
	size_t size = cohort_rw_size(l->global.nnodes);
	void *copy = malloc(size);

	ck_assert_ptr_nonnull(copy);
	return memcpy(copy, l, size);
}

/* l's bytes are still those of the snapshot (which this frees). */
static bool unchanged_since(struct cohort_rw *l, void *copy)
{
	bool same = memcmp(copy, l, cohort_rw_size(l->global.nnodes)) == 0;

	free(copy);
	return same;
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

	lock_as(nnodes, COHORT_DEFAULT_HANDOFF_BOUND);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert(cohort_rw_write_trylock(l, nnodes - 1));
	cohort_rw_write_unlock(l, nnodes - 1);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(readers_on_every_node_share_the_lock)
{
	lock_as(4, COHORT_DEFAULT_HANDOFF_BOUND);
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
}
END_TEST

START_TEST(held_lock_is_not_idle)
{
	ck_assert_int_eq(cohort_rw_write_lock(l, 1, NULL), 0);
	ck_assert(!cohort_rw_is_idle(l));
	cohort_rw_write_unlock(l, 1);
	ck_assert_int_eq(cohort_rw_read_lock(l, 1, NULL), 0);
	ck_assert(!cohort_rw_is_idle(l));
	cohort_rw_read_unlock(l, 1);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(every_node_index_takes_and_releases_both_modes)
{
	unsigned nnodes = (unsigned)_i;

	lock_as(nnodes, COHORT_DEFAULT_HANDOFF_BOUND);
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
}
END_TEST

/* --------------------------------------------------------------- trylocks */

START_TEST(read_trylock_fails_while_writer_holds)
{
	void *before;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	before = snapshot(l);
	ck_assert(!cohort_rw_read_trylock(l, 0));
	ck_assert(!cohort_rw_read_trylock(l, 1));
	ck_assert(unchanged_since(l, before)); /* no arrival was made */
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert(cohort_rw_read_trylock(l, 1));
	cohort_rw_read_unlock(l, 1);
}
END_TEST

START_TEST(write_trylock_fails_with_reader_inside_and_leaves_lock_unchanged)
{
	void *before;

	ck_assert_int_eq(cohort_rw_read_lock(l, 1, NULL), 0);
	before = snapshot(l);
	ck_assert(!cohort_rw_write_trylock(l, 0));
	ck_assert(!cohort_rw_write_trylock(l, 1));
	ck_assert(unchanged_since(l, before)); /* nothing disturbed */
	/* The reader is still fully in: another reader joins it freely. */
	ck_assert(cohort_rw_read_trylock(l, 0));
	cohort_rw_read_unlock(l, 0);
	cohort_rw_read_unlock(l, 1);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(write_trylock_fails_while_writer_of_same_node_holds)
{
	void *before;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	before = snapshot(l);
	ck_assert(!cohort_rw_write_trylock(l, 0));
	ck_assert(unchanged_since(l, before));
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(write_trylock_fails_while_writer_of_other_node_holds)
{
	void *before;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	before = snapshot(l);
	ck_assert(!cohort_rw_write_trylock(l, 1));
	ck_assert(unchanged_since(l, before));
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert(cohort_rw_write_trylock(l, 1));
	cohort_rw_write_unlock(l, 1);
}
END_TEST

START_TEST(write_trylock_succeeds_once_last_reader_leaves)
{
	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);
	ck_assert_int_eq(cohort_rw_read_lock(l, 1, NULL), 0);
	cohort_rw_read_unlock(l, 0);
	ck_assert(!cohort_rw_write_trylock(l, 0));
	cohort_rw_read_unlock(l, 1);
	ck_assert(cohort_rw_write_trylock(l, 0));
	ck_assert(!cohort_rw_read_trylock(l, 1));
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
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
	struct actor w;

	ck_assert_int_eq(cohort_rw_read_lock(l, 1, NULL), 0);
	start_writer(&w, l, .holds = true);
	WAIT_UNTIL(atomic_load(&l->node[1].ri.egress) & COHORT_WPARK);
	atomic_fetch_add_explicit(&l->node[1].ri.egress, COHORT_RI_INC, memory_order_release);
	WAIT_UNTIL(entered(&w));
	ck_assert_uint_eq(readers_present(l, 1), 0);
	actor_finish(&w);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(writer_waits_for_readers_on_every_node)
{
	struct actor w;

	lock_as(3, COHORT_DEFAULT_HANDOFF_BOUND);
	for (unsigned n = 0; n < 3; n++)
		ck_assert_int_eq(cohort_rw_read_lock(l, n, NULL), 0);
	start_writer(&w, l, .node = 1, .holds = true);
	WAIT_UNTIL(writer_active(l));
	for (unsigned n = 0; n < 3; n++) {
		ck_assert(stays_out(&w));
		cohort_rw_read_unlock(l, (n + 2) % 3);
	}
	WAIT_UNTIL(entered(&w));
	for (unsigned n = 0; n < 3; n++)
		ck_assert_uint_eq(readers_present(l, n), 0);
	actor_finish(&w);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(read_trylock_fails_while_writer_waits_for_readers)
{
	struct actor w;

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);
	start_writer(&w, l, .node = 1);
	WAIT_UNTIL(writer_active(l));
	ck_assert(!cohort_rw_read_trylock(l, 0));
	ck_assert(!cohort_rw_read_trylock(l, 1));
	ck_assert_uint_eq(readers_present(l, 0), 1);
	ck_assert_uint_eq(readers_present(l, 1), 0);
	ck_assert(!entered(&w));
	cohort_rw_read_unlock(l, 0);
	ck_assert_int_eq(actor_finish(&w), 0);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(reader_arriving_while_writer_waits_enters_after_it)
{
	struct actor w, r2;

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0); /* R1 */
	start_writer(&w, l, .node = 1, .holds = true);
	WAIT_UNTIL(writer_active(l));
	start_reader(&r2, l, .holds = true);                  /* arrives behind W */
	WAIT_UNTIL(reader_parked(l));
	cohort_rw_read_unlock(l, 0);
	WAIT_UNTIL(entered(&w) || entered(&r2));
	ck_assert_msg(entered(&w) && !entered(&r2),
		      "a reader that arrived behind a waiting writer overtook it");
	ck_assert(stays_out(&r2));
	actor_finish(&w);
	WAIT_UNTIL(entered(&r2));
	ck_assert_uint_lt(w.order, r2.order);
	actor_finish(&r2);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(readers_parked_behind_writer_all_enter_when_it_leaves)
{
	enum { NR = 4 };
	struct actor r[NR];

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	for (int i = 0; i < NR; i++)
		start_reader(&r[i], l, .node = (unsigned)i % 2, .holds = true);
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
}
END_TEST

START_TEST(readers_stay_out_across_local_handoff)
{
	struct actor w2, r;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0); /* W1 */
	start_writer(&w2, l, .holds = true);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	start_reader(&r, l, .node = 1, .holds = true);
	WAIT_UNTIL(reader_parked(l));
	cohort_rw_write_unlock(l, 0);                          /* hands off to W2 */
	WAIT_UNTIL(entered(&w2));
	ck_assert(writer_active(l));
	ck_assert_msg(stays_out(&r), "a reader slipped in at a local hand-off");
	ck_assert(!cohort_rw_read_trylock(l, 1));
	actor_finish(&w2);
	WAIT_UNTIL(entered(&r));
	actor_finish(&r);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

/* -------------------------------------------------------------- migration */

START_TEST(read_unlock_elsewhere_with_the_lock_node_balances_the_indicator)
{
	/* Locked with node 1 on one thread, unlocked with node 1 on another. */
	take_elsewhere((struct acquisition){ .lock = l, .kind = ACT_READ, .node = 1 });
	ck_assert_uint_eq(readers_present(l, 1), 1);
	ck_assert(!cohort_rw_write_trylock(l, 0));
	cohort_rw_read_unlock(l, 1);
	ck_assert_uint_eq(readers_present(l, 0), 0);
	ck_assert_uint_eq(readers_present(l, 1), 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert(cohort_rw_write_trylock(l, 0));
	cohort_rw_write_unlock(l, 0);
}
END_TEST

START_TEST(write_unlock_elsewhere_with_the_lock_node_releases_the_cohort)
{
	take_elsewhere((struct acquisition){ .lock = l, .kind = ACT_WRITE, .node = 1 });
	ck_assert(local_locked(l, 1));
	cohort_rw_write_unlock(l, 1);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);
	cohort_rw_read_unlock(l, 0);
}
END_TEST

/* ------------------------------------------------------------ cohort mutex */

START_TEST(release_with_local_waiter_hands_off_without_freeing_global)
{
	struct actor w2;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	start_writer(&w2, l, .holds = true);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	ck_assert_uint_eq(handoffs(l), 0);
	cohort_rw_write_unlock(l, 0);
	WAIT_UNTIL(entered(&w2));
	ck_assert_uint_eq(handoffs(l), 1);
	ck_assert_int_eq(global_owner(l), 0);
	actor_finish(&w2);
	ck_assert_uint_eq(handoffs(l), 1);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(release_with_only_parked_local_waiters_frees_global)
{
	/*
	 * One CPU: a waiter can never be running beside the holder, so it
	 * parks, and the releasing writer frees both locks instead of handing
	 * them over (readers are not kept out while the waiter wakes up).
	 */
	struct actor w2;

	policy_cpus(1);
	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	start_writer(&w2, l, .holds = true);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	cohort_rw_write_unlock(l, 0);
	ck_assert(!local_passed(l, 0));
	WAIT_UNTIL(entered(&w2));
	ck_assert_uint_eq(handoffs(l), 0);
	actor_finish(&w2);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(release_hands_off_only_while_the_waiters_can_all_run)
{
	/*
	 * Two CPUs, two writers waiting: they park, so the first release
	 * frees the lock.  The next release finds one waiter, which spins
	 * beside the holder: that one is handed the lock.
	 */
	struct actor w[2];

	policy_cpus(2);
	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	for (int i = 0; i < 2; i++)
		start_writer(&w[i], l, .holds = true);
	WAIT_UNTIL(local_waiters(l, 0) == 2);
	cohort_rw_write_unlock(l, 0);
	ck_assert(!local_passed(l, 0));
	ck_assert_uint_eq(handoffs(l), 0);
	WAIT_UNTIL(entered(&w[0]) || entered(&w[1]));
	int first = entered(&w[0]) ? 0 : 1;

	WAIT_UNTIL(local_waiters(l, 0) == 1);
	actor_finish(&w[first]);
	WAIT_UNTIL(entered(&w[1 - first]));
	ck_assert_uint_eq(handoffs(l), 1);
	actor_finish(&w[1 - first]);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(release_without_local_waiter_frees_global)
{
	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	ck_assert_int_eq(global_owner(l), 0);
	cohort_rw_write_unlock(l, 0);
	ck_assert_int_eq(global_owner(l), -1);
	ck_assert(!writer_active(l));
	ck_assert_uint_eq(handoffs(l), 0);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(handoff_bound_zero_never_hands_off)
{
	struct actor w2;

	lock_as(2, 0);
	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	start_writer(&w2, l, .holds = true);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	cohort_rw_write_unlock(l, 0);
	WAIT_UNTIL(entered(&w2));
	ck_assert_uint_eq(handoffs(l), 0);
	actor_finish(&w2);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(handoffs_stop_after_bound_in_a_row)
{
	/* Bound 2, three writers of node 0 queued: two hand-offs, then a global release. */
	enum { NW = 3, BOUND = 2 };
	struct actor w[NW];
	bool finished[NW] = { false };

	lock_as(2, BOUND);
	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	for (int i = 0; i < NW; i++)
		start_writer(&w[i], l, .holds = true);
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
	struct bound_run b = { .l = l };
	pthread_t t[BOUND_NODE0_WRITERS];
	unsigned worst = 0;

	lock_as(2, BOUND_B);
	start_threads(t, BOUND_NODE0_WRITERS, bound_node0_writer, &b);
	for (int round = 0; round < BOUND_ROUNDS; round++) {
		unsigned long seen = atomic_load(&b.node0_entries);

		/* Arrive in the middle of a node-0 tenure, at varying points. */
		WAIT_UNTIL(atomic_load(&b.node0_entries) >= seen + 1 + (unsigned)round % 7);
		struct deadline dl = DEADLINE_IN(CLOCK_MONOTONIC, 10000000);

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
	join_threads(t, BOUND_NODE0_WRITERS);
	ck_assert_uint_eq(atomic_load(&b.violations), 0);
	ck_assert_msg(worst <= BOUND_B + 1, "node 1 waited for %u node-0 entries (bound %d)",
		      worst, BOUND_B + 1);
	ck_assert_uint_gt(handoffs(b.l), 0);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(global_lock_goes_round_robin_among_waiting_nodes)
{
	/* Node 1 holds; nodes 0 and 2 wait: node 2 is next after 1, then 0. */
	struct actor w0, w2;

	lock_as(3, COHORT_DEFAULT_HANDOFF_BOUND);
	ck_assert_int_eq(cohort_rw_write_lock(l, 1, NULL), 0);
	start_writer(&w0, l, .node = 0, .holds = true);
	WAIT_UNTIL(waits_for_global(l, 0));
	start_writer(&w2, l, .node = 2, .holds = true);
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
}
END_TEST

/* ------------------------------------------------------------ timed locks */

START_TEST(timed_read_lock_times_out_while_writer_holds)
{
	struct deadline dl = DEADLINE_IN(clocks[_i], 20000);

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	ck_assert_int_eq(cohort_rw_read_lock(l, 1, &dl), ETIMEDOUT);
	ck_assert(deadline_passed(&dl));
	ck_assert_uint_eq(readers_present(l, 1), 0);
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert_int_eq(cohort_rw_read_lock(l, 1, &dl), 0); /* free: no waiting, no time-out */
	cohort_rw_read_unlock(l, 1);
}
END_TEST

START_TEST(timed_locks_at_past_deadline_succeed_on_free_lock)
{
	struct deadline dl = DEADLINE_IN(clocks[_i], -1000000);

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, &dl), 0);
	cohort_rw_read_unlock(l, 0);
	ck_assert_int_eq(cohort_rw_write_lock(l, 1, &dl), 0);
	cohort_rw_write_unlock(l, 1);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(timed_write_lock_times_out_while_reader_holds)
{
	struct deadline dl = DEADLINE_IN(clocks[_i], 20000);

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
}
END_TEST

START_TEST(timed_write_lock_times_out_behind_writer_of_same_node)
{
	struct actor w;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	/* Waits on the local lock. */
	start_writer(&w, l, .node = 0, .timeout_us = 20000, .clock = &clocks[_i]);
	ck_assert_int_eq(actor_finish(&w), ETIMEDOUT);
	ck_assert_uint_eq(local_waiters(l, 0), 0);
	/* Nobody to hand off to: the release frees the global lock. */
	cohort_rw_write_unlock(l, 0);
	ck_assert_uint_eq(handoffs(l), 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert_int_eq(cohort_rw_write_lock(l, 1, NULL), 0);
	cohort_rw_write_unlock(l, 1);
}
END_TEST

START_TEST(timed_write_lock_times_out_behind_writer_of_other_node)
{
	struct actor w;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	/* Waits for the global lock. */
	start_writer(&w, l, .node = 1, .timeout_us = 20000, .clock = &clocks[_i]);
	ck_assert_int_eq(actor_finish(&w), ETIMEDOUT);
	ck_assert(!waits_for_global(l, 1));
	ck_assert(!local_locked(l, 1));
	/* Nobody to grant to: the release frees the global lock. */
	cohort_rw_write_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
	ck_assert_int_eq(cohort_rw_write_lock(l, 1, NULL), 0);
	cohort_rw_write_unlock(l, 1);
}
END_TEST

START_TEST(timed_out_writer_lets_readers_parked_behind_it_in)
{
	struct actor w, r2;

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);  /* R1 holds */
	start_writer(&w, l, .node = 1, .timeout_us = 1000000); /* W waits for R1 */
	WAIT_BLOCKED(&w, writer_active(l));
	start_reader(&r2, l, .node = 1, .holds = true);        /* R2 parks behind W */
	WAIT_UNTIL(reader_parked(l) || entered(&r2));
	/* W times out; R2 must then get in while R1 still holds. */
	ck_assert_int_eq(actor_finish(&w), ETIMEDOUT);
	WAIT_UNTIL(entered(&r2));
	ck_assert_uint_eq(readers_present(l, 0) + readers_present(l, 1), 2);
	actor_finish(&r2);
	cohort_rw_read_unlock(l, 0);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(timed_out_draining_writer_grants_global_to_waiting_node)
{
	struct actor w1, w2;

	ck_assert_int_eq(cohort_rw_read_lock(l, 0, NULL), 0);  /* R holds */
	start_writer(&w1, l, .node = 0, .timeout_us = 1000000); /* W1 waits for R */
	WAIT_BLOCKED(&w1, writer_active(l));
	start_writer(&w2, l, .node = 1, .holds = true);        /* W2 waits for W1 */
	WAIT_UNTIL(waits_for_global(l, 1));
	ck_assert_int_eq(actor_finish(&w1), ETIMEDOUT);
	/* W2 now owns the global lock, readers stay out, and it waits for R. */
	WAIT_UNTIL(global_owner(l) == 1);
	ck_assert(writer_active(l));
	ck_assert(!local_locked(l, 0));
	ck_assert(stays_out(&w2));
	cohort_rw_read_unlock(l, 0);
	WAIT_UNTIL(entered(&w2));
	actor_finish(&w2);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(local_waiter_handed_the_lock_after_its_deadline_keeps_it)
{
	/*
	 * W2 is counted on node 0's local lock and frozen there; its deadline
	 * passes.  W1 releases and, W2 being counted, hands it the cohort
	 * mutex.  W2 must not walk away from it: it gets in (late success).
	 */
	struct actor w2;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);          /* W1 */
	start_writer(&w2, l, .node = 0, .timeout_us = 60000000);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	freeze(&w2);
	pass_deadline(&w2);
	cohort_rw_write_unlock(l, 0);
	ck_assert(local_passed(l, 0));
	ck_assert_int_eq(global_owner(l), 0);
	thaw();
	ck_assert_int_eq(actor_finish(&w2), 0);
	ck_assert_uint_eq(handoffs(l), 1);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(global_waiter_granted_the_lock_after_its_deadline_keeps_it)
{
	struct actor w2;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);          /* W1 */
	start_writer(&w2, l, .node = 1, .timeout_us = 60000000);
	WAIT_UNTIL(waits_for_global(l, 1));
	freeze(&w2);
	pass_deadline(&w2);
	cohort_rw_write_unlock(l, 0);
	ck_assert_int_eq(global_owner(l), 1);    /* granted to node 1 */
	ck_assert(writer_active(l));             /* being handed over: readers stay out */
	thaw();
	ck_assert_int_eq(actor_finish(&w2), 0);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(timed_out_local_waiter_does_not_strand_a_later_one)
{
	/* W2 (timed) and W3 wait on node 0's local lock; W2 gives up; W3 gets in. */
	struct actor w2, w3;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	start_writer(&w3, l, .node = 0, .holds = true);
	WAIT_UNTIL(local_waiters(l, 0) == 1);
	start_writer(&w2, l, .node = 0, .timeout_us = 50000);
	ck_assert_int_eq(actor_finish(&w2), ETIMEDOUT);
	ck_assert_uint_eq(local_waiters(l, 0), 1);
	cohort_rw_write_unlock(l, 0);
	WAIT_UNTIL(entered(&w3));
	actor_finish(&w3);
	ck_assert(cohort_rw_is_idle(l));
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
	unsigned got = 0, timed_out = 0;
	char where[256];

	for (int i = 0; i < RACE_RUNS; i++) {
		struct actor w;

		ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
		start_writer(&w, l, .node = waiter_node, .timeout_us = RACE_DEADLINE_US);
		while (!waiter_counted(l, waiter_node) && !done(&w))
			cpu_relax();
		after_deadline(&w.abstime, (long)(i % 120) - 40);
		cohort_rw_write_unlock(l, 0);
		if (actor_finish(&w) == 0)
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

static unsigned readers_on(void *l, unsigned node)
{
	return cohort_rw_readers_present(l, node);
}

START_TEST(readers_present_counts_each_nodes_readers)
{
	lock_as(3, COHORT_DEFAULT_HANDOFF_BOUND);
	readers_are_counted_per_node(l, readers_on);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(readers_present_is_zero_on_every_node_while_a_writer_holds)
{
	struct actor r;

	ck_assert_int_eq(cohort_rw_write_lock(l, 0, NULL), 0);
	/* A reader waiting behind the writer is not present. */
	start_reader(&r, l, .node = 1);
	WAIT_UNTIL(reader_parked(l));
	ck_assert_uint_eq(cohort_rw_readers_present(l, 0), 0);
	ck_assert_uint_eq(cohort_rw_readers_present(l, 1), 0);
	cohort_rw_write_unlock(l, 0);
	ck_assert_int_eq(actor_finish(&r), 0);
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

START_TEST(read_hold_released_by_another_thread_lets_a_draining_writer_in)
{
	struct actor w;

	take_elsewhere((struct acquisition){ .lock = l, .kind = ACT_READ, .node = 1 });
	ck_assert_uint_eq(cohort_rw_readers_present(l, 1), 1);
	start_writer(&w, l, .holds = true);
	WAIT_UNTIL(writer_active(l));
	ck_assert(!entered(&w));
	ck_assert(release_one_reader(l, l->global.nnodes, readers_on));
	WAIT_UNTIL(entered(&w));
	/* Write-held: no read hold to release. */
	ck_assert(!release_one_reader(l, l->global.nnodes, readers_on));
	actor_finish(&w);
	ck_assert(!release_one_reader(l, l->global.nnodes, readers_on));
	ck_assert(cohort_rw_is_idle(l));
}
END_TEST

/* ---------------------------------------------------------------- stress */

/* Every acquisition picks a node at random, as a thread that migrates would. */
enum stress_timing {
	UNTIMED,        /* blocking and trylock operations only */
	TIMED_ALL,      /* some read and write locks have deadlines */
};

static void describe(struct stress *s, char *buf, size_t len)
{
	struct cohort_rw *l = s->lock;
	int n = snprintf(buf, len, "wstate=%#x gstate=%#llx",
			 atomic_load(&l->central.wstate),
			 (unsigned long long)atomic_load(&l->global.gstate));

	for (unsigned i = 0; i < s->nodes && n > 0 && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, " [%u: lstate=%#x in=%#x out=%#x]", i,
			      atomic_load(&l->node[i].local.lstate),
			      atomic_load(&l->node[i].ri.ingress),
			      atomic_load(&l->node[i].ri.egress));
}

/* A run not done after 20 s is stuck: describe() says where. */
static void run_stress(int threads, int ops, enum stress_timing timed, unsigned nnodes,
		       unsigned bound)
{
	struct stress s = { .lock = l, .nodes = nnodes, STANDARD_MIX,
			    .timed_reads = timed != UNTIMED, .timed_writes = timed != UNTIMED,
			    .stuck_seconds = 20, .describe = describe };

	lock_as(nnodes, bound);
	stress_run(&s, threads, ops);
	ck_assert(cohort_rw_is_idle(l));
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
	policy_cpus((unsigned)kept);
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

	tc = lock_tcase(s, "state");
	tcase_add_test(tc, size_is_two_sectors_plus_two_per_node);
	tcase_add_loop_test(tc, init_makes_any_bytes_an_idle_lock, 1, 5);
	tcase_add_test(tc, readers_on_every_node_share_the_lock);
	tcase_add_test(tc, held_lock_is_not_idle);
	tcase_add_loop_test(tc, every_node_index_takes_and_releases_both_modes, 1, 5);

	tc = lock_tcase(s, "readers_present");
	tcase_add_test(tc, readers_present_counts_each_nodes_readers);
	tcase_add_test(tc, readers_present_is_zero_on_every_node_while_a_writer_holds);
	tcase_add_test(tc, read_hold_released_by_another_thread_lets_a_draining_writer_in);

	tc = lock_tcase(s, "trylock");
	tcase_add_test(tc, read_trylock_fails_while_writer_holds);
	tcase_add_test(tc, write_trylock_fails_with_reader_inside_and_leaves_lock_unchanged);
	tcase_add_test(tc, write_trylock_fails_while_writer_of_same_node_holds);
	tcase_add_test(tc, write_trylock_fails_while_writer_of_other_node_holds);
	tcase_add_test(tc, write_trylock_succeeds_once_last_reader_leaves);

	tc = lock_tcase(s, "writer_preference");
	tcase_add_test(tc, writer_waits_for_readers_on_every_node);
	tcase_add_test(tc, writer_enters_when_the_last_departure_wake_never_comes);
	tcase_add_test(tc, read_trylock_fails_while_writer_waits_for_readers);
	tcase_add_test(tc, reader_arriving_while_writer_waits_enters_after_it);
	tcase_add_test(tc, readers_parked_behind_writer_all_enter_when_it_leaves);
	tcase_add_test(tc, readers_stay_out_across_local_handoff);

	tc = lock_tcase(s, "migration");
	tcase_add_test(tc, read_unlock_elsewhere_with_the_lock_node_balances_the_indicator);
	tcase_add_test(tc, write_unlock_elsewhere_with_the_lock_node_releases_the_cohort);

	tc = lock_tcase(s, "cohort");
	tcase_add_test(tc, release_with_local_waiter_hands_off_without_freeing_global);
	tcase_add_test(tc, release_with_only_parked_local_waiters_frees_global);
	tcase_add_test(tc, release_hands_off_only_while_the_waiters_can_all_run);
	tcase_add_test(tc, release_without_local_waiter_frees_global);
	tcase_add_test(tc, handoff_bound_zero_never_hands_off);
	tcase_add_test(tc, handoffs_stop_after_bound_in_a_row);
	tcase_add_test(tc, remote_writer_waits_at_most_bound_plus_one_local_acquisitions);
	tcase_add_test(tc, global_lock_goes_round_robin_among_waiting_nodes);

	tc = lock_tcase(s, "timed");
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

	tc = lock_tcase(s, "stress");
	tcase_add_test(tc, mixed_ops_on_two_nodes_keep_mutual_exclusion);
	tcase_add_test(tc, mixed_ops_with_deadlines_keep_mutual_exclusion);
	tcase_add_test(tc, mixed_ops_with_short_handoff_bound_keep_mutual_exclusion);
	tcase_add_loop_test(tc, mixed_ops_keep_mutual_exclusion_with_one_to_four_nodes, 1, 5);
	tcase_add_test(tc, sixteen_threads_on_two_cpus_make_progress);
	tcase_add_test(tc, sixteen_threads_with_deadlines_on_two_cpus_make_progress);
	return s;
}

int main(void)
{
	return run_suite(cohort_suite());
}
