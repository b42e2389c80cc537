/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ba.c - Brandenburg-Anderson phase-fair lock: slow paths and writers.
 * See ba.h for the lock word layout and the invariants.
 */
#include "ba.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

void ba_init(struct ba_lock *l)
{
	memset(l, 0, sizeof(*l));
}

/* The 32-bit writer half of rin, the futex word readers sleep on. */
static _Atomic uint32_t *rin_whalf(struct ba_lock *l)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (_Atomic uint32_t *)(void *)&l->rin;
#else
	return (_Atomic uint32_t *)(void *)&l->rin + 1;
#endif
}

/*
 * Readers arrived and not departed (holding, or waiting behind a writer
 * phase), for the waiting policy.  rout is read after rin, so readers
 * that came and went in between can make the difference negative: 0.
 */
static uint32_t ba_readers_in(struct ba_lock *l, uint64_t rin)
{
	uint32_t n = (ba_rin_count(rin) -
		      ba_rout_count(atomic_load_explicit(&l->rout, memory_order_relaxed))) &
		     BA_COUNT_MASK;

	return n < (BA_COUNT_MASK >> 1) ? n : 0;
}

/*
 * Spin while the writer phase wphase is in force; true if it ended.
 * Relaxed: the caller re-reads rin with acquire before it enters.
 */
static bool ba_spin_phase(struct ba_lock *l, uint64_t wphase)
{
	for (unsigned i = 0; i < wait_spin_budget; i++) {
		if ((atomic_load_explicit(&l->rin, memory_order_relaxed) & BA_WPHASE) != wphase)
			return true;
		cpu_relax();
	}
	return false;
}

/*
 * Withdraw a reader's arrival after a time-out.  Succeeds only while the
 * writer phase wphase that blocked it is still in force: that writer took
 * its snapshot of rin before our arrival, and no later writer can have taken
 * one yet, so nobody counts the withdrawn reader.  If the phase ended
 * meanwhile, the reader has been admitted and keeps the lock.
 */
static bool ba_read_withdraw(struct ba_lock *l, uint64_t wphase)
{
	uint64_t v = atomic_load_explicit(&l->rin, memory_order_relaxed);

	/* Relaxed: a withdrawn reader entered nothing, so there is nothing to order. */
	while ((v & BA_WPHASE) == wphase) {
		if (atomic_compare_exchange_weak_explicit(&l->rin, &v, v - BA_RINC,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return true;
	}
	/* Admitted: the rin just read ends the phase; pair with that writer's leave. */
	atomic_thread_fence(memory_order_acquire);
	return false;
}

/*
 * A read this thread waits for, or was let into since (wait.h,
 * wait_read_now): its phase is the writer phase it arrived under, which a
 * changed rin says has ended.
 */
bool ba_read_admitted_in(const void *lo, const void *hi)
{
	/* Relaxed: a thread's own read and its handler's. */
	const struct ba_lock *l = atomic_load_explicit(&wait_read_now.lock, memory_order_relaxed);

	return l && (const void *)l >= lo && (const void *)l < hi &&
	       (atomic_load_explicit(&l->rin, memory_order_relaxed) & BA_WPHASE) !=
	       wait_read_now.phase;
}

static int ba_read_wait(struct ba_lock *l, uint64_t wphase, const struct deadline *dl)
{
	for (;;) {
		/* Acquire: a changed phase is the writer's leave (release); we enter. */
		uint64_t v = atomic_load_explicit(&l->rin, memory_order_acquire);

		if ((v & BA_WPHASE) != wphase)
			return 0;
		/*
		 * Spin only while every reader arrived (this one too) and the
		 * writer can be running (wait.h, wait_spin_pays).
		 */
		if (wait_spin_pays(ba_readers_in(l, v)) && ba_spin_phase(l, wphase))
			continue;
		/*
		 * Relaxed: the mark and the leave are RMWs of rin, so the leave
		 * either sees RPARK (and wakes) or makes this CAS fail.
		 */
		if (!(v & BA_RPARK) &&
		    !atomic_compare_exchange_weak_explicit(&l->rin, &v, v | BA_RPARK,
							   memory_order_relaxed,
							   memory_order_relaxed))
			continue;
		/* Arriving readers change only rin's upper half: no spurious EAGAIN. */
		if (wait_park(rin_whalf(l), (uint32_t)((v | BA_RPARK) & BA_WHALF), dl) == ETIMEDOUT &&
		    ba_read_withdraw(l, wphase))
			return ETIMEDOUT;
	}
}

int ba_read_lock_slowpath(struct ba_lock *l, uint64_t wphase, const struct deadline *dl)
{
	struct wait_read outer = { .phase = wait_read_now.phase, .scoped = wait_read_now.scoped };
	int r;

	atomic_init(&outer.lock, atomic_load_explicit(&wait_read_now.lock, memory_order_relaxed));
	wait_read_set(l, wphase);
	r = ba_read_wait(l, wphase, dl);
	/* Admitted in a caller's scope: left set, the caller puts back what it found (wait.h). */
	if (r || !outer.scoped)
		wait_read_restore(&outer);
	return r;
}

int ba_read_unlock_wake(struct ba_lock *l)
{
	/*
	 * Only the writer present parks on rout: wake it to re-check its count.
	 * Relaxed: the departure already released the critical section; the
	 * writer re-reads rout with acquire when woken.
	 */
	atomic_fetch_and_explicit(&l->rout, ~BA_WPARK, memory_order_relaxed);
	wait_wake(&l->rout, 1);
	return 0;
}

/* ---- the writer side: BA_PRES, taken by a CAS, waited for on wseq ---- */

/*
 * Take the writer side of l: one CAS that sets BA_PRES and the next
 * sequence number on a rin without BA_PRES.  Returns the ticket (the
 * readers admitted before us) in *ticket, or ETIMEDOUT with nothing held.
 *
 * A writer that finds BA_PRES set spins, then sleeps on wseq: it reads
 * wseq, marks rin with BA_WSLEEP by a CAS that still sees BA_PRES, and
 * parks on the value it read.  The leaving writer clears BA_PRES and
 * BA_WSLEEP in one RMW on rin and, if BA_WSLEEP was set, bumps wseq and
 * wakes one sleeper.  Both RMWs are on rin, so one comes first: if the
 * mark does, the leaver sees it, and its bump comes after our read of
 * wseq (the mark is a release, the leave an acquire), so either we park
 * before the bump and are woken, or we see wseq changed and retry.  If the
 * leave comes first, the mark's CAS fails (BA_PRES is gone) and we retry.
 *
 * Only one sleeper is woken, and the leave clears BA_WSLEEP: so a writer
 * that has slept takes the writer side with BA_WSLEEP set (others may
 * still sleep), and its leave wakes the next; the last one costs a spare
 * wake.  A sleeper's wait_park returns ETIMEDOUT only if no wake took it
 * (a wake goes to a thread still parked): a woken writer always tries
 * again before its deadline can end the wait.
 */
int ba_write_begin(struct ba_lock *l, uint32_t *ticket, const struct deadline *dl,
		   const struct wait_readers *readers, const void *arg)
{
	/* Relaxed loads of rin here: only the acq_rel CAS below takes the lock. */
	uint64_t v = atomic_load_explicit(&l->rin, memory_order_relaxed);
	uint64_t slept = 0;
	unsigned spins = 0, yields = 0, watches = 0;

	for (;;) {
		uint32_t seq;
		uint32_t n;

		/*
		 * Hold back (ba.h): readers inside that cannot all be running
		 * (more than CPUs, or more runnable threads than CPUs in the
		 * process), or of which none left within a spin (so the one we
		 * would wait for is not running): let them run first (wait.h).
		 * Watches are bounded too, each one spin.
		 */
		if (!(v & BA_PRES) && readers && watches <= WAIT_DEFER_YIELDS &&
		    (n = readers->inside(arg)) != 0 &&
		    (!wait_spin_pays(n) || wait_oversubscribed() ||
		     (watches++, !wait_spin_progress(readers, arg))) &&
		    wait_defer(&yields)) {
			v = atomic_load_explicit(&l->rin, memory_order_relaxed);
			continue;
		}
		if (!(v & BA_PRES)) {
			/* acq_rel: after the last writer's leave; readers see the phase. */
			if (atomic_compare_exchange_weak_explicit(&l->rin, &v,
								  ba_rin_announced(v) | slept,
								  memory_order_acq_rel,
								  memory_order_relaxed)) {
				*ticket = ba_rin_count(v);
				return 0;
			}
			continue;
		}
		/* The writer inside, and the readers, can all be running: spin. */
		if (spins < wait_spin_budget && wait_spin_pays(ba_readers_in(l, v) + 1)) {
			spins++;
			cpu_relax();
			v = atomic_load_explicit(&l->rin, memory_order_relaxed);
			continue;
		}
		/* Relaxed: ordered before the leaver's bump by the release mark below. */
		seq = atomic_load_explicit(&l->wseq, memory_order_relaxed);
		/*
		 * The CAS even if v shows BA_WSLEEP already: v was read before
		 * seq, and only a CAS that succeeds on it proves that BA_PRES
		 * was still set after our read of wseq (else the leave that
		 * cleared it may have bumped wseq before we read it, and we
		 * would sleep with nobody to wake us).  Release: our read of
		 * wseq happens before the leaver's bump.
		 */
		if (!atomic_compare_exchange_weak_explicit(&l->rin, &v, v | BA_WSLEEP,
							   memory_order_release,
							   memory_order_relaxed))
			continue;
		slept = BA_WSLEEP;
		if (wait_park(&l->wseq, seq, dl) == ETIMEDOUT)
			return ETIMEDOUT; /* a mark left behind costs a spare wake */
		v = atomic_load_explicit(&l->rin, memory_order_relaxed);
	}
}

void ba_write_unlock_wake(struct ba_lock *l, uint64_t old)
{
	if (old & BA_RPARK)
		wait_wake(rin_whalf(l), INT_MAX);
	if (old & BA_WSLEEP) {
		/* Relaxed: after the sleeper's read of wseq by the leave's acquire. */
		atomic_fetch_add_explicit(&l->wseq, 1, memory_order_relaxed);
		wait_wake(&l->wseq, 1);
	}
}

/* Acquire: the departed readers' critical sections happen before ours. */
static bool ba_drained(struct ba_lock *l, uint32_t ticket)
{
	return ba_rout_count(atomic_load_explicit(&l->rout, memory_order_acquire)) == ticket;
}

int ba_write_wait(struct ba_lock *l, uint32_t ticket, const struct deadline *dl)
{
	uint64_t nap = 0;

	while (!ba_drained(l, ticket)) {
		uint32_t v = atomic_load_explicit(&l->rout, memory_order_relaxed);

		/* Spin only while the readers still inside can all be running. */
		if (wait_spin_pays((ticket - ba_rout_count(v)) & BA_COUNT_MASK) &&
		    wait_spin(&l->rout, ~BA_WPARK, v))
			continue;
		/*
		 * Set WPARK, then re-check the count in the value we park on.
		 * The mark and each departure are RMWs of rout: a departure
		 * after the mark sees WPARK and wakes us, one before it is in v.
		 * Acquire: for a count that is final here (the break below).
		 */
		v = atomic_fetch_or_explicit(&l->rout, BA_WPARK, memory_order_acq_rel) | BA_WPARK;
		if (ba_rout_count(v) == ticket)
			break;
		/* Polled: the last departure's wake may be owed by an interrupted thread (wait.h). */
		if (wait_park_polled(&l->rout, v, dl, &nap) == ETIMEDOUT && !ba_drained(l, ticket))
			return ETIMEDOUT;
	}
	atomic_thread_fence(memory_order_acquire); /* as ba_drained, for every way out */
	return 0;
}

uint32_t ba_readers_of(const void *l)
{
	struct ba_lock *b = (struct ba_lock *)l;

	return ba_readers_in(b, atomic_load_explicit(&b->rin, memory_order_relaxed));
}

uint32_t ba_departed_of(const void *l)
{
	struct ba_lock *b = (struct ba_lock *)l;

	return ba_rout_count(atomic_load_explicit(&b->rout, memory_order_relaxed));
}

static const struct wait_readers ba_readers = { ba_readers_of, ba_departed_of };

int ba_write_lock_marking(struct ba_lock *l, const struct deadline *dl)
{
	const void *pending = wait_writer_pending_get();
	uint32_t ticket;

	if (ba_write_begin(l, &ticket, dl, &ba_readers, l))
		return ETIMEDOUT;
	/* Holding the writer side: a handler's read on this thread gets in (wait.h). */
	wait_writer_pending_set(l);
	if (ba_write_wait(l, ticket, dl) == 0)
		return 0; /* still marked: the caller puts the mark back once it named itself */
	wait_writer_pending_restore(pending);
	ba_write_unlock(l);
	return ETIMEDOUT;
}

int ba_write_lock_named(struct ba_lock *l, const struct deadline *dl, int *name, int id)
{
	const void *pending = wait_writer_pending_get();
	int r = ba_write_lock_marking(l, dl);

	if (r == 0) {
		if (name)
			__atomic_store_n(name, id, __ATOMIC_RELAXED); /* named before the mark goes */
		wait_writer_pending_restore(pending);
	}
	return r;
}

int ba_write_lock(struct ba_lock *l, const struct deadline *dl)
{
	return ba_write_lock_named(l, dl, NULL, 0);
}

/* Snapshots: acquire so that a caller that sees the lock idle may reuse it. */
bool ba_is_idle(struct ba_lock *l)
{
	uint64_t in = atomic_load_explicit(&l->rin, memory_order_acquire);
	uint32_t out = atomic_load_explicit(&l->rout, memory_order_acquire);

	/* No BA_PRES: no writer holds the lock, and none sleeps (BA_WSLEEP needs BA_PRES). */
	return !(in & BA_PRES) && ba_rin_count(in) == ba_rout_count(out);
}

bool ba_read_held(struct ba_lock *l)
{
	uint64_t in = atomic_load_explicit(&l->rin, memory_order_acquire);
	uint32_t out = atomic_load_explicit(&l->rout, memory_order_acquire);

	return ba_rin_count(in) != ba_rout_count(out);
}
