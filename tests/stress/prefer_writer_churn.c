/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * prefer_writer_churn.c - reproduces glibc 2.36's writer-preferring rwlock
 * wedge (doc/glibc-wedge.md): six threads loop over the ten lock
 * operations, with 100 us deadlines, on one writer-preferring lock, in
 * rounds of 1 s.  A thread that does not join within 3 s of the round's
 * end is reported with the lock's words and every thread's operation, and
 * the program pauses for a debugger.  Not in make check: it hangs glibc.
 *
 *   prefer_writer_churn [ROUNDS [OPS]]   OPS: digits 0-9, the operations used
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <unistd.h>

static pthread_rwlock_t lock;
static atomic_bool stop;
static atomic_long done;
static _Atomic int cur_op[8];
/* The operations the threads pick from (argv[2], digits 0-9; default all ten). */
static int opset[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, nops = 10;

static int op_abs(int op, struct timespec *abs)
{
	switch (op) {
	case 0: return pthread_rwlock_rdlock(&lock);
	case 1: return pthread_rwlock_tryrdlock(&lock);
	case 2: return pthread_rwlock_timedrdlock(&lock, abs);
	case 3: return pthread_rwlock_clockrdlock(&lock, CLOCK_REALTIME, abs);
	case 4: return pthread_rwlock_clockrdlock(&lock, CLOCK_MONOTONIC, abs);
	case 5: return pthread_rwlock_wrlock(&lock);
	case 6: return pthread_rwlock_trywrlock(&lock);
	case 7: return pthread_rwlock_timedwrlock(&lock, abs);
	case 8: return pthread_rwlock_clockwrlock(&lock, CLOCK_REALTIME, abs);
	default: return pthread_rwlock_clockwrlock(&lock, CLOCK_MONOTONIC, abs);
	}
}

static void *thr(void *p)
{
	int id = (int)(long)p;
	unsigned seed = (unsigned)id * 2654435761u + 7 + (unsigned)time(NULL);
	while (!atomic_load(&stop)) {
		seed = seed * 1103515245u + 12345u;
		int op = opset[(seed >> 8) % nops];
		struct timespec abs;
		clock_gettime((op == 4 || op == 9) ? CLOCK_MONOTONIC : CLOCK_REALTIME, &abs);
		abs.tv_nsec += 100000;
		if (abs.tv_nsec >= 1000000000L) { abs.tv_sec++; abs.tv_nsec -= 1000000000L; }
		atomic_store(&cur_op[id], op);
		int rc = op_abs(op, &abs);
		atomic_store(&cur_op[id], -1);
		if (rc == 0) {
			if (pthread_rwlock_unlock(&lock)) { fprintf(stderr, "unlock failed\n"); abort(); }
		} else if (rc != ETIMEDOUT && rc != EBUSY) { fprintf(stderr, "op %d rc %d\n", op, rc); abort(); }
		atomic_fetch_add(&done, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	if (argc > 3 || rounds <= 0) {
		fprintf(stderr, "usage: prefer_writer_churn [ROUNDS [OPS]], ROUNDS > 0, OPS digits 0-9\n");
		return 2;
	}
	if (argc > 2) {
		nops = 0;
		for (const char *s = argv[2]; *s && nops < 10; s++)
			if (*s >= '0' && *s <= '9')
				opset[nops++] = *s - '0';
		if (!nops) { fprintf(stderr, "usage: prefer_writer_churn [ROUNDS [OPS]], ROUNDS > 0, OPS digits 0-9\n"); return 2; }
	}
	for (int r = 0; r < rounds; r++) {
		pthread_rwlockattr_t a;
		pthread_t th[6];
		pthread_rwlockattr_init(&a);
		pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&lock, &a);
		atomic_store(&stop, 0);
		for (long t = 0; t < 6; t++) pthread_create(&th[t], NULL, thr, (void *)t);
		usleep(1000000);
		atomic_store(&stop, 1);
		for (int t = 0; t < 6; t++) {
			struct timespec dl; clock_gettime(CLOCK_REALTIME, &dl); dl.tv_sec += 3;
			if (pthread_timedjoin_np(th[t], NULL, &dl)) {
				unsigned *w = (unsigned *)&lock;
				fprintf(stderr, "round %d: thread %d stuck in op %d; done %ld; lock words:", r, t, atomic_load(&cur_op[t]), atomic_load(&done));
				for (int i = 0; i < 14; i++) fprintf(stderr, " %08x", w[i]);
				fprintf(stderr, "\nops:"); for (int i = 0; i < 6; i++) fprintf(stderr, " %d", atomic_load(&cur_op[i]));
				fprintf(stderr, "\n");
				pause();
			}
		}
		pthread_rwlock_destroy(&lock);
	}
	printf("ok %d rounds, %ld ops\n", rounds, atomic_load(&done));
	return 0;
}
