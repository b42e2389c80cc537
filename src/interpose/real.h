/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * real.h - glibc's own pthread_rwlock functions, reached past our
 * interposed symbols with dlsym(RTLD_NEXT, ...).
 *
 * Resolved once, lazily: another library's constructor may call
 * pthread_rwlock_* before ours runs, so every user goes through real().
 */
#ifndef LIBBRAVO_REAL_H
#define LIBBRAVO_REAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "../../locks/hidden.h"

struct real_rwlock {
	int (*init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
	int (*destroy)(pthread_rwlock_t *);
	int (*rdlock)(pthread_rwlock_t *);
	int (*tryrdlock)(pthread_rwlock_t *);
	int (*timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*wrlock)(pthread_rwlock_t *);
	int (*trywrlock)(pthread_rwlock_t *);
	int (*timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*unlock)(pthread_rwlock_t *);
};

extern struct real_rwlock real_rwlock LIBBRAVO_HIDDEN;
extern atomic_bool real_resolved LIBBRAVO_HIDDEN;

void real_resolve(void);

static inline const struct real_rwlock *real(void)
{
	if (!atomic_load_explicit(&real_resolved, memory_order_acquire))
		real_resolve();
	return &real_rwlock;
}

/*
 * real() without the check, for the variant's lock paths: every caller has
 * seen the load happen (ensure_loaded, or the fast paths' gate with its
 * acquire, or a hold this thread took after either), and the load
 * resolves glibc's functions first.  A fork child inherits them resolved.
 */
static inline const struct real_rwlock *real_loaded(void)
{
	return &real_rwlock;
}

#endif
