/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * handoff.h - read holds released by a thread that did not take them.
 *
 * glibc lets any thread unlock a read lock (real programs hand a read-locked
 * object to another thread, which unlocks it).  libbravo keeps per-thread
 * lists of holds, so when thread B unlocks a lock it holds nothing on, B
 * releases one read hold of the lock on some reader's behalf (the variant
 * picks one: see variant_read_release_other) and records a *handoff*:
 * (lock, class) where class says which kind of hold went (a BRAVO fast hold,
 * a hold of the underlying lock, a Per-CPU sub-lock, a Cohort node).  Some
 * thread's list now names a hold that is gone.
 *
 * Invariant, per lock and class: holds named in the threads' lists minus
 * the handoffs recorded = holds the lock itself counts.  It is kept by
 *  - a thread that finds its own entry while handoffs of its class are
 *    recorded (a re-entry, an EDEADLK check) takes one handoff and treats
 *    the entry as gone (the thread's hold was the one handed off, or
 *    another's was and the two are interchangeable for the lock);
 *  - a thread that unlocks an entry of such a class takes one handoff and
 *    passes the release on to another holder instead of releasing its own.
 * BRAVO fast holds cannot be released by another thread (only the reader
 * writes its slot): their handoffs tell writers how many of the lock's
 * slots to tolerate (bravo_tolerated_slots).
 *
 * Records are keyed by the lock's address, the class and the lock's life
 * (handle.h): memory reused for a new lock without pthread_rwlock_init (an
 * object pool, calloc at the same address, std::shared_mutex) starts a new
 * life, and its holds never meet the records of the old one.  A BRAVO fast
 * hold's class is the lock's token (locks/bravo.h), which also changes
 * with the life.  A record of another life than the lock's is dropped
 * when it is next looked at.
 *
 * All of this is off the common path: handoff_any() is one relaxed load of
 * a counter that stays zero in programs that never unlock another thread's
 * lock.  The records live in a small table under a mutex taken with every
 * signal blocked (table_lock.h), 64 in place and more from the pool
 * (pool.h).  A release on another's behalf first reserves its record
 * (handoff_reserve), so that it is never made without one; with 64
 * distinct records outstanding and no memory for more, it is not made at
 * all (libbravo(7), MEMORY).
 */
#ifndef LIBBRAVO_HANDOFF_H
#define LIBBRAVO_HANDOFF_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../locks/hidden.h"

extern _Atomic unsigned long handoff_outstanding LIBBRAVO_HIDDEN;

static inline bool handoff_any(void)
{
	return atomic_load_explicit(&handoff_outstanding, memory_order_relaxed) != 0;
}

/* Room for one record more, promised to the caller's next handoff_add; false if none. */
bool handoff_reserve(void);
/* The promise not used. */
void handoff_unreserve(void);
/* Record one hold of class cls of lock (in life) released on its holder's behalf. */
void handoff_add(const void *lock, uintptr_t cls, uint32_t life);
/* Take one such record, if there is one. */
bool handoff_take(const void *lock, uintptr_t cls, uint32_t life);
/* How many are recorded. */
unsigned long handoff_count(const void *lock, uintptr_t cls, uint32_t life);
/* A new lock at this address (init): its old records are void. */
void handoff_forget(const void *lock);
/* pthread_atfork handlers for the table's mutex (installed once at load). */
void handoff_atfork(void);

#endif
