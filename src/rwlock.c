/*
 * rwlock.c - the exported pthread_rwlock_* functions.
 *
 * Thin by design: handle -> held-lock list -> algorithm.  Every blocking
 * entry point funnels into rwlock_acquire() (rdlock is a timed lock without
 * a deadline), which applies POSIX's error rules against the calling
 * thread's held-lock list before the algorithm is touched:
 *
 *   EINVAL   NULL or destroyed lock; clock not REALTIME/MONOTONIC; an
 *            invalid abstime when the lock cannot be had at once
 *   EDEADLK  lock/timedlock/clocklock while holding the lock for writing,
 *            and the write forms while holding it for reading
 *   EBUSY    try-locks that cannot have the lock (also when the caller
 *            holds it, except a read re-entry)
 *   EPERM    unlock by a thread that holds nothing on the lock
 *   EAGAIN   read re-entry count exhausted; no memory for the held list
 *
 * A read re-entry only bumps the recursion count, so a thread re-reading a
 * lock never queues behind a waiting writer.  Process-shared locks get the
 * same checks and are then handed to glibc in place.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "config.h"
#include "held.h"
#include "handle.h"
#include "real.h"
#include "stats.h"
#include "variant.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * glibc declares these functions nonnull, so a plain NULL test would be
 * optimized away; hide the pointer's provenance from the compiler.
 */
static inline bool null_ptr(const void *p)
{
	__asm__("" : "+r"(p));
	return p == NULL;
}

static bool clock_supported(clockid_t clk)
{
	return clk == CLOCK_REALTIME || clk == CLOCK_MONOTONIC;
}

static bool abstime_valid(const struct timespec *t)
{
	return !null_ptr(t) && t->tv_nsec >= 0 && t->tv_nsec < 1000000000;
}

static int pshared_trylock(pthread_rwlock_t *rw, enum held_mode mode)
{
	return mode == HELD_READ ? real()->tryrdlock(rw) : real()->trywrlock(rw);
}

static int pshared_lock(pthread_rwlock_t *rw, enum held_mode mode, const struct deadline *dl)
{
	const struct real_rwlock *g = real();

	if (!dl)
		return mode == HELD_READ ? g->rdlock(rw) : g->wrlock(rw);
	return mode == HELD_READ ? g->clockrdlock(rw, dl->clock, dl->abstime)
				 : g->clockwrlock(rw, dl->clock, dl->abstime);
}

static int algo_trylock(pthread_rwlock_t *rw, struct held *h)
{
	if (handle_is_pshared(rw))
		return pshared_trylock(rw, h->mode);
	return h->mode == HELD_READ ? variant_read_trylock(rw, &h->data)
				    : variant_write_trylock(rw, &h->data);
}

static int algo_lock(pthread_rwlock_t *rw, struct held *h, const struct deadline *dl)
{
	if (handle_is_pshared(rw))
		return pshared_lock(rw, h->mode, dl);
	return h->mode == HELD_READ ? variant_read_lock(rw, &h->data, dl)
				    : variant_write_lock(rw, &h->data, dl);
}

/* What the held-lock list says about a new request; -1: go to the lock. */
static int held_check(struct held *h, enum held_mode mode, bool try)
{
	if (!h)
		return -1;
	if (h->mode == HELD_WRITE || mode == HELD_WRITE)
		return try ? EBUSY : EDEADLK;
	if (h->count == UINT32_MAX)
		return EAGAIN;
	h->count++;
	stat_add(STAT_READ_REENTRIES, 1);
	return 0;
}

/*
 * The one path under every lock call.  dl == NULL: wait forever;
 * try: never wait.
 */
static int rwlock_acquire(pthread_rwlock_t *rw, enum held_mode mode, bool try,
			  const struct deadline *dl)
{
	struct held *h;
	int r;

	if (null_ptr(rw) || handle_is_destroyed(rw))
		return stat_error(EINVAL);
	r = held_check(held_find(rw), mode, try);
	if (r >= 0)
		return stat_error(r);
	h = held_push(rw, mode);
	if (!h)
		return stat_error(EAGAIN);
	if (try || dl) {
		r = algo_trylock(rw, h);
		if (r == 0 || try)
			goto out;
		/* POSIX: the deadline is checked only if the lock was busy. */
		if (!abstime_valid(dl->abstime)) {
			r = EINVAL;
			goto out;
		}
		if (dl->abstime->tv_sec < 0) {
			r = ETIMEDOUT;
			goto out;
		}
	}
	r = algo_lock(rw, h, dl);
out:
	if (r) {
		held_remove(h);
		return stat_error(r);
	}
	stat_add(mode == HELD_READ ? STAT_READS : STAT_WRITES, 1);
	return 0;
}

static int rwlock_acquire_timed(pthread_rwlock_t *rw, enum held_mode mode,
				clockid_t clk, const struct timespec *abstime)
{
	struct deadline dl = { abstime, clk };

	if (!clock_supported(clk))
		return stat_error(EINVAL);
	return rwlock_acquire(rw, mode, false, &dl);
}

EXPORT int pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	int pshared = PTHREAD_PROCESS_PRIVATE;

	if (null_ptr(rw))
		return EINVAL;
	if (attr && pthread_rwlockattr_getpshared(attr, &pshared) != 0)
		return EINVAL;
	if (pshared == PTHREAD_PROCESS_SHARED)
		return real()->init(rw, attr); /* sets __shared: glibc's from now on */
	return variant_init(rw, attr);
}

EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *rw)
{
	int r;

	if (null_ptr(rw) || handle_is_destroyed(rw))
		return stat_error(EINVAL);
	if (held_find(rw))
		return stat_error(EBUSY);
	if (handle_is_pshared(rw))
		r = real()->destroy(rw);
	else
		r = variant_destroy(rw);
	if (r == 0)
		handle_mark_destroyed(rw);
	return stat_error(r);
}

EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *rw)
{
	return rwlock_acquire(rw, HELD_READ, false, NULL);
}

EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	return rwlock_acquire(rw, HELD_READ, true, NULL);
}

EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_READ, CLOCK_REALTIME, abstime);
}

EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clk,
				      const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_READ, clk, abstime);
}

EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *rw)
{
	return rwlock_acquire(rw, HELD_WRITE, false, NULL);
}

EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	return rwlock_acquire(rw, HELD_WRITE, true, NULL);
}

EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_WRITE, CLOCK_REALTIME, abstime);
}

EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clk,
				      const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_WRITE, clk, abstime);
}

EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	struct held *h;

	if (null_ptr(rw))
		return stat_error(EINVAL);
	h = held_find(rw);
	/*
	 * A held private lock cannot have been destroyed (destroy refuses with
	 * EBUSY); a process-shared one is glibc's, whose destroy checks nothing.
	 */
	if (!h)
		return stat_error(handle_is_destroyed(rw) ? EINVAL : EPERM);
	if (h->mode == HELD_READ && h->count > 1) {
		h->count--;
		return 0;
	}
	if (handle_is_pshared(rw))
		real()->unlock(rw);
	else if (h->mode == HELD_READ)
		variant_read_unlock(rw, h->data);
	else
		variant_write_unlock(rw, h->data);
	held_remove(h);
	return 0;
}

static bool is_private_lock(const void *lock)
{
	return !handle_is_pshared((pthread_rwlock_t *)lock);
}

/*
 * In a forked child the forking thread's list is a copy.  Private locks it
 * held are held in the child's copy of them too; process-shared ones are
 * still the parent's, so the child must not act as their owner.
 */
static void held_after_fork_in_child(void)
{
	held_filter(is_private_lock);
}

__attribute__((constructor)) static void libbravo_load(void)
{
	pthread_atfork(NULL, NULL, held_after_fork_in_child);
	real_resolve();
	config_load();
	if (config.stats)
		stats_start(variant_name, config.stats_file);
	variant_load();
	config_announce(variant_name, variant_detail());
}
