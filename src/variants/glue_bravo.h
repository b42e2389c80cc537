/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * glue_bravo.h - BRAVO-BA and BRAVO-pthread: the generic BRAVO wrapper
 * (locks/bravo.h) over an underlying lock chosen at build time.
 *
 *   LIBBRAVO_UNDER_BA       BA inline at offset 0 of the handle
 *   LIBBRAVO_UNDER_PTHREAD  glibc's own rwlock, the whole handle, in place
 *
 * The BRAVO word lives in the handle's __pad2 either way, so neither variant
 * allocates.  The underlying ops are constant and the wrapper is inlined,
 * so the compiler calls them directly.
 */
#ifndef LIBBRAVO_GLUE_BRAVO_H
#define LIBBRAVO_GLUE_BRAVO_H
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../locks/ba.h"
#include "../../locks/bravo.h"
#include "under_ba.h"
#include "../interpose/config.h"
#include "../interpose/handle.h"
#include "../interpose/handoff.h"
#include "../interpose/held.h"
#include "../interpose/page_kind.h"
#include "../interpose/real.h"
#include "../diag/stats.h"

#if defined(LIBBRAVO_UNDER_BA)

#ifdef LIBBRAVO_BRAVO_PRIVATE_TABLE
/*
 * The benchmark-only "ideal" BRAVO-BA of figure 1: every lock its own
 * visible readers table (locks/bravo.h, VR_PER_LOCK), otherwise this very
 * variant.  Never installed.
 */
static const struct rw_ops ba_per_lock_ops = BA_RW_OPS(VR_PER_LOCK); /* under_ba.h */
#define under_ops ba_per_lock_ops
#else
#define under_ops ba_under_ops /* under_ba.h */
#endif

/*
 * A hold of the lock underneath (data 0) released inline (variant.h,
 * VARIANT_READ_UNLOCK_UNDER), returning 0: BA's wake, if any, a tail call.
 */
static inline __attribute__((always_inline)) int variant_read_unlock_under(pthread_rwlock_t *rw)
{
	return ba_read_unlock(handle_ba(rw));
}

static bool under_idle(pthread_rwlock_t *rw)
{
	return ba_is_idle(handle_ba(rw));
}

static bool under_read_held(pthread_rwlock_t *rw)
{
	return handle_writer(rw) == 0 && ba_read_held(handle_ba(rw));
}

/*
 * BA names no writer: the handle does, as glibc's lock does (handle.h).
 * The id is read before the lock is taken (under_writer_id), so that the
 * name is the very next store (glue_ba.h says why).
 */
static inline pid_t under_writer_id(void)
{
	return held_self();
}

static inline void under_name_writer(pthread_rwlock_t *rw, pid_t id)
{
	handle_set_writer(rw, id);
}

/* BA's own phase-fairness already holds readers back while a writer waits. */
static bool reader_pref(pthread_rwlock_t *rw)
{
	(void)rw;
	return false;
}

/*
 * BA is phase-fair already: a waiting writer holds off new slow readers,
 * and fast readers that slip in before its revocation only lengthen the
 * current reader phase.  A program that asks for the writer-preferring kind
 * gets the fast path shut while a writer waits as well, as under
 * BRAVO-pthread.
 */
static bool writer_pref(pthread_rwlock_t *rw)
{
	return handle_prefers_writers(rw);
}

static inline int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	handle_init(rw, attr);
	return 0;
}

#elif defined(LIBBRAVO_UNDER_PTHREAD)

static int under_read_lock(void *u, const struct deadline *dl)
{
	int r;

	do {
		r = dl && dl->abstime ? real_loaded()->clockrdlock(u, dl->clock, dl->abstime)
				      : real_loaded()->rdlock(u);
	} while (r == EAGAIN); /* glibc's reader count overflowed: wait */
	return r;
}

static bool under_read_trylock(void *u)
{
	return real_loaded()->tryrdlock(u) == 0;
}

/*
 * A hold of the lock underneath (data 0) released inline (variant.h,
 * VARIANT_READ_UNLOCK_UNDER): glibc's unlock, which returns 0 for a read
 * hold, a tail call for its callers.
 */
static inline __attribute__((always_inline)) int variant_read_unlock_under(pthread_rwlock_t *rw)
{
	return real_loaded()->unlock(rw);
}

static void under_read_unlock(void *u)
{
	variant_read_unlock_under(u);
}

static int under_write_lock(void *u, const struct deadline *dl)
{
	return dl && dl->abstime ? real_loaded()->clockwrlock(u, dl->clock, dl->abstime)
				 : real_loaded()->wrlock(u);
}

static bool under_write_trylock(void *u)
{
	return real_loaded()->trywrlock(u) == 0;
}

static void under_write_unlock(void *u)
{
	real_loaded()->unlock(u);
}

/*
 * glibc's lock is idle when no reader is counted, no writer holds it
 * (WRLOCKED, bit 1 of __readers) and none waits (__writers, less its
 * WRHANDOVER bit 31).  Reads only: a lock in read-only memory is fine.
 */
static bool under_idle(pthread_rwlock_t *rw)
{
	unsigned r = __atomic_load_n(&rw->__data.__readers, __ATOMIC_RELAXED);
	unsigned w = __atomic_load_n(&rw->__data.__writers, __ATOMIC_RELAXED);

	return (r >> 3) == 0 && !(r & 2) && (w & 0x7fffffffu) == 0;
}

/*
 * glibc's __readers: bit 0 WRPHASE, bit 1 WRLOCKED, bit 2 RWAITING, the
 * reader count from bit 3 (nptl/pthread_rwlock_common.c).  In a read
 * phase the count is the readers inside.
 */
static bool under_read_held(pthread_rwlock_t *rw)
{
	unsigned r = __atomic_load_n(&rw->__data.__readers, __ATOMIC_RELAXED);

	return !(r & 1) && (r >> 3) != 0;
}

/*
 * A write unlock is glibc's unlock and nothing else (under_mark_writer
 * does nothing): rwlock.c may call it directly (variant.h).
 */
#define VARIANT_WRITE_UNLOCK_GLIBC 1

/*
 * A hold of glibc's lock (data 0, a slow read) is glibc's to answer for:
 * outside strict mode it is not listed (variant.h), so that its re-entry,
 * its unlock by another thread and a write lock by its reader are
 * glibc's own results.  A fast hold stays listed: its slot must reach
 * its unlock, and only its reader can release it.
 */
#define VARIANT_UNDER_UNLISTED 1

/*
 * The write fast path is glibc's try-lock and a look at the BRAVO word,
 * which stays 0 on a process-shared lock (its readers go to glibc): the
 * path is right for such locks too, and skips the test (variant.h).
 */
#define VARIANT_WRITE_FAST_PSHARED 1

/* glibc keeps its writer's id itself. */
static inline pid_t under_writer_id(void)
{
	return 0;
}

static inline void under_name_writer(pthread_rwlock_t *rw, pid_t id)
{
	(void)rw;
	(void)id;
}

/*
 * glibc's default kind lets readers in while a writer waits: a writer
 * waiting for fast readers must not hold glibc's lock meanwhile.
 */
static bool reader_pref(pthread_rwlock_t *rw)
{
	return !handle_prefers_writers(rw);
}

/* glibc's writer-preferring kind: keep fast readers out while writers wait. */
static bool writer_pref(pthread_rwlock_t *rw)
{
	return handle_prefers_writers(rw);
}

static inline int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	return real()->init(rw, attr); /* zeroes the BRAVO word and the marker */
}

/* glibc's waits are its own: only BRAVO's revocation wait is known here (wait.h). */
static bool under_guest_ok(void *u)
{
	return wait_writer_pending_is(u);
}

static const struct rw_ops under_ops = {
	.scope = VR_SHARED,
	.guest_ok = under_guest_ok,
	.read_lock = under_read_lock,
	.read_trylock = under_read_trylock,
	.read_unlock = under_read_unlock,
	.write_lock = under_write_lock,
	.write_trylock = under_write_trylock,
	.write_unlock = under_write_unlock,
};

#else
#error "glue_bravo.h needs LIBBRAVO_UNDER_BA or LIBBRAVO_UNDER_PTHREAD"
#endif

/* The lock's token (locks/bravo.h): 0 until bias is first enabled in its life. */
static inline uint64_t lock_token(pthread_rwlock_t *rw)
{
	return atomic_load_explicit(&handle_bravo(rw)->token, memory_order_relaxed);
}

/*
 * How many of the lock's table slots writers leave behind: fast holds of
 * this life of the lock released on their readers' behalf (handoff.h).
 */
static unsigned long tolerated_fast_holds(const void *lock)
{
	pthread_rwlock_t *rw = (pthread_rwlock_t *)lock;
	uint64_t token = lock_token(rw);

	return token ? handoff_count(lock, (uintptr_t)token, handle_life(rw)) : 0;
}

static inline void variant_load(void)
{
	bravo_tolerated_slots = tolerated_fast_holds;
	bravo_memory_shared = page_shared;
	/* Strict mode, statistics and the profile see every read: keep rwlock.c's inline path shut. */
	if (config.strict || config.stats || config.profile)
		bravo_enable_bits |= BRAVO_FULL_PATH;
	vr_table_init(config.table_slots);
}

static inline const char *variant_detail(void)
{
	static char detail[128];

	if (under_ops.scope == VR_PER_LOCK)
		snprintf(detail, sizeof(detail), "table=private table_slots=%u policy=%s slowdown_n=%u",
			 vr_table_slots(), config_policy_name(), bravo_slowdown_n);
	else
		snprintf(detail, sizeof(detail),
			 "table=%s table_slots=%u table_rows=%u table_ways=%u policy=%s slowdown_n=%u",
			 config_table_name(), vr_table_slots(), vr_table_rows(), vr_table_ways(),
			 config_policy_name(), bravo_slowdown_n);
	return detail;
}

static inline bool variant_is_idle(pthread_rwlock_t *rw)
{
	return !bravo_has_fast_readers(handle_bravo(rw), under_ops.scope, rw) && under_idle(rw);
}

static inline int variant_destroy(pthread_rwlock_t *rw)
{
	return variant_is_idle(rw) ? 0 : EBUSY;
}

/* A fast hold's data: the reader's slot (neither 0, the lock underneath, nor a guest's). */
static inline bool data_is_slot(uintptr_t data)
{
	return data != 0 && data != BRAVO_GUEST;
}

/*
 * Handoff classes: a hold of the lock underneath (0); a fast hold: the
 * token its slot holds, which names the life of the lock it was taken in
 * (only its reader writes the slot).  A guest's is its own.
 */
static inline uintptr_t variant_hold_class(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	if (!data_is_slot(data))
		return data;
	return (uintptr_t)atomic_load_explicit((vr_slot_t *)data, memory_order_relaxed);
}

/*
 * A fast hold taken in an earlier life of the lock: its memory was reused
 * for a new lock since (the token differs).  Its slot is the caller's to
 * free (variant_read_forget).
 */
static inline bool variant_hold_stale(pthread_rwlock_t *rw, uintptr_t data)
{
	return data_is_slot(data) && variant_hold_class(rw, data) != (uintptr_t)lock_token(rw);
}

/* A fast hold handed off to another thread's unlock, or stale: free our slot. */
static inline void variant_read_forget(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	if (data_is_slot(data))
		bravo_read_fast_unlock((vr_slot_t *)data);
}

/* Does the lock have a read hold of class cls (a snapshot)? */
static inline bool variant_read_held_class(pthread_rwlock_t *rw, uintptr_t cls)
{
	if (cls == 0)
		return under_read_held(rw);
	return cls == (uintptr_t)lock_token(rw) &&
	       bravo_fast_readers(handle_bravo(rw), under_ops.scope) > 0;
}

/*
 * Unlock on another reader's behalf: a hold of the underlying lock is
 * released in it; a fast hold cannot be (only its reader writes its slot),
 * so it is only recorded, and writers tolerate that many of the lock's
 * slots (bravo_tolerated_slots) until the reader's own next call on the
 * lock frees its slot.
 */
static inline bool variant_read_release_other(pthread_rwlock_t *rw, uintptr_t *cls)
{
	uint64_t token = lock_token(rw);

	if (under_read_held(rw)) {
		*cls = 0;
		under_ops.read_unlock(rw);
		return true;
	}
	if (token && bravo_fast_readers(handle_bravo(rw), under_ops.scope) >
		     handoff_count(rw, (uintptr_t)token, handle_life(rw))) {
		*cls = (uintptr_t)token;
		return true;
	}
	return false;
}

/* A read hold of the plain class: the lock underneath (held.h). */
static inline int variant_read_lock_plain(pthread_rwlock_t *rw, const struct deadline *dl)
{
	return under_ops.read_lock(rw, dl);
}

static inline int variant_read_trylock_plain(pthread_rwlock_t *rw)
{
	return under_ops.read_trylock(rw) ? 0 : EBUSY;
}

/* The read fast path (variant.h): a slot of the visible readers table. */
#define VARIANT_READ_FAST 1

/* A read through the table; inline_path as bravo_read_fast's. */
static inline __attribute__((always_inline)) bool table_read(pthread_rwlock_t *rw, uintptr_t *data,
							     bool inline_path)
{
	vr_slot_t *slot = bravo_read_fast(handle_bravo(rw), under_ops.scope, inline_path);

	*data = (uintptr_t)slot;
	return slot != NULL;
}

static inline bool variant_read_fast(pthread_rwlock_t *rw, uintptr_t *data)
{
	return table_read(rw, data, true);
}

static inline void variant_read_fast_unlock(uintptr_t data)
{
	bravo_read_fast_unlock((vr_slot_t *)data);
}

/*
 * The slow path's read that does not wait (variant.h): while bias is off
 * and this read would leave it off, the underlying lock's try-lock; while
 * it is on, the table's path with its out-of-line settling (the first fast
 * reader since bias came on).
 */
#define VARIANT_READ_NOWAIT 1
/*
 * It is right for process-shared locks as well: their BRAVO word stays 0
 * (no reader enables bias on them), and on a word of 0 -- no bias, no
 * strikes, no window -- an enable is due, so bravo_read_nowait answers
 * BRAVO_READ_MISS before it touches the lock underneath (glibc's bytes).
 */
#define VARIANT_READ_NOWAIT_PSHARED 1

static inline enum read_nowait variant_read_nowait(pthread_rwlock_t *rw, uintptr_t *data)
{
	*data = 0;
	switch (bravo_read_nowait(handle_bravo(rw), rw, &under_ops)) {
	case BRAVO_READ_HELD:
		return READ_NOWAIT_HELD;
	case BRAVO_READ_TABLE:
		return READ_NOWAIT_SETTLE;
	default:
		return READ_NOWAIT_MISS;
	}
}

static inline bool variant_read_settle(pthread_rwlock_t *rw, uintptr_t *data)
{
	return table_read(rw, data, false);
}

/* Statistics: a fast read, or a slow one by cause (enum bravo_miss order). */
static void count_read(pthread_rwlock_t *rw, uintptr_t slot, uint64_t seen)
{
	stats_add_slow(data_is_slot(slot) ? STAT_READ_FAST
			   : STAT_SLOW_BIAS_OFF + bravo_miss_cause(handle_bravo(rw), under_ops.scope, seen), 1);
}

/* The lock word as a reader finds it, only when statistics want it. */
static inline uint64_t seen_word(pthread_rwlock_t *rw)
{
	return __builtin_expect(stats_on, 0) ?
	       atomic_load_explicit(&handle_bravo(rw)->word, memory_order_relaxed) : 0;
}

_Static_assert(PROFILE_READ_NA == PROFILE_READ_SLOW + BRAVO_MISS_KINDS,
	       "profile.h's read classes are BRAVO's miss causes");

/* The profile's view of a read (variant.h): the word before, the class after. */
static inline uint64_t variant_read_seen(pthread_rwlock_t *rw)
{
	return atomic_load_explicit(&handle_bravo(rw)->word, memory_order_relaxed);
}

static inline enum profile_read variant_read_class(pthread_rwlock_t *rw, uintptr_t data,
						   uint64_t seen)
{
	if (data_is_slot(data))
		return PROFILE_READ_FAST;
	return (enum profile_read)(PROFILE_READ_SLOW +
				   bravo_miss_cause(handle_bravo(rw), under_ops.scope, seen));
}

static inline int variant_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	uint64_t seen = seen_word(rw);
	int r = bravo_read_lock(handle_bravo(rw), rw, &under_ops, data, dl);

	if (__builtin_expect(stats_on, 0) && r == 0)
		count_read(rw, *data, seen);
	return r;
}

static inline int variant_read_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	uint64_t seen = seen_word(rw);

	if (!bravo_read_trylock(handle_bravo(rw), rw, &under_ops, data))
		return EBUSY;
	if (__builtin_expect(stats_on, 0))
		count_read(rw, *data, seen);
	return 0;
}

static inline void variant_read_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	bravo_read_unlock(rw, &under_ops, data);
}

/* variant_read_unlock_under: defined above, by the lock underneath. */
#define VARIANT_READ_UNLOCK_UNDER 1

static inline int variant_write_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	const void *pending = wait_writer_pending_get();
	pid_t self = under_writer_id();
	int r = bravo_write_lock(handle_bravo(rw), rw, &under_ops, writer_pref(rw), reader_pref(rw), dl);

	(void)data;
	if (r == 0) {
		under_name_writer(rw, self);
		wait_writer_pending_restore(pending); /* named: no longer a waiting writer */
	}
	return r;
}

static inline int variant_write_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	pid_t self = under_writer_id();

	(void)data;
	if (!bravo_write_trylock(handle_bravo(rw), rw, &under_ops))
		return EBUSY;
	under_name_writer(rw, self);
	return 0;
}

/* The write fast path (variant.h): the lock underneath, and bias to revoke or not. */
#define VARIANT_WRITE_FAST 1
/* Write holds are named in the lock (handle.h): glibc's, or BA's mark. */
#define VARIANT_WRITE_OWNER 1

/* What the write fast path found, in variant.h's terms. */
static inline enum write_fast write_fast_of(enum bravo_write_fast found)
{
	switch (found) {
	case BRAVO_WRITE_HELD:
		return WRITE_FAST_HELD;
	case BRAVO_WRITE_REVOKE:
		return WRITE_FAST_REVOKE;
	default:
		return WRITE_FAST_MISS;
	}
}

static inline enum write_fast variant_write_fast(pthread_rwlock_t *rw)
{
	pid_t self = under_writer_id();
	enum write_fast found = write_fast_of(bravo_write_fast(handle_bravo(rw), rw, &under_ops));

	if (found == WRITE_FAST_HELD)
		under_name_writer(rw, self);
	return found;
}

#ifdef LIBBRAVO_UNDER_PTHREAD
/*
 * A blocking write lock (variant.h): glibc's own wrlock, not its try-lock
 * and then the full path.  glibc's writers sleep at once and hand the
 * lock over to a sleeping writer at unlock; a try-lock before the wait
 * takes that hand-over from the sleeper, and the full path runs inside
 * the next hold: two writers on 2 CPUs ran at 0.87-0.90x glibc's
 * throughput that way, 0.94x this way.  On the default kind only: a
 * writer-preferring lock's writer announces itself before it waits
 * (bravo_write_lock), to shut the fast path while it waits, as glibc
 * shuts its own.
 */
#define VARIANT_WRITE_FAST_WAIT 1

static inline enum write_fast variant_write_fast_wait(pthread_rwlock_t *rw)
{
	if (writer_pref(rw))
		return variant_write_fast(rw);
	return write_fast_of(bravo_write_fast_wait(handle_bravo(rw), rw, &under_ops));
}
#endif

/* After WRITE_FAST_REVOKE: the revocation, which never waits (locks/bravo.h). */
#define VARIANT_WRITE_FAST_REVOKE 1

static inline bool variant_write_fast_revoke(pthread_rwlock_t *rw)
{
	pid_t self = under_writer_id();

	if (!bravo_write_fast_revoke(handle_bravo(rw), rw, &under_ops))
		return false;
	under_name_writer(rw, self);
	return true;
}

static inline void variant_write_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)data;
	under_name_writer(rw, 0);
	bravo_write_unlock(rw, &under_ops);
}

#endif
