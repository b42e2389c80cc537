/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * exit_paths.c - the ways out of a thread and out of a process, reached
 * from where a program may stand when it leaves.
 *
 *   - exit() from a signal handler that interrupted malloc: glibc's own
 *     exit path neither allocates nor takes malloc's arena lock, so the
 *     process leaves; an rwlock implementation whose exit-time code
 *     (destructors, reports) allocates or frees waits for ever for the
 *     arena lock its own thread holds.  With the profile and statistics
 *     off nothing of libbravo may allocate or lock at exit; with them on
 *     (BRAVO_PROFILE, BRAVO_STATS, which the driver may set), the report
 *     must not need malloc either.  Each try runs in a child process that
 *     mallocs and frees (blocks big enough for the arena lock) until a
 *     signal after a random delay makes its handler call exit(0): the
 *     child must leave with status 0.
 *   - a thread-specific-data destructor that takes rwlocks in every round,
 *     the last one (PTHREAD_DESTRUCTOR_ITERATIONS) included: the locks
 *     work, and a per-thread record an implementation keeps (libbravo's
 *     statistics block, with BRAVO_STATS=1) must not outlive the thread:
 *     many such threads run one after another, so that each reuses the
 *     stack and TLS of the one before.  Then the process leaves through
 *     exit() (return from main), with a watchdog armed: a report at exit
 *     that never ends fails as "process_exit_..." (run the program with
 *     BRAVO_STATS=1 for the statistics' report).
 */
#include "fault.h"

/* ==== exit() from a handler that interrupted malloc ==== */

enum { EXIT_CHILDREN = 20 };

static pthread_t exit_victim;
static unsigned exit_delay_us;

static void exit_handler(int sig)
{
	(void)sig;
	exit(0); /* not async-signal-safe, but glibc's exit path takes no arena lock */
}

static void *exit_signaller_main(void *arg)
{
	struct timespec t = { 0, (long)exit_delay_us * 1000L };

	(void)arg;
	nanosleep(&t, NULL);
	pthread_kill(exit_victim, SIGUSR1);
	return NULL;
}

/*
 * The child: rwlocks used first (libbravo's state exists), then malloc and
 * free until the signal; a child whose signal never came fails with 3.
 */
static void malloc_until_exit_child(void *arg)
{
	enum { SLOTS = 16 };
	pthread_rwlock_t locks[3];
	void *p[SLOTS] = { 0 };
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
	struct sigaction sa;
	struct timespec start;

	for (int i = 0; i < 3; i++) {
		CHECK_RC(pthread_rwlock_init(&locks[i], NULL), 0);
		for (int k = 0; k < 3; k++) {
			CHECK_RC(pthread_rwlock_rdlock(&locks[i]), 0);
			CHECK_RC(pthread_rwlock_unlock(&locks[i]), 0);
		}
		CHECK_RC(pthread_rwlock_wrlock(&locks[i]), 0);
		CHECK_RC(pthread_rwlock_unlock(&locks[i]), 0);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = exit_handler;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
	exit_victim = pthread_self();
	exit_delay_us = 200 + next_rand(&seed) % 1500;
	spawn(exit_signaller_main, NULL); /* two threads: malloc takes its arena lock */
	start = ts_now(CLOCK_MONOTONIC);
	for (unsigned n = 0;; n++) {
		unsigned r = next_rand(&seed);
		unsigned k = r % SLOTS;

		/* beyond the per-thread cache (1 KiB), below the mmap threshold */
		free(p[k]);
		p[k] = malloc(1100 + (r >> 8) % 60000);
		if (n % 4096 == 0 && ms_since(start) > 3000)
			_exit(3);
	}
}

static void exit_from_a_handler_that_interrupted_malloc_leaves_the_process(void)
{
	fault_watchdog(60, "exit() from handlers that interrupted malloc");
	for (uintptr_t i = 0; i < EXIT_CHILDREN; i++) {
		int status = fault_in_child(malloc_until_exit_child, (void *)(i + 1), 5);

		CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 3),
		      "child %d: the signal never came", (int)i);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child %d, which called exit(0) from a handler that interrupted malloc, %s %d", (int)i,
		      WIFEXITED(status) ? "exited with status" : "was killed by signal",
		      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	fault_watchdog(0, NULL);
}

/* ==== thread-specific data destructors that lock, in every round ==== */

enum { TSD_THREADS = 64 };

static pthread_key_t tsd_key;
static pthread_rwlock_t tsd_locks[2];
static struct guarded tsd_g[2];
static atomic_int tsd_rounds;     /* destructor calls, all threads */
static atomic_int tsd_last_rounds; /* calls in the last round */
static atomic_int tsd_bad_rc, tsd_bad_line;

static void tsd_expect(int rc, int line)
{
	if (rc != 0) {
		atomic_store(&tsd_bad_rc, rc);
		atomic_store(&tsd_bad_line, line);
	}
}

static void tsd_take_locks(void)
{
	for (int i = 0; i < 2; i++) {
		tsd_expect(pthread_rwlock_rdlock(&tsd_locks[i]), __LINE__);
		guarded_read_enter(&tsd_g[i]);
		guarded_read_check(&tsd_g[i]);
		guarded_read_leave(&tsd_g[i]);
		tsd_expect(pthread_rwlock_unlock(&tsd_locks[i]), __LINE__);
		tsd_expect(pthread_rwlock_wrlock(&tsd_locks[i]), __LINE__);
		guarded_write_enter(&tsd_g[i]);
		guarded_write_update(&tsd_g[i], false);
		guarded_write_leave(&tsd_g[i]);
		tsd_expect(pthread_rwlock_unlock(&tsd_locks[i]), __LINE__);
	}
}

/* The value is the round (1 ..): set again until the last round. */
static void tsd_destructor(void *value)
{
	uintptr_t round = (uintptr_t)value;

	tsd_take_locks();
	atomic_fetch_add(&tsd_rounds, 1);
	if (round < PTHREAD_DESTRUCTOR_ITERATIONS)
		tsd_expect(pthread_setspecific(tsd_key, (void *)(round + 1)), __LINE__);
	else
		atomic_fetch_add(&tsd_last_rounds, 1);
	tsd_take_locks(); /* after setspecific too: the last thing the thread does */
}

static void *tsd_thread_main(void *arg)
{
	(void)arg;
	tsd_take_locks();
	tsd_expect(pthread_setspecific(tsd_key, (void *)(uintptr_t)1), __LINE__);
	return NULL;
}

static void thread_specific_data_destructors_that_lock_in_every_round_leave_the_locks_working(void)
{
	fault_watchdog(10, "threads whose destructors lock");
	CHECK_RC(pthread_key_create(&tsd_key, tsd_destructor), 0);
	for (int i = 0; i < 2; i++)
		CHECK_RC(pthread_rwlock_init(&tsd_locks[i], NULL), 0);
	for (int t = 0; t < TSD_THREADS; t++) {
		join(spawn(tsd_thread_main, NULL)); /* one after another: stacks and TLS reused */
		CHECK(atomic_load(&tsd_bad_line) == 0, "a lock call of a thread-specific data destructor "
		      "(line %d) returned %s", atomic_load(&tsd_bad_line), errname(atomic_load(&tsd_bad_rc)));
	}
	CHECK(atomic_load(&tsd_rounds) == TSD_THREADS * PTHREAD_DESTRUCTOR_ITERATIONS &&
	      atomic_load(&tsd_last_rounds) == TSD_THREADS,
	      "%d destructor calls (%d in the last round), expected %d (%d)", atomic_load(&tsd_rounds),
	      atomic_load(&tsd_last_rounds), TSD_THREADS * PTHREAD_DESTRUCTOR_ITERATIONS, TSD_THREADS);
	for (int i = 0; i < 2; i++)
		check_lock_still_works(&tsd_locks[i], 4, 100);
	/* the key stays: the process leaves with it (and the locks) in place */
	fault_watchdog(0, NULL);
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		/* first: the children must not inherit what the next check leaves behind */
		TORTURE_CHECK(exit_from_a_handler_that_interrupted_malloc_leaves_the_process),
		TORTURE_CHECK(thread_specific_data_destructors_that_lock_in_every_round_leave_the_locks_working),
	};
	int rc = torture_main("exit_paths", "exit from a handler, and destructors that lock at thread exit",
			      checks, NELEM(checks), argc, argv);

	if (rc != 0)
		return rc;
	/*
	 * The process leaves through exit(): whatever runs at exit (reports
	 * included) must end.  The watchdog's thread outlives main.
	 */
	torture_current = "process_exit_after_threads_whose_destructors_locked_finishes";
	fault_watchdog(10, "exit() after the checks");
	return 0;
}
