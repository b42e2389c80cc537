/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wait.h - the one waiting primitive of libbravo: spin briefly, then park.
 *
 * Every place a lock waits (a BA reader behind a writer phase, a BA writer
 * waiting for readers to drain, the BA writer mutex, a BRAVO writer waiting
 * for fast-path readers) goes through these helpers, so that a machine with
 * more runnable threads than CPUs never burns its time slices spinning:
 *
 *   wait_spin()   bounded busy-wait (with a pause hint) for a word to change;
 *   wait_park()   FUTEX_WAIT_BITSET on a 32-bit word until it is woken, the
 *                 word no longer holds the expected value, or the absolute
 *                 deadline passes;
 *   wait_wake()   FUTEX_WAKE.
 *
 * A deadline is an absolute time on CLOCK_REALTIME or CLOCK_MONOTONIC, or
 * none (wait forever).  Futexes here are always process-private: libbravo's
 * own lock words never live in process-shared locks (those are delegated to
 * glibc).  The caller owns the "somebody is parked" protocol of its word;
 * this file only spins, sleeps and wakes.
 */
#ifndef LIBBRAVO_WAIT_H
#define LIBBRAVO_WAIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "hidden.h"

struct deadline {
	const struct timespec *abstime; /* NULL: no deadline */
	clockid_t clock;                /* CLOCK_REALTIME or CLOCK_MONOTONIC */
};

/* Pause iterations before a waiter parks; set once at load (BRAVO_SPIN). */
extern unsigned wait_spin_budget LIBBRAVO_HIDDEN;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/*
 * Spin until (*word & mask) != (val & mask), at most wait_spin_budget times.
 * Returns true if the word changed.  Relaxed loads: the caller re-reads the
 * word with the ordering it needs once this returns.
 */
static inline bool wait_spin(_Atomic uint32_t *word, uint32_t mask, uint32_t val)
{
	for (unsigned i = 0; i < wait_spin_budget; i++) {
		if ((atomic_load_explicit(word, memory_order_relaxed) ^ val) & mask)
			return true;
		cpu_relax();
	}
	return false;
}

/*
 * Sleep while *word == expected.  Returns 0 when woken, when the word had
 * already changed, or on a signal (the caller re-checks its condition), and
 * ETIMEDOUT once the deadline has passed.
 */
int wait_park(_Atomic uint32_t *word, uint32_t expected, const struct deadline *dl);

/* Wake up to count sleepers parked on word. */
void wait_wake(_Atomic uint32_t *word, int count);

/* True if dl is set and its absolute time is now or in the past. */
bool deadline_passed(const struct deadline *dl);

/* Give the CPU away between spins of a waiter that cannot park. */
void wait_yield(void);

/*
 * Sleep about ns nanoseconds (less if dl comes first), for a waiter whose
 * wakers cannot wake it (fast-path readers).  Never touches errno.
 */
void wait_sleep_ns(uint64_t ns, const struct deadline *dl);

#endif
