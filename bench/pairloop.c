/*
 * pairloop.c - one thread, one lock, N lock+unlock pairs and nothing else:
 * the loop scripts/icount runs under callgrind to count what a pair of
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
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: pairloop [--write-every K] [--revoke-first] N\n"
	"\n"
	"N lock+unlock pairs on one pthread_rwlock_t, one thread.\n"
	"  -k, --write-every K  0: reads only (default); 1: writes only;\n"
	"                       K > 1: every K-th pair a write\n"
	"  -r, --revoke-first   a read and then a write before the loop\n"
	"  -h, --help           this text\n";

static int parse_count(const char *what, const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-') {
		fprintf(stderr, "pairloop: %s: not a non-negative integer: '%s'\n", what, s);
		return -1;
	}
	return 0;
}

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

	while ((c = getopt_long(argc, argv, "k:rh", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (parse_count("--write-every", optarg, &k))
				goto bad;
			break;
		case 'r':
			revoke_first = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "pairloop: expected one argument N, the number of pairs\n");
		goto bad;
	}
	if (parse_count("N", argv[optind], &n))
		goto bad;
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
bad:
	fputs(usage, stderr);
	return 2;
}
