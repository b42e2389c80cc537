/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * leak_test - run under valgrind: 100,000 heap locks created, used and
 * destroyed, and threads whose held-lock lists outgrow their inline space,
 * must lose nothing, and keep no more than a bound per lock address
 * (leak_check.sh).  An ordinary pthread program; it prints how many lock
 * addresses it used at most.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../lib/test_util.h"

#define NLOCKS 100000
#define HELD_AT_ONCE 40
#define NTHREADS 8

static int check(int r, const char *what)
{
	if (r != 0) {
		fprintf(stderr, "leak_test: %s returned %d\n", what, r);
		exit(1);
	}
	return r;
}

static void *hold_many(void *arg)
{
	pthread_rwlock_t *locks = arg;

	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < HELD_AT_ONCE; i++)
			check(i % 2 ? pthread_rwlock_rdlock(&locks[i]) : pthread_rwlock_wrlock(&locks[i]),
			      "lock");
		for (int i = HELD_AT_ONCE; i-- > 0;)
			check(pthread_rwlock_unlock(&locks[i]), "unlock");
	}
	return NULL;
}

int main(void)
{
	static pthread_rwlock_t shared[NTHREADS][HELD_AT_ONCE];
	pthread_t t[NTHREADS];

	rwlock_lib_require("leak_test"); /* which library answered (EXPECT_RWLOCK_LIB) */

	for (int i = 0; i < NLOCKS; i++) {
		pthread_rwlock_t *l = malloc(sizeof(*l));

		check(pthread_rwlock_init(l, NULL), "init");
		check(pthread_rwlock_rdlock(l), "rdlock");
		check(pthread_rwlock_unlock(l), "unlock");
		check(pthread_rwlock_wrlock(l), "wrlock");
		check(pthread_rwlock_unlock(l), "unlock");
		check(pthread_rwlock_destroy(l), "destroy");
		free(l);
	}
	for (int i = 0; i < NTHREADS; i++)
		for (int j = 0; j < HELD_AT_ONCE; j++)
			check(pthread_rwlock_init(&shared[i][j], NULL), "init");
	for (int i = 0; i < NTHREADS; i++)
		check(pthread_create(&t[i], NULL, hold_many, shared[i]), "pthread_create");
	for (int i = 0; i < NTHREADS; i++)
		check(pthread_join(t[i], NULL), "pthread_join");
	printf("leak_test: done, %d lock addresses\n", NLOCKS + NTHREADS * HELD_AT_ONCE);
	return 0;
}
