/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * handler_locks.c - signal handlers that take rwlocks on the thread they
 * interrupt.
 *
 * POSIX does not allow it, but glibc's rwlock works there, and libbravo(7)
 * promises the same: "Signal handlers may take and release rwlocks on the
 * thread they interrupt".  So nothing a lock call does may call malloc or
 * take a lock that a handler on the same thread could need, and a lock
 * call interrupted anywhere must leave a handler's own lock calls working.
 * The checks:
 *
 *   - a handler's first use of a lock (a zero-filled lock never used
 *     before) while it interrupted malloc on its thread: cohort-rw and
 *     percpu attach a heap block to a lock on its first use, and a malloc
 *     from a handler that interrupted malloc corrupts the heap or hangs on
 *     the arena lock (run in a child process: an abort is a failure with
 *     a message);
 *   - a handler that read-locks L on a thread queued in
 *     pthread_rwlock_wrlock(L) (readers hold L): the thread cannot go on as
 *     a writer while its handler runs, so letting that read in is safe,
 *     and it must get in (rdlock, tryrdlock, timedrdlock), on the default
 *     kind (glibc lets it in: reader preference) and on the
 *     writer-preferring kind (glibc deadlocks there: libbravo only);
 *   - a storm of SIGALRM every 200 us whose handler read-locks the lock
 *     the threads use and 20 others, all threads pinned to one CPU: once
 *     only while its thread is not in a write of that lock (glibc
 *     finishes: the handler's read joins its thread's read, held or
 *     still waiting), once always (libbravo only: glibc hangs, when the
 *     handler's read waits for a write phase its own thread's
 *     interrupted wrlock began);
 *   - a storm of signals that interrupts every lock call (read, write,
 *     timed, try, unlock, first use, BRAVO's revocation wait) on the
 *     default and the writer-preferring kinds, with handlers that take the
 *     interrupted thread's lock and others; exclusion is checked and
 *     nothing may hang.  Twice: once with what glibc survives, once also
 *     with the blocking reads libbravo promises beyond glibc (its own
 *     queued write; read re-entry on a writer-preferring lock, except
 *     where glibc's lock answers for reads: doc/compatibility.md).
 *
 * tests/stress/signal_storm.c covers signals whose handler takes no lock.
 */
#include "fault.h"

#include <sys/time.h>

/* A handler with every signal blocked while it runs (no nesting). */
static void install(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigfillset(&sa.sa_mask);
	sa.sa_flags = flags;
	CHECK(sigaction(sig, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
}

static const char *kind_name(bool prefer_writer)
{
	return prefer_writer ? "writer-preferring" : "default";
}

/* Poll (1 ms) until thread tid sleeps (state S), at most 10 s. */
static void wait_until_asleep(pid_t tid, const char *what)
{
	for (int i = 0; i < 10000; i++) {
		if (task_state(tid) == 'S')
			return;
		sleep_ms(1);
	}
	torture_fail(__FILE__, __LINE__, "%s never went to sleep (state %c)", what, task_state(tid));
}

/*
 * What handlers saw that they could not report there (a handler does not
 * print): the first unexpected result, by line, call and value.
 */
static atomic_int handler_bad_line;
static const char *_Atomic handler_bad_what;
static atomic_int handler_bad_rc;

static void handler_bad(int line, const char *what, int rc)
{
	int zero = 0;

	if (atomic_compare_exchange_strong(&handler_bad_line, &zero, line)) {
		atomic_store(&handler_bad_what, what);
		atomic_store(&handler_bad_rc, rc);
	}
}

/* rc must be one of a or b (pass the same twice for one value); what: the call, said. */
#define H_EXPECT_AS(what, expr, a, b)                                         \
	({                                                                    \
		int hrc_ = (expr);                                            \
		if (hrc_ != (a) && hrc_ != (b))                               \
			handler_bad(__LINE__, what, hrc_);                    \
		hrc_;                                                         \
	})
#define H_EXPECT(expr, a, b) H_EXPECT_AS(#expr, expr, a, b)

static void handler_bad_reset(void)
{
	atomic_store(&handler_bad_line, 0);
	atomic_store(&handler_bad_what, NULL);
	atomic_store(&handler_bad_rc, 0);
}

static void check_handlers_saw_nothing_wrong(void)
{
	int line = atomic_load(&handler_bad_line);

	CHECK(line == 0, "in a signal handler (%s:%d): %s returned %s", __FILE__, line,
	      atomic_load(&handler_bad_what), errname(atomic_load(&handler_bad_rc)));
}

/* Exclusion, from a handler: records instead of failing there. */
static void h_read_enter(struct guarded *g, int line)
{
	atomic_fetch_add(&g->readers, 1);
	if (atomic_load(&g->writers) != 0)
		handler_bad(line, "a read lock taken in a handler while a writer held the lock", 0);
}

static void h_read_leave(struct guarded *g, int line)
{
	uint64_t first = g->record[0];

	for (int i = 1; i < RECORD_WORDS; i++)
		if (g->record[i] != first)
			handler_bad(line, "a handler's reader saw a torn record", 0);
	if (atomic_load(&g->writers) != 0)
		handler_bad(line, "a writer got in while a handler held a read lock", 0);
	atomic_fetch_sub(&g->readers, 1);
}

static void h_write(struct guarded *g, int line)
{
	if (atomic_fetch_add(&g->writers, 1) != 0 || atomic_load(&g->readers) != 0)
		handler_bad(line, "a write lock taken in a handler while others held the lock", 0);
	for (int i = 0; i < RECORD_WORDS; i++)
		g->record[i]++;
	g->writes++;
	atomic_fetch_sub(&g->writers, 1);
}

/* ==== first use of a lock in a handler that interrupted malloc ==== */

enum { MALLOC_SIGNALS = 1000 };

/* Zero-filled: PTHREAD_RWLOCK_INITIALIZER; each handler call takes the next. */
static pthread_rwlock_t first_use_pool[MALLOC_SIGNALS + 256];
static atomic_int first_use_next;
static atomic_int malloc_signals_handled;
static atomic_int malloc_stop;
static pthread_t malloc_victim;

static void first_use_handler(int sig)
{
	int saved_errno = errno;
	int i = atomic_fetch_add(&first_use_next, 1);

	(void)sig;
	if (i < (int)NELEM(first_use_pool)) {
		pthread_rwlock_t *l = &first_use_pool[i];

		H_EXPECT(pthread_rwlock_rdlock(l), 0, 0);
		H_EXPECT(pthread_rwlock_unlock(l), 0, 0);
		H_EXPECT(pthread_rwlock_wrlock(l), 0, 0);
		H_EXPECT(pthread_rwlock_unlock(l), 0, 0);
	}
	atomic_fetch_add(&malloc_signals_handled, 1);
	errno = saved_errno;
}

static void *malloc_signaller_main(void *arg)
{
	(void)arg;
	while (atomic_load(&malloc_signals_handled) < MALLOC_SIGNALS) {
		struct timespec t = { 0, 100000 };

		pthread_kill(malloc_victim, SIGUSR1);
		nanosleep(&t, NULL);
	}
	atomic_store(&malloc_stop, 1);
	return NULL;
}

/*
 * The child: its main thread mallocs, frees and reallocs blocks, most of
 * them too big for the per-thread cache (so malloc runs under its arena
 * lock), while a thread signals it every 100 us.
 */
static void malloc_victim_child(void *arg)
{
	enum { SLOTS = 64 };
	void *p[SLOTS] = { 0 };
	unsigned seed = 12345;
	pthread_t th;

	(void)arg;
	install(SIGUSR1, first_use_handler, SA_RESTART);
	malloc_victim = pthread_self();
	th = spawn(malloc_signaller_main, NULL);
	while (!atomic_load(&malloc_stop)) {
		unsigned r = next_rand(&seed);
		unsigned k = r % SLOTS;
		size_t size = r & 0x100 ? 1100 + (r >> 12) % 30000 : 16 + (r >> 12) % 1000;

		if ((r & 0x600) == 0 && p[k]) {
			void *q = realloc(p[k], size);

			CHECK(q, "realloc failed");
			p[k] = q;
		} else {
			free(p[k]);
			p[k] = malloc(size);
			CHECK(p[k], "malloc failed");
		}
		memset(p[k], (int)k, 16);
	}
	join(th);
	for (int k = 0; k < SLOTS; k++)
		free(p[k]);
	check_handlers_saw_nothing_wrong();
}

static void first_use_of_a_lock_in_a_handler_that_interrupted_malloc_neither_corrupts_the_heap_nor_hangs(void)
{
	int status;

	fault_watchdog(20, "first use of locks in handlers that interrupted malloc");
	status = fault_in_child(malloc_victim_child, NULL, 10);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the process whose malloc was interrupted by handlers that used new locks %s %d%s",
	      WIFEXITED(status) ? "exited with status" : "was killed by signal",
	      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
	      WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT ? " (SIGABRT: heap corrupted)" : "");
	fault_watchdog(0, NULL);
}

/* ==== a handler that reads L on a thread queued in wrlock(L) ==== */

enum handler_op { H_RDLOCK, H_TRYRDLOCK, H_TIMEDRDLOCK };

static const char *const handler_op_name[] = { "rdlock", "tryrdlock", "timedrdlock" };

struct queued {
	pthread_rwlock_t lock;
	struct guarded g;
	enum handler_op hop;
	atomic_int reader_holds, reader_release;
	bool warm;             /* the reader holds through BRAVO's fast path */
	atomic_int tid, started;
	atomic_int wr_rc;      /* the queued wrlock's result; -1 before */
	atomic_int h_rc, h_unlock_rc, h_excl, h_done;
};

static struct queued *_Atomic queued_now;

static void queued_read_handler(int sig)
{
	int saved_errno = errno;
	struct queued *q = atomic_load(&queued_now);
	struct timespec abs;
	int rc;

	(void)sig;
	if (!q)
		return;
	switch (q->hop) {
	case H_RDLOCK:
		rc = pthread_rwlock_rdlock(&q->lock);
		break;
	case H_TRYRDLOCK:
		rc = pthread_rwlock_tryrdlock(&q->lock);
		break;
	default:
		clock_gettime(CLOCK_REALTIME, &abs);
		abs.tv_sec += 2;
		rc = pthread_rwlock_timedrdlock(&q->lock, &abs);
		break;
	}
	atomic_store(&q->h_rc, rc);
	if (rc == 0) {
		atomic_fetch_add(&q->g.readers, 1);
		if (atomic_load(&q->g.writers) != 0)
			atomic_store(&q->h_excl, 1);
		atomic_fetch_sub(&q->g.readers, 1);
		atomic_store(&q->h_unlock_rc, pthread_rwlock_unlock(&q->lock));
	}
	atomic_store(&q->h_done, 1);
	errno = saved_errno;
}

static void *queued_reader_main(void *arg)
{
	struct queued *q = arg;

	for (int i = 0; q->warm && i < 4; i++) {
		CHECK_RC(pthread_rwlock_rdlock(&q->lock), 0);
		CHECK_RC(pthread_rwlock_unlock(&q->lock), 0);
	}
	CHECK_RC(pthread_rwlock_rdlock(&q->lock), 0);
	guarded_read_enter(&q->g);
	atomic_store(&q->reader_holds, 1);
	while (!atomic_load(&q->reader_release))
		sleep_ms(1);
	guarded_read_check(&q->g);
	guarded_read_leave(&q->g);
	CHECK_RC(pthread_rwlock_unlock(&q->lock), 0);
	return NULL;
}

static void *queued_writer_main(void *arg)
{
	struct queued *q = arg;
	int rc;

	atomic_store(&q->tid, (int)gettid());
	atomic_store(&q->started, 1);
	rc = pthread_rwlock_wrlock(&q->lock);
	atomic_store(&q->wr_rc, rc);
	if (rc == 0) {
		guarded_write_enter(&q->g);
		guarded_write_update(&q->g, true);
		guarded_write_leave(&q->g);
		CHECK_RC(pthread_rwlock_unlock(&q->lock), 0);
	}
	return NULL;
}

/*
 * Reader R holds L (warm: through BRAVO's fast path, so that T waits in
 * the revocation); T sleeps in wrlock(L); T's handler takes L with hop: it
 * must get in (0; a 2 s deadline must not pass), alone with readers, and
 * unlock (0).  Then R leaves, and T's wrlock returns 0 with T alone inside.
 */
static void handler_read_on_a_thread_queued_for_writing(enum handler_op hop, bool prefer_writer, bool warm)
{
	static struct queued q;
	pthread_t r, t;
	char what[160];

	snprintf(what, sizeof(what), "%s in a handler on a thread queued in wrlock of the same %s lock%s",
		 handler_op_name[hop], kind_name(prefer_writer),
		 warm ? " (read-held through the fast path)" : "");
	memset(&q, 0, sizeof(q));
	q.hop = hop;
	q.warm = warm;
	q.wr_rc = q.h_rc = q.h_unlock_rc = -1;
	init_lock_of_kind(&q.lock, prefer_writer);
	atomic_store(&queued_now, &q);
	install(SIGUSR1, queued_read_handler, SA_RESTART);

	r = spawn(queued_reader_main, &q);
	CHECK(wait_for(&q.reader_holds, 1, 5000), "the reader did not get the lock");
	t = spawn(queued_writer_main, &q);
	CHECK(wait_for(&q.started, 1, 5000), "the writer did not start");
	wait_until_asleep(atomic_load(&q.tid), "the writer");
	CHECK_RC(pthread_kill(t, SIGUSR1), 0);
	CHECK(wait_for(&q.h_done, 1, 4000), "%s: the handler's call did not return within 4 s "
	      "(the thread waits for itself)", what);
	CHECK(atomic_load(&q.h_rc) == 0, "%s returned %s, expected 0", what, errname(atomic_load(&q.h_rc)));
	CHECK(!atomic_load(&q.h_excl), "%s: the handler got in beside a writer", what);
	CHECK(atomic_load(&q.h_unlock_rc) == 0, "%s: the handler's unlock returned %s", what,
	      errname(atomic_load(&q.h_unlock_rc)));
	CHECK(atomic_load(&q.wr_rc) == -1, "%s: wrlock returned %s while the reader held the lock", what,
	      errname(atomic_load(&q.wr_rc)));

	atomic_store(&q.reader_release, 1);
	join(r);
	join(t);
	CHECK(atomic_load(&q.wr_rc) == 0, "%s: the queued wrlock returned %s", what,
	      errname(atomic_load(&q.wr_rc)));
	atomic_store(&queued_now, NULL);
	check_lock_still_works(&q.lock, 4, 100);
	CHECK_RC(pthread_rwlock_destroy(&q.lock), 0);
}

static void handler_read_on_a_queued_writer(enum handler_op hop, bool prefer_writer)
{
	/*
	 * BRAVO-pthread's writer waits inside glibc's own lock, whose state
	 * libbravo cannot read: there the handler's read waits as under glibc
	 * (libbravo(7), SIGNALS).  Only BRAVO's own wait, for fast readers,
	 * lets it in (the default kind's checks).
	 */
	if (prefer_writer && lock_underneath_is_glibcs() && !under_glibc()) {
		printf("note: %s: glibc's writer-preferring lock underneath: as glibc\n", torture_current);
		return;
	}
	fault_watchdog(20, "a handler's read on a thread queued in wrlock");
	handler_read_on_a_thread_queued_for_writing(hop, prefer_writer, false);
	handler_read_on_a_thread_queued_for_writing(hop, prefer_writer, true);
	fault_watchdog(0, NULL);
}

static void rdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_lock_gets_in(void)
{
	handler_read_on_a_queued_writer(H_RDLOCK, false);
}

static void tryrdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_lock_gets_in(void)
{
	handler_read_on_a_queued_writer(H_TRYRDLOCK, false);
}

static void timedrdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_lock_gets_in(void)
{
	handler_read_on_a_queued_writer(H_TIMEDRDLOCK, false);
}

/* glibc deadlocks (tryrdlock: EBUSY): its writer preference holds the read back. */
static void rdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_writer_preferring_lock_gets_in(void)
{
	handler_read_on_a_queued_writer(H_RDLOCK, true);
}

static void tryrdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_writer_preferring_lock_gets_in(void)
{
	handler_read_on_a_queued_writer(H_TRYRDLOCK, true);
}

static void timedrdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_writer_preferring_lock_gets_in(void)
{
	handler_read_on_a_queued_writer(H_TIMEDRDLOCK, true);
}

/* ==== a handler's read on a thread whose waiting read was let in ==== */

struct admitted {
	pthread_rwlock_t lock;
	struct guarded g;
	atomic_int tid, w2_tid, in_handler, go, h_done, h_rc, h_excl, h_unlock_rc, rd_rc, w2_done;
};

static struct admitted *_Atomic admitted_now;

/* T's handler: wait for the main thread's word, then read the lock. */
static void admitted_handler(int sig)
{
	struct admitted *a = atomic_load(&admitted_now);
	int saved_errno = errno, rc;

	(void)sig;
	if (!a || (pid_t)atomic_load(&a->tid) != gettid())
		return;
	atomic_store(&a->in_handler, 1);
	for (int i = 0; i < 10000 && !atomic_load(&a->go); i++)
		sleep_ms(1);
	rc = pthread_rwlock_rdlock(&a->lock);
	atomic_store(&a->h_rc, rc);
	if (rc == 0) {
		atomic_fetch_add(&a->g.readers, 1);
		if (atomic_load(&a->g.writers) != 0)
			atomic_store(&a->h_excl, 1);
		atomic_fetch_sub(&a->g.readers, 1);
		atomic_store(&a->h_unlock_rc, pthread_rwlock_unlock(&a->lock));
	}
	atomic_store(&a->h_done, 1);
	errno = saved_errno;
}

static void *admitted_reader_main(void *arg)
{
	struct admitted *a = arg;
	int rc;

	atomic_store(&a->tid, (int)gettid());
	rc = pthread_rwlock_rdlock(&a->lock);
	atomic_store(&a->rd_rc, rc);
	if (rc == 0) {
		guarded_read_enter(&a->g);
		guarded_read_check(&a->g);
		guarded_read_leave(&a->g);
		CHECK_RC(pthread_rwlock_unlock(&a->lock), 0);
	}
	return NULL;
}

static void *admitted_writer_main(void *arg)
{
	struct admitted *a = arg;

	atomic_store(&a->w2_tid, (int)gettid());
	CHECK_RC(pthread_rwlock_wrlock(&a->lock), 0);
	guarded_write_enter(&a->g);
	guarded_write_update(&a->g, false);
	guarded_write_leave(&a->g);
	CHECK_RC(pthread_rwlock_unlock(&a->lock), 0);
	atomic_store(&a->w2_done, 1);
	return NULL;
}

/*
 * Writer W1 holds L; T sleeps in rdlock(L); a signal to T runs its handler,
 * which waits for the main thread.  W1 leaves (T's read is let in, though
 * T, in its handler, has not returned), and a new writer W2 comes and
 * waits for T's read (or, where a waiting reader is not counted until it
 * runs, takes L and leaves).  Then the handler rdlocks L: it must get in
 * (0, no writer beside it), not wait behind W2, which waits for its own
 * thread.  glibc's default kind lets it in (reader preference).
 */
static void handler_read_on_a_thread_whose_waiting_read_was_let_in(bool prefer_writer)
{
	static struct admitted a;
	pthread_t t, w2;
	pid_t w2_tid;

	fault_watchdog(20, "a handler's read on a thread whose waiting read was let in");
	memset(&a, 0, sizeof(a));
	atomic_store(&a.h_rc, -1);
	atomic_store(&a.rd_rc, -1);
	init_lock_of_kind(&a.lock, prefer_writer);
	atomic_store(&admitted_now, &a);
	install(SIGUSR1, admitted_handler, SA_RESTART);
	CHECK_RC(pthread_rwlock_wrlock(&a.lock), 0); /* W1: the main thread */
	t = spawn(admitted_reader_main, &a);
	while (!atomic_load(&a.tid))
		sleep_ms(1);
	wait_until_asleep(atomic_load(&a.tid), "the reader");
	CHECK_RC(pthread_kill(t, SIGUSR1), 0);
	CHECK(wait_for(&a.in_handler, 1, 5000), "the reader's handler did not start");
	CHECK_RC(pthread_rwlock_unlock(&a.lock), 0);
	w2 = spawn(admitted_writer_main, &a);
	while (!(w2_tid = atomic_load(&a.w2_tid)))
		sleep_ms(1);
	for (int i = 0; i < 5000 && !atomic_load(&a.w2_done) && task_state(w2_tid) != 'S'; i++)
		sleep_ms(1);
	atomic_store(&a.go, 1);
	CHECK(wait_for(&a.h_done, 1, 4000), "rdlock in the handler did not return within 4 s "
	      "(it waits behind a writer that waits for its own thread's read)");
	CHECK(atomic_load(&a.h_rc) == 0, "rdlock in the handler returned %s, expected 0",
	      errname(atomic_load(&a.h_rc)));
	CHECK(!atomic_load(&a.h_excl), "the handler's read got in beside a writer");
	CHECK(atomic_load(&a.h_unlock_rc) == 0, "the handler's unlock returned %s",
	      errname(atomic_load(&a.h_unlock_rc)));
	join(t);
	join(w2);
	CHECK(atomic_load(&a.rd_rc) == 0, "the reader's rdlock returned %s", errname(atomic_load(&a.rd_rc)));
	atomic_store(&admitted_now, NULL);
	check_lock_still_works(&a.lock, 4, 100);
	CHECK_RC(pthread_rwlock_destroy(&a.lock), 0);
	fault_watchdog(0, NULL);
}

static void rdlock_in_a_handler_on_a_thread_whose_waiting_read_was_let_in_behind_a_new_writer_gets_in(void)
{
	handler_read_on_a_thread_whose_waiting_read_was_let_in(false);
}

/* glibc deadlocks: its writer preference holds the read back behind the new writer. */
static void rdlock_in_a_handler_on_a_thread_whose_waiting_read_was_let_in_behind_a_new_writer_of_a_writer_preferring_lock_gets_in(void)
{
	if (lock_underneath_is_glibcs() && !under_glibc()) {
		printf("note: %s: glibc's writer-preferring lock underneath: as glibc\n", torture_current);
		return;
	}
	handler_read_on_a_thread_whose_waiting_read_was_let_in(true);
}

/* ==== SIGALRM storm, threads pinned to one CPU ==== */

enum { ALRM_WORKERS = 4, ALRM_OTHERS = 20, ALRM_OPS = 40000 };

static pthread_rwlock_t alrm_lock, alrm_others[ALRM_OTHERS];
static struct guarded alrm_g;
static bool alrm_read_while_writing; /* the handler reads L while its thread is in a write */
static __thread bool alrm_worker;
static __thread volatile int alrm_writing; /* from before wrlock to after its unlock */
static __thread volatile int alrm_in_call; /* inside a lock or unlock call of L */
static atomic_long alrm_handled;

/*
 * The handler's read of L: blocking, except while its thread is inside a
 * lock or unlock call of L (alrm_in_call): there a try.  Between the lock
 * word's update and the record of the hold (a few instructions) a
 * blocking read of the same lock may wait for a writer that waits for
 * its own thread, under a phase-fair or writer-preferring lock, as under
 * glibc's writer-preferring kind (libbravo(7), SIGNALS); the cases where
 * the thread waits in the call (its write queued, its read admitted) have
 * checks of their own.
 */
static int alrm_read(void)
{
	int rc;

	if (!alrm_in_call)
		return pthread_rwlock_rdlock(&alrm_lock);
	rc = pthread_rwlock_tryrdlock(&alrm_lock);
	return rc == EBUSY ? -1 : rc;
}

static void alrm_handler(int sig)
{
	int saved_errno = errno;
	int rc = -1;

	(void)sig;
	if (!alrm_worker)
		return;
	if (alrm_read_while_writing || !alrm_writing) {
		rc = alrm_read();
		if (rc == 0)
			h_read_enter(&alrm_g, __LINE__);
		else if (rc != -1 && !(rc == EDEADLK && alrm_writing)) /* its thread holds it for writing */
			handler_bad(__LINE__, "pthread_rwlock_rdlock(&alrm_lock)", rc);
	}
	for (int i = 0; i < ALRM_OTHERS; i++)
		H_EXPECT(pthread_rwlock_rdlock(&alrm_others[i]), 0, 0);
	for (int i = ALRM_OTHERS - 1; i >= 0; i--)
		H_EXPECT(pthread_rwlock_unlock(&alrm_others[i]), 0, 0);
	if (rc == 0) {
		h_read_leave(&alrm_g, __LINE__);
		H_EXPECT(pthread_rwlock_unlock(&alrm_lock), 0, 0);
	}
	atomic_fetch_add(&alrm_handled, 1);
	errno = saved_errno;
}

static void *alrm_worker_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;
	cpu_set_t one;
	sigset_t alrm;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	CHECK(sched_setaffinity(0, sizeof(one), &one) == 0, "sched_setaffinity: %s", strerror(errno));
	alrm_worker = true;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	CHECK_RC(pthread_sigmask(SIG_UNBLOCK, &alrm, NULL), 0);
	for (int i = 0; i < ALRM_OPS; i++) {
		fault_progress();
		if (next_rand(&seed) % 4 == 0) {
			alrm_writing = 1;
			alrm_in_call = 1;
			atomic_signal_fence(memory_order_seq_cst);
			CHECK_RC(pthread_rwlock_wrlock(&alrm_lock), 0);
			atomic_signal_fence(memory_order_seq_cst);
			alrm_in_call = 0;
			guarded_write_enter(&alrm_g);
			guarded_write_update(&alrm_g, i % 16 == 0);
			guarded_write_leave(&alrm_g);
			alrm_in_call = 1;
			atomic_signal_fence(memory_order_seq_cst);
			CHECK_RC(pthread_rwlock_unlock(&alrm_lock), 0);
			atomic_signal_fence(memory_order_seq_cst);
			alrm_in_call = 0;
			alrm_writing = 0;
		} else {
			alrm_in_call = 1;
			atomic_signal_fence(memory_order_seq_cst);
			CHECK_RC(pthread_rwlock_rdlock(&alrm_lock), 0);
			atomic_signal_fence(memory_order_seq_cst);
			alrm_in_call = 0;
			guarded_read_enter(&alrm_g);
			if (i % 16 == 0)
				sched_yield();
			guarded_read_check(&alrm_g);
			guarded_read_leave(&alrm_g);
			alrm_in_call = 1;
			atomic_signal_fence(memory_order_seq_cst);
			CHECK_RC(pthread_rwlock_unlock(&alrm_lock), 0);
			atomic_signal_fence(memory_order_seq_cst);
			alrm_in_call = 0;
		}
	}
	return NULL;
}

/*
 * Four threads pinned to CPU 0 read (3 in 4) and write L; SIGALRM every
 * 200 us (process-wide; only the workers take it); the handler read-locks
 * L (EDEADLK where its thread holds L for writing) and 20 other locks,
 * then unlocks them.  read_while_writing: also while its thread is in a
 * write of L (queued in wrlock, or holding L).
 */
static void sigalrm_storm(bool read_while_writing)
{
	struct itimerval on = { { 0, 200 }, { 0, 200 } }, off = { { 0, 0 }, { 0, 0 } };
	pthread_t th[ALRM_WORKERS];
	sigset_t alrm, old;

	/* a stall bound: the workers report each operation (fault_progress) */
	fault_watchdog(10, "SIGALRM storm, handlers read-locking");
	memset(&alrm_g, 0, sizeof(alrm_g));
	handler_bad_reset();
	alrm_read_while_writing = read_while_writing;
	atomic_store(&alrm_handled, 0);
	CHECK_RC(pthread_rwlock_init(&alrm_lock, NULL), 0);
	for (int i = 0; i < ALRM_OTHERS; i++)
		CHECK_RC(pthread_rwlock_init(&alrm_others[i], NULL), 0);
	install(SIGALRM, alrm_handler, SA_RESTART);
	/* only the workers take SIGALRM (they unblock it) */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	CHECK_RC(pthread_sigmask(SIG_BLOCK, &alrm, &old), 0);
	for (int i = 0; i < ALRM_WORKERS; i++)
		th[i] = spawn(alrm_worker_main, (void *)(uintptr_t)i);
	CHECK(setitimer(ITIMER_REAL, &on, NULL) == 0, "setitimer: %s", strerror(errno));
	for (int i = 0; i < ALRM_WORKERS; i++)
		join(th[i]);
	CHECK(setitimer(ITIMER_REAL, &off, NULL) == 0, "setitimer: %s", strerror(errno));
	CHECK_RC(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	check_handlers_saw_nothing_wrong();
	CHECK(atomic_load(&alrm_handled) > 0, "no SIGALRM was handled");
	check_lock_still_works(&alrm_lock, 4, 100);
	for (int i = 0; i < ALRM_OTHERS; i++)
		CHECK_RC(pthread_rwlock_destroy(&alrm_others[i]), 0);
	CHECK_RC(pthread_rwlock_destroy(&alrm_lock), 0);
	fault_watchdog(0, NULL);
}

/*
 * glibc finishes: a handler's read of L beside its thread's read of L,
 * held or still waiting in rdlock, is let in with the other readers.
 * (Phase-fair BA counts the waiting read into the next read phase, and
 * a handler's read that comes after a new writer waits behind it; that
 * writer waits for the counted read: a hang.)
 */
static void sigalrm_storm_with_handlers_reading_the_lock_their_thread_reads_on_one_cpu_finishes(void)
{
	sigalrm_storm(false);
}

/*
 * libbravo only: glibc itself hangs here (every run on this machine),
 * when a handler's read waits for the write phase that its own thread's
 * interrupted wrlock began.
 */
static void sigalrm_storm_with_handlers_reading_the_threads_lock_and_20_others_on_one_cpu_finishes(void)
{
	sigalrm_storm(true);
}

/* ==== a storm that interrupts every lock call ==== */

/*
 * Workers use SHARED locks (the first half of the default kind, the rest
 * writer-preferring), holding at most one at a time, with every call, and
 * first uses of fresh locks, until each has handled STORM_SIGNALS
 * signals; a thread signals each worker every 50 us.
 * The handler (every signal blocked while it runs):
 *   - takes the interrupted thread's lock for reading, by what its thread
 *     was doing (a thread-local state set around each call): a blocking
 *     read when its thread holds it for reading (a re-entry; on the
 *     writer-preferring kind libbravo only, and not where glibc's lock
 *     answers for reads: reads_answered_as_glibc), EDEADLK from rdlock and
 *     EBUSY from the try forms when its thread holds it for writing; when
 *     its thread is inside a lock or unlock call of it, tryrdlock only
 *     (see own_lock_in_handler);
 *   - reads and writes handler-only locks (blocking reads; try and timed
 *     writes, so that no handler waits for long for another);
 *   - tries the other shared locks (try forms only: a blocking call there
 *     could wait for a thread whose handler waits for this one);
 *   - makes a first use of a fresh lock;
 *   - libbravo only (glibc's unlock of NULL faults): unlocks NULL, which
 *     must answer EINVAL wherever its thread was interrupted, a read
 *     being listed included (a listed entry not yet named is no NULL).
 */
enum { SHARED = 4, HONLY = 4, STORM_WORKERS = 3, STORM_SIGNALS = 200, POOL = 8192 };

enum wstate { W_NONE, W_IN_RD_CALL, W_HOLD_RD, W_IN_WR_CALL, W_HOLD_WR, W_IN_UNLOCK, W_FIRST_USE };

static pthread_rwlock_t shared_locks[SHARED], honly_locks[HONLY];
static struct guarded shared_g[SHARED], honly_g[HONLY];
static pthread_rwlock_t pool_locks[POOL]; /* zero-filled: fresh until used */
static atomic_int pool_next;
static bool storm_beyond_glibc; /* the handler also makes the reads only libbravo promises */
static atomic_long storm_handled;

static __thread bool storm_worker;
static __thread volatile int storm_handled_here; /* signals this worker's handler ran */
static __thread volatile int ws_state;  /* enum wstate */
static __thread volatile int ws_lock;   /* index in shared_locks */
static __thread unsigned hseed;

static bool prefers_writer(int i)
{
	return i >= SHARED / 2;
}

static void set_state(int lock, enum wstate st)
{
	atomic_signal_fence(memory_order_seq_cst);
	ws_lock = lock;
	ws_state = st;
	atomic_signal_fence(memory_order_seq_cst);
}

/* The first use of a fresh lock (by a try, a read or a write), then more. */
static void first_use(void)
{
	int k = atomic_fetch_add(&pool_next, 1);
	pthread_rwlock_t *l;

	if (k >= POOL)
		return;
	l = &pool_locks[k];
	switch (k % 3) {
	case 0:
		H_EXPECT(pthread_rwlock_tryrdlock(l), 0, 0);
		break;
	case 1:
		H_EXPECT(pthread_rwlock_wrlock(l), 0, 0);
		break;
	default:
		H_EXPECT(pthread_rwlock_rdlock(l), 0, 0);
		break;
	}
	H_EXPECT(pthread_rwlock_unlock(l), 0, 0);
	H_EXPECT(pthread_rwlock_rdlock(l), 0, 0);
	H_EXPECT(pthread_rwlock_unlock(l), 0, 0);
	H_EXPECT(pthread_rwlock_wrlock(l), 0, 0);
	H_EXPECT(pthread_rwlock_unlock(l), 0, 0);
}

/* Read-lock l from the handler with what returned rc; check, unlock. */
static void h_read_hold(pthread_rwlock_t *l, struct guarded *g, int rc, int line)
{
	if (rc != 0)
		return;
	h_read_enter(g, line);
	h_read_leave(g, line);
	H_EXPECT(pthread_rwlock_unlock(l), 0, 0);
}

static struct timespec h_deadline(clockid_t c, long us)
{
	struct timespec t;

	clock_gettime(c, &t);
	t.tv_nsec += us * 1000;
	while (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return t;
}

static void own_lock_in_handler(int i, enum wstate st)
{
	pthread_rwlock_t *l = &shared_locks[i];
	struct guarded *g = &shared_g[i];
	bool pw = prefers_writer(i);
	struct timespec abs;
	unsigned r = next_rand(&hseed);
	int rc;

	switch (st) {
	case W_HOLD_WR:
		abs = h_deadline(CLOCK_MONOTONIC, 2000000);
		H_EXPECT(pthread_rwlock_rdlock(l), EDEADLK, EDEADLK);
		H_EXPECT(pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, &abs), EDEADLK, EDEADLK);
		H_EXPECT(pthread_rwlock_tryrdlock(l), EBUSY, EBUSY);
		H_EXPECT(pthread_rwlock_trywrlock(l), EBUSY, EBUSY);
		break;
	case W_HOLD_RD:
		H_EXPECT(pthread_rwlock_trywrlock(l), EBUSY, EBUSY);
		if (!pw || (storm_beyond_glibc && !reads_answered_as_glibc())) {
			/*
			 * a re-entry: glibc's reader preference; libbravo's count
			 * (doc/compatibility.md).  Where glibc's lock answers for
			 * reads, a writer-preferring lock's re-entry waits behind a
			 * waiting writer, as glibc's does: a try only, below.
			 */
			if (r % 2) {
				rc = H_EXPECT_AS("rdlock of a lock its thread reads (a re-entry)",
						 pthread_rwlock_rdlock(l), 0, 0);
			} else {
				abs = h_deadline(CLOCK_REALTIME, 2000000);
				rc = H_EXPECT_AS("timedrdlock (2 s) of a lock its thread reads (a re-entry)",
						 pthread_rwlock_timedrdlock(l, &abs), 0, 0);
			}
			h_read_hold(l, g, rc, __LINE__);
			rc = H_EXPECT(pthread_rwlock_tryrdlock(l), 0, 0);
		} else {
			rc = H_EXPECT(pthread_rwlock_tryrdlock(l), 0, EBUSY);
		}
		h_read_hold(l, g, rc, __LINE__);
		break;
	case W_IN_WR_CALL:
	case W_IN_RD_CALL:
		/*
		 * Its thread is inside a lock call of l: a try only.  Between
		 * the lock word and the record of the hold (a few instructions)
		 * a blocking read of the same lock may wait for a writer that
		 * waits for its own thread (see alrm_read); and a handler that
		 * waits lets the next signal in before its thread runs again.
		 * The waits inside the call -- a queued write, a read admitted
		 * while it waited -- have checks of their own.
		 */
		rc = H_EXPECT(pthread_rwlock_tryrdlock(l), 0, EBUSY);
		h_read_hold(l, g, rc, __LINE__);
		break;
	case W_IN_UNLOCK:
		rc = H_EXPECT(pthread_rwlock_tryrdlock(l), 0, EBUSY);
		h_read_hold(l, g, rc, __LINE__);
		break;
	default:
		break;
	}
}

static void storm_handler(int sig)
{
	int saved_errno = errno;
	int st = ws_state, i = ws_lock;
	unsigned r;
	struct timespec abs;
	int rc, k;

	(void)sig;
	if (!storm_worker)
		return;
	r = next_rand(&hseed);
	if (st != W_NONE && st != W_FIRST_USE)
		own_lock_in_handler(i, (enum wstate)st);

	/* handler-only locks */
	k = r % HONLY;
	rc = H_EXPECT(pthread_rwlock_rdlock(&honly_locks[k]), 0, 0);
	h_read_hold(&honly_locks[k], &honly_g[k], rc, __LINE__);
	switch ((r >> 8) % 4) {
	case 0:
		rc = H_EXPECT(pthread_rwlock_trywrlock(&honly_locks[k]), 0, EBUSY);
		break;
	case 1:
		abs = h_deadline(CLOCK_REALTIME, 200);
		rc = H_EXPECT(pthread_rwlock_timedwrlock(&honly_locks[k], &abs), 0, ETIMEDOUT);
		break;
	case 2:
		abs = h_deadline(CLOCK_MONOTONIC, 200);
		rc = H_EXPECT(pthread_rwlock_clockwrlock(&honly_locks[k], CLOCK_MONOTONIC, &abs), 0, ETIMEDOUT);
		break;
	default:
		abs = h_deadline(CLOCK_REALTIME, 200);
		rc = H_EXPECT(pthread_rwlock_timedrdlock(&honly_locks[k], &abs), 0, ETIMEDOUT);
		h_read_hold(&honly_locks[k], &honly_g[k], rc, __LINE__);
		rc = -1;
		break;
	}
	if (rc == 0) {
		h_write(&honly_g[k], __LINE__);
		H_EXPECT(pthread_rwlock_unlock(&honly_locks[k]), 0, 0);
	}

	/* the other shared locks: try forms only */
	k = (r >> 12) % SHARED;
	if (k != i || st == W_NONE || st == W_FIRST_USE) {
		rc = H_EXPECT(pthread_rwlock_tryrdlock(&shared_locks[k]), 0, EBUSY);
		h_read_hold(&shared_locks[k], &shared_g[k], rc, __LINE__);
		if (H_EXPECT(pthread_rwlock_trywrlock(&shared_locks[k]), 0, EBUSY) == 0) {
			h_write(&shared_g[k], __LINE__);
			H_EXPECT(pthread_rwlock_unlock(&shared_locks[k]), 0, 0);
		}
	}

	if ((r >> 16) % 4 == 0)
		first_use();
	if (storm_beyond_glibc)
		H_EXPECT_AS("pthread_rwlock_unlock(NULL)", pthread_rwlock_unlock(hidden_null()), EINVAL, EINVAL);
	atomic_fetch_add(&storm_handled, 1);
	storm_handled_here++;
	errno = saved_errno;
}

/* Spin a little inside, so that others wait (and BRAVO's writers revoke). */
static void linger(unsigned r)
{
	for (volatile unsigned n = 0; n < (r % 8) * 200; n++)
		;
}

static int worker_read(pthread_rwlock_t *l, unsigned op, bool *timed)
{
	struct timespec abs;

	*timed = false;
	switch (op % 4) {
	case 0:
		return pthread_rwlock_rdlock(l);
	case 1:
		return pthread_rwlock_tryrdlock(l);
	case 2:
		*timed = op & 4;
		abs = *timed ? h_deadline(CLOCK_REALTIME, 300) : ts_add_ms(ts_now(CLOCK_REALTIME), 10000);
		return pthread_rwlock_timedrdlock(l, &abs);
	default:
		*timed = op & 4;
		abs = *timed ? h_deadline(CLOCK_MONOTONIC, 300) : ts_add_ms(ts_now(CLOCK_MONOTONIC), 10000);
		return pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, &abs);
	}
}

static int worker_write(pthread_rwlock_t *l, unsigned op, bool *timed)
{
	struct timespec abs;

	*timed = false;
	switch (op % 4) {
	case 0:
		return pthread_rwlock_wrlock(l);
	case 1:
		return pthread_rwlock_trywrlock(l);
	case 2:
		*timed = op & 4;
		abs = *timed ? h_deadline(CLOCK_REALTIME, 300) : ts_add_ms(ts_now(CLOCK_REALTIME), 10000);
		return pthread_rwlock_timedwrlock(l, &abs);
	default:
		*timed = op & 4;
		abs = *timed ? h_deadline(CLOCK_MONOTONIC, 300) : ts_add_ms(ts_now(CLOCK_MONOTONIC), 10000);
		return pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &abs);
	}
}

static void *storm_worker_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 104729u + 17;

	hseed = seed ^ 0x5bd1e995u;
	storm_worker = true;
	/* until its handler ran STORM_SIGNALS times (the watchdog bounds it) */
	while (storm_handled_here < STORM_SIGNALS) {
		unsigned r = next_rand(&seed);
		int i = r % SHARED;
		pthread_rwlock_t *l = &shared_locks[i];
		bool timed;
		int rc;

		fault_progress();

		if ((r >> 4) % 32 == 0) {
			set_state(-1, W_FIRST_USE);
			first_use();
			set_state(-1, W_NONE);
			continue;
		}
		if ((r >> 4) % 4 != 0) {
			/* reads, several in a row on the same lock: BRAVO's bias comes on */
			for (int n = 0; n < 3; n++) {
				set_state(i, W_IN_RD_CALL);
				rc = worker_read(l, r >> 9, &timed);
				CHECK(rc == 0 || (rc == EBUSY && (r >> 9) % 4 == 1) || (rc == ETIMEDOUT && timed),
				      "a read lock call (%u) returned %s", (r >> 9) % 4, errname(rc));
				if (rc == 0) {
					set_state(i, W_HOLD_RD);
					guarded_read_enter(&shared_g[i]);
					linger(r >> 13);
					guarded_read_check(&shared_g[i]);
					guarded_read_leave(&shared_g[i]);
					set_state(i, W_IN_UNLOCK);
					CHECK_RC(pthread_rwlock_unlock(l), 0);
				}
				set_state(i, W_NONE);
				r = next_rand(&seed); /* the next read call, on lock i */
			}
		} else {
			set_state(i, W_IN_WR_CALL);
			rc = worker_write(l, r >> 9, &timed);
			CHECK(rc == 0 || (rc == EBUSY && (r >> 9) % 4 == 1) || (rc == ETIMEDOUT && timed),
			      "a write lock call (%u) returned %s", (r >> 9) % 4, errname(rc));
			if (rc == 0) {
				set_state(i, W_HOLD_WR);
				guarded_write_enter(&shared_g[i]);
				guarded_write_update(&shared_g[i], false);
				linger(r >> 13);
				guarded_write_leave(&shared_g[i]);
				set_state(i, W_IN_UNLOCK);
				CHECK_RC(pthread_rwlock_unlock(l), 0);
			}
			set_state(i, W_NONE);
		}
	}
	storm_worker = false;
	return NULL;
}

struct storm_signaller {
	pthread_t *th;
	atomic_int *done;
	atomic_int stop;
};

static void *storm_signaller_main(void *arg)
{
	struct storm_signaller *s = arg;

	while (!atomic_load(&s->stop)) {
		struct timespec t = { 0, 50000 };

		for (int i = 0; i < STORM_WORKERS; i++)
			if (!atomic_load(&s->done[i]))
				pthread_kill(s->th[i], SIGUSR2);
		nanosleep(&t, NULL);
	}
	return NULL;
}

struct storm_worker_arg {
	int index;
	atomic_int *done;
};

static void *storm_worker_start(void *arg)
{
	struct storm_worker_arg *a = arg;

	storm_worker_main((void *)(uintptr_t)a->index);
	atomic_store(a->done, 1);
	return NULL;
}

static void storm_interrupting_every_lock_call(bool beyond_glibc)
{
	pthread_t th[STORM_WORKERS], sig_th;
	atomic_int done[STORM_WORKERS];
	struct storm_worker_arg args[STORM_WORKERS];
	struct storm_signaller s = { .th = th, .done = done };
	int used;

	/* a stall bound: the workers report each operation (fault_progress) */
	fault_watchdog(15, "a signal storm interrupting every lock call");
	handler_bad_reset();
	storm_beyond_glibc = beyond_glibc;
	for (int i = 0; i < SHARED; i++) {
		init_lock_of_kind(&shared_locks[i], prefers_writer(i));
		memset(&shared_g[i], 0, sizeof(shared_g[i]));
	}
	for (int i = 0; i < HONLY; i++) {
		init_lock_of_kind(&honly_locks[i], i % 2);
		memset(&honly_g[i], 0, sizeof(honly_g[i]));
	}
	install(SIGUSR2, storm_handler, 0); /* no SA_RESTART: waits get EINTR inside */
	for (int i = 0; i < STORM_WORKERS; i++) {
		atomic_store(&done[i], 0);
		args[i] = (struct storm_worker_arg){ .index = i + (beyond_glibc ? 10 : 0), .done = &done[i] };
		th[i] = spawn(storm_worker_start, &args[i]);
	}
	sig_th = spawn(storm_signaller_main, &s);
	for (int i = 0; i < STORM_WORKERS; i++) {
		while (!atomic_load(&done[i])) {
			check_handlers_saw_nothing_wrong(); /* fail early, by what a handler saw */
			sleep_ms(1);
		}
	}
	atomic_store(&s.stop, 1);
	join(sig_th);
	for (int i = 0; i < STORM_WORKERS; i++)
		join(th[i]);
	check_handlers_saw_nothing_wrong();
	CHECK(atomic_load(&storm_handled) > 0, "no signal was handled");
	for (int i = 0; i < SHARED; i++) {
		check_lock_still_works(&shared_locks[i], 4, 100);
		CHECK_RC(pthread_rwlock_destroy(&shared_locks[i]), 0);
	}
	for (int i = 0; i < HONLY; i++) {
		check_lock_still_works(&honly_locks[i], 2, 50);
		CHECK_RC(pthread_rwlock_destroy(&honly_locks[i]), 0);
	}
	used = atomic_load(&pool_next);
	for (int k = 0; k < used && k < POOL; k++) {
		CHECK_RC(pthread_rwlock_trywrlock(&pool_locks[k]), 0);
		CHECK_RC(pthread_rwlock_unlock(&pool_locks[k]), 0);
	}
	fault_watchdog(0, NULL);
}

static void signal_storm_with_handlers_taking_locks_interrupts_every_lock_call_without_a_hang(void)
{
	storm_interrupting_every_lock_call(false);
}

/*
 * libbravo only: the handlers also read, blocking, the lock their thread
 * is queued to write (glibc may wait for that write for ever), and
 * re-read a writer-preferring lock their thread reads (glibc deadlocks;
 * libbravo only counts the re-entry, doc/compatibility.md; where glibc's
 * lock answers for reads, BRAVO-pthread's default mode, that re-entry is
 * a try, as in the first storm).
 */
static void signal_storm_with_handlers_reading_their_threads_queued_and_held_locks_finishes(void)
{
	storm_interrupting_every_lock_call(true);
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		TORTURE_CHECK(first_use_of_a_lock_in_a_handler_that_interrupted_malloc_neither_corrupts_the_heap_nor_hangs),
		TORTURE_CHECK(rdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_lock_gets_in),
		TORTURE_CHECK(tryrdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_lock_gets_in),
		TORTURE_CHECK(timedrdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_lock_gets_in),
		LIBBRAVO_CHECK(rdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_writer_preferring_lock_gets_in),
		LIBBRAVO_CHECK(tryrdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_writer_preferring_lock_gets_in),
		LIBBRAVO_CHECK(timedrdlock_in_a_handler_on_a_thread_queued_in_wrlock_of_the_same_writer_preferring_lock_gets_in),
		TORTURE_CHECK(rdlock_in_a_handler_on_a_thread_whose_waiting_read_was_let_in_behind_a_new_writer_gets_in),
		LIBBRAVO_CHECK(rdlock_in_a_handler_on_a_thread_whose_waiting_read_was_let_in_behind_a_new_writer_of_a_writer_preferring_lock_gets_in),
		TORTURE_CHECK(sigalrm_storm_with_handlers_reading_the_lock_their_thread_reads_on_one_cpu_finishes),
		LIBBRAVO_CHECK(sigalrm_storm_with_handlers_reading_the_threads_lock_and_20_others_on_one_cpu_finishes),
		TORTURE_CHECK(signal_storm_with_handlers_taking_locks_interrupts_every_lock_call_without_a_hang),
		LIBBRAVO_CHECK(signal_storm_with_handlers_reading_their_threads_queued_and_held_locks_finishes),
	};

	return torture_main("handler_locks", "signal handlers that take rwlocks on the thread they interrupt",
			    checks, NELEM(checks), argc, argv);
}
