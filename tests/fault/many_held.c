/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * many_held.c - one thread holds 500,000 read locks at once.
 *
 * glibc keeps no per-thread record of the locks a thread holds, so a
 * thread may hold any number of read locks (a calloc'd array of zero
 * locks needs no init), and take and release them in any order, each call
 * costing the same.  Here one thread takes 500,000 read locks with
 * pthread_rwlock_rdlock and releases them in the order taken (first in,
 * first out), in the reverse order, and in a shuffled order; every call
 * returns 0, and afterwards a sample of the locks is free (trywrlock 0,
 * unlock 0).  While they are held, another thread's trywrlock of a sample
 * returns EBUSY (and its tryrdlock 0); read re-entries (a second rdlock,
 * a tryrdlock of a lock the thread holds) return 0 and need as many
 * unlocks.  Each check does it twice over the same locks.
 *
 * Each check has a watchdog of 20 s without progress (a hang), and the
 * program the runner's bound (torture-check: 60 s).  Regression (issue
 * item 9): libbravo's held-lock list was searched linearly, so holding n
 * locks cost O(n) per call (100,000 locks took 2.2 s against glibc's
 * 0.00 s): the checks here took 36 to 122 s each, minutes in all (ba's
 * release in reverse order, 0.06 s: its rdlock did not search, its unlock
 * searched from the most recent hold), glibc's under 0.1 s, libbravo's
 * now 1-6 s for the whole program.  Nothing else is timed.
 */
#include "fault.h"

/* Each check takes and releases them all ROUNDS times (the locks are reused). */
enum { NLOCKS = 500000, SAMPLE_STEP = 997, ROUNDS = 2 };

/* The watchdog's bound per check (seconds); -D to time a slow library. */
#ifndef MANY_HELD_WATCHDOG_S
#define MANY_HELD_WATCHDOG_S 20
#endif

static pthread_rwlock_t *locks;

/*
 * The locks: zero-filled once, then used by every check of the run (each
 * leaves them all free), so that what a first use of a lock costs
 * (libbravo asks the kernel once per lock whether its memory is shared)
 * is paid once and each check times the held-lock list alone.
 */
static void locks_alloc(void)
{
	if (locks)
		return;
	locks = calloc(NLOCKS, sizeof(*locks));
	CHECK(locks != NULL, "calloc of %d locks failed", NLOCKS);
}


static void take_all_for_reading(void)
{
	for (int i = 0; i < NLOCKS; i++) {
		int rc = pthread_rwlock_rdlock(&locks[i]);

		CHECK(rc == 0, "rdlock of lock %d (with %d held) returned %s, expected 0", i, i, errname(rc));
		fault_progress();
	}
}

static void release(const int *order)
{
	for (int k = 0; k < NLOCKS; k++) {
		int i = order ? order[k] : k;
		int rc = pthread_rwlock_unlock(&locks[i]);

		CHECK(rc == 0, "unlock of lock %d (the %d-th release, %d still held) returned %s, expected 0",
		      i, k, NLOCKS - k, errname(rc));
		fault_progress();
	}
}

/* A thread that holds nothing: trywrlock of a sample must give want. */
struct sampler {
	int want_wr;   /* what trywrlock must return */
	int want_rd;   /* what tryrdlock must return (-1: do not try) */
	int offset;
};

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;

	for (int i = s->offset; i < NLOCKS; i += SAMPLE_STEP) {
		int rc = pthread_rwlock_trywrlock(&locks[i]);

		CHECK(rc == s->want_wr, "another thread's trywrlock of lock %d returned %s, expected %s", i,
		      errname(rc), errname(s->want_wr));
		if (rc == 0)
			CHECK_RC(pthread_rwlock_unlock(&locks[i]), 0);
		if (s->want_rd >= 0) {
			rc = pthread_rwlock_tryrdlock(&locks[i]);
			CHECK(rc == s->want_rd, "another thread's tryrdlock of lock %d returned %s, expected %s",
			      i, errname(rc), errname(s->want_rd));
			if (rc == 0)
				CHECK_RC(pthread_rwlock_unlock(&locks[i]), 0);
		}
	}
	return NULL;
}

static void sample_from_another_thread(int want_wr, int want_rd, int offset)
{
	struct sampler s = { want_wr, want_rd, offset };

	join(spawn(sampler_main, &s));
}

/* All released: a sample is free, here and in another thread. */
static void sample_is_free(void)
{
	for (int i = 3; i < NLOCKS; i += SAMPLE_STEP) {
		CHECK_RC(pthread_rwlock_trywrlock(&locks[i]), 0);
		CHECK_RC(pthread_rwlock_unlock(&locks[i]), 0);
	}
	sample_from_another_thread(0, 0, 5);
}

static void hold_all_then_release(const int *order, const char *what)
{
	fault_watchdog(MANY_HELD_WATCHDOG_S, what);
	locks_alloc();
	for (int round = 0; round < ROUNDS; round++) {
		take_all_for_reading();
		release(order);
		sample_is_free();
	}
	fault_watchdog(0, NULL);
}

static void thread_holding_500000_read_locks_releases_them_in_the_order_taken(void)
{
	hold_all_then_release(NULL, "500,000 read locks released first in, first out");
}

static void thread_holding_500000_read_locks_releases_them_in_reverse_order(void)
{
	int *order = malloc(NLOCKS * sizeof(*order));

	CHECK(order != NULL, "malloc failed");
	for (int k = 0; k < NLOCKS; k++)
		order[k] = NLOCKS - 1 - k;
	hold_all_then_release(order, "500,000 read locks released last in, first out");
	free(order);
}

static void thread_holding_500000_read_locks_releases_them_in_shuffled_order(void)
{
	int *order = malloc(NLOCKS * sizeof(*order));
	unsigned seed = 4242;

	CHECK(order != NULL, "malloc failed");
	for (int k = 0; k < NLOCKS; k++)
		order[k] = k;
	for (int k = NLOCKS - 1; k > 0; k--) {
		int j = (int)(((unsigned long)next_rand(&seed) << 8 ^ next_rand(&seed)) % (unsigned)(k + 1));
		int t = order[k];

		order[k] = order[j];
		order[j] = t;
	}
	hold_all_then_release(order, "500,000 read locks released in shuffled order");
	free(order);
}

/* While one thread holds them all: another thread's writers are kept out, its readers let in. */
static void while_500000_read_locks_are_held_another_threads_trywrlock_returns_ebusy(void)
{
	fault_watchdog(MANY_HELD_WATCHDOG_S, "another thread's try-locks while 500,000 read locks are held");
	locks_alloc();
	for (int round = 0; round < ROUNDS; round++) {
		take_all_for_reading();
		sample_from_another_thread(EBUSY, 0, round);
		sample_from_another_thread(EBUSY, -1, SAMPLE_STEP / 2 + round);
		release(NULL);
		sample_is_free();
	}
	fault_watchdog(0, NULL);
}

/*
 * Re-entries among 500,000 holds: a second rdlock and a tryrdlock of a
 * sample of the held locks return 0; those locks stay read-held after
 * two unlocks (another thread's trywrlock is EBUSY) and are free after
 * the third.
 */
static void read_reentries_among_500000_held_locks_return_0_and_need_as_many_unlocks(void)
{
	fault_watchdog(MANY_HELD_WATCHDOG_S, "read re-entries among 500,000 held locks");
	locks_alloc();
	for (int round = 0; round < ROUNDS; round++) {
		int first = 1 + round;

		take_all_for_reading();
		for (int i = first; i < NLOCKS; i += SAMPLE_STEP) {
			CHECK_RC(pthread_rwlock_rdlock(&locks[i]), 0);
			CHECK_RC(pthread_rwlock_tryrdlock(&locks[i]), 0);
		}
		for (int i = first; i < NLOCKS; i += SAMPLE_STEP) {
			CHECK_RC(pthread_rwlock_unlock(&locks[i]), 0);
			CHECK_RC(pthread_rwlock_unlock(&locks[i]), 0);
		}
		sample_from_another_thread(EBUSY, 0, first);
		release(NULL); /* the third unlock of the sample, the only one of the others */
		sample_from_another_thread(0, 0, first);
		sample_is_free();
	}
	fault_watchdog(0, NULL);
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		TORTURE_CHECK(thread_holding_500000_read_locks_releases_them_in_the_order_taken),
		TORTURE_CHECK(thread_holding_500000_read_locks_releases_them_in_reverse_order),
		TORTURE_CHECK(thread_holding_500000_read_locks_releases_them_in_shuffled_order),
		TORTURE_CHECK(while_500000_read_locks_are_held_another_threads_trywrlock_returns_ebusy),
		TORTURE_CHECK(read_reentries_among_500000_held_locks_return_0_and_need_as_many_unlocks),
	};

	return torture_main("many_held", "one thread holds 500,000 read locks at once",
			    checks, NELEM(checks), argc, argv);
}
