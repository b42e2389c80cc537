/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * variant.h - the lock algorithm behind the exported functions.
 *
 * Exactly one implementation is compiled into each shared object and
 * included here, so the lock paths inline it into the exported functions
 * (rwlock.c).  The build names the variant (configure.ac's list) and
 * forces its glue header, src/variants/NAME.h, into every source file:
 * LIBBRAVO_VARIANT_NAME is "NAME", and the header's switches pick the
 * implementation below.  rwlock.c has already dealt with errno rules,
 * recursion and process-shared locks; a variant only locks.  Each
 * provides, as static functions:
 *
 *   variant_load(), variant_detail()      once at load; what the start-up
 *                                         line says about it
 *   variant_init(rw, attr)                0
 *   variant_destroy(rw)                   strict mode: 0 (releasing what the
 *                                         lock owns), or EBUSY if held or
 *                                         waited for (changing nothing)
 *   variant_is_idle(rw)                   nobody holds or waits (a snapshot)
 *   variant_read_lock(rw, &data, dl)      0, ETIMEDOUT (EAGAIN: no memory)
 *   variant_read_trylock(rw, &data)       0, EBUSY (EAGAIN: no memory)
 *   variant_read_unlock(rw, data)
 *   variant_write_lock(rw, &data, dl)     0, ETIMEDOUT (EAGAIN: no memory)
 *   variant_write_trylock(rw, &data)      0, EBUSY (EAGAIN: no memory)
 *   variant_write_unlock(rw, data)
 *
 * For unlocks by a thread that holds nothing (handoff.h):
 *
 *   variant_read_release_other(rw, &cls)  release one read hold of another
 *                                         thread, saying its class in cls;
 *                                         false if there is none
 *   variant_hold_class(rw, data)          which holds are interchangeable:
 *                                         0 for the plain class (below)
 *   variant_read_held_class(rw, cls)      does the lock have a read hold
 *                                         of class cls (a snapshot)
 *   variant_read_forget(rw, data)         a hold released on its reader's
 *                                         behalf is gone: free what only
 *                                         the reader may free (a BRAVO slot)
 *
 * For holds that cannot be listed (held.h: no memory), reads of the
 * *plain* class, data 0, which the unlock of any such hold may release:
 *
 *   variant_read_lock_plain(rw, dl)       0, ETIMEDOUT
 *   variant_read_trylock_plain(rw)        0, EBUSY
 *
 * data is the per-acquisition word carried in the held-lock list from the
 * lock to its unlock (BRAVO slot, CPU index, NUMA node).  A read by a
 * signal handler of the lock whose writer side its own thread holds while
 * it waits (wait.h) is let in as a *guest* where the algorithm does not do
 * it itself: data VARIANT_GUEST, and its unlock touches nothing.
 *
 * A variant whose holds can outlive their lock's memory being reused for
 * a new lock, and can tell (BRAVO: a fast hold's slot holds the old
 * life's token), provides
 *
 *   variant_hold_stale(rw, data)          true: the hold is of an earlier
 *                                         life of the lock; forget it
 *
 * A variant with a read fast path that needs no call (BRAVO's table)
 * defines VARIANT_READ_FAST and provides, for rwlock.c's fast paths:
 *
 *   variant_read_fast(rw, &data)          true: read-held through it (no
 *                                         call, no wait); false: use
 *                                         variant_read_lock.  rwlock.c
 *                                         calls it without looking in the
 *                                         held-lock list, so it must fail
 *                                         while the caller holds rw for
 *                                         writing, and a second success by
 *                                         a reader of rw must be a second,
 *                                         independent hold (BRAVO: bias is
 *                                         off while write-held; a reader's
 *                                         slot is taken or another is)
 *   variant_read_fast_unlock(data)        release it (no call)
 *
 * A variant whose read, when that fast path fails or there is none, can
 * often be taken without waiting and without a list lookup defines
 * VARIANT_READ_NOWAIT and provides
 *
 *   variant_read_nowait(rw, &data)        READ_NOWAIT_HELD: read-held
 *                                         (data for its unlock), taken
 *                                         without waiting (BA's try-lock;
 *                                         BRAVO's lock underneath while
 *                                         bias stays off, data 0; the heap
 *                                         variants' block try-lock) and
 *                                         released by variant_read_unlock;
 *                                         READ_NOWAIT_MISS: use
 *                                         variant_read_lock;
 *                                         READ_NOWAIT_SETTLE (BRAVO, bias
 *                                         on): call variant_read_settle
 *   variant_read_settle(rw, &data)        true: read-held through the
 *                                         variant's fast path with what
 *                                         the inline one leaves out (a
 *                                         call, no wait), data as
 *                                         variant_read_fast's; false: use
 *                                         variant_read_lock
 *
 *                                         The same rules as
 *                                         variant_read_fast (they fail
 *                                         while the caller holds rw for
 *                                         writing: BA's writer phase,
 *                                         glibc's write lock, BRAVO's bias
 *                                         off); rwlock.c keeps them shut in
 *                                         strict mode, with statistics,
 *                                         before the load and for
 *                                         process-shared locks, unless the
 *                                         variant defines
 *                                         VARIANT_READ_NOWAIT_PSHARED: its
 *                                         nowait read answers MISS for them
 *                                         without touching them (BRAVO:
 *                                         their word stays 0)
 *
 * For the profile (profile.h), a variant with BRAVO's table also provides
 *
 *   variant_read_seen(rw)                 the lock word as a reader finds
 *                                         it, before its acquisition
 *   variant_read_class(rw, data, seen)    how that read went: through the
 *                                         table, or slowly and why (enum
 *                                         profile_read)
 *
 *                                         (variants without it: 0 and
 *                                         PROFILE_READ_NA)
 *
 * A variant whose read unlock of a hold with data 0 (one of the lock
 * underneath) needs no frame -- its waking, if any, out of line --
 * defines VARIANT_READ_UNLOCK_UNDER and provides
 *
 *   variant_read_unlock_under(rw)         variant_read_unlock(rw, 0),
 *                                         returning 0, inline in the
 *                                         exported unlock
 *
 * A variant whose uncontended write lock is a try-lock defines
 * VARIANT_WRITE_FAST and provides
 *
 *   variant_write_fast(rw)                WRITE_FAST_HELD: write-held
 *                                         (data 0), taken without waiting;
 *                                         WRITE_FAST_MISS: use
 *                                         variant_write_lock;
 *                                         WRITE_FAST_REVOKE (BRAVO): the
 *                                         lock underneath is held, bias is
 *                                         to be revoked: call
 *                                         variant_write_fast_revoke
 *   variant_write_fast_revoke(rw)         true: write-held; false: nothing
 *                                         held, use variant_write_lock
 *                                         (VARIANT_WRITE_FAST_REVOKE; needs
 *                                         VARIANT_WRITE_OWNER: no list push)
 *
 *                                         Both are called without a
 *                                         held-list lookup, so together they
 *                                         must fail while the caller holds
 *                                         rw in any mode (BA: the mutex or
 *                                         the readers; BRAVO: the same, or
 *                                         its own slot in the table, which
 *                                         the revocation finds)
 *
 *                                         They are not called for
 *                                         process-shared locks (glibc's
 *                                         bytes), unless the variant defines
 *                                         VARIANT_WRITE_FAST_PSHARED: its
 *                                         write fast path is glibc's
 *                                         try-lock, right for them as well
 *                                         (BRAVO-pthread: their BRAVO word
 *                                         stays 0, no reader enables bias)
 *
 *   variant_write_fast_wait(rw)           as variant_write_fast, for a
 *                                         blocking write lock by a thread
 *                                         that lists no hold and has never
 *                                         forked: the lock underneath's
 *                                         blocking write lock instead of
 *                                         its try-lock, where that waits
 *                                         exactly as the full path would
 *                                         (VARIANT_WRITE_FAST_WAIT, which
 *                                         only a variant that provides it
 *                                         defines; BRAVO-pthread on glibc's
 *                                         default kind: glibc's wrlock; a
 *                                         bias found then is revoked as
 *                                         after the try-lock)
 *
 * A variant whose plain holds (data 0) are the holds of a lock that can
 * answer for them itself -- glibc's rwlock, which counts its readers and
 * lets any thread release one (BRAVO-pthread) -- defines
 * VARIANT_UNDER_UNLISTED and provides
 *
 *   variant_read_held_class(rw, 0)        (above) the lock underneath is
 *                                         read-held
 *   variant_read_unlock_under(rw)         (below) release one such hold
 *
 * rwlock.c then keeps those holds off the held-lock list outside strict
 * mode (acquire.h, under_holds_unlisted): such a read is the lock
 * underneath and nothing else, its re-entry a new hold of it, a write by
 * its reader a wait in it, and an unlock that finds no entry of the
 * caller's releases a hold of it, all as that lock itself answers.  Only
 * holds that another thread cannot release (BRAVO's table slots, guests)
 * are listed.
 *
 * Every variant's lock names its writer by thread id while write-held
 * (handle.h, __cur_writer; the id is held_self()) and defines
 * VARIANT_WRITE_OWNER: rwlock.c keeps write holds out of the held-lock
 * list and finds them in the lock, as glibc does.  Adopting a lock across
 * fork() is then rwlock.c's (it renames the writer).  If its
 * write unlock is glibc's pthread_rwlock_unlock and nothing else
 * (BRAVO-pthread), it also defines VARIANT_WRITE_UNLOCK_GLIBC, and
 * rwlock.c calls glibc's directly, process-shared lock or not.
 */
#ifndef LIBBRAVO_VARIANT_H
#define LIBBRAVO_VARIANT_H

#include <pthread.h>
#include <stdint.h>

#include "../../locks/wait.h"
#include "../diag/profile.h"

#ifndef LIBBRAVO_VARIANT_NAME
#error "no lock variant selected: build with -DLIBBRAVO_VARIANT_NAME and -include src/variants/NAME.h"
#endif
/* The name --with-lock, the start-up line and the statistics use. */
static const char variant_name[] = LIBBRAVO_VARIANT_NAME;

/* What a variant's read that does not wait and its write fast path found (see above). */
enum read_nowait { READ_NOWAIT_MISS, READ_NOWAIT_HELD, READ_NOWAIT_SETTLE };
enum write_fast { WRITE_FAST_MISS, WRITE_FAST_HELD, WRITE_FAST_REVOKE };

#if defined(LIBBRAVO_VARIANT_BA)
#include "glue_ba.h"
#elif defined(LIBBRAVO_UNDER_BA) || defined(LIBBRAVO_UNDER_PTHREAD)
#include "glue_bravo.h"
#elif defined(LIBBRAVO_VARIANT_PERCPU)
#include "glue_percpu.h"
#elif defined(LIBBRAVO_VARIANT_COHORT)
#include "glue_cohort.h"
#elif defined(LIBBRAVO_VARIANT_GLIBC)
#include "glue_glibc.h" /* not a variant: the profile's view of glibc's lock */
#else
#error "src/variants/" LIBBRAVO_VARIANT_NAME ".h selects no implementation"
#endif

#ifdef VARIANT_READ_FAST
static const bool variant_has_bias = true; /* BRAVO: its counters are printed */
#else
static const bool variant_has_bias = false;

/* No read fast path: every read takes rwlock.c's full path. */
static inline bool variant_read_fast(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)rw;
	(void)data;
	return false;
}

static inline void variant_read_fast_unlock(uintptr_t data)
{
	(void)data;
}

static inline uint64_t variant_read_seen(pthread_rwlock_t *rw)
{
	(void)rw;
	return 0;
}

static inline enum profile_read variant_read_class(pthread_rwlock_t *rw, uintptr_t data,
						   uint64_t seen)
{
	(void)rw;
	(void)data;
	(void)seen;
	return PROFILE_READ_NA;
}
#endif

#ifndef VARIANT_READ_NOWAIT
static inline enum read_nowait variant_read_nowait(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)rw;
	*data = 0;
	return READ_NOWAIT_MISS;
}
#endif

#ifndef VARIANT_READ_FAST
/* Only BRAVO's fast holds can tell that their lock's life ended. */
static inline bool variant_hold_stale(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	(void)data;
	return false;
}
#endif

/*
 * A variant whose release of a read hold must first find what to release
 * (a heap block) defines VARIANT_READ_UNLOCK_TARGET and provides
 *
 *   variant_read_unlock_target(rw, data)  what the release acts on,
 *                                         found while the hold is still
 *                                         listed
 *   variant_read_unlock_at(t, rw, data)   variant_read_unlock, given that
 *
 * so that rwlock.c takes a hold off the list only right before the
 * atomic that releases it: a signal handler that interrupts between the
 * two finds its thread's read neither listed nor released, and its own
 * read of the lock may wait for a writer that waits for that read
 * (libbravo(7), FAULTS: the few instructions that remain).
 */
#ifndef VARIANT_READ_UNLOCK_TARGET
static inline void *variant_read_unlock_target(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)data;
	return rw;
}

static inline void variant_read_unlock_at(void *target, pthread_rwlock_t *rw, uintptr_t data)
{
	(void)target;
	variant_read_unlock(rw, data);
}
#endif

/* The data of a guest read (see the top): every variant's is this one. */
#define VARIANT_GUEST UINTPTR_MAX

#ifndef VARIANT_WRITE_OWNER
#error "every variant names its writer in the lock (handle.h): write holds are not listed"
#endif

#if !defined(VARIANT_READ_NOWAIT) || !defined(VARIANT_READ_FAST)
/* Never called: this variant's read that does not wait never asks to settle. */
static inline bool variant_read_settle(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)rw;
	*data = 0;
	return false;
}
#endif

#ifndef VARIANT_WRITE_FAST
static inline enum write_fast variant_write_fast(pthread_rwlock_t *rw)
{
	(void)rw;
	return WRITE_FAST_MISS;
}
#endif

#ifndef VARIANT_WRITE_FAST_PSHARED
#define VARIANT_WRITE_FAST_PSHARED 0
#endif

#ifndef VARIANT_READ_NOWAIT_PSHARED
#define VARIANT_READ_NOWAIT_PSHARED 0
#endif

#ifndef VARIANT_WRITE_FAST_REVOKE
/* Never called: this variant's write fast path never finds bias to revoke. */
static inline bool variant_write_fast_revoke(pthread_rwlock_t *rw)
{
	(void)rw;
	return false;
}
#endif

#endif
