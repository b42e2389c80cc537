/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * alternator.c - the Alternator (BRAVO paper, section 5.2, figure 2).
 *
 *   alternator [-t T] [-d SECS] [-s SEED]
 *
 * T threads form a ring.  Thread i busy-waits (with a pause instruction)
 * until its left neighbour i-1 notifies it, read-locks and unlocks the one
 * shared pthread_rwlock_t, then notifies its right neighbour i+1.  One
 * token circulates, so at most one reader is active at any moment and
 * there are no writers: the benchmark measures how the lock's reader
 * indicator moves between caches.  With T = 1 the thread notifies itself.
 *
 * A notification is a store of the sender's running count into the
 * receiver's own flag (one per thread, on its own sector); the receiver
 * waits for a value different from the last one it consumed, spinning with
 * a pause instruction (yielding the CPU after a long spin).  Waiters poll
 * the stop flag too, so the run ends at the deadline even when T exceeds
 * the CPUs and the token holder is descheduled.
 *
 * RESULT prog=alternator threads=T duration_s=.. throughput=NOTIFICATIONS/S
 *        notifications=..
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <sched.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

static const char usage[] =
	"usage: alternator [-t T] [-d SECS] [-s SEED]\n"
	"\n"
	"Alternator (BRAVO paper 5.2): T threads in a ring pass one token; each,\n"
	"once notified by its left neighbour, read-locks and unlocks one shared\n"
	"rwlock, then notifies its right neighbour.\n"
	"\n"
	"  -t, --threads T      threads in the ring, 1..1024 (default 1)\n"
	"  -d, --duration SECS  measured interval, decimals allowed (default 1)\n"
	"  -s, --seed N         accepted for uniformity; the ring uses no PRNG\n"
	"  -h, --help           this text\n"
	"\n"
	"Prints one line on stdout:\n"
	"  RESULT prog=alternator threads=T duration_s=.. throughput=NOTIFICATIONS_PER_S\n"
	"         notifications=..\n"
	"Exit status: 0 ok, 1 lock error, 2 usage.\n";

/* A thread's mailbox: the latest token number its left neighbour sent. */
struct mailbox {
	_Atomic uint64_t token;
} __attribute__((aligned(BENCH_SECTOR)));

#define SPIN_BEFORE_YIELD 4096

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct mailbox *mailbox;
static unsigned nthreads;

/*
 * Wait for a token other than last; returns it, or 0 once stopped.  Pure
 * busy-waiting as in the paper, except that after SPIN_BEFORE_YIELD polls
 * (far longer than a hand-off between running threads takes) the waiter
 * yields its CPU, so that with more threads than CPUs the token holder
 * gets to run instead of waiting for the end of the spinners' time slices.
 */
static uint64_t wait_for_token(struct mailbox *m, uint64_t last)
{
	for (unsigned spins = 0;; spins++) {
		/* Acquire: the sender's read lock/unlock happened before. */
		uint64_t tok = atomic_load_explicit(&m->token, memory_order_acquire);

		if (tok != last)
			return tok;
		if (bench_stopped())
			return 0;
		if (spins < SPIN_BEFORE_YIELD) {
			bench_pause();
		} else {
			sched_yield();
			spins = 0;
		}
	}
}

static void *worker(void *arg)
{
	struct bench_thread *t = arg;
	struct mailbox *mine = &mailbox[t->id];
	struct mailbox *right = &mailbox[(t->id + 1) % nthreads];
	uint64_t last = 0, passed = 0;

	bench_wait_start();
	while (!bench_stopped()) {
		uint64_t tok = wait_for_token(mine, last);

		if (tok == 0)
			break;
		last = tok;
		if (pthread_rwlock_rdlock(&lock) || pthread_rwlock_unlock(&lock)) {
			t->errors++;
			break;
		}
		passed++;
		/* Release: pairs with the receiver's acquire. Tokens count up from 1. */
		atomic_store_explicit(&right->token, tok + 1, memory_order_release);
	}
	t->ops = passed;
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		BENCH_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct bench_common o;
	struct bench_thread *t;
	uint64_t notifications = 0, errors;
	double elapsed;
	int c;

	bench_setup("alternator", usage);
	bench_common_defaults(&o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, BENCH_COMMON_SHORTOPTS, longopts, NULL)) != -1)
		if (!bench_common_option(c, optarg, &o))
			bench_bad_option(c, argv);
	bench_no_operands(argc, argv);

	nthreads = o.threads;
	mailbox = aligned_alloc(BENCH_SECTOR, sizeof(*mailbox) * nthreads);
	if (!mailbox) {
		fprintf(stderr, "alternator: out of memory\n");
		return 1;
	}
	for (unsigned i = 0; i < nthreads; i++)
		atomic_init(&mailbox[i].token, 0);
	/* Thread 0 holds the first token as soon as the run starts. */
	atomic_store_explicit(&mailbox[0].token, 1, memory_order_relaxed);

	t = bench_spawn(nthreads, o.seed, worker, NULL);
	elapsed = bench_run_interval(o.duration);
	errors = bench_join(t, nthreads);
	for (unsigned i = 0; i < nthreads; i++)
		notifications += t[i].ops;
	if (errors) {
		fprintf(stderr, "alternator: FAILURE: %" PRIu64 " lock calls failed\n", errors);
		return 1;
	}
	printf("alternator: %u threads: %" PRIu64 " notifications in %.3f s\n", nthreads,
	       notifications, elapsed);
	bench_result(nthreads, elapsed, (double)notifications / elapsed,
		     " notifications=%" PRIu64, notifications);
	free(t);
	free(mailbox);
	return 0;
}
