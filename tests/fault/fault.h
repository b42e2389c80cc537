/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fault.h - helpers of the fault programs (tests/fault/): what production
 * programs do on a bad day, run under every variant and under glibc.
 *
 * The programs use tests/stress/torture.h's runner and guarded data; this
 * adds a watchdog, so that a check that hangs fails by name (the driver's
 * timeout is only the last resort), and a few process helpers.
 */
#ifndef FAULT_H
#define FAULT_H

#include "../stress/torture.h"

#include <sys/wait.h>

/*
 * A check that has not finished after `seconds` fails by name.  Armed by
 * each check (fault_watchdog), disarmed by fault_watchdog(0).  A thread of
 * its own (created once), not alarm(): the checks use signals.
 *
 * A check whose run time depends on the CPU it gets (threads pinned to one
 * CPU, a signal storm, hundreds of thousands of calls) reports its
 * progress (fault_progress): each progress seen pushes the deadline
 * `seconds` further, so the bound is on a stall (a hang), not on the
 * speed of a machine that other work shares (make -j2 check).
 */
static atomic_long fault_watchdog_deadline; /* CLOCK_MONOTONIC seconds, 0: off */
static atomic_long fault_watchdog_seconds;
static atomic_ulong fault_progress_count;
static const char *_Atomic fault_watchdog_what;

/* The current check made progress (async-signal-safe: one atomic add). */
static inline void fault_progress(void)
{
	atomic_fetch_add_explicit(&fault_progress_count, 1, memory_order_relaxed);
}

static void *fault_watchdog_main(void *arg)
{
	unsigned long seen = atomic_load(&fault_progress_count);

	(void)arg;
	for (;;) {
		long d = atomic_load(&fault_watchdog_deadline);
		struct timespec now = ts_now(CLOCK_MONOTONIC);
		unsigned long progress = atomic_load(&fault_progress_count);

		if (d && progress != seen) {
			/* CAS: a disarm (0) or a new check's arming meanwhile wins. */
			atomic_compare_exchange_strong(&fault_watchdog_deadline, &d,
						       now.tv_sec + atomic_load(&fault_watchdog_seconds));
			d = atomic_load(&fault_watchdog_deadline);
		}
		seen = progress;
		if (d && now.tv_sec >= d) {
			const char *what = atomic_load(&fault_watchdog_what);

			fflush(stdout);
			fprintf(stderr, "FAIL %s: no progress within its bound (%s): a hang\n",
				torture_current, what ? what : "?");
			fflush(stderr);
			_exit(1);
		}
		sleep_ms(50);
	}
	return NULL;
}

static void fault_watchdog_start(void)
{
	pthread_t th;
	sigset_t all, old;

	/* The watchdog takes no signal meant for the checks' threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	CHECK(pthread_create(&th, NULL, fault_watchdog_main, NULL) == 0, "watchdog thread");
	pthread_detach(th);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * Arm the watchdog for the current check: seconds from now; 0 disarms it.
 * A forked child has no watchdog thread (threads do not cross fork): its
 * first arming starts one of its own.
 */
static inline void fault_watchdog(long seconds, const char *what)
{
	static pid_t started_in;

	if (seconds == 0) {
		atomic_store(&fault_watchdog_deadline, 0);
		return;
	}
	atomic_store(&fault_watchdog_what, what);
	atomic_store(&fault_watchdog_seconds, seconds);
	atomic_store(&fault_watchdog_deadline, ts_now(CLOCK_MONOTONIC).tv_sec + seconds);
	if (started_in != getpid()) {
		started_in = getpid();
		fault_watchdog_start();
	}
}

/*
 * Run fn in a child process (fork); the child's exit status 0 is a pass.
 * The child inherits the watchdog's deadline but not its thread: it arms
 * its own.  Waits at most `seconds`, then kills the child and fails.
 */
static inline int fault_in_child(void (*fn)(void *), void *arg, long seconds)
{
	struct timespec start = ts_now(CLOCK_MONOTONIC);
	pid_t pid = fork();
	int status;

	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		CHECK(r >= 0, "waitpid: %s", strerror(errno));
		if (r == pid)
			break;
		if (ms_since(start) > seconds * 1000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			CHECK(false, "the child process did not finish within %ld s: a hang", seconds);
		}
		sleep_ms(5);
	}
	return status;
}

#endif
