/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cohort.c - C-RW-WP: reader slow path, writers, and the cohort mutex.
 * See cohort.h for the layout, the invariants and the memory ordering.
 *
 * Time-outs.  A waiter that gives up must leave the lock as if it had never
 * asked.  Each kind of wait withdraws with one atomic step on the word that
 * a releaser decides on, so a release and a withdrawal are ordered:
 *
 *  - A reader waits before it arrives: while it waits it holds nothing and
 *    is counted nowhere (a reader that saw WACTIVE after arriving has
 *    already backed out, waking a draining writer).  Giving up leaves at
 *    most a stale RPARK, which costs the next writer a spare wake-up.
 *
 *  - A writer waiting for its node's local lock is counted in lstate.  It
 *    withdraws with a CAS that succeeds only while LLOCKED is set; the
 *    holder's release then finds it gone.  A releaser passes the local lock
 *    with LGPASS only by a CAS that saw a waiter counted, and a counted
 *    waiter cannot withdraw while the lock is free: if it times out then,
 *    it takes the lock instead.  With LGPASS it owns the cohort mutex and
 *    returns 0, late; without, it asks for the global lock with its
 *    (passed) deadline, which gets it only if it is free or granted before
 *    the waiter withdraws, and otherwise gives both up (waking the next
 *    local waiter).  So the global lock is never left with a node whose
 *    writers all left.
 *
 *  - A writer waiting for the global lock (it holds its local lock) is one
 *    bit of gstate's waiting mask.  It withdraws with a CAS that clears its
 *    bit only while it is not the owner; a releaser grants with a CAS that
 *    makes a waiting node the owner and clears its bit.  Whichever comes
 *    first wins: a waiter granted the lock keeps it and returns 0.  So a
 *    grant never goes to a node that left.
 *
 *  - A writer waiting for readers to drain holds the cohort mutex with
 *    WACTIVE set.  It gives up with a global release (never a local
 *    hand-off, which would promise the receiver drained readers): it grants
 *    the global lock to the next waiting node, which drains for itself, or
 *    clears WACTIVE (waking the readers it held off) and frees it; then it
 *    releases its local lock, waking a local waiter.
 */
#include "cohort.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

enum cohort_got {
	GOT_NONE,       /* timed out; nothing held */
	GOT_LOCAL,      /* the local lock alone */
	GOT_PASSED,     /* the local lock and the global lock with it */
	GOT_GLOBAL,     /* the global lock, fresh or granted */
};

size_t cohort_rw_size(unsigned nnodes)
{
	return sizeof(struct cohort_rw) + (size_t)nnodes * sizeof(struct cohort_node);
}

_Static_assert(sizeof(struct cohort_central) == COHORT_SECTOR, "central sector");
_Static_assert(sizeof(struct cohort_global) == COHORT_SECTOR, "global sector");
_Static_assert(sizeof(struct cohort_node) == 2 * COHORT_SECTOR, "node sectors");
_Static_assert(sizeof(struct cohort_rw) == 2 * COHORT_SECTOR, "head sectors");

void cohort_rw_init(struct cohort_rw *l, unsigned nnodes, unsigned handoff_bound)
{
	memset(l, 0, cohort_rw_size(nnodes));
	l->global.nnodes = nnodes;
	l->global.handoff_bound = handoff_bound;
}

static struct cohort_local *local_of(struct cohort_rw *l, unsigned node)
{
	return &l->node[node].local;
}

/* The 32-bit low half of gstate (owner and GPARK): global waiters' futex word. */
static _Atomic uint32_t *gstate_low(struct cohort_rw *l)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (_Atomic uint32_t *)(void *)&l->global.gstate;
#else
	return (_Atomic uint32_t *)(void *)&l->global.gstate + 1;
#endif
}

static uint64_t gowner_of(unsigned node)
{
	return (uint64_t)node + 1;
}

/* ---- readers ---- */

/* Enter as a guest if no other writer is named (see cohort.h, Guests). */
bool cohort_rw_read_guest(struct cohort_rw *l, unsigned node)
{
	_Atomic uint32_t *wo = &l->global.wowner;
	uint32_t self = wait_self_id(), w;

	/* Relaxed: a first look; the seq_cst re-read after the arrival decides. */
	w = atomic_load_explicit(wo, memory_order_relaxed);
	if (w != 0 && w != self)
		return false;
	/* seq_cst arrival, then seq_cst re-read: the guest's half of the Dekker pair. */
	atomic_fetch_add_explicit(&l->node[node].ri.ingress, COHORT_RI_INC, memory_order_seq_cst);
	w = atomic_load_explicit(wo, memory_order_seq_cst);
	if (w == 0 || w == self)
		return true;
	cohort_rw_read_unlock(l, node);
	return false;
}

/* Readers inside, over every node (a racy snapshot): what the policy counts (wait.h). */
static uint32_t readers_inside(struct cohort_rw *l)
{
	uint32_t n = 0;

	for (unsigned i = 0; i < l->global.nnodes; i++)
		n += cohort_rw_readers_present(l, i);
	return n;
}

static uint32_t readers_inside_of(const void *l)
{
	return readers_inside((struct cohort_rw *)l);
}

/* Departures over every node (a sum, modulo 2^32): a racy snapshot. */
static uint32_t readers_departed_of(const void *arg)
{
	const struct cohort_rw *l = arg;
	uint32_t n = 0;

	for (unsigned i = 0; i < l->global.nnodes; i++)
		n += atomic_load_explicit(&l->node[i].ri.egress, memory_order_relaxed) & ~COHORT_WPARK;
	return n;
}

static const struct wait_readers cohort_readers = { readers_inside_of, readers_departed_of };

/* A guest waits by polling (cohort.h): spin, then sleep up to 1 ms. */
static int read_guest_wait(struct cohort_rw *l, unsigned node, const struct deadline *dl)
{
	for (unsigned step = 0;; step++) {
		if (cohort_rw_read_guest(l, node))
			return 0;
		if (deadline_passed(dl))
			return ETIMEDOUT;
		if (step < wait_spin_budget)
			cpu_relax();
		else
			wait_sleep_ns(step - wait_spin_budget < 6 ?
				      UINT64_C(16000) << (step - wait_spin_budget) : UINT64_C(1000000), dl);
	}
}

int cohort_rw_read_lock_slowpath(struct cohort_rw *l, unsigned node, const struct deadline *dl)
{
	_Atomic uint32_t *ws = &l->central.wstate;

	if (wait_writer_pending_is(l))
		return read_guest_wait(l, node, dl);
	for (;;) {
		/* Relaxed: a hint to wait on; cohort_rw_read_enter re-reads it seq_cst. */
		uint32_t v = atomic_load_explicit(ws, memory_order_relaxed);

		if (!(v & COHORT_WACTIVE)) {
			if (cohort_rw_read_enter(l, node))
				return 0;
			continue;
		}
		/*
		 * Spin only while the writer and the readers it drains can all be
		 * running, and no other reader already sleeps behind it (wait.h).
		 */
		if (!(v & COHORT_RPARK) && wait_spin_pays(readers_inside(l) + 1) &&
		    wait_spin(ws, COHORT_WACTIVE, v))
			continue;
		/*
		 * Relaxed: the mark and writer_leave are RMWs of wstate, so the leave
		 * either sees RPARK (and wakes) or makes this CAS fail; we enter only
		 * through cohort_rw_read_enter.
		 */
		if (!(v & COHORT_RPARK) &&
		    !atomic_compare_exchange_weak_explicit(ws, &v, v | COHORT_RPARK,
							   memory_order_relaxed,
							   memory_order_relaxed))
			continue;
		/* Only WACTIVE and RPARK live in wstate: no spurious EAGAIN. */
		if (wait_park(ws, v | COHORT_RPARK, dl) == ETIMEDOUT)
			return cohort_rw_read_trylock(l, node) ? 0 : ETIMEDOUT;
	}
}

void cohort_rw_read_unlock_wake(struct cohort_rw *l, unsigned node)
{
	_Atomic uint32_t *egress = &l->node[node].ri.egress;

	/*
	 * Only the writer draining readers parks on egress.  Relaxed: the departure
	 * already released the critical section; the woken writer re-reads egress
	 * with acquire.
	 */
	atomic_fetch_and_explicit(egress, ~COHORT_WPARK, memory_order_relaxed);
	wait_wake(egress, 1);
}

/* ---- the local lock: per node, counts its waiters, may carry the global lock ---- */

/*
 * Take the free local lock seen in *v (withdrawing one registered waiter if
 * waiter is COHORT_LWAITER).  Acquire: pairs with the release of the
 * previous holder's unlock or pass.  On success *v is the old value, whose
 * LGPASS says whether the global lock came along.  Relaxed on failure: nothing
 * is taken, and the caller decides again on the fresh *v.
 */
static bool local_take(struct cohort_local *ln, uint32_t *v, uint32_t waiter)
{
	uint32_t nv = ((*v & ~COHORT_LGPASS) - waiter) | COHORT_LLOCKED;

	return atomic_compare_exchange_weak_explicit(&ln->lstate, v, nv, memory_order_acquire,
						     memory_order_relaxed);
}

static enum cohort_got local_got(uint32_t old)
{
	return (old & COHORT_LGPASS) ? GOT_PASSED : GOT_LOCAL;
}

/* The deadline passed: withdraw, unless the lock is free, then take it. */
static enum cohort_got local_withdraw(struct cohort_local *ln)
{
	/* Relaxed: a first guess; the CASes below decide. */
	uint32_t v = atomic_load_explicit(&ln->lstate, memory_order_relaxed);

	for (;;) {
		/*
		 * Free: take it (acquire, in local_take).  Locked: withdraw, relaxed
		 * as we take nothing; the holder's unlock or pass is an RMW of lstate
		 * too, so it sees us gone or makes this CAS fail and we see it free.
		 */
		if (!(v & COHORT_LLOCKED)) {
			if (local_take(ln, &v, COHORT_LWAITER))
				return local_got(v);
		} else if (atomic_compare_exchange_weak_explicit(&ln->lstate, &v, v - COHORT_LWAITER,
								 memory_order_relaxed,
								 memory_order_relaxed)) {
			return GOT_NONE;
		}
	}
}

static enum cohort_got local_lock(struct cohort_local *ln, const struct deadline *dl)
{
	/* Relaxed: a first guess; only local_take's acquire CAS takes the lock. */
	uint32_t v = atomic_load_explicit(&ln->lstate, memory_order_relaxed);

	while (!(v & COHORT_LLOCKED)) {
		if (local_take(ln, &v, 0))
			return local_got(v);
	}
	/*
	 * Count ourselves first, so that the holder can hand off to us.  Relaxed:
	 * this takes nothing; the holder's unlock or pass is an RMW of lstate too,
	 * so it sees us counted (and wakes or passes to us) or v shows it free.
	 */
	v = atomic_fetch_add_explicit(&ln->lstate, COHORT_LWAITER, memory_order_relaxed) +
	    COHORT_LWAITER;
	for (;;) {
		if (!(v & COHORT_LLOCKED)) {
			if (local_take(ln, &v, COHORT_LWAITER))
				return local_got(v);
			continue;
		}
		/*
		 * Every release with a waiter counted wakes one; a woken waiter
		 * either takes the lock or parks again behind a holder that will
		 * wake the next.  Arrivals change the count: a spare EAGAIN.
		 */
		/* Spin only while the holder and the other waiters can all be running. */
		if (!(wait_spin_pays(v / COHORT_LWAITER) && wait_spin(&ln->lstate, COHORT_LLOCKED, v)) &&
		    wait_park(&ln->lstate, v, dl) == ETIMEDOUT)
			return local_withdraw(ln);
		/* Relaxed: only local_take's acquire CAS takes the lock. */
		v = atomic_load_explicit(&ln->lstate, memory_order_relaxed);
	}
}

/* -1 busy, else GOT_LOCAL or GOT_PASSED. */
static int local_trylock(struct cohort_local *ln)
{
	/* Relaxed: a first guess; local_take's acquire CAS decides. */
	uint32_t v = atomic_load_explicit(&ln->lstate, memory_order_relaxed);

	while (!(v & COHORT_LLOCKED)) {
		if (local_take(ln, &v, 0))
			return (int)local_got(v);
	}
	return -1;
}

/* Release the local lock alone (the global lock already went its way). */
static void local_unlock(struct cohort_local *ln)
{
	/*
	 * Release: pairs with local_take's acquire.  An RMW of lstate, so it sees
	 * every waiter counted before it (and wakes one).
	 */
	uint32_t old = atomic_fetch_and_explicit(&ln->lstate, ~COHORT_LLOCKED, memory_order_release);

	if (old >= COHORT_LWAITER)
		wait_wake(&ln->lstate, 1);
}

/*
 * Hand the local lock and the global lock with it to a waiter of this node;
 * false (nothing done) if none is counted, or if the waiters do not spin.
 * A hand-off keeps WACTIVE set, so readers stay out until the receiver
 * runs.  Waiters spin only while they and the holder can all be running
 * (local_lock); past that they park, and a parked receiver needs a
 * wake-up and then a CPU, which with more threads than CPUs can be a
 * time slice away (16 threads on 2 CPUs, 1% writes: 0.30x glibc handing
 * off to parked waiters, 0.93x not; results/README.md, "Waiting").  So
 * the lock is then released instead: readers get in at once and the
 * waiter woken competes for it.  The test reads the count the waiters
 * decide by; a waiter counted after it only gets the release.  Release:
 * our critical section happens before the receiver's.
 */
static bool local_pass(struct cohort_local *ln)
{
	/* Relaxed: a first guess; the CAS decides (on failure, again on the fresh v). */
	uint32_t v = atomic_load_explicit(&ln->lstate, memory_order_relaxed);

	if (!wait_spin_pays(v / COHORT_LWAITER))
		return false;
	while (v >= COHORT_LWAITER) {
		if (atomic_compare_exchange_weak_explicit(&ln->lstate, &v,
							  (v & ~COHORT_LLOCKED) | COHORT_LGPASS,
							  memory_order_release,
							  memory_order_relaxed)) {
			wait_wake(&ln->lstate, 1);
			return true;
		}
	}
	return false;
}

/* ---- the global lock: one owner node, waiting nodes served round-robin ---- */

/* We own the global lock: a new tenure starts. */
static void global_tenure_start(struct cohort_rw *l)
{
	/* Relaxed: streak is the owner's alone; tenures are ordered by gstate and lstate. */
	atomic_store_explicit(&l->global.streak, 0, memory_order_relaxed);
}

/* The deadline passed: withdraw our waiting bit, unless we were granted the lock. */
static int global_withdraw(struct cohort_rw *l, unsigned node)
{
	_Atomic uint64_t *gs = &l->global.gstate;
	/* Acquire: v may show the grant; pairs with the granting release. */
	uint64_t v = atomic_load_explicit(gs, memory_order_acquire);

	for (;;) {
		if ((v & COHORT_GOWNER) == gowner_of(node)) {
			global_tenure_start(l);
			return 0;
		}
		/*
		 * Acquire on failure: v may show the grant we then take.  Withdrawing
		 * needs no order: acquire on success only as C11 wants the failure
		 * order no stronger.
		 */
		if (atomic_compare_exchange_weak_explicit(gs, &v, v & ~COHORT_GWAITING(node),
							  memory_order_acquire,
							  memory_order_acquire))
			return ETIMEDOUT;
	}
}

/* Wait for a grant; our bit is set in the waiting mask. */
static int global_wait_grant(struct cohort_rw *l, unsigned node, const struct deadline *dl)
{
	_Atomic uint64_t *gs = &l->global.gstate;

	for (;;) {
		/* Acquire: pairs with the granting release. */
		uint64_t v = atomic_load_explicit(gs, memory_order_acquire);
		uint32_t low = (uint32_t)v;

		if ((v & COHORT_GOWNER) == gowner_of(node)) {
			global_tenure_start(l);
			return 0;
		}
		if (wait_spin(gstate_low(l), UINT32_MAX, low))
			continue;
		/*
		 * Relaxed: the mark and global_release are RMWs of gstate, so the
		 * release either sees GPARK (and wakes) or makes this CAS fail.
		 */
		if (!(v & COHORT_GPARK)) {
			if (!atomic_compare_exchange_weak_explicit(gs, &v, v | COHORT_GPARK,
								   memory_order_relaxed,
								   memory_order_relaxed))
				continue;
			low |= (uint32_t)COHORT_GPARK;
		}
		/* Waiting bits live in the high half: they cause no spurious EAGAIN. */
		if (wait_park(gstate_low(l), low, dl) == ETIMEDOUT)
			return global_withdraw(l, node);
	}
}

static int global_lock(struct cohort_rw *l, unsigned node, const struct deadline *dl)
{
	_Atomic uint64_t *gs = &l->global.gstate;
	/* Relaxed: a first guess; the CASes below decide. */
	uint64_t v = atomic_load_explicit(gs, memory_order_relaxed);

	/*
	 * Owned: set our waiting bit (the else branch).  Relaxed: it takes nothing
	 * (global_wait_grant acquires the grant), and global_release is an RMW of
	 * gstate too, so it sees the bit (and grants to us in turn) or came first
	 * and this CAS fails.
	 */
	for (;;) {
		/* Free means all zero: a free lock has neither waiters nor GPARK. */
		if (v == 0) {
			/* Acquire: pairs with the release that freed it; failure takes nothing. */
			if (atomic_compare_exchange_weak_explicit(gs, &v, gowner_of(node),
								  memory_order_acquire,
								  memory_order_relaxed)) {
				global_tenure_start(l);
				return 0;
			}
		} else if (atomic_compare_exchange_weak_explicit(gs, &v, v | COHORT_GWAITING(node),
								 memory_order_relaxed,
								 memory_order_relaxed)) {
			return global_wait_grant(l, node, dl);
		}
	}
}

static bool global_trylock(struct cohort_rw *l, unsigned node)
{
	uint64_t v = 0;

	/* Acquire: pairs with the release that freed it; failure takes nothing. */
	if (!atomic_compare_exchange_strong_explicit(&l->global.gstate, &v, gowner_of(node),
						     memory_order_acquire, memory_order_relaxed))
		return false;
	global_tenure_start(l);
	return true;
}

/* The first waiting node after node, cyclically (mask != 0, node not in it). */
static unsigned global_next(uint32_t mask, unsigned node)
{
	uint32_t after = mask & ~(uint32_t)((UINT64_C(2) << node) - 1);

	return (unsigned)__builtin_ctz(after ? after : mask);
}

/* WACTIVE off: let readers in (global owner only, before freeing it). */
static void writer_leave(struct cohort_rw *l)
{
	/* Release: our critical section happens before the readers'. */
	uint32_t old = atomic_fetch_and_explicit(&l->central.wstate,
						 ~(COHORT_WACTIVE | COHORT_RPARK),
						 memory_order_release);

	if (old & COHORT_RPARK)
		wait_wake(&l->central.wstate, INT_MAX);
}

/*
 * Grant the global lock to the next waiting node, WACTIVE staying set (it
 * is being handed over), or, if none waits, clear WACTIVE and free it.
 * WACTIVE goes first: once the lock is free a new owner may set it again.
 * If a node starts waiting after we cleared it, we grant to it anyway and
 * it sets WACTIVE for itself.
 */
static void global_release(struct cohort_rw *l, unsigned node)
{
	_Atomic uint64_t *gs = &l->global.gstate;
	/*
	 * Relaxed: a first guess; the CAS decides (on failure, again on the fresh
	 * v).  Its release pairs with the acquire of the grant (global_wait_grant,
	 * global_withdraw) or of the free lock (global_lock, global_trylock): our
	 * critical section and streak accesses happen before the next owner's.
	 */
	uint64_t v = atomic_load_explicit(gs, memory_order_relaxed);
	uint64_t nv;
	bool readers_let_in = false;

	do {
		uint32_t mask = (uint32_t)(v >> 32);

		if (mask) {
			unsigned next = global_next(mask, node);

			nv = (v & ~COHORT_GLOW & ~COHORT_GWAITING(next)) | gowner_of(next);
		} else {
			if (!readers_let_in)
				writer_leave(l);
			readers_let_in = true;
			nv = 0;
		}
	} while (!atomic_compare_exchange_weak_explicit(gs, &v, nv, memory_order_release,
							 memory_order_relaxed));
	/* All waiting nodes sleep on the low half; at most nnodes - 1 of them. */
	if (v & COHORT_GPARK)
		wait_wake(gstate_low(l), INT_MAX);
}

/* ---- the cohort mutex ---- */

/* Received the cohort mutex by a local hand-off (we own streak and handoffs). */
static void note_handoff(struct cohort_rw *l)
{
	struct cohort_global *g = &l->global;

	/*
	 * Relaxed: both are the holder's alone, ordered from holder to holder by
	 * lstate's pass (local_take's acquire); handoffs is statistics only.
	 */
	atomic_store_explicit(&g->streak,
			      atomic_load_explicit(&g->streak, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&g->handoffs,
			      atomic_load_explicit(&g->handoffs, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* GOT_NONE (timed out), GOT_PASSED or GOT_GLOBAL; the local lock is ours either way. */
static enum cohort_got cohort_mutex_lock(struct cohort_rw *l, unsigned node,
					 const struct deadline *dl)
{
	struct cohort_local *ln = local_of(l, node);

	switch (local_lock(ln, dl)) {
	case GOT_NONE:
		return GOT_NONE;
	case GOT_PASSED:
		note_handoff(l);
		return GOT_PASSED;
	default:
		break;
	}
	if (global_lock(l, node, dl) == 0)
		return GOT_GLOBAL;
	local_unlock(ln);
	return GOT_NONE;
}

/*
 * Name ourselves as the writer (cohort.h, Guests).  seq_cst, before the
 * drain's seq_cst loads of ingress: the writer's half of that Dekker pair.
 */
static void writer_claim(struct cohort_rw *l)
{
	atomic_store_explicit(&l->global.wowner, wait_self_id(), memory_order_seq_cst);
}

/*
 * No writer named: guests may come in.  Release: our critical section
 * happens before a guest's, which re-reads wowner after it arrives.
 */
static void writer_unclaim(struct cohort_rw *l)
{
	atomic_store_explicit(&l->global.wowner, 0, memory_order_release);
}

/* Global release, then the local lock: no hand-off. */
static void cohort_mutex_release(struct cohort_rw *l, unsigned node)
{
	writer_unclaim(l);
	global_release(l, node);
	local_unlock(local_of(l, node));
}

/* ---- writers ---- */

/*
 * Shut readers out (global owner only).  seq_cst, before the drain's
 * seq_cst loads of ingress: the writer's half of the Dekker pair.  If WACTIVE
 * is still set from a grant, nobody can clear it while we own the lock, and
 * the earlier owner's seq_cst setting happens before our drain through
 * gstate's release/acquire, so the pair holds without an RMW of ours: the
 * load needs no ordering of its own.
 */
static void writer_activate(struct cohort_rw *l)
{
	if (!(atomic_load_explicit(&l->central.wstate, memory_order_seq_cst) & COHORT_WACTIVE))
		atomic_fetch_or_explicit(&l->central.wstate, COHORT_WACTIVE, memory_order_seq_cst);
}

/*
 * Egress first (acquire), then ingress: equal counts mean every reader
 * counted in ingress had left when we read egress.  The acquire also makes
 * those readers' critical sections happen before ours.  Ingress seq_cst:
 * after writer_activate, the writer's half of the Dekker pair with
 * cohort_rw_read_enter (its arrival, then its load of wstate).
 */
static bool node_drained(struct cohort_indicator *ri)
{
	uint32_t out = atomic_load_explicit(&ri->egress, memory_order_acquire);
	uint32_t in = atomic_load_explicit(&ri->ingress, memory_order_seq_cst);

	return ((in ^ out) & ~COHORT_WPARK) == 0;
}

static int drain_node(struct cohort_indicator *ri, const struct deadline *dl)
{
	uint64_t nap = 0;
	bool flagged = false;
	int r = 0;

	while (!node_drained(ri)) {
		/* Relaxed: only the value to spin on; node_drained re-reads with acquire. */
		uint32_t out = atomic_load_explicit(&ri->egress, memory_order_relaxed);

		/* Spin only while the readers inside can all be running (wait.h). */
		if (wait_spin_pays(((atomic_load_explicit(&ri->ingress, memory_order_relaxed) -
				     (out & ~COHORT_WPARK)) / COHORT_RI_INC) & 0x7fffffffu) &&
		    wait_spin(&ri->egress, ~COHORT_WPARK, out))
			continue;
		/*
		 * Flag that we sleep, then re-check against the value we park on.
		 * The mark is an RMW of egress like the departures, so a later
		 * departure sees WPARK and wakes us.  Its acquire (part of seq_cst)
		 * makes the departures in out happen before the ingress re-read and,
		 * on the break, before our critical section.  The re-read comes after
		 * node_drained's seq_cst load, which already closed the Dekker pair.
		 */
		out = atomic_fetch_or_explicit(&ri->egress, COHORT_WPARK, memory_order_seq_cst) |
		      COHORT_WPARK;
		flagged = true;
		if (((atomic_load_explicit(&ri->ingress, memory_order_seq_cst) ^ out) &
		     ~COHORT_WPARK) == 0)
			break;
		/* Polled: the last departure's wake may be owed by an interrupted thread (wait.h). */
		if (wait_park_polled(&ri->egress, out, dl, &nap) == ETIMEDOUT && !node_drained(ri)) {
			r = ETIMEDOUT;
			break;
		}
	}
	/* Spare departing readers a wake-up call.  Relaxed: a hint bit; we acquired above. */
	if (flagged)
		atomic_fetch_and_explicit(&ri->egress, ~COHORT_WPARK, memory_order_relaxed);
	return r;
}

static int write_lock_waiting(struct cohort_rw *l, unsigned node, const struct deadline *dl)
{
	switch (cohort_mutex_lock(l, node, dl)) {
	case GOT_NONE:
		return ETIMEDOUT;
	case GOT_PASSED:
		break; /* WACTIVE stayed set; the drain finds only guests, if any */
	default:
		/*
		 * Readers inside that cannot all be running, or of which none
		 * leaves within a spin: one of them is preempted, and shutting
		 * readers out now would stop them all until it runs again.
		 * Yield to them a few times first, as a BA writer does (ba.h,
		 * "Holding back"; wait.h); we hold the writers' mutex, so no
		 * other writer waits longer than it would behind our drain.
		 */
		for (unsigned yields = 0, n;
		     (n = readers_inside(l)) != 0 &&
		     (!wait_spin_pays(n) || !wait_spin_progress(&cohort_readers, l)) &&
		     wait_defer(&yields);)
			;
		writer_activate(l);
		break;
	}
	writer_claim(l);
	for (unsigned i = 0; i < l->global.nnodes; i++) {
		if (drain_node(&l->node[i].ri, dl)) {
			cohort_mutex_release(l, node);
			return ETIMEDOUT;
		}
	}
	return 0;
}

int cohort_rw_write_lock(struct cohort_rw *l, unsigned node, const struct deadline *dl)
{
	/* The whole wait: the mutex may be handed to us while a handler of ours runs. */
	const void *pending = wait_writer_pending_set(l);
	int r = write_lock_waiting(l, node, dl);

	wait_writer_pending_restore(pending);
	return r;
}

static bool all_drained(struct cohort_rw *l)
{
	for (unsigned i = 0; i < l->global.nnodes; i++) {
		if (!node_drained(&l->node[i].ri))
			return false;
	}
	return true;
}

bool cohort_rw_write_trylock(struct cohort_rw *l, unsigned node)
{
	struct cohort_local *ln = local_of(l, node);

	switch (local_trylock(ln)) {
	case -1:
		return false;
	case GOT_PASSED:
		note_handoff(l);
		writer_claim(l);
		if (all_drained(l))
			return true;
		cohort_mutex_release(l, node); /* a guest is inside: no hand-off */
		return false;
	default:
		break;
	}
	if (!global_trylock(l, node)) {
		local_unlock(ln);
		return false;
	}
	/* Look before shutting readers out, so that a failure disturbs nobody. */
	if (all_drained(l)) {
		writer_activate(l);
		writer_claim(l);
		if (all_drained(l))
			return true;
	}
	cohort_mutex_release(l, node);
	return false;
}

void cohort_rw_write_unlock(struct cohort_rw *l, unsigned node)
{
	struct cohort_global *g = &l->global;

	writer_unclaim(l);
	/* Relaxed: streak is the cohort-mutex holder's alone, and we hold it. */
	if (atomic_load_explicit(&g->streak, memory_order_relaxed) < g->handoff_bound &&
	    local_pass(local_of(l, node)))
		return;
	cohort_mutex_release(l, node);
}

/*
 * Acquire, as ba_is_idle: a caller that sees the lock idle may reuse the block
 * (the registry resets it); the last users' releases happen before that.
 */
bool cohort_rw_is_idle(struct cohort_rw *l)
{
	if (atomic_load_explicit(&l->central.wstate, memory_order_acquire) != 0 ||
	    atomic_load_explicit(&l->global.gstate, memory_order_acquire) != 0)
		return false;
	for (unsigned i = 0; i < l->global.nnodes; i++) {
		if (atomic_load_explicit(&l->node[i].local.lstate, memory_order_acquire) != 0 ||
		    !node_drained(&l->node[i].ri))
			return false;
	}
	return true;
}
