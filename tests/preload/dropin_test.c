/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * dropin_test.c - does a program see glibc's rwlock behaviour?
 *
 * An ordinary pthread program: it knows nothing of libbravo.  Each check is
 * a function named after a behaviour glibc 2.36 has and that an unmodified
 * program may rely on; tests/preload/dropin-compare.sh runs this program once
 * without preload and once under LD_PRELOAD of a libbravo variant (the check
 * "dropin" of each variant's tests/preload/run), and requires
 * every check that passes natively to pass under the variant too, except
 * where the table `differences` below names the variant and the reason.
 *
 * Each check runs in a child process of its own, bounded by a watchdog in
 * this process: a hang becomes a FAIL line naming the last step the check
 * reached, and a broken lock cannot leak into the next check.  Output, one
 * line per check, then a summary:
 *
 *   PASS name: detail
 *   FAIL name: detail
 *   SKIP name: why            (a check of a libbravo promise, run natively)
 *   N passed, N failed
 *
 * Exit status 0 when every check run passed.
 *
 * Usage:
 *   dropin [NAME...]          the drop-in checks (all, or those named)
 *   dropin --strict [NAME...] the strict-mode checks: run them under a
 *                             variant with BRAVO_CHECK=1
 *   dropin --differences      print the expected differences, one per line:
 *                             CHECK VARIANT REASON
 *   dropin --list             print the names of the drop-in checks
 *
 * Environment: RWLOCK_UNDER_TEST=glibc (set by the driver when nothing is
 * preloaded) skips the checks of promises libbravo makes beyond glibc
 * (glibc fails them itself); each prints a SKIP line.
 *
 * "Warm" below: enough read lock/unlock pairs without a writer around (1000)
 * that a BRAVO variant has enabled reader bias, so the next read lock takes
 * the fast path (a slot in the visible readers table, not the lock).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/test_util.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define WARM_ROUNDS 1000

/* ------------------------------------------------------------------ */
/* Reporting: a page shared with the check's process                   */
/* ------------------------------------------------------------------ */

struct shared {
	char step[256];    /* what the check is doing now (shown on a hang) */
	char detail[768];  /* why it failed, or a note on a pass */
};

static struct shared *sh;

__attribute__((format(printf, 1, 2)))
static void step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sh->step, sizeof(sh->step), fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2)))
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sh->detail, sizeof(sh->detail), fmt, ap);
	va_end(ap);
}

/* Fail the running check: other threads may hold locks, so no exit handlers. */
__attribute__((format(printf, 1, 2), noreturn))
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sh->detail, sizeof(sh->detail), fmt, ap);
	va_end(ap);
	_exit(1);
}

#define EXPECT_RC(expr, want)                                                 \
	do {                                                                  \
		int rc_ = (expr);                                             \
		int want_ = (want);                                           \
		if (rc_ != want_)                                             \
			fail("%s: %s returned %s, expected %s", sh->step,     \
			     #expr, errname(rc_), errname(want_));            \
	} while (0)

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static void init_lock(pthread_rwlock_t *l, int kind)
{
	pthread_rwlockattr_t a;

	EXPECT_RC(pthread_rwlockattr_init(&a), 0);
	EXPECT_RC(pthread_rwlockattr_setkind_np(&a, kind), 0);
	EXPECT_RC(pthread_rwlock_init(l, &a), 0);
	EXPECT_RC(pthread_rwlockattr_destroy(&a), 0);
}

/* Read lock/unlock pairs without writers: BRAVO enables reader bias. */
static int warm(pthread_rwlock_t *l)
{
	for (int i = 0; i < WARM_ROUNDS; i++) {
		int rc = pthread_rwlock_rdlock(l);

		if (rc)
			return rc;
		rc = pthread_rwlock_unlock(l);
		if (rc)
			return rc;
	}
	return 0;
}

static inline void cpu_spin_hint(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

static struct timespec deadline_ms(long ms)
{
	return ts_add_ms(ts_now(CLOCK_REALTIME), ms);
}

static int timedwr(pthread_rwlock_t *l, long ms)
{
	struct timespec t = deadline_ms(ms);

	return pthread_rwlock_timedwrlock(l, &t);
}

static int timedrd(pthread_rwlock_t *l, long ms)
{
	struct timespec t = deadline_ms(ms);

	return pthread_rwlock_timedrdlock(l, &t);
}

static long long thread_cpu_ns(pthread_t th)
{
	clockid_t c;
	struct timespec t;

	if (pthread_getcpuclockid(th, &c) != 0 || clock_gettime(c, &t) != 0)
		return -1;
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* A handler installed without SA_RESTART (as LTP's tests do). */
static atomic_int signals_seen;

static void count_signal(int sig)
{
	int saved = errno;

	(void)sig;
	atomic_fetch_add(&signals_seen, 1);
	errno = saved;
}

static void install(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART */
	if (sigaction(sig, &sa, NULL) != 0)
		fail("sigaction: %s", strerror(errno));
}

/* ------------------------------------------------------------------ */
/* Workers: threads that run one lock call at a time, on request        */
/* ------------------------------------------------------------------ */

enum op { OP_NONE, OP_RD, OP_WR, OP_TRYRD, OP_TRYWR, OP_TIMEDRD, OP_TIMEDWR,
	  OP_UNLOCK, OP_WARM, OP_EXIT };

static const char *op_name[] = {
	"none", "rdlock", "wrlock", "tryrdlock", "trywrlock", "timedrdlock",
	"timedwrlock", "unlock", "warm-up", "exit",
};

/*
 * A worker left idle (or blocked) when its check returns lives on until the
 * child's _exit, in pthread_cond_wait on its struct worker: so every struct
 * worker is static, never on the check's stack, whose bytes the exit path
 * reuses (tests/fault/memory_exhaustion.c crashed so, 1 run in 500).
 */
struct worker {
	const char *name;
	pthread_t th;
	pthread_mutex_t m;
	pthread_cond_t cv;
	enum op op;                /* request; OP_NONE when idle */
	pthread_rwlock_t *l;
	long ms;                   /* timed ops: deadline from now */
	bool running;              /* the call is in progress */
	int rc;                    /* its result */
	unsigned posted, finished; /* request counters */
	struct timespec deadline, returned; /* timed ops: asked and returned */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->m);
	for (;;) {
		while (w->op == OP_NONE)
			pthread_cond_wait(&w->cv, &w->m);
		enum op op = w->op;
		pthread_rwlock_t *l = w->l;
		int rc = 0;

		w->running = true;
		pthread_mutex_unlock(&w->m);
		switch (op) {
		case OP_RD: rc = pthread_rwlock_rdlock(l); break;
		case OP_WR: rc = pthread_rwlock_wrlock(l); break;
		case OP_TRYRD: rc = pthread_rwlock_tryrdlock(l); break;
		case OP_TRYWR: rc = pthread_rwlock_trywrlock(l); break;
		case OP_TIMEDRD:
			w->deadline = deadline_ms(w->ms);
			rc = pthread_rwlock_timedrdlock(l, &w->deadline);
			w->returned = ts_now(CLOCK_REALTIME);
			break;
		case OP_TIMEDWR:
			w->deadline = deadline_ms(w->ms);
			rc = pthread_rwlock_timedwrlock(l, &w->deadline);
			w->returned = ts_now(CLOCK_REALTIME);
			break;
		case OP_UNLOCK: rc = pthread_rwlock_unlock(l); break;
		case OP_WARM: rc = warm(l); break;
		case OP_EXIT:
			pthread_mutex_lock(&w->m);
			w->finished++;
			w->running = false;
			w->op = OP_NONE;
			pthread_cond_broadcast(&w->cv);
			pthread_mutex_unlock(&w->m);
			return NULL; /* whatever it holds stays held */
		case OP_NONE: break;
		}
		pthread_mutex_lock(&w->m);
		w->rc = rc;
		w->running = false;
		w->op = OP_NONE;
		w->finished++;
		pthread_cond_broadcast(&w->cv);
	}
}

static void w_start(struct worker *w, const char *name)
{
	memset(w, 0, sizeof(*w));
	w->name = name;
	pthread_mutex_init(&w->m, NULL);
	pthread_cond_init(&w->cv, NULL);
	if (pthread_create(&w->th, NULL, worker_main, w) != 0)
		fail("pthread_create failed");
}

/* Ask w for one call; returns at once. */
static void w_post(struct worker *w, enum op op, pthread_rwlock_t *l, long ms)
{
	pthread_mutex_lock(&w->m);
	if (w->op != OP_NONE || w->running || w->finished != w->posted)
		fail("%s: worker %s is still busy", sh->step, w->name);
	w->op = op;
	w->l = l;
	w->ms = ms;
	w->posted++;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->m);
}

/* Wait up to ms for w's call to return; true and *rc if it did. */
static bool w_wait(struct worker *w, long ms, int *rc)
{
	struct timespec until = deadline_ms(ms);
	bool done;

	pthread_mutex_lock(&w->m);
	while (w->finished != w->posted &&
	       pthread_cond_timedwait(&w->cv, &w->m, &until) != ETIMEDOUT)
		;
	done = w->finished == w->posted;
	if (done && rc)
		*rc = w->rc;
	pthread_mutex_unlock(&w->m);
	return done;
}

/* One call on w, which must return within ms (2 s when 0). */
static int w_call(struct worker *w, enum op op, pthread_rwlock_t *l, long ms, long bound)
{
	int rc;

	w_post(w, op, l, ms);
	if (!w_wait(w, bound ? bound : 2000, &rc))
		fail("%s: %s's %s did not return within %ld ms", sh->step, w->name,
		     op_name[op], bound ? bound : 2000);
	return rc;
}

#define W_EXPECT(w, op, l, ms, want)                                          \
	do {                                                                  \
		int rc_ = w_call((w), (op), (l), (ms), 0);                    \
		if (rc_ != (want))                                            \
			fail("%s: %s's %s returned %s, expected %s", sh->step,\
			     (w)->name, op_name[op], errname(rc_),            \
			     errname(want));                                  \
	} while (0)

static void w_exit(struct worker *w)
{
	w_post(w, OP_EXIT, NULL, 0);
	pthread_join(w->th, NULL);
}

/* ------------------------------------------------------------------ */
/* 1. Reader preference of the default kind                            */
/* ------------------------------------------------------------------ */

static void reader_enters_while_writer_waits(void)
{
	pthread_rwlock_t l;
	static struct worker r1, w, r2;
	int rc;

	step("init (default kind)");
	EXPECT_RC(pthread_rwlock_init(&l, NULL), 0);
	w_start(&r1, "R1");
	w_start(&w, "W");
	w_start(&r2, "R2");
	step("R1 warms up and read-locks");
	W_EXPECT(&r1, OP_WARM, &l, 0, 0);
	W_EXPECT(&r1, OP_RD, &l, 0, 0);
	step("W calls wrlock while R1 reads");
	w_post(&w, OP_WR, &l, 0);
	sleep_ms(100);
	if (w_wait(&w, 0, &rc))
		fail("W's wrlock returned %s while R1 read-held the lock", errname(rc));
	step("R2 calls timedrdlock (1 s) while R1 reads and W waits");
	rc = w_call(&r2, OP_TIMEDRD, &l, 1000, 3000);
	if (rc != 0)
		fail("R2's timedrdlock returned %s while R1 read-held the lock and W waited "
		     "(glibc's default kind prefers readers: R2 gets in)", errname(rc));
	step("R2 and R1 unlock; W gets in");
	W_EXPECT(&r2, OP_UNLOCK, &l, 0, 0);
	if (w_wait(&w, 0, &rc))
		fail("W's wrlock returned %s while R1 still read-held the lock", errname(rc));
	W_EXPECT(&r1, OP_UNLOCK, &l, 0, 0);
	if (!w_wait(&w, 2000, &rc) || rc != 0)
		fail("W's wrlock did not return 0 within 2 s of the last reader's unlock");
	W_EXPECT(&w, OP_UNLOCK, &l, 0, 0);
	note("R2 got in while W waited");
}

/* ------------------------------------------------------------------ */
/* 2. A lock initialized again by an atfork child handler              */
/* ------------------------------------------------------------------ */

static pthread_rwlock_t fork_lock;
static int fork_reinit_mode; /* 0: pthread_rwlock_init; 1: = INITIALIZER */

static void reinit_in_child(void)
{
	if (fork_reinit_mode == 0) {
		pthread_rwlock_init(&fork_lock, NULL);
	} else {
		pthread_rwlock_t fresh = PTHREAD_RWLOCK_INITIALIZER;

		fork_lock = fresh;
	}
}

/* Use l as a fresh lock: write, read, warm up, write again. */
static void use_as_fresh(pthread_rwlock_t *l, const char *who)
{
	step("%s: wrlock", who);
	EXPECT_RC(pthread_rwlock_wrlock(l), 0);
	EXPECT_RC(pthread_rwlock_unlock(l), 0);
	step("%s: rdlock", who);
	EXPECT_RC(pthread_rwlock_rdlock(l), 0);
	EXPECT_RC(pthread_rwlock_unlock(l), 0);
	step("%s: warm-up", who);
	EXPECT_RC(warm(l), 0);
	step("%s: wrlock after the warm-up", who);
	EXPECT_RC(pthread_rwlock_wrlock(l), 0);
	EXPECT_RC(pthread_rwlock_unlock(l), 0);
	step("%s: trywrlock", who);
	EXPECT_RC(pthread_rwlock_trywrlock(l), 0);
	EXPECT_RC(pthread_rwlock_unlock(l), 0);
}

/* Fork; the child runs fn and exits; it must exit 0 within ms. */
static void in_child(void (*fn)(void), long ms, const char *what)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm((unsigned)(ms / 1000 + 2));
		fn();
		_exit(0);
	}
	for (long t = 0; t < ms; t += 5) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid) {
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				return;
			if (WIFEXITED(status)) {
				char why[sizeof(sh->detail)];

				snprintf(why, sizeof(why), "%s", sh->detail); /* the child's fail() */
				fail("%s: %s", what, why);
			}
			fail("%s: forked child killed by signal %d at step '%s'", what,
			     WTERMSIG(status), sh->step);
		}
		sleep_ms(5);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	fail("%s: forked child did not finish within %ld ms; last step: %s", what, ms, sh->step);
}

static void fork_child_uses_lock(void)
{
	use_as_fresh(&fork_lock, "child");
}

static void fresh_after_atfork_reinit(void)
{
	static struct worker t;
	static const char *modes[] = { "pthread_rwlock_init", "= PTHREAD_RWLOCK_INITIALIZER" };

	if (pthread_atfork(NULL, NULL, reinit_in_child) != 0)
		fail("pthread_atfork failed");
	w_start(&t, "T");
	for (int m = 0; m < 2; m++) {
		step("init L; T warms up and read-locks it (and keeps it)");
		EXPECT_RC(pthread_rwlock_init(&fork_lock, NULL), 0);
		W_EXPECT(&t, OP_WARM, &fork_lock, 0, 0);
		W_EXPECT(&t, OP_RD, &fork_lock, 0, 0);
		fork_reinit_mode = m;
		step("fork; the child handler does %s", modes[m]);
		in_child(fork_child_uses_lock, 2000, modes[m]);
		/* The parent's lock is still read-held by T. */
		step("parent: T unlocks");
		W_EXPECT(&t, OP_UNLOCK, &fork_lock, 0, 0);
		step("parent: wrlock after T's unlock");
		EXPECT_RC(timedwr(&fork_lock, 1000), 0);
		EXPECT_RC(pthread_rwlock_unlock(&fork_lock), 0);
	}
	note("both child handlers (init, = INITIALIZER) give the child a fresh lock");
}

/* ------------------------------------------------------------------ */
/* 3. A lock zeroed (or memory reused) after its holder exited          */
/* ------------------------------------------------------------------ */

/* A thread warms l up, read-locks it and exits without unlocking. */
static void read_hold_and_exit(pthread_rwlock_t *l)
{
	static struct worker t;

	w_start(&t, "T");
	W_EXPECT(&t, OP_WARM, l, 0, 0);
	W_EXPECT(&t, OP_RD, l, 0, 0);
	w_exit(&t);
}

static void fresh_after_zero_of_lock_held_by_exited_thread(void)
{
	static pthread_rwlock_t l;
	pthread_rwlock_t *p, *q;
	uintptr_t old;
	void *other[64];
	int n_other = 0;

	step("memset: T read-holds L and exits");
	EXPECT_RC(pthread_rwlock_init(&l, NULL), 0);
	read_hold_and_exit(&l);
	memset(&l, 0, sizeof(l));
	use_as_fresh(&l, "after memset");

	step("= INITIALIZER: T read-holds L and exits");
	EXPECT_RC(pthread_rwlock_init(&l, NULL), 0);
	read_hold_and_exit(&l);
	{
		pthread_rwlock_t fresh = PTHREAD_RWLOCK_INITIALIZER;

		l = fresh;
	}
	use_as_fresh(&l, "after = INITIALIZER");

	step("malloc'ed lock: T read-holds it and exits; free; malloc again");
	p = malloc(sizeof(*p));
	if (!p)
		fail("malloc failed");
	EXPECT_RC(pthread_rwlock_init(p, NULL), 0);
	read_hold_and_exit(p);
	old = (uintptr_t)p;
	free(p);
	for (;;) {
		q = malloc(sizeof(*q));
		if (!q)
			fail("malloc failed");
		if ((uintptr_t)q == old || n_other == (int)NELEM(other))
			break;
		other[n_other++] = q;
	}
	for (int i = 0; i < n_other; i++)
		free(other[i]);
	if ((uintptr_t)q != old)
		fail("the allocator did not give back %#lx in %d tries", (unsigned long)old,
		     n_other + 1);
	EXPECT_RC(pthread_rwlock_init(q, NULL), 0);
	use_as_fresh(q, "new lock at the freed lock's address");
	free(q);
	note("memset, = INITIALIZER and free+malloc+init each give a fresh lock");
}

/* ------------------------------------------------------------------ */
/* 4. destroy of a held lock (glibc: 0), init again, use               */
/* ------------------------------------------------------------------ */

static void destroy_of_held_lock_returns_zero(void)
{
	static const int kinds[] = { PTHREAD_RWLOCK_PREFER_READER_NP,
				     PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP };
	static pthread_rwlock_t r;
	static struct worker t;

	w_start(&t, "T");
	/* glibc's tst-rwlock6/7: each round inits r, locks it, lets a thread
	 * time out on it, and destroys it still held. */
	for (int k = 0; k < 2; k++) {
		for (int write = 0; write < 2; write++) {
			step("kind %d, caller %s-holds r", kinds[k], write ? "write" : "read");
			init_lock(&r, kinds[k]);
			if (write) {
				EXPECT_RC(pthread_rwlock_wrlock(&r), 0);
				step("T's timedrdlock times out");
				W_EXPECT(&t, OP_TIMEDRD, &r, 50, ETIMEDOUT);
			} else {
				EXPECT_RC(warm(&r), 0);
				EXPECT_RC(pthread_rwlock_rdlock(&r), 0);
			}
			step("kind %d: T's timedwrlock times out", kinds[k]);
			W_EXPECT(&t, OP_TIMEDWR, &r, 50, ETIMEDOUT);
			step("kind %d: destroy of r while the caller %s-holds it", kinds[k],
			     write ? "write" : "read");
			EXPECT_RC(pthread_rwlock_destroy(&r), 0);
		}
	}
	step("init r again after destroying it held");
	EXPECT_RC(pthread_rwlock_init(&r, NULL), 0);
	use_as_fresh(&r, "after destroy+init");
	step("T uses r");
	W_EXPECT(&t, OP_TIMEDWR, &r, 1000, 0);
	W_EXPECT(&t, OP_UNLOCK, &r, 0, 0);
	note("destroy returned 0 for read- and write-held locks of both kinds; init made r usable");
}

/* ------------------------------------------------------------------ */
/* 5. errno                                                             */
/* ------------------------------------------------------------------ */

#define ERRNO_SENTINEL 4242
#define ERRNO_THREADS 8

static pthread_rwlock_t errno_locks[2];
static atomic_bool errno_stop;
static atomic_long errno_calls, errno_changes;
static atomic_flag errno_first_taken = ATOMIC_FLAG_INIT;
static char errno_first[200];

static void errno_record(const char *call, int rc, int e)
{
	atomic_fetch_add(&errno_changes, 1);
	if (!atomic_flag_test_and_set(&errno_first_taken))
		snprintf(errno_first, sizeof(errno_first), "%s returned %s and set errno to %d (%s)",
			 call, errname(rc), e, e == ERRNO_SENTINEL ? "?" : errname(e));
}

#define ERRNO_CALL(name, expr)                                                \
	({                                                                    \
		errno = ERRNO_SENTINEL;                                       \
		int rc_ = (expr);                                             \
		int e_ = errno;                                               \
		atomic_fetch_add_explicit(&errno_calls, 1, memory_order_relaxed); \
		if (e_ != ERRNO_SENTINEL)                                     \
			errno_record(name, rc_, e_);                          \
		rc_;                                                          \
	})

static void *errno_worker(void *arg)
{
	uint32_t x = (uint32_t)(uintptr_t)arg * 2654435761u + 1;

	while (!atomic_load_explicit(&errno_stop, memory_order_relaxed)) {
		pthread_rwlock_t *l;
		struct timespec t;
		int rc = 0;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		l = &errno_locks[x & 1];
		/* deadlines 0..255 us ahead: many time out */
		t = ts_now(CLOCK_REALTIME);
		t.tv_nsec += (long)((x >> 8) & 255) * 1000;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		switch ((x >> 1) % 9) {
		case 0: case 1: rc = ERRNO_CALL("rdlock", pthread_rwlock_rdlock(l)); break;
		case 2: rc = ERRNO_CALL("wrlock", pthread_rwlock_wrlock(l)); break;
		case 3: rc = ERRNO_CALL("tryrdlock", pthread_rwlock_tryrdlock(l)); break;
		case 4: rc = ERRNO_CALL("trywrlock", pthread_rwlock_trywrlock(l)); break;
		case 5: rc = ERRNO_CALL("timedrdlock", pthread_rwlock_timedrdlock(l, &t)); break;
		case 6: rc = ERRNO_CALL("timedwrlock", pthread_rwlock_timedwrlock(l, &t)); break;
		case 7: {
			struct timespec m = ts_add_ms(ts_now(CLOCK_MONOTONIC), 0);

			m.tv_nsec += (long)((x >> 8) & 255) * 1000;
			if (m.tv_nsec >= 1000000000L) {
				m.tv_sec++;
				m.tv_nsec -= 1000000000L;
			}
			rc = (x & 0x100000) ?
			     ERRNO_CALL("clockrdlock", pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, &m)) :
			     ERRNO_CALL("clockwrlock", pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &m));
			break;
		}
		case 8: {
			/* a read re-entry, then two unlocks */
			rc = ERRNO_CALL("rdlock", pthread_rwlock_rdlock(l));
			if (rc == 0 && ERRNO_CALL("tryrdlock (re-entry)", pthread_rwlock_tryrdlock(l)) == 0)
				ERRNO_CALL("unlock", pthread_rwlock_unlock(l));
			break;
		}
		}
		if (rc == 0) {
			for (int i = (x >> 20) & 15; i > 0; i--)
				cpu_spin_hint();
			ERRNO_CALL("unlock", pthread_rwlock_unlock(l));
		}
	}
	return NULL;
}

static void errno_unchanged_by_every_call(void)
{
	pthread_t th[ERRNO_THREADS];
	long kills = 0;

	step("init, warm-up");
	for (int i = 0; i < 2; i++) {
		EXPECT_RC(pthread_rwlock_init(&errno_locks[i], NULL), 0);
		EXPECT_RC(warm(&errno_locks[i]), 0);
	}
	install(SIGUSR1, count_signal);
	step("%d threads for 1 s, SIGUSR1 every 100 us", ERRNO_THREADS);
	for (int i = 0; i < ERRNO_THREADS; i++)
		if (pthread_create(&th[i], NULL, errno_worker, (void *)(uintptr_t)(i + 1)) != 0)
			fail("pthread_create failed");
	struct timespec start = ts_now(CLOCK_MONOTONIC);

	while (ms_since(start) < 1000) {
		pthread_kill(th[kills++ % ERRNO_THREADS], SIGUSR1);
		struct timespec d = { 0, 100000 };

		nanosleep(&d, NULL);
	}
	atomic_store(&errno_stop, true);
	step("joining the threads");
	for (int i = 0; i < ERRNO_THREADS; i++)
		pthread_join(th[i], NULL);
	if (atomic_load(&errno_changes))
		fail("errno changed by %ld of %ld calls (%d signals); first: %s",
		     atomic_load(&errno_changes), atomic_load(&errno_calls),
		     atomic_load(&signals_seen), errno_first);
	note("%ld calls, %d signals, errno never changed", atomic_load(&errno_calls),
	     atomic_load(&signals_seen));
}

/* ------------------------------------------------------------------ */
/* 6. Signal handlers that take rwlocks                                 */
/* ------------------------------------------------------------------ */

static pthread_rwlock_t sig_lock;
static atomic_int handler_rc = -1;

static void handler_timedrdlock(int sig)
{
	int saved = errno;
	int rc;

	(void)sig;
	rc = timedrd(&sig_lock, 200);
	atomic_store(&handler_rc, rc);
	if (rc == 0)
		pthread_rwlock_unlock(&sig_lock);
	errno = saved;
}

#define T_LOCKS 10     /* the interrupted thread's locks */
#define T_KEEP 6       /* ... held across the whole run */
#define H_LOCKS 40     /* the handler's: the held list grows past 32 */

static pthread_rwlock_t t_locks[T_LOCKS], h_locks[H_LOCKS];
static atomic_int grow_errors;
static char grow_first[200];
static atomic_flag grow_first_taken = ATOMIC_FLAG_INIT;
static atomic_bool grow_keep_going;
static atomic_bool grow_hold_at_end;
static atomic_bool grow_in_loop;       /* T is in its rdlock/unlock loop */
static atomic_int grow_phase; /* 1: T holds its kept locks; 2: T may release */

static void grow_error(const char *what, int i, int rc)
{
	atomic_fetch_add(&grow_errors, 1);
	if (!atomic_flag_test_and_set(&grow_first_taken))
		snprintf(grow_first, sizeof(grow_first), "%s of lock %d returned %s", what, i,
			 errname(rc));
}

static void handler_takes_many_locks(int sig)
{
	int saved = errno;
	int rc;

	(void)sig;
	for (int i = 0; i < H_LOCKS; i++)
		if ((rc = pthread_rwlock_rdlock(&h_locks[i])) != 0)
			grow_error("handler rdlock", i, rc);
	/* release in another order than taken */
	for (int k = 0; k < H_LOCKS; k++) {
		int i = (k * 7) % H_LOCKS;

		if ((rc = pthread_rwlock_unlock(&h_locks[i])) != 0)
			grow_error("handler unlock", i, rc);
	}
	atomic_fetch_add(&signals_seen, 1);
	errno = saved;
}

static void *interrupted_thread(void *arg)
{
	int rc;

	(void)arg;
	for (int i = 0; i < T_KEEP; i++)
		if ((rc = pthread_rwlock_rdlock(&t_locks[i])) != 0)
			grow_error("T rdlock", i, rc);
	while (atomic_load(&grow_keep_going)) {
		static const int order[] = { 8, 6, 9, 7 };

		atomic_store_explicit(&grow_in_loop, true, memory_order_relaxed);

		for (int i = T_KEEP; i < T_LOCKS; i++)
			if ((rc = pthread_rwlock_rdlock(&t_locks[i])) != 0)
				grow_error("T rdlock", i, rc);
		for (int k = 0; k < (int)NELEM(order); k++)
			if ((rc = pthread_rwlock_unlock(&t_locks[order[k]])) != 0)
				grow_error("T unlock", order[k], rc);
	}
	if (atomic_load(&grow_hold_at_end)) {
		atomic_store(&grow_phase, 1);
		while (atomic_load(&grow_phase) != 2)
			sleep_ms(1);
	}
	for (int i = 0; i < T_KEEP; i++)
		if ((rc = pthread_rwlock_unlock(&t_locks[i])) != 0)
			grow_error("T unlock", i, rc);
	return NULL;
}

static void signal_handler_read_locks_lock_being_acquired(void)
{
	static struct worker t;
	int rc;

	/* (a) the handler read-locks the lock its thread is blocked on */
	step("init; main write-locks L; T blocks in rdlock(L)");
	EXPECT_RC(pthread_rwlock_init(&sig_lock, NULL), 0);
	install(SIGUSR1, handler_timedrdlock);
	w_start(&t, "T");
	W_EXPECT(&t, OP_WARM, &sig_lock, 0, 0);
	EXPECT_RC(pthread_rwlock_wrlock(&sig_lock), 0);
	w_post(&t, OP_RD, &sig_lock, 0);
	sleep_ms(100);
	if (w_wait(&t, 0, &rc))
		fail("T's rdlock returned %s while main write-held L", errname(rc));
	step("SIGUSR1 to T; its handler calls timedrdlock(L, 200 ms)");
	pthread_kill(t.th, SIGUSR1);
	for (int i = 0; i < 2000 && atomic_load(&handler_rc) == -1; i++)
		sleep_ms(1);
	rc = atomic_load(&handler_rc);
	if (rc == -1)
		fail("the handler's timedrdlock(L, 200 ms) did not return within 2 s");
	if (rc != ETIMEDOUT)
		fail("the handler's timedrdlock(L) returned %s while main write-held L "
		     "(glibc: ETIMEDOUT: the writer still holds it)", errname(rc));
	step("main unlocks; T's rdlock returns");
	EXPECT_RC(pthread_rwlock_unlock(&sig_lock), 0);
	if (!w_wait(&t, 2000, &rc) || rc != 0)
		fail("T's rdlock did not return 0 within 2 s of the writer's unlock");
	W_EXPECT(&t, OP_UNLOCK, &sig_lock, 0, 0);
	step("a writer gets L");
	EXPECT_RC(timedwr(&sig_lock, 1000), 0);
	EXPECT_RC(pthread_rwlock_unlock(&sig_lock), 0);
	w_exit(&t);
	note("the handler's timedrdlock timed out while the writer held L");
}

/*
 * Handlers that take and release many locks while the interrupted thread
 * is inside rdlock or unlock of others: the thread's own holds must all
 * survive (still held, then released by its unlocks).
 */
static void signal_handler_taking_many_locks_loses_no_hold(void)
{
	int rc;
	long threads = 0, signals = 0;

	step("init and warm up %d + %d locks", T_LOCKS, H_LOCKS);
	for (int i = 0; i < T_LOCKS; i++) {
		EXPECT_RC(pthread_rwlock_init(&t_locks[i], NULL), 0);
		EXPECT_RC(warm(&t_locks[i]), 0);
	}
	for (int i = 0; i < H_LOCKS; i++) {
		EXPECT_RC(pthread_rwlock_init(&h_locks[i], NULL), 0);
		EXPECT_RC(warm(&h_locks[i]), 0);
	}
	install(SIGUSR2, handler_takes_many_locks);
	atomic_store(&signals_seen, 0);
	struct timespec start = ts_now(CLOCK_MONOTONIC);

	/* Fresh threads: each starts with an empty held list, so the first
	 * signal's handler makes it grow while the thread is mid-call. */
	while (ms_since(start) < 500 || threads < 20) {
		pthread_t th;
		bool last = ms_since(start) >= 500 && threads >= 19;

		step("thread %ld: rdlock/unlock of its locks while SIGUSR2 handlers take %d others",
		     threads, H_LOCKS);
		atomic_store(&grow_keep_going, true);
		atomic_store(&grow_hold_at_end, last);
		atomic_store(&grow_phase, 0);
		atomic_store(&grow_in_loop, false);
		if (pthread_create(&th, NULL, interrupted_thread, NULL) != 0)
			fail("pthread_create failed");
		/* The first signal must find T mid-call, with a list to grow. */
		for (int i = 0; i < 2000000 && !atomic_load(&grow_in_loop); i++)
			sched_yield();
		for (int i = 0; i < 8; i++) {
			pthread_kill(th, SIGUSR2);
			signals++;
			struct timespec d = { 0, 200000 };

			nanosleep(&d, NULL);
		}
		atomic_store(&grow_keep_going, false);
		threads++;
		if (last) {
			step("the last thread holds its %d kept locks: writers must time out", T_KEEP);
			for (int i = 0; i < 2000 && atomic_load(&grow_phase) != 1; i++)
				sleep_ms(1);
			if (atomic_load(&grow_phase) != 1)
				fail("the last thread did not get to hold its locks within 2 s");
			for (int i = 0; i < T_KEEP; i++) {
				rc = pthread_rwlock_trywrlock(&t_locks[i]);
				if (rc == 0)
					fail("trywrlock of kept lock %d returned 0 while the "
					     "thread read-held it (a lost hold)", i);
			}
			atomic_store(&grow_phase, 2);
		}
		pthread_join(th, NULL);
		if (atomic_load(&grow_errors))
			break;
	}
	if (atomic_load(&grow_errors))
		fail("%d errors in %ld threads, %ld signals; first: %s", atomic_load(&grow_errors),
		     threads, signals, grow_first);
	step("every lock must be free: a writer gets each within 1 s");
	for (int i = 0; i < T_LOCKS; i++) {
		rc = timedwr(&t_locks[i], 1000);
		if (rc != 0)
			fail("a writer's timedwrlock of the thread's lock %d returned %s after "
			     "every thread released everything (%ld threads, %ld signals)",
			     i, errname(rc), threads, signals);
		EXPECT_RC(pthread_rwlock_unlock(&t_locks[i]), 0);
	}
	for (int i = 0; i < H_LOCKS; i++) {
		rc = timedwr(&h_locks[i], 1000);
		if (rc != 0)
			fail("a writer's timedwrlock of the handler's lock %d returned %s after "
			     "every handler released everything", i, errname(rc));
		EXPECT_RC(pthread_rwlock_unlock(&h_locks[i]), 0);
	}
	note("%ld threads, %ld signals (%d handled), no lost hold", threads, signals,
	     atomic_load(&signals_seen));
}

/* ------------------------------------------------------------------ */
/* 7. unlock of a read lock by another thread                           */
/* ------------------------------------------------------------------ */

static void unlock_by_other_thread_releases_read_lock(void)
{
	pthread_rwlock_t l;
	static struct worker a, b, c, w;

	EXPECT_RC(pthread_rwlock_init(&l, NULL), 0);
	w_start(&a, "A");
	w_start(&b, "B");
	w_start(&c, "C");
	w_start(&w, "W");

	step("A warms up and read-locks L; B unlocks it");
	W_EXPECT(&a, OP_WARM, &l, 0, 0);
	W_EXPECT(&a, OP_RD, &l, 0, 0);
	W_EXPECT(&b, OP_UNLOCK, &l, 0, 0);
	step("after B's unlock of A's read lock, W's timedwrlock (1 s)");
	W_EXPECT(&w, OP_TIMEDWR, &l, 1000, 0);
	W_EXPECT(&w, OP_UNLOCK, &l, 0, 0);

	step("A read-locks L again (must really lock)");
	W_EXPECT(&a, OP_WARM, &l, 0, 0);
	W_EXPECT(&a, OP_RD, &l, 0, 0);
	step("W's timedwrlock (100 ms) while A read-holds L the second time");
	W_EXPECT(&w, OP_TIMEDWR, &l, 100, ETIMEDOUT);
	step("B unlocks A's second read lock; W's timedwrlock (1 s)");
	W_EXPECT(&b, OP_UNLOCK, &l, 0, 0);
	W_EXPECT(&w, OP_TIMEDWR, &l, 1000, 0);
	W_EXPECT(&w, OP_UNLOCK, &l, 0, 0);

	step("A and C read-lock L; B unlocks once");
	W_EXPECT(&a, OP_WARM, &l, 0, 0);
	W_EXPECT(&c, OP_WARM, &l, 0, 0);
	W_EXPECT(&a, OP_RD, &l, 0, 0);
	W_EXPECT(&c, OP_RD, &l, 0, 0);
	W_EXPECT(&b, OP_UNLOCK, &l, 0, 0);
	step("W's timedwrlock (100 ms) while one read hold is left");
	W_EXPECT(&w, OP_TIMEDWR, &l, 100, ETIMEDOUT);
	step("C unlocks; W's timedwrlock (1 s)");
	W_EXPECT(&c, OP_UNLOCK, &l, 0, 0);
	W_EXPECT(&w, OP_TIMEDWR, &l, 1000, 0);
	W_EXPECT(&w, OP_UNLOCK, &l, 0, 0);
	note("B's unlock released one read hold each time; A's second rdlock really locked");
}

/* ------------------------------------------------------------------ */
/* 8. LTP timedrdlock/6-2, timedwrlock/6-2                              */
/* ------------------------------------------------------------------ */

static void timed_wait_interrupted_by_signal_then_destroy(void)
{
	for (int write = 0; write < 2; write++) {
		pthread_rwlock_t l;
		static struct worker t;
		enum op op = write ? OP_TIMEDWR : OP_TIMEDRD;
		int rc;

		step("%s: main write-locks L; T calls %s (500 ms)", op_name[op], op_name[op]);
		EXPECT_RC(pthread_rwlock_init(&l, NULL), 0);
		install(SIGUSR1, count_signal);
		atomic_store(&signals_seen, 0);
		w_start(&t, "T");
		W_EXPECT(&t, OP_WARM, &l, 0, 0);
		EXPECT_RC(pthread_rwlock_wrlock(&l), 0);
		w_post(&t, op, &l, 500);
		sleep_ms(150);
		step("%s: SIGUSR1 to T while it waits", op_name[op]);
		pthread_kill(t.th, SIGUSR1);
		if (!w_wait(&t, 2500, &rc))
			fail("T's %s (500 ms) did not return within 2.5 s", op_name[op]);
		if (atomic_load(&signals_seen) != 1)
			fail("T's handler ran %d times, expected once", atomic_load(&signals_seen));
		if (rc != ETIMEDOUT)
			fail("T's %s returned %s after a signal, expected ETIMEDOUT", op_name[op],
			     errname(rc));
		long long early = ts_diff_ns(t.deadline, t.returned);

		if (early > 0)
			fail("T's %s returned ETIMEDOUT %lld us before its deadline", op_name[op],
			     early / 1000);
		step("%s: main unlocks and destroys L", op_name[op]);
		EXPECT_RC(pthread_rwlock_unlock(&l), 0);
		EXPECT_RC(pthread_rwlock_destroy(&l), 0);
		w_exit(&t);
	}
	note("both timed waits went on after the signal, timed out at the deadline; destroy 0");
}

/*
 * LTP open_posix_testsuite pthread_rwlock_timed{rd,wr}lock/6-2: T blocks
 * in a timed lock on a write-held lock; its signal handler sleeps past
 * T's deadline while main unlocks; T must then get the lock (no
 * ETIMEDOUT), and exits without unlocking; main's destroy of the lock T
 * left held must return 0 (glibc's destroy checks nothing).
 */
static atomic_int ltp_handler_state;

static void ltp_sleepy_handler(int sig)
{
	int saved = errno;

	(void)sig;
	atomic_store(&ltp_handler_state, 2);
	sleep_ms(600); /* twice T's timeout */
	atomic_store(&ltp_handler_state, 3);
	errno = saved;
}

struct ltp_thread {
	pthread_rwlock_t *l;
	bool write;
	atomic_int state; /* 1 waiting, 2 returned */
	int rc;
};

static void *ltp_thread_main(void *arg)
{
	struct ltp_thread *t = arg;
	struct timespec abs = ts_add_ms(ts_now(CLOCK_REALTIME), 300);

	atomic_store(&t->state, 1);
	t->rc = t->write ? pthread_rwlock_timedwrlock(t->l, &abs)
			 : pthread_rwlock_timedrdlock(t->l, &abs);
	atomic_store(&t->state, 2);
	return NULL; /* exits holding the lock */
}

static void timed_lock_resumed_after_handler_then_destroy_of_lock_left_held(void)
{
	for (int write = 0; write < 2; write++) {
		static pthread_rwlock_t l;
		struct ltp_thread t = { &l, write != 0, 0, -1 };
		pthread_t th;

		step("%s: main write-locks L; T blocks in a 300 ms timed lock",
		     write ? "timedwrlock" : "timedrdlock");
		EXPECT_RC(pthread_rwlock_init(&l, NULL), 0);
		install(SIGUSR1, ltp_sleepy_handler);
		atomic_store(&ltp_handler_state, 1);
		EXPECT_RC(pthread_rwlock_wrlock(&l), 0);
		if (pthread_create(&th, NULL, ltp_thread_main, &t) != 0)
			fail("pthread_create failed");
		while (atomic_load(&t.state) != 1)
			sleep_ms(1);
		sleep_ms(100);
		step("SIGUSR1 to T; its handler sleeps 600 ms; main unlocks meanwhile");
		pthread_kill(th, SIGUSR1);
		while (atomic_load(&ltp_handler_state) != 2)
			sleep_ms(1);
		EXPECT_RC(pthread_rwlock_unlock(&l), 0);
		pthread_join(th, NULL);
		if (t.rc != 0)
			fail("T's %s returned %s after its handler, expected 0 (the lock was "
			     "free when the handler returned)", write ? "timedwrlock" : "timedrdlock",
			     errname(t.rc));
		step("T exited holding L; main destroys L");
		EXPECT_RC(pthread_rwlock_destroy(&l), 0);
	}
	note("both timed locks got the lock after the handler; destroy of the lock left held: 0");
}

/* ------------------------------------------------------------------ */
/* 9. CPU burnt by a blocked writer                                     */
/* ------------------------------------------------------------------ */

static void waiting_writer_does_not_burn_cpu(void)
{
	pthread_rwlock_t l;
	static struct worker r, w;
	long long t0, t1;
	int rc;

	EXPECT_RC(pthread_rwlock_init(&l, NULL), 0);
	w_start(&r, "R");
	w_start(&w, "W");
	step("R warms up and read-locks L");
	W_EXPECT(&r, OP_WARM, &l, 0, 0);
	W_EXPECT(&r, OP_RD, &l, 0, 0);
	step("W waits in wrlock for 1 s");
	t0 = thread_cpu_ns(w.th);
	w_post(&w, OP_WR, &l, 0);
	sleep_ms(1000);
	if (w_wait(&w, 0, &rc))
		fail("W's wrlock returned %s while R read-held L", errname(rc));
	t1 = thread_cpu_ns(w.th);
	step("R unlocks; W gets in");
	W_EXPECT(&r, OP_UNLOCK, &l, 0, 0);
	if (!w_wait(&w, 2000, &rc) || rc != 0)
		fail("W's wrlock did not return 0 within 2 s of R's unlock");
	W_EXPECT(&w, OP_UNLOCK, &l, 0, 0);
	if (t0 < 0 || t1 < 0)
		fail("cannot read W's CPU clock");
	if (t1 - t0 > 200000000LL)
		fail("W used %lld ms of CPU while blocked 1 s in wrlock (limit 200)",
		     (t1 - t0) / 1000000);
	note("W used %lld ms of CPU while blocked 1 s", (t1 - t0) / 1000000);
}

/* ------------------------------------------------------------------ */
/* 10. unlock of an unlocked lock                                       */
/* ------------------------------------------------------------------ */

static void unlock_by_non_holder_of_unlocked_lock_returns_zero(void)
{
	pthread_rwlock_t l1, l2, other;
	static struct worker b;

	step("main unlocks a fresh lock it never locked");
	EXPECT_RC(pthread_rwlock_init(&l1, NULL), 0);
	EXPECT_RC(pthread_rwlock_unlock(&l1), 0);
	step("B, holding another lock, unlocks a warmed-up lock nobody holds");
	EXPECT_RC(pthread_rwlock_init(&l2, NULL), 0);
	EXPECT_RC(pthread_rwlock_init(&other, NULL), 0);
	EXPECT_RC(warm(&l2), 0);
	w_start(&b, "B");
	W_EXPECT(&b, OP_RD, &other, 0, 0);
	W_EXPECT(&b, OP_UNLOCK, &l2, 0, 0);
	W_EXPECT(&b, OP_UNLOCK, &other, 0, 0);
	note("0 both times");
}

/* [libbravo] glibc corrupts its lock here (the reader count wraps). */
static void unlock_of_unlocked_lock_leaves_it_usable(void)
{
	pthread_rwlock_t l;
	static struct worker b;

	EXPECT_RC(pthread_rwlock_init(&l, NULL), 0);
	EXPECT_RC(warm(&l), 0);
	w_start(&b, "B");
	step("B unlocks a lock nobody holds");
	w_call(&b, OP_UNLOCK, &l, 0, 0);
	step("main uses the lock");
	EXPECT_RC(timedwr(&l, 1000), 0);
	EXPECT_RC(pthread_rwlock_unlock(&l), 0);
	use_as_fresh(&l, "main");
	step("B: timedwrlock");
	W_EXPECT(&b, OP_TIMEDWR, &l, 1000, 0);
	step("main: timedrdlock while B write-holds (100 ms)");
	EXPECT_RC(timedrd(&l, 100), ETIMEDOUT);
	W_EXPECT(&b, OP_UNLOCK, &l, 0, 0);
	note("the lock works as before");
}

/* ------------------------------------------------------------------ */
/* Strict mode (BRAVO_CHECK=1, under a variant only)                    */
/* ------------------------------------------------------------------ */

/* stderr goes to a temporary file for the rest of the check. */
static FILE *capture_stderr(void)
{
	FILE *f = tmpfile();

	if (!f)
		fail("tmpfile: %s", strerror(errno));
	fflush(stderr);
	if (dup2(fileno(f), 2) < 0)
		fail("dup2: %s", strerror(errno));
	return f;
}

/* The captured stderr has a "libbravo:" line naming lock l. */
static void expect_line_naming(FILE *f, const void *l, const char *what)
{
	char addr[32], line[512];
	bool found = false;

	snprintf(addr, sizeof(addr), "%p", l);
	fflush(stderr);
	rewind(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "libbravo:") && strstr(line, addr))
			found = true;
	if (!found) {
		rewind(f);
		line[0] = '\0';
		if (!fgets(line, sizeof(line), f))
			strcpy(line, "(nothing)");
		line[strcspn(line, "\n")] = '\0';
		fail("%s: no stderr line with \"libbravo:\" and %s; first line: %s", what, addr, line);
	}
	if (ftruncate(fileno(f), 0) != 0)
		fail("ftruncate: %s", strerror(errno));
	rewind(f);
}

static void strict_destroy_of_held_lock_returns_ebusy_and_names_the_lock(void)
{
	FILE *f = capture_stderr();
	pthread_rwlock_t l;
	static struct worker w;

	w_start(&w, "W");
	for (int write = 0; write < 2; write++) {
		step("strict: destroy of a lock the caller %s-holds", write ? "write" : "read");
		EXPECT_RC(pthread_rwlock_init(&l, NULL), 0);
		EXPECT_RC(warm(&l), 0);
		EXPECT_RC(write ? pthread_rwlock_wrlock(&l) : pthread_rwlock_rdlock(&l), 0);
		EXPECT_RC(pthread_rwlock_destroy(&l), EBUSY);
		expect_line_naming(f, &l, sh->step);
		step("strict: the lock is still held after the refused destroy");
		W_EXPECT(&w, OP_TIMEDWR, &l, 50, ETIMEDOUT);
		EXPECT_RC(pthread_rwlock_unlock(&l), 0);
		W_EXPECT(&w, OP_TIMEDWR, &l, 1000, 0);
		W_EXPECT(&w, OP_UNLOCK, &l, 0, 0);
		EXPECT_RC(pthread_rwlock_destroy(&l), 0);
	}
	note("EBUSY and a line naming the lock, read- and write-held");
}

static void strict_unlock_by_non_holder_returns_eperm_and_names_the_lock(void)
{
	FILE *f = capture_stderr();
	pthread_rwlock_t l, free_lock;
	static struct worker a, w;

	EXPECT_RC(pthread_rwlock_init(&l, NULL), 0);
	w_start(&a, "A");
	w_start(&w, "W");
	step("strict: A read-holds L; main unlocks it");
	W_EXPECT(&a, OP_WARM, &l, 0, 0);
	W_EXPECT(&a, OP_RD, &l, 0, 0);
	EXPECT_RC(pthread_rwlock_unlock(&l), EPERM);
	expect_line_naming(f, &l, sh->step);
	step("strict: nothing was released: W's timedwrlock (100 ms)");
	W_EXPECT(&w, OP_TIMEDWR, &l, 100, ETIMEDOUT);
	W_EXPECT(&a, OP_UNLOCK, &l, 0, 0);
	W_EXPECT(&w, OP_TIMEDWR, &l, 1000, 0);
	step("strict: W write-holds L; main unlocks it");
	EXPECT_RC(pthread_rwlock_unlock(&l), EPERM);
	expect_line_naming(f, &l, sh->step);
	W_EXPECT(&w, OP_UNLOCK, &l, 0, 0);
	step("strict: unlock of a lock nobody holds");
	EXPECT_RC(pthread_rwlock_init(&free_lock, NULL), 0);
	EXPECT_RC(pthread_rwlock_unlock(&free_lock), EPERM);
	expect_line_naming(f, &free_lock, sh->step);
	EXPECT_RC(timedwr(&free_lock, 1000), 0);
	EXPECT_RC(pthread_rwlock_unlock(&free_lock), 0);
	note("EPERM and a line naming the lock; nothing released");
}

/* ------------------------------------------------------------------ */
/* The table, expected differences, the runner                          */
/* ------------------------------------------------------------------ */

struct check {
	const char *name;
	void (*fn)(void);
	int limit_s;       /* the watchdog */
	bool libbravo_only; /* a promise beyond glibc: SKIP natively */
};

#define CHECK(fn, limit) { #fn, fn, limit, false }

static const struct check checks[] = {
	CHECK(reader_enters_while_writer_waits, 5),
	CHECK(fresh_after_atfork_reinit, 5),
	CHECK(fresh_after_zero_of_lock_held_by_exited_thread, 4),
	CHECK(destroy_of_held_lock_returns_zero, 4),
	CHECK(errno_unchanged_by_every_call, 5),
	CHECK(signal_handler_read_locks_lock_being_acquired, 4),
	CHECK(signal_handler_taking_many_locks_loses_no_hold, 5),
	CHECK(unlock_by_other_thread_releases_read_lock, 5),
	CHECK(timed_wait_interrupted_by_signal_then_destroy, 6),
	CHECK(timed_lock_resumed_after_handler_then_destroy_of_lock_left_held, 5),
	CHECK(waiting_writer_does_not_burn_cpu, 5),
	CHECK(unlock_by_non_holder_of_unlocked_lock_returns_zero, 3),
	{ "unlock_of_unlocked_lock_leaves_it_usable", unlock_of_unlocked_lock_leaves_it_usable, 4, true },
};

static const struct check strict_checks[] = {
	CHECK(strict_destroy_of_held_lock_returns_ebusy_and_names_the_lock, 4),
	CHECK(strict_unlock_by_non_holder_returns_eperm_and_names_the_lock, 4),
};

/* Where a variant is specified to behave otherwise than glibc. */
static const struct {
	const char *check, *variant, *reason;
} differences[] = {
	{ "reader_enters_while_writer_waits", "ba",
	  "BA is phase-fair: a waiting writer holds off new readers" },
	{ "reader_enters_while_writer_waits", "bravo-ba",
	  "BRAVO-BA's underlying lock is BA, phase-fair: a waiting writer holds off new readers" },
	{ "reader_enters_while_writer_waits", "percpu",
	  "Per-CPU is one BA per CPU, phase-fair: a waiting writer holds off new readers" },
	{ "reader_enters_while_writer_waits", "cohort-rw",
	  "Cohort-RW (C-RW-WP) prefers writers: a waiting writer holds off new readers" },
};

static bool run_check(const struct check *c)
{
	pid_t pid;
	int status;
	long waited = 0, limit = c->limit_s * 1000L;
	char why[1100];

	memset(sh, 0, sizeof(*sh));
	strcpy(sh->step, "start");
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		printf("FAIL %s: fork: %s\n", c->name, strerror(errno));
		return false;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm((unsigned)c->limit_s + 5); /* if this watchdog itself is gone */
		c->fn();
		fflush(NULL);
		_exit(0);
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (waited >= limit) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			printf("FAIL %s: hung: no result within %d s; last step: %s\n", c->name,
			       c->limit_s, sh->step);
			return false;
		}
		sleep_ms(5);
		waited += 5;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("PASS %s: %s\n", c->name, sh->detail[0] ? sh->detail : "ok");
		return true;
	}
	if (WIFEXITED(status))
		snprintf(why, sizeof(why), "%s", sh->detail[0] ? sh->detail : "exit status 1");
	else
		snprintf(why, sizeof(why), "killed by signal %d (%s); last step: %s",
			 WTERMSIG(status), strsignal(WTERMSIG(status)), sh->step);
	printf("FAIL %s: %s\n", c->name, why);
	return false;
}

static bool selected(const char *name, int argc, char **argv, int first)
{
	if (first >= argc)
		return true;
	for (int i = first; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	const struct check *set = checks;
	size_t n = NELEM(checks);
	int first = 1, passed = 0, failed = 0;

	if (argc > 1 && strcmp(argv[1], "--differences") == 0) {
		for (size_t i = 0; i < NELEM(differences); i++)
			printf("%s %s %s\n", differences[i].check, differences[i].variant,
			       differences[i].reason);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < NELEM(checks); i++)
			printf("%s\n", checks[i].name);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--strict") == 0) {
		set = strict_checks;
		n = NELEM(strict_checks);
		first = 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	rwlock_lib_require("dropin"); /* which library answered (EXPECT_RWLOCK_LIB) */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (size_t i = 0; i < n; i++) {
		if (!selected(set[i].name, argc, argv, first))
			continue;
		if (set[i].libbravo_only && under_glibc()) {
			printf("SKIP %s: a promise beyond glibc (glibc breaks its own lock here)\n",
			       set[i].name);
			continue;
		}
		if (run_check(&set[i]))
			passed++;
		else
			failed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
