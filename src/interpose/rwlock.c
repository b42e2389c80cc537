/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rwlock.c - the exported pthread_rwlock_* functions, their inline fast
 * paths, and the plain path behind them.
 *
 * Thin by design: handle -> held-lock list -> algorithm.  Map of a call:
 *
 *   rdlock, tryrdlock   rdlock_fast (a BRAVO table slot, listed inline)
 *                       -> rdlock_slow (the variant's read that does not
 *                       wait) -> rwlock_acquire
 *   wrlock, trywrlock   wrlock_fast (the variant's try-lock, the writer
 *                       named in the lock) -> wrlock_revoke (BRAVO bias)
 *                       -> rwlock_acquire
 *   timed and clock forms                     -> rwlock_acquire
 *   rwlock_acquire      process-shared: glibc's; else holds_answer, then
 *                       take (acquire.h); before the load, in strict mode
 *                       or with the profile: acquire_observed (observed.c)
 *   unlock              the most recent entry, if it is rw's single read
 *                       hold, or the write hold the lock names, or
 *                       (BRAVO-pthread, nothing listed) a read hold of
 *                       glibc's lock; else unlock_slow (the lock's writer,
 *                       the list, glibc's read holds, unlisted holds, a
 *                       release on another reader's behalf)
 *
 * The contract is glibc 2.36's results (doc/compatibility.md):
 *
 *   EINVAL   NULL lock; a timed call's clock not REALTIME/MONOTONIC or
 *            tv_nsec outside [0, 1e9) (checked first, as glibc does)
 *   EDEADLK  rdlock/timedrdlock while holding the lock for writing, and the
 *            write forms while holding it at all (glibc hangs on
 *            read-then-write; we report it, but where the lock underneath
 *            answers for reads -- BRAVO-pthread outside strict mode,
 *            VARIANT_UNDER_UNLISTED -- the write waits there, as glibc's)
 *   EBUSY    try-locks that cannot have the lock (also when the caller
 *            holds it, except a read re-entry)
 *   ETIMEDOUT the deadline passed while the lock was busy
 *   EAGAIN   read re-entry count exhausted (2^32 - 1 holds)
 *
 * Never for lack of memory: a read hold that cannot be listed is kept
 * unlisted (held.h).  No call is a cancellation point, and none acts on a
 * cancellation request at any wait (wait.h).
 *
 * destroy and unlock succeed as glibc's do: destroy of a held lock returns
 * 0, and an unlock by a thread that holds nothing releases one read hold
 * on another reader's behalf (handoff.h).  Strict mode (BRAVO_CHECK=1)
 * adds POSIX's recommended errors instead -- EBUSY from destroy of a held
 * lock, EPERM from unlock by a non-holder, EINVAL on a destroyed lock --
 * each with one line on stderr naming the call, the lock and the caller.
 *
 * Write holds are known from the lock, which names its writer (variant.h,
 * VARIANT_WRITE_OWNER), as glibc knows its own, and are not in the list:
 * the uncontended write path is the variant's try-lock and a check, its
 * unlock a compare and a tail call.
 *
 * A read re-entry only bumps the recursion count, so a thread re-reading a
 * lock never queues behind a waiting writer (BRAVO-pthread outside strict
 * mode: a re-entry of a listed, fast, hold of a default-kind lock; any
 * other is a new hold of glibc's lock, as glibc's).  An entry is pushed only once
 * the lock is taken and removed before it is released, so a signal handler
 * that locks on the same thread never finds a hold that is not there.
 * Process-shared locks are glibc's, operated in place with no bookkeeping.
 * No call changes errno.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../diag/message.h"
#include "../diag/stats.h"
#include "../variants/variant.h"
#include "acquire.h"
#include "config.h"
#include "handle.h"
#include "handoff.h"
#include "held.h"
#include "page_kind.h"
#include "pool.h"
#include "real.h"

#define EXPORT __attribute__((visibility("default")))
#define CALLER __builtin_return_address(0)

/*
 * glibc declares these functions nonnull, so GCC drops a plain NULL test
 * of their argument (-fno-delete-null-pointer-checks does not stop it).
 * forget_nonnull hides where a pointer came from.  The exports with fast
 * paths pass their argument through it once, on entry, and test it
 * plainly; null_ptr tests a hidden copy (one move more), for the paths
 * that get rw from elsewhere.
 */
#define forget_nonnull(p) __asm__("" : "+r"(p))

static inline bool null_ptr(const void *p)
{
	forget_nonnull(p);
	return p == NULL;
}

/* ---- loading: the constructor, or the first call if that comes first ---- */

atomic_bool libbravo_loaded;
static __thread bool loading;

/* The fast paths' state (acquire.h, enum fast_paths). */
_Atomic uint8_t fast_paths;

#ifdef VARIANT_UNDER_UNLISTED
/* Holds of the lock underneath kept off the list (acquire.h). */
atomic_bool under_holds_unlisted;
#endif

/*
 * Loaded, and neither strict mode nor the profile wants to see the
 * acquisitions: rwlock_acquire's one test for all three, so that the
 * variants whose every call takes the full path (Cohort-RW, Per-CPU) pay
 * nothing for the profile.  Release/acquire as loaded: a thread that finds
 * it set finds the load done.
 */
static atomic_bool acquire_plain;

static enum fast_paths fast_paths_chosen(void)
{
	if (config.strict || config.stats)
		return FAST_PATHS_SHUT;
	if (!config.profile)
		return FAST_PATHS_OPEN;
#ifdef SAMPLED_FAST_PATHS
	if (profile_on && config.profile_sample > 1)
		return FAST_PATHS_SAMPLED;
#endif
	return FAST_PATHS_SHUT;
}

static void libbravo_load_once(void)
{
	int saved_errno = errno, cancel_state;

	/* The first call may be the program's: no cancellation point acts, errno stays. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	/* First: its fork handler runs last before a fork, after the tables' (table_lock.h). */
	pool_atfork();
	real_resolve();
	config_load();
	config_scrub_secure(); /* idempotent: a first call may come before the constructor */
	if (config.stats)
		stats_start(variant_name, config.stats_file, variant_has_bias);
	if (config.profile)
		profile_load();
	handoff_atfork();
	held_init();
	variant_load();
	config_announce(variant_name, variant_detail());
#ifdef VARIANT_UNDER_UNLISTED
	/* Before the fast paths open: a thread that finds them open finds it set. */
	atomic_store_explicit(&under_holds_unlisted, !config.strict, memory_order_relaxed);
#endif
	atomic_store_explicit(&fast_paths, fast_paths_chosen(), memory_order_release);
	pthread_setcancelstate(cancel_state, NULL);
	errno = saved_errno;
}

void libbravo_load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	/* A call made by the load itself (a library it calls) finds defaults. */
	if (loading)
		return;
	loading = true;
	pthread_once(&once, libbravo_load_once);
	loading = false;
	atomic_store_explicit(&libbravo_loaded, true, memory_order_release);
	atomic_store_explicit(&acquire_plain, !config.strict && !profile_on, memory_order_release);
}

/*
 * Before anything of the program that comes after the preload: a
 * privileged process drops its caller's BRAVO_* (config.c).
 */
__attribute__((constructor(101))) static void libbravo_constructor(void)
{
	config_scrub_secure();
	libbravo_load();
}

/* ---- holds released on another reader's behalf (handoff.h) ---- */

/*
 * Release one read hold of rw on some other reader's behalf, recording it
 * (handoff.h) in the lock's life; false if the lock has none that this
 * variant can release, or no record can be had.
 */
static bool release_for_other(pthread_rwlock_t *rw)
{
	uint32_t life = handle_life_ensure(rw);
	uintptr_t cls = 0;

	if (!handoff_reserve())
		return false;
	if (!variant_read_release_other(rw, &cls)) {
		handoff_unreserve();
		return false;
	}
	if (hold_unlisted_by_design(cls)) {
		/* A hold of the lock underneath: no entry names it, none is to be told. */
		handoff_unreserve();
		return true;
	}
	handoff_add(rw, cls, life);
	return true;
}

/* ---- write holds named in the lock (variant.h, VARIANT_WRITE_OWNER) ---- */

/*
 * May the caller adopt a lock named by writer, an id its thread had
 * before a fork (held.h)?  Only if that cannot be another thread's hold:
 * the lock's memory is the process's own copy (not shared with the parent
 * that may still hold it: page_kind.h), and no thread of this process has
 * that id now (ids are recycled: a later thread may have been given it,
 * and hold the lock).  A thread of the parent's past that held it cannot
 * be inside: in this process it never ran.
 */
static bool adoption_safe(pthread_rwlock_t *rw, pid_t writer)
{
	int saved_errno = errno;
	bool mine = syscall(SYS_tgkill, getpid(), writer, 0) != 0 && errno == ESRCH;

	errno = saved_errno;
	return mine && !page_shared(rw);
}

/*
 * A lock that names a writer other than the caller's id: the caller still
 * holds it if the name is the id this thread had before a fork and
 * adopting it is safe (adoption_safe); the lock is then given the child's
 * id, which glibc's unlock looks for.  unlocking: the caller's id may be
 * stale (a fork that ran no handlers): before saying no, ask the kernel
 * again; only unlocks ask, where "no" leads to the misuse paths.
 */
__attribute__((noinline)) bool write_named_other(pthread_rwlock_t *rw, pid_t writer,
							bool unlocking)
{
	if (unlocking && writer == held_self_refresh())
		return true;
	if (!held_forked_from(writer) || !adoption_safe(rw, writer))
		return false;
	/* keeping the profile's mark (handle.h): the unlock still ends the hold */
	handle_set_writer(rw, held_self() | (handle_writer(rw) & HANDLE_WRITER_PROFILED));
	return true;
}

/* ---- the one acquisition path ---- */

/*
 * A write hold of rw ends (unlock_slow): its timing too.  Holds in glibc's
 * bytes end in unlock_glibc_profiled instead.
 */
static inline void profile_release(pthread_rwlock_t *rw)
{
#ifndef VARIANT_WRITE_UNLOCK_GLIBC
	if (__builtin_expect(profile_on, 0) && profile_holds_open())
		profile_write_release(rw);
#else
	(void)rw;
#endif
}

static bool deadline_valid(const struct deadline *dl)
{
	if (dl->clock != CLOCK_REALTIME && dl->clock != CLOCK_MONOTONIC)
		return false;
	/* NULL: glibc waits without a deadline. */
	return !dl->abstime || (dl->abstime->tv_nsec >= 0 && dl->abstime->tv_nsec < 1000000000);
}

/*
 * A read hold just taken (data) that the held-lock list has no room for
 * (no memory: held.h): keep it unlisted, of the plain class.  A hold of
 * another class is traded for a plain one (released, then taken again as
 * the call would: waiting, timed or not at all).  A guest read (wait.h)
 * touches no lock: it is only counted.  0, or what taking the plain hold
 * returned (EBUSY, ETIMEDOUT: the lock changed hands meanwhile).
 */
__attribute__((noinline)) int hold_unlisted(pthread_rwlock_t *rw, uintptr_t data, bool try,
						   const struct deadline *dl)
{
	int r;

	if (data == VARIANT_GUEST) {
		atomic_fetch_add_explicit(&held_tls.unlisted_guests, 1, memory_order_relaxed);
		return 0;
	}
	if (data != 0) {
		variant_read_unlock(rw, data);
		r = try ? variant_read_trylock_plain(rw) : variant_read_lock_plain(rw, dl);
		if (r)
			return r;
	}
	/* Where the lock underneath answers for its holds, this is one of them. */
	if (!hold_unlisted_by_design(0))
		held_unlisted_add();
	return 0;
}

#ifdef VARIANT_UNDER_UNLISTED
/*
 * A hold of the lock underneath just taken (data 0, left unlisted) by a
 * thread that lists some hold: if one is of rw (a fast hold), the new
 * hold is counted as that entry's re-entry instead, and the lock
 * underneath let go (after the count: the hold is never in neither).  So
 * a thread that lists a hold of rw holds rw only through that entry, and
 * a signal handler that reads a lock its thread holds fast releases, at
 * its unlock, the re-entry it added, never its thread's entry, which its
 * thread may be inside an unlock of (held.h: a handler leaves the list
 * as it found it).  Returns 0, the caller's result.
 */
__attribute__((noinline)) int hold_reentered(pthread_rwlock_t *rw)
{
	struct held *h;
	bool counted = false;

	held_pin(); /* h stays where it is (held.h) */
	h = held_find(rw);
	if (h && (held_stale(rw, h) || (handoff_any() && held_handed_off(rw, h))))
		h = NULL;
	if (h && h->reentries < UINT32_MAX - 1) {
		h->reentries++;
		counted = true;
	}
	held_unpin();
	if (counted)
		variant_read_unlock_under(rw);
	return 0;
}

/*
 * A write that waits, by a thread that lists holds of rw (holds_answer):
 * each of its fast holds, re-entries included, becomes a hold of the lock
 * underneath, where glibc would have it, so that the write waits for it
 * there as glibc's does -- for ever, until its deadline, or until another
 * thread's unlock releases it, as glibc lets one -- and not for its own
 * slot, which no other thread's unlock can free.  The holds underneath
 * are taken as the write waits (dl), before the entry goes and its slot
 * is freed: the caller holds rw all along.  0, or what taking one
 * returned (ETIMEDOUT): then the entry in hand is as it was (entries
 * made over before it stay so: the same holds, elsewhere).  A guest
 * entry is left: its write answers EDEADLK.
 */
__attribute__((noinline)) int hold_fast_to_under(pthread_rwlock_t *rw, const struct deadline *dl)
{
	for (;;) {
		struct held *h;
		uintptr_t data;
		uint32_t holds, n;
		int r = 0;

		held_pin();
		h = held_find(rw);
		if (!h || h->data == VARIANT_GUEST) {
			held_unpin();
			return 0;
		}
		data = h->data;
		holds = h->reentries + 1;
		held_unpin();
		/* A hold of the lock underneath listed before the load: already there. */
		for (n = 0; data != 0 && n < holds; n++)
			if ((r = variant_read_lock_plain(rw, dl)) != 0)
				break;
		if (r) {
			while (n-- > 0)
				variant_read_unlock_under(rw);
			return r;
		}
		held_pin(); /* a handler may have moved it meanwhile (held.h), not removed it */
		h = held_find(rw);
		if (h)
			held_remove(h);
		held_unpin();
		variant_read_forget(rw, data);
	}
}
#endif

/* The one acquisition path (see the top of the file). */
static inline __attribute__((always_inline)) int
rwlock_acquire(pthread_rwlock_t *rw, enum held_mode mode, bool try,
			  const struct deadline *dl, const void *caller)
{
	int r;

	if (null_ptr(rw))
		return stats_error(EINVAL);
	if (dl && !deadline_valid(dl))
		return stats_error(EINVAL);
	if (__builtin_expect(!atomic_load_explicit(&acquire_plain, memory_order_acquire), 0))
		return acquire_observed(rw, mode, try, dl, caller);
	if (handle_is_pshared(rw))
		return stats_error(pshared_call(rw, mode, try, dl));
	r = holds_answer(rw, mode, try, dl);
	if (r >= 0)
		return stats_error(r);
	return take(rw, mode, try, dl);
}

static int rwlock_acquire_timed(pthread_rwlock_t *rw, enum held_mode mode,
				clockid_t clk, const struct timespec *abstime, const void *caller)
{
	struct deadline dl = { abstime, clk };

	return rwlock_acquire(rw, mode, false, &dl, caller);
}

EXPORT int pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	int pshared = PTHREAD_PROCESS_PRIVATE, r;

	if (null_ptr(rw))
		return EINVAL;
	if (attr && pthread_rwlockattr_getpshared(attr, &pshared) != 0)
		return EINVAL;
	ensure_loaded();
	/* A new lock at this address: no hold of the old one carries over. */
	held_forget(rw);
	handoff_forget(rw);
	if (pshared == PTHREAD_PROCESS_SHARED)
		r = real()->init(rw, attr); /* sets __shared: glibc's from now on */
	else
		r = variant_init(rw, attr);
	if (__builtin_expect(profile_on, 0) && r == 0)
		profile_lock_init(rw, profile_kind_of(rw), CALLER); /* its next life */
	return r;
}

/* A destroy that succeeded: the profile's record of the lock's life ends. */
static int destroyed(pthread_rwlock_t *rw)
{
	if (__builtin_expect(profile_on, 0))
		profile_lock_destroy(rw);
	return 0;
}

EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *rw)
{
	const char *why = NULL;

	if (null_ptr(rw))
		return stats_error(EINVAL);
	if (handle_is_pshared(rw)) {
		int r = real()->destroy(rw);

		return r ? r : destroyed(rw);
	}
	if (!config.strict)
		/*
		 * glibc's destroy changes nothing, and neither do we: a heap
		 * block stays with its address (the registry gives it to the
		 * next lock there), so a thread still inside a call on the lock
		 * -- a waiter, one leaving after a time-out, a waker -- never
		 * touches freed memory, nor a block other than the lock's.  (An
		 * idle test cannot tell that no thread is about to enter: oprand
		 * --destroy-waited broke exclusion when idle blocks were swapped.)
		 */
		return destroyed(rw);
	if (handle_is_destroyed(rw))
		why = "the lock was already destroyed";
	else if (held_find(rw) || write_held_by_self(rw, false))
		why = "the calling thread holds the lock";
	else if (variant_destroy(rw) != 0)
		why = "another thread holds or waits for the lock";
	if (why)
		return misuse(handle_is_destroyed(rw) ? EINVAL : EBUSY, "pthread_rwlock_destroy",
			      rw, why, CALLER);
	handle_mark_destroyed(rw);
	return destroyed(rw);
}

/* The try-lock paths are open for rw (fast_paths); pshared_too: also if process-shared. */
static inline __attribute__((always_inline)) bool try_paths_open(pthread_rwlock_t *rw,
								 bool pshared_too)
{
	return atomic_load_explicit(&fast_paths, memory_order_acquire) == FAST_PATHS_OPEN &&
	       (pshared_too || !handle_is_pshared(rw));
}

/*
 * The read fast path: the variant's (a BRAVO table slot), recorded in the
 * held-lock list, with no call and no frame.  It may skip the list lookup:
 * a thread holding rw for writing finds bias revoked, and one that reads
 * it through the table already finds its own slot taken or takes a second
 * one (locks/bravo.h); a read hold of the lock underneath is simply
 * another hold.  The variant keeps it shut before the load (no bias yet)
 * and in strict mode or with statistics (which see every call); anything
 * else -- a full list, a process-shared lock (its BRAVO word is zero) --
 * takes rdlock_slow.  rw: through forget_nonnull.
 */
static inline __attribute__((always_inline)) bool rdlock_fast(pthread_rwlock_t *rw)
{
	uintptr_t data;

	if (rw == NULL)
		return false;
	if (!variant_read_fast(rw, &data))
		return false;
	if (__builtin_expect(held_push_fast(rw, HELD_READ | HELD_FAST, data), 1))
		return true;
	variant_read_fast_unlock(data);
	return false;
}

/* The full path of a read (rwlock_acquire), out of line: reached by tail calls. */
static __attribute__((noinline)) int rdlock_full(pthread_rwlock_t *rw, const void *caller, bool try)
{
	return rwlock_acquire(rw, HELD_READ, try, NULL, caller);
}

/*
 * The inline list had no room for the hold rdlock_slow took: undo it, take
 * the full path.  Out of line, so that rdlock_slow keeps no frame.
 */
static __attribute__((noinline)) int rdlock_undo_full(pthread_rwlock_t *rw, uintptr_t data,
						      const void *caller, bool try)
{
	variant_read_unlock(rw, data);
	return rdlock_full(rw, caller, try);
}

/*
 * The variant's fast path with what the inline one leaves out; out of
 * line, so that rdlock_slow's try-lock path keeps no frame for its call.
 */
static __attribute__((noinline)) int rdlock_settle(pthread_rwlock_t *rw, const void *caller,
						   bool try)
{
	uintptr_t data;

	if (variant_read_settle(rw, &data)) {
		if (__builtin_expect(held_push_fast(rw, HELD_READ | HELD_FAST, data), 1))
			return 0;
		variant_read_fast_unlock(data);
	}
	return rdlock_full(rw, caller, try);
}

/*
 * After rdlock_fast, the variant's read that does not wait
 * (variant_read_nowait): BA's read try-lock; under BRAVO the table's path
 * with the settling the inline one leaves out (the first fast reader
 * since bias came on), or while bias is off and this read would not
 * enable it, the try-lock of the lock underneath.  It is recorded without
 * a lookup under the same rules: it fails while the caller holds rw for
 * writing, and succeeds for a reader of rw only as a second hold, which
 * needs no lookup either (a re-entry behind a waiting writer fails it:
 * BA's writer phase, glibc's writer-preferring try-lock, BRAVO's waiting
 * writers; the full path then counts the re-entry, or, where the lock
 * underneath answers for its holds, takes a new one as that lock
 * would).  A hold of such a lock underneath (BRAVO-pthread's glibc
 * read) is not listed at all (variant.h, VARIANT_UNDER_UNLISTED).
 * Shut as the write fast path is, and for process-shared locks.
 *
 * Inline in both read exports; what needs a frame beyond the try-lock's
 * call is out of line.  (Out of line itself, behind a tail jump, it cost
 * bias-off reads 14-20 points of throughput at two threads, with the same
 * accesses.)  null_ptr,
 * not a plain test: a plain one lets GCC load the caller's address on
 * entry, giving the fast path a frame.
 */
static inline __attribute__((always_inline)) int rdlock_slow(pthread_rwlock_t *rw,
							      const void *caller, bool try)
{
	uintptr_t data;

	if (!null_ptr(rw) && try_paths_open(rw, VARIANT_READ_NOWAIT_PSHARED)) {
		switch (variant_read_nowait(rw, &data)) {
		case READ_NOWAIT_HELD:
#ifdef VARIANT_UNDER_UNLISTED
			/*
			 * A hold of the lock underneath, unlisted: the paths are
			 * open only once loaded and outside strict mode, so
			 * under_holds_unlisted is set (acquire.h).
			 */
			if (data == 0)
				return held_none() ? 0 : hold_reentered(rw);
#endif
			if (__builtin_expect(held_push_fast(rw, HELD_READ, data), 1))
				return 0;
			return rdlock_undo_full(rw, data, caller, try);
		case READ_NOWAIT_SETTLE:
			return rdlock_settle(rw, caller, try);
		case READ_NOWAIT_MISS:
			break;
		}
	}
	return rdlock_full(rw, caller, try);
}

EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *rw)
{
	forget_nonnull(rw);
	if (rdlock_fast(rw))
		return 0;
	return rdlock_slow(rw, CALLER, false);
}

EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	forget_nonnull(rw);
	if (rdlock_fast(rw))
		return 0;
	return rdlock_slow(rw, CALLER, true);
}

EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_READ, CLOCK_REALTIME, abstime, CALLER);
}

EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clk,
				      const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_READ, clk, abstime, CALLER);
}

/*
 * The write fast path: the variant's uncontended write lock, a try-lock
 * that names the writer in the lock (no list entry).  It may skip the list
 * lookup because the variant's fast path fails while the caller holds rw
 * in any mode (variant.h); EDEADLK and EBUSY then come from
 * rwlock_acquire.  Shut before the load, in strict mode and with
 * statistics, and for process-shared locks (glibc's bytes) unless the
 * variant's fast path is glibc's own (VARIANT_WRITE_FAST_PSHARED).
 * rw: through forget_nonnull.
 */
static inline __attribute__((always_inline)) enum write_fast wrlock_fast(pthread_rwlock_t *rw)
{
	if (rw == NULL || !try_paths_open(rw, VARIANT_WRITE_FAST_PSHARED))
		return WRITE_FAST_MISS;
	return variant_write_fast(rw);
}

/* The full path of a write (rwlock_acquire), out of line: reached by tail calls. */
static __attribute__((noinline)) int wrlock_slow(pthread_rwlock_t *rw, bool try, const void *caller)
{
	return rwlock_acquire(rw, HELD_WRITE, try, NULL, caller);
}

/*
 * The fast path holds the lock underneath and found bias to revoke: the
 * revocation that never waits (only BRAVO variants get here, which keep
 * write holds out of the list), else the full path.  Out of line and a
 * tail call, so the write fast path keeps needing no frame.
 */
#if defined(VARIANT_WRITE_FAST_REVOKE) && !defined(VARIANT_WRITE_OWNER)
#error "wrlock_revoke pushes no list entry: its variant must name its writer in the lock"
#endif
static __attribute__((noinline)) int wrlock_revoke(pthread_rwlock_t *rw, bool try, const void *caller)
{
	if (variant_write_fast_revoke(rw))
		return 0;
	return wrlock_slow(rw, try, caller);
}

/* The write exports after their fast path: held, a revocation, or the full path (tail calls). */
static inline __attribute__((always_inline)) int wrlock_after(pthread_rwlock_t *rw,
							      enum write_fast fast, bool try,
							      const void *caller)
{
	switch (fast) {
	case WRITE_FAST_HELD:
		return 0;
	case WRITE_FAST_REVOKE:
		return wrlock_revoke(rw, try, caller);
	default:
		return wrlock_slow(rw, try, caller);
	}
}

#ifdef VARIANT_WRITE_FAST_WAIT
/*
 * Writes of this thread left to make through the blocking fast path:
 * set by a write whose try-lock failed, so that a thread that contends
 * for writes waits in the lock underneath at once (variant.h,
 * variant_write_fast_wait), and one that does not keeps the try-lock's
 * shorter path.  A thread-local count, no shared write; a hint only (a
 * handler's write between this thread's load and store changes how many
 * writes wait, nothing else).
 */
#define WRLOCK_WAITS_AFTER_MISS 16
static __thread unsigned wrlock_waits_left __attribute__((tls_model("initial-exec")));

/*
 * wrlock's fast path, the blocking form: the caller lists no hold, so none
 * of rw through the table, and has never forked, so the lock names it as
 * its writer only by its own id, which glibc's wrlock refuses (EDEADLK:
 * the full path then answers it); with a hold of glibc's lock unlisted,
 * glibc's wrlock waits as glibc's does.  Otherwise the try-lock path.
 * Thread-local tests only: a look at the contended lock's line before the
 * wait would fetch it once more.
 */
static __attribute__((noinline)) int wrlock_waiting(pthread_rwlock_t *rw, const void *caller)
{
	enum write_fast fast = WRITE_FAST_MISS;

	wrlock_waits_left--;
	if (try_paths_open(rw, VARIANT_WRITE_FAST_PSHARED))
		fast = held_none() && !held_forked() ? variant_write_fast_wait(rw)
						     : variant_write_fast(rw);
	return wrlock_after(rw, fast, false, caller);
}
#endif

EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *rw)
{
	enum write_fast fast;

	forget_nonnull(rw);
#ifdef VARIANT_WRITE_FAST_WAIT
	if (__builtin_expect(wrlock_waits_left != 0, 0) && rw != NULL)
		return wrlock_waiting(rw, CALLER);
#endif
	fast = wrlock_fast(rw);
#ifdef VARIANT_WRITE_FAST_WAIT
	if (fast == WRITE_FAST_MISS)
		wrlock_waits_left = WRLOCK_WAITS_AFTER_MISS;
#endif
	return wrlock_after(rw, fast, false, CALLER);
}

EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	forget_nonnull(rw);
	return wrlock_after(rw, wrlock_fast(rw), true, CALLER);
}

EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_WRITE, CLOCK_REALTIME, abstime, CALLER);
}

EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clk,
				      const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_WRITE, clk, abstime, CALLER);
}

/* Unlock by a thread that holds nothing on rw (it may hold no entry at all). */
static int unlock_unheld(pthread_rwlock_t *rw, const void *caller)
{
	static atomic_bool warned;

	/* The first call of this thread may be this one: the variant needs the load. */
	ensure_loaded();
	if (config.strict) {
		if (handle_is_destroyed(rw))
			return misuse(EINVAL, "pthread_rwlock_unlock", rw, "the lock was destroyed", caller);
		return misuse(EPERM, "pthread_rwlock_unlock", rw,
			      "the calling thread holds no lock on it", caller);
	}
	if (release_for_other(rw) || variant_is_idle(rw))
		return 0; /* released as glibc would; or nothing held: glibc returns 0 */
	/*
	 * Default mode's one warning: no addresses (a program's stderr may be
	 * read by others, and an address says where its memory is), only to
	 * the stderr it started with (libbravo_message).
	 */
	if (!atomic_exchange_explicit(&warned, true, memory_order_relaxed))
		libbravo_message("pthread_rwlock_unlock: the calling thread holds no lock on it and "
				 "no read hold could be released on another thread's behalf "
				 "(write-held elsewhere?); nothing released, reported once");
	(void)caller;
	return 0;
}

static __attribute__((noinline)) int unlock_slow(pthread_rwlock_t *rw, const void *caller);

/*
 * Release the most recent entry, a single read hold of rw taken on any
 * path (no re-entry, no hold released on another thread's behalf): what
 * unlock_slow would do, less the lookup.  Out of line, and reached by
 * tail calls, so that the read fast path's unlock keeps needing no frame.
 */
static __attribute__((noinline)) int unlock_read_top(pthread_rwlock_t *rw, uintptr_t data)
{
	void *target = variant_read_unlock_target(rw, data);

	held_pop(held_tls.top); /* off the list right before the release (see the top of the file) */
	variant_read_unlock_at(target, rw, data);
	return 0;
}

/*
 * unlock_read_top, less the call where the variant releases a hold of
 * the lock underneath (data 0) inline (VARIANT_READ_UNLOCK_UNDER).
 */
static inline __attribute__((always_inline)) int unlock_read_single(pthread_rwlock_t *rw,
								     uintptr_t data)
{
#ifdef VARIANT_READ_UNLOCK_UNDER
	if (data == 0) {
		held_pop(held_tls.top); /* off the list before the release */
		return variant_read_unlock_under(rw);
	}
#endif
	return unlock_read_top(rw, data);
}

/*
 * A write hold the lock names (VARIANT_WRITE_OWNER): not in the list.
 * Out of line, so that the read fast path's unlock keeps needing no
 * frame; glibc's unlock is a tail call, which needs none: inline.
 */
#ifdef VARIANT_WRITE_UNLOCK_GLIBC
static inline __attribute__((always_inline)) int unlock_write_named(pthread_rwlock_t *rw)
#else
static __attribute__((noinline)) int unlock_write_named(pthread_rwlock_t *rw)
#endif
{
#ifdef VARIANT_WRITE_UNLOCK_GLIBC
	/*
	 * The lock is glibc's, process-shared or not: its unlock, in tail
	 * position (glibc's returns 0).  Loaded: this thread write-locked it.
	 */
	return real_loaded()->unlock(rw);
#else
	if (handle_is_pshared(rw))
		return real()->unlock(rw);
	variant_write_unlock(rw, 0);
	return 0;
#endif
}

/*
 * The fast paths: the most recent entry is rw's, and is a single read
 * hold taken by rdlock_fast, or any other single hold; read holds only
 * while no hold is outstanding that another thread released on its
 * reader's behalf.  Or the lock names the caller as its writer (a
 * process-shared lock's glibc id included: unlock_write_named tells).
 * held_tls.self is -1 until asked, which no lock names.  Or, first,
 * where the lock underneath answers for its holds
 * (VARIANT_UNDER_UNLISTED), the caller lists nothing and the lock
 * underneath is read-held: one of its holds, the caller's or, as glibc
 * lets any thread do, another's, is released there.  (A list with no
 * entry has its bottom on top, which is no lock's.)
 */
EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	struct held *h;

	forget_nonnull(rw);
#ifdef VARIANT_UNDER_UNLISTED
	/*
	 * Nothing listed inline: a hold of the lock underneath if it is
	 * read-held (which excludes a writer, the caller included; then the
	 * spill and the mode are asked), else the write hold it names.
	 */
	if (held_none_inline()) {
		if (rw != NULL) {
			if (handle_writer(rw) == held_tls.self)
				return unlock_write_named(rw);
			if (variant_read_held_class(rw, 0) && under_unlisted() && held_spill_none())
				return variant_read_unlock_under(rw);
		}
		return unlock_slow(rw, CALLER);
	}
#endif
	h = held_top_of(rw);
	if (h) {
		if (h->state == HELD_STATE(HELD_READ | HELD_FAST, 0) && !handoff_any()) {
			uintptr_t data = h->data;

			held_pop(h);
			variant_read_fast_unlock(data);
			return 0;
		}
		if (h->state == HELD_STATE(HELD_READ, 0) && !handoff_any())
			return unlock_read_single(rw, h->data);
	} else if (rw != NULL && handle_writer(rw) == held_tls.self) {
		return unlock_write_named(rw);
	}
	return unlock_slow(rw, CALLER);
}

/*
 * Unlock by a thread with no entry for rw and no write hold of it: one of
 * its unlisted holds (held.h) if it has any and rw has a hold of the kind
 * -- a guest read while its writer waits, or a read of the plain class,
 * which is released as an entry of that class would be (a hold of the
 * class released on its reader's behalf is taken as ours) -- else an
 * unlock on another thread's behalf.
 */
static int unlock_unlisted(pthread_rwlock_t *rw, const void *caller)
{
	struct held_list *l = &held_tls;

	if (atomic_load_explicit(&l->unlisted_guests, memory_order_relaxed) &&
	    atomic_load_explicit(&wait_writer_pending, memory_order_relaxed)) {
		atomic_fetch_sub_explicit(&l->unlisted_guests, 1, memory_order_relaxed);
		return 0;
	}
	if (!atomic_load_explicit(&l->unlisted, memory_order_relaxed) ||
	    !variant_read_held_class(rw, 0) || !held_unlisted_take())
		return unlock_unheld(rw, caller);
	if (handoff_any() && handoff_take(rw, 0, handle_life(rw)))
		release_for_other(rw);
	else
		variant_read_unlock(rw, 0);
	return 0;
}

/*
 * The hold of the caller's entry just removed (data): released, or, if a
 * hold of its class was released on its reader's behalf, counted as that
 * one, and another released in its place.
 */
static void unlock_entry(pthread_rwlock_t *rw, uintptr_t data, void *target)
{
	if (handoff_any() && handoff_take(rw, variant_hold_class(rw, data), handle_life(rw))) {
		variant_read_forget(rw, data);
		release_for_other(rw);
	} else {
		variant_read_unlock_at(target, rw, data);
	}
}

static int unlock_slow(pthread_rwlock_t *rw, const void *caller)
{
	struct held *h;
	uintptr_t data = 0;
	void *target = NULL;
	int r;

	if (null_ptr(rw))
		return stats_error(EINVAL);
	if (handle_is_pshared(rw))
		return real()->unlock(rw);
	held_pin(); /* h stays where it is (held.h) */
	h = held_find(rw);
	if (h && held_stale(rw, h))
		h = NULL;
	/*
	 * The caller's write hold comes first, as glibc's unlock decides by
	 * its writer: a read entry beside it is one that another thread
	 * released on its reader's behalf (a writer waits for every other
	 * read), which a later call forgets.  A guest entry is a signal
	 * handler's read inside its thread's write: the unlock is its own.
	 */
	if (h && h->data != VARIANT_GUEST && write_held_by_self(rw, true))
		h = NULL;
	if (h && h->reentries > 0) {
		h->reentries--;
		held_unpin();
		return 0;
	}
	if (h) {
		/* Off the list before the lock is released (see the top of the file). */
		data = h->data;
		target = variant_read_unlock_target(rw, data);
		held_remove(h);
	}
	held_unpin();
	if (h) {
		unlock_entry(rw, data, target);
		return 0;
	}
	if (write_held_by_self(rw, true)) {
		r = unlock_write_named(rw);
		profile_release(rw); /* after the release: its clock read is not in the critical section */
		return r;
	}
#ifdef VARIANT_UNDER_UNLISTED
	/*
	 * No entry: where the lock underneath answers for its holds, a hold
	 * of it (the caller's, or another's as glibc releases one) if it has
	 * any; else a fast hold released on its reader's behalf, or nothing.
	 */
	if (under_unlisted() && variant_read_held_class(rw, 0))
		return variant_read_unlock_under(rw);
#endif
	return unlock_unlisted(rw, caller);
}
