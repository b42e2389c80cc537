/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * secure_test - an ordinary pthread program linked directly against one
 * libbravo variant (DT_NEEDED, absolute run path; see Makefile.am), so
 * that libbravo is loaded in a set-user-ID process too, where ld.so
 * ignores LD_PRELOAD with a slash.  tests/preload/system/secure_check.sh makes a
 * set-user-ID root copy and runs it as an unprivileged user.
 *
 * Prints "at_secure=N euid=N ruid=N lib=PATH": whether the kernel marked
 * the process AT_SECURE, and the object pthread_rwlock_rdlock comes from.
 * Takes a few read and write locks; exits 0 if they all succeed.
 *
 * "secure_test become-root": then makes every id root (setuid(0), as a
 * set-user-ID root program may) and runs itself again as "secure_test
 * child", which is root and not AT_SECURE: it prints the same line and
 * "bravo_vars=N", the BRAVO_* variables it was given.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

extern char **environ;

static int bravo_vars(void)
{
	int n = 0;

	for (char **e = environ; e && *e; e++)
		n += strncmp(*e, "BRAVO_", 6) == 0;
	return n;
}

int main(int argc, char **argv)
{
	static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
	int (*rdlock)(pthread_rwlock_t *) = pthread_rwlock_rdlock;
	Dl_info info = { 0 };
	int bad = 0;

	for (int i = 0; i < 100; i++) {
		bad |= pthread_rwlock_rdlock(&lock);
		bad |= pthread_rwlock_unlock(&lock);
	}
	bad |= pthread_rwlock_wrlock(&lock);
	bad |= pthread_rwlock_unlock(&lock);
	if (!dladdr((void *)rdlock, &info) || !info.dli_fname)
		info.dli_fname = "?";
	printf("at_secure=%lu euid=%ld ruid=%ld lib=%s\n", getauxval(AT_SECURE),
	       (long)geteuid(), (long)getuid(), info.dli_fname);
	if (argc > 1 && strcmp(argv[1], "child") == 0)
		printf("bravo_vars=%d\n", bravo_vars());
	if (argc > 1 && strcmp(argv[1], "become-root") == 0) {
		char *child[] = { argv[0], "child", NULL };

		fflush(stdout);
		if (setuid(0) != 0)
			return 1;
		execv("/proc/self/exe", child);
		return 1;
	}
	return bad ? 1 : 0;
}
