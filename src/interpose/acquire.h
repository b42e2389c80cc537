/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * acquire.h - what the two acquisition paths share: rwlock.c's plain path
 * and observed.c's (strict mode, the profile, its samples).
 *
 * Map: the load (fast_paths, ensure_loaded) -> the caller's own holds
 * (holds_answer: its list entry, a write hold the lock names) -> the lock
 * (take: the variant's try-lock or blocking call, then the hold listed).
 * Both paths inline these, so neither pays a call for sharing them.
 */
#ifndef LIBBRAVO_ACQUIRE_H
#define LIBBRAVO_ACQUIRE_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "../../locks/hidden.h"
#include "../diag/profile.h"
#include "../diag/stats.h"
#include "../variants/variant.h"
#include "handle.h"
#include "handoff.h"
#include "held.h"
#include "real.h"

/* ---- the load (rwlock.c) ---- */

/*
 * The write fast path and the read try-lock path open once the library is
 * loaded, unless strict mode or statistics want to see every call.  With
 * the profile they are sampled: shut inline, and taken out of line
 * (acquire_sampled, from acquire_observed), where one acquisition in
 * config.profile_sample is counted (BRAVO_PROFILE_SAMPLE=1: shut).
 * Acquire/release: a thread that finds them open or sampled finds glibc's
 * functions resolved (BRAVO-pthread's try-locks call them) and the
 * profile started, as ensure_loaded would have.
 */
enum fast_paths { FAST_PATHS_SHUT, FAST_PATHS_OPEN, FAST_PATHS_SAMPLED };
/* A variant with paths that do not wait (variant.h): the profile samples them. */
#if defined(VARIANT_READ_NOWAIT) && defined(VARIANT_WRITE_FAST)
#define SAMPLED_FAST_PATHS 1
#endif
extern _Atomic uint8_t fast_paths LIBBRAVO_HIDDEN;

/* Set once the load is done (release; ensure_loaded acquires). */
extern atomic_bool libbravo_loaded LIBBRAVO_HIDDEN;
void libbravo_load(void) LIBBRAVO_HIDDEN;

static inline void ensure_loaded(void)
{
	if (__builtin_expect(!atomic_load_explicit(&libbravo_loaded, memory_order_acquire), 0))
		libbravo_load();
}

/* ---- the observed path (observed.c) ---- */

/* rwlock_acquire before the load, in strict mode or with the profile. */
int acquire_observed(pthread_rwlock_t *rw, enum held_mode mode, bool try,
		     const struct deadline *dl, const void *caller) LIBBRAVO_HIDDEN;
/* Strict mode: a misuse gets its POSIX error and a line on stderr. */
int misuse(int err, const char *call, const void *rw, const char *what,
	   const void *caller) LIBBRAVO_HIDDEN;
/* At load, with BRAVO_PROFILE: the records, and glibc's unlock wrapped. */
void profile_load(void) LIBBRAVO_HIDDEN;

/* ---- holds the lock underneath answers for (variant.h, VARIANT_UNDER_UNLISTED) ---- */

#ifdef VARIANT_UNDER_UNLISTED
/*
 * Set once by the load outside strict mode, before the fast paths open,
 * and never cleared: the variant's holds of its lock underneath (data 0)
 * are then kept off the held-lock list.  Clear before the load and in
 * strict mode, where every hold is listed (strict mode's EDEADLK, EPERM
 * and its destroy check read the list).  A thread that lists a hold
 * before the load still finds its entry at the unlock.
 */
extern atomic_bool under_holds_unlisted LIBBRAVO_HIDDEN;

static inline bool under_unlisted(void)
{
	return atomic_load_explicit(&under_holds_unlisted, memory_order_relaxed);
}
#else
static inline bool under_unlisted(void)
{
	return false;
}
#endif

/* A read hold of data just taken that no list entry is to name. */
static inline bool hold_unlisted_by_design(uintptr_t data)
{
	return data == 0 && under_unlisted();
}

/* ---- out of line in rwlock.c ---- */

bool write_named_other(pthread_rwlock_t *rw, pid_t writer, bool unlocking) LIBBRAVO_HIDDEN;
int hold_unlisted(pthread_rwlock_t *rw, uintptr_t data, bool try,
		  const struct deadline *dl) LIBBRAVO_HIDDEN;
#ifdef VARIANT_UNDER_UNLISTED
int hold_reentered(pthread_rwlock_t *rw) LIBBRAVO_HIDDEN;
int hold_fast_to_under(pthread_rwlock_t *rw, const struct deadline *dl) LIBBRAVO_HIDDEN;
#endif

/*
 * A hold of the lock underneath just taken (data 0) that is not to be
 * listed: unlisted, or counted on the caller's entry of rw if it lists
 * one (hold_reentered).  0.
 */
static inline int hold_under_unlisted(pthread_rwlock_t *rw)
{
#ifdef VARIANT_UNDER_UNLISTED
	if (!held_none())
		return hold_reentered(rw);
#endif
	(void)rw;
	return 0;
}


/* ---- the algorithm, for private locks ---- */

static inline int algo_trylock(pthread_rwlock_t *rw, enum held_mode mode, uintptr_t *data)
{
	return mode == HELD_READ ? variant_read_trylock(rw, data)
				 : variant_write_trylock(rw, data);
}

static inline int algo_lock(pthread_rwlock_t *rw, enum held_mode mode, uintptr_t *data,
		     const struct deadline *dl)
{
	return mode == HELD_READ ? variant_read_lock(rw, data, dl)
				 : variant_write_lock(rw, data, dl);
}

/* An own read entry whose hold another thread released: forget it. */
static inline bool held_handed_off(pthread_rwlock_t *rw, struct held *h)
{
	uintptr_t data = h->data;

	if (held_mode_of(h) != HELD_READ ||
	    !handoff_take(rw, variant_hold_class(rw, data), handle_life(rw)))
		return false;
	held_remove(h);
	variant_read_forget(rw, data);
	return true;
}

/* An own entry of an earlier life of the lock (variant_hold_stale): forget it. */
static inline bool held_stale(pthread_rwlock_t *rw, struct held *h)
{
	uintptr_t data = h->data;

	if (!variant_hold_stale(rw, data))
		return false;
	held_remove(h);
	variant_read_forget(rw, data);
	return true;
}

/* ---- write holds named in the lock (variant.h, VARIANT_WRITE_OWNER) ---- */

/* True if the caller holds rw for writing; unlocking: the caller says it does. */
static inline bool write_held_by_self(pthread_rwlock_t *rw, bool unlocking)
{
	pid_t writer = handle_writer(rw);

	if (__builtin_expect(writer == 0, 1))
		return false;
	writer = handle_writer_id(writer);
	return writer == held_self() || write_named_other(rw, writer, unlocking);
}

/* The kind of lock rw is, from its bytes. */
static inline enum profile_kind profile_kind_of(pthread_rwlock_t *rw)
{
	if (handle_is_pshared(rw))
		return PROFILE_KIND_PSHARED;
	return handle_prefers_writers(rw) ? PROFILE_KIND_WRITER_PREF : PROFILE_KIND_DEFAULT;
}

/* ---- process-shared locks: glibc's, in place ---- */

static inline int pshared_call(pthread_rwlock_t *rw, enum held_mode mode, bool try,
			const struct deadline *dl)
{
	const struct real_rwlock *g = real();

	if (try)
		return mode == HELD_READ ? g->tryrdlock(rw) : g->trywrlock(rw);
	if (!dl)
		return mode == HELD_READ ? g->rdlock(rw) : g->wrlock(rw);
	return mode == HELD_READ ? g->clockrdlock(rw, dl->clock, dl->abstime)
				 : g->clockwrlock(rw, dl->clock, dl->abstime);
}

/* ---- the caller's holds, then the lock ---- */

/* What the caller's own entry says about a new request; -1: go to the lock. */
static inline int held_check(struct held *h, enum held_mode mode, bool try)
{
	if (held_mode_of(h) == HELD_WRITE || mode == HELD_WRITE)
		return try ? EBUSY : EDEADLK;
	if (h->reentries == UINT32_MAX - 1)
		return EAGAIN;
	h->reentries++;
	stats_add(STAT_READ_REENTRIES, 1);
	return 0;
}

/*
 * List a read hold just taken, or keep it unlisted (hold_unlisted); a
 * hold of the lock underneath that lock answers for is not listed.
 */
static inline int hold_listed(pthread_rwlock_t *rw, uintptr_t data, bool try,
			      const struct deadline *dl)
{
	if (hold_unlisted_by_design(data))
		return hold_under_unlisted(rw);
	if (__builtin_expect(held_push(rw, HELD_READ, data), 1))
		return 0;
	return hold_unlisted(rw, data, try, dl);
}

/*
 * What the caller's own holds of rw answer a new request with: a read
 * re-entry (0, counted), EDEADLK, EBUSY or EAGAIN; -1: go to the lock.
 *
 * Where the lock underneath answers for its holds (under_unlisted), only
 * fast holds (and guests) are listed, and an entry answers as that lock
 * would have answered for a read hold of its own, so that the result
 * does not depend on the bias.  A write request goes to the lock: a
 * try-lock finds the caller's own slot (EBUSY), and a write that waits
 * first has the caller's fast holds made holds of the lock underneath
 * (hold_fast_to_under), where it then waits for them as glibc's does
 * (ETIMEDOUT; for ever; or until another thread's unlock releases them).
 * So does a read of a writer-preferring lock (behind a waiting writer
 * it waits, or gets EBUSY, as glibc's re-entry does).  A read re-entry
 * of a default-kind lock is counted: glibc lets a reader in again
 * whatever waits, which the lock underneath, not seeing the fast hold,
 * could refuse while a writer scans for it.  Stale and handed-off
 * entries are dropped either way.  A write hold the lock names answers
 * as glibc's own does (EDEADLK, EBUSY).
 */
static inline __attribute__((always_inline)) int holds_answer(pthread_rwlock_t *rw,
							      enum held_mode mode, bool try,
							      const struct deadline *dl)
{
	struct held *h;
	bool to_under = false;
	int r = -1;

	held_pin(); /* h stays where it is (held.h) */
	h = held_find(rw);
	if (h && (held_stale(rw, h) || (handoff_any() && held_handed_off(rw, h))))
		h = NULL;
	if (h && under_unlisted() && (mode == HELD_WRITE || handle_prefers_writers(rw))) {
		/* the lock underneath answers */
		to_under = mode == HELD_WRITE && !try && h->data != VARIANT_GUEST;
		h = NULL;
	}
	if (h)
		r = held_check(h, mode, try);
	held_unpin();
#ifdef VARIANT_UNDER_UNLISTED
	if (to_under && (r = hold_fast_to_under(rw, dl)) == 0)
		r = -1;
#else
	(void)to_under;
	(void)dl;
#endif
	if (r < 0 && write_held_by_self(rw, false))
		r = try ? EBUSY : EDEADLK;
	return r;
}

/*
 * The lock itself, for a caller that holds none of it.  dl == NULL: wait
 * forever; try: never wait.  Timed calls try first, and a deadline in the
 * past (negative tv_sec) then times out at once.
 */
static inline __attribute__((always_inline)) int take(pthread_rwlock_t *rw, enum held_mode mode,
						      bool try, const struct deadline *dl)
{
	/* A read waited for stays marked until it is listed (wait.h, wait_read_now). */
	struct wait_read outer = wait_read_save();
	uintptr_t data = 0;
	int r;

	if (try || (dl && dl->abstime)) {
		r = algo_trylock(rw, mode, &data);
		if (r == 0 || try)
			goto out;
		if (dl->abstime->tv_sec < 0) {
			r = ETIMEDOUT;
			goto out;
		}
	}
	r = algo_lock(rw, mode, &data, dl);
out:
	if (r == 0 && mode == HELD_READ)
		r = hold_listed(rw, data, try, dl);
	wait_read_restore(&outer);
	if (r)
		return stats_error(r);
	stats_add(mode == HELD_READ ? STAT_READS : STAT_WRITES, 1);
	return 0;
}

#endif
