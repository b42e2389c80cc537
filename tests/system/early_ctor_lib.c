/*
 * early_ctor_lib - a preloaded library whose constructor uses rwlocks, as
 * another library's constructor may do before libbravo's own has run.
 * It records what each call returned; early_ctor_test checks the record.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int early_ctor_ran;
EXPORT int early_ctor_failures;

static pthread_rwlock_t early_lock = PTHREAD_RWLOCK_INITIALIZER;

static void expect(int got, int want)
{
	if (got != want)
		early_ctor_failures++;
}

__attribute__((constructor)) static void early_ctor(void)
{
	pthread_rwlock_t own;
	struct timespec past = { 0, 0 };

	expect(pthread_rwlock_rdlock(&early_lock), 0);
	expect(pthread_rwlock_rdlock(&early_lock), 0);
	/* libbravo reports what glibc would deadlock on. */
	expect(pthread_rwlock_wrlock(&early_lock), EDEADLK);
	expect(pthread_rwlock_unlock(&early_lock), 0);
	expect(pthread_rwlock_unlock(&early_lock), 0);
	expect(pthread_rwlock_unlock(&early_lock), EPERM);
	expect(pthread_rwlock_init(&own, NULL), 0);
	expect(pthread_rwlock_wrlock(&own), 0);
	expect(pthread_rwlock_clockrdlock(&own, CLOCK_MONOTONIC, &past), EDEADLK);
	expect(pthread_rwlock_unlock(&own), 0);
	expect(pthread_rwlock_destroy(&own), 0);
	early_ctor_ran = 1;
}
