/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_probe - a program whose per-lock waits depend on the lock's
 * semantics, not on timing: the test subject of bravo-compare --profile
 * and bravo-run --profile (tests/tools/compare/compare_test.sh,
 * tests/tools/launcher_test.sh).
 *
 * Two locks, each made by pthread_rwlock_init in a function of its own:
 *
 *   contended_lock_site  reader R1 holds it; writer W asks for it and
 *                        sleeps; then reader R2 asks.  A reader-preferring
 *                        lock (glibc's default kind) lets R2 in at once: one
 *                        wait (W's).  A lock where a waiting writer holds new
 *                        readers back (BA's phase-fairness, Cohort-RW's
 *                        writer preference) makes R2 wait too: two waits.
 *                        R1 lets go only once R2 is in or asleep.
 *   quiet_lock_site      100 reads and 10 writes by one thread: no wait.
 *
 * Whether a thread is asleep is read from /proc (its state S), once it has
 * said it is about to call the lock: after that it can only sleep in the
 * lock.  Bounded: a thread that never gets there fails the probe after
 * 60 s.  Prints "ops/sec: 1000" (a figure for bravo-compare --metric).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/test_util.h"

static pthread_rwlock_t contended, quiet;
static _Atomic pid_t w_tid, r2_tid;
static atomic_bool r1_in, r2_in, release_r1;

static void must(int r, const char *what)
{
	if (r != 0) {
		fprintf(stderr, "profile_probe: %s returned %d\n", what, r);
		exit(1);
	}
}

static void tick(int *polls, const char *what)
{
	struct timespec ms = { 0, 1000 * 1000 };

	if (++*polls > 60000) {
		fprintf(stderr, "profile_probe: %s never happened\n", what);
		exit(1);
	}
	nanosleep(&ms, NULL);
}

static void wait_asleep(_Atomic pid_t *tid, atomic_bool *or_done, const char *what)
{
	int polls = 0;
	pid_t t;

	while ((t = atomic_load(tid)) == 0 || task_state(t) != 'S')
		if (or_done && atomic_load(or_done))
			return;
		else
			tick(&polls, what);
}

static __attribute__((noinline)) void contended_lock_site(void)
{
	must(pthread_rwlock_init(&contended, NULL), "init contended");
}

static __attribute__((noinline)) void quiet_lock_site(void)
{
	must(pthread_rwlock_init(&quiet, NULL), "init quiet");
}

static void *reader1(void *arg)
{
	int polls = 0;

	(void)arg;
	must(pthread_rwlock_rdlock(&contended), "R1 rdlock");
	atomic_store(&r1_in, true);
	while (!atomic_load(&release_r1))
		tick(&polls, "the release of R1");
	must(pthread_rwlock_unlock(&contended), "R1 unlock");
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	atomic_store(&w_tid, (pid_t)syscall(SYS_gettid));
	must(pthread_rwlock_wrlock(&contended), "W wrlock");
	must(pthread_rwlock_unlock(&contended), "W unlock");
	return NULL;
}

static void *reader2(void *arg)
{
	(void)arg;
	atomic_store(&r2_tid, (pid_t)syscall(SYS_gettid));
	must(pthread_rwlock_rdlock(&contended), "R2 rdlock");
	atomic_store(&r2_in, true);
	must(pthread_rwlock_unlock(&contended), "R2 unlock");
	return NULL;
}

static void contend(void)
{
	pthread_t r1, w, r2;
	int polls = 0;

	must(pthread_create(&r1, NULL, reader1, NULL), "pthread_create R1");
	while (!atomic_load(&r1_in))
		tick(&polls, "R1's read");
	must(pthread_create(&w, NULL, writer, NULL), "pthread_create W");
	wait_asleep(&w_tid, NULL, "W asleep in wrlock");
	must(pthread_create(&r2, NULL, reader2, NULL), "pthread_create R2");
	wait_asleep(&r2_tid, &r2_in, "R2 in, or asleep in rdlock");
	atomic_store(&release_r1, true);
	must(pthread_join(r1, NULL), "join R1");
	must(pthread_join(w, NULL), "join W");
	must(pthread_join(r2, NULL), "join R2");
}

int main(void)
{
	contended_lock_site();
	quiet_lock_site();
	contend();
	for (int i = 0; i < 100; i++) {
		must(pthread_rwlock_rdlock(&quiet), "quiet rdlock");
		must(pthread_rwlock_unlock(&quiet), "quiet unlock");
	}
	for (int i = 0; i < 10; i++) {
		must(pthread_rwlock_wrlock(&quiet), "quiet wrlock");
		must(pthread_rwlock_unlock(&quiet), "quiet unlock");
	}
	printf("ops/sec: 1000\n");
	return 0;
}
