/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common.c - command line, clock, start barrier and stop flag, RESULT line
 * shared by the benchmark programs (see common.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

const char *bench_prog = "bench";
static const char *usage_text = "";

static pthread_barrier_t start_barrier;
/* Main's stop flag, alone on its sector: every worker polls it. */
static struct {
	atomic_bool stop;
} __attribute__((aligned(BENCH_SECTOR))) stop_flag;

void bench_setup(const char *prog, const char *usage)
{
	bench_prog = prog;
	usage_text = usage;
}

void bench_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", bench_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fputs(usage_text, stderr);
	exit(2);
}

void bench_help(void)
{
	fputs(usage_text, stdout);
	exit(0);
}

unsigned long bench_parse_ulong(const char *name, const char *s, unsigned long min,
				unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (*s < '0' || *s > '9')
		bench_usage_error("bad value '%s' for %s (want an integer in %lu..%lu)", s, name,
				  min, max);
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		bench_usage_error("bad value '%s' for %s (want an integer in %lu..%lu)", s, name,
				  min, max);
	return v;
}

/* A non-negative finite decimal, no sign, no hex, no inf/nan. */
static double parse_decimal(const char *name, const char *s)
{
	char *end;
	double v;

	errno = 0;
	if (!((*s >= '0' && *s <= '9') || *s == '.') || strpbrk(s, "xXpP"))
		bench_usage_error("bad value '%s' for %s", s, name);
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		bench_usage_error("bad value '%s' for %s", s, name);
	return v;
}

double bench_parse_seconds(const char *name, const char *s)
{
	double v = parse_decimal(name, s);

	if (!(v > 0.0) || v > 1e6)
		bench_usage_error("bad value '%s' for %s (want seconds > 0)", s, name);
	return v;
}

double bench_parse_probability(const char *name, const char *s)
{
	const char *slash = strchr(s, '/');
	double v;

	if (slash) {
		char num[64];
		size_t len = (size_t)(slash - s);
		double n, d;

		if (len == 0 || len >= sizeof(num))
			bench_usage_error("bad value '%s' for %s (want 0..1 or A/B)", s, name);
		memcpy(num, s, len);
		num[len] = '\0';
		n = parse_decimal(name, num);
		d = parse_decimal(name, slash + 1);
		if (!(d > 0.0))
			bench_usage_error("bad value '%s' for %s (zero denominator)", s, name);
		v = n / d;
	} else {
		v = parse_decimal(name, s);
	}
	if (v > 1.0)
		bench_usage_error("bad value '%s' for %s (want a probability in 0..1)", s, name);
	return v;
}

void bench_common_defaults(struct bench_common *o)
{
	o->threads = 1;
	o->duration = 1.0;
	o->seed = 1;
}

bool bench_common_option(int c, const char *arg, struct bench_common *o)
{
	switch (c) {
	case 't':
		o->threads = (unsigned)bench_parse_ulong("--threads", arg, 1, BENCH_MAX_THREADS);
		return true;
	case 'd':
		o->duration = bench_parse_seconds("--duration", arg);
		return true;
	case 's':
		o->seed = bench_parse_ulong("--seed", arg, 0, ULONG_MAX);
		return true;
	case 'h':
		bench_help();
	default:
		return false;
	}
}

void bench_bad_option(int c, char **argv)
{
	const char *what = argv[optind - 1];

	if (c == ':')
		bench_usage_error("option %s needs a value", what);
	if (optopt && optopt != '?')
		bench_usage_error("unknown option '-%c'", optopt);
	bench_usage_error("unknown option '%s'", what);
}

void bench_no_operands(int argc, char **argv)
{
	if (optind < argc)
		bench_usage_error("unexpected argument '%s'", argv[optind]);
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* SplitMix64 of the seed and the thread index: distinct, never-zero states. */
uint64_t bench_seed_for(uint64_t seed, unsigned thread)
{
	uint64_t z = seed + UINT64_C(0x9e3779b97f4a7c15) * ((uint64_t)thread + 1);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return z ? z : UINT64_C(0x2545f4914f6cdd1d);
}

uint64_t bench_probability_threshold(double p)
{
	double t;

	if (p >= 1.0)
		return UINT64_MAX; /* always */
	if (!(p > 0.0))
		return 0; /* never */
	t = p * 18446744073709551616.0; /* p * 2^64 */
	return t >= 18446744073709551615.0 ? UINT64_MAX - 1 : (uint64_t)t;
}

struct bench_thread *bench_spawn(unsigned n, uint64_t seed, void *(*fn)(void *), void *arg)
{
	struct bench_thread *t = aligned_alloc(BENCH_SECTOR, sizeof(*t) * n);
	int err;

	if (!t) {
		fprintf(stderr, "%s: out of memory\n", bench_prog);
		exit(1);
	}
	memset(t, 0, sizeof(*t) * n);
	err = pthread_barrier_init(&start_barrier, NULL, n + 1);
	if (err) {
		fprintf(stderr, "%s: pthread_barrier_init: %s\n", bench_prog, strerror(err));
		exit(1);
	}
	for (unsigned i = 0; i < n; i++) {
		t[i].id = i;
		t[i].rng = bench_seed_for(seed, i);
		t[i].arg = arg;
		err = pthread_create(&t[i].tid, NULL, fn, &t[i]);
		if (err) {
			fprintf(stderr, "%s: pthread_create (thread %u): %s\n", bench_prog, i,
				strerror(err));
			exit(1); /* the others wait on the barrier forever */
		}
	}
	return t;
}

void bench_wait_start(void)
{
	pthread_barrier_wait(&start_barrier);
}

bool bench_stopped(void)
{
	/* Relaxed: the flag only tells workers to stop; join orders the rest. */
	return atomic_load_explicit(&stop_flag.stop, memory_order_relaxed);
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

static double interval_cpu_s = -1;

/* The process's CPU seconds so far, user and system; -1 on failure. */
static double process_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double bench_run_interval(double duration)
{
	double t0, t1, cpu0, cpu1;

	pthread_barrier_wait(&start_barrier);
	t0 = bench_now();
	cpu0 = process_cpu_s();
	sleep_until(t0 + duration);
	atomic_store_explicit(&stop_flag.stop, true, memory_order_relaxed);
	t1 = bench_now();
	cpu1 = process_cpu_s();
	interval_cpu_s = cpu0 < 0 || cpu1 < 0 ? -1 : cpu1 - cpu0;
	return t1 - t0;
}

double bench_interval_cpu_s(void)
{
	return interval_cpu_s;
}

uint64_t bench_join(struct bench_thread *t, unsigned n)
{
	uint64_t errors = 0;

	for (unsigned i = 0; i < n; i++) {
		pthread_join(t[i].tid, NULL);
		errors += t[i].errors;
	}
	pthread_barrier_destroy(&start_barrier);
	return errors;
}

void bench_totals(const struct bench_thread *t, unsigned n, uint64_t *reads, uint64_t *writes)
{
	*reads = *writes = 0;
	for (unsigned i = 0; i < n; i++) {
		*reads += t[i].reads;
		*writes += t[i].writes;
	}
}

int bench_lock_init_warm(pthread_rwlock_t *rw)
{
	int err = pthread_rwlock_init(rw, NULL);

	if (!err)
		err = pthread_rwlock_rdlock(rw);
	if (!err)
		err = pthread_rwlock_unlock(rw);
	return err;
}

void bench_result(unsigned threads, double duration, double throughput, const char *extra, ...)
{
	va_list ap;

	printf("RESULT prog=%s threads=%u duration_s=%.3f throughput=%.1f", bench_prog, threads,
	       duration, throughput);
	va_start(ap, extra);
	vprintf(extra, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}
