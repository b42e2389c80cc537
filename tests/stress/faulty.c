/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * faulty.c - a broken rwlock, to show that oprand catches broken locks
 * and not only wrong models.
 *
 * Preloaded in front of libbravo (or alone, over glibc), it wraps a few
 * pthread_rwlock_* functions and forwards to the next definition
 * (dlsym(RTLD_NEXT)), injecting the fault named by OPRAND_FAULT:
 *
 *   lost-unlock                every 16th unlock returns 0 and releases nothing
 *   trywrlock-ignores-holders  trywrlock returns 0 when the lock is busy
 *   timeout-grants             a timed or clock lock call that timed out
 *                              returns 0 (without the lock)
 *
 * Unset or empty: no fault.  An unknown name: one line on stderr, no fault.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum fault { F_NONE, F_LOST_UNLOCK, F_TRYWR_IGNORES, F_TIMEOUT_GRANTS };

static enum fault fault;
static atomic_uint unlocks;

static int (*next_unlock)(pthread_rwlock_t *);
static int (*next_trywrlock)(pthread_rwlock_t *);
static int (*next_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
static int (*next_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
static int (*next_clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
static int (*next_clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);

__attribute__((constructor)) static void faulty_load(void)
{
	const char *s = getenv("OPRAND_FAULT");

	next_unlock = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_unlock");
	next_trywrlock = (int (*)(pthread_rwlock_t *))dlsym(RTLD_NEXT, "pthread_rwlock_trywrlock");
	next_timedrdlock = (int (*)(pthread_rwlock_t *, const struct timespec *))
		dlsym(RTLD_NEXT, "pthread_rwlock_timedrdlock");
	next_timedwrlock = (int (*)(pthread_rwlock_t *, const struct timespec *))
		dlsym(RTLD_NEXT, "pthread_rwlock_timedwrlock");
	next_clockrdlock = (int (*)(pthread_rwlock_t *, clockid_t, const struct timespec *))
		dlsym(RTLD_NEXT, "pthread_rwlock_clockrdlock");
	next_clockwrlock = (int (*)(pthread_rwlock_t *, clockid_t, const struct timespec *))
		dlsym(RTLD_NEXT, "pthread_rwlock_clockwrlock");
	if (!s || !*s)
		fault = F_NONE;
	else if (strcmp(s, "lost-unlock") == 0)
		fault = F_LOST_UNLOCK;
	else if (strcmp(s, "trywrlock-ignores-holders") == 0)
		fault = F_TRYWR_IGNORES;
	else if (strcmp(s, "timeout-grants") == 0)
		fault = F_TIMEOUT_GRANTS;
	else
		fprintf(stderr, "faulty: OPRAND_FAULT='%s' is not a known fault; no fault injected\n", s);
}

int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	if (fault == F_LOST_UNLOCK && atomic_fetch_add(&unlocks, 1) % 16 == 15)
		return 0;
	return next_unlock(rw);
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	int r = next_trywrlock(rw);

	return fault == F_TRYWR_IGNORES && r == EBUSY ? 0 : r;
}

static int grant(int r)
{
	return fault == F_TIMEOUT_GRANTS && r == ETIMEDOUT ? 0 : r;
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *t)
{
	return grant(next_timedrdlock(rw, t));
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *t)
{
	return grant(next_timedwrlock(rw, t));
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t c, const struct timespec *t)
{
	return grant(next_clockrdlock(rw, c, t));
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t c, const struct timespec *t)
{
	return grant(next_clockwrlock(rw, c, t));
}
