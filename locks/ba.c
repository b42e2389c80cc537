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

/* Spin while the writer phase wphase is in force; true if it ended. */
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

	while ((v & BA_WPHASE) == wphase) {
		if (atomic_compare_exchange_weak_explicit(&l->rin, &v, v - BA_RINC,
							  memory_order_relaxed,
							  memory_order_relaxed))
			return true;
	}
	atomic_thread_fence(memory_order_acquire);
	return false;
}

int ba_read_lock_slowpath(struct ba_lock *l, uint64_t wphase, const struct deadline *dl)
{
	for (;;) {
		uint64_t v = atomic_load_explicit(&l->rin, memory_order_acquire);

		if ((v & BA_WPHASE) != wphase)
			return 0;
		if (ba_spin_phase(l, wphase))
			continue;
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

/* The writer mutex's holder left it marked 2: wake one sleeper. */
void ba_wmutex_wake(struct ba_lock *l)
{
	wait_wake(&l->wmutex, 1);
}

/* ---- writer phases ---- */

/*
 * Start a writer phase (wmutex held): set BA_PRES and the next sequence
 * number.  Returns the count of readers admitted before it.  Only the wmutex
 * holder changes the writer half's sequence, so the one read here is
 * stable, and one fetch_add moves it to the next value without carrying
 * into the reader count, whatever readers do meanwhile.  acq_rel: later
 * readers see the phase; we see earlier readers' arrivals.
 */
static uint32_t ba_write_announce(struct ba_lock *l)
{
	uint64_t seq = atomic_load_explicit(&l->rin, memory_order_relaxed) & BA_SEQ_MASK;
	uint64_t next = (seq + BA_SEQ_INC) & BA_SEQ_MASK;

	return ba_rin_count(atomic_fetch_add_explicit(&l->rin, BA_PRES + next - seq,
						   memory_order_acq_rel));
}

/* A writer left a phase that readers sleep behind: wake them, pass on the mutex. */
void ba_wake_readers_unlock(struct ba_lock *l)
{
	wait_wake(rin_whalf(l), INT_MAX);
	ba_write_unlock_mutex(l);
}

static bool ba_drained(struct ba_lock *l, uint32_t ticket)
{
	return ba_rout_count(atomic_load_explicit(&l->rout, memory_order_acquire)) == ticket;
}

int ba_write_begin(struct ba_lock *l, uint32_t *ticket, const struct deadline *dl)
{
	if (wmutex_lock(l, dl))
		return ETIMEDOUT;
	*ticket = ba_write_announce(l);
	return 0;
}

int ba_write_wait(struct ba_lock *l, uint32_t ticket, const struct deadline *dl)
{
	while (!ba_drained(l, ticket)) {
		uint32_t v = atomic_load_explicit(&l->rout, memory_order_relaxed);

		if (wait_spin(&l->rout, ~BA_WPARK, v))
			continue;
		/* Set WPARK, then re-check the count in the value we park on. */
		v = atomic_fetch_or_explicit(&l->rout, BA_WPARK, memory_order_acq_rel) | BA_WPARK;
		if (ba_rout_count(v) == ticket)
			break;
		if (wait_park(&l->rout, v, dl) == ETIMEDOUT && !ba_drained(l, ticket))
			return ETIMEDOUT;
	}
	atomic_thread_fence(memory_order_acquire);
	return 0;
}

int ba_write_lock(struct ba_lock *l, const struct deadline *dl)
{
	uint32_t ticket;

	if (ba_write_begin(l, &ticket, dl))
		return ETIMEDOUT;
	if (ba_write_wait(l, ticket, dl)) {
		ba_write_unlock(l);
		return ETIMEDOUT;
	}
	return 0;
}

bool ba_is_idle(struct ba_lock *l)
{
	uint64_t in = atomic_load_explicit(&l->rin, memory_order_acquire);
	uint32_t out = atomic_load_explicit(&l->rout, memory_order_acquire);

	return !(in & BA_PRES) && ba_rin_count(in) == ba_rout_count(out) &&
	       atomic_load_explicit(&l->wmutex, memory_order_relaxed) == 0;
}

bool ba_read_held(struct ba_lock *l)
{
	uint64_t in = atomic_load_explicit(&l->rin, memory_order_acquire);
	uint32_t out = atomic_load_explicit(&l->rout, memory_order_acquire);

	return ba_rin_count(in) != ba_rout_count(out);
}
