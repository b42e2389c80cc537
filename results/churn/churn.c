/* SPDX-License-Identifier: BSD-2-Clause */
/* churn.c - lock lives: 1000 heap rwlocks made, read, written, read and freed, repeated (argv[1] batches). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv)
{
	int batches = argc > 1 ? atoi(argv[1]) : 1000, batch = 1000;
	pthread_rwlock_t **v = malloc(sizeof(*v) * batch);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int k = 0; k < batches; k++) {
		for (int i = 0; i < batch; i++) { v[i] = malloc(sizeof(pthread_rwlock_t)); pthread_rwlock_init(v[i], NULL); }
		for (int i = 0; i < batch; i++) {
			pthread_rwlock_rdlock(v[i]); pthread_rwlock_unlock(v[i]);
			pthread_rwlock_wrlock(v[i]); pthread_rwlock_unlock(v[i]);
			if (pthread_rwlock_tryrdlock(v[i])) abort();
			pthread_rwlock_unlock(v[i]);
		}
		for (int i = 0; i < batch; i++) { pthread_rwlock_destroy(v[i]); free(v[i]); }
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f ns per lock life\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / ((double)batches * batch));
	return 0;
}
