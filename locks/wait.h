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
 *
 * The policy: spin only while it can pay, that is while every thread of
 * the wait (the holders waited for and the other waiters) can be running
 * beside the waiter: fewer of them than the CPUs this process may use
 * (wait_spin_pays).  Otherwise some are preempted, the wait lasts until
 * the scheduler runs them, and the spin only burns the slice they need:
 * park at once.  And a BA or Cohort-RW writer that finds readers inside
 * that are not all running (more than CPUs, or none leaving within one
 * spin: wait_spin_progress; for BA also whenever the process's threads
 * outnumber its CPUs: wait_oversubscribed) yields to them a few times
 * before it shuts new readers out (wait_defer, ba.h "Holding back").
 * BRAVO_SPIN bounds each spin.
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

/*
 * The lock (the algorithm's own object) whose writer side this thread
 * holds while it waits to enter, or NULL: BA's writer from its
 * announcement to its entry, BRAVO's writer while it waits for fast
 * readers holding the lock underneath, Per-CPU's writer once it holds its
 * first sub-lock, Cohort-RW's writer for its whole wait.  A signal handler
 * that runs on this thread and reads that lock must not wait for it: the
 * writer cannot enter before the handler returns, so waiting would never
 * end.  While this thread holds the writer side no other writer is
 * inside, so the handler's read is let in as a "guest" (ba.h, bravo.h,
 * cohort.c and the variants' glue say how).  A writer sets it and puts
 * back the value it found: a handler's writer nests inside the
 * interrupted one.  Only this thread and its handlers touch it, so
 * compiler fences order it.
 */
extern __thread const void *_Atomic wait_writer_pending
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;

/* Mark lock as the one whose writer side we hold; returns the mark to restore. */
static inline const void *wait_writer_pending_set(const void *lock)
{
	const void *prev = atomic_load_explicit(&wait_writer_pending, memory_order_relaxed);

	atomic_store_explicit(&wait_writer_pending, lock, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return prev;
}

/* The mark as it is (to restore after a call that leaves it set). */
static inline const void *wait_writer_pending_get(void)
{
	return atomic_load_explicit(&wait_writer_pending, memory_order_relaxed);
}

static inline void wait_writer_pending_restore(const void *prev)
{
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&wait_writer_pending, prev, memory_order_relaxed);
}

/*
 * The read this thread waits for, and, inside a caller's scope, last was
 * let into (ba.h, Guests): the lock and the algorithm's phase it arrived
 * under.  The lock's slow path sets it before it waits; it clears it when
 * it returns, unless a caller has opened a scope (wait_read_save): then an
 * admitted read stays marked until the caller has recorded the hold and
 * puts back what it found (wait_read_restore), so that a signal handler
 * running in between, which reads the same lock, does not wait behind a
 * writer that waits for this very read.  The lock is written last (and
 * cleared first), so a handler sees a whole pair or none.
 */
struct wait_read {
	const void *_Atomic lock;
	uint64_t phase;
	bool scoped; /* a caller keeps an admitted read marked */
};

extern __thread struct wait_read wait_read_now
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;

static inline void wait_read_set(const void *lock, uint64_t phase)
{
	atomic_store_explicit(&wait_read_now.lock, NULL, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	wait_read_now.phase = phase;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&wait_read_now.lock, lock, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
}

/* Open a scope (see above); returns what to restore. */
static inline struct wait_read wait_read_save(void)
{
	struct wait_read saved;

	atomic_init(&saved.lock, atomic_load_explicit(&wait_read_now.lock, memory_order_relaxed));
	saved.phase = wait_read_now.phase;
	saved.scoped = wait_read_now.scoped;
	wait_read_now.scoped = true;
	atomic_signal_fence(memory_order_seq_cst);
	return saved;
}

static inline void wait_read_restore(const struct wait_read *saved)
{
	wait_read_set(atomic_load_explicit(&saved->lock, memory_order_relaxed), saved->phase);
	wait_read_now.scoped = saved->scoped;
	atomic_signal_fence(memory_order_seq_cst);
}

/* A number of this thread's own, never 0, never another live thread's. */
extern __thread uint32_t wait_self
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;
uint32_t wait_self_assign(void);

static inline uint32_t wait_self_id(void)
{
	uint32_t id = wait_self;

	return __builtin_expect(id != 0, 1) ? id : wait_self_assign();
}

/* Does this thread hold lock's writer side while it waits (a handler asks)? */
static inline bool wait_writer_pending_is(const void *lock)
{
	return atomic_load_explicit(&wait_writer_pending, memory_order_relaxed) == lock;
}

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

void wait_yield(void);

/*
 * The CPUs this process may run on (its affinity mask at load, at least
 * 1): the policy's measure of how many waiters can be running at once.
 */
extern _Atomic unsigned wait_ncpus LIBBRAVO_HIDDEN;
unsigned wait_cpus_init(void);

static inline unsigned wait_cpus(void)
{
	unsigned n = atomic_load_explicit(&wait_ncpus, memory_order_relaxed);

	return __builtin_expect(n != 0, 1) ? n : wait_cpus_init();
}

/*
 * Whether a waiter may spin before it parks: only while the threads it
 * waits for, and those waiting with it (threads, the waiter not counted),
 * can all be running beside it, that is while there are fewer of them
 * than CPUs.  With more, at least one of them is preempted, the wait
 * lasts until the scheduler runs it again, and a spin only burns the time
 * slice that thread needs.  (Waiman Long's optimistic spinning spins
 * while the holder runs; user space cannot see that cheaply, but it can
 * count.)
 */
static inline bool wait_spin_pays(uint32_t threads)
{
	return threads < wait_cpus();
}

/*
 * A writer that finds the lock held by more readers than can be running
 * (wait_spin_pays false) holds back its announcement: it yields its CPU
 * to them, at most WAIT_DEFER_YIELDS times, and then announces anyway.
 * Announcing at once would shut every newly arriving reader out until the
 * preempted readers have run again, a time slice; so readers go on
 * entering meanwhile.  Returns true if the caller should look again.
 */
#define WAIT_DEFER_YIELDS 4

/* A lock's readers as a holding-back writer sees them (racy snapshots). */
struct wait_readers {
	uint32_t (*inside)(const void *lock);   /* arrived and not departed */
	uint32_t (*departed)(const void *lock); /* departures so far, modulo any power of 2 */
};

/*
 * Spin (wait_spin_budget pauses at most) until no reader is inside or
 * one departs; true if either happened.  A writer holding back watches
 * whether the few readers inside, which could all be running, are: if
 * none leaves within the spin, the one it waits for is not running, and
 * the writer yields instead of shutting the others out behind it.  A
 * departure, not a count of 0, is the sign of progress: running readers
 * that leave and come back may keep the count from ever being 0.
 */
static inline bool wait_spin_progress(const struct wait_readers *r, const void *lock)
{
	uint32_t d = r->departed(lock);

	for (unsigned i = 0; i < wait_spin_budget; i++) {
		if (r->inside(lock) == 0 || r->departed(lock) != d)
			return true;
		cpu_relax();
	}
	return r->inside(lock) == 0 || r->departed(lock) != d;
}

/*
 * Whether this process has more runnable threads than CPUs, judged from
 * how often the kernel preempts them: at least WAIT_PREEMPTS_PER_CPU
 * involuntary context switches a second per CPU (wait_cpus), over the
 * interval since the last look.  A CPU with one runnable thread preempts
 * it only for other work (about 25 a second here, two threads on two
 * CPUs); one shared by two or more switches at every time slice (hundreds
 * a second).  So while it holds, a holding-back writer (ba.h) cannot
 * tell from one spin whether the readers inside are running -- any of
 * them may be waiting for a CPU -- and yields to them without watching.
 * getrusage(RUSAGE_SELF), by one thread at most every
 * WAIT_OVERSUB_SAMPLE_NS; the others read the last verdict.  A failed
 * call, a first look and a forked child's first look say no.
 */
#define WAIT_PREEMPTS_PER_CPU 100u
#define WAIT_OVERSUB_SAMPLE_NS 10000000u
bool wait_oversubscribed(void);

/* The rule: preempts involuntary switches in ns nanoseconds, on cpus CPUs. */
bool wait_preempt_rate_oversubscribed(uint64_t preempts, uint64_t ns, unsigned cpus);

static inline bool wait_defer(unsigned *yields)
{
	if (*yields >= WAIT_DEFER_YIELDS)
		return false;
	++*yields;
	wait_yield();
	return true;
}

/*
 * Sleep while *word == expected.  Returns 0 when woken, when the word had
 * already changed, or on a signal (the caller re-checks its condition), and
 * ETIMEDOUT once the deadline has passed.
 */
int wait_park(_Atomic uint32_t *word, uint32_t expected, const struct deadline *dl);

/*
 * wait_park for a writer waiting for readers to leave, whose last
 * departure wakes it: a departure's wake can be owed by a thread that a
 * signal handler interrupted between its release and its wake, and that
 * handler's read may wait behind this very writer.  So the writer does
 * not sleep for ever: it wakes after *nap_ns (1 ms first, doubling to
 * 1 s) to re-check its count, at most once a second however long it waits.
 * Returns ETIMEDOUT only once dl has passed; else 0, and the caller
 * re-checks.  *nap_ns starts at 0.
 */
int wait_park_polled(_Atomic uint32_t *word, uint32_t expected, const struct deadline *dl,
		     uint64_t *nap_ns);

/* Wake up to count sleepers parked on word. */
void wait_wake(_Atomic uint32_t *word, int count);

/* True if dl is set and its absolute time is now or in the past. */
bool deadline_passed(const struct deadline *dl);

/* Give the CPU away between spins of a waiter that cannot park. */
void wait_yield(void);

/*
 * Sleep about ns nanoseconds (less if dl comes first), for a waiter whose
 * wakers cannot wake it (fast-path readers).  Never touches errno, and is
 * not a cancellation point (no pthread_rwlock_* function is one).
 */
void wait_sleep_ns(uint64_t ns, const struct deadline *dl);

#endif
