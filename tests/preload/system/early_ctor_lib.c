/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * early_ctor_lib - a preloaded library whose constructor uses rwlocks, as
 * another library's constructor may do before libbravo's own has run.
 * It records what each call returned; early_ctor_test checks the record,
 * then calls early_ctor_after() (after every constructor ran) to
 * re-initialize the locks used early and reuse their addresses: a heap
 * block built early must be rebuilt, never overrun (valgrind watches).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "../../lib/test_util.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int early_ctor_ran;
EXPORT int early_ctor_failures;

static pthread_rwlock_t early_lock = PTHREAD_RWLOCK_INITIALIZER;
/* Used early, then reused in place: zero-filled again, or destroyed and re-initialized. */
static pthread_rwlock_t reused_zero = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t reused_destroyed = PTHREAD_RWLOCK_INITIALIZER;

static int failures;

static void expect(int got, int want)
{
	if (got != want)
		failures++;
}

/* unlock of a lock the caller does not hold: EPERM, or 0 as glibc. */
static void expect_unheld_unlock(int got)
{
	if (got != 0 && got != EPERM)
		failures++;
}

/* Both modes, a re-entry, a busy try from the holder. */
static void use(pthread_rwlock_t *l)
{
	expect(pthread_rwlock_wrlock(l), 0);
	expect(pthread_rwlock_trywrlock(l), EBUSY);
	expect(pthread_rwlock_unlock(l), 0);
	expect(pthread_rwlock_rdlock(l), 0);
	expect(pthread_rwlock_tryrdlock(l), 0);
	expect(pthread_rwlock_unlock(l), 0);
	expect(pthread_rwlock_unlock(l), 0);
}

__attribute__((constructor)) static void early_ctor(void)
{
	pthread_rwlock_t own;
	struct timespec past = { 0, 0 };

	expect(pthread_rwlock_rdlock(&early_lock), 0);
	expect(pthread_rwlock_rdlock(&early_lock), 0);
	/*
	 * libbravo reports what glibc would deadlock on; where glibc's lock
	 * answers for reads (BRAVO-pthread outside strict mode) the write
	 * waits as glibc's does, here until a deadline in the past.
	 */
	expect(pthread_rwlock_clockwrlock(&early_lock, CLOCK_MONOTONIC, &past),
	       reads_answered_as_glibc() ? ETIMEDOUT : EDEADLK);
	expect(pthread_rwlock_unlock(&early_lock), 0);
	expect(pthread_rwlock_unlock(&early_lock), 0);
	expect_unheld_unlock(pthread_rwlock_unlock(&early_lock));
	expect(pthread_rwlock_init(&own, NULL), 0);
	expect(pthread_rwlock_wrlock(&own), 0);
	expect(pthread_rwlock_clockrdlock(&own, CLOCK_MONOTONIC, &past), EDEADLK);
	expect(pthread_rwlock_unlock(&own), 0);
	expect(pthread_rwlock_destroy(&own), 0);
	use(&reused_zero);
	use(&reused_destroyed);
	early_ctor_failures = failures;
	early_ctor_ran = 1;
}

/* After every constructor: the early locks re-initialized, their addresses reused. */
EXPORT int early_ctor_after(void)
{
	failures = 0;
	expect(pthread_rwlock_init(&early_lock, NULL), 0);
	use(&early_lock);
	memset(&reused_zero, 0, sizeof(reused_zero)); /* freed without destroy, a new lock */
	use(&reused_zero);
	expect(pthread_rwlock_destroy(&reused_destroyed), 0);
	expect(pthread_rwlock_init(&reused_destroyed, NULL), 0);
	use(&reused_destroyed);
	/* And once more, now that everything is loaded. */
	expect(pthread_rwlock_init(&early_lock, NULL), 0);
	use(&early_lock);
	expect(pthread_rwlock_destroy(&early_lock), 0);
	expect(pthread_rwlock_destroy(&reused_zero), 0);
	expect(pthread_rwlock_destroy(&reused_destroyed), 0);
	return failures;
}
