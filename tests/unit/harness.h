/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * harness.h - what the unit tests of the locks share, so that a test reads
 * as the behaviour it checks: acquisitions of the lock under test, actors
 * (threads that take it once and hold it until told), waiting for a thread
 * to reach a blocking point, deadlines, freezing a waiter in a signal
 * handler, and the stress run every lock's invariant is checked under.
 *
 * A test program that includes it defines, for its lock:
 *
 *   static int take(struct acquisition *q, const struct deadline *dl);
 *	take q->lock as q->kind says (a try-lock ignores dl): 0, ETIMEDOUT,
 *	or EBUSY for a try-lock that failed; store in q->cookie what the
 *	release needs;
 *   static void give_back(struct acquisition *q);
 *	release what take() took.
 *
 * Nothing here asserts a timing.  A wait on a condition is bounded by the
 * tcase's time-out, so a hang is reported as a failure.
 */
#ifndef LIBBRAVO_TESTS_HARNESS_H
#define LIBBRAVO_TESTS_HARNESS_H

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "invariant.h"
#include "timespec_util.h"
#include "../../locks/wait.h"

/* ------------------------------------------------------------ waiting */

/* Poll until cond holds; the tcase time-out bounds a cond that never does. */
#define WAIT_UNTIL(cond)                 \
	do {                             \
		while (!(cond))          \
			usleep(100);     \
	} while (0)

/* n threads that run fn(arg); join_threads() waits for them to end. */
static inline void start_threads(pthread_t *t, int n, void *(*fn)(void *), void *arg)
{
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, fn, arg), 0);
}

static inline void join_threads(pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
}

/* ------------------------------------------------------- acquisitions */

/* How an acquisition takes the lock: ACT_WRITE and ACT_TRY are bits. */
enum { ACT_READ = 0, ACT_WRITE = 1, ACT_TRY = 2, ACT_TRY_READ = 2, ACT_TRY_WRITE = 3 };

struct acquisition {
	void *lock;
	int kind;         /* ACT_READ, ACT_WRITE, ACT_TRY_READ or ACT_TRY_WRITE */
	unsigned node;    /* Cohort-RW's NUMA node, Per-CPU's sub-lock; 0 elsewhere */
	bool writer_pref; /* BRAVO: a writer that shuts the fast path while it waits */
	uintptr_t cookie; /* what the release needs (BRAVO: the fast reader's slot) */
};

static int take(struct acquisition *q, const struct deadline *dl);
static void give_back(struct acquisition *q);

static inline void *take_in_thread(void *arg)
{
	struct acquisition *q = arg;

	return (void *)(intptr_t)take(q, NULL);
}

/*
 * Take q in a thread of its own that ends holding it: the hold is then
 * released by another thread (as a lock's owner that migrated, or a
 * variant's release on another thread's behalf, does).
 */
static inline void take_elsewhere(struct acquisition q)
{
	pthread_t t;
	void *r;

	ck_assert_int_eq(pthread_create(&t, NULL, take_in_thread, &q), 0);
	ck_assert_int_eq(pthread_join(t, &r), 0);
	ck_assert_int_eq((int)(intptr_t)r, 0);
}

/*
 * Locks whose readers are counted per node (Cohort-RW's nodes, Per-CPU's
 * sub-locks): readers_on(lock, node) is the lock's count of the read
 * holds taken on node, what a release on another thread's behalf looks
 * for (variant_read_release_other).
 */
typedef unsigned readers_on_fn(void *lock, unsigned node);

/* Release one read hold found on some node, as variant_read_release_other does. */
static inline bool release_one_reader(void *lock, unsigned nodes, readers_on_fn *readers_on)
{
	for (unsigned n = 0; n < nodes; n++) {
		if (readers_on(lock, n)) {
			give_back(&(struct acquisition){ .lock = lock, .kind = ACT_READ, .node = n });
			return true;
		}
	}
	return false;
}

/*
 * The count of a lock of three nodes follows its readers as they come and
 * go: two on node 0, one on node 2, none on node 1.
 */
static inline void readers_are_counted_per_node(void *lock, readers_on_fn *readers_on)
{
	struct acquisition r0 = { .lock = lock, .kind = ACT_READ, .node = 0 };
	struct acquisition r2 = { .lock = lock, .kind = ACT_READ, .node = 2 };

	ck_assert_uint_eq(readers_on(lock, 0), 0);
	ck_assert_int_eq(take(&r0, NULL), 0);
	ck_assert_int_eq(take(&r0, NULL), 0);
	ck_assert_int_eq(take(&r2, NULL), 0);
	ck_assert_uint_eq(readers_on(lock, 0), 2);
	ck_assert_uint_eq(readers_on(lock, 1), 0);
	ck_assert_uint_eq(readers_on(lock, 2), 1);
	give_back(&r0);
	give_back(&r2);
	ck_assert_uint_eq(readers_on(lock, 0), 1);
	ck_assert_uint_eq(readers_on(lock, 2), 0);
	give_back(&r0);
	ck_assert_uint_eq(readers_on(lock, 0), 0);
}

/* ------------------------------------------------------------- actors */

/*
 * An actor: a thread that takes the lock once (start_reader, start_writer,
 * start_try_reader), records when it got in, holds the lock until
 * actor_finish() if it .holds, then gives it back.  Started as
 *
 *	start_writer(&w, lock, .node = 1, .timeout_us = 20000, .holds = true);
 *
 * where everything after the lock is optional.
 */
struct actor_spec {
	void *lock;
	unsigned node;
	bool writer_pref;
	long timeout_us;        /* 0: no deadline */
	const clockid_t *clock; /* the deadline's clock; NULL: CLOCK_MONOTONIC */
	bool holds;             /* hold the lock until actor_finish() */
};

struct actor {
	struct acquisition acq;
	bool holds;
	struct timespec abstime; /* read by the actor whenever it checks its deadline */
	struct deadline dl;
	pthread_t thread;
	atomic_bool started, entered, done, release;
	unsigned order; /* the order of its entry among all actors' */
	int result;     /* 0, ETIMEDOUT, or EBUSY for a try-lock that failed */
};

static atomic_uint actor_entries;

static inline void *actor_main(void *arg)
{
	struct actor *a = arg;
	int r;

	atomic_store(&a->started, true);
	r = take(&a->acq, &a->dl);
	a->result = r;
	if (r == 0) {
		a->order = atomic_fetch_add(&actor_entries, 1);
		atomic_store(&a->entered, true);
		if (a->holds)
			WAIT_UNTIL(atomic_load(&a->release));
		give_back(&a->acq);
	}
	atomic_store(&a->done, true);
	return NULL;
}

static inline void actor_start(struct actor *a, int kind, struct actor_spec spec)
{
	memset(a, 0, sizeof(*a));
	a->acq = (struct acquisition){ .lock = spec.lock, .kind = kind, .node = spec.node,
				       .writer_pref = spec.writer_pref };
	a->holds = spec.holds;
	a->dl.clock = spec.clock ? *spec.clock : CLOCK_MONOTONIC;
	if (spec.timeout_us) {
		a->abstime = ts_from_now(a->dl.clock, spec.timeout_us);
		a->dl.abstime = &a->abstime;
	}
	ck_assert_int_eq(pthread_create(&a->thread, NULL, actor_main, a), 0);
	WAIT_UNTIL(atomic_load(&a->started));
}

#define start_reader(a, ...) actor_start((a), ACT_READ, (struct actor_spec){ .lock = __VA_ARGS__ })
#define start_writer(a, ...) actor_start((a), ACT_WRITE, (struct actor_spec){ .lock = __VA_ARGS__ })
#define start_try_reader(a, ...) \
	actor_start((a), ACT_TRY_READ, (struct actor_spec){ .lock = __VA_ARGS__ })

/* It got the lock (and may since have left it). */
static inline bool entered(struct actor *a)
{
	return atomic_load(&a->entered);
}

/* Its lock call returned, and it left the lock if it got it. */
static inline bool done(struct actor *a)
{
	return atomic_load(&a->done);
}

/* Wait until it got in, or its lock call returned without; the call's result. */
static inline int actor_outcome(struct actor *a)
{
	WAIT_UNTIL(entered(a) || done(a));
	return a->result;
}

/* Let a holding actor leave, without waiting for it. */
static inline void actor_let_go(struct actor *a)
{
	atomic_store(&a->release, true);
}

/* Let it leave, wait for its thread to end; its lock call's result. */
static inline int actor_finish(struct actor *a)
{
	actor_let_go(a);
	ck_assert_int_eq(pthread_join(a->thread, NULL), 0);
	return a->result;
}

/*
 * Wait until cond shows a blocked (cond is what the test sees in the lock
 * words); an actor that got in, or returned, instead fails the test.
 */
#define WAIT_BLOCKED(a, cond)                                                        \
	do {                                                                         \
		WAIT_UNTIL((cond) || entered(a) || done(a));                         \
		ck_assert_msg(!entered(a) && !done(a),                               \
			      "%s returned %d where it should have blocked", #a,     \
			      (a)->result);                                          \
	} while (0)

/*
 * An actor seen blocked stays out: 10 ms is time enough for one that may
 * enter to do so.
 */
static inline bool stays_out(struct actor *a)
{
	usleep(10000);
	return !entered(a);
}

/* ---------------------------------------------------- frozen waiters */

/*
 * SIGUSR1 freezes a thread in a handler until thaw(): a way to hold a
 * blocked waiter still, deterministically, while writers come and go or
 * its deadline passes and the lock is handed to it.
 */
static atomic_bool frozen, thawed;

static inline void freeze_handler(int sig)
{
	struct timespec nap = { 0, 100000 };

	(void)sig;
	atomic_store(&frozen, true);
	while (!atomic_load(&thawed))
		nanosleep(&nap, NULL);
}

/* Freeze a's thread (a waiter: the handler interrupts its lock call). */
static inline void freeze(struct actor *a)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = freeze_handler;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0); /* no SA_RESTART */
	ck_assert_int_eq(pthread_kill(a->thread, SIGUSR1), 0);
	WAIT_UNTIL(atomic_load(&frozen));
}

/* a's deadline is now long past (it reads it again only after thawing). */
static inline void pass_deadline(struct actor *a)
{
	a->abstime.tv_sec = 0;
	a->abstime.tv_nsec = 0;
}

static inline void thaw(void)
{
	atomic_store(&thawed, true);
}

/* ------------------------------------------------------------- stress */

/*
 * A stress run: threads that all start at once (a barrier), each doing ops
 * operations on one lock, each drawn from the thread's own xorshift
 * sequence; readers and writers check the invariant (invariant.h) inside.
 *
 * The standard mix (stress_mixed_op): op = x % 100 picks a blocking read
 * below read_end, a read try-lock below tryread_end, a blocking write
 * below write_end, a write try-lock above; 30% of the blocking reads
 * (timed_reads) or writes (timed_writes) get a short deadline, sometimes
 * already past, on either clock; each acquisition picks one of nodes
 * nodes at random, as a thread that migrates would.
 */
struct stress_thread {
	struct stress *s;
	pthread_t thread;
	unsigned seed;
	unsigned long reads, fast_reads, writes, timeouts;
};

struct stress {
	void *lock;
	unsigned nodes;   /* 0 or 1: node 0 only */
	bool writer_pref;
	unsigned read_end, tryread_end, write_end;
	bool timed_reads, timed_writes;
	bool writes_only; /* blocking writes and nothing else */
	/* One operation drawn from x; NULL: stress_mixed_op. */
	void (*op)(struct stress_thread *t, unsigned x);
	/*
	 * Join with a limit of this many seconds without progress (no
	 * operation finished by any thread: a hang); 0: none.  A bound on
	 * progress, not on the run: on a machine that other work shares, a
	 * writer's dwell (a yield) can cost a time slice.
	 */
	int stuck_seconds;
	/* The lock's words, for the report of a run that is stuck. */
	void (*describe)(struct stress *s, char *buf, size_t len);

	/* The run's own, and its totals. */
	int ops;
	_Atomic unsigned long progress; /* operations finished, all threads */
	pthread_barrier_t start;
	struct invariant inv;
	unsigned long reads, fast_reads, writes, timeouts;
};

/* The mix of test_ba, test_cohort and test_percpu: 50% reads, 12% read try-locks, ... */
#define STANDARD_MIX .read_end = 50, .tryread_end = 62, .write_end = 90

/*
 * Take q by dl and, if it got in, run the invariant's section and give
 * it back: a time-out is counted, a try-lock that fails is not, any other
 * error is a violation.
 */
static inline void stress_section(struct stress_thread *t, struct acquisition *q,
				  const struct deadline *dl, unsigned x)
{
	struct stress *s = t->s;
	int r = take(q, dl);

	if (r == EBUSY && (q->kind & ACT_TRY))
		return;
	if (r == ETIMEDOUT) {
		t->timeouts++;
		return;
	}
	if (r != 0) {
		violation(&s->inv, q->kind & ACT_WRITE ? "write lock returned an error"
						       : "read lock returned an error");
		return;
	}
	if (q->kind & ACT_WRITE) {
		invariant_write_section(&s->inv, x);
		t->writes++;
	} else {
		invariant_read_section(&s->inv, x);
		t->reads++;
		if (q->cookie)
			t->fast_reads++;
	}
	give_back(q);
}

static inline void stress_mixed_op(struct stress_thread *t, unsigned x)
{
	struct stress *s = t->s;
	unsigned op = s->writes_only ? s->tryread_end + x % (s->write_end - s->tryread_end)
				     : x % 100;
	struct acquisition q = { .lock = s->lock, .writer_pref = s->writer_pref };
	struct timespec ts;
	struct deadline dl = { .abstime = NULL, .clock = clocks[(x >> 8) & 1] };

	if (s->nodes > 1)
		q.node = (x >> 12) % s->nodes;
	if ((op % 10) >= 7 && (op < s->read_end ? s->timed_reads : s->timed_writes)) {
		ts = ts_from_now(dl.clock, (long)((x >> 9) % 300) - 20);
		dl.abstime = &ts;
	}
	q.kind = op < s->read_end      ? ACT_READ
		 : op < s->tryread_end ? ACT_TRY_READ
		 : op < s->write_end   ? ACT_WRITE
				       : ACT_TRY_WRITE;
	stress_section(t, &q, &dl, x);
}

static inline void *stress_main(void *arg)
{
	struct stress_thread *t = arg;
	struct stress *s = t->s;

	pthread_barrier_wait(&s->start); /* all threads contend from the start */
	for (int n = 0; n < s->ops; n++) {
		(s->op ? s->op : stress_mixed_op)(t, xorshift(&t->seed));
		atomic_fetch_add_explicit(&s->progress, 1, memory_order_relaxed);
	}
	return NULL;
}

static inline void stress_join(struct stress *s, struct stress_thread *t)
{
	unsigned long seen = atomic_load(&s->progress);
	char where[512] = "";
	int idle = 0;

	if (!s->stuck_seconds) {
		ck_assert_int_eq(pthread_join(t->thread, NULL), 0);
		return;
	}
	for (;;) {
		struct timespec second = ts_from_now(CLOCK_REALTIME, 1000000L);
		unsigned long now;

		if (pthread_timedjoin_np(t->thread, NULL, &second) == 0)
			return;
		now = atomic_load(&s->progress);
		idle = now == seen ? idle + 1 : 0;
		seen = now;
		if (idle >= s->stuck_seconds)
			break;
	}
	if (s->describe)
		s->describe(s, where, sizeof(where));
	ck_abort_msg("stuck: no operation finished in %d s: %s (violations so far: %u, first: %s)",
		     s->stuck_seconds, where, atomic_load(&s->inv.violations),
		     s->inv.first_violation);
}

/*
 * Run it, then check what every run must show: no violation, every
 * section counted, reads (none if writes_only) and writes done, and some
 * time-outs where deadlines were drawn.
 */
static inline void stress_run(struct stress *s, int threads, int ops)
{
	struct stress_thread *st = calloc((size_t)threads, sizeof(*st));

	ck_assert_ptr_nonnull(st);
	s->ops = ops;
	ck_assert_int_eq(pthread_barrier_init(&s->start, NULL, (unsigned)threads), 0);
	for (int i = 0; i < threads; i++) {
		st[i].s = s;
		st[i].seed = 0x9e3779b9u * (unsigned)(i + 1) | 1;
		ck_assert_int_eq(pthread_create(&st[i].thread, NULL, stress_main, &st[i]), 0);
	}
	for (int i = 0; i < threads; i++) {
		stress_join(s, &st[i]);
		s->reads += st[i].reads;
		s->fast_reads += st[i].fast_reads;
		s->writes += st[i].writes;
		s->timeouts += st[i].timeouts;
	}
	free(st);
	pthread_barrier_destroy(&s->start);
	ck_assert_msg(atomic_load(&s->inv.violations) == 0, "%u violations, first: %s",
		      atomic_load(&s->inv.violations), s->inv.first_violation);
	ck_assert_uint_eq(s->inv.wtotal, s->writes);
	ck_assert_uint_eq(atomic_load(&s->inv.rtotal), s->reads);
	if (s->writes_only)
		ck_assert_uint_eq(s->reads, 0);
	else
		ck_assert_uint_gt(s->reads, 0);
	ck_assert_uint_gt(s->writes, 0);
	if (s->timed_reads || s->timed_writes)
		ck_assert_uint_gt(s->timeouts, 0);
}

#endif
