/*
 * ba.h - Brandenburg-Anderson phase-fair reader-writer lock.
 *
 * B. B. Brandenburg and J. H. Anderson, "Spin-based reader-writer
 * synchronization for multiprocessor real-time systems", Real-Time Systems
 * 46(1), 2010.  The BRAVO paper's "BA" baseline.
 *
 * Phase-fairness: reader phases and writer phases alternate whenever both
 * kinds of thread wait.  A stream of arriving readers cannot starve a writer
 * (readers that arrive while a writer is present wait for that writer), and
 * a reader that waits enters after at most one writer phase (it is counted
 * in the reader indicator, so the next writer waits for it).
 *
 * Reader indicator as in PF-T/PF-Q: a pair of central counters.
 *
 *   rin   bits 31..8  readers that have arrived (in units of BA_RINC)
 *         bit  2      BA_RPARK: a reader sleeps on rin
 *         bit  1      BA_PRES:  a writer is present
 *         bit  0      BA_PHID:  phase id of the present writer
 *   rout  bits 31..8  readers that have departed
 *         bit  0      BA_WPARK: the writer sleeps on rout
 *
 * Counts wrap modulo 2^24; only equality of counts is ever tested.
 *
 * Writers are serialized by wmutex (0 free, 1 held, 2 held with sleepers).
 * The mutex holder adds BA_PRES|phase to rin, which both announces it to new
 * readers and snapshots the number of readers admitted before it; it enters
 * when rout's count reaches that snapshot.  Consecutive writers alternate the
 * phase id, so readers blocked by one writer see the bits change when the
 * next writer arrives, and enter ahead of it.
 *
 * Waiting readers and the draining writer spin briefly and then park on
 * rin/rout (wait.h) instead of the MCS queues of PF-Q: in user space a parked
 * waiter must be woken through the kernel anyway, and a futex word lets a
 * timed waiter leave without unlinking a queue node.  A reader that times out
 * withdraws its arrival with a CAS that succeeds only while the writer phase
 * that blocks it is still in force, so no writer ever counts a reader that
 * is gone.
 *
 * Size: 16 bytes, so BRAVO-BA fits in a pthread_rwlock_t.  All-zero bytes
 * are an unlocked lock.
 */
#ifndef LIBBRAVO_BA_H
#define LIBBRAVO_BA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "wait.h"

#define BA_PHID  0x1u
#define BA_PRES  0x2u
#define BA_WBITS (BA_PRES | BA_PHID)
#define BA_RPARK 0x4u
#define BA_WPARK 0x1u
#define BA_RINC  0x100u
#define BA_COUNT(v) ((v) & ~(BA_RINC - 1))

struct ba_lock {
	_Atomic uint32_t rin;
	_Atomic uint32_t rout;
	_Atomic uint32_t wmutex;
	uint32_t wphase; /* phase of the next writer; touched only under wmutex */
};

void ba_init(struct ba_lock *l);

/* 0, or ETIMEDOUT when dl passes first (then nothing is held). */
int ba_read_lock_slowpath(struct ba_lock *l, uint32_t wbits, const struct deadline *dl);

static inline int ba_read_lock(struct ba_lock *l, const struct deadline *dl)
{
	/* Acquire: pairs with the release of the last writer's bit clear. */
	uint32_t old = atomic_fetch_add_explicit(&l->rin, BA_RINC, memory_order_acquire);

	if (!(old & BA_WBITS))
		return 0;
	return ba_read_lock_slowpath(l, old & BA_WBITS, dl);
}

bool ba_read_trylock(struct ba_lock *l);

void ba_read_unlock_wake(struct ba_lock *l);

static inline void ba_read_unlock(struct ba_lock *l)
{
	/* Release: the critical section happens before the writer's entry. */
	uint32_t old = atomic_fetch_add_explicit(&l->rout, BA_RINC, memory_order_release);

	if (old & BA_WPARK)
		ba_read_unlock_wake(l);
}

int ba_write_lock(struct ba_lock *l, const struct deadline *dl);
bool ba_write_trylock(struct ba_lock *l);
void ba_write_unlock(struct ba_lock *l);

/* True if nobody holds or waits for the lock (a racy snapshot). */
bool ba_is_idle(struct ba_lock *l);

#endif
