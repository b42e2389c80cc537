/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ab_probe - a program whose figure depends, deterministically, on whose
 * pthread_rwlock_rdlock the dynamic linker gave it: the test subject of
 * bravo-compare (tests/tools/compare/compare_test.sh).
 *
 * usage: ab_probe MODE COUNTER [--fail-on LIST] [--silent-on LIST]
 *                 [--sleep-on LIST] [--pid-file FILE]
 *
 * Each run appends one line to COUNTER; the number of lines is the run's
 * sequence number n (1, 2, ...), which drives a small deterministic jitter.
 * The probe takes its rwlock for reading and for writing a few times (so
 * libbravo's statistics count operations), then prints on stdout, by MODE
 * (bravo: the rdlock came from a libbravo-*.so; j(n) in -5..5):
 *   faster    "ops/sec: X"     X = 1500 + j(n) under bravo, 1000 + j(n) else
 *   slower    "ops/sec: X"     X =  700 + j(n) under bravo, 1000 + j(n) else
 *   latency   "latency: X us"  X =   50 + j(n) under bravo,  100 + j(n) else
 *   noise     "ops/sec: X"     X = 1000 + a pseudo-random -100..100 of n alone
 *   unitless  "value: X"       X as in faster (no unit to infer a direction)
 * --fail-on LIST    exit 1 on the runs n in LIST (comma-separated)
 * --silent-on LIST  print no figure on those runs
 * --sleep-on LIST   sleep 60 s before printing on those runs
 * --pid-file FILE   write the pid to FILE before such a sleep
 * On stderr: "ab_probe: run N rdlock from PATH".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *rdlock_library(void)
{
	Dl_info info;
	void *sym = dlsym(RTLD_DEFAULT, "pthread_rwlock_rdlock");

	if (!sym || !dladdr(sym, &info) || !info.dli_fname)
		return "?";
	return info.dli_fname;
}

/* Appends a line to path; returns the number of lines it then holds. */
static long next_run_number(const char *path)
{
	FILE *f = fopen(path, "a+");
	long lines = 0;
	int c;

	if (!f)
		return -1;
	fputs("run\n", f);
	fflush(f);
	rewind(f);
	while ((c = getc(f)) != EOF)
		lines += c == '\n';
	fclose(f);
	return lines;
}

static bool listed(const char *list, long n)
{
	char *end;

	while (list && *list) {
		long v = strtol(list, &end, 10);

		if (end == list)
			return false;
		if (v == n)
			return true;
		list = *end == ',' ? end + 1 : end;
	}
	return false;
}

static int take_locks(void)
{
	pthread_rwlock_t lock;
	int err = pthread_rwlock_init(&lock, NULL);

	for (int i = 0; i < 10 && !err; i++) {
		err = pthread_rwlock_rdlock(&lock);
		if (!err)
			err = pthread_rwlock_unlock(&lock);
	}
	if (!err)
		err = pthread_rwlock_wrlock(&lock);
	if (!err)
		err = pthread_rwlock_unlock(&lock);
	pthread_rwlock_destroy(&lock);
	return err;
}

/* Writes the pid to path, through a temporary file: a reader never sees it half-written. */
static int write_pid(const char *path)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%ld\n", (long)getpid());
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

/* -5..5, fixed by n. */
static long jitter(long n)
{
	return (n * 7) % 11 - 5;
}

/* -100..100, fixed by n: splitmix64's finalizer, so neighbours differ. */
static long noise(long n)
{
	uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15ULL;

	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (long)(h % 201) - 100;
}

static int usage(void)
{
	fputs("usage: ab_probe faster|slower|latency|noise|unitless COUNTER [--fail-on LIST]\n"
	      "                [--silent-on LIST] [--sleep-on LIST] [--pid-file FILE]\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *fail_on = NULL, *silent_on = NULL, *sleep_on = NULL, *pid_file = NULL;
	const char *mode, *lib;
	bool bravo;
	long n;

	if (argc < 3 || (argc - 3) % 2)
		return usage();
	mode = argv[1];
	for (int i = 3; i < argc; i += 2) {
		if (!strcmp(argv[i], "--fail-on")) {
			fail_on = argv[i + 1];
		} else if (!strcmp(argv[i], "--silent-on")) {
			silent_on = argv[i + 1];
		} else if (!strcmp(argv[i], "--sleep-on")) {
			sleep_on = argv[i + 1];
		} else if (!strcmp(argv[i], "--pid-file")) {
			pid_file = argv[i + 1];
		} else {
			return usage();
		}
	}
	n = next_run_number(argv[2]);
	if (n < 0) {
		perror(argv[2]);
		return 1;
	}
	lib = rdlock_library();
	bravo = strstr(lib, "libbravo-") != NULL;
	fprintf(stderr, "ab_probe: run %ld rdlock from %s\n", n, lib);
	if (take_locks() != 0) {
		fputs("ab_probe: a lock call failed\n", stderr);
		return 1;
	}
	if (listed(sleep_on, n)) {
		if (pid_file && write_pid(pid_file) != 0)
			return 1;
		sleep(60);
	}
	if (listed(fail_on, n)) {
		fprintf(stderr, "ab_probe: run %ld fails on purpose\n", n);
		return 1;
	}
	if (listed(silent_on, n))
		return 0;
	if (!strcmp(mode, "faster"))
		printf("ops/sec: %ld\n", (bravo ? 1500 : 1000) + jitter(n));
	else if (!strcmp(mode, "slower"))
		printf("ops/sec: %ld\n", (bravo ? 700 : 1000) + jitter(n));
	else if (!strcmp(mode, "latency"))
		printf("latency: %ld us\n", (bravo ? 50 : 100) + jitter(n));
	else if (!strcmp(mode, "noise"))
		printf("ops/sec: %ld\n", 1000 + noise(n));
	else if (!strcmp(mode, "unitless"))
		printf("value: %ld\n", (bravo ? 1500 : 1000) + jitter(n));
	else
		return usage();
	return 0;
}
