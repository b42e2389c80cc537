/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * interference.c - inter-lock interference (BRAVO paper, section 5.1,
 * figure 1).
 *
 *   interference [-t T] [-l NLOCKS] [-d SECS] [-s SEED]
 *
 * T threads (the paper: 64) share a pool of NLOCKS rwlocks (the paper: 1 to
 * 8192 in powers of two).  Each loop iteration picks a lock uniformly at
 * random, read-locks it, advances the thread's xorshift64* PRNG 20 steps,
 * unlocks, and advances the PRNG 100 steps outside.  No lock is ever
 * write-locked.  Figure 1 plots, per NLOCKS, the throughput under BRAVO-BA
 * (one visible readers table shared by all locks) divided by that under
 * src/.libs/libbravo-bravo-ba-private.so (every lock its own table), so
 * the ratio shows what collisions in the shared table cost.
 *
 * Each lock sits on its own 128-byte sector, so the locks themselves never
 * share a cache line.  Main read-locks each lock once before the run, so
 * variants that attach a heap block to a lock on first use (Cohort-RW,
 * Per-CPU, the private-table BRAVO-BA) do so outside the measured interval.
 *
 * RESULT prog=interference threads=T duration_s=.. throughput=ACQUIRES/S
 *        acquisitions=.. locks=NLOCKS
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define MAX_LOCKS (1ul << 20)
#define CS_STEPS 20
#define NCS_STEPS 100

static const char usage[] =
	"usage: interference [-t T] [-l NLOCKS] [-d SECS] [-s SEED]\n"
	"\n"
	"Inter-lock interference (BRAVO paper 5.1): T threads read-lock locks\n"
	"picked at random from a pool of NLOCKS; 20 PRNG steps inside, 100\n"
	"outside; no writers.\n"
	"\n"
	"  -t, --threads T      threads, 1..1024 (default 1; the paper: 64)\n"
	"  -l, --locks NLOCKS   locks in the pool, 1..1048576 (default 1)\n"
	"  -d, --duration SECS  measured interval, decimals allowed (default 1)\n"
	"  -s, --seed N         PRNG seed (default 1)\n"
	"  -h, --help           this text\n"
	"\n"
	"Prints one line on stdout:\n"
	"  RESULT prog=interference threads=T duration_s=.. throughput=ACQUIRES_PER_S\n"
	"         acquisitions=.. locks=NLOCKS\n"
	"Exit status: 0 ok, 1 lock error, 2 usage.\n";

struct padded_lock {
	pthread_rwlock_t rw;
} __attribute__((aligned(BENCH_SECTOR)));

static struct padded_lock *pool;
static uint32_t nlocks;

static void *worker(void *arg)
{
	struct bench_thread *t = arg;
	uint64_t rng = t->rng, sink = 0, n = 0;

	bench_wait_start();
	while (!bench_stopped()) {
		pthread_rwlock_t *rw = &pool[bench_rand_below(&rng, nlocks)].rw;

		if (pthread_rwlock_rdlock(rw)) {
			t->errors++;
			break;
		}
		sink += bench_rand_steps(&rng, CS_STEPS);
		pthread_rwlock_unlock(rw);
		sink += bench_rand_steps(&rng, NCS_STEPS);
		n++;
	}
	t->ops = t->reads = n;
	t->sink = sink;
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		BENCH_COMMON_LONGOPTS,
		{ "locks", required_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_common o;
	struct bench_thread *t;
	uint64_t acquisitions = 0, errors;
	double elapsed;
	int c, err;

	bench_setup("interference", usage);
	bench_common_defaults(&o);
	nlocks = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, BENCH_COMMON_SHORTOPTS "l:", longopts, NULL)) != -1) {
		if (bench_common_option(c, optarg, &o))
			continue;
		if (c == 'l')
			nlocks = (uint32_t)bench_parse_ulong("--locks", optarg, 1, MAX_LOCKS);
		else
			bench_bad_option(c, argv);
	}
	bench_no_operands(argc, argv);

	pool = aligned_alloc(BENCH_SECTOR, sizeof(*pool) * nlocks);
	if (!pool) {
		fprintf(stderr, "interference: out of memory\n");
		return 1;
	}
	memset(pool, 0, sizeof(*pool) * nlocks);
	for (uint32_t i = 0; i < nlocks; i++) {
		err = bench_lock_init_warm(&pool[i].rw);
		if (err) {
			fprintf(stderr, "interference: lock %u: init or warm-up: %s\n", i,
				strerror(err));
			return 1;
		}
	}

	t = bench_spawn(o.threads, o.seed, worker, NULL);
	elapsed = bench_run_interval(o.duration);
	errors = bench_join(t, o.threads);
	for (unsigned i = 0; i < o.threads; i++)
		acquisitions += t[i].ops;
	for (uint32_t i = 0; i < nlocks; i++)
		if (pthread_rwlock_destroy(&pool[i].rw))
			errors++;
	if (errors) {
		fprintf(stderr, "interference: FAILURE: %" PRIu64 " lock calls failed\n", errors);
		return 1;
	}
	printf("interference: %u threads, %u locks: %" PRIu64 " acquisitions in %.3f s\n",
	       o.threads, nlocks, acquisitions, elapsed);
	bench_result(o.threads, elapsed, (double)acquisitions / elapsed,
		     " acquisitions=%" PRIu64 " locks=%u", acquisitions, nlocks);
	free(t);
	free(pool);
	return 0;
}
