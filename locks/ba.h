/* SPDX-License-Identifier: BSD-2-Clause */
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
 *   rin   bits 63..32  readers that have arrived
 *         bits 31..3   writer phase sequence number (BA_SEQ_INC steps)
 *         bit  2       BA_WSLEEP: a writer sleeps on wseq for BA_PRES to clear
 *         bit  1       BA_RPARK: a reader sleeps on rin's writer half
 *         bit  0       BA_PRES:  a writer is present
 *   rout  bits 31..1   readers that have departed
 *         bit  0       BA_WPARK: the writer sleeps on rout
 *   wseq  writers' futex word: bumped by a leaving writer that found BA_WSLEEP
 *
 * Arrival and departure counts are compared modulo 2^31, and only for
 * equality.  BA_PRES is also the writers' mutex: a writer takes the lock's
 * writer side by one CAS on a rin without BA_PRES that sets it and a new
 * sequence number, which at once excludes other writers, shuts out new
 * readers and snapshots the number of readers admitted before it (the
 * ticket); it enters when rout's count reaches that snapshot, and leaves
 * by one RMW that clears BA_PRES (with BA_RPARK and BA_WSLEEP).  So an
 * uncontended write lock and unlock are two atomic RMWs, not four (a
 * separate mutex word would add a CAS and an exchange).  BA_WSLEEP is set
 * only while BA_PRES is: by a writer about to sleep, or by one that slept
 * as it takes the lock (others may still sleep: Drepper's "state 2").
 *
 * A blocked reader waits until rin's writer half (BA_PRES plus sequence)
 * differs from the value it arrived under.  PF-T gets by with one phase bit
 * because its writers never leave before the readers they counted have
 * entered; ours can leave without entering (a time-out), so a reader
 * descheduled across such a writer and the next one would see the phase
 * bit repeat.  A 29-bit sequence makes that repeat need 2^29 timed-out
 * writer phases in a row while the reader stays descheduled between its
 * arrival and its next look at rin.  A write try-lock never adds to them:
 * it announces only by a CAS on a rin whose count equals rout's, so it is
 * drained when it announces and always enters (an earlier two-load test
 * could announce, count a reader that arrived in between, and leave; a SPIN
 * run of models/ba.pml with that test, a 1-bit sequence and no bound finds
 * the hang: see models/README.md).
 *
 * Memory ordering: every update of rin and rout is an RMW, and a reader
 * and a writer always meet on the same word (arrival vs announce on rin,
 * departure vs the WPARK fetch_or on rout), so no store-load fence is
 * needed.  Critical sections are ordered by release/acquire: a reader's
 * departure (release) before the writer's drained test (acquire), a
 * writer's leave (release) before the arrival (acquire) or phase re-read
 * (acquire) of the readers it admits, and before the next writer's
 * announce (acq_rel).  A sleeping writer's mark and the leaving writer's
 * clear also meet on rin: see ba_write_begin (ba.c) for why that keeps
 * the leaver's wake from being lost.
 *
 * Holding back (more threads than CPUs): a writer that finds no writer
 * present but readers inside that are not all running (more of them than
 * CPUs; or the process's threads outnumber its CPUs, read from how often
 * the kernel preempts them, wait_oversubscribed; or fewer of which none
 * leaves within one spin of BRAVO_SPIN pauses) does not announce at once: it yields its CPU, up to
 * WAIT_DEFER_YIELDS (4) times, while readers go on entering, and then
 * announces anyway (or at once when none is inside).  Each look spins at
 * most once, at most 5 looks.  Announcing would
 * shut out every new reader until the preempted ones have run again, a
 * time slice, and with more threads than CPUs that is nearly always:
 * readers would wait on the scheduler, not on the writer.  The guarantees
 * above are about announced writers and hold unchanged; what changes is that a
 * writer's announcement may come up to four yields and five spins after
 * its call, and only while readers are inside.  The protocol is
 * untouched (a writer that has not yet announced is simply late; models/
 * ba.pml's writers may already be delayed before their CAS for ever).
 * Per-CPU holds back before its first sub-lock only, over all of them.
 *
 * Waiting readers, waiting writers and the draining writer spin briefly
 * only while that can pay (wait.h, wait_spin_pays: fewer threads in the
 * wait than CPUs), and then park on a futex (wait.h) instead of the MCS queues of PF-Q: in user space a parked
 * waiter must be woken through the kernel anyway, and a futex word lets a
 * timed waiter leave without unlinking a queue node.  Readers park on the
 * 32-bit writer half of rin, which arriving readers never change.  A reader
 * that times out withdraws its arrival with a CAS that succeeds only while
 * the writer phase that blocks it is still in force, so no writer ever
 * counts a reader that is gone.
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

#define BA_PRES     UINT64_C(0x1)
#define BA_RPARK    UINT64_C(0x2)
#define BA_WSLEEP   UINT64_C(0x4)
#define BA_SEQ_INC  UINT64_C(0x8)
#define BA_WHALF    UINT64_C(0xffffffff)       /* the writer half of rin */
#define BA_SEQ_MASK (BA_WHALF & ~(BA_PRES | BA_RPARK | BA_WSLEEP))
#define BA_WPHASE   (BA_PRES | BA_SEQ_MASK)    /* PRES + sequence */
#define BA_RINC     (UINT64_C(1) << 32)
#define BA_WPARK    UINT32_C(0x1)
#define BA_ROUT_INC UINT32_C(0x2)
#define BA_COUNT_MASK UINT32_C(0x7fffffff)

struct ba_lock {
	_Atomic uint64_t rin;
	_Atomic uint32_t rout;
	_Atomic uint32_t wseq;
};

void ba_init(struct ba_lock *l);

/* 0, or ETIMEDOUT when dl passes first (then nothing is held). */
int ba_read_lock_slowpath(struct ba_lock *l, uint64_t wphase, const struct deadline *dl);

/*
 * Guests (wait.h).  A signal handler's read of l on a thread that cannot
 * proceed before the handler returns, and that keeps every other writer
 * out meanwhile, need not wait for l, and must not:
 *  - the thread holds l's writer side while it waits for readers to leave
 *    (wait_writer_pending);
 *  - the thread waits in ba_read_lock_slowpath and its read has been
 *    admitted since (the writer phase it arrived under ended): it holds a
 *    read that a newer writer waits for, though its call has not returned.
 *    (Found by tests/fault/handler_locks: four threads on one CPU, each
 *    handler reading the lock its own interrupted reader was just let
 *    into, behind the next writer.)
 * ba_guest_ok says whether the caller's read of l is such a guest: the
 * caller then reads without touching l.  ba_read_admitted_in: the second
 * case for any BA lock in [lo, hi) (Per-CPU's sub-locks).
 */
bool ba_read_admitted_in(const void *lo, const void *hi);

static inline bool ba_guest_ok(struct ba_lock *l)
{
	return wait_writer_pending_is(l) || ba_read_admitted_in(l, l + 1);
}

static inline int ba_read_lock(struct ba_lock *l, const struct deadline *dl)
{
	/* Acquire: pairs with the release of the last writer's leave. */
	uint64_t old = atomic_fetch_add_explicit(&l->rin, BA_RINC, memory_order_acquire);

	if (!(old & BA_PRES))
		return 0;
	return ba_read_lock_slowpath(l, old & BA_WPHASE, dl);
}

/*
 * Inline: a reader's whole uncontended path when it comes through a
 * try-lock (libbravo's read fast path under BA, and BRAVO-BA's reads while
 * bias is off).  Acquire: as ba_read_lock's arrival.
 */
static inline bool ba_read_trylock(struct ba_lock *l)
{
	uint64_t v = atomic_load_explicit(&l->rin, memory_order_relaxed);

	while (!(v & BA_PRES)) {
		if (atomic_compare_exchange_weak_explicit(&l->rin, &v, v + BA_RINC,
							  memory_order_acquire,
							  memory_order_relaxed))
			return true;
	}
	return false;
}

/* Both return 0, so that a caller may end in them: the wake is then a tail call. */
int ba_read_unlock_wake(struct ba_lock *l);

static inline int ba_read_unlock(struct ba_lock *l)
{
	/* Release: the critical section happens before the writer's entry. */
	uint32_t old = atomic_fetch_add_explicit(&l->rout, BA_ROUT_INC, memory_order_release);

	if (old & BA_WPARK)
		return ba_read_unlock_wake(l);
	return 0;
}

int ba_write_lock(struct ba_lock *l, const struct deadline *dl);
/*
 * ba_write_lock, and on success id stored in *name (relaxed) while the
 * thread still counts as waiting for l's readers (wait.h): a caller that
 * names its writer (libbravo's __cur_writer) leaves its handlers no moment
 * in which it holds l unnamed and unmarked.  (A try-lock's and an
 * unlock's few instructions between the lock word and the name remain.)
 * ba_write_lock_marking: the same, but on success the thread stays marked
 * as l's waiting writer (wait_writer_pending == l); its caller, which read
 * the mark before the call, puts it back once it has named itself
 * (BRAVO-BA's writer, which revokes bias in between).
 */
int ba_write_lock_named(struct ba_lock *l, const struct deadline *dl, int *name, int id);
int ba_write_lock_marking(struct ba_lock *l, const struct deadline *dl);

/*
 * ba_write_lock in two steps, for locks built of several BA locks (Per-CPU)
 * that must shut out new readers everywhere before waiting anywhere:
 * ba_write_begin takes the writer side and starts the writer phase (0 or
 * ETIMEDOUT; *ticket is what to wait for), ba_write_wait waits for the
 * readers admitted before it (0, or ETIMEDOUT with the phase still in force:
 * then call ba_write_unlock).  readers: NULL, or the readers (of l,
 * or of a whole Per-CPU lock, at arg) by which ba_write_begin holds back
 * its announcement (see above).
 */
int ba_write_begin(struct ba_lock *l, uint32_t *ticket, const struct deadline *dl,
		   const struct wait_readers *readers, const void *arg);
/* Of l (a struct ba_lock), racy snapshots: readers arrived and not departed; departures. */
uint32_t ba_readers_of(const void *l);
uint32_t ba_departed_of(const void *l);
int ba_write_wait(struct ba_lock *l, uint32_t ticket, const struct deadline *dl);
/* A leaving writer found sleepers (old: rin before its leave): wake them. */
void ba_write_unlock_wake(struct ba_lock *l, uint64_t old);

/* rin with the writer side taken: BA_PRES and the sequence after v's. */
static inline uint64_t ba_rin_announced(uint64_t v)
{
	return (v & ~BA_SEQ_MASK) | BA_PRES | (((v & BA_SEQ_MASK) + BA_SEQ_INC) & BA_SEQ_MASK);
}

/* Arrivals and departures, modulo 2^31. */
static inline uint32_t ba_rin_count(uint64_t rin)
{
	return (uint32_t)(rin >> 32) & BA_COUNT_MASK;
}

static inline uint32_t ba_rout_count(uint32_t rout)
{
	return (rout >> 1) & BA_COUNT_MASK;
}

/*
 * Inline: the whole uncontended write path is these two functions.
 *
 * Announce only by a CAS on a rin whose count equals the rout count read
 * first.  rout never passes rin and never goes back, so at the CAS every
 * admitted reader has left: the phase starts drained and is never one that
 * ends without a critical section (see above).  acquire on rout: the
 * departed readers' critical sections happen before ours.  The CAS takes
 * the writer side only from a rin without PRES (no writer holds it); one
 * that fails re-reads rin, which an arriving reader or another writer
 * changed.  acq_rel: the previous writer's leave (release) happens
 * before our critical section.
 */
static inline bool ba_write_trylock(struct ba_lock *l)
{
	uint32_t out = ba_rout_count(atomic_load_explicit(&l->rout, memory_order_acquire));
	uint64_t v = atomic_load_explicit(&l->rin, memory_order_relaxed);

	while (!(v & BA_PRES) && ba_rin_count(v) == out) {
		if (atomic_compare_exchange_weak_explicit(&l->rin, &v, ba_rin_announced(v),
							  memory_order_acq_rel,
							  memory_order_relaxed))
			return true;
	}
	return false;
}

/*
 * End the writer phase and give up the writer side: admit waiting readers,
 * wake a waiting writer.  acq_rel: release orders the critical section
 * before the readers and the writer that come next; acquire orders a
 * sleeping writer's read of wseq (before its mark) before our bump of it.
 */
static inline void ba_write_unlock(struct ba_lock *l)
{
	uint64_t old = atomic_fetch_and_explicit(&l->rin, ~(BA_PRES | BA_RPARK | BA_WSLEEP),
						 memory_order_acq_rel);

	if (old & (BA_RPARK | BA_WSLEEP))
		ba_write_unlock_wake(l, old); /* a call in tail position: no frame here */
}

/* True if nobody holds or waits for the lock (a racy snapshot). */
bool ba_is_idle(struct ba_lock *l);

/*
 * True if readers have arrived and not departed (a racy snapshot), for a
 * read unlock on another reader's behalf.  While a writer is present the
 * arrivals it counted cannot be told from readers waiting behind it; but if
 * the caller's release is owed (some reader does hold the lock), that
 * writer cannot have entered, so the arrivals include that holder.
 */
bool ba_read_held(struct ba_lock *l);

#endif
