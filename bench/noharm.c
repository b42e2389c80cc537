/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * noharm.c - the "no-harm" microbenchmark: a reader-writer mix over a pool
 * of locks, for comparing a lock with the same lock under BRAVO
 * (bench/drivers/noharm-sweep: BRAVO-BA against BA, BRAVO-pthread against
 * glibc) at every write ratio.
 *
 *   noharm [-t T] [-p P] [-l L] [-n N] [-c C] [-d SECS] [-s SEED]
 *
 * T threads share a pool of L pthread_rwlock_t, each on its own 128-byte
 * sector together with the pair it guards.  Each loop iteration:
 *   - with L > 1, pick a lock uniformly at random (the thread's xorshift64*
 *     PRNG); with L = 1 there is no pick;
 *   - a Bernoulli trial with probability P on the same PRNG decides write
 *     or read;
 *   - take the lock for writing or reading, advance the PRNG C steps,
 *     unlock; a writer bumps the lock's guarded pair around its steps;
 *   - outside the lock, advance the PRNG a uniform random number of steps
 *     in [0, N) (N = 0: nothing at all outside the lock).
 *
 * Correctness check: a writer makes its lock's guarded pair (first, second)
 * unequal and equal again inside its critical section; a reader that sees
 * them differ, or pair totals over the pool that differ from the write
 * count, fail the run.
 *
 * Main read-locks every lock once before the measured interval, so the
 * variants that attach a heap block to a lock on first use do it outside.
 *
 * RESULT prog=noharm threads=T duration_s=.. throughput=LOOPS/S
 *        loops=.. reads=.. writes=.. write_probability=P locks=L ncs=N
 *        cpu_s=..
 * cpu_s: the CPU seconds the process spent in the measured interval (-1:
 * unknown); over duration_s, the CPUs it kept busy.  A lock whose waiters
 * sleep can keep that below min(T, CPUs), and with more threads than CPUs
 * a lock that runs its critical sections from fewer CPUs at a time moves
 * its line less (results/README.md, "Waiting").
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
#define MAX_STEPS 1000000ul

static const char usage[] =
	"usage: noharm [-t T] [-p P] [-l L] [-n N] [-c C] [-d SECS] [-s SEED]\n"
	"\n"
	"No-harm microbenchmark: T threads loop over a pool of L rwlocks, each\n"
	"iteration on a lock picked at random, writing with probability P, else\n"
	"reading; C PRNG steps inside the lock, uniform [0,N) steps outside.\n"
	"\n"
	"  -t, --threads T          threads, 1..1024 (default 1)\n"
	"  -p, --write-probability P\n"
	"                           0..1 as a decimal or a fraction, e.g. 1/1000\n"
	"                           (default 1/1000)\n"
	"  -l, --locks L            locks in the pool, 1..1048576 (default 1)\n"
	"  -n, --ncs N              non-critical section: uniform [0,N) PRNG steps\n"
	"                           outside the lock, 0..1000000 (default 0: none)\n"
	"  -c, --cs C               PRNG steps inside the lock, 0..1000000\n"
	"                           (default 10)\n"
	"  -d, --duration SECS      measured interval, decimals allowed (default 1)\n"
	"  -s, --seed N             PRNG seed (default 1)\n"
	"  -h, --help               this text\n"
	"\n"
	"Prints one line on stdout:\n"
	"  RESULT prog=noharm threads=T duration_s=.. throughput=LOOPS_PER_S\n"
	"         loops=.. reads=.. writes=.. write_probability=P locks=L ncs=N\n"
	"         cpu_s=CPU_SECONDS (user and system, in the measured interval)\n"
	"Exit status: 0 ok, 1 lock error or correctness failure, 2 usage.\n";

/* A lock and the pair it guards, alone on their sector. */
struct padded_lock {
	pthread_rwlock_t rw;
	uint64_t first;  /* bumped by a writer on entry */
	uint64_t second; /* bumped by a writer before leaving */
} __attribute__((aligned(BENCH_SECTOR)));

static struct padded_lock *pool;
static uint32_t nlocks = 1;
static uint32_t ncs_bound;
static unsigned long cs_steps = 10;
static uint64_t write_threshold;

static struct padded_lock *pick(uint64_t *rng)
{
	return nlocks == 1 ? &pool[0] : &pool[bench_rand_below(rng, nlocks)];
}

/*
 * The guarded pair is read and written through volatile lvalues, so the
 * compiler keeps the writer's two bumps on either side of its steps and the
 * reader's two loads apart: a torn critical section stays visible.
 */
static int one_write(struct padded_lock *l, uint64_t *rng, uint64_t *sink)
{
	volatile uint64_t *first = &l->first, *second = &l->second;

	if (pthread_rwlock_wrlock(&l->rw))
		return 1;
	*first = *first + 1;
	*sink += bench_rand_steps(rng, cs_steps);
	*second = *second + 1;
	return pthread_rwlock_unlock(&l->rw) != 0;
}

static int one_read(struct padded_lock *l, uint64_t *rng, uint64_t *sink)
{
	volatile uint64_t *first = &l->first, *second = &l->second;
	uint64_t seen;
	int torn;

	if (pthread_rwlock_rdlock(&l->rw))
		return 1;
	seen = *first;
	*sink += bench_rand_steps(rng, cs_steps);
	torn = seen != *second;
	return (pthread_rwlock_unlock(&l->rw) != 0) + torn;
}

static void *worker(void *arg)
{
	struct bench_thread *t = arg;
	uint64_t rng = t->rng, reads = 0, writes = 0, sink = 0, errors = 0;

	bench_wait_start();
	while (!bench_stopped()) {
		struct padded_lock *l = pick(&rng);

		if (bench_trial(&rng, write_threshold)) {
			errors += one_write(l, &rng, &sink);
			writes++;
		} else {
			errors += one_read(l, &rng, &sink);
			reads++;
		}
		if (errors)
			break;
		if (ncs_bound)
			sink += bench_rand_steps(&rng, bench_rand_below(&rng, ncs_bound));
	}
	t->reads = reads;
	t->writes = writes;
	t->ops = reads + writes;
	t->sink = sink;
	t->errors = errors;
	return NULL;
}

/* The pool, every lock initialized and read-locked once (warm-up). */
static void make_pool(void)
{
	int err;

	pool = aligned_alloc(BENCH_SECTOR, sizeof(*pool) * nlocks);
	if (!pool) {
		fprintf(stderr, "noharm: out of memory\n");
		exit(1);
	}
	memset(pool, 0, sizeof(*pool) * nlocks);
	for (uint32_t i = 0; i < nlocks; i++) {
		err = bench_lock_init_warm(&pool[i].rw);
		if (err) {
			fprintf(stderr, "noharm: lock %u: init or warm-up: %s\n", i,
				strerror(err));
			exit(1);
		}
	}
}

/* Lock-call failures at destroy plus pair totals that miss writes. */
static uint64_t check_pool(uint64_t writes)
{
	uint64_t first = 0, second = 0, errors = 0;

	for (uint32_t i = 0; i < nlocks; i++) {
		first += pool[i].first;
		second += pool[i].second;
		errors += pthread_rwlock_destroy(&pool[i].rw) != 0;
	}
	return errors + (first != writes) + (second != writes);
}

static void parse(int argc, char **argv, struct bench_common *o, const char **p_text)
{
	static const struct option longopts[] = {
		BENCH_COMMON_LONGOPTS,
		{ "write-probability", required_argument, NULL, 'p' },
		{ "locks", required_argument, NULL, 'l' },
		{ "ncs", required_argument, NULL, 'n' },
		{ "cs", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, BENCH_COMMON_SHORTOPTS "p:l:n:c:", longopts,
				NULL)) != -1) {
		if (bench_common_option(c, optarg, o))
			continue;
		if (c == 'p')
			*p_text = optarg;
		else if (c == 'l')
			nlocks = (uint32_t)bench_parse_ulong("--locks", optarg, 1, MAX_LOCKS);
		else if (c == 'n')
			ncs_bound = (uint32_t)bench_parse_ulong("--ncs", optarg, 0, MAX_STEPS);
		else if (c == 'c')
			cs_steps = bench_parse_ulong("--cs", optarg, 0, MAX_STEPS);
		else
			bench_bad_option(c, argv);
	}
	bench_no_operands(argc, argv);
}

int main(int argc, char **argv)
{
	struct bench_common o;
	const char *p_text = "1/1000";
	struct bench_thread *t;
	uint64_t reads = 0, writes = 0, errors;
	double p, elapsed;

	bench_setup("noharm", usage);
	bench_common_defaults(&o);
	parse(argc, argv, &o, &p_text);
	p = bench_parse_probability("--write-probability", p_text);
	write_threshold = bench_probability_threshold(p);
	make_pool();

	t = bench_spawn(o.threads, o.seed, worker, NULL);
	elapsed = bench_run_interval(o.duration);
	errors = bench_join(t, o.threads);
	bench_totals(t, o.threads, &reads, &writes);
	errors += check_pool(writes);
	if (errors) {
		fprintf(stderr, "noharm: FAILURE: %" PRIu64
			" lock errors or torn reads/writes\n", errors);
		return 1;
	}
	printf("noharm: %u threads, P(write)=%s, %u locks, ncs [0,%u), cs %lu: %" PRIu64
	       " reads, %" PRIu64 " writes in %.3f s\n", o.threads, p_text, nlocks, ncs_bound,
	       cs_steps, reads, writes, elapsed);
	bench_result(o.threads, elapsed, (double)(reads + writes) / elapsed,
		     " loops=%" PRIu64 " reads=%" PRIu64 " writes=%" PRIu64
		     " write_probability=%g locks=%u ncs=%u cpu_s=%.4f",
		     reads + writes, reads, writes, p, nlocks, ncs_bound, bench_interval_cpu_s());
	free(t);
	free(pool);
	return 0;
}
