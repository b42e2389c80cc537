/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fork_locks.c - fork() while other threads hold and wait for rwlocks.
 *
 * At the fork, other threads of the parent hold one lock for writing, one
 * for reading, and hold a third for reading while a writer and a reader
 * wait on it; the forking thread itself holds one lock for writing and one
 * for reading (taken through BRAVO's fast path where there is one); one
 * lock is free (after heavy use by many threads).  POSIX leaves the state
 * of locks held by threads that do not exist in the child undefined, and
 * says nothing of the forking thread's own; libbravo(7) (NOTES)
 * specifies: the child inherits the locks as they were, locks held by
 * other threads stay held (as with glibc), and the child can use every
 * lock it did not inherit as held.  libbravo keeps the forking thread's
 * list of held locks in the child, and its thread remembers the id it had
 * in the parent (write holds are named in the lock by thread id), so the
 * child also releases the locks the forking thread held (rwlock.c; glibc
 * cannot do that for a write lock: its unlock looks for the writer's
 * thread id, which changed at the fork).
 *
 * Each child runs its checks (with threads of its own), then _exit()s with
 * 0 or 1; a parent waits at most 30 s for it.
 */
#include "torture.h"

#include <sys/wait.h>

enum { HELD_W, HELD_R, WAITED, OWN_W, OWN_R, FREE_L, NLOCKS };

static pthread_rwlock_t locks[NLOCKS];

/* More locks the forking thread holds (more than an implementation may keep inline). */
enum { OWN_MANY = 12 };
static pthread_rwlock_t own_many[OWN_MANY];

struct parent_thread {
	pthread_rwlock_t *lock;
	bool write;
	atomic_int *ready;      /* counts holders that hold, waiters that started */
	atomic_int *release;
	bool waits;             /* a waiter: the lock is held by someone else */
};

static void *parent_thread_main(void *arg)
{
	struct parent_thread *p = arg;

	if (p->waits)
		atomic_fetch_add(p->ready, 1);
	CHECK_RC(p->write ? pthread_rwlock_wrlock(p->lock) : pthread_rwlock_rdlock(p->lock), 0);
	if (!p->waits)
		atomic_fetch_add(p->ready, 1);
	while (!atomic_load(p->release))
		sleep_ms(1);
	CHECK_RC(pthread_rwlock_unlock(p->lock), 0);
	return NULL;
}

static void *warm_reader(void *arg)
{
	pthread_rwlock_t *l = arg;

	for (int i = 0; i < 200; i++) {
		CHECK_RC(pthread_rwlock_rdlock(l), 0);
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	}
	CHECK_RC(pthread_rwlock_wrlock(l), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	for (int i = 0; i < 200; i++) {
		CHECK_RC(pthread_rwlock_rdlock(l), 0);
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	}
	return NULL;
}

/* Wait for child pid (at most 30 s, then kill it); it must exit 0. */
static void expect_child_success(pid_t pid, const char *what)
{
	int status;

	for (int i = 0; i < 30000; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		CHECK(r >= 0, "waitpid: %s", strerror(errno));
		if (r == pid) {
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "the child (%s) failed: %s %d", what,
			      WIFEXITED(status) ? "exit status" : "signal",
			      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			return;
		}
		sleep_ms(1);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	torture_fail(__FILE__, __LINE__, "the child (%s) hung for 30 s and was killed", what);
}

/*
 * Set up the locks as described at the top, fork, run child_checks in the
 * child, then release everything in the parent; every lock must work after.
 */
static void fork_with_locks_busy(void (*child_checks)(void), const char *what)
{
	atomic_int ready = 0, release = 0;
	struct parent_thread p[] = {
		{ &locks[HELD_W], true, &ready, &release, false },
		{ &locks[HELD_R], false, &ready, &release, false },
		{ &locks[WAITED], false, &ready, &release, false },
		{ &locks[WAITED], true, &ready, &release, true },   /* waits for the reader */
		{ &locks[HELD_W], false, &ready, &release, true },  /* waits for the writer */
	};
	pthread_t th[NELEM(p)], warm[4];
	pid_t pid;

	for (int k = 0; k < NLOCKS; k++)
		CHECK_RC(pthread_rwlock_init(&locks[k], NULL), 0);
	/* FREE_L and OWN_R are well used (BRAVO: bias on, readers go fast) */
	for (int i = 0; i < 4; i++)
		warm[i] = spawn(warm_reader, &locks[i % 2 ? FREE_L : OWN_R]);
	for (int i = 0; i < 4; i++)
		join(warm[i]);
	CHECK_RC(pthread_rwlock_wrlock(&locks[OWN_W]), 0);
	CHECK_RC(pthread_rwlock_rdlock(&locks[OWN_R]), 0);
	for (int i = 0; i < OWN_MANY; i++) {
		CHECK_RC(pthread_rwlock_init(&own_many[i], NULL), 0);
		CHECK_RC(i % 2 ? pthread_rwlock_wrlock(&own_many[i]) : pthread_rwlock_rdlock(&own_many[i]), 0);
	}
	for (size_t i = 0; i < 3; i++)
		th[i] = spawn(parent_thread_main, &p[i]);
	CHECK(wait_for(&ready, 3, 10000), "the holders did not get their locks");
	for (size_t i = 3; i < NELEM(p); i++)
		th[i] = spawn(parent_thread_main, &p[i]);
	CHECK(wait_for(&ready, NELEM(p), 10000), "the waiters did not start");
	sleep_ms(10); /* let the waiters block */

	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		child_checks();
		fflush(stdout);
		_exit(0);
	}
	expect_child_success(pid, what);

	CHECK_RC(pthread_rwlock_unlock(&locks[OWN_W]), 0);
	CHECK_RC(pthread_rwlock_unlock(&locks[OWN_R]), 0);
	for (int i = 0; i < OWN_MANY; i++) {
		CHECK_RC(pthread_rwlock_unlock(&own_many[i]), 0);
		CHECK_RC(pthread_rwlock_destroy(&own_many[i]), 0);
	}
	atomic_store(&release, 1);
	for (size_t i = 0; i < NELEM(p); i++)
		join(th[i]);
	for (int k = 0; k < NLOCKS; k++) {
		check_lock_still_works(&locks[k], 4, 100);
		CHECK_RC(pthread_rwlock_destroy(&locks[k]), 0);
	}
}

/* ---- in the child ---- */

static void child_uses_free_and_new_locks(void)
{
	pthread_rwlock_t fresh;
	pthread_rwlock_t *heap = calloc(64, sizeof(*heap));

	check_lock_still_works(&locks[FREE_L], 4, 200);
	CHECK_RC(pthread_rwlock_init(&fresh, NULL), 0);
	check_lock_still_works(&fresh, 4, 200);
	CHECK_RC(pthread_rwlock_destroy(&fresh), 0);
	CHECK(heap != NULL, "calloc failed");
	for (int i = 0; i < 64; i++) {
		CHECK_RC(pthread_rwlock_wrlock(&heap[i]), 0); /* zeroed: no init needed */
		CHECK_RC(pthread_rwlock_unlock(&heap[i]), 0);
		CHECK_RC(pthread_rwlock_rdlock(&heap[i]), 0);
		CHECK_RC(pthread_rwlock_unlock(&heap[i]), 0);
		CHECK_RC(pthread_rwlock_destroy(&heap[i]), 0);
	}
	free(heap);
}

static void child_finds_other_threads_locks_held(void)
{
	struct timespec rt = ts_add_ms(ts_now(CLOCK_REALTIME), 20);
	struct timespec mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), 20);

	CHECK_RC(pthread_rwlock_trywrlock(&locks[HELD_W]), EBUSY);
	CHECK_RC(pthread_rwlock_tryrdlock(&locks[HELD_W]), EBUSY);
	CHECK_RC(pthread_rwlock_timedrdlock(&locks[HELD_W], &rt), ETIMEDOUT);
	CHECK_RC(pthread_rwlock_trywrlock(&locks[HELD_R]), EBUSY);
	CHECK_RC(pthread_rwlock_clockwrlock(&locks[HELD_R], CLOCK_MONOTONIC, &mono), ETIMEDOUT);
	/* read-held by a thread that is not here: readers still get in */
	CHECK_RC(pthread_rwlock_tryrdlock(&locks[HELD_R]), 0);
	CHECK_RC(pthread_rwlock_unlock(&locks[HELD_R]), 0);
	CHECK_RC(pthread_rwlock_trywrlock(&locks[WAITED]), EBUSY);
}

static void child_releases_what_the_forking_thread_held(void)
{
	/* still held as the forking thread held them */
	CHECK_RC(pthread_rwlock_wrlock(&locks[OWN_W]), EDEADLK);
	CHECK_RC(pthread_rwlock_unlock(&locks[OWN_W]), 0);
	CHECK_RC(pthread_rwlock_unlock(&locks[OWN_R]), 0);
	check_lock_still_works(&locks[OWN_W], 4, 200);
	check_lock_still_works(&locks[OWN_R], 4, 200);
	for (int i = 0; i < OWN_MANY; i++) {
		CHECK_RC(pthread_rwlock_trywrlock(&own_many[i]), EBUSY); /* held by the caller */
		CHECK_RC(pthread_rwlock_unlock(&own_many[i]), 0);
		CHECK_RC(pthread_rwlock_trywrlock(&own_many[i]), 0);
		CHECK_RC(pthread_rwlock_unlock(&own_many[i]), 0);
	}
}

static void fork_child_can_use_free_locks_and_new_locks_while_parent_threads_hold_and_wait(void)
{
	for (long i = 0; i < 2 * torture_scale(); i++)
		fork_with_locks_busy(child_uses_free_and_new_locks, "free and new locks");
}

static void fork_child_finds_locks_held_by_other_parent_threads_still_held(void)
{
	for (long i = 0; i < 2 * torture_scale(); i++)
		fork_with_locks_busy(child_finds_other_threads_locks_held, "other threads' locks");
}

static void fork_child_can_release_the_locks_the_forking_thread_held(void)
{
	for (long i = 0; i < 2 * torture_scale(); i++)
		fork_with_locks_busy(child_releases_what_the_forking_thread_held, "forking thread's locks");
}

/* ---- fork in the middle of lock churn ---- */

static pthread_rwlock_t shared_lock = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int churn_stop;

/* Locks made, used and dropped all the time (with and without destroy). */
static void *churn_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	while (!atomic_load(&churn_stop)) {
		pthread_rwlock_t local;
		pthread_rwlock_t *heap = calloc(1, sizeof(*heap));
		unsigned r = next_rand(&seed);

		CHECK(heap != NULL, "calloc failed");
		CHECK_RC(pthread_rwlock_init(&local, NULL), 0);
		CHECK_RC(pthread_rwlock_wrlock(&local), 0);
		CHECK_RC(pthread_rwlock_rdlock(heap), 0);
		CHECK_RC(r % 4 ? pthread_rwlock_rdlock(&shared_lock) : pthread_rwlock_wrlock(&shared_lock), 0);
		if (r % 8 == 0)
			sched_yield(); /* forks happen while we hold all three */
		CHECK_RC(pthread_rwlock_unlock(&shared_lock), 0);
		CHECK_RC(pthread_rwlock_unlock(heap), 0);
		CHECK_RC(pthread_rwlock_unlock(&local), 0);
		CHECK_RC(pthread_rwlock_destroy(&local), 0);
		if (r % 2)
			CHECK_RC(pthread_rwlock_destroy(heap), 0);
		free(heap); /* freed without destroy half the time, as std::shared_mutex does */
	}
	return NULL;
}

static void child_after_churn(void)
{
	pthread_rwlock_t *many = calloc(256, sizeof(*many));

	CHECK(many != NULL, "calloc failed");
	for (int i = 0; i < 256; i++)
		CHECK_RC(pthread_rwlock_init(&many[i], NULL), 0);
	check_lock_still_works(&many[0], 4, 100);
	for (int i = 0; i < 256; i++) {
		CHECK_RC(pthread_rwlock_wrlock(&many[i]), 0);
		CHECK_RC(pthread_rwlock_unlock(&many[i]), 0);
		CHECK_RC(pthread_rwlock_destroy(&many[i]), 0);
	}
	free(many);
}

static void fork_in_the_middle_of_lock_churn_gives_children_working_locks(void)
{
	enum { CHURNERS = 8 };
	pthread_t th[CHURNERS];

	atomic_store(&churn_stop, 0);
	for (int i = 0; i < CHURNERS; i++)
		th[i] = spawn(churn_main, (void *)(uintptr_t)(i + 1));
	for (long i = 0; i < 20 * torture_scale(); i++) {
		pid_t pid = fork();

		CHECK(pid >= 0, "fork: %s", strerror(errno));
		if (pid == 0) {
			child_after_churn();
			_exit(0);
		}
		expect_child_success(pid, "new locks after a fork in the middle of churn");
	}
	atomic_store(&churn_stop, 1);
	for (int i = 0; i < CHURNERS; i++)
		join(th[i]);
	check_lock_still_works(&shared_lock, 4, 100);
}

/* ---- write holds across generations, and a fork that runs no handlers ---- */

/* In a child of a child: the lock the first forking thread write-held is its own. */
static void grandchild_releases_inherited_write_lock(pthread_rwlock_t *l)
{
	struct timespec mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), 20);

	CHECK_RC(pthread_rwlock_wrlock(l), EDEADLK);
	CHECK_RC(pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &mono), EDEADLK);
	CHECK_RC(pthread_rwlock_rdlock(l), EDEADLK);
	CHECK_RC(pthread_rwlock_trywrlock(l), EBUSY);
	CHECK_RC(pthread_rwlock_tryrdlock(l), EBUSY);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	check_lock_still_works(l, 4, 100);
}

static void fork_grandchild_can_release_a_write_lock_held_since_before_the_first_fork(void)
{
	pthread_rwlock_t l, busy;
	pid_t child;

	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	CHECK_RC(pthread_rwlock_init(&busy, NULL), 0);
	/* busy: bias on, so its write lock below is a revocation (the slow path) */
	for (int i = 0; i < 100; i++) {
		CHECK_RC(pthread_rwlock_rdlock(&busy), 0);
		CHECK_RC(pthread_rwlock_unlock(&busy), 0);
	}
	CHECK_RC(pthread_rwlock_wrlock(&l), 0);
	CHECK_RC(pthread_rwlock_wrlock(&busy), 0);
	child = fork();
	CHECK(child >= 0, "fork: %s", strerror(errno));
	if (child == 0) {
		pid_t grandchild;

		/*
		 * A hang (a wrlock waiting for its own caller) must end before
		 * the parent gives up on the child: an orphan would outlive it.
		 */
		alarm(20);
		grandchild = fork();
		CHECK(grandchild >= 0, "fork: %s", strerror(errno));
		if (grandchild == 0) {
			alarm(10);
			grandchild_releases_inherited_write_lock(&l);
			grandchild_releases_inherited_write_lock(&busy);
			fflush(stdout);
			_exit(0);
		}
		expect_child_success(grandchild, "grandchild");
		grandchild_releases_inherited_write_lock(&busy); /* the child's own copy */
		fflush(stdout);
		_exit(0);
	}
	expect_child_success(child, "child that forks");
	CHECK_RC(pthread_rwlock_trywrlock(&l), EBUSY); /* the parent's still held */
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&busy), 0);
	check_lock_still_works(&l, 4, 100);
	check_lock_still_works(&busy, 4, 100);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
	CHECK_RC(pthread_rwlock_destroy(&busy), 0);
}

/*
 * _Fork runs no atfork handlers: a library that caches its thread's id
 * learns nothing of the child's new one.  The child's locks work as under
 * glibc: a write lock taken there is the caller's (EDEADLK, EBUSY) and its
 * unlock releases it.
 */
static void child_of_fork_without_handlers_uses_write_locks(void)
{
	pthread_rwlock_t l;

	CHECK_RC(pthread_rwlock_init(&l, NULL), 0);
	for (int i = 0; i < 3; i++) {
		CHECK_RC(pthread_rwlock_wrlock(&l), 0);
		CHECK_RC(pthread_rwlock_rdlock(&l), EDEADLK);
		CHECK_RC(pthread_rwlock_tryrdlock(&l), EBUSY);
		CHECK_RC(pthread_rwlock_unlock(&l), 0);
		CHECK_RC(pthread_rwlock_rdlock(&l), 0);
		CHECK_RC(pthread_rwlock_unlock(&l), 0);
	}
	CHECK_RC(pthread_rwlock_trywrlock(&l), 0);
	CHECK_RC(pthread_rwlock_unlock(&l), 0);
	check_lock_still_works(&l, 4, 100);
	CHECK_RC(pthread_rwlock_destroy(&l), 0);
}

static void fork_without_handlers_child_locks_and_releases_for_writing(void)
{
	pthread_rwlock_t warm = PTHREAD_RWLOCK_INITIALIZER;
	pid_t pid;

	/* the parent's thread has used write locks: whatever it caches, it has */
	CHECK_RC(pthread_rwlock_wrlock(&warm), 0);
	CHECK_RC(pthread_rwlock_unlock(&warm), 0);
	pid = _Fork();
	CHECK(pid >= 0, "_Fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(20);
		child_of_fork_without_handlers_uses_write_locks();
		fflush(stdout);
		_exit(0);
	}
	expect_child_success(pid, "_Fork child");
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		TORTURE_CHECK(fork_child_can_use_free_locks_and_new_locks_while_parent_threads_hold_and_wait),
		TORTURE_CHECK(fork_child_finds_locks_held_by_other_parent_threads_still_held),
		LIBBRAVO_CHECK(fork_child_can_release_the_locks_the_forking_thread_held),
		TORTURE_CHECK(fork_in_the_middle_of_lock_churn_gives_children_working_locks),
		LIBBRAVO_CHECK(fork_grandchild_can_release_a_write_lock_held_since_before_the_first_fork),
		TORTURE_CHECK(fork_without_handlers_child_locks_and_releases_for_writing),
	};

	return torture_main("fork_locks", "fork() while other threads hold and wait for rwlocks",
			    checks, NELEM(checks), argc, argv);
}
