/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common.h - what the benchmark programs of bench/ share.
 *
 * The programs are ordinary pthread programs: they call the plain
 * pthread_rwlock_* API and know nothing of libbravo, so the lock they run on
 * is chosen by LD_PRELOAD alone (none: glibc's).
 *
 * Shared here:
 *  - the command line: -t/--threads, -d/--duration, -s/--seed, -h/--help,
 *    number parsing, and the usage-error rule (message and usage text on
 *    stderr, exit 2);
 *  - a monotonic clock;
 *  - the run: worker threads that wait on one start barrier, then loop until
 *    main raises the stop flag after the measured interval;
 *  - a per-thread PRNG (xorshift64*) seeded from --seed and the thread index;
 *  - per-thread counters, each thread's on its own 128-byte sector (two
 *    64-byte lines: Intel's adjacent-line prefetch pairs them);
 *  - the one final line on stdout that scripts parse:
 *      RESULT prog=NAME threads=T duration_s=SECS throughput=OPS_PER_S k=v ...
 *
 * No thread is pinned to a CPU.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define BENCH_SECTOR 128
#define BENCH_MAX_THREADS 1024

/* ---- command line ---- */

/* The options every program has (test_rwlock takes threads positionally). */
struct bench_common {
	unsigned threads;
	double duration; /* seconds, > 0 */
	uint64_t seed;
};

/* Name and usage text for messages; call first in main. */
void bench_setup(const char *prog, const char *usage);

/* Message "PROG: ..." and the usage text on stderr, exit 2. */
_Noreturn void bench_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The usage text on stdout, exit 0. */
_Noreturn void bench_help(void);

/* Decimal integer in [min, max], else a usage error naming the option. */
unsigned long bench_parse_ulong(const char *name, const char *s, unsigned long min,
				unsigned long max);

/* Seconds, > 0 and at most a million, decimals allowed. */
double bench_parse_seconds(const char *name, const char *s);

/* A probability in [0, 1]: a decimal (0.001) or a fraction (1/1000). */
double bench_parse_probability(const char *name, const char *s);

/*
 * The getopt_long option string and table entries of the common options;
 * a program appends its own.  bench_common_option() handles one getopt
 * result: true if it was a common option (or --help, which exits), false
 * if the program must handle it.  Unknown options and missing values are
 * usage errors.
 */
#define BENCH_COMMON_SHORTOPTS ":t:d:s:h"
#define BENCH_COMMON_LONGOPTS                                  \
	{ "threads", required_argument, NULL, 't' },           \
	{ "duration", required_argument, NULL, 'd' },          \
	{ "seed", required_argument, NULL, 's' },              \
	{ "help", no_argument, NULL, 'h' }
void bench_common_defaults(struct bench_common *o);
bool bench_common_option(int c, const char *arg, struct bench_common *o);
/* Call for getopt results no one handled (':' and '?'), then exits 2. */
_Noreturn void bench_bad_option(int c, char **argv);
/* Usage error if optind < argc. */
void bench_no_operands(int argc, char **argv);

/* ---- clock ---- */

double bench_now(void);       /* CLOCK_MONOTONIC, seconds */
uint64_t bench_now_ns(void);  /* CLOCK_MONOTONIC, nanoseconds */

static inline void bench_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- PRNG: xorshift64* (Vigna), never zero state ---- */

uint64_t bench_seed_for(uint64_t seed, unsigned thread);

static inline uint64_t bench_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}

/* Uniform in [0, n) (multiply-shift; bias below 2^-32 for n < 2^32). */
static inline uint32_t bench_rand_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((bench_rand(s) >> 32) * (uint64_t)n) >> 32);
}

/* n PRNG steps of work; the sum keeps the compiler from dropping them. */
static inline uint64_t bench_rand_steps(uint64_t *s, unsigned long n)
{
	uint64_t acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += bench_rand(s);
	return acc;
}

/* Threshold for a Bernoulli trial: bench_rand(s) < t  has probability p. */
uint64_t bench_probability_threshold(double p);

static inline bool bench_trial(uint64_t *s, uint64_t threshold)
{
	return threshold == UINT64_MAX || bench_rand(s) < threshold;
}

/* ---- the run ---- */

/* One worker's state and counters, on its own sectors. */
struct bench_thread {
	pthread_t tid;
	unsigned id;
	uint64_t rng;      /* this thread's xorshift64* state */
	uint64_t ops;      /* the program's unit of work (reads + writes, ...) */
	uint64_t reads;
	uint64_t writes;
	uint64_t sink;     /* PRNG output, so the work is not optimized out */
	uint64_t errors;   /* failed lock calls or correctness violations */
	void *arg;         /* per-program */
} __attribute__((aligned(BENCH_SECTOR)));

/*
 * Start n threads running fn(&threads[i]) (ids 0..n-1, PRNGs seeded from
 * seed, .arg = arg).  Each calls bench_wait_start() first, then loops while
 * !bench_stopped().  Exits 1 if a thread cannot be created.  One run per
 * process.
 */
struct bench_thread *bench_spawn(unsigned n, uint64_t seed, void *(*fn)(void *), void *arg);

/* In a worker: wait until every worker and main are ready. */
void bench_wait_start(void);

/* In a worker: true once the interval is over (relaxed: a hint to stop). */
bool bench_stopped(void);

/* In main: release the workers, sleep duration, raise the stop flag;
 * returns the measured seconds.  Then bench_join() the workers. */
double bench_run_interval(double duration);

/*
 * CPU seconds (user and system, every thread of the process) spent in the
 * last bench_run_interval, from the release to the stop flag; -1 if the
 * kernel did not say.  Divided by the measured seconds: the CPUs the run
 * kept busy, which a lock that parks its waiters can keep below the
 * threads' count.
 */
double bench_interval_cpu_s(void);

/* Join the n threads; returns the sum of their error counts. */
uint64_t bench_join(struct bench_thread *t, unsigned n);

/* The n threads' reads and writes, summed. */
void bench_totals(const struct bench_thread *t, unsigned n, uint64_t *reads, uint64_t *writes);

/*
 * Initialize rw (default attributes) and read it once: a variant that keeps
 * a lock in a heap block attaches it on first use, which must happen before
 * the measured interval.  0 or the failing call's error.
 */
int bench_lock_init_warm(pthread_rwlock_t *rw);

/* ---- output ---- */

/*
 * The final line:  RESULT prog=.. threads=.. duration_s=.. throughput=..
 * followed by extra, a printf format of " key=value" pairs (may be "").
 */
void bench_result(unsigned threads, double duration, double throughput, const char *extra,
		  ...) __attribute__((format(printf, 4, 5)));

/* The program's name as given to bench_setup (for messages). */
extern const char *bench_prog;

#endif
