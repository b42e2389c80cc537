/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * latency.c - uncontended lock latency: one thread, one lock.
 *
 *   latency [-n ITERATIONS] [-b BATCHES]
 *
 * Times BATCHES batches of ITERATIONS rdlock+unlock pairs, then as many
 * wrlock+unlock pairs, with the monotonic clock, and reports the best and
 * the median ns per pair of each.  No paper figure; it shows what a
 * variant's fast path costs when nothing contends (BRAVO: the table slot
 * CAS and the recheck instead of the reader counter's RMW).
 *
 * RESULT prog=latency threads=1 duration_s=.. throughput=1e9/RD_NS
 *        rd_ns=BEST rd_median_ns=.. wr_ns=BEST wr_median_ns=.. iterations=N
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define MAX_BATCHES 101

static const char usage[] =
	"usage: latency [-n ITERATIONS] [-b BATCHES]\n"
	"\n"
	"Uncontended lock latency: one thread times BATCHES batches of ITERATIONS\n"
	"rdlock+unlock pairs on one rwlock, then of wrlock+unlock pairs.\n"
	"\n"
	"  -n, --iterations N   pairs per batch, 1..10^12 (default 1000000)\n"
	"  -b, --batches N      batches of each kind, 1..101 (default 7)\n"
	"  -h, --help           this text\n"
	"  (-t, -d and -s are accepted for uniformity: -t must be 1, -d and -s\n"
	"  are ignored; the run's length is set by -n and -b.)\n"
	"\n"
	"Prints one line on stdout:\n"
	"  RESULT prog=latency threads=1 duration_s=.. throughput=1e9/RD_NS\n"
	"         rd_ns=BEST rd_median_ns=.. wr_ns=BEST wr_median_ns=.. iterations=N\n"
	"Exit status: 0 ok, 1 lock error, 2 usage.\n";

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* ns per pair of each batch into ns[]; false on a lock error. */
static bool time_batches(pthread_rwlock_t *rw, bool write, unsigned long n, unsigned batches,
			 double *ns)
{
	for (unsigned b = 0; b < batches; b++) {
		uint64_t t0 = bench_now_ns();
		int err = 0;

		if (write) {
			for (unsigned long i = 0; i < n; i++) {
				err |= pthread_rwlock_wrlock(rw);
				err |= pthread_rwlock_unlock(rw);
			}
		} else {
			for (unsigned long i = 0; i < n; i++) {
				err |= pthread_rwlock_rdlock(rw);
				err |= pthread_rwlock_unlock(rw);
			}
		}
		ns[b] = (double)(bench_now_ns() - t0) / (double)n;
		if (err)
			return false;
	}
	qsort(ns, batches, sizeof(*ns), cmp_double);
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		BENCH_COMMON_LONGOPTS,
		{ "iterations", required_argument, NULL, 'n' },
		{ "batches", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_common o;
	unsigned long n = 1000000;
	unsigned batches = 7;
	double rd[MAX_BATCHES], wr[MAX_BATCHES], t0, elapsed;
	pthread_rwlock_t rw;
	int c, err;

	bench_setup("latency", usage);
	bench_common_defaults(&o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, BENCH_COMMON_SHORTOPTS "n:b:", longopts, NULL)) != -1) {
		if (bench_common_option(c, optarg, &o))
			continue;
		if (c == 'n')
			n = bench_parse_ulong("--iterations", optarg, 1, 1000000000000ul);
		else if (c == 'b')
			batches = (unsigned)bench_parse_ulong("--batches", optarg, 1, MAX_BATCHES);
		else
			bench_bad_option(c, argv);
	}
	bench_no_operands(argc, argv);
	if (o.threads != 1)
		bench_usage_error("latency is single-threaded (-t 1)");

	err = pthread_rwlock_init(&rw, NULL);
	if (err) {
		fprintf(stderr, "latency: pthread_rwlock_init: %s\n", strerror(err));
		return 1;
	}
	t0 = bench_now();
	if (!time_batches(&rw, false, n, batches, rd) || !time_batches(&rw, true, n, batches, wr)) {
		fprintf(stderr, "latency: FAILURE: a lock call failed\n");
		return 1;
	}
	elapsed = bench_now() - t0;
	err = pthread_rwlock_destroy(&rw);
	if (err) {
		fprintf(stderr, "latency: pthread_rwlock_destroy: %s\n", strerror(err));
		return 1;
	}
	printf("latency: rdlock+unlock %.2f ns (median %.2f), wrlock+unlock %.2f ns (median %.2f)\n",
	       rd[0], rd[batches / 2], wr[0], wr[batches / 2]);
	bench_result(1, elapsed, 1e9 / (rd[0] > 0.01 ? rd[0] : 0.01), /* clock granularity */
		     " rd_ns=%.2f rd_median_ns=%.2f wr_ns=%.2f wr_median_ns=%.2f iterations=%lu"
		     " batches=%u", rd[0], rd[batches / 2], wr[0], wr[batches / 2], n, batches);
	return 0;
}
