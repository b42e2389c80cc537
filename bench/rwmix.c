/*
 * rwmix.c - reader/writer mix benchmark for pthread_rwlock_t.
 *
 * An ordinary pthread program: it calls the plain pthread_rwlock_* API and
 * knows nothing about libbravo, so the same binary measures glibc (no
 * preload) and every LD_PRELOADed variant.
 *
 * Throughput mode (the default):
 *
 *   rwmix [--threads T] [--write-pct P] [--duration S]
 *         [--cs-work N] [--ncs-work N] [--locks K]
 *
 *   T threads (1..1024, default 1) start together on a barrier and loop
 *   until main raises a stop flag after S seconds (default 1; fractional
 *   allowed).  Each iteration picks one of K locks (1..4096, default 1)
 *   uniformly, takes it for writing with probability P percent (0..100,
 *   fractional allowed, e.g. 0.01; default 0) and for reading otherwise,
 *   runs N xorshift PRNG steps inside the critical section (--cs-work,
 *   default 10), unlocks, and runs N steps outside (--ncs-work, default 0).
 *   The defaults make the read-only case a pure lock-scaling test: short
 *   critical sections and nothing between them.
 *
 *   Correctness check: every lock guards two counters.  A writer bumps the
 *   first, does its critical-section work, then bumps the second; a reader
 *   checks they are equal.  At the end the counters of all locks must both
 *   equal the total number of write acquisitions and no reader may have seen
 *   them differ; otherwise rwmix prints why on stderr and exits 1.
 *
 * Latency mode:
 *
 *   rwmix --latency [--iterations N]
 *
 *   One thread, one uncontended lock: ns per rdlock+unlock pair and per
 *   wrlock+unlock pair, each the best of 5 batches of N pairs (default
 *   10,000,000) timed with clock_gettime(CLOCK_MONOTONIC).
 *
 * Output: exactly one line on stdout,
 *
 *   SUMMARY mode=throughput threads=2 write_pct=0 duration=1.000 ops=...
 *           ops_per_sec=... reads=... writes=... locks=1 cs_work=10 ncs_work=0
 *   SUMMARY mode=latency iterations=10000000 rd_ns=12.8 wr_ns=14.1
 *
 * (one line each; wrapped here).  duration is the measured time between
 * the start barrier and the stop flag.  Exit status: 0 ok, 1 run-time
 * failure (lock call error, correctness check), 2 usage error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CACHE_LINE 128
#define MAX_THREADS 1024
#define MAX_LOCKS 4096
#define MAX_WORK 100000000ul
#define LATENCY_BATCHES 5

static const char usage_text[] =
	"usage: rwmix [--threads T] [--write-pct P] [--duration S]\n"
	"             [--cs-work N] [--ncs-work N] [--locks K]\n"
	"       rwmix --latency [--iterations N]\n"
	"       rwmix --help\n"
	"\n"
	"Throughput (default mode): T threads (1..1024, default 1) loop for S\n"
	"seconds (> 0, default 1), each iteration taking one of K shared rwlocks\n"
	"(1..4096, default 1) for writing with probability P% (0..100, may be\n"
	"fractional, default 0) else for reading, doing --cs-work PRNG steps\n"
	"inside (default 10) and --ncs-work steps outside (default 0).\n"
	"\n"
	"Latency (--latency): one thread, uncontended; ns per rdlock+unlock and\n"
	"per wrlock+unlock pair, best of 5 batches of N pairs (default 10000000).\n"
	"\n"
	"Prints one line on stdout:\n"
	"  SUMMARY mode=throughput threads=.. write_pct=.. duration=.. ops=..\n"
	"          ops_per_sec=.. reads=.. writes=.. locks=.. cs_work=.. ncs_work=..\n"
	"  SUMMARY mode=latency iterations=.. rd_ns=.. wr_ns=..\n"
	"Exit status: 0 ok, 1 failure (lock error or correctness check), 2 usage.\n";

struct guarded {
	pthread_rwlock_t rw;
	uint64_t first;  /* bumped by writers on entry */
	uint64_t second; /* bumped by writers on exit; readers expect == first */
} __attribute__((aligned(CACHE_LINE)));

struct worker {
	pthread_t tid;
	unsigned id;
	uint64_t reads;
	uint64_t writes;
	uint64_t torn; /* reader saw first != second */
	uint64_t sink; /* keeps the PRNG work alive */
	int error;     /* first nonzero lock call result */
} __attribute__((aligned(CACHE_LINE)));

static struct {
	unsigned threads;
	double write_pct;
	double duration;
	unsigned long cs_work;
	unsigned long ncs_work;
	unsigned locks;
	bool latency;
	unsigned long iterations;
} opt = {
	.threads = 1,
	.write_pct = 0.0,
	.duration = 1.0,
	.cs_work = 10,
	.ncs_work = 0,
	.locks = 1,
	.latency = false,
	.iterations = 10000000,
};

static struct guarded *guards;
static uint64_t write_threshold; /* write iff prng < threshold ... */
static bool always_write;        /* ... or always, for P == 100 */
static pthread_barrier_t start_barrier;
static struct {
	atomic_int stop;
} __attribute__((aligned(CACHE_LINE))) stop_flag;

static inline uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static inline uint64_t work(uint64_t *s, unsigned long n)
{
	uint64_t acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += xorshift64(s);
	return acc;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t s = 0x9e3779b97f4a7c15ull * (w->id + 1) ^ 0xd1b54a32d192ed03ull;
	uint64_t reads = 0, writes = 0, torn = 0, sink = 0;
	int err = 0;

	if (s == 0)
		s = 1;
	pthread_barrier_wait(&start_barrier);
	while (!atomic_load_explicit(&stop_flag.stop, memory_order_relaxed)) {
		struct guarded *g = &guards[opt.locks > 1 ? xorshift64(&s) % opt.locks : 0];
		bool write = always_write || xorshift64(&s) < write_threshold;

		if (write) {
			err = pthread_rwlock_wrlock(&g->rw);
			if (err)
				break;
			g->first++;
			sink += work(&s, opt.cs_work);
			g->second++;
			err = pthread_rwlock_unlock(&g->rw);
			if (err)
				break;
			writes++;
		} else {
			err = pthread_rwlock_rdlock(&g->rw);
			if (err)
				break;
			uint64_t a = g->first;
			sink += work(&s, opt.cs_work);
			if (a != g->second)
				torn++;
			err = pthread_rwlock_unlock(&g->rw);
			if (err)
				break;
			reads++;
		}
		sink += work(&s, opt.ncs_work);
	}
	w->reads = reads;
	w->writes = writes;
	w->torn = torn;
	w->sink = sink;
	w->error = err;
	return NULL;
}

static void sleep_until(double deadline)
{
	struct timespec ts;

	ts.tv_sec = (time_t)deadline;
	ts.tv_nsec = (long)((deadline - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int run_throughput(void)
{
	struct worker *workers;
	uint64_t reads = 0, writes = 0, torn = 0, sink = 0, first = 0, second = 0;
	double t0, t1, elapsed;
	int rc = 0, err;

	if (opt.write_pct >= 100.0) {
		always_write = true;
	} else {
		double t = opt.write_pct / 100.0 * 18446744073709551616.0;

		write_threshold = t >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)t;
	}

	guards = aligned_alloc(CACHE_LINE, sizeof(*guards) * opt.locks);
	workers = aligned_alloc(CACHE_LINE, sizeof(*workers) * opt.threads);
	if (!guards || !workers) {
		fprintf(stderr, "rwmix: out of memory\n");
		return 1;
	}
	memset(guards, 0, sizeof(*guards) * opt.locks);
	memset(workers, 0, sizeof(*workers) * opt.threads);
	for (unsigned i = 0; i < opt.locks; i++) {
		err = pthread_rwlock_init(&guards[i].rw, NULL);
		if (err) {
			fprintf(stderr, "rwmix: pthread_rwlock_init: %s\n", strerror(err));
			return 1;
		}
	}
	err = pthread_barrier_init(&start_barrier, NULL, opt.threads + 1);
	if (err) {
		fprintf(stderr, "rwmix: pthread_barrier_init: %s\n", strerror(err));
		return 1;
	}
	for (unsigned i = 0; i < opt.threads; i++) {
		workers[i].id = i;
		err = pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
		if (err) {
			fprintf(stderr, "rwmix: pthread_create (thread %u): %s\n", i, strerror(err));
			exit(1); /* the others wait on the barrier forever */
		}
	}

	pthread_barrier_wait(&start_barrier);
	t0 = now_sec();
	sleep_until(t0 + opt.duration);
	atomic_store_explicit(&stop_flag.stop, 1, memory_order_relaxed);
	t1 = now_sec();
	elapsed = t1 - t0;

	for (unsigned i = 0; i < opt.threads; i++) {
		pthread_join(workers[i].tid, NULL);
		if (workers[i].error && !rc) {
			fprintf(stderr, "rwmix: thread %u: lock call failed: %s\n", i,
				strerror(workers[i].error));
			rc = 1;
		}
		reads += workers[i].reads;
		writes += workers[i].writes;
		torn += workers[i].torn;
		sink += workers[i].sink;
	}
	for (unsigned i = 0; i < opt.locks; i++) {
		first += guards[i].first;
		second += guards[i].second;
		err = pthread_rwlock_destroy(&guards[i].rw);
		if (err && !rc) {
			fprintf(stderr, "rwmix: pthread_rwlock_destroy: %s\n", strerror(err));
			rc = 1;
		}
	}
	pthread_barrier_destroy(&start_barrier);
	free(workers);
	free(guards);
	guards = NULL;

	if (!rc && (first != writes || second != writes)) {
		fprintf(stderr,
			"rwmix: CORRECTNESS FAILURE: %" PRIu64 " write acquisitions but guarded "
			"counters are %" PRIu64 "/%" PRIu64 " (lost updates: writers not exclusive)\n",
			writes, first, second);
		rc = 1;
	}
	if (!rc && torn) {
		fprintf(stderr,
			"rwmix: CORRECTNESS FAILURE: readers saw a writer's critical section "
			"in progress %" PRIu64 " times (readers and writers not exclusive)\n",
			torn);
		rc = 1;
	}
	if (rc)
		return rc;

	printf("SUMMARY mode=throughput threads=%u write_pct=%g duration=%.3f ops=%" PRIu64
	       " ops_per_sec=%.0f reads=%" PRIu64 " writes=%" PRIu64
	       " locks=%u cs_work=%lu ncs_work=%lu\n",
	       opt.threads, opt.write_pct, elapsed, reads + writes,
	       (double)(reads + writes) / elapsed, reads, writes, opt.locks, opt.cs_work,
	       opt.ncs_work);
	/* never true; makes the PRNG work observable so it is not optimized out */
	if (sink == 42 && reads == 0 && writes == 0)
		fputs("", stderr);
	return 0;
}

/* ns per lock+unlock pair, best of LATENCY_BATCHES batches; < 0 on error */
static double latency_of(pthread_rwlock_t *rw, bool write)
{
	double best = INFINITY;

	for (int b = 0; b < LATENCY_BATCHES; b++) {
		double t0 = now_sec(), t;
		int err = 0;

		if (write) {
			for (unsigned long i = 0; i < opt.iterations; i++) {
				err |= pthread_rwlock_wrlock(rw);
				err |= pthread_rwlock_unlock(rw);
			}
		} else {
			for (unsigned long i = 0; i < opt.iterations; i++) {
				err |= pthread_rwlock_rdlock(rw);
				err |= pthread_rwlock_unlock(rw);
			}
		}
		t = now_sec() - t0;
		if (err) {
			fprintf(stderr, "rwmix: %s lock/unlock call failed\n", write ? "write" : "read");
			return -1;
		}
		if (t < best)
			best = t;
	}
	return best * 1e9 / (double)opt.iterations;
}

static int run_latency(void)
{
	pthread_rwlock_t rw;
	double rd, wr;
	int err = pthread_rwlock_init(&rw, NULL);

	if (err) {
		fprintf(stderr, "rwmix: pthread_rwlock_init: %s\n", strerror(err));
		return 1;
	}
	rd = latency_of(&rw, false);
	wr = rd < 0 ? -1 : latency_of(&rw, true);
	err = pthread_rwlock_destroy(&rw);
	if (rd < 0 || wr < 0)
		return 1;
	if (err) {
		fprintf(stderr, "rwmix: pthread_rwlock_destroy: %s\n", strerror(err));
		return 1;
	}
	printf("SUMMARY mode=latency iterations=%lu rd_ns=%.2f wr_ns=%.2f\n", opt.iterations, rd, wr);
	return 0;
}

static _Noreturn void usage_error(const char *fmt, const char *a, const char *b)
{
	fputs("rwmix: ", stderr);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	fputs(usage_text, stderr);
	exit(2);
}

static unsigned long parse_ulong(const char *name, const char *s, unsigned long min,
				 unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (*s < '0' || *s > '9')
		usage_error("bad value '%s' for %s", s, name);
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max) {
		char range[64];

		snprintf(range, sizeof(range), "%lu..%lu", min, max);
		fprintf(stderr, "rwmix: bad value '%s' for %s (want an integer in %s)\n", s, name,
			range);
		fputs(usage_text, stderr);
		exit(2);
	}
	return v;
}

static double parse_double(const char *name, const char *s)
{
	char *end;
	double v;

	errno = 0;
	if (!((*s >= '0' && *s <= '9') || *s == '.'))
		usage_error("bad value '%s' for %s", s, name);
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		usage_error("bad value '%s' for %s", s, name);
	return v;
}

int main(int argc, char **argv)
{
	enum { O_THREADS = 256, O_WRITE_PCT, O_DURATION, O_CS, O_NCS, O_LOCKS, O_LATENCY, O_ITER, O_HELP };
	static const struct option longopts[] = {
		{ "threads", required_argument, NULL, O_THREADS },
		{ "write-pct", required_argument, NULL, O_WRITE_PCT },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "cs-work", required_argument, NULL, O_CS },
		{ "ncs-work", required_argument, NULL, O_NCS },
		{ "locks", required_argument, NULL, O_LOCKS },
		{ "latency", no_argument, NULL, O_LATENCY },
		{ "iterations", required_argument, NULL, O_ITER },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	bool throughput_flag = false, iterations_flag = false;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case O_THREADS:
			opt.threads = (unsigned)parse_ulong("--threads", optarg, 1, MAX_THREADS);
			throughput_flag = true;
			break;
		case O_WRITE_PCT:
			opt.write_pct = parse_double("--write-pct", optarg);
			if (opt.write_pct < 0.0 || opt.write_pct > 100.0)
				usage_error("bad value '%s' for %s (want 0..100)", optarg, "--write-pct");
			throughput_flag = true;
			break;
		case O_DURATION:
			opt.duration = parse_double("--duration", optarg);
			if (!(opt.duration > 0.0) || opt.duration > 1e6)
				usage_error("bad value '%s' for %s (want seconds > 0)", optarg, "--duration");
			throughput_flag = true;
			break;
		case O_CS:
			opt.cs_work = parse_ulong("--cs-work", optarg, 0, MAX_WORK);
			throughput_flag = true;
			break;
		case O_NCS:
			opt.ncs_work = parse_ulong("--ncs-work", optarg, 0, MAX_WORK);
			throughput_flag = true;
			break;
		case O_LOCKS:
			opt.locks = (unsigned)parse_ulong("--locks", optarg, 1, MAX_LOCKS);
			throughput_flag = true;
			break;
		case O_LATENCY:
			opt.latency = true;
			break;
		case O_ITER:
			opt.iterations = parse_ulong("--iterations", optarg, 1, 1000000000000ul);
			iterations_flag = true;
			break;
		case O_HELP:
			fputs(usage_text, stdout);
			return 0;
		case ':':
			usage_error("option %s needs a value%s", argv[optind - 1], "");
		default:
			usage_error("unknown option '%s'%s", argv[optind - 1], "");
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'%s", argv[optind], "");
	if (opt.latency && throughput_flag)
		usage_error("--latency takes only --iterations%s%s", "", "");
	if (!opt.latency && iterations_flag)
		usage_error("--iterations needs --latency%s%s", "", "");

	return opt.latency ? run_latency() : run_throughput();
}
