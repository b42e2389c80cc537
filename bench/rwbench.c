/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rwbench.c - RWBench (BRAVO paper, section 5.4, figures 4a-4f; modelled on
 * the benchmark of the same name in Calciu et al., PPoPP 2013).
 *
 *   rwbench [-t T] [-p P] [-d SECS] [-s SEED]
 *
 * T threads share one pthread_rwlock_t.  Each loop iteration:
 *   - a Bernoulli trial with probability P on the thread's xorshift64*
 *     PRNG decides write or read;
 *   - take the lock for writing or reading, advance the thread's own
 *     32-bit Mersenne Twister (std::mt19937's generator) 10 steps, unlock;
 *   - outside the lock, advance the same Mersenne Twister N steps, N
 *     uniform in [0, 200) drawn from the xorshift64* PRNG (mean 100).
 * The figures use P = 9/10, 1/2, 1/10, 1/100, 1/1000, 1/10000.
 *
 * Correctness check: a writer makes the guarded pair (first, second)
 * unequal and equal again inside its critical section; a reader that sees
 * them differ, or totals that differ from the write count, fail the run.
 *
 * RESULT prog=rwbench threads=T duration_s=.. throughput=LOOPS/S
 *        loops=.. reads=.. writes=.. write_probability=P
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
#include "mt19937.h"

#define CS_STEPS 10
#define NCS_STEPS_BOUND 200

static const char usage[] =
	"usage: rwbench [-t T] [-p P] [-d SECS] [-s SEED]\n"
	"\n"
	"RWBench (BRAVO paper 5.4): T threads loop on one shared rwlock, writing\n"
	"with probability P, else reading; 10 Mersenne Twister steps inside the\n"
	"lock, uniform [0,200) steps outside.\n"
	"\n"
	"  -t, --threads T          threads, 1..1024 (default 1)\n"
	"  -p, --write-probability P\n"
	"                           0..1 as a decimal or a fraction, e.g. 1/1000\n"
	"                           (default 1/1000)\n"
	"  -d, --duration SECS      measured interval, decimals allowed (default 1)\n"
	"  -s, --seed N             PRNG seed (default 1)\n"
	"  -h, --help               this text\n"
	"\n"
	"Prints one line on stdout:\n"
	"  RESULT prog=rwbench threads=T duration_s=.. throughput=LOOPS_PER_S\n"
	"         loops=.. reads=.. writes=.. write_probability=P\n"
	"Exit status: 0 ok, 1 lock error or correctness failure, 2 usage.\n";

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct {
	uint64_t first;  /* bumped by a writer on entry */
	uint64_t second; /* bumped by a writer before leaving */
} guarded;
static uint64_t write_threshold;

static uint64_t mt_steps(struct mt19937 *mt, unsigned n)
{
	uint64_t acc = 0;

	for (unsigned i = 0; i < n; i++)
		acc += mt19937_next(mt);
	return acc;
}

static void *worker(void *arg)
{
	struct bench_thread *t = arg;
	struct mt19937 *mt = malloc(sizeof(*mt)); /* 2.5 KiB, thread-local */
	uint64_t reads = 0, writes = 0, sink = 0, errors = 0;

	if (!mt) {
		t->errors = 1;
		bench_wait_start();
		return NULL;
	}
	mt19937_seed(mt, (uint32_t)t->rng);
	bench_wait_start();
	while (!bench_stopped()) {
		if (bench_trial(&t->rng, write_threshold)) {
			if (pthread_rwlock_wrlock(&lock)) {
				errors++;
				break;
			}
			guarded.first++;
			sink += mt_steps(mt, CS_STEPS);
			guarded.second++;
			pthread_rwlock_unlock(&lock);
			writes++;
		} else {
			if (pthread_rwlock_rdlock(&lock)) {
				errors++;
				break;
			}
			uint64_t seen = guarded.first;
			sink += mt_steps(mt, CS_STEPS);
			errors += seen != guarded.second;
			pthread_rwlock_unlock(&lock);
			reads++;
		}
		sink += mt_steps(mt, bench_rand_below(&t->rng, NCS_STEPS_BOUND));
	}
	t->reads = reads;
	t->writes = writes;
	t->ops = reads + writes;
	t->sink = sink;
	t->errors = errors;
	free(mt);
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		BENCH_COMMON_LONGOPTS,
		{ "write-probability", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_common o;
	const char *p_text = "1/1000";
	struct bench_thread *t;
	uint64_t reads = 0, writes = 0, errors;
	double p, elapsed;
	int c;

	bench_setup("rwbench", usage);
	bench_common_defaults(&o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, BENCH_COMMON_SHORTOPTS "p:", longopts, NULL)) != -1) {
		if (bench_common_option(c, optarg, &o))
			continue;
		if (c == 'p')
			p_text = optarg;
		else
			bench_bad_option(c, argv);
	}
	bench_no_operands(argc, argv);
	p = bench_parse_probability("--write-probability", p_text);
	write_threshold = bench_probability_threshold(p);

	t = bench_spawn(o.threads, o.seed, worker, NULL);
	elapsed = bench_run_interval(o.duration);
	errors = bench_join(t, o.threads);
	bench_totals(t, o.threads, &reads, &writes);
	if (guarded.first != writes || guarded.second != writes)
		errors++;
	if (errors) {
		fprintf(stderr, "rwbench: FAILURE: %" PRIu64 " lock errors or torn reads/writes\n",
			errors);
		return 1;
	}
	printf("rwbench: %u threads, P(write)=%s: %" PRIu64 " reads, %" PRIu64
	       " writes in %.3f s\n", o.threads, p_text, reads, writes, elapsed);
	bench_result(o.threads, elapsed, (double)(reads + writes) / elapsed,
		     " loops=%" PRIu64 " reads=%" PRIu64 " writes=%" PRIu64 " write_probability=%g",
		     reads + writes, reads, writes, p);
	free(t);
	return 0;
}
