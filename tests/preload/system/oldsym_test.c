/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * oldsym_test - a program bound to glibc's pre-2.34 symbol versions
 * (pthread_rwlock_*@GLIBC_2.2.5, as in binaries built before libpthread
 * moved into libc) must be interposed like a new one.
 *
 * usage: oldsym_test EXPECTED_OBJECT   (basename of the .so that must answer)
 * Exit 0 on success, 1 with a message on failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/test_util.h"

#if defined(__x86_64__)
__asm__(".symver pthread_rwlock_init, pthread_rwlock_init@GLIBC_2.2.5");
__asm__(".symver pthread_rwlock_rdlock, pthread_rwlock_rdlock@GLIBC_2.2.5");
__asm__(".symver pthread_rwlock_wrlock, pthread_rwlock_wrlock@GLIBC_2.2.5");
__asm__(".symver pthread_rwlock_unlock, pthread_rwlock_unlock@GLIBC_2.2.5");
__asm__(".symver pthread_rwlock_destroy, pthread_rwlock_destroy@GLIBC_2.2.5");
#endif

static int fail(const char *what)
{
	fprintf(stderr, "oldsym_test: %s\n", what);
	return 1;
}

int main(int argc, char **argv)
{
	int (*volatile unlock_fn)(pthread_rwlock_t *) = pthread_rwlock_unlock;
	const char *check = getenv("BRAVO_CHECK");
	pthread_rwlock_t lock;
	Dl_info info;

	if (argc != 2) {
		fprintf(stderr, "usage: oldsym_test EXPECTED_OBJECT\n");
		return 2;
	}
	if (!dladdr((void *)unlock_fn, &info) || !info.dli_fname)
		return fail("dladdr found no object for pthread_rwlock_unlock");
	if (strcmp(basename((char *)info.dli_fname), argv[1]) != 0) {
		fprintf(stderr, "oldsym_test: pthread_rwlock_unlock@GLIBC_2.2.5 bound to %s, want %s\n",
			info.dli_fname, argv[1]);
		return 1;
	}
	if (pthread_rwlock_init(&lock, NULL) != 0)
		return fail("init failed");
	/*
	 * libbravo's answer to an unlock of a lock nobody holds: 0 and nothing
	 * changed (glibc would corrupt its lock); EPERM in strict mode.
	 */
	if (check && strcmp(check, "1") == 0) {
		if (pthread_rwlock_unlock(&lock) != EPERM)
			return fail("BRAVO_CHECK=1: unlock of an unheld lock did not return EPERM");
	} else if (pthread_rwlock_unlock(&lock) != 0 || pthread_rwlock_trywrlock(&lock) != 0 ||
		   pthread_rwlock_unlock(&lock) != 0) {
		return fail("unlock of an unheld lock did not return 0 and leave the lock free");
	}
	if (pthread_rwlock_rdlock(&lock) != 0)
		return fail("rdlock failed");
	/*
	 * glibc would deadlock here; libbravo reports it, but where glibc's
	 * lock answers for reads (BRAVO-pthread outside strict mode), which
	 * waits as glibc's does: not asked, a wrlock would never return.
	 */
	if (!reads_answered_as_glibc() && pthread_rwlock_wrlock(&lock) != EDEADLK)
		return fail("wrlock while reading did not return EDEADLK");
	if (pthread_rwlock_unlock(&lock) != 0 || pthread_rwlock_destroy(&lock) != 0)
		return fail("unlock/destroy failed");
	printf("oldsym_test: pthread_rwlock_*@GLIBC_2.2.5 answered by %s\n", argv[1]);
	return 0;
}
