/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fork_tid_reuse.c - a forked process whose new thread is given the thread
 * id its parent (or grandparent) had.
 *
 * A daemon forks and its parent exits: process P forks Q, P exits and is
 * reaped; Q's main thread was forked from P's main thread.  Thread ids are
 * recycled, so a later thread T of Q may get P's old id.  T write-holds a
 * lock L (in Q's private memory); Q's main thread then calls the lock
 * functions on L.  glibc names a lock's writer by thread id and compares
 * it with the caller's: Q's main thread is not T, so it gets EBUSY from
 * trywrlock and tryrdlock and ETIMEDOUT from the timed calls, and T's
 * unlock releases L.  Every variant must give the same, and keep T's hold
 * exclusive throughout (struct guarded).
 *
 * Regression (issue item 2, "fork adoption meets a recycled thread id"):
 * libbravo lets a child process release the write locks its forking thread
 * held (libbravo(7), NOTES): the forking thread keeps the ids it had in its
 * parent and grandparents, and a lock that names one of them as its writer
 * is "adopted" (renamed to the caller).  On a lock that names P's old id
 * because T, a live thread with that id, holds it, Q's main thread adopted
 * the lock as its own: trywrlock broke T's hold (and said EBUSY),
 * timedwrlock said EDEADLK at once, and T's unlock released nothing.
 * That a child can still release what its forking thread write-held is
 * checked too (libbravo only: glibc cannot).
 *
 * The recycled id is made deterministic in a new pid namespace (root
 * only): its init (pid 1) forks P (pid 2), P forks Q and exits, init reaps
 * P, and Q writes P's id minus one to /proc/sys/kernel/ns_last_pid before
 * it creates T, which then gets id 2 (checked with gettid()).  Where the
 * namespace cannot be had (not root, no CLONE_NEWPID, a read-only
 * ns_last_pid), the checks that need it print "skip NAME (why)", the
 * others run, and the program exits 77 (skipped).
 */
#include "fault.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/prctl.h>

/* ---- a pid namespace in which thread ids come back ---- */

/* Exit statuses of the processes of a namespace run. */
enum { NS_PASS = 0, NS_FAIL = 1, NS_UNAVAILABLE = 77 };

enum { MAX_GENERATIONS = 2 };

/*
 * The ids of the main threads of the processes between the namespace's
 * init and Q (ancestors[0] is P, the oldest), as each recorded it before
 * it forked; Q inherits the array.
 */
static pid_t ancestors[MAX_GENERATIONS];
static int generations;

/* Where a process of the run says why the namespace cannot be had. */
static int why_fd = -1;

__attribute__((format(printf, 1, 2), noreturn))
static void ns_unavailable(const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && why_fd >= 0)
		(void)!write(why_fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	_exit(NS_UNAVAILABLE);
}

/* The next thread (or process) this process's namespace creates gets id `id`. */
static void next_id_will_be(pid_t id)
{
	char buf[32];
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	int n = snprintf(buf, sizeof(buf), "%d", (int)id - 1);

	if (fd < 0)
		ns_unavailable("open /proc/sys/kernel/ns_last_pid: %s", strerror(errno));
	if (write(fd, buf, (size_t)n) != n)
		ns_unavailable("write /proc/sys/kernel/ns_last_pid: %s", strerror(errno));
	close(fd);
}

/* A daemon's parent: it has used write locks (libbravo knows its id), forks, exits. */
static void ancestor_uses_a_write_lock(void)
{
	pthread_rwlock_t own;

	CHECK_RC(pthread_rwlock_init(&own, NULL), 0);
	CHECK_RC(pthread_rwlock_wrlock(&own), 0);
	CHECK_RC(pthread_rwlock_unlock(&own), 0);
	CHECK_RC(pthread_rwlock_rdlock(&own), 0);
	CHECK_RC(pthread_rwlock_unlock(&own), 0);
	CHECK_RC(pthread_rwlock_destroy(&own), 0);
}

/*
 * In the namespace's init: P, P's descendants down to Q; every process
 * but Q exits after its fork and init reaps it; then Q, told by init
 * through `go`, runs in_q in its main thread.  Returns Q's exit status.
 */
static int init_main(void (*in_q)(void))
{
	int go[2];
	pid_t pid;
	int status, reaped = 0;

	alarm(30); /* the last resort: init's death ends the namespace */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		ns_unavailable("mount --make-rprivate /: %s", strerror(errno));
	if (mount("proc", "/proc", "proc", 0, NULL) != 0)
		ns_unavailable("mount proc on /proc: %s", strerror(errno));
	CHECK(pipe2(go, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char byte;

		close(go[1]);
		for (int g = 0; g < generations; g++) {
			pid_t child;

			ancestor_uses_a_write_lock();
			ancestors[g] = gettid();
			child = fork();
			CHECK(child >= 0, "fork: %s", strerror(errno));
			if (child > 0)
				_exit(NS_PASS); /* the ancestor leaves; init reaps it */
		}
		/* Q */
		alarm(20);
		CHECK(read(go[0], &byte, 1) == 1, "Q: read: %s", strerror(errno));
		in_q();
		fflush(stdout);
		_exit(NS_PASS);
	}
	close(go[0]);
	while (reaped < generations) {
		pid_t r = waitpid(-1, &status, 0);

		CHECK(r > 0, "init: waitpid: %s", strerror(errno));
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "an ancestor of Q (pid %d) failed", (int)r);
		reaped++;
	}
	CHECK(write(go[1], "g", 1) == 1, "init: write: %s", strerror(errno));
	CHECK(waitpid(-1, &status, 0) > 0, "init: waitpid: %s", strerror(errno));
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	fflush(stdout);
	fprintf(stderr, "FAIL %s: process Q was killed by signal %d (%s)\n", torture_current,
		WTERMSIG(status), WTERMSIG(status) == SIGALRM ? "a hang" : strsignal(WTERMSIG(status)));
	return NS_FAIL;
}

/*
 * Run in_q in process Q of a new pid namespace, `gens` generations below
 * the namespace's init.  Returns NS_PASS, NS_FAIL (a FAIL line was
 * printed), or NS_UNAVAILABLE with the reason in why.
 */
static int ns_run(int gens, void (*in_q)(void), char *why, size_t len)
{
	struct timespec start = ts_now(CLOCK_MONOTONIC);
	int msg[2], status;
	pid_t helper;
	ssize_t n;

	why[0] = '\0';
	CHECK(pipe2(msg, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
	generations = gens;
	fflush(stdout);
	fflush(stderr);
	helper = fork();
	CHECK(helper >= 0, "fork: %s", strerror(errno));
	if (helper == 0) {
		pid_t init;

		close(msg[0]);
		why_fd = msg[1];
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a test process that failed takes it along */
		if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0)
			ns_unavailable("unshare(CLONE_NEWPID | CLONE_NEWNS): %s", strerror(errno));
		init = fork();
		if (init < 0)
			ns_unavailable("fork into the new pid namespace: %s", strerror(errno));
		if (init == 0) {
			/* if the helper is killed (a hang), the namespace goes with it */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			_exit(init_main(in_q));
		}
		CHECK(waitpid(init, &status, 0) == init, "waitpid: %s", strerror(errno));
		if (WIFEXITED(status))
			_exit(WEXITSTATUS(status));
		fprintf(stderr, "FAIL %s: the namespace's init was killed by signal %d\n",
			torture_current, WTERMSIG(status));
		_exit(NS_FAIL);
	}
	close(msg[1]);
	for (;;) {
		pid_t r = waitpid(helper, &status, WNOHANG);

		CHECK(r >= 0, "waitpid: %s", strerror(errno));
		if (r == helper)
			break;
		if (ms_since(start) > 40000) {
			kill(helper, SIGKILL);
			waitpid(helper, &status, 0);
			close(msg[0]);
			CHECK(false, "the processes in the pid namespace did not finish within 40 s: a hang");
		}
		sleep_ms(2);
	}
	n = read(msg[0], why, len - 1);
	why[n > 0 ? n : 0] = '\0';
	close(msg[0]);
	if (!WIFEXITED(status))
		return NS_FAIL;
	return WEXITSTATUS(status);
}

/* ---- threads of Q ---- */

struct writer {
	pthread_rwlock_t *lock;
	struct guarded *g;
	pid_t want_id;          /* the id the thread must have */
	atomic_int id;          /* the id it got; 0 before */
	atomic_int holding;
	atomic_int release;
	atomic_int unlock_rc;
	pthread_t th;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	atomic_store(&w->id, gettid());
	if (atomic_load(&w->id) != w->want_id)
		return NULL; /* the namespace did not give the id: Q's main says so */
	CHECK_RC(pthread_rwlock_wrlock(w->lock), 0);
	guarded_write_enter(w->g);
	atomic_store(&w->holding, 1);
	while (!atomic_load(&w->release)) {
		CHECK(atomic_load(&w->g->writers) == 1 && atomic_load(&w->g->readers) == 0,
		      "the lock a thread write-holds let someone else in");
		sleep_ms(1);
	}
	guarded_write_update(w->g, false);
	guarded_write_leave(w->g);
	atomic_store(&w->unlock_rc, pthread_rwlock_unlock(w->lock));
	return NULL;
}

/* In Q: a thread with id `id` that write-holds l. */
static void writer_start(struct writer *w, pthread_rwlock_t *l, struct guarded *g, pid_t id)
{
	*w = (struct writer){ .lock = l, .g = g, .want_id = id, .unlock_rc = -1 };
	memset(g, 0, sizeof(*g));
	next_id_will_be(id);
	w->th = spawn(writer_main, w);
	while (atomic_load(&w->id) == 0)
		sleep_ms(1);
	CHECK(atomic_load(&w->id) == id,
	      "the new thread got id %d, not the recycled id %d (ids were not recycled as planned)",
	      atomic_load(&w->id), (int)id);
	CHECK(wait_for(&w->holding, 1, 10000), "the thread with the recycled id did not get its lock");
}

/* A write try of ours: if it got in, the guarded data says beside whom. */
static int write_try(struct guarded *g, pthread_rwlock_t *l, int rc)
{
	if (rc == 0) {
		guarded_write_enter(g);
		guarded_write_leave(g);
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	}
	return rc;
}

static int read_try(struct guarded *g, pthread_rwlock_t *l, int rc)
{
	if (rc == 0) {
		guarded_read_enter(g);
		guarded_read_leave(g);
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	}
	return rc;
}

/* Q's main thread on a lock that w (a live thread with an ancestor's id) write-holds. */
static void q_finds_the_lock_write_held_by_the_other_thread(struct writer *w)
{
	pthread_rwlock_t *l = w->lock;
	struct timespec rt, mono;

	CHECK_RC(write_try(w->g, l, pthread_rwlock_trywrlock(l)), EBUSY);
	rt = ts_add_ms(ts_now(CLOCK_REALTIME), 100);
	CHECK_RC(write_try(w->g, l, pthread_rwlock_timedwrlock(l, &rt)), ETIMEDOUT);
	mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), 20);
	CHECK_RC(write_try(w->g, l, pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &mono)), ETIMEDOUT);
	CHECK_RC(read_try(w->g, l, pthread_rwlock_tryrdlock(l)), EBUSY);
	rt = ts_add_ms(ts_now(CLOCK_REALTIME), 20);
	CHECK_RC(read_try(w->g, l, pthread_rwlock_timedrdlock(l, &rt)), ETIMEDOUT);
	CHECK_RC(write_try(w->g, l, pthread_rwlock_trywrlock(l)), EBUSY);
}

/* Then the holder unlocks: 0, and the lock is really free. */
static void the_holder_releases_it(struct writer *w)
{
	pthread_rwlock_t *l = w->lock;

	atomic_store(&w->release, 1);
	join(w->th);
	CHECK(atomic_load(&w->unlock_rc) == 0,
	      "the unlock by the thread that write-held the lock returned %s, expected 0",
	      errname(atomic_load(&w->unlock_rc)));
	CHECK_RC(write_try(w->g, l, pthread_rwlock_trywrlock(l)), 0);
	CHECK_RC(read_try(w->g, l, pthread_rwlock_tryrdlock(l)), 0);
	check_lock_still_works(l, 4, 100);
	CHECK_RC(pthread_rwlock_destroy(l), 0);
}

static pthread_rwlock_t lock_one, lock_two;
static struct guarded guard_one, guard_two;

/* Q (forked from P's main thread): T gets P's id and write-holds lock_one. */
static void in_q_child_of_the_exited_parent(void)
{
	struct writer t;

	CHECK_RC(pthread_rwlock_init(&lock_one, NULL), 0);
	writer_start(&t, &lock_one, &guard_one, ancestors[0]);
	q_finds_the_lock_write_held_by_the_other_thread(&t);
	the_holder_releases_it(&t);
}

/*
 * Q two generations below P: T1 gets P's id (the grandparent's), T2 the
 * id of the process between (the parent's); each write-holds a lock.
 */
static void in_q_grandchild_of_the_exited_processes(void)
{
	struct writer t1, t2;

	CHECK_RC(pthread_rwlock_init(&lock_one, NULL), 0);
	CHECK_RC(pthread_rwlock_init(&lock_two, NULL), 0);
	writer_start(&t1, &lock_one, &guard_one, ancestors[0]);
	writer_start(&t2, &lock_two, &guard_two, ancestors[1]);
	q_finds_the_lock_write_held_by_the_other_thread(&t1);
	q_finds_the_lock_write_held_by_the_other_thread(&t2);
	q_finds_the_lock_write_held_by_the_other_thread(&t1);
	the_holder_releases_it(&t2);
	q_finds_the_lock_write_held_by_the_other_thread(&t1);
	the_holder_releases_it(&t1);
}

/* The probe: a thread of Q gets P's id. */
static void *probe_thread(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)gettid();
}

static void in_q_probe(void)
{
	pid_t got;

	next_id_will_be(ancestors[0]);
	got = (pid_t)(intptr_t)join(spawn(probe_thread, NULL));
	if (got != ancestors[0])
		ns_unavailable("a thread created after ns_last_pid was set got id %d, not %d",
			       (int)got, (int)ancestors[0]);
}

/* Why the namespace cannot be had; NULL if it can. */
static const char *pid_namespace_unavailable(void)
{
	static char why[300];
	int r = ns_run(1, in_q_probe, why, sizeof(why));

	if (r == NS_PASS)
		return NULL;
	if (r != NS_UNAVAILABLE && !why[0])
		snprintf(why, sizeof(why), "the probe of the pid namespace failed (status %d)", r);
	return why;
}

static void run_in_namespace(int gens, void (*in_q)(void))
{
	char why[300];
	int r;

	fault_watchdog(50, "processes in a pid namespace");
	r = ns_run(gens, in_q, why, sizeof(why));
	CHECK(r != NS_UNAVAILABLE, "the pid namespace could not be had after the probe had it: %s", why);
	CHECK(r == NS_PASS, "the checks in process Q failed (exit status %d)", r);
	fault_watchdog(0, NULL);
}

/* ---- checks ---- */

static void thread_given_the_exited_parents_id_keeps_its_write_lock_against_the_forked_main_thread(void)
{
	run_in_namespace(1, in_q_child_of_the_exited_parent);
}

static void threads_given_the_exited_grandparents_and_parents_ids_keep_their_write_locks(void)
{
	run_in_namespace(2, in_q_grandchild_of_the_exited_processes);
}

/* ---- the child still releases what its forking thread write-held ---- */

static void *trywr_main(void *arg)
{
	int rc = pthread_rwlock_trywrlock(arg);

	if (rc == 0)
		CHECK_RC(pthread_rwlock_unlock(arg), 0);
	return (void *)(intptr_t)rc;
}

static int trywrlock_elsewhere(pthread_rwlock_t *l)
{
	return (int)(intptr_t)join(spawn(trywr_main, l));
}

static pthread_rwlock_t forked_held;

static void child_releases_the_forking_threads_write_lock(void *arg)
{
	struct timespec mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), 20);

	(void)arg;
	alarm(10);
	/* still held, by this thread (the forking thread's continuation) */
	CHECK_RC(trywrlock_elsewhere(&forked_held), EBUSY);
	CHECK_RC(pthread_rwlock_tryrdlock(&forked_held), EBUSY);
	CHECK_RC(pthread_rwlock_clockwrlock(&forked_held, CLOCK_MONOTONIC, &mono), EDEADLK);
	CHECK_RC(pthread_rwlock_unlock(&forked_held), 0);
	CHECK_RC(trywrlock_elsewhere(&forked_held), 0);
	check_lock_still_works(&forked_held, 4, 100);
}

/*
 * [libbravo] glibc names the writer by the forking thread's id, which the
 * child's thread does not have: its unlock takes the lock for a read
 * lock and corrupts it.  libbravo(7) promises the child can release it.
 */
static void child_can_release_a_write_lock_its_forking_thread_held_in_private_memory(void)
{
	int status;

	fault_watchdog(20, "a child that releases its forking thread's write lock");
	CHECK_RC(pthread_rwlock_init(&forked_held, NULL), 0);
	for (int round = 0; round < 2; round++) {
		CHECK_RC(pthread_rwlock_wrlock(&forked_held), 0);
		status = fault_in_child(child_releases_the_forking_threads_write_lock, NULL, 15);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status %#x)", status);
		/* the parent's own hold is untouched */
		CHECK_RC(trywrlock_elsewhere(&forked_held), EBUSY);
		CHECK_RC(pthread_rwlock_unlock(&forked_held), 0);
		CHECK_RC(trywrlock_elsewhere(&forked_held), 0);
	}
	CHECK_RC(pthread_rwlock_destroy(&forked_held), 0);
	fault_watchdog(0, NULL);
}

/* ---- main: the namespace checks are skipped where it cannot be had ---- */

int main(int argc, char **argv)
{
	static const struct torture_check all[] = {
		TORTURE_CHECK(thread_given_the_exited_parents_id_keeps_its_write_lock_against_the_forked_main_thread),
		TORTURE_CHECK(threads_given_the_exited_grandparents_and_parents_ids_keep_their_write_locks),
		LIBBRAVO_CHECK(child_can_release_a_write_lock_its_forking_thread_held_in_private_memory),
	};
	enum { NAMESPACE_CHECKS = 2 }; /* the first ones of `all` */
	const char *about = "threads given a recycled id of the parent or grandparent process";
	const char *why = NULL;
	char *args[NELEM(all) + 2];
	int nargs = 1, named = 0, rc;
	bool help = false;

	for (int a = 1; a < argc; a++)
		help |= strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0;
	if (!help)
		why = pid_namespace_unavailable();
	if (!why)
		return torture_main("fork_tid_reuse", about, all, NELEM(all), argc, argv);

	/* Without the namespace: skip its checks, run the others, exit 77. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	args[0] = argv[0];
	for (int a = 1; a < argc; a++) {
		bool ns_check = false;

		for (int i = 0; i < NAMESPACE_CHECKS; i++)
			ns_check |= strcmp(argv[a], all[i].name) == 0;
		named++;
		if (!ns_check && nargs < (int)NELEM(args) - 1)
			args[nargs++] = argv[a];
	}
	args[nargs] = NULL;
	for (int i = 0; i < NAMESPACE_CHECKS; i++) {
		bool wanted = named == 0;

		for (int a = 1; a < argc; a++)
			wanted |= strcmp(argv[a], all[i].name) == 0;
		if (wanted)
			printf("skip %s (no pid namespace with recycled ids: %s)\n", all[i].name, why);
	}
	if (named > 0 && nargs == 1)
		return 77; /* only namespace checks were asked for */
	rc = torture_main("fork_tid_reuse", about, all + NAMESPACE_CHECKS, NELEM(all) - NAMESPACE_CHECKS,
			  nargs, args);
	return rc == 0 ? 77 : rc;
}
