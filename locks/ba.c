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

/*
 * Withdraw a reader's arrival after a time-out.  Succeeds only while the
 * writer phase wbits that blocked it is still in force: that writer took its
 * snapshot of rin before our arrival, and no later writer can have taken a
 * snapshot yet, so nobody counts the withdrawn reader.  If the phase changed
 * meanwhile, the reader has been admitted and keeps the lock.
 */
static bool ba_read_withdraw(struct ba_lock *l, uint32_t wbits)
{
	uint32_t v = atomic_load_explicit(&l->rin, memory_order_relaxed);

	while ((v & BA_WBITS) == wbits) {
		if (atomic_compare_exchange_weak_explicit(&l->rin, &v, v - BA_RINC,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return true;
	}
	atomic_thread_fence(memory_order_acquire);
	return false;
}

int ba_read_lock_slowpath(struct ba_lock *l, uint32_t wbits, const struct deadline *dl)
{
	for (;;) {
		uint32_t v = atomic_load_explicit(&l->rin, memory_order_acquire);

		if ((v & BA_WBITS) != wbits)
			return 0;
		if (wait_spin(&l->rin, BA_WBITS, wbits))
			continue;
		if (!(v & BA_RPARK) &&
		    !atomic_compare_exchange_weak_explicit(&l->rin, &v, v | BA_RPARK,
							   memory_order_relaxed,
							   memory_order_relaxed))
			continue;
		if (wait_park(&l->rin, v | BA_RPARK, dl) == ETIMEDOUT &&
		    ba_read_withdraw(l, wbits))
			return ETIMEDOUT;
	}
}

bool ba_read_trylock(struct ba_lock *l)
{
	uint32_t v = atomic_load_explicit(&l->rin, memory_order_relaxed);

	while (!(v & BA_WBITS)) {
		if (atomic_compare_exchange_weak_explicit(&l->rin, &v, v + BA_RINC,
							  memory_order_acquire,
							  memory_order_relaxed))
			return true;
	}
	return false;
}

void ba_read_unlock_wake(struct ba_lock *l)
{
	/* Only the wmutex holder parks on rout: wake it to re-check its count. */
	atomic_fetch_and_explicit(&l->rout, ~BA_WPARK, memory_order_relaxed);
	wait_wake(&l->rout, 1);
}

/* ---- writer mutex: Drepper's three-state futex mutex ---- */

static int wmutex_lock(struct ba_lock *l, const struct deadline *dl)
{
	for (unsigned i = 0; i <= wait_spin_budget; i++) {
		uint32_t v = 0;

		if (atomic_load_explicit(&l->wmutex, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong_explicit(&l->wmutex, &v, 1,
							    memory_order_acquire,
							    memory_order_relaxed))
			return 0;
		cpu_relax();
	}
	/*
	 * Sleepers mark the word 2 so the holder's unlock wakes one of them; a
	 * woken sleeper re-marks it 2 before it can sleep again, so a holder
	 * that got in with 1 past a sleeper still wakes the rest.
	 */
	while (atomic_exchange_explicit(&l->wmutex, 2, memory_order_acquire) != 0) {
		if (wait_park(&l->wmutex, 2, dl) == ETIMEDOUT)
			return ETIMEDOUT; /* a stale 2 only costs a spare wake */
	}
	return 0;
}

static bool wmutex_trylock(struct ba_lock *l)
{
	uint32_t v = 0;

	return atomic_compare_exchange_strong_explicit(&l->wmutex, &v, 1,
						       memory_order_acquire,
						       memory_order_relaxed);
}

static void wmutex_unlock(struct ba_lock *l)
{
	if (atomic_exchange_explicit(&l->wmutex, 0, memory_order_release) == 2)
		wait_wake(&l->wmutex, 1);
}

/* ---- writer phases ---- */

/* Announce the writer; returns the count of readers it must wait for. */
static uint32_t ba_write_announce(struct ba_lock *l)
{
	uint32_t wbits = BA_PRES | (l->wphase++ & BA_PHID);

	/* acq_rel: later readers see the bits; we see earlier readers' arrivals. */
	return BA_COUNT(atomic_fetch_add_explicit(&l->rin, wbits, memory_order_acq_rel));
}

/* End the writer phase: admit waiting readers, then pass on the mutex. */
static void ba_write_leave(struct ba_lock *l)
{
	uint32_t old = atomic_fetch_and_explicit(&l->rin, ~(BA_WBITS | BA_RPARK),
						 memory_order_release);

	if (old & BA_RPARK)
		wait_wake(&l->rin, INT_MAX);
	wmutex_unlock(l);
}

static bool ba_drained(struct ba_lock *l, uint32_t ticket)
{
	return BA_COUNT(atomic_load_explicit(&l->rout, memory_order_acquire)) == ticket;
}

int ba_write_lock(struct ba_lock *l, const struct deadline *dl)
{
	uint32_t ticket;

	if (wmutex_lock(l, dl))
		return ETIMEDOUT;
	ticket = ba_write_announce(l);
	while (!ba_drained(l, ticket)) {
		uint32_t v = atomic_load_explicit(&l->rout, memory_order_relaxed);

		if (wait_spin(&l->rout, ~(BA_RINC - 1), v))
			continue;
		/* Set WPARK, then re-check the count in the value we parked on. */
		v = atomic_fetch_or_explicit(&l->rout, BA_WPARK, memory_order_acq_rel) | BA_WPARK;
		if (BA_COUNT(v) == ticket)
			break;
		if (wait_park(&l->rout, v, dl) == ETIMEDOUT && !ba_drained(l, ticket)) {
			ba_write_leave(l);
			return ETIMEDOUT;
		}
	}
	atomic_thread_fence(memory_order_acquire);
	return 0;
}

bool ba_write_trylock(struct ba_lock *l)
{
	uint32_t ticket;

	if (!wmutex_trylock(l))
		return false;
	if (BA_COUNT(atomic_load_explicit(&l->rin, memory_order_relaxed)) !=
	    BA_COUNT(atomic_load_explicit(&l->rout, memory_order_relaxed))) {
		wmutex_unlock(l);
		return false;
	}
	ticket = ba_write_announce(l);
	if (ba_drained(l, ticket))
		return true;
	ba_write_leave(l);
	return false;
}

void ba_write_unlock(struct ba_lock *l)
{
	ba_write_leave(l);
}

bool ba_is_idle(struct ba_lock *l)
{
	uint32_t in = atomic_load_explicit(&l->rin, memory_order_acquire);
	uint32_t out = atomic_load_explicit(&l->rout, memory_order_acquire);

	return !(in & BA_WBITS) && BA_COUNT(in) == BA_COUNT(out) &&
	       atomic_load_explicit(&l->wmutex, memory_order_relaxed) == 0;
}
