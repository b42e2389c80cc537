/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stats_test - a single-threaded program with a known mix of lock calls,
 * for checking libbravo's statistics (BRAVO_STATS_FILE) against exact
 * counts.  An ordinary pthread program.
 *
 *   1 slow read (the first: bias is off), then 999 more reads
 *   3 read re-entries on a lock already read
 *   1 write (under BRAVO: one revocation)
 *   1 more read and 1 more write on a second lock
 *   2 unlocks of free locks: 0 (glibc's result); with BRAVO_CHECK=1
 *     (strict mode) EPERM each, 2 x EPERM errors
 *   errors: 1 x EBUSY, 1 x EDEADLK (a write lock by the reader, with a
 *     deadline in the past), 1 x EINVAL
 *
 * Where glibc's lock answers for reads (reads_answered_as_glibc:
 * BRAVO-pthread outside strict mode), the second lock's first read is a
 * hold of glibc's lock and its first re-entry a new, fast, read; the two
 * others are re-entries of that fast hold; and the reader's write lock
 * waits, as glibc's does, until its deadline: ETIMEDOUT, not EDEADLK
 * (stats_check.sh's counts).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../lib/test_util.h"

static int expect(int got, int want, const char *what)
{
	if (got != want) {
		fprintf(stderr, "stats_test: %s returned %d, want %d\n", what, got, want);
		return 1;
	}
	return 0;
}

int main(void)
{
	static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
	static pthread_rwlock_t other = PTHREAD_RWLOCK_INITIALIZER;
	struct timespec past = { 0, 0 };
	const char *check = getenv("BRAVO_CHECK");
	int unheld = check && strcmp(check, "1") == 0 ? EPERM : 0;
	int bad_calls = 0;

	rwlock_lib_require("stats_test"); /* which library answered (EXPECT_RWLOCK_LIB) */

	for (int i = 0; i < 1000; i++) {
		bad_calls += expect(pthread_rwlock_rdlock(&lock), 0, "rdlock");
		bad_calls += expect(pthread_rwlock_unlock(&lock), 0, "unlock");
	}
	bad_calls += expect(pthread_rwlock_unlock(&lock), unheld, "unlock of a free lock");
	bad_calls += expect(pthread_rwlock_unlock(&other), unheld, "unlock of another free lock");

	bad_calls += expect(pthread_rwlock_rdlock(&other), 0, "rdlock other");
	for (int i = 0; i < 3; i++)
		bad_calls += expect(pthread_rwlock_rdlock(&other), 0, "read re-entry");
	bad_calls += expect(pthread_rwlock_trywrlock(&other), EBUSY, "trywrlock while reading");
	bad_calls += expect(pthread_rwlock_clockwrlock(&other, CLOCK_MONOTONIC, &past),
			    reads_answered_as_glibc() ? ETIMEDOUT : EDEADLK,
			    "clockwrlock while reading, deadline past");
	for (int i = 0; i < 4; i++)
		bad_calls += expect(pthread_rwlock_unlock(&other), 0, "unlock other");

	bad_calls += expect(pthread_rwlock_wrlock(&lock), 0, "wrlock");
	bad_calls += expect(pthread_rwlock_clockrdlock(&other, CLOCK_PROCESS_CPUTIME_ID, &past),
			    EINVAL, "clockrdlock with a bad clock");
	bad_calls += expect(pthread_rwlock_unlock(&lock), 0, "unlock after write");

	bad_calls += expect(pthread_rwlock_wrlock(&other), 0, "wrlock other");
	bad_calls += expect(pthread_rwlock_unlock(&other), 0, "unlock other");
	return bad_calls ? 1 : 0;
}
