/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pairloop.c - one thread, one lock, N lock+unlock pairs and nothing else:
 * the loop bench/drivers/icount runs under callgrind to count what a pair of
 * calls executes (instruction counts are deterministic; timings on a
 * shared machine are not).
 *
 *   pairloop [--write-every K] [--revoke-first] N
 *
 * K = 0 (default): every pair a read; K = 1: every pair a write; K > 1:
 * every K-th pair a write, the others reads.  --revoke-first: one read,
 * then one write, before the loop (a BRAVO lock then starts with its bias
 * enabled once and revoked once).  Exit status: 0, 1 if a call failed,
 * 2 on a bad command line.
 */
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>

#include "common.h"

static const char usage[] =
	"usage: pairloop [--write-every K] [--revoke-first] N\n"
	"\n"
	"N lock+unlock pairs on one pthread_rwlock_t, one thread.\n"
	"  -k, --write-every K  0: reads only (default); 1: writes only;\n"
	"                       K > 1: every K-th pair a write\n"
	"  -r, --revoke-first   a read and then a write before the loop\n"
	"  -h, --help           this text\n";

static int one_pair(pthread_rwlock_t *rw, int write)
{
	int r = write ? pthread_rwlock_wrlock(rw) : pthread_rwlock_rdlock(rw);

	return r ? r : pthread_rwlock_unlock(rw);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "write-every", required_argument, NULL, 'k' },
		{ "revoke-first", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
	unsigned long n, k = 0, next_write;
	int revoke_first = 0, c;

	bench_setup("pairloop", usage);
	while ((c = getopt_long(argc, argv, ":k:rh", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			k = bench_parse_ulong("--write-every", optarg, 0, ULONG_MAX);
			break;
		case 'r':
			revoke_first = 1;
			break;
		case 'h':
			bench_help();
		default:
			bench_bad_option(c, argv);
		}
	}
	if (optind != argc - 1)
		bench_usage_error("expected one argument N, the number of pairs");
	n = bench_parse_ulong("N", argv[optind], 0, ULONG_MAX);
	if (revoke_first && (one_pair(&rw, 0) || one_pair(&rw, 1)))
		return 1;
	/* A countdown, not a modulo: the loop adds the same few instructions to every lock. */
	next_write = k;
	for (unsigned long i = 0; i < n; i++) {
		int write = k != 0 && --next_write == 0;

		if (write)
			next_write = k;
		if (one_pair(&rw, write))
			return 1;
	}
	return 0;
}
