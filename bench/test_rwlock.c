/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_rwlock.c - test_rwlock (BRAVO paper, section 5.3, figure 3), after
 * the benchmark of the same name in userspace-rcu (Desnoyers et al.,
 * tests/benchmark/test_rwlock.c), with its command line:
 *
 *   test_rwlock NR_READERS NR_WRITERS DURATION_S [-c READ_CS_LOOPS]
 *               [-e WRITE_CS_LOOPS] [-d WRITER_DELAY_LOOPS] [-s SEED] [-v]
 *
 * The paper runs  test_rwlock T 1 10 -c 10 -e 10 -d 1000.
 *
 * What the urcu original does (read there; this is our own code): fixed-role
 * threads on one central pthread_rwlock_t.  A reader loops: rdlock, check
 * the guarded value, spin -c loops (a loop is one cpu_relax, i.e. a pause
 * instruction), unlock; it has no work outside the lock.  A writer loops:
 * wrlock, store the guarded value twice, spin -e loops, unlock, then spin
 * -d loops before the next write.  Its usage text calls -d "writer period
 * (us)", but the code spins -d cpu_relax loops, and the paper describes it
 * as 1000 work units; we follow the code.  The original's DURATION is whole
 * seconds and it sleeps that long; here decimals are allowed (0.2).  The
 * original's -a (CPU affinity) is not supported: nothing is pinned.
 *
 * Correctness check (as the original's assertion): the writer stores 0 then
 * 8 into the guarded value; a reader that sees anything but 8 fails the run.
 *
 * RESULT prog=test_rwlock threads=NR_READERS duration_s=..
 *        throughput=(READS+WRITES)/S reads=.. writes=.. writers=NR_WRITERS
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define MAX_LOOPS 100000000ul

static const char usage[] =
	"usage: test_rwlock NR_READERS NR_WRITERS DURATION_S [-c READ_CS_LOOPS]\n"
	"                   [-e WRITE_CS_LOOPS] [-d WRITER_DELAY_LOOPS] [-s SEED] [-v]\n"
	"       test_rwlock -h | --help\n"
	"\n"
	"test_rwlock (userspace-rcu's benchmark; BRAVO paper 5.3 runs T 1 10 -c 10\n"
	"-e 10 -d 1000): NR_READERS reader threads (1..1024) and NR_WRITERS writer\n"
	"threads (0..1024) on one rwlock for DURATION_S seconds (decimals allowed).\n"
	"\n"
	"  -c LOOPS  reader critical section, pause-instruction loops (default 0)\n"
	"  -e LOOPS  writer critical section, loops (default 0)\n"
	"  -d LOOPS  writer delay after each write, loops (default 0)\n"
	"  -s N      accepted for uniformity; nothing here is random\n"
	"  -v        verbose: per-thread counts on stdout\n"
	"\n"
	"Prints one line on stdout:\n"
	"  RESULT prog=test_rwlock threads=NR_READERS duration_s=..\n"
	"         throughput=OPS_PER_S reads=.. writes=.. writers=NR_WRITERS\n"
	"Exit status: 0 ok, 1 lock error or correctness failure, 2 usage.\n";

static struct {
	unsigned readers, writers;
	double duration;
	unsigned long read_cs, write_cs, write_delay;
	bool verbose;
} opt;

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
/* The guarded value: 8 whenever no writer is inside.  Relaxed atomics: the
 * lock orders them; atomics only keep the compiler from merging stores. */
static _Atomic int guarded = 8;

static inline void spin_loops(unsigned long n)
{
	while (n--)
		bench_pause();
}

static void *reader(void *arg)
{
	struct bench_thread *t = arg;
	uint64_t reads = 0;

	bench_wait_start();
	while (!bench_stopped()) {
		if (pthread_rwlock_rdlock(&lock)) {
			t->errors++;
			break;
		}
		t->errors += atomic_load_explicit(&guarded, memory_order_relaxed) != 8;
		spin_loops(opt.read_cs);
		pthread_rwlock_unlock(&lock);
		reads++;
	}
	t->reads = t->ops = reads;
	return NULL;
}

static void *writer(void *arg)
{
	struct bench_thread *t = arg;
	uint64_t writes = 0;

	bench_wait_start();
	while (!bench_stopped()) {
		if (pthread_rwlock_wrlock(&lock)) {
			t->errors++;
			break;
		}
		atomic_store_explicit(&guarded, 0, memory_order_relaxed);
		spin_loops(opt.write_cs);
		atomic_store_explicit(&guarded, 8, memory_order_relaxed);
		pthread_rwlock_unlock(&lock);
		writes++;
		spin_loops(opt.write_delay);
	}
	t->writes = t->ops = writes;
	return NULL;
}

/* One thread body for both roles: the first NR_READERS ids read. */
static void *worker(void *arg)
{
	struct bench_thread *t = arg;

	return t->id < opt.readers ? reader(t) : writer(t);
}

static void parse(int argc, char **argv)
{
	const char *positional[3];
	int npos = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			bench_help();
		if (a[0] != '-' || a[1] == '\0') {
			if (npos == 3)
				bench_usage_error("unexpected argument '%s'", a);
			positional[npos++] = a;
			continue;
		}
		if (!strcmp(a, "-v")) {
			opt.verbose = true;
			continue;
		}
		if (strlen(a) != 2 || !strchr("ceds", a[1]))
			bench_usage_error("unknown option '%s'", a);
		if (i + 1 == argc)
			bench_usage_error("option %s needs a value", a);
		const char *v = argv[++i];
		unsigned long n = bench_parse_ulong(a, v, 0, a[1] == 's' ? ULONG_MAX : MAX_LOOPS);

		if (a[1] == 'c')
			opt.read_cs = n;
		else if (a[1] == 'e')
			opt.write_cs = n;
		else if (a[1] == 'd')
			opt.write_delay = n;
	}
	if (npos < 3)
		bench_usage_error("needs NR_READERS NR_WRITERS DURATION_S");
	opt.readers = (unsigned)bench_parse_ulong("NR_READERS", positional[0], 1, BENCH_MAX_THREADS);
	opt.writers = (unsigned)bench_parse_ulong("NR_WRITERS", positional[1], 0, BENCH_MAX_THREADS);
	opt.duration = bench_parse_seconds("DURATION_S", positional[2]);
}

int main(int argc, char **argv)
{
	struct bench_thread *t;
	uint64_t reads = 0, writes = 0, errors;
	unsigned n;
	double elapsed;

	bench_setup("test_rwlock", usage);
	parse(argc, argv);
	n = opt.readers + opt.writers;

	t = bench_spawn(n, 1, worker, NULL);
	elapsed = bench_run_interval(opt.duration);
	errors = bench_join(t, n);
	for (unsigned i = 0; i < n; i++) {
		if (opt.verbose)
			printf("test_rwlock: %s %u: %" PRIu64 "\n",
			       i < opt.readers ? "reader" : "writer", i, t[i].ops);
		reads += t[i].reads;
		writes += t[i].writes;
	}
	if (errors) {
		fprintf(stderr, "test_rwlock: FAILURE: %" PRIu64
			" lock errors or reads inside a write\n", errors);
		return 1;
	}
	printf("test_rwlock: %u readers, %u writers, -c %lu -e %lu -d %lu: %" PRIu64
	       " reads, %" PRIu64 " writes in %.3f s\n", opt.readers, opt.writers, opt.read_cs,
	       opt.write_cs, opt.write_delay, reads, writes, elapsed);
	bench_result(opt.readers, elapsed, (double)(reads + writes) / elapsed,
		     " reads=%" PRIu64 " writes=%" PRIu64 " writers=%u read_cs=%lu write_cs=%lu"
		     " write_delay=%lu", reads, writes, opt.writers, opt.read_cs, opt.write_cs,
		     opt.write_delay);
	free(t);
	return 0;
}
