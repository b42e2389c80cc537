/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * shared_mapping.c - a process-private lock (default attributes: no
 * PTHREAD_PROCESS_SHARED) in memory shared with a forked child, used by
 * both processes with try-locks only.
 *
 * A common bug: a program puts a lock in mmap(MAP_SHARED | MAP_ANONYMOUS)
 * memory for a parent and its children and forgets
 * pthread_rwlockattr_setpshared.  Under glibc it works anyway as long as
 * nobody sleeps in the lock: the whole state of glibc's lock is in the
 * lock's bytes, which both processes see, and a try-lock is an atomic
 * operation on them that never waits on a futex (process-private futex
 * wake-ups are all that would go wrong).  So a parent and a child that
 * take the lock only with pthread_rwlock_tryrdlock / trywrlock keep
 * writer exclusion, and neither wedges.
 *
 * Here the two processes first take turns, each try-locking and unlocking
 * while the other holds the lock for reading or writing, also after one
 * of them has read it often (BRAVO's bias on): every state one makes, the
 * other sees, EBUSY or 0 as under glibc.  Then both run a bounded loop at
 * once (20000 tries each, mixed reads and writes), checking exclusion
 * with a struct guarded in the same mapping: every try-lock returns 0 or
 * EBUSY, every unlock 0, no second writer, no reader beside a writer, no
 * lost update.  Once both loops are over the lock is free: the child's
 * trywrlock returns 0 (then, after the child's exit, the parent's), so
 * neither is wedged.  (Not "each got the write lock in its loop": under
 * glibc a process may run its whole loop while the other is preempted
 * inside a read lock.)  Three ways of making the lock: used (read-locked
 * many times: BRAVO's bias on) by the parent before the fork; first used
 * after the fork (zero bytes); pthread_rwlock_init with default
 * attributes before the fork.
 *
 * Regression (issue item 2, second half): libbravo keeps state outside a
 * private lock's bytes (BRAVO's visible readers table, a heap block for
 * cohort-rw and percpu, the thread's held-lock list and the ids of its
 * past for fork adoption), which the other process does not share.  Under
 * ba, bravo-ba and bravo-pthread the child's try-lock of a lock the
 * parent write-held "adopted" it (the writer's id is the one the child's
 * thread had before the fork), so the parent's unlock released nothing
 * and the lock stayed wedged; under cohort-rw and percpu each process had
 * a lock of its own (a reader, or a second writer, got in beside the
 * other process's writer).
 */
#include "fault.h"

#include <sys/mman.h>
#include <sys/prctl.h>

enum { PARENT, CHILD };

struct shared {
	pthread_rwlock_t lock;          /* default attributes: process-private */
	struct guarded g;
	atomic_int at_start;            /* processes at the start line */
	atomic_long writes[2];          /* write acquisitions, per process */
	atomic_long reads[2];
	atomic_long busy[2];            /* EBUSY answers, per process */
	atomic_int done[2];             /* the process finished its loop */
	atomic_int step;                /* the turn-by-turn steps done (ping_pong) */
};

static struct shared *shared_map(void)
{
	void *p = mmap(NULL, sizeof(struct shared), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	return p; /* zero-filled */
}

static const char *const who_name[2] = { "parent", "child" };

/* ---- first, turn by turn: each state of the lock seen from the other process ---- */

/* WARM: many tryrdlock/unlock pairs, with pauses: BRAVO's bias is on after them. */
enum op { TRYRD, TRYWR, UNLOCK, WARM };

static const struct step {
	int who;
	enum op op;
	int want;
	const char *state;      /* the lock's state before the call */
} steps[] = {
	{ PARENT, TRYWR, 0, "free" },
	{ CHILD, TRYRD, EBUSY, "write-held by the parent" },
	{ CHILD, TRYWR, EBUSY, "write-held by the parent" },
	{ PARENT, UNLOCK, 0, "write-held by the parent" },
	{ CHILD, TRYWR, 0, "free again" },
	{ PARENT, TRYRD, EBUSY, "write-held by the child" },
	{ PARENT, TRYWR, EBUSY, "write-held by the child" },
	{ CHILD, UNLOCK, 0, "write-held by the child" },
	{ CHILD, TRYRD, 0, "free again" },
	{ PARENT, TRYRD, 0, "read-held by the child" },
	{ PARENT, TRYWR, EBUSY, "read-held by both" },
	{ CHILD, TRYWR, EBUSY, "read-held by both" },
	{ PARENT, UNLOCK, 0, "read-held by both" },
	{ PARENT, TRYWR, EBUSY, "read-held by the child" },
	{ CHILD, UNLOCK, 0, "read-held by the child" },
	{ PARENT, TRYWR, 0, "free again" },
	{ PARENT, UNLOCK, 0, "write-held by the parent" },
	{ CHILD, TRYWR, 0, "free again" },
	{ CHILD, UNLOCK, 0, "write-held by the child" },
	/* read often by one process (BRAVO: its readers go through the fast path) */
	{ CHILD, WARM, 0, "free again" },
	{ CHILD, TRYRD, 0, "free, read often by the child" },
	{ PARENT, TRYWR, EBUSY, "read-held by the child, which reads it often" },
	{ PARENT, TRYRD, 0, "read-held by the child, which reads it often" },
	{ PARENT, UNLOCK, 0, "read-held by both" },
	{ PARENT, TRYWR, EBUSY, "read-held by the child, which reads it often" },
	{ CHILD, UNLOCK, 0, "read-held by the child" },
	{ PARENT, WARM, 0, "free again" },
	{ PARENT, TRYRD, 0, "free, read often by the parent" },
	{ CHILD, TRYWR, EBUSY, "read-held by the parent, which reads it often" },
	{ PARENT, UNLOCK, 0, "read-held by the parent" },
	{ CHILD, TRYWR, 0, "free again" },
	{ PARENT, TRYRD, EBUSY, "write-held by the child" },
	{ CHILD, UNLOCK, 0, "write-held by the child" },
};

static const char *const op_name[] = { "tryrdlock", "trywrlock", "unlock", "tryrdlock/unlock pairs" };

/* WARM: read pairs, with pauses (a BRAVO lock may inhibit bias for a while after a write). */
static int warm_reads(pthread_rwlock_t *l)
{
	for (int i = 0; i < 200; i++) {
		int rc = pthread_rwlock_tryrdlock(l);

		if (rc != 0)
			return rc;
		rc = pthread_rwlock_unlock(l);
		if (rc != 0)
			return rc;
		if (i % 50 == 49)
			sleep_ms(1);
	}
	return 0;
}

/*
 * The processes take turns (s->step says whose): every state of the lock
 * that one process makes, the other sees.  Deterministic, where the loop
 * below is left to the scheduler.
 */
static void ping_pong(struct shared *s, int who, pid_t child)
{
	int holds = 0; /* 0, or the op (TRYRD, TRYWR) that got this process its hold */

	for (int n = 0; n < (int)NELEM(steps); n++) {
		const struct step *st = &steps[n];
		int rc;

		if (st->who != who)
			continue;
		for (long spins = 0; atomic_load(&s->step) != n; spins++) {
			siginfo_t info = { 0 };
			struct timespec pause = { 0, 20000 };

			CHECK(spins < 500000, "%s: the other process never did step %d", who_name[who], n - 1);
			if (who == PARENT && spins % 16 == 15) {
				/* a child that failed (and said why) ends the wait: peek, do not reap */
				CHECK(waitid(P_PID, (id_t)child, &info, WEXITED | WNOHANG | WNOWAIT) == 0,
				      "waitid: %s", strerror(errno));
				CHECK(info.si_pid != child, "the child died before its step %d", n - 1);
			}
			if (spins >= 100) /* a moment's spin, then short sleeps (not sched_yield: a busy CPU keeps it) */
				nanosleep(&pause, NULL);
		}
		if (st->op == WARM) {
			rc = warm_reads(&s->lock);
		} else if (st->op == UNLOCK) {
			if (holds == TRYWR)
				guarded_write_leave(&s->g);
			else
				guarded_read_leave(&s->g);
			rc = pthread_rwlock_unlock(&s->lock);
			holds = 0;
		} else {
			rc = st->op == TRYRD ? pthread_rwlock_tryrdlock(&s->lock) : pthread_rwlock_trywrlock(&s->lock);
		}
		CHECK(rc == st->want, "step %d: the %s's %s of the lock %s returned %s, expected %s", n,
		      who_name[who], op_name[st->op], st->state, errname(rc), errname(st->want));
		if ((st->op == TRYRD || st->op == TRYWR) && rc == 0 && !holds) {
			holds = st->op;
			if (st->op == TRYWR)
				guarded_write_enter(&s->g);
			else
				guarded_read_enter(&s->g);
		}
		atomic_store(&s->step, n + 1);
	}
}

/* ---- then both at once ---- */

/* One process's loop: try-locks only, exclusion checked on the shared record. */
static void try_lock_loop(struct shared *s, int who)
{
	long iterations = 20000 * torture_scale();
	unsigned seed = 12345u + 777u * (unsigned)who;

	/* both processes at the start line, so that their loops overlap */
	atomic_fetch_add(&s->at_start, 1);
	for (long spins = 0; atomic_load(&s->at_start) < 2; spins++) {
		CHECK(spins < 10000000, "the other process never came to the start line");
		sched_yield();
	}
	for (long i = 0; i < iterations; i++) {
		bool write = next_rand(&seed) % 4 == 0;
		int rc = write ? pthread_rwlock_trywrlock(&s->lock) : pthread_rwlock_tryrdlock(&s->lock);

		CHECK(rc == 0 || rc == EBUSY, "%s: %s returned %s, expected 0 or EBUSY", who_name[who],
		      write ? "trywrlock" : "tryrdlock", errname(rc));
		if (rc == EBUSY) {
			atomic_fetch_add(&s->busy[who], 1);
			continue;
		}
		if (write) {
			guarded_write_enter(&s->g);
			guarded_write_update(&s->g, i % 64 == 0);
			guarded_write_leave(&s->g);
			atomic_fetch_add(&s->writes[who], 1);
		} else {
			guarded_read_enter(&s->g);
			if (i % 64 == 0)
				sched_yield();
			guarded_read_check(&s->g);
			guarded_read_leave(&s->g);
			atomic_fetch_add(&s->reads[who], 1);
		}
		rc = pthread_rwlock_unlock(&s->lock);
		CHECK(rc == 0, "%s: unlock after a %s returned %s, expected 0", who_name[who],
		      write ? "trywrlock" : "tryrdlock", errname(rc));
	}
}

/*
 * After both loops (the other process holds nothing any more): the lock
 * is free, for either process.  A process that cannot get it is wedged.
 */
static void lock_is_free_for(struct shared *s, int who)
{
	int rc = pthread_rwlock_trywrlock(&s->lock);

	CHECK(rc == 0,
	      "%s: trywrlock after both processes finished returned %s, expected 0: wedged "
	      "(in its loop: %ld writes, %ld reads, %ld EBUSY; the other's: %ld writes, %ld reads, %ld EBUSY)",
	      who_name[who], errname(rc), atomic_load(&s->writes[who]), atomic_load(&s->reads[who]),
	      atomic_load(&s->busy[who]), atomic_load(&s->writes[!who]), atomic_load(&s->reads[!who]),
	      atomic_load(&s->busy[!who]));
	guarded_write_enter(&s->g);
	guarded_write_update(&s->g, false);
	guarded_write_leave(&s->g);
	atomic_fetch_add(&s->writes[who], 1);
	CHECK_RC(pthread_rwlock_unlock(&s->lock), 0);
	CHECK_RC(pthread_rwlock_tryrdlock(&s->lock), 0);
	CHECK_RC(pthread_rwlock_unlock(&s->lock), 0);
}

/* Fork, run the loop in both processes, then check what they did. */
static void parent_and_child_share_the_lock(struct shared *s)
{
	struct timespec start;
	pid_t pid;
	int status;

	fault_watchdog(20, "a parent and a child on a lock in shared memory");
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* a wedged child must not outlive the check, nor a parent that failed */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(15);
		ping_pong(s, CHILD, 0);
		try_lock_loop(s, CHILD);
		atomic_store(&s->done[CHILD], 1);
		while (!atomic_load(&s->done[PARENT]))
			sleep_ms(1);
		lock_is_free_for(s, CHILD);
		_exit(0);
	}
	ping_pong(s, PARENT, pid);
	try_lock_loop(s, PARENT);
	atomic_store(&s->done[PARENT], 1);
	start = ts_now(CLOCK_MONOTONIC);
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		CHECK(r >= 0, "waitpid: %s", strerror(errno));
		if (r == pid)
			break;
		if (ms_since(start) > 15000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			CHECK(false, "the child did not finish within 15 s: wedged");
		}
		sleep_ms(1);
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed: %s %d",
	      WIFEXITED(status) ? "exit status" : "signal",
	      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	lock_is_free_for(s, PARENT);
	CHECK(s->g.writes == (uint64_t)(atomic_load(&s->writes[PARENT]) + atomic_load(&s->writes[CHILD])),
	      "%llu writes recorded under the lock, %ld write acquisitions: an update was lost",
	      (unsigned long long)s->g.writes,
	      atomic_load(&s->writes[PARENT]) + atomic_load(&s->writes[CHILD]));
	CHECK_RC(munmap(s, sizeof(*s)), 0);
	fault_watchdog(0, NULL);
}

/* Read-locked many times, by this thread and others: BRAVO's bias is on. */
static void *read_often(void *arg)
{
	for (int i = 0; i < 200; i++) {
		CHECK_RC(pthread_rwlock_rdlock(arg), 0);
		CHECK_RC(pthread_rwlock_unlock(arg), 0);
	}
	return NULL;
}

static void private_lock_in_shared_memory_used_by_the_parent_before_the_fork_keeps_exclusion_with_try_locks(void)
{
	struct shared *s = shared_map();
	pthread_t th[2];

	for (int i = 0; i < 2; i++)
		th[i] = spawn(read_often, &s->lock);
	for (int i = 0; i < 2; i++)
		join(th[i]);
	read_often(&s->lock);
	CHECK_RC(pthread_rwlock_wrlock(&s->lock), 0);
	CHECK_RC(pthread_rwlock_unlock(&s->lock), 0);
	read_often(&s->lock);
	parent_and_child_share_the_lock(s);
}

static void private_lock_in_shared_memory_first_used_after_the_fork_keeps_exclusion_with_try_locks(void)
{
	parent_and_child_share_the_lock(shared_map());
}

static void private_lock_in_shared_memory_initialized_before_the_fork_keeps_exclusion_with_try_locks(void)
{
	struct shared *s = shared_map();

	CHECK_RC(pthread_rwlock_init(&s->lock, NULL), 0);
	parent_and_child_share_the_lock(s);
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		TORTURE_CHECK(private_lock_in_shared_memory_used_by_the_parent_before_the_fork_keeps_exclusion_with_try_locks),
		TORTURE_CHECK(private_lock_in_shared_memory_first_used_after_the_fork_keeps_exclusion_with_try_locks),
		TORTURE_CHECK(private_lock_in_shared_memory_initialized_before_the_fork_keeps_exclusion_with_try_locks),
	};

	return torture_main("shared_mapping",
			    "a process-private lock in shared memory, used by a parent and its child with try-locks",
			    checks, NELEM(checks), argc, argv);
}
