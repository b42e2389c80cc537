/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * signal_storm.c - waiters blocked in rwlock calls, bombarded with signals.
 *
 * A SIGUSR1 handler is installed without SA_RESTART, so every signal
 * interrupts the futex (or other) wait inside the lock call with EINTR.
 * POSIX: the pthread_rwlock_* functions shall not return EINTR; a waiter
 * must go back to waiting, must not lose the wake-up that comes while it
 * is in its handler, and a timed waiter must still time out, and not
 * before its deadline.  (No upper bound is asserted on how late it
 * returns: the driver's timeout catches a waiter that never does.)
 */
#include "torture.h"

enum op { RD, TIMEDRD, CLOCKRD, WR, TIMEDWR, CLOCKWR, NOPS };

static const char *const op_name[NOPS] = {
	"rdlock", "timedrdlock", "clockrdlock", "wrlock", "timedwrlock", "clockwrlock",
};

#define MAX_WAITERS 64

/* Signals each waiter received (its index is in TLS; -1: not a waiter). */
static atomic_int signals_got[MAX_WAITERS];
static __thread int waiter_index = -1;

static void on_signal(int sig)
{
	int i = waiter_index;

	(void)sig;
	if (i >= 0)
		atomic_fetch_add(&signals_got[i], 1); /* lock-free: async-signal-safe */
}

static void install_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: interrupted system calls fail with EINTR */
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
}

struct waiter {
	int index;
	pthread_rwlock_t *lock;
	struct guarded *g;
	enum op op;
	long timeout_ms;        /* deadline from the start of the call */
	atomic_int started;
	atomic_int rc;          /* -1 until the call returned */
	atomic_int done;
	struct timespec deadline;
	long long late_ns;      /* return time minus deadline, for ETIMEDOUT */
};

static bool op_writes(enum op op)
{
	return op >= WR;
}

static clockid_t op_clock(enum op op)
{
	return op == CLOCKRD || op == CLOCKWR ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	clockid_t c = op_clock(w->op);
	int rc;

	waiter_index = w->index;
	w->deadline = ts_add_ms(ts_now(c), w->timeout_ms);
	atomic_store(&w->started, 1);
	switch (w->op) {
	case RD: rc = pthread_rwlock_rdlock(w->lock); break;
	case TIMEDRD: rc = pthread_rwlock_timedrdlock(w->lock, &w->deadline); break;
	case CLOCKRD: rc = pthread_rwlock_clockrdlock(w->lock, c, &w->deadline); break;
	case WR: rc = pthread_rwlock_wrlock(w->lock); break;
	case TIMEDWR: rc = pthread_rwlock_timedwrlock(w->lock, &w->deadline); break;
	default: rc = pthread_rwlock_clockwrlock(w->lock, c, &w->deadline); break;
	}
	w->late_ns = ts_diff_ns(ts_now(c), w->deadline);
	atomic_store(&w->rc, rc);
	if (rc == 0) {
		if (op_writes(w->op)) {
			guarded_write_enter(w->g);
			guarded_write_update(w->g, true);
			guarded_write_leave(w->g);
		} else {
			guarded_read_enter(w->g);
			guarded_read_check(w->g);
			guarded_read_leave(w->g);
		}
		CHECK_RC(pthread_rwlock_unlock(w->lock), 0);
	}
	atomic_store(&w->done, 1);
	return NULL;
}

/* ---- the bombarder: SIGUSR1 to every waiter not yet done, round after round ---- */

struct storm {
	struct waiter *w;
	pthread_t *th;
	int n;
	atomic_int stop;
	atomic_long sent;
};

static void *storm_main(void *arg)
{
	struct storm *s = arg;

	while (!atomic_load(&s->stop)) {
		for (int i = 0; i < s->n; i++) {
			if (atomic_load(&s->w[i].done))
				continue; /* joined threads must not be signalled */
			if (pthread_kill(s->th[i], SIGUSR1) == 0)
				atomic_fetch_add(&s->sent, 1);
		}
		sched_yield();
	}
	return NULL;
}

/*
 * Read-lock l after reading it a few times first: an implementation that
 * biases a lock towards readers (BRAVO) then lets this reader in through
 * its fast path, so writers wait in the revocation, not on the lock.
 */
static void read_lock_warm(pthread_rwlock_t *l)
{
	for (int i = 0; i < 3; i++) {
		CHECK_RC(pthread_rwlock_rdlock(l), 0);
		CHECK_RC(pthread_rwlock_unlock(l), 0);
	}
	CHECK_RC(pthread_rwlock_rdlock(l), 0);
}

static void start_waiters(struct waiter *w, pthread_t *th, int n, pthread_rwlock_t *wheld,
			  pthread_rwlock_t *rheld, struct guarded *gw, struct guarded *gr,
			  long timeout_ms)
{
	for (int i = 0; i < n; i++) {
		enum op op = (enum op)(i % NOPS);

		atomic_store(&signals_got[i], 0);
		w[i] = (struct waiter){
			.index = i, .op = op, .rc = -1, .timeout_ms = timeout_ms,
			/* readers wait on the write-held lock, writers on the read-held one */
			.lock = op_writes(op) ? rheld : wheld, .g = op_writes(op) ? gr : gw,
		};
		th[i] = spawn(waiter_main, &w[i]);
	}
	for (int i = 0; i < n; i++)
		CHECK(wait_for(&w[i].started, 1, 10000), "a waiter did not start");
}

/*
 * Blocked (untimed, and timed with a minute to go) waiters get signals
 * until each has handled at least three; none may return meanwhile.  Then
 * the holders leave while the storm goes on: every waiter must get its
 * lock (no EINTR, no lost wake-up) and find the data consistent.
 */
static void blocked_lock_calls_bombarded_with_signals_neither_fail_nor_miss_their_wakeup(void)
{
	enum { N = 4 * NOPS };
	struct waiter w[N];
	pthread_t th[N], storm_th;
	pthread_rwlock_t wheld, rheld;
	struct guarded gw, gr;

	for (long round = 0; round < 2 * torture_scale(); round++) {
		struct storm s = { .w = w, .th = th, .n = N };

		memset(&gw, 0, sizeof(gw));
		memset(&gr, 0, sizeof(gr));
		CHECK_RC(pthread_rwlock_init(&wheld, NULL), 0);
		CHECK_RC(pthread_rwlock_init(&rheld, NULL), 0);
		CHECK_RC(pthread_rwlock_wrlock(&wheld), 0);
		read_lock_warm(&rheld);
		start_waiters(w, th, N, &wheld, &rheld, &gw, &gr, 60000);
		storm_th = spawn(storm_main, &s);
		for (int i = 0; i < N; i++)
			CHECK(wait_for(&signals_got[i], 3, 30000), "waiter %d (%s) handled no signals", i,
			      op_name[w[i].op]);
		for (int i = 0; i < N; i++)
			CHECK(atomic_load(&w[i].rc) == -1, "%s returned %s while the lock was held",
			      op_name[w[i].op], errname(atomic_load(&w[i].rc)));
		CHECK_RC(pthread_rwlock_unlock(&wheld), 0);
		CHECK_RC(pthread_rwlock_unlock(&rheld), 0);
		for (int i = 0; i < N; i++) {
			while (!atomic_load(&w[i].done))
				sleep_ms(1); /* a lost wake-up hangs here: the driver's timeout */
		}
		atomic_store(&s.stop, 1);
		join(storm_th);
		for (int i = 0; i < N; i++) {
			join(th[i]);
			CHECK(atomic_load(&w[i].rc) == 0, "%s, interrupted by %d signals, returned %s",
			      op_name[w[i].op], atomic_load(&signals_got[i]), errname(atomic_load(&w[i].rc)));
		}
		check_lock_still_works(&wheld, 4, 100);
		check_lock_still_works(&rheld, 4, 100);
		CHECK_RC(pthread_rwlock_destroy(&wheld), 0);
		CHECK_RC(pthread_rwlock_destroy(&rheld), 0);
	}
}

/*
 * Timed waiters (100 ms deadline) on locks that stay held, bombarded
 * until they return: each returns ETIMEDOUT, not before its deadline.
 * Rounds repeat until every timed call was interrupted at least once
 * (or 50 rounds: then the storm never reached one, which fails).
 */
static void timed_lock_calls_bombarded_with_signals_time_out_not_before_their_deadline(void)
{
	enum { N = 2 * NOPS };
	struct waiter w[N];
	pthread_t th[N], storm_th;
	pthread_rwlock_t wheld, rheld;
	struct guarded gw, gr;
	bool interrupted[NOPS] = { false };
	long rounds = 0, min_rounds = 2 * torture_scale();

	memset(&gw, 0, sizeof(gw));
	memset(&gr, 0, sizeof(gr));
	CHECK_RC(pthread_rwlock_init(&wheld, NULL), 0);
	CHECK_RC(pthread_rwlock_init(&rheld, NULL), 0);
	CHECK_RC(pthread_rwlock_wrlock(&wheld), 0);
	read_lock_warm(&rheld);
	for (;;) {
		struct storm s = { .w = w, .th = th, .n = N };
		bool all = true;

		start_waiters(w, th, N, &wheld, &rheld, &gw, &gr, 100);
		storm_th = spawn(storm_main, &s);
		for (int i = 0; i < N; i++) {
			enum op op = w[i].op;

			if (op == RD || op == WR) {
				/* untimed waiters stay until the end of the round */
				continue;
			}
			while (!atomic_load(&w[i].done))
				sleep_ms(1);
			CHECK(atomic_load(&w[i].rc) == ETIMEDOUT, "%s on a held lock under a signal storm "
			      "returned %s, expected ETIMEDOUT", op_name[op], errname(atomic_load(&w[i].rc)));
			CHECK(w[i].late_ns >= 0, "%s returned ETIMEDOUT %lld us before its deadline",
			      op_name[op], -w[i].late_ns / 1000);
			if (atomic_load(&signals_got[i]) > 0)
				interrupted[op] = true;
		}
		/* untimed waiters: still blocked, then released below */
		for (int i = 0; i < N; i++)
			if (w[i].op == RD || w[i].op == WR)
				CHECK(atomic_load(&w[i].rc) == -1, "%s returned %s while the lock was held",
				      op_name[w[i].op], errname(atomic_load(&w[i].rc)));
		CHECK_RC(pthread_rwlock_unlock(&wheld), 0);
		CHECK_RC(pthread_rwlock_unlock(&rheld), 0);
		for (int i = 0; i < N; i++)
			while (!atomic_load(&w[i].done))
				sleep_ms(1);
		atomic_store(&s.stop, 1);
		join(storm_th);
		for (int i = 0; i < N; i++) {
			join(th[i]);
			if (w[i].op == RD || w[i].op == WR)
				CHECK(atomic_load(&w[i].rc) == 0, "%s returned %s", op_name[w[i].op],
				      errname(atomic_load(&w[i].rc)));
		}
		CHECK_RC(pthread_rwlock_wrlock(&wheld), 0);
		read_lock_warm(&rheld);
		rounds++;
		for (int op = 0; op < NOPS; op++)
			if (op != RD && op != WR)
				all &= interrupted[op];
		if (all && rounds >= min_rounds)
			break;
		CHECK(rounds < 50, "after 50 rounds some timed call was never interrupted by a signal");
	}
	CHECK_RC(pthread_rwlock_unlock(&wheld), 0);
	CHECK_RC(pthread_rwlock_unlock(&rheld), 0);
	check_lock_still_works(&wheld, 4, 100);
	check_lock_still_works(&rheld, 4, 100);
	CHECK_RC(pthread_rwlock_destroy(&wheld), 0);
	CHECK_RC(pthread_rwlock_destroy(&rheld), 0);
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		TORTURE_CHECK(blocked_lock_calls_bombarded_with_signals_neither_fail_nor_miss_their_wakeup),
		TORTURE_CHECK(timed_lock_calls_bombarded_with_signals_time_out_not_before_their_deadline),
	};

	install_handler();
	return torture_main("signal_storm", "rwlock waiters interrupted by signals (handler without SA_RESTART)",
			    checks, NELEM(checks), argc, argv);
}
