/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fork_states.c - fork() while a lock is in each of the states a lock call
 * can leave it in, and threads that exit holding a lock.
 *
 * tests/stress/fork_locks.c forks while other threads hold locks and wait
 * for them (after a fixed sleep), and checks the child with try-locks.
 * This adds the states it does not reach on purpose, each made sure of
 * before the fork (task_state: the waiter sleeps in the kernel):
 *  - a parent thread blocked in wrlock, waiting for a reader to leave;
 *  - a parent thread blocked in rdlock, and another in wrlock, behind a
 *    writer;
 *  - BRAVO's revocation in progress: readers hold the lock through the
 *    fast path (the forking thread among them, on another CPU than the
 *    other reader: they would share a slot of the table otherwise) and a
 *    writer is blocked in wrlock, waiting for them to leave (it polls,
 *    sleeping).
 * In the child, the locks held by parent threads stay held (trywrlock
 * EBUSY, the timed calls ETIMEDOUT; a new reader beside a waiting writer
 * gets what it got in the parent, see below), the locks the
 * forking thread held for reading (with nobody waiting for them) can be
 * released and then taken for writing, free locks and new locks work, and
 * nothing hangs (each child has an alarm, the parent a bound).  In the
 * parent, the waiters then get their locks.
 *
 * And threads that exit holding a lock: one that took a read lock through
 * the fast path, one that took a write lock.  As under glibc the lock
 * stays read-held (trywrlock EBUSY, timedwrlock ETIMEDOUT, readers get in)
 * or write-held (every call EBUSY or ETIMEDOUT), in the process and in a
 * child forked afterwards.
 */
#include "fault.h"

#include <sys/prctl.h>

/* ---- fairness: a new reader while readers hold the lock and a writer waits ---- */

/*
 * glibc's default kind prefers readers: the new reader gets in.  The
 * variants differ (doc/compatibility.md: the
 * BA-based ones are phase-fair, cohort-rw writer-preferring, BRAVO's fast
 * path lets a reader in while bias is still on), so the child is held to
 * what another thread of the parent got just before the fork: the child
 * inherits the lock as it was.  Under glibc that must be 0.
 */
static int reader_beside_writer_rc = -1;

static void *tryrdlock_main(void *arg)
{
	int rc = pthread_rwlock_tryrdlock(arg);

	if (rc == 0)
		CHECK_RC(pthread_rwlock_unlock(arg), 0);
	return (void *)(intptr_t)rc;
}

/* Before the fork: what a new reader (another thread) gets now. */
static void probe_reader_beside_writer(pthread_rwlock_t *l)
{
	reader_beside_writer_rc = (int)(intptr_t)join(spawn(tryrdlock_main, l));
	CHECK(reader_beside_writer_rc == 0 || reader_beside_writer_rc == EBUSY,
	      "tryrdlock beside a waiting writer returned %s", errname(reader_beside_writer_rc));
	if (under_glibc())
		CHECK_RC(reader_beside_writer_rc, 0); /* the default kind prefers readers */
}

/* ---- CPUs ---- */

/*
 * BRAVO's visible readers table has a row per CPU and a column per lock:
 * two fast-path readers of one lock on the same CPU share a slot, so the
 * second takes the slow path.  A check that wants several fast-path
 * readers of one lock puts them on different CPUs.
 */
static int allowed_cpus(int *cpu, int max)
{
	cpu_set_t set;
	int n = 0;

	CHECK(sched_getaffinity(0, sizeof(set), &set) == 0, "sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpu[n++] = c;
	return n;
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_RC(pthread_setaffinity_np(pthread_self(), sizeof(set), &set), 0);
}

/* ---- threads that hold a lock, or wait for one ---- */

enum mode { READ, WRITE };

struct actor {
	pthread_rwlock_t *lock;
	enum mode mode;
	bool warm;              /* read pairs first: BRAVO's readers then go fast */
	bool exits_holding;     /* return without unlocking */
	int cpu;                /* run on this CPU only; -1: anywhere */
	atomic_int tid;
	atomic_int rc;          /* -1 until the lock call returned */
	atomic_int release;
	pthread_t th;
};

static void *actor_main(void *arg)
{
	struct actor *a = arg;
	int rc;

	atomic_store(&a->tid, gettid());
	if (a->cpu >= 0)
		pin_to(a->cpu);
	if (a->warm) {
		for (int i = 0; i < 8; i++) {
			CHECK_RC(pthread_rwlock_rdlock(a->lock), 0);
			CHECK_RC(pthread_rwlock_unlock(a->lock), 0);
		}
	}
	rc = a->mode == READ ? pthread_rwlock_rdlock(a->lock) : pthread_rwlock_wrlock(a->lock);
	atomic_store(&a->rc, rc);
	if (a->exits_holding)
		return NULL;
	while (!atomic_load(&a->release))
		sleep_ms(1);
	if (rc == 0)
		CHECK_RC(pthread_rwlock_unlock(a->lock), 0);
	return NULL;
}

static void actor_spawn(struct actor *a, pthread_rwlock_t *l, enum mode mode, bool warm, int cpu)
{
	*a = (struct actor){ .lock = l, .mode = mode, .warm = warm, .cpu = cpu, .rc = -1 };
	a->th = spawn(actor_main, a);
}

/* A thread that holds l (its lock call returned 0). */
static void holder_start(struct actor *a, pthread_rwlock_t *l, enum mode mode, bool warm, int cpu)
{
	actor_spawn(a, l, mode, warm, cpu);
	for (int i = 0; atomic_load(&a->rc) == -1; i++) {
		CHECK(i < 10000, "a holder did not get its lock");
		sleep_ms(1);
	}
	CHECK(atomic_load(&a->rc) == 0, "a holder's %s returned %s", a->mode == READ ? "rdlock" : "wrlock",
	      errname(atomic_load(&a->rc)));
}

/*
 * A thread blocked in its lock call: seen asleep in the kernel three
 * times in a row (or still not through after 1 s, for a waiter that spins
 * or yields), and still not returned.
 */
static void waiter_start(struct actor *a, pthread_rwlock_t *l, enum mode mode)
{
	struct timespec start;
	int asleep = 0;

	actor_spawn(a, l, mode, false, -1);
	while (atomic_load(&a->tid) == 0)
		sleep_ms(1);
	start = ts_now(CLOCK_MONOTONIC);
	while (asleep < 3 && ms_since(start) < 1000) {
		char s = task_state(atomic_load(&a->tid));

		CHECK(atomic_load(&a->rc) == -1, "a %s returned %s on a lock that should have kept it waiting",
		      mode == READ ? "rdlock" : "wrlock", errname(atomic_load(&a->rc)));
		asleep = s == 'S' || s == 'D' ? asleep + 1 : 0;
		sleep_ms(2);
	}
	CHECK(atomic_load(&a->rc) == -1, "a %s returned %s on a lock that should have kept it waiting",
	      mode == READ ? "rdlock" : "wrlock", errname(atomic_load(&a->rc)));
}

/* Let the thread go: it unlocks what it got (a waiter, as soon as it gets it). */
static void actor_release(struct actor *a)
{
	atomic_store(&a->release, 1);
}

/* Join it; its lock call's result. */
static int actor_join(struct actor *a)
{
	join(a->th);
	return atomic_load(&a->rc);
}

/* ---- the child's checks ---- */

static int timed_wr(pthread_rwlock_t *l, long ms)
{
	struct timespec mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), ms);

	return pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &mono);
}

static int timed_rd(pthread_rwlock_t *l, long ms)
{
	struct timespec rt = ts_add_ms(ts_now(CLOCK_REALTIME), ms);

	return pthread_rwlock_timedrdlock(l, &rt);
}

static int timedwr_realtime(pthread_rwlock_t *l, long ms)
{
	struct timespec rt = ts_add_ms(ts_now(CLOCK_REALTIME), ms);

	return pthread_rwlock_timedwrlock(l, &rt);
}

/* Held for reading by threads not in this process, a writer waiting (not here either). */
static void read_held_with_a_writer_waiting(pthread_rwlock_t *l)
{
	bool pass = reader_beside_writer_rc == 0;
	int rc;

	CHECK_RC(pthread_rwlock_trywrlock(l), EBUSY);
	CHECK_RC(timed_wr(l, 20), ETIMEDOUT);
	CHECK_RC(timedwr_realtime(l, 20), ETIMEDOUT);
	rc = pthread_rwlock_tryrdlock(l);
	CHECK(rc == (pass ? 0 : EBUSY), "tryrdlock beside the waiting writer returned %s, expected %s "
	      "(what it returned in the parent before the fork)", errname(rc), pass ? "0" : "EBUSY");
	if (rc == 0)
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	rc = timed_rd(l, 20);
	CHECK(rc == (pass ? 0 : ETIMEDOUT), "timedrdlock beside the waiting writer returned %s, expected %s "
	      "(tryrdlock returned %s in the parent before the fork)", errname(rc), pass ? "0" : "ETIMEDOUT",
	      errname(reader_beside_writer_rc));
	if (rc == 0)
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	CHECK_RC(pthread_rwlock_trywrlock(l), EBUSY);
}

/* Held for writing by a thread not in this process. */
static void write_held(pthread_rwlock_t *l)
{
	CHECK_RC(pthread_rwlock_trywrlock(l), EBUSY);
	CHECK_RC(pthread_rwlock_tryrdlock(l), EBUSY);
	CHECK_RC(timed_rd(l, 20), ETIMEDOUT);
	CHECK_RC(timed_wr(l, 20), ETIMEDOUT);
	CHECK_RC(timedwr_realtime(l, 20), ETIMEDOUT);
	CHECK_RC(pthread_rwlock_trywrlock(l), EBUSY);
}

/* Held for reading by a thread not in this process; nobody waits. */
static void read_held(pthread_rwlock_t *l)
{
	CHECK_RC(pthread_rwlock_trywrlock(l), EBUSY);
	CHECK_RC(timed_wr(l, 20), ETIMEDOUT);
	CHECK_RC(timedwr_realtime(l, 20), ETIMEDOUT);
	CHECK_RC(pthread_rwlock_tryrdlock(l), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	CHECK_RC(timed_rd(l, 20), 0);
	CHECK_RC(pthread_rwlock_unlock(l), 0);
	CHECK_RC(pthread_rwlock_trywrlock(l), EBUSY);
}

/* ---- fork with the locks in a state ---- */

static pthread_rwlock_t busy_lock;  /* in the state under test */
static pthread_rwlock_t own_read;   /* read-held by the forking thread (fast path), nobody waits */
static pthread_rwlock_t free_lock;  /* well used, free */

static void warm(pthread_rwlock_t *l)
{
	for (int i = 0; i < 8; i++) {
		CHECK_RC(pthread_rwlock_rdlock(l), 0);
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	}
}

static void locks_setup(void)
{
	CHECK_RC(pthread_rwlock_init(&busy_lock, NULL), 0);
	CHECK_RC(pthread_rwlock_init(&own_read, NULL), 0);
	CHECK_RC(pthread_rwlock_init(&free_lock, NULL), 0);
	check_lock_still_works(&free_lock, 4, 50);
	warm(&free_lock);
	warm(&own_read);
	CHECK_RC(pthread_rwlock_rdlock(&own_read), 0);
}

/* What every child checks besides the lock in the state under test. */
static void child_own_free_and_new_locks_work(void)
{
	pthread_rwlock_t fresh;
	pthread_rwlock_t *zeroed = calloc(1, sizeof(*zeroed));

	CHECK_RC(pthread_rwlock_unlock(&own_read), 0);
	CHECK_RC(pthread_rwlock_trywrlock(&own_read), 0);
	CHECK_RC(pthread_rwlock_unlock(&own_read), 0);
	check_lock_still_works(&own_read, 4, 100);
	check_lock_still_works(&free_lock, 4, 100);
	CHECK_RC(pthread_rwlock_init(&fresh, NULL), 0);
	check_lock_still_works(&fresh, 4, 100);
	CHECK_RC(pthread_rwlock_destroy(&fresh), 0);
	CHECK(zeroed != NULL, "calloc failed");
	check_lock_still_works(zeroed, 4, 100);
	CHECK_RC(pthread_rwlock_destroy(zeroed), 0);
	free(zeroed);
}

/* Fork; the child runs in_child then the common checks; the parent waits for it. */
static void fork_and_check_child(void (*in_child)(void), const char *what)
{
	struct timespec start;
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		cpu_set_t all;

		alarm(10); /* a hang in the child kills it (SIGALRM) */
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* and so does a parent that failed */
		CPU_ZERO(&all);
		for (int c = 0; c < CPU_SETSIZE; c++)
			CPU_SET(c, &all);
		pthread_setaffinity_np(pthread_self(), sizeof(all), &all); /* wherever allowed */
		in_child();
		child_own_free_and_new_locks_work();
		fflush(stdout);
		_exit(0);
	}
	start = ts_now(CLOCK_MONOTONIC);
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		CHECK(r >= 0, "waitpid: %s", strerror(errno));
		if (r == pid)
			break;
		if (ms_since(start) > 15000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			CHECK(false, "the child (%s) did not finish within 15 s: a hang", what);
		}
		sleep_ms(1);
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child (%s) failed: %s %d%s", what,
	      WIFEXITED(status) ? "exit status" : "signal",
	      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
	      !WIFEXITED(status) && WTERMSIG(status) == SIGALRM ? " (a hang)" : "");
}

/* The parent, after the child: its own locks, then everything works. */
static void parent_after(void)
{
	CHECK_RC(pthread_rwlock_unlock(&own_read), 0);
	check_lock_still_works(&busy_lock, 4, 100);
	check_lock_still_works(&own_read, 4, 50);
	check_lock_still_works(&free_lock, 4, 50);
	CHECK_RC(pthread_rwlock_destroy(&busy_lock), 0);
	CHECK_RC(pthread_rwlock_destroy(&own_read), 0);
	CHECK_RC(pthread_rwlock_destroy(&free_lock), 0);
}

static void child_finds_read_held_with_a_writer_waiting(void)
{
	read_held_with_a_writer_waiting(&busy_lock);
}

/*
 * A parent thread read-holds the lock (its first read: BRAVO's slow path)
 * and another is blocked in wrlock waiting for it to leave.
 */
static void fork_while_a_parent_thread_is_blocked_in_wrlock_waiting_for_a_reader(void)
{
	struct actor reader, writer;

	fault_watchdog(20, "fork while a writer waits for a reader");
	for (long round = 0; round < 2 * torture_scale(); round++) {
		locks_setup();
		holder_start(&reader, &busy_lock, READ, false, -1);
		waiter_start(&writer, &busy_lock, WRITE);
		probe_reader_beside_writer(&busy_lock);
		fork_and_check_child(child_finds_read_held_with_a_writer_waiting, "writer waiting for a reader");
		CHECK(atomic_load(&writer.rc) == -1, "the writer got the lock while the reader held it");
		actor_release(&reader);
		actor_release(&writer);
		CHECK_RC(actor_join(&reader), 0);
		CHECK_RC(actor_join(&writer), 0);
		parent_after();
	}
	fault_watchdog(0, NULL);
}

static void child_finds_write_held(void)
{
	write_held(&busy_lock);
}

/* A parent thread write-holds the lock; a reader and a writer are blocked behind it. */
static void fork_while_parent_threads_are_blocked_in_rdlock_and_wrlock_behind_a_writer(void)
{
	struct actor holder, reader, writer;

	fault_watchdog(20, "fork while a reader and a writer wait for a writer");
	for (long round = 0; round < 2 * torture_scale(); round++) {
		locks_setup();
		warm(&busy_lock);
		holder_start(&holder, &busy_lock, WRITE, false, -1);
		waiter_start(&reader, &busy_lock, READ);
		waiter_start(&writer, &busy_lock, WRITE);
		fork_and_check_child(child_finds_write_held, "reader and writer waiting for a writer");
		CHECK(atomic_load(&reader.rc) == -1 && atomic_load(&writer.rc) == -1,
		      "a waiter got the lock while the writer held it");
		actor_release(&holder);
		actor_release(&reader);
		actor_release(&writer);
		CHECK_RC(actor_join(&holder), 0);
		CHECK_RC(actor_join(&reader), 0);
		CHECK_RC(actor_join(&writer), 0);
		parent_after();
	}
	fault_watchdog(0, NULL);
}

/* The forking thread read the lock too (fast path): it releases its hold. */
static void child_releases_its_fast_hold_beside_a_revoking_writer(void)
{
	CHECK_RC(pthread_rwlock_unlock(&busy_lock), 0);
	read_held_with_a_writer_waiting(&busy_lock);
}

/*
 * BRAVO's revocation in progress: the lock is well used (bias on), the
 * forking thread and another parent thread read it through the fast path
 * (on two CPUs, see allowed_cpus), and a writer is blocked in wrlock
 * waiting for them to leave, polling the table.  (Under the other locks:
 * a writer waiting for two readers.)
 */
static void fork_while_a_writer_waits_for_fast_path_readers_to_leave(void)
{
	struct actor reader, writer;
	cpu_set_t saved;
	int cpu[2], ncpu = allowed_cpus(cpu, 2);

	fault_watchdog(20, "fork while a writer revokes BRAVO's bias");
	CHECK_RC(pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
	for (long round = 0; round < 2 * torture_scale(); round++) {
		locks_setup();
		pin_to(cpu[0]);
		warm(&busy_lock);
		CHECK_RC(pthread_rwlock_rdlock(&busy_lock), 0);
		holder_start(&reader, &busy_lock, READ, true, ncpu > 1 ? cpu[1] : -1);
		waiter_start(&writer, &busy_lock, WRITE);
		probe_reader_beside_writer(&busy_lock);
		fork_and_check_child(child_releases_its_fast_hold_beside_a_revoking_writer,
				     "writer waiting for fast-path readers");
		CHECK_RC(pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved), 0);
		CHECK(atomic_load(&writer.rc) == -1, "the writer got the lock while readers held it");
		CHECK_RC(pthread_rwlock_unlock(&busy_lock), 0);
		actor_release(&reader);
		actor_release(&writer);
		CHECK_RC(actor_join(&reader), 0);
		CHECK_RC(actor_join(&writer), 0);
		parent_after();
	}
	fault_watchdog(0, NULL);
}

/* ---- threads that exit holding a lock ---- */

/* Locks left held for good (never destroyed: strict mode would say EBUSY). */
static pthread_rwlock_t left_read_held = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t left_write_held = PTHREAD_RWLOCK_INITIALIZER;

static void *reader_gets_in(void *arg)
{
	CHECK_RC(pthread_rwlock_tryrdlock(arg), 0);
	CHECK_RC(pthread_rwlock_unlock(arg), 0);
	CHECK_RC(timed_rd(arg, 1000), 0);
	CHECK_RC(pthread_rwlock_unlock(arg), 0);
	return NULL;
}

static void finds_left_read_held(void)
{
	read_held(&left_read_held);
	join(spawn(reader_gets_in, &left_read_held));
	CHECK_RC(pthread_rwlock_trywrlock(&left_read_held), EBUSY);
}

static void finds_left_write_held(void)
{
	write_held(&left_write_held);
}

static void exit_holding(pthread_rwlock_t *l, enum mode mode)
{
	struct actor a;

	a = (struct actor){ .lock = l, .mode = mode, .warm = true, .exits_holding = true, .cpu = -1, .rc = -1 };
	join(spawn(actor_main, &a));
	CHECK_RC(atomic_load(&a.rc), 0);
}

static void thread_exiting_with_a_fast_path_read_lock_leaves_it_read_held_here_and_in_a_forked_child(void)
{
	fault_watchdog(20, "a lock left read-held by an exited thread");
	warm(&left_read_held);
	exit_holding(&left_read_held, READ);
	finds_left_read_held();
	locks_setup();
	fork_and_check_child(finds_left_read_held, "lock left read-held by an exited thread");
	finds_left_read_held();
	parent_after();
	fault_watchdog(0, NULL);
}

static void thread_exiting_with_a_write_lock_leaves_it_write_held_here_and_in_a_forked_child(void)
{
	fault_watchdog(20, "a lock left write-held by an exited thread");
	warm(&left_write_held);
	exit_holding(&left_write_held, WRITE);
	finds_left_write_held();
	locks_setup();
	fork_and_check_child(finds_left_write_held, "lock left write-held by an exited thread");
	finds_left_write_held();
	parent_after();
	fault_watchdog(0, NULL);
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		TORTURE_CHECK(fork_while_a_parent_thread_is_blocked_in_wrlock_waiting_for_a_reader),
		TORTURE_CHECK(fork_while_parent_threads_are_blocked_in_rdlock_and_wrlock_behind_a_writer),
		TORTURE_CHECK(fork_while_a_writer_waits_for_fast_path_readers_to_leave),
		TORTURE_CHECK(thread_exiting_with_a_fast_path_read_lock_leaves_it_read_held_here_and_in_a_forked_child),
		TORTURE_CHECK(thread_exiting_with_a_write_lock_leaves_it_write_held_here_and_in_a_forked_child),
	};

	return torture_main("fork_states", "fork() from every lock state, and threads that exit holding a lock",
			    checks, NELEM(checks), argc, argv);
}
