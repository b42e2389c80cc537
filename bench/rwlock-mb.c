/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rwlock-mb.c - the rwlock part of the Linux futex locking microbenchmark
 * (Waiman Long's runs in the TP-futex documentation patch, "[PATCH-tip v6
 * 19/22] TP-futex, doc: Update TP futexes document on shared locking"),
 * rebuilt on pthread_rwlock_t.  No paper figure; it shows starvation:
 * writers under glibc's reader preference, readers under writer preference.
 *
 *   rwlock-mb [-t T] [-r READER_PCT] [-d SECS] [-l LOAD] [-w]
 *   rwlock-mb -R READERS -W WRITERS [-d SECS] [-l LOAD] [-w]
 *
 * The runs it mirrors, and how:
 *   - "1:1 reader/writer ratio", "90% readers":  T threads, each loop a
 *     read with probability READER_PCT percent, else a write (-t, -r);
 *   - "separate 18 reader and 18 writer threads": fixed roles (-R, -W);
 *   - "load-to-load latency of 10", "l=1, 5, 50": LOAD pause-instruction
 *     steps inside each critical section and LOAD between two (-l; or apart
 *     with --cs-load and --ncs-load);
 *   - "reader-preferring" / "writer-preferring rwlocks": the lock's kind,
 *     glibc's default or PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP (-w);
 *   - "running for 10s": -d;
 *   - the reports: total ops, per-thread min/avg/max rates, and the average
 *     per-thread reader and writer rates.
 *
 * Correctness check: writers bump a guarded pair of counters on entry and
 * exit, readers check them equal.
 *
 * RESULT prog=rwlock-mb threads=T duration_s=.. throughput=OPS/S
 *        read_ops_s=.. write_ops_s=.. reads=.. writes=..
 *        thread_min=.. thread_avg=.. thread_max=..       (ops/s per thread)
 *        reader_min=.. reader_avg=.. reader_max=..       (reads/s per reading thread)
 *        writer_min=.. writer_avg=.. writer_max=..       (writes/s per writing thread)
 *        readers=.. writers=.. reader_pct=.. cs_load=.. ncs_load=.. prefer_writer=0|1
 * readers= and writers= count the threads that read and that write: in
 * mixed mode (-t) every thread does both (unless READER_PCT is 0 or 100).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define MAX_LOAD 1000000ul

static const char usage[] =
	"usage: rwlock-mb [-t T] [-r READER_PCT] [-d SECS] [-l LOAD] [-w] [-s SEED]\n"
	"       rwlock-mb -R READERS -W WRITERS [-d SECS] [-l LOAD] [-w] [-s SEED]\n"
	"\n"
	"The rwlock runs of the Linux futex locking microbenchmark on one\n"
	"pthread_rwlock_t: per-thread, reader and writer locking rates.\n"
	"\n"
	"  -t, --threads T         mixed mode: T threads (1..1024, default 1), each\n"
	"                          loop a read with probability READER_PCT%, else\n"
	"                          a write\n"
	"  -r, --reader-pct P      0..100, decimals allowed (default 50: 1:1)\n"
	"  -R, --readers N         fixed roles: N reader threads (0..1024) ...\n"
	"  -W, --writers N         ... and N writer threads (0..1024), R+W >= 1\n"
	"  -l, --load N            pause steps inside each critical section and\n"
	"                          between two (0..1000000, default 10)\n"
	"      --cs-load N         ... inside only\n"
	"      --ncs-load N        ... between only\n"
	"  -w, --prefer-writer     the lock is of glibc's writer-preferring kind\n"
	"                          (default: the default kind, reader-preferring\n"
	"                          under glibc)\n"
	"  -d, --duration SECS     measured interval, decimals allowed (default 1)\n"
	"  -s, --seed N            PRNG seed (default 1)\n"
	"  -h, --help              this text\n"
	"\n"
	"Prints a table, then one line on stdout:\n"
	"  RESULT prog=rwlock-mb threads=T duration_s=.. throughput=OPS_PER_S\n"
	"         read_ops_s=.. write_ops_s=.. reads=.. writes=..\n"
	"         thread_min=.. thread_avg=.. thread_max=..\n"
	"         reader_min=.. reader_avg=.. reader_max=..\n"
	"         writer_min=.. writer_avg=.. writer_max=..\n"
	"         readers=.. writers=.. reader_pct=.. cs_load=.. ncs_load=.. prefer_writer=0|1\n"
	"(per-thread rates in operations per second; reader_* over the threads\n"
	"that read, writer_* over those that write; 0 when there are none).\n"
	"Exit status: 0 ok, 1 lock error or correctness failure, 2 usage.\n";

enum role { ROLE_MIXED, ROLE_READER, ROLE_WRITER };

static struct {
	unsigned long cs_load, ncs_load;
	unsigned readers, writers; /* fixed roles; both 0 in mixed mode */
	double reader_pct;
	bool prefer_writer;
} opt = { .cs_load = 10, .ncs_load = 10, .reader_pct = 50.0 };

static pthread_rwlock_t lock;
static struct {
	uint64_t first, second; /* writers bump both; readers expect them equal */
} guarded;
static uint64_t read_threshold;

static inline void load(unsigned long n)
{
	while (n--)
		bench_pause();
}

static enum role role_of(unsigned id)
{
	if (opt.readers + opt.writers == 0)
		return ROLE_MIXED;
	return id < opt.readers ? ROLE_READER : ROLE_WRITER;
}

static bool do_read(struct bench_thread *t)
{
	uint64_t seen;

	if (pthread_rwlock_rdlock(&lock))
		return false;
	seen = guarded.first;
	load(opt.cs_load);
	t->errors += seen != guarded.second;
	pthread_rwlock_unlock(&lock);
	t->reads++;
	return true;
}

static bool do_write(struct bench_thread *t)
{
	if (pthread_rwlock_wrlock(&lock))
		return false;
	guarded.first++;
	load(opt.cs_load);
	guarded.second++;
	pthread_rwlock_unlock(&lock);
	t->writes++;
	return true;
}

static void *worker(void *arg)
{
	struct bench_thread *t = arg;
	enum role role = role_of(t->id);

	bench_wait_start();
	while (!bench_stopped()) {
		bool read = role == ROLE_READER ||
			    (role == ROLE_MIXED && bench_trial(&t->rng, read_threshold));

		if (!(read ? do_read(t) : do_write(t))) {
			t->errors++;
			break;
		}
		load(opt.ncs_load);
	}
	t->ops = t->reads + t->writes;
	return NULL;
}

struct rates {
	double min, sum, max;
	unsigned n;
};

static void rates_add(struct rates *r, double v)
{
	if (r->n == 0 || v < r->min)
		r->min = v;
	if (r->n == 0 || v > r->max)
		r->max = v;
	r->sum += v;
	r->n++;
}

static double rates_avg(const struct rates *r)
{
	return r->n ? r->sum / r->n : 0.0;
}

static void parse(int argc, char **argv, struct bench_common *o)
{
	enum { O_CS_LOAD = 256, O_NCS_LOAD };
	static const struct option longopts[] = {
		BENCH_COMMON_LONGOPTS,
		{ "reader-pct", required_argument, NULL, 'r' },
		{ "readers", required_argument, NULL, 'R' },
		{ "writers", required_argument, NULL, 'W' },
		{ "load", required_argument, NULL, 'l' },
		{ "cs-load", required_argument, NULL, O_CS_LOAD },
		{ "ncs-load", required_argument, NULL, O_NCS_LOAD },
		{ "prefer-writer", no_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	bool mixed_flag = false, roles_flag = false;
	int c;

	bench_common_defaults(o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, BENCH_COMMON_SHORTOPTS "r:R:W:l:w", longopts,
				NULL)) != -1) {
		if (c == 't')
			mixed_flag = true;
		if (bench_common_option(c, optarg, o))
			continue;
		switch (c) {
		case 'r': {
			char *end;

			opt.reader_pct = strtod(optarg, &end);
			if (*optarg < '0' || *optarg > '9' || *end || !(opt.reader_pct <= 100.0))
				bench_usage_error("bad value '%s' for --reader-pct (want 0..100)",
						  optarg);
			mixed_flag = true;
			break;
		}
		case 'R':
			opt.readers = (unsigned)bench_parse_ulong("--readers", optarg, 0,
								  BENCH_MAX_THREADS);
			roles_flag = true;
			break;
		case 'W':
			opt.writers = (unsigned)bench_parse_ulong("--writers", optarg, 0,
								  BENCH_MAX_THREADS);
			roles_flag = true;
			break;
		case 'l':
			opt.cs_load = opt.ncs_load = bench_parse_ulong("--load", optarg, 0, MAX_LOAD);
			break;
		case O_CS_LOAD:
			opt.cs_load = bench_parse_ulong("--cs-load", optarg, 0, MAX_LOAD);
			break;
		case O_NCS_LOAD:
			opt.ncs_load = bench_parse_ulong("--ncs-load", optarg, 0, MAX_LOAD);
			break;
		case 'w':
			opt.prefer_writer = true;
			break;
		default:
			bench_bad_option(c, argv);
		}
	}
	bench_no_operands(argc, argv);
	if (mixed_flag && roles_flag)
		bench_usage_error("-t/-r (mixed threads) and -R/-W (fixed roles) exclude each other");
	if (roles_flag) {
		if (opt.readers + opt.writers == 0)
			bench_usage_error("-R and -W: at least one thread");
		if (opt.readers + opt.writers > BENCH_MAX_THREADS)
			bench_usage_error("-R plus -W: at most %d threads", BENCH_MAX_THREADS);
		o->threads = opt.readers + opt.writers;
	}
}

static int init_lock(void)
{
	pthread_rwlockattr_t attr;
	int err = pthread_rwlockattr_init(&attr);

	if (!err && opt.prefer_writer)
		err = pthread_rwlockattr_setkind_np(&attr,
						    PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	if (!err)
		err = pthread_rwlock_init(&lock, &attr);
	if (err)
		fprintf(stderr, "rwlock-mb: lock initialization: %s\n", strerror(err));
	pthread_rwlockattr_destroy(&attr);
	return err;
}

int main(int argc, char **argv)
{
	struct bench_common o;
	struct bench_thread *t;
	struct rates all = { 0 }, rd = { 0 }, wr = { 0 };
	uint64_t reads = 0, writes = 0, errors;
	double elapsed;
	bool mixed;

	bench_setup("rwlock-mb", usage);
	parse(argc, argv, &o);
	mixed = opt.readers + opt.writers == 0;
	read_threshold = bench_probability_threshold(opt.reader_pct / 100.0);
	if (init_lock())
		return 1;

	t = bench_spawn(o.threads, o.seed, worker, NULL);
	elapsed = bench_run_interval(o.duration);
	errors = bench_join(t, o.threads);
	for (unsigned i = 0; i < o.threads; i++) {
		enum role role = role_of(i);

		reads += t[i].reads;
		writes += t[i].writes;
		rates_add(&all, (double)t[i].ops / elapsed);
		if (role == ROLE_READER || (role == ROLE_MIXED && opt.reader_pct > 0.0))
			rates_add(&rd, (double)t[i].reads / elapsed);
		if (role == ROLE_WRITER || (role == ROLE_MIXED && opt.reader_pct < 100.0))
			rates_add(&wr, (double)t[i].writes / elapsed);
	}
	if (guarded.first != writes || guarded.second != writes)
		errors++;
	if (errors || pthread_rwlock_destroy(&lock)) {
		fprintf(stderr, "rwlock-mb: FAILURE: %" PRIu64 " lock errors or torn reads/writes\n",
			errors);
		return 1;
	}

	printf("rwlock-mb: %u threads (%s), %s lock, load %lu/%lu, %.3f s\n", o.threads,
	       mixed ? "mixed" : "fixed roles", opt.prefer_writer ? "writer-preferring" : "default",
	       opt.cs_load, opt.ncs_load, elapsed);
	printf("  Total locking ops     %14" PRIu64 "\n", reads + writes);
	printf("  Per-thread avg/sec    %14.0f\n", rates_avg(&all));
	printf("  Per-thread min/sec    %14.0f\n", all.min);
	printf("  Per-thread max/sec    %14.0f\n", all.max);
	printf("  Reader rate avg/sec   %14.0f  (%u threads)\n", rates_avg(&rd), rd.n);
	printf("  Writer rate avg/sec   %14.0f  (%u threads)\n", rates_avg(&wr), wr.n);
	bench_result(o.threads, elapsed, (double)(reads + writes) / elapsed,
		     " read_ops_s=%.1f write_ops_s=%.1f reads=%" PRIu64 " writes=%" PRIu64
		     " thread_min=%.1f thread_avg=%.1f thread_max=%.1f"
		     " reader_min=%.1f reader_avg=%.1f reader_max=%.1f"
		     " writer_min=%.1f writer_avg=%.1f writer_max=%.1f"
		     " readers=%u writers=%u reader_pct=%g cs_load=%lu ncs_load=%lu prefer_writer=%d",
		     (double)reads / elapsed, (double)writes / elapsed, reads, writes,
		     all.min, rates_avg(&all), all.max,
		     rd.n ? rd.min : 0.0, rates_avg(&rd), rd.n ? rd.max : 0.0,
		     wr.n ? wr.min : 0.0, rates_avg(&wr), wr.n ? wr.max : 0.0,
		     rd.n, wr.n, mixed ? opt.reader_pct : 100.0 * opt.readers / o.threads,
		     opt.cs_load, opt.ncs_load, opt.prefer_writer);
	free(t);
	return 0;
}
