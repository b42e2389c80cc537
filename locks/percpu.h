/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * percpu.h - Per-CPU reader-writer lock: one BA lock per CPU.
 *
 * The brlock idea of the Linux kernel, as the "Per-CPU" baseline of the
 * BRAVO paper (Dice & Kogan, ATC 2019, section 5): a reader read-locks only
 * the sub-lock of the CPU it runs on, so readers on different CPUs share no
 * cache line; a writer write-locks every sub-lock, in index order (so two
 * writers cannot deadlock against each other).
 *
 * Each sub-lock sits on its own 128-byte sector (adjacent-line prefetch
 * pairs 64-byte lines).  The caller picks the index (its CPU, folded into
 * range by percpu_index) and must pass the same index to the unlock: a reader that migrated
 * still releases the sub-lock it took.
 *
 * Invariants: a reader holds exactly one sub-lock for reading; a writer
 * holds all of them for writing, so it excludes readers on every CPU.  A
 * writer first starts its writer phase on every sub-lock (taking their
 * writer mutexes in index order), and only then waits for each one's
 * readers: from the moment it waits, no new reader gets in on any CPU, so
 * the lock as a whole is phase-fair like its BA sub-locks.  Before its
 * first sub-lock, a writer holds back while the readers inside (over all
 * sub-locks) are not all running, as a BA writer does (ba.h, "Holding
 * back").  A writer that
 * times out or fails a try-lock ends, in reverse order, the phases it had
 * started.
 *
 * Memory ordering: none of its own.  Readers and writers meet only inside
 * the BA sub-locks, whose RMWs and release/acquire pairs (ba.h) order each
 * reader's critical section against the writer holding that sub-lock.
 */
#ifndef LIBBRAVO_PERCPU_H
#define LIBBRAVO_PERCPU_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ba.h"
#include "wait.h"

#define PERCPU_SECTOR 128

struct percpu_sub {
	alignas(PERCPU_SECTOR) struct ba_lock ba;
	/* The writer's drain ticket: written by the writer, read by percpu_readers_in. */
	_Atomic uint32_t wticket;
};

/*
 * A header sector, read-only once initialized (so every CPU can cache it),
 * then nsub sub-locks.  Size: 128 * (nsub + 1) bytes.
 */
struct percpu_lock {
	alignas(PERCPU_SECTOR) unsigned nsub;
	struct percpu_sub sub[];
};

static inline size_t percpu_size(unsigned nsub)
{
	return sizeof(struct percpu_lock) + (size_t)nsub * sizeof(struct percpu_sub);
}

/* Any CPU number to a sub-lock index (a CPU plugged in later folds in). */
static inline unsigned percpu_index(const struct percpu_lock *l, unsigned cpu)
{
	return cpu < l->nsub ? cpu : cpu % l->nsub;
}

void percpu_init(struct percpu_lock *l, unsigned nsub);

static inline int percpu_read_lock(struct percpu_lock *l, unsigned idx,
				   const struct deadline *dl)
{
	return ba_read_lock(&l->sub[idx].ba, dl);
}

static inline bool percpu_read_trylock(struct percpu_lock *l, unsigned idx)
{
	return ba_read_trylock(&l->sub[idx].ba);
}

static inline void percpu_read_unlock(struct percpu_lock *l, unsigned idx)
{
	ba_read_unlock(&l->sub[idx].ba);
}

/*
 * Readers holding sub-lock idx (not counting readers waiting to enter): a
 * racy snapshot, for releasing a read hold on behalf of another thread.
 * Without a writer phase every arrival holds; during one, the arrivals
 * before the writer's announcement (its ticket) that have not departed.
 * Arrivals are read before departures, so it may count short, never long;
 * a count that comes out negative (also: the ticket of an earlier phase,
 * read before the writer stored its own) is 0.
 */
static inline uint32_t percpu_readers_in(struct percpu_lock *l, unsigned idx)
{
	struct ba_lock *b = &l->sub[idx].ba;
	uint64_t rin = atomic_load_explicit(&b->rin, memory_order_acquire);
	uint32_t out = (atomic_load_explicit(&b->rout, memory_order_acquire) >> 1) & BA_COUNT_MASK;
	uint32_t admitted = (rin & BA_PRES) ?
		atomic_load_explicit(&l->sub[idx].wticket, memory_order_relaxed) :
		(uint32_t)(rin >> 32) & BA_COUNT_MASK;
	uint32_t in = (admitted - out) & BA_COUNT_MASK;

	return in < (BA_COUNT_MASK >> 1) ? in : 0;
}

/*
 * A signal handler's read of l on a thread whose writer holds sub-lock 0
 * (so no other writer is inside) or whose read of a sub-lock was admitted
 * while it waited: it gets in without touching l (ba.h, Guests).
 */
static inline bool percpu_guest_ok(struct percpu_lock *l)
{
	return wait_writer_pending_is(l) || ba_read_admitted_in(&l->sub[0], &l->sub[l->nsub]);
}

int percpu_write_lock(struct percpu_lock *l, const struct deadline *dl);
/* percpu_write_lock, and on success id stored in *name as ba_write_lock_named does. */
int percpu_write_lock_named(struct percpu_lock *l, const struct deadline *dl, int *name, int id);
bool percpu_write_trylock(struct percpu_lock *l);
void percpu_write_unlock(struct percpu_lock *l);
bool percpu_is_idle(struct percpu_lock *l);

#endif
