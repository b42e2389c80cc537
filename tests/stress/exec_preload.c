/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exec_preload.c - a program that re-executes itself, by fork+exec and by
 * a plain exec while other threads hold and wait for a lock.
 *
 *   exec_preload                 stage "first": use locks; fork a child
 *                                that execs "--stage=child" and wait for
 *                                it; then, while one thread holds a lock
 *                                and another waits for it, exec
 *                                "--stage=final" in place
 *   exec_preload --stage=child   use locks, exit
 *   exec_preload --stage=final   use locks, exit
 *
 * Every stage runs a short exclusion run (4 threads) on a new lock and
 * prints one line
 *
 *   exec_preload: stage=NAME pid=PID rwlock_from=OBJECT ok
 *
 * where OBJECT is the file that defines the pthread_rwlock_wrlock this
 * program calls.  The environment (LD_PRELOAD included) is inherited by
 * both execs; torture-check runs it with BRAVO_VERBOSE=1 and checks that
 * all three images ran under the same variant: three stage lines naming
 * it, and three "libbravo: variant=NAME" start-up lines on stderr (none
 * without preload).  Exit status 0 when every stage passed.
 */
#include "torture.h"

#include <dlfcn.h>
#include <libgen.h>
#include <sys/wait.h>

static const char *rwlock_provider(void)
{
	Dl_info info;
	/* the address this program's calls go to (through its GOT) */
	int (*fn)(pthread_rwlock_t *) = pthread_rwlock_wrlock;

	if (!dladdr((void *)fn, &info) || !info.dli_fname)
		return "unknown";
	return basename((char *)info.dli_fname);
}

static void stage_work(const char *stage)
{
	pthread_rwlock_t l;

	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	check_lock_still_works(&l, 4, 200 * (int)torture_scale());
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
	printf("exec_preload: stage=%s pid=%d rwlock_from=%s ok\n", stage, (int)getpid(),
	       rwlock_provider());
	fflush(stdout);
}

static void exec_self(const char *stage_arg)
{
	char *argv[] = { "exec_preload", (char *)stage_arg, NULL };

	execv("/proc/self/exe", argv);
	torture_fail(__FILE__, __LINE__, "execv /proc/self/exe: %s", strerror(errno));
}

static pthread_rwlock_t busy = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int busy_state;

static void *busy_holder(void *arg)
{
	(void)arg;
	CHECK_RC(pthread_rwlock_rdlock(&busy), 0);
	atomic_store(&busy_state, 1);
	for (;;)
		pause(); /* until the exec ends the process image */
	return NULL;
}

static void *busy_waiter(void *arg)
{
	(void)arg;
	atomic_store(&busy_state, 2);
	pthread_rwlock_wrlock(&busy); /* blocks until the exec */
	return NULL;
}

static void stage_first(void)
{
	pid_t pid;
	int status;

	torture_current = "stage first";
	stage_work("first");
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0)
		exec_self("--stage=child");
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the fork+exec child failed (status %#x)",
	      status);
	spawn(busy_holder, NULL);
	CHECK(wait_for(&busy_state, 1, 10000), "the holder did not take the lock");
	spawn(busy_waiter, NULL);
	CHECK(wait_for(&busy_state, 2, 10000), "the waiter did not start");
	sleep_ms(10);
	exec_self("--stage=final");
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	torture_scale();
	if (argc == 1) {
		stage_first();
	} else if (argc == 2 && strcmp(argv[1], "--stage=child") == 0) {
		torture_current = "stage child";
		stage_work("child");
	} else if (argc == 2 && strcmp(argv[1], "--stage=final") == 0) {
		torture_current = "stage final";
		stage_work("final");
	} else if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		printf("usage: exec_preload [--stage=child|--stage=final]\n"
		       "Re-executes itself (fork+exec, then exec in place); each stage uses rwlocks\n"
		       "and prints the object that defines pthread_rwlock_wrlock.\n");
	} else {
		fprintf(stderr, "usage: exec_preload [--help] [--stage=child|--stage=final]\n");
		return 2;
	}
	return 0;
}
