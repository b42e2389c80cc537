/*
 * posix_rwlock_test.c - integration tests of the POSIX rwlock API.
 *
 * An ordinary pthread program: it knows nothing of libbravo.  It is run
 * under LD_PRELOAD of each libbravo variant (run-under-preload.sh), and
 * without preload against glibc, so that the suite also validates itself.
 *
 * Environment:
 *   RWLOCK_UNDER_TEST=glibc  skip the checks that only libbravo promises
 *                            (they are marked [libbravo] below and are not
 *                            registered; a line on stderr names each one).
 *   BRAVO_CHECK=1            libbravo's strict mode (tests/preload/run runs
 *                            the test case "strict" so, CK_RUN_CASE=strict):
 *                            the checks of its errors ([strict]) are
 *                            registered, and those of the default mode's
 *                            glibc results ([default]) are not.
 *   EXPECT_RWLOCK_LIB=NAME   basename of the object that must define the
 *                            pthread_rwlock_* functions (default libc.so.6).
 *
 * Internal entry points (used by tests, which re-execute this binary):
 *   posix_rwlock_test --pshared-exec-child PATH READ_FD WRITE_FD
 *   posix_rwlock_test --unlock-misuse-child write-held|free
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/test_util.h"
#include "../lib/check_run.h"

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

static const char *clock_name(clockid_t c)
{
	switch (c) {
	case CLOCK_REALTIME: return "CLOCK_REALTIME";
	case CLOCK_MONOTONIC: return "CLOCK_MONOTONIC";
	case CLOCK_PROCESS_CPUTIME_ID: return "CLOCK_PROCESS_CPUTIME_ID";
	case CLOCK_THREAD_CPUTIME_ID: return "CLOCK_THREAD_CPUTIME_ID";
	case CLOCK_MONOTONIC_RAW: return "CLOCK_MONOTONIC_RAW";
	case CLOCK_BOOTTIME: return "CLOCK_BOOTTIME";
	case CLOCK_REALTIME_COARSE: return "CLOCK_REALTIME_COARSE";
	case CLOCK_MONOTONIC_COARSE: return "CLOCK_MONOTONIC_COARSE";
	default: return "(bogus clock id)";
	}
}

static void init_default(pthread_rwlock_t *l)
{
	ck_assert_rc(pthread_rwlock_init(l, NULL), 0);
}

static void init_kind(pthread_rwlock_t *l, int kind, int pshared)
{
	pthread_rwlockattr_t a;

	ck_assert_rc(pthread_rwlockattr_init(&a), 0);
	ck_assert_rc(pthread_rwlockattr_setkind_np(&a, kind), 0);
	ck_assert_rc(pthread_rwlockattr_setpshared(&a, pshared), 0);
	ck_assert_rc(pthread_rwlock_init(l, &a), 0);
	ck_assert_rc(pthread_rwlockattr_destroy(&a), 0);
}

static void init_prefer_writer(pthread_rwlock_t *l)
{
	init_kind(l, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP, PTHREAD_PROCESS_PRIVATE);
}

/* ------------------------------------------------------------------ */
/* Lock operations by number                                           */
/* ------------------------------------------------------------------ */

enum op {
	OP_RD,
	OP_TRYRD,
	OP_TIMEDRD,
	OP_CLOCKRD_RT,
	OP_CLOCKRD_MONO,
	OP_WR,
	OP_TRYWR,
	OP_TIMEDWR,
	OP_CLOCKWR_RT,
	OP_CLOCKWR_MONO,
	OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
	"pthread_rwlock_rdlock",
	"pthread_rwlock_tryrdlock",
	"pthread_rwlock_timedrdlock",
	"pthread_rwlock_clockrdlock(CLOCK_REALTIME)",
	"pthread_rwlock_clockrdlock(CLOCK_MONOTONIC)",
	"pthread_rwlock_wrlock",
	"pthread_rwlock_trywrlock",
	"pthread_rwlock_timedwrlock",
	"pthread_rwlock_clockwrlock(CLOCK_REALTIME)",
	"pthread_rwlock_clockwrlock(CLOCK_MONOTONIC)",
};

static const enum op rd_timed_ops[] = { OP_TIMEDRD, OP_CLOCKRD_RT, OP_CLOCKRD_MONO };
static const enum op wr_timed_ops[] = { OP_TIMEDWR, OP_CLOCKWR_RT, OP_CLOCKWR_MONO };
static const enum op rd_blocking_ops[] = { OP_RD, OP_TIMEDRD, OP_CLOCKRD_RT, OP_CLOCKRD_MONO };
static const enum op wr_blocking_ops[] = { OP_WR, OP_TIMEDWR, OP_CLOCKWR_RT, OP_CLOCKWR_MONO };
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static bool op_is_write(enum op op)
{
	return op >= OP_WR;
}

static bool op_is_try(enum op op)
{
	return op == OP_TRYRD || op == OP_TRYWR;
}

/* A timed or clock op: it takes a deadline, and may return ETIMEDOUT. */
static bool op_is_timed(enum op op)
{
	return op != OP_RD && op != OP_WR && !op_is_try(op);
}

static clockid_t op_clock(enum op op)
{
	return (op == OP_CLOCKRD_MONO || op == OP_CLOCKWR_MONO) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

/* Run op with an explicit absolute time (ignored by untimed ops). */
static int op_abs(pthread_rwlock_t *l, enum op op, const struct timespec *abs)
{
	switch (op) {
	case OP_RD: return pthread_rwlock_rdlock(l);
	case OP_TRYRD: return pthread_rwlock_tryrdlock(l);
	case OP_TIMEDRD: return pthread_rwlock_timedrdlock(l, abs);
	case OP_CLOCKRD_RT: return pthread_rwlock_clockrdlock(l, CLOCK_REALTIME, abs);
	case OP_CLOCKRD_MONO: return pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, abs);
	case OP_WR: return pthread_rwlock_wrlock(l);
	case OP_TRYWR: return pthread_rwlock_trywrlock(l);
	case OP_TIMEDWR: return pthread_rwlock_timedwrlock(l, abs);
	case OP_CLOCKWR_RT: return pthread_rwlock_clockwrlock(l, CLOCK_REALTIME, abs);
	case OP_CLOCKWR_MONO: return pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, abs);
	default: return -1;
	}
}

/* Run op with a deadline ms milliseconds from now on the op's clock. */
static int op_rel(pthread_rwlock_t *l, enum op op, long ms)
{
	struct timespec abs = ts_add_ms(ts_now(op_clock(op)), ms);

	return op_abs(l, op, &abs);
}

/* ------------------------------------------------------------------ */
/* Helper threads                                                      */
/* ------------------------------------------------------------------ */

/* A thread that takes the lock and keeps it until told to release it. */
struct holder {
	pthread_rwlock_t *lock;
	bool write;
	int warm;               /* read lock/unlock cycles before taking it */
	pthread_t th;
	sem_t acquired, release;
	int lock_rc, unlock_rc;
	bool keep;              /* leave without unlocking (its hold was released for it) */
};

static void *holder_main(void *p)
{
	struct holder *h = p;

	for (int i = 0; i < h->warm; i++) {
		if (pthread_rwlock_rdlock(h->lock) != 0 || pthread_rwlock_unlock(h->lock) != 0)
			break;
	}
	h->lock_rc = h->write ? pthread_rwlock_wrlock(h->lock) : pthread_rwlock_rdlock(h->lock);
	sem_post(&h->acquired);
	sem_wait(&h->release);
	if (h->lock_rc == 0 && !h->keep)
		h->unlock_rc = pthread_rwlock_unlock(h->lock);
	return NULL;
}

static void holder_start_warm(struct holder *h, pthread_rwlock_t *l, bool write, int warm)
{
	memset(h, 0, sizeof(*h));
	h->lock = l;
	h->write = write;
	h->warm = warm;
	sem_init(&h->acquired, 0, 0);
	sem_init(&h->release, 0, 0);
	ck_assert_rc(pthread_create(&h->th, NULL, holder_main, h), 0);
	sem_wait(&h->acquired);
	ck_assert_msg(h->lock_rc == 0, "holder thread: %s returned %s",
		      write ? "pthread_rwlock_wrlock" : "pthread_rwlock_rdlock", errname(h->lock_rc));
}

static void holder_start(struct holder *h, pthread_rwlock_t *l, bool write)
{
	holder_start_warm(h, l, write, 0);
}

static void holder_stop(struct holder *h);

/* Let the holder exit without unlocking (glibc: another thread released its hold). */
static void holder_stop_keeping(struct holder *h)
{
	h->keep = true;
	holder_stop(h);
}

static void holder_stop(struct holder *h)
{
	sem_post(&h->release);
	ck_assert_rc(pthread_join(h->th, NULL), 0);
	ck_assert_msg(h->unlock_rc == 0, "holder thread: pthread_rwlock_unlock returned %s",
		      errname(h->unlock_rc));
	sem_destroy(&h->acquired);
	sem_destroy(&h->release);
}

/* One operation in a fresh thread; released at once if it succeeded. */
struct oneshot {
	pthread_rwlock_t *lock;
	enum op op;
	long ms;
	int rc, unlock_rc;
};

static void *oneshot_main(void *p)
{
	struct oneshot *o = p;

	o->rc = op_rel(o->lock, o->op, o->ms);
	if (o->rc == 0)
		o->unlock_rc = pthread_rwlock_unlock(o->lock);
	return NULL;
}

/* Returns the op's result in another thread (which unlocks on success). */
static int other_thread_op(pthread_rwlock_t *l, enum op op, long ms)
{
	struct oneshot o = { .lock = l, .op = op, .ms = ms };
	pthread_t th;

	ck_assert_rc(pthread_create(&th, NULL, oneshot_main, &o), 0);
	ck_assert_rc(pthread_join(th, NULL), 0);
	if (o.rc == 0)
		ck_assert_msg(o.unlock_rc == 0, "other thread: unlock after %s returned %s",
			      op_names[op], errname(o.unlock_rc));
	return o.rc;
}

#define ck_assert_other(l, op, ms, expected)                                  \
	do {                                                                  \
		int rc_ = other_thread_op((l), (op), (ms));                   \
		ck_assert_msg(rc_ == (expected),                              \
			      "%s in another thread returned %s, expected %s", \
			      op_names[op], errname(rc_), errname(expected)); \
	} while (0)

/* A thread that blocks in op; records when it got through. */
static atomic_long g_seq;

struct waiter {
	pthread_rwlock_t *lock;
	enum op op;
	long ms;
	bool hold;              /* keep the lock until waiter_release() */
	pthread_t th;
	_Atomic pid_t tid;
	atomic_int done;
	long seq;               /* order in which waiters got through */
	int rc, unlock_rc;
	sem_t started, finished, release;
};

static void *waiter_main(void *p)
{
	struct waiter *w = p;

	atomic_store(&w->tid, gettid());
	sem_post(&w->started);
	w->rc = op_rel(w->lock, w->op, w->ms);
	w->seq = atomic_fetch_add(&g_seq, 1);
	atomic_store(&w->done, 1);
	sem_post(&w->finished);
	if (w->rc == 0) {
		if (w->hold)
			sem_wait(&w->release);
		w->unlock_rc = pthread_rwlock_unlock(w->lock);
	}
	return NULL;
}

static void waiter_start(struct waiter *w, pthread_rwlock_t *l, enum op op, long ms, bool hold)
{
	memset(w, 0, sizeof(*w));
	w->lock = l;
	w->op = op;
	w->ms = ms;
	w->hold = hold;
	sem_init(&w->started, 0, 0);
	sem_init(&w->finished, 0, 0);
	sem_init(&w->release, 0, 0);
	ck_assert_rc(pthread_create(&w->th, NULL, waiter_main, w), 0);
	sem_wait(&w->started);
}

static char thread_state(pid_t tid)
{
	char path[64], buf[512];
	FILE *f;
	size_t n;
	char *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return '?';
	return p[2];
}

/*
 * Assert that the waiter is stuck in its call: not done, and seen asleep in
 * the kernel a few times in a row (or still not through after 1 s, for an
 * implementation that spins or yields while it waits).
 */
static void waiter_expect_blocked(struct waiter *w)
{
	struct timespec start = ts_now(CLOCK_MONOTONIC);
	int asleep = 0;

	for (;;) {
		char s;

		ck_assert_msg(!atomic_load(&w->done),
			      "%s returned %s although it should have blocked",
			      op_names[w->op], errname(w->rc));
		s = thread_state(w->tid);
		if (s == 'S' || s == 'D') {
			if (++asleep >= 3)
				break;
		} else {
			asleep = 0;
		}
		if (ms_since(start) > 1000)
			break;
		sleep_ms(2);
	}
	sleep_ms(10);
	ck_assert_msg(!atomic_load(&w->done), "%s returned %s although it should have blocked",
		      op_names[w->op], errname(w->rc));
}

/* Wait up to ms for the waiter's call to return; true if it did. */
static bool waiter_wait_done(struct waiter *w, long ms)
{
	struct timespec dl = ts_add_ms(ts_now(CLOCK_REALTIME), ms);

	while (sem_timedwait(&w->finished, &dl) != 0) {
		if (errno != EINTR)
			return false;
	}
	sem_post(&w->finished); /* let a later call see it too */
	return true;
}

#define ck_assert_waiter_gets_through(w, expected_rc, what)                   \
	do {                                                                  \
		ck_assert_msg(waiter_wait_done((w), 5000),                    \
			      "%s: %s still blocked 5 s after it should have got the lock", \
			      (what), op_names[(w)->op]);                     \
		ck_assert_msg((w)->rc == (expected_rc), "%s: %s returned %s, expected %s", \
			      (what), op_names[(w)->op], errname((w)->rc),    \
			      errname(expected_rc));                          \
	} while (0)

static void waiter_release_and_join(struct waiter *w)
{
	sem_post(&w->release);
	ck_assert_rc(pthread_join(w->th, NULL), 0);
	if (w->rc == 0)
		ck_assert_msg(w->unlock_rc == 0, "waiter thread: unlock after %s returned %s",
			      op_names[w->op], errname(w->unlock_rc));
	sem_destroy(&w->started);
	sem_destroy(&w->finished);
	sem_destroy(&w->release);
}

/*
 * Wait until a new reader (a fresh thread) is refused by tryrdlock, which
 * for a writer-preferring lock means that the writer is now waiting.
 * Bounded to 3 s; then asserts it stays so for a while.
 */
static void wait_until_new_readers_refused(pthread_rwlock_t *l, struct waiter *writer)
{
	struct timespec start = ts_now(CLOCK_MONOTONIC);
	int rc;

	for (;;) {
		ck_assert_msg(!atomic_load(&writer->done), "the writer got through (%s) while a read lock was held",
			      errname(writer->rc));
		rc = other_thread_op(l, OP_TRYRD, 0);
		if (rc == EBUSY)
			break;
		ck_assert_msg(rc == 0, "pthread_rwlock_tryrdlock in a new thread returned %s", errname(rc));
		ck_assert_msg(ms_since(start) < 3000,
			      "a new reader still got the read lock with tryrdlock 3 s after a writer "
			      "started waiting on a writer-preferring lock");
		sleep_ms(1);
	}
	for (int i = 0; i < 20; i++) {
		ck_assert_other(l, OP_TRYRD, 0, EBUSY);
		sleep_ms(1);
	}
}

/* ------------------------------------------------------------------ */
/* Process helpers                                                     */
/* ------------------------------------------------------------------ */

#define CHILD_REQUIRE(cond, ...)                                              \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "child process, line %d: ", __LINE__); \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			_exit(1);                                             \
		}                                                             \
	} while (0)

#define CHILD_RC(expr, expected)                                              \
	do {                                                                  \
		int rc_ = (expr);                                             \
		CHILD_REQUIRE(rc_ == (expected), "%s returned %s, expected %s", \
			      #expr, errname(rc_), errname(expected));        \
	} while (0)

static bool chan_put(int fd, char c)
{
	ssize_t n;

	do
		n = write(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1;
}

/* The next byte from fd, or -1 on timeout or end of file. */
static int chan_get(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned char c;
	ssize_t n;
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return -1;
	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	return n == 1 ? c : -1;
}

#define PARENT_EXPECT(fd, c, what)                                             \
	do {                                                                  \
		int got_ = chan_get((fd), 10000);                             \
		ck_assert_msg(got_ == (c), "child process did not report '%c' (%s); got %d", \
			      (c), (what), got_);                             \
	} while (0)

#define CHILD_EXPECT(fd, c)                                                   \
	do {                                                                  \
		int got_ = chan_get((fd), 10000);                             \
		CHILD_REQUIRE(got_ == (c), "expected '%c' from parent, got %d", (c), got_); \
	} while (0)

static void reap_child(pid_t pid)
{
	int status;
	pid_t r;

	do
		r = waitpid(pid, &status, 0);
	while (r < 0 && errno == EINTR);
	ck_assert_msg(r == pid, "waitpid failed: %s", strerror(errno));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "child process failed (status 0x%x; see its message on stderr)", status);
}

static pthread_rwlock_t *map_shared_lock(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ck_assert_msg(p != MAP_FAILED, "mmap: %s", strerror(errno));
	return p;
}

static void init_pshared(pthread_rwlock_t *l)
{
	init_kind(l, PTHREAD_RWLOCK_PREFER_READER_NP, PTHREAD_PROCESS_SHARED);
}

/* ------------------------------------------------------------------ */
/* EDEADLK                                                             */
/* ------------------------------------------------------------------ */

/* After an EDEADLK, the caller still holds the lock for writing. */
static void expect_still_write_held_then_release(pthread_rwlock_t *l)
{
	ck_assert_other(l, OP_TRYRD, 0, EBUSY);
	ck_assert_other(l, OP_TRYWR, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_other(l, OP_TRYWR, 0, 0);
	ck_assert_other(l, OP_TRYRD, 0, 0);
}

/* After an EDEADLK, the caller still holds the lock for reading (once). */
static void expect_still_read_held_then_release(pthread_rwlock_t *l)
{
	ck_assert_other(l, OP_TRYRD, 0, 0);
	ck_assert_other(l, OP_TRYWR, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_other(l, OP_TRYWR, 0, 0);
}

START_TEST(rdlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(&l), EDEADLK);
	expect_still_write_held_then_release(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

START_TEST(timedrdlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_TIMEDRD, 2000), EDEADLK);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(clockrdlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_CLOCKRD_RT, 2000), EDEADLK);
	ck_assert_rc(op_rel(&l, OP_CLOCKRD_MONO, 2000), EDEADLK);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(wrlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(timedwrlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_TIMEDWR, 2000), EDEADLK);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(clockwrlock_while_holding_write_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_CLOCKWR_RT, 2000), EDEADLK);
	ck_assert_rc(op_rel(&l, OP_CLOCKWR_MONO, 2000), EDEADLK);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(read_lock_while_holding_write_of_prefer_writer_lock_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_prefer_writer(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	for (size_t i = 0; i < NELEM(rd_blocking_ops); i++)
		ck_assert_msg(op_rel(&l, rd_blocking_ops[i], 2000) == EDEADLK,
			      "%s while holding the write lock did not return EDEADLK",
			      op_names[rd_blocking_ops[i]]);
	for (size_t i = 0; i < NELEM(wr_blocking_ops); i++)
		ck_assert_msg(op_rel(&l, wr_blocking_ops[i], 2000) == EDEADLK,
			      "%s while holding the write lock did not return EDEADLK",
			      op_names[wr_blocking_ops[i]]);
	expect_still_write_held_then_release(&l);
}
END_TEST

/* Many read cycles first, so that any reader-side fast path is warm. */
static void warm_reads(pthread_rwlock_t *l, int n)
{
	for (int i = 0; i < n; i++) {
		if (pthread_rwlock_rdlock(l) != 0 || pthread_rwlock_unlock(l) != 0)
			break;
	}
}

/*
 * [libbravo] the read hold taken through a reader fast path (BRAVO's
 * table, bias on after the warm-up), where the lock underneath is free
 */
START_TEST(write_locks_while_holding_fast_read_return_edeadlk_or_ebusy)
{
	pthread_rwlock_t l;

	init_default(&l);
	warm_reads(&l, 2000);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	ck_assert_rc(op_rel(&l, OP_TIMEDWR, 2000), EDEADLK);
	expect_still_read_held_then_release(&l);
}
END_TEST

/* Write holds of two locks, released first-taken first: each unlock finds its own. */
START_TEST(write_holds_of_two_locks_released_in_either_order_release_each)
{
	pthread_rwlock_t a, b;

	for (int order = 0; order < 2; order++) {
		init_default(&a);
		init_default(&b);
		ck_assert_rc(pthread_rwlock_wrlock(&a), 0);
		ck_assert_rc(pthread_rwlock_wrlock(&b), 0);
		ck_assert_rc(pthread_rwlock_unlock(order ? &b : &a), 0);
		ck_assert_other(order ? &b : &a, OP_TRYWR, 0, 0);
		ck_assert_other(order ? &a : &b, OP_TRYRD, 0, EBUSY);
		ck_assert_rc(pthread_rwlock_unlock(order ? &a : &b), 0);
		ck_assert_other(order ? &a : &b, OP_TRYWR, 0, 0);
		pthread_rwlock_destroy(&a);
		pthread_rwlock_destroy(&b);
	}
}
END_TEST

/* [libbravo] glibc deadlocks here */
START_TEST(wrlock_while_holding_read_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	expect_still_read_held_then_release(&l);
}
END_TEST

/* [libbravo] */
START_TEST(timedwrlock_while_holding_read_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_TIMEDWR, 2000), EDEADLK);
	expect_still_read_held_then_release(&l);
}
END_TEST

/* [libbravo] */
START_TEST(clockwrlock_while_holding_read_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(op_rel(&l, OP_CLOCKWR_RT, 2000), EDEADLK);
	ck_assert_rc(op_rel(&l, OP_CLOCKWR_MONO, 2000), EDEADLK);
	expect_still_read_held_then_release(&l);
}
END_TEST

/* [libbravo] the check must not wait for the other readers to leave */
START_TEST(wrlock_while_holding_read_beside_other_readers_returns_edeadlk)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, false);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	ck_assert_rc(op_rel(&l, OP_TIMEDWR, 2000), EDEADLK);
	ck_assert_rc(op_rel(&l, OP_CLOCKWR_MONO, 2000), EDEADLK);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
	holder_stop(&h);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}
END_TEST

/* [libbravo] recursive read holds, then a write attempt */
START_TEST(wrlock_while_holding_read_recursively_returns_edeadlk)
{
	pthread_rwlock_t l;

	init_default(&l);
	for (int i = 0; i < 3; i++)
		ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), EDEADLK);
	expect_still_read_held_then_release(&l);
}
END_TEST

/* ------------------------------------------------------------------ */
/* EBUSY                                                               */
/* ------------------------------------------------------------------ */

START_TEST(tryrdlock_while_other_thread_holds_write_returns_ebusy)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, true);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), EBUSY);
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}
END_TEST

START_TEST(tryrdlock_while_caller_holds_write_returns_ebusy)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), EBUSY);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(trywrlock_while_other_thread_holds_read_returns_ebusy)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, false);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}
END_TEST

START_TEST(trywrlock_while_other_thread_holds_write_returns_ebusy)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, true);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}
END_TEST

START_TEST(trywrlock_while_caller_holds_read_returns_ebusy)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	expect_still_read_held_then_release(&l);
}
END_TEST

START_TEST(trywrlock_while_caller_holds_write_returns_ebusy)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	expect_still_write_held_then_release(&l);
}
END_TEST

START_TEST(tryrdlock_while_caller_holds_read_succeeds_and_needs_matching_unlock)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	/* one read lock is still held */
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
	ck_assert_other(&l, OP_TRYRD, 0, 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}
END_TEST

START_TEST(tryrdlock_while_other_threads_hold_read_succeeds)
{
	pthread_rwlock_t l;
	struct holder h1, h2;

	init_default(&l);
	holder_start(&h1, &l, false);
	holder_start(&h2, &l, false);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	holder_stop(&h1);
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
	holder_stop(&h2);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Unlock by a thread that holds nothing                               */
/*                                                                     */
/* Default mode: glibc's results.  glibc's unlock releases one read   */
/* hold of whoever holds the lock for reading (well-defined: run under */
/* glibc too); on a free lock, or one another thread write-holds, it   */
/* corrupts its lock, and libbravo's documented 0 (nothing changed) is */
/* checked under libbravo only ([libbravo]).  Strict mode             */
/* (BRAVO_CHECK=1): EPERM and nothing released ([strict], below).      */
/* ------------------------------------------------------------------ */

static void check_basic_usage(pthread_rwlock_t *l);

/*
 * libbravo writes its lines only to the stderr the process had at load, so
 * a misuse whose line is checked runs in a fresh image of this program
 * (--unlock-misuse-child CASE, same environment) with stderr on a pipe.
 * The child prints its lock's address on stdout and exits 0 if every
 * unlock returned what the mode promises.  Returns the child's stderr;
 * *addr gets the address.
 */
static char *misuse_child_stderr(const char *which, char *addr, size_t addr_len)
{
	static char buf[8192];
	int out[2], err[2], status;
	size_t got = 0;
	ssize_t n;
	pid_t pid;
	FILE *f;

	ck_assert_rc(pipe(out), 0);
	ck_assert_rc(pipe(err), 0);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		execl("/proc/self/exe", "posix_rwlock_test", "--unlock-misuse-child", which, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	while (got < sizeof(buf) - 1 && (n = read(err[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	close(err[0]);
	f = fdopen(out[0], "r");
	ck_assert_msg(f && fgets(addr, (int)addr_len, f), "the misuse child printed no address; stderr: %s", buf);
	addr[strcspn(addr, "\n")] = 0;
	fclose(f);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "misuse child %s failed (status 0x%x); stderr: %s", which, status, buf);
	return buf;
}

/* Lines of s that start with prefix ("": all lines). */
static int count_lines(const char *s, const char *prefix)
{
	int n = 0;

	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += strncmp(p, prefix, strlen(prefix)) == 0;
	return n;
}

/* The child side: CASE is write-held (another thread write-holds) or free. */
static int unlock_misuse_child(int argc, char **argv)
{
	pthread_rwlock_t l;
	struct holder h;
	bool write_held;
	int want = strict_mode() ? EPERM : 0, bad = 0;

	alarm(30);
	if (argc != 3)
		return 2;
	write_held = strcmp(argv[2], "write-held") == 0;
	pthread_rwlock_init(&l, NULL);
	printf("%p\n", (void *)&l);
	fflush(stdout);
	memset(&h, 0, sizeof(h));
	if (write_held) {
		h.lock = &l;
		h.write = true;
		sem_init(&h.acquired, 0, 0);
		sem_init(&h.release, 0, 0);
		if (pthread_create(&h.th, NULL, holder_main, &h) != 0)
			return 3;
		sem_wait(&h.acquired);
	}
	for (int i = 0; i < 2; i++)
		bad += pthread_rwlock_unlock(&l) != want;
	/* nothing was released */
	bad += pthread_rwlock_trywrlock(&l) != (write_held ? EBUSY : 0);
	if (!write_held)
		bad += pthread_rwlock_unlock(&l) != 0;
	if (write_held) {
		sem_post(&h.release);
		pthread_join(h.th, NULL);
		bad += h.unlock_rc != 0;
	}
	bad += pthread_rwlock_trywrlock(&l) != 0;
	return bad ? 1 : 0;
}

/* [libbravo] glibc's unlock of a free lock drives its reader count below zero */
START_TEST(unlock_of_free_lock_returns_0_and_changes_nothing)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	/* nothing changed: the lock is still free */
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_other(&l, OP_TRYRD, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}
END_TEST

/* [libbravo] */
START_TEST(unlock_after_releasing_all_read_locks_returns_0_and_changes_nothing)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	check_basic_usage(&l);
}
END_TEST

/* [libbravo] */
START_TEST(unlock_after_releasing_write_lock_returns_0_and_changes_nothing)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	check_basic_usage(&l);
}
END_TEST

/*
 * glibc: an unlock by any thread releases one read hold.  libbravo does the
 * same on another reader's behalf; the reader's own unlock later returns
 * 0 and releases nothing more (under glibc the reader must not unlock).
 */
START_TEST(unlock_while_other_thread_holds_read_releases_that_hold_as_glibc_does)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start_warm(&h, &l, false, 20);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	/* the lock is free now: a writer gets it */
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_other(&l, OP_TRYRD, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	if (under_glibc()) {
		holder_stop_keeping(&h);
	} else {
		holder_stop(&h);   /* its unlock returns 0 (checked) and releases nothing */
		ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
		ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	}
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	check_basic_usage(&l);
}
END_TEST

/* Two readers, two unlocks by a thread that holds nothing: one hold each. */
START_TEST(unlocks_while_two_other_threads_hold_read_release_one_hold_each_as_glibc_does)
{
	pthread_rwlock_t l;
	struct holder h[2];

	init_default(&l);
	holder_start(&h[0], &l, false);
	holder_start_warm(&h[1], &l, false, 20);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);   /* one read hold is left */
	ck_assert_other(&l, OP_TRYRD, 0, 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	for (int i = 0; i < 2; i++) {
		if (under_glibc())
			holder_stop_keeping(&h[i]);
		else
			holder_stop(&h[i]);
	}
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	check_basic_usage(&l);
}
END_TEST

/*
 * [libbravo] glibc corrupts its lock here.  libbravo: 0, nothing released,
 * and one line on stderr, once per process.
 */
START_TEST(unlock_while_other_thread_holds_write_returns_0_releases_nothing_and_says_so_once)
{
	pthread_rwlock_t l;
	struct holder h;
	char addr[64], prefix[128];
	const char *err;

	init_default(&l);
	holder_start(&h, &l, true);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), EBUSY);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	ck_assert_other(&l, OP_TRYRD, 0, EBUSY);
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	check_basic_usage(&l);
	/* two such unlocks in a fresh process: one line */
	err = misuse_child_stderr("write-held", addr, sizeof(addr));
	snprintf(prefix, sizeof(prefix), "libbravo: pthread_rwlock_unlock(%s): ", addr);
	ck_assert_msg(count_lines(err, prefix) == 1 && count_lines(err, "") == 1,
		      "want one line starting \"%s\" on stderr, got: \"%s\"", prefix, err);
}
END_TEST

/* [libbravo] */
START_TEST(unlock_of_lock_held_only_by_caller_on_another_lock_returns_0_and_changes_nothing)
{
	pthread_rwlock_t a, b;

	init_default(&a);
	init_default(&b);
	ck_assert_rc(pthread_rwlock_rdlock(&a), 0);
	ck_assert_rc(pthread_rwlock_unlock(&b), 0);
	ck_assert_other(&a, OP_TRYWR, 0, EBUSY);   /* a is still read-held */
	ck_assert_rc(pthread_rwlock_wrlock(&b), 0);
	ck_assert_rc(pthread_rwlock_unlock(&a), 0);
	ck_assert_rc(pthread_rwlock_unlock(&a), 0);
	ck_assert_other(&b, OP_TRYRD, 0, EBUSY);   /* b is still write-held */
	ck_assert_rc(pthread_rwlock_unlock(&b), 0);
	ck_assert_other(&a, OP_TRYWR, 0, 0);
	ck_assert_other(&b, OP_TRYWR, 0, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* [strict] BRAVO_CHECK=1: EPERM from an unlock by a non-holder        */
/* ------------------------------------------------------------------ */

/* Two unlocks that give EPERM, in a fresh process: one line each. */
static void expect_eperm_lines(const char *which)
{
	char addr[64], prefix[128];
	const char *err = misuse_child_stderr(which, addr, sizeof(addr));

	snprintf(prefix, sizeof(prefix), "libbravo: pthread_rwlock_unlock(%s): ", addr);
	ck_assert_msg(count_lines(err, prefix) == 2 && count_lines(err, "") == 2 &&
		      strstr(err, " (caller 0x") != NULL,
		      "want two lines \"%s... (caller 0x...)\" on stderr, got: \"%s\"", prefix, err);
}

START_TEST(strict_unlock_of_free_lock_returns_eperm)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_unlock(&l), EPERM);
	ck_assert_rc(pthread_rwlock_unlock(&l), EPERM);
	/* nothing changed: the lock is still free */
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	/* one line on stderr per misuse */
	expect_eperm_lines("free");
	expect_eperm_lines("write-held");
}
END_TEST

START_TEST(strict_unlock_after_releasing_all_read_locks_returns_eperm)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), EPERM);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}
END_TEST

START_TEST(strict_unlock_after_releasing_write_lock_returns_eperm)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), EPERM);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}
END_TEST

START_TEST(strict_unlock_while_other_thread_holds_read_returns_eperm_and_releases_nothing)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, false);
	ck_assert_rc(pthread_rwlock_unlock(&l), EPERM);
	/* the other thread's read lock is still held */
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}
END_TEST

START_TEST(strict_unlock_while_other_thread_holds_write_returns_eperm_and_releases_nothing)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, true);
	ck_assert_rc(pthread_rwlock_unlock(&l), EPERM);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), EBUSY);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_tryrdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}
END_TEST

START_TEST(strict_unlock_of_lock_held_only_by_caller_on_another_lock_returns_eperm)
{
	pthread_rwlock_t a, b;

	init_default(&a);
	init_default(&b);
	ck_assert_rc(pthread_rwlock_rdlock(&a), 0);
	ck_assert_rc(pthread_rwlock_unlock(&b), EPERM);
	ck_assert_rc(pthread_rwlock_wrlock(&b), 0);
	ck_assert_rc(pthread_rwlock_unlock(&a), 0);
	ck_assert_rc(pthread_rwlock_unlock(&a), EPERM);
	ck_assert_other(&b, OP_TRYRD, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(&b), 0);
	ck_assert_other(&a, OP_TRYWR, 0, 0);
	ck_assert_other(&b, OP_TRYWR, 0, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Timed variants: EINVAL, ETIMEDOUT, success with a past deadline      */
/* ------------------------------------------------------------------ */

static const long bad_nsecs[] = { -1, 1000000000L, LONG_MIN, LONG_MAX };

static void expect_einval_for_bad_nsec(const enum op *ops, size_t n, bool holder_writes)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, holder_writes);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < NELEM(bad_nsecs); j++) {
			struct timespec abs = ts_now(op_clock(ops[i]));
			int rc;

			abs.tv_sec += 1;
			abs.tv_nsec = bad_nsecs[j];
			rc = op_abs(&l, ops[i], &abs);
			ck_assert_msg(rc == EINVAL, "%s with tv_nsec=%ld on a lock held %s by another thread "
				      "returned %s, expected EINVAL", op_names[ops[i]], bad_nsecs[j],
				      holder_writes ? "for writing" : "for reading", errname(rc));
		}
	}
	holder_stop(&h);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}

START_TEST(timedrdlock_with_invalid_nsec_returns_einval_when_lock_is_busy)
{
	expect_einval_for_bad_nsec((enum op[]){ OP_TIMEDRD }, 1, true);
}
END_TEST

START_TEST(clockrdlock_with_invalid_nsec_returns_einval_when_lock_is_busy)
{
	expect_einval_for_bad_nsec((enum op[]){ OP_CLOCKRD_RT, OP_CLOCKRD_MONO }, 2, true);
}
END_TEST

START_TEST(timedwrlock_with_invalid_nsec_returns_einval_when_lock_is_busy)
{
	expect_einval_for_bad_nsec((enum op[]){ OP_TIMEDWR }, 1, false);
	expect_einval_for_bad_nsec((enum op[]){ OP_TIMEDWR }, 1, true);
}
END_TEST

START_TEST(clockwrlock_with_invalid_nsec_returns_einval_when_lock_is_busy)
{
	expect_einval_for_bad_nsec((enum op[]){ OP_CLOCKWR_RT, OP_CLOCKWR_MONO }, 2, false);
	expect_einval_for_bad_nsec((enum op[]){ OP_CLOCKWR_RT, OP_CLOCKWR_MONO }, 2, true);
}
END_TEST

/*
 * glibc 2.36 checks the deadline first, even when the lock is free or the
 * caller holds it for writing (EINVAL before EDEADLK); libbravo does the
 * same.  Nothing is taken.
 */
START_TEST(timed_locks_with_invalid_nsec_return_einval_even_on_a_free_lock)
{
	static const enum op ops[] = { OP_TIMEDRD, OP_CLOCKRD_RT, OP_CLOCKRD_MONO,
				       OP_TIMEDWR, OP_CLOCKWR_RT, OP_CLOCKWR_MONO };
	pthread_rwlock_t l;

	init_default(&l);
	for (int own = 0; own < 2; own++) {
		if (own)
			ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
		for (size_t i = 0; i < NELEM(ops); i++) {
			for (size_t j = 0; j < NELEM(bad_nsecs); j++) {
				struct timespec abs = ts_now(op_clock(ops[i]));
				int rc;

				abs.tv_sec += 1;
				abs.tv_nsec = bad_nsecs[j];
				rc = op_abs(&l, ops[i], &abs);
				ck_assert_msg(rc == EINVAL, "%s with tv_nsec=%ld on a lock %s returned %s, "
					      "expected EINVAL", op_names[ops[i]], bad_nsecs[j],
					      own ? "the caller write-holds" : "that is free", errname(rc));
				if (!own)
					ck_assert_other(&l, OP_TRYWR, 0, 0);
			}
		}
		if (own)
			ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	}
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

static const clockid_t bad_clocks[] = {
	CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC_RAW,
	CLOCK_REALTIME_COARSE, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME, 4711, -1,
};

static void expect_einval_for_bad_clock(bool write)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, !write);
	for (size_t j = 0; j < NELEM(bad_clocks); j++) {
		struct timespec abs = ts_add_ms(ts_now(CLOCK_REALTIME), 1000);
		int rc = write ? pthread_rwlock_clockwrlock(&l, bad_clocks[j], &abs)
			       : pthread_rwlock_clockrdlock(&l, bad_clocks[j], &abs);

		ck_assert_msg(rc == EINVAL, "%s with clock %s (%d) on a busy lock returned %s, expected EINVAL",
			      write ? "pthread_rwlock_clockwrlock" : "pthread_rwlock_clockrdlock",
			      clock_name(bad_clocks[j]), (int)bad_clocks[j], errname(rc));
	}
	holder_stop(&h);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
}

START_TEST(clockrdlock_with_unsupported_clock_returns_einval)
{
	expect_einval_for_bad_clock(false);
}
END_TEST

START_TEST(clockwrlock_with_unsupported_clock_returns_einval)
{
	expect_einval_for_bad_clock(true);
}
END_TEST

static void expect_free_lock_taken_with_deadline(enum op op, struct timespec abs)
{
	pthread_rwlock_t l;
	int rc;

	init_default(&l);
	rc = op_abs(&l, op, &abs);
	ck_assert_msg(rc == 0, "%s on a free lock with deadline {%lld, %ld} returned %s, expected 0",
		      op_names[op], (long long)abs.tv_sec, abs.tv_nsec, errname(rc));
	ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
	ck_assert_other(&l, OP_TRYRD, 0, op_is_write(op) ? EBUSY : 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}

static void expect_free_lock_taken_with_past_deadlines(const enum op *ops, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		expect_free_lock_taken_with_deadline(ops[i], (struct timespec){ 1, 0 });
		expect_free_lock_taken_with_deadline(ops[i], (struct timespec){ 0, 0 });
		expect_free_lock_taken_with_deadline(ops[i], ts_add_ms(ts_now(op_clock(ops[i])), -1000));
	}
}

START_TEST(timedrdlock_on_free_lock_succeeds_with_past_deadline)
{
	expect_free_lock_taken_with_past_deadlines((enum op[]){ OP_TIMEDRD }, 1);
}
END_TEST

START_TEST(clockrdlock_on_free_lock_succeeds_with_past_deadline)
{
	expect_free_lock_taken_with_past_deadlines((enum op[]){ OP_CLOCKRD_RT, OP_CLOCKRD_MONO }, 2);
}
END_TEST

START_TEST(timedwrlock_on_free_lock_succeeds_with_past_deadline)
{
	expect_free_lock_taken_with_past_deadlines((enum op[]){ OP_TIMEDWR }, 1);
}
END_TEST

START_TEST(clockwrlock_on_free_lock_succeeds_with_past_deadline)
{
	expect_free_lock_taken_with_past_deadlines((enum op[]){ OP_CLOCKWR_RT, OP_CLOCKWR_MONO }, 2);
}
END_TEST

START_TEST(timedrdlock_on_read_held_lock_succeeds_with_past_deadline)
{
	pthread_rwlock_t l;
	struct holder h;
	struct timespec past = { 1, 0 };

	init_default(&l);
	holder_start(&h, &l, false);
	for (size_t i = 0; i < NELEM(rd_timed_ops); i++) {
		ck_assert_msg(op_abs(&l, rd_timed_ops[i], &past) == 0,
			      "%s with a past deadline on a read-held lock failed", op_names[rd_timed_ops[i]]);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	}
	holder_stop(&h);
}
END_TEST

/* Contended lock, deadline given explicitly: must be ETIMEDOUT. */
static void expect_timeout_with_deadline(const enum op *ops, size_t n, bool holder_writes,
					 struct timespec abs)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, holder_writes);
	for (size_t i = 0; i < n; i++) {
		int rc = op_abs(&l, ops[i], &abs);

		ck_assert_msg(rc == ETIMEDOUT, "%s with deadline {%lld, %ld} on a lock held %s by another "
			      "thread returned %s, expected ETIMEDOUT", op_names[ops[i]],
			      (long long)abs.tv_sec, abs.tv_nsec,
			      holder_writes ? "for writing" : "for reading", errname(rc));
		if (rc == 0)
			pthread_rwlock_unlock(&l);
	}
	holder_stop(&h);
	/* usable afterwards */
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}

START_TEST(timed_rdlocks_with_past_deadline_time_out_when_write_held)
{
	expect_timeout_with_deadline(rd_timed_ops, NELEM(rd_timed_ops), true, (struct timespec){ 1, 0 });
	expect_timeout_with_deadline(rd_timed_ops, NELEM(rd_timed_ops), true, (struct timespec){ 0, 0 });
}
END_TEST

START_TEST(timed_wrlocks_with_past_deadline_time_out_when_held)
{
	expect_timeout_with_deadline(wr_timed_ops, NELEM(wr_timed_ops), false, (struct timespec){ 1, 0 });
	expect_timeout_with_deadline(wr_timed_ops, NELEM(wr_timed_ops), true, (struct timespec){ 1, 0 });
	expect_timeout_with_deadline(wr_timed_ops, NELEM(wr_timed_ops), false, (struct timespec){ 0, 0 });
}
END_TEST

START_TEST(timed_locks_with_negative_tv_sec_time_out_when_busy)
{
	expect_timeout_with_deadline(rd_timed_ops, NELEM(rd_timed_ops), true, (struct timespec){ -1, 0 });
	expect_timeout_with_deadline(rd_timed_ops, NELEM(rd_timed_ops), true, (struct timespec){ -1000, 500000000L });
	expect_timeout_with_deadline(wr_timed_ops, NELEM(wr_timed_ops), false, (struct timespec){ -1, 0 });
	expect_timeout_with_deadline(wr_timed_ops, NELEM(wr_timed_ops), true, (struct timespec){ -1000, 999999999L });
}
END_TEST

/* A 50 ms deadline: ETIMEDOUT, not before the deadline, not much after. */
static void expect_short_timeout(const enum op *ops, size_t n, bool holder_writes)
{
	pthread_rwlock_t l;
	struct holder h;

	init_default(&l);
	holder_start(&h, &l, holder_writes);
	for (size_t i = 0; i < n; i++) {
		clockid_t c = op_clock(ops[i]);
		struct timespec start = ts_now(c);
		struct timespec abs = ts_add_ms(start, 50);
		int rc = op_abs(&l, ops[i], &abs);
		struct timespec end = ts_now(c);

		ck_assert_msg(rc == ETIMEDOUT, "%s with a 50 ms deadline on a lock held %s by another thread "
			      "returned %s, expected ETIMEDOUT", op_names[ops[i]],
			      holder_writes ? "for writing" : "for reading", errname(rc));
		ck_assert_msg(ts_diff_ns(end, abs) >= 0, "%s returned ETIMEDOUT %lld us before its deadline (%s)",
			      op_names[ops[i]], -ts_diff_ns(end, abs) / 1000, clock_name(c));
		ck_assert_msg(ts_diff_ns(end, start) < 2000000000LL,
			      "%s with a 50 ms deadline took %lld ms", op_names[ops[i]],
			      ts_diff_ns(end, start) / 1000000);
	}
	holder_stop(&h);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}

START_TEST(timed_rdlocks_time_out_after_50ms_deadline_on_both_clocks)
{
	expect_short_timeout(rd_timed_ops, NELEM(rd_timed_ops), true);
}
END_TEST

START_TEST(timed_wrlocks_time_out_after_50ms_deadline_on_both_clocks)
{
	expect_short_timeout(wr_timed_ops, NELEM(wr_timed_ops), false);
	expect_short_timeout(wr_timed_ops, NELEM(wr_timed_ops), true);
}
END_TEST

/* A blocked timed reader gets the lock when the writer leaves in time. */
START_TEST(timed_rdlock_succeeds_when_writer_releases_before_deadline)
{
	pthread_rwlock_t l;

	init_default(&l);
	for (size_t i = 0; i < NELEM(rd_timed_ops); i++) {
		struct waiter w;

		ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
		waiter_start(&w, &l, rd_timed_ops[i], 5000, false);
		waiter_expect_blocked(&w);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		ck_assert_waiter_gets_through(&w, 0, "timed reader after the writer left");
		waiter_release_and_join(&w);
	}
}
END_TEST

START_TEST(timed_wrlock_succeeds_when_reader_releases_before_deadline)
{
	pthread_rwlock_t l;

	init_default(&l);
	for (size_t i = 0; i < NELEM(wr_timed_ops); i++) {
		struct waiter w;

		ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
		waiter_start(&w, &l, wr_timed_ops[i], 5000, false);
		waiter_expect_blocked(&w);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		ck_assert_waiter_gets_through(&w, 0, "timed writer after the reader left");
		waiter_release_and_join(&w);
	}
}
END_TEST

/* After readers time out behind a writer, the next writer still gets in. */
START_TEST(writer_acquires_after_readers_time_out)
{
	pthread_rwlock_t l;
	struct holder h;
	struct waiter w;

	init_default(&l);
	holder_start(&h, &l, true);
	for (size_t i = 0; i < NELEM(rd_timed_ops); i++)
		ck_assert_rc(op_rel(&l, rd_timed_ops[i], 20), ETIMEDOUT);
	ck_assert_other(&l, OP_TIMEDRD, 20, ETIMEDOUT);
	holder_stop(&h);
	waiter_start(&w, &l, OP_WR, 0, false);
	ck_assert_waiter_gets_through(&w, 0, "writer after timed-out readers");
	waiter_release_and_join(&w);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}
END_TEST

/* After a writer times out behind readers, new readers and writers get in. */
static void check_reader_acquires_after_writer_times_out(pthread_rwlock_t *l)
{
	struct holder h;
	struct waiter r, w;

	holder_start(&h, l, false);
	for (size_t i = 0; i < NELEM(wr_timed_ops); i++)
		ck_assert_rc(op_rel(l, wr_timed_ops[i], 20), ETIMEDOUT);
	ck_assert_other(l, OP_TIMEDWR, 20, ETIMEDOUT);
	/* the writer is gone: a new reader must not wait for it */
	waiter_start(&r, l, OP_RD, 0, false);
	ck_assert_waiter_gets_through(&r, 0, "new reader after a writer timed out");
	waiter_release_and_join(&r);
	ck_assert_other(l, OP_TRYRD, 0, 0);
	holder_stop(&h);
	waiter_start(&w, l, OP_WR, 0, false);
	ck_assert_waiter_gets_through(&w, 0, "writer after the readers left");
	waiter_release_and_join(&w);
}

START_TEST(reader_acquires_after_writer_times_out)
{
	pthread_rwlock_t l;

	init_default(&l);
	check_reader_acquires_after_writer_times_out(&l);
}
END_TEST

START_TEST(reader_acquires_after_writer_times_out_on_prefer_writer_lock)
{
	pthread_rwlock_t l;

	init_prefer_writer(&l);
	check_reader_acquires_after_writer_times_out(&l);
}
END_TEST

/* Timed waiters come and go while others block: no wake-up gets lost. */
struct timed_churn {
	pthread_rwlock_t *lock;
	enum op op;
	int bad_rc;
};

static void *timed_churn_main(void *p)
{
	struct timed_churn *t = p;

	for (int i = 0; i < 5; i++) {
		int rc = op_rel(t->lock, t->op, 20 + 7 * i);

		if (rc != ETIMEDOUT) {
			t->bad_rc = rc ? rc : -1;
			if (rc == 0)
				pthread_rwlock_unlock(t->lock);
			break;
		}
	}
	return NULL;
}

static void check_blocked_waiters_acquire_after_timeouts(pthread_rwlock_t *l, bool holder_writes)
{
	enum op churn_ops[] = { OP_TIMEDRD, OP_CLOCKRD_MONO, OP_TIMEDWR, OP_CLOCKWR_MONO, OP_CLOCKWR_RT };
	struct timed_churn tc[NELEM(churn_ops)];
	pthread_t tth[NELEM(churn_ops)];
	struct waiter w[4];
	enum op wops[4] = { OP_RD, OP_WR, OP_RD, OP_WR };
	struct holder h;
	size_t nw = 0;

	holder_start(&h, l, holder_writes);
	for (size_t i = 0; i < NELEM(wops); i++) {
		if (!holder_writes && !op_is_write(wops[i]))
			continue; /* would get in beside the reading holder */
		waiter_start(&w[nw], l, wops[i], 0, false);
		waiter_expect_blocked(&w[nw]);
		nw++;
	}
	for (size_t i = 0; i < NELEM(churn_ops); i++) {
		tc[i] = (struct timed_churn){ .lock = l, .op = churn_ops[i] };
		if (!holder_writes && !op_is_write(churn_ops[i]))
			tc[i].op = OP_CLOCKWR_RT; /* a reader may join the reading holder */
		ck_assert_rc(pthread_create(&tth[i], NULL, timed_churn_main, &tc[i]), 0);
	}
	for (size_t i = 0; i < NELEM(churn_ops); i++) {
		ck_assert_rc(pthread_join(tth[i], NULL), 0);
		ck_assert_msg(tc[i].bad_rc == 0, "timed waiter %s returned %s while the lock was held "
			      "(and others waited), expected ETIMEDOUT", op_names[tc[i].op],
			      tc[i].bad_rc == -1 ? "0" : errname(tc[i].bad_rc));
	}
	for (size_t i = 0; i < nw; i++)
		ck_assert_msg(!atomic_load(&w[i].done), "%s got through while the lock was held",
			      op_names[w[i].op]);
	holder_stop(&h);
	for (size_t i = 0; i < nw; i++) {
		ck_assert_waiter_gets_through(&w[i], 0, "blocked waiter after other waiters timed out");
		waiter_release_and_join(&w[i]);
	}
	ck_assert_rc(pthread_rwlock_trywrlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
}

START_TEST(blocked_waiters_acquire_after_timed_waiters_give_up_on_write_held_lock)
{
	pthread_rwlock_t l;

	init_default(&l);
	check_blocked_waiters_acquire_after_timeouts(&l, true);
}
END_TEST

START_TEST(blocked_writers_acquire_after_timed_waiters_give_up_on_read_held_lock)
{
	pthread_rwlock_t l;

	init_default(&l);
	check_blocked_waiters_acquire_after_timeouts(&l, false);
}
END_TEST

START_TEST(blocked_waiters_acquire_after_timed_waiters_give_up_on_prefer_writer_lock)
{
	pthread_rwlock_t l;

	init_prefer_writer(&l);
	check_blocked_waiters_acquire_after_timeouts(&l, true);
	check_blocked_waiters_acquire_after_timeouts(&l, false);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Writers exclude a reader that has been reading the lock a while      */
/* ------------------------------------------------------------------ */

/*
 * The reader thread reads the lock many times before it keeps it, so that
 * any reader fast path an implementation has is in use.  A failed write
 * attempt (how) must leave the lock as it was: the writers that come next
 * are still kept out until the reader leaves.
 */
enum failed_write { FW_NONE, FW_TRYWRLOCK, FW_TIMEDWRLOCK_50MS, FW_CLOCKWRLOCK_PAST, FW_CLOCKWRLOCK_50MS };

static void check_writers_wait_for_warm_reader(pthread_rwlock_t *l, enum failed_write how)
{
	struct timespec past = { 1, 0 };
	struct holder h;
	struct waiter w;

	holder_start_warm(&h, l, false, 2000);
	switch (how) {
	case FW_NONE:
		break;
	case FW_TRYWRLOCK:
		ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
		break;
	case FW_TIMEDWRLOCK_50MS:
		ck_assert_rc(op_rel(l, OP_TIMEDWR, 50), ETIMEDOUT);
		break;
	case FW_CLOCKWRLOCK_PAST:
		ck_assert_rc(pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &past), ETIMEDOUT);
		break;
	case FW_CLOCKWRLOCK_50MS:
		ck_assert_rc(op_rel(l, OP_CLOCKWR_MONO, 50), ETIMEDOUT);
		break;
	}
	/* the reader still holds the lock: writers are still kept out */
	if (how != FW_NONE) {
		ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
		ck_assert_rc(op_rel(l, OP_TIMEDWR, 30), ETIMEDOUT);
		ck_assert_rc(op_rel(l, OP_CLOCKWR_MONO, 30), ETIMEDOUT);
		ck_assert_other(l, OP_TRYWR, 0, EBUSY);
	}
	waiter_start(&w, l, OP_WR, 0, false);
	waiter_expect_blocked(&w);
	holder_stop(&h);
	ck_assert_waiter_gets_through(&w, 0, "writer after the reader left");
	waiter_release_and_join(&w);
}

static void check_writers_wait_for_warm_reader_all_kinds(enum failed_write how)
{
	for (int round = 0; round < 2; round++) {
		pthread_rwlock_t a, b = PTHREAD_RWLOCK_INITIALIZER, c;

		init_default(&a);
		init_prefer_writer(&c);
		check_writers_wait_for_warm_reader(&a, how);
		check_writers_wait_for_warm_reader(&a, how);
		check_writers_wait_for_warm_reader(&b, how);
		check_writers_wait_for_warm_reader(&c, how);
	}
}

START_TEST(wrlock_waits_for_reader_that_read_the_lock_many_times)
{
	check_writers_wait_for_warm_reader_all_kinds(FW_NONE);
}
END_TEST

START_TEST(trywrlock_refused_by_reader_leaves_later_writers_excluded)
{
	check_writers_wait_for_warm_reader_all_kinds(FW_TRYWRLOCK);
}
END_TEST

START_TEST(timedwrlock_timing_out_on_reader_leaves_later_writers_excluded)
{
	check_writers_wait_for_warm_reader_all_kinds(FW_TIMEDWRLOCK_50MS);
}
END_TEST

START_TEST(clockwrlock_with_past_deadline_on_reader_leaves_later_writers_excluded)
{
	check_writers_wait_for_warm_reader_all_kinds(FW_CLOCKWRLOCK_PAST);
}
END_TEST

START_TEST(clockwrlock_timing_out_on_reader_leaves_later_writers_excluded)
{
	check_writers_wait_for_warm_reader_all_kinds(FW_CLOCKWRLOCK_50MS);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A waiting reader that is descheduled across writer phases            */
/* ------------------------------------------------------------------ */

/*
 * A signal handler parks the waiting reader's thread (inside its lock call)
 * while the lock changes hands: the writer it waited for leaves, a timed
 * writer comes and gives up, another writer comes and waits.  When the
 * reader runs again it must not mistake the third writer for the first.
 */
static atomic_int pause_state; /* 0 idle, 1 paused in the handler, 2 resume */

static void pause_handler(int sig)
{
	(void)sig;
	atomic_store(&pause_state, 1);
	while (atomic_load(&pause_state) != 2) {
		struct timespec t = { 0, 1000000 };

		nanosleep(&t, NULL);
	}
}

static void pause_thread(pthread_t th)
{
	struct sigaction sa;
	struct timespec start = ts_now(CLOCK_MONOTONIC);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pause_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	ck_assert_rc(sigaction(SIGUSR1, &sa, NULL), 0);
	atomic_store(&pause_state, 0);
	ck_assert_rc(pthread_kill(th, SIGUSR1), 0);
	while (atomic_load(&pause_state) != 1) {
		ck_assert_msg(ms_since(start) < 3000, "the reader thread did not run its signal handler");
		sleep_ms(1);
	}
}

static void resume_thread(void)
{
	atomic_store(&pause_state, 2);
}

static void check_paused_reader_across_writer_phases(enum op rop, long rop_ms, long pause_ms)
{
	pthread_rwlock_t l;
	struct waiter r, w3;
	struct timespec paused_at;
	int rc;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);     /* writer 1 */
	waiter_start(&r, &l, rop, rop_ms, false);
	waiter_expect_blocked(&r);
	pause_thread(r.th);
	paused_at = ts_now(CLOCK_MONOTONIC);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);     /* writer 1 leaves */
	rc = op_rel(&l, OP_TIMEDWR, 50);                 /* writer 2 gives up */
	ck_assert_msg(rc == 0 || rc == ETIMEDOUT, "timedwrlock returned %s", errname(rc));
	if (rc == 0)
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	waiter_start(&w3, &l, OP_WR, 0, false);          /* writer 3 waits */
	sleep_ms(50);
	while (ms_since(paused_at) < pause_ms)
		sleep_ms(5);
	resume_thread();
	ck_assert_msg(waiter_wait_done(&r, 5000),
		      "the reader (%s) is still blocked 5 s after it was resumed (the writer it was "
		      "blocked by left long ago; a later writer is waiting)",
		      op_names[rop]);
	ck_assert_msg(r.rc == 0 || (op_is_timed(rop) && r.rc == ETIMEDOUT), "%s returned %s", op_names[rop],
		      errname(r.rc));
	ck_assert_msg(waiter_wait_done(&w3, 5000),
		      "the last writer is still blocked 5 s after the reader (%s, which returned %s) "
		      "was resumed", op_names[rop], errname(r.rc));
	ck_assert_rc(w3.rc, 0);
	waiter_release_and_join(&r);
	waiter_release_and_join(&w3);
	ck_assert_rc(pthread_rwlock_trywrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
}

START_TEST(reader_descheduled_across_two_writer_phases_still_gets_in)
{
	check_paused_reader_across_writer_phases(OP_RD, 0, 0);
}
END_TEST

START_TEST(timed_reader_descheduled_past_its_deadline_across_writer_phases_leaves_lock_usable)
{
	check_paused_reader_across_writer_phases(OP_TIMEDRD, 300, 500);
	check_paused_reader_across_writer_phases(OP_CLOCKRD_MONO, 300, 500);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Recursive read locking while a writer waits                         */
/* ------------------------------------------------------------------ */

static void check_recursive_reads_while_writer_waits(enum op op)
{
	pthread_rwlock_t l;
	struct waiter w;
	const int n = 1000;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	waiter_start(&w, &l, OP_WR, 0, false);
	waiter_expect_blocked(&w);
	for (int i = 1; i < n; i++) {
		int rc = op_rel(&l, op, 50);

		ck_assert_msg(rc == 0, "recursive read lock #%d with %s while a writer waits returned %s",
			      i + 1, op_names[op], errname(rc));
	}
	ck_assert_msg(!atomic_load(&w.done), "the writer got in while %d read locks were held", n);
	for (int i = 1; i < n; i++)
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	sleep_ms(20);
	ck_assert_msg(!atomic_load(&w.done), "the writer got in while one read lock was still held");
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_waiter_gets_through(&w, 0, "writer after the recursive reader left");
	waiter_release_and_join(&w);
}

START_TEST(rdlock_1000_times_while_writer_waits_then_writer_acquires)
{
	check_recursive_reads_while_writer_waits(OP_RD);
}
END_TEST

START_TEST(tryrdlock_recursive_while_writer_waits_succeeds)
{
	check_recursive_reads_while_writer_waits(OP_TRYRD);
}
END_TEST

START_TEST(timedrdlock_recursive_while_writer_waits_succeeds)
{
	check_recursive_reads_while_writer_waits(OP_TIMEDRD);
}
END_TEST

START_TEST(clockrdlock_recursive_while_writer_waits_succeeds)
{
	check_recursive_reads_while_writer_waits(OP_CLOCKRD_MONO);
	check_recursive_reads_while_writer_waits(OP_CLOCKRD_RT);
}
END_TEST

START_TEST(recursive_reads_on_many_locks_are_counted_per_lock)
{
	enum { N = 40 };
	pthread_rwlock_t l[N];

	for (int i = 0; i < N; i++)
		init_default(&l[i]);
	for (int i = 0; i < N; i++)
		for (int k = 0; k <= i % 4; k++)
			ck_assert_rc(pthread_rwlock_rdlock(&l[i]), 0);
	/* release in a scrambled order, lock by lock */
	for (int j = 0; j < N; j++) {
		int i = (j * 17) % N;

		for (int k = 0; k <= i % 4; k++) {
			ck_assert_other(&l[i], OP_TRYWR, 0, EBUSY);
			ck_assert_rc(pthread_rwlock_unlock(&l[i]), 0);
		}
		ck_assert_other(&l[i], OP_TRYWR, 0, 0);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Initializers and zeroed memory                                      */
/* ------------------------------------------------------------------ */

static void check_basic_usage(pthread_rwlock_t *l)
{
	struct holder h;

	ck_assert_rc(pthread_rwlock_rdlock(l), 0);
	ck_assert_rc(pthread_rwlock_tryrdlock(l), 0);
	ck_assert_other(l, OP_TRYRD, 0, 0);
	ck_assert_other(l, OP_TRYWR, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(l), 0);
	ck_assert_other(l, OP_TRYRD, 0, EBUSY);
	ck_assert_other(l, OP_TIMEDWR, 10, ETIMEDOUT);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	holder_start(&h, l, true);
	ck_assert_rc(pthread_rwlock_tryrdlock(l), EBUSY);
	holder_stop(&h);
	ck_assert_rc(op_rel(l, OP_TIMEDWR, 100), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(op_rel(l, OP_CLOCKRD_MONO, 100), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
}

static pthread_rwlock_t static_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t static_wp_lock = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static pthread_rwlock_t static_wp_lock2 = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

START_TEST(static_initializer_lock_works_without_init)
{
	check_basic_usage(&static_lock);
}
END_TEST

START_TEST(writer_nonrecursive_initializer_lock_works_without_init)
{
	check_basic_usage(&static_wp_lock);
}
END_TEST

START_TEST(calloc_zeroed_lock_works_without_init)
{
	pthread_rwlock_t *l = calloc(1, sizeof(*l));

	ck_assert_ptr_nonnull(l);
	check_basic_usage(l);
	free(l);
}
END_TEST

START_TEST(many_calloc_zeroed_locks_work_without_init)
{
	enum { N = 1000 };
	pthread_rwlock_t *l = calloc(N, sizeof(*l));

	ck_assert_ptr_nonnull(l);
	for (int i = 0; i < N; i++)
		ck_assert_rc(i % 2 ? pthread_rwlock_rdlock(&l[i]) : pthread_rwlock_wrlock(&l[i]), 0);
	for (int i = 0; i < N; i += 97)
		ck_assert_other(&l[i], OP_TRYRD, 0, i % 2 ? 0 : EBUSY);
	for (int i = 0; i < N; i++)
		ck_assert_rc(pthread_rwlock_unlock(&l[i]), 0);
	for (int i = 0; i < N; i += 97)
		ck_assert_other(&l[i], OP_TRYWR, 0, 0);
	free(l);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Writer preference (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)     */
/* ------------------------------------------------------------------ */

static void check_new_reader_refused_while_writer_waits(pthread_rwlock_t *l)
{
	struct waiter w;

	ck_assert_rc(pthread_rwlock_rdlock(l), 0);
	waiter_start(&w, l, OP_WR, 0, false);
	wait_until_new_readers_refused(l, &w);
	ck_assert_msg(!atomic_load(&w.done), "the writer got in while a read lock was held");
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_waiter_gets_through(&w, 0, "waiting writer after the reader left");
	waiter_release_and_join(&w);
	ck_assert_other(l, OP_TRYRD, 0, 0);
	ck_assert_other(l, OP_TRYWR, 0, 0);
}

START_TEST(tryrdlock_by_new_reader_while_writer_waits_returns_ebusy_for_prefer_writer_kind)
{
	pthread_rwlock_t l;

	init_prefer_writer(&l);
	check_new_reader_refused_while_writer_waits(&l);
}
END_TEST

START_TEST(tryrdlock_by_new_reader_while_writer_waits_returns_ebusy_for_writer_nonrecursive_initializer)
{
	check_new_reader_refused_while_writer_waits(&static_wp_lock2);
}
END_TEST

START_TEST(rdlock_by_new_reader_waits_behind_waiting_writer_for_prefer_writer_kind)
{
	pthread_rwlock_t l;
	struct waiter w, r;

	init_prefer_writer(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	waiter_start(&w, &l, OP_WR, 0, true);
	wait_until_new_readers_refused(&l, &w);
	waiter_start(&r, &l, OP_RD, 0, false);
	waiter_expect_blocked(&r);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_waiter_gets_through(&w, 0, "waiting writer after the reader left");
	sleep_ms(20);
	ck_assert_msg(!atomic_load(&r.done), "the new reader got in while the writer held the lock (%s)",
		      errname(r.rc));
	sem_post(&w.release);
	ck_assert_waiter_gets_through(&r, 0, "new reader after the writer left");
	ck_assert_msg(w.seq < r.seq, "the new reader got the lock before the writer that waited first");
	waiter_release_and_join(&w);
	waiter_release_and_join(&r);
}
END_TEST

START_TEST(timed_rdlock_by_new_reader_times_out_while_writer_waits_for_prefer_writer_kind)
{
	pthread_rwlock_t l;
	struct waiter w;

	init_prefer_writer(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	waiter_start(&w, &l, OP_WR, 0, false);
	wait_until_new_readers_refused(&l, &w);
	ck_assert_other(&l, OP_TIMEDRD, 30, ETIMEDOUT);
	ck_assert_other(&l, OP_CLOCKRD_MONO, 30, ETIMEDOUT);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_waiter_gets_through(&w, 0, "waiting writer after the reader left");
	waiter_release_and_join(&w);
	ck_assert_other(&l, OP_TRYRD, 0, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Destroy and re-init                                                 */
/* ------------------------------------------------------------------ */

START_TEST(destroy_of_idle_lock_returns_0)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	init_default(&l);
	ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(&l), 0);
	ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

START_TEST(destroy_of_static_initializer_lock_returns_0)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	pthread_rwlock_t m = PTHREAD_RWLOCK_INITIALIZER;

	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(&m), 0);
	ck_assert_rc(pthread_rwlock_unlock(&m), 0);
	ck_assert_rc(pthread_rwlock_destroy(&m), 0);
}
END_TEST

START_TEST(destroyed_then_reinitialized_lock_works)
{
	pthread_rwlock_t l;

	for (int round = 0; round < 4; round++) {
		if (round % 2)
			init_prefer_writer(&l);
		else
			init_default(&l);
		check_basic_usage(&l);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	}
	init_default(&l);
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

/*
 * [default] glibc's destroy does nothing and returns 0; libbravo's default
 * mode too: a held lock stays held and usable (well-defined under glibc).
 */
START_TEST(destroy_of_lock_the_caller_holds_returns_0_and_the_lock_stays_held)
{
	for (int write = 0; write < 2; write++) {
		pthread_rwlock_t l;

		init_default(&l);
		ck_assert_rc(write ? pthread_rwlock_wrlock(&l) : pthread_rwlock_rdlock(&l), 0);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
		ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
		ck_assert_other(&l, OP_TRYRD, 0, write ? EBUSY : 0);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		ck_assert_other(&l, OP_TRYWR, 0, 0);
		check_basic_usage(&l);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	}
}
END_TEST

/* [default] */
START_TEST(destroy_of_lock_another_thread_holds_returns_0_and_the_lock_stays_held)
{
	for (int write = 0; write < 2; write++) {
		pthread_rwlock_t l;
		struct holder h;

		init_default(&l);
		holder_start_warm(&h, &l, write, 20);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
		ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
		ck_assert_rc(pthread_rwlock_tryrdlock(&l), write ? EBUSY : 0);
		if (!write)
			ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		holder_stop(&h);
		ck_assert_other(&l, OP_TRYWR, 0, 0);
		check_basic_usage(&l);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	}
}
END_TEST

/* [default] glibc: destroy is a no-op, so a destroyed lock works as before. */
START_TEST(calls_on_a_destroyed_lock_work_as_on_glibc)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	check_basic_usage(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	for (enum op op = 0; op < OP_COUNT; op++) {
		ck_assert_msg(op_rel(&l, op, 100) == 0, "%s on a destroyed lock did not return 0",
			      op_names[op]);
		ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
	}
	ck_assert_other(&l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

/* [strict] EBUSY from destroy of a held or waited lock, which stays held. */
START_TEST(strict_destroy_of_held_lock_returns_ebusy_and_the_lock_stays_held)
{
	for (int write = 0; write < 2; write++) {
		pthread_rwlock_t l;
		struct holder h;

		init_default(&l);
		ck_assert_rc(write ? pthread_rwlock_wrlock(&l) : pthread_rwlock_rdlock(&l), 0);
		ck_assert_rc(pthread_rwlock_destroy(&l), EBUSY);
		ck_assert_other(&l, OP_TRYWR, 0, EBUSY);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		holder_start(&h, &l, write);
		ck_assert_rc(pthread_rwlock_destroy(&l), EBUSY);
		ck_assert_rc(pthread_rwlock_trywrlock(&l), EBUSY);
		holder_stop(&h);
		check_basic_usage(&l);
		ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	}
}
END_TEST

/* [strict] any call on a destroyed lock is EINVAL; init makes it a lock again. */
START_TEST(strict_calls_on_a_destroyed_lock_return_einval)
{
	pthread_rwlock_t l;

	init_default(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
	ck_assert_rc(pthread_rwlock_destroy(&l), EINVAL);
	for (enum op op = 0; op < OP_COUNT; op++) {
		int rc = op_rel(&l, op, 100);

		ck_assert_msg(rc == EINVAL, "%s on a destroyed lock returned %s, expected EINVAL",
			      op_names[op], errname(rc));
	}
	ck_assert_rc(pthread_rwlock_unlock(&l), EINVAL);
	init_default(&l);
	check_basic_usage(&l);
	ck_assert_rc(pthread_rwlock_destroy(&l), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Process-shared locks                                                */
/* ------------------------------------------------------------------ */

/* The write fast path of BRAVO-pthread is taken for these locks too. */
START_TEST(pshared_lock_write_held_by_caller_answers_as_glibc)
{
	pthread_rwlock_t *l = map_shared_lock();

	init_pshared(l);
	ck_assert_rc(pthread_rwlock_wrlock(l), 0);
	ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
	ck_assert_rc(pthread_rwlock_tryrdlock(l), EBUSY);
	ck_assert_rc(pthread_rwlock_wrlock(l), EDEADLK);
	ck_assert_rc(pthread_rwlock_rdlock(l), EDEADLK);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_trywrlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(l), 0);
	ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_wrlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_destroy(l), 0);
	munmap(l, 4096);
}
END_TEST

START_TEST(pshared_lock_excludes_across_fork)
{
	pthread_rwlock_t *l = map_shared_lock();
	int p2c[2], c2p[2];
	pid_t pid;

	init_pshared(l);
	ck_assert_rc(pipe(p2c), 0);
	ck_assert_rc(pipe(c2p), 0);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(30);
		close(p2c[1]);
		close(c2p[0]);
		CHILD_EXPECT(p2c[0], 'a'); /* parent holds the write lock */
		CHILD_RC(pthread_rwlock_trywrlock(l), EBUSY);
		CHILD_RC(pthread_rwlock_tryrdlock(l), EBUSY);
		CHILD_RC(op_rel(l, OP_TIMEDRD, 30), ETIMEDOUT);
		CHILD_RC(op_rel(l, OP_CLOCKWR_MONO, 30), ETIMEDOUT);
		chan_put(c2p[1], 'b');
		CHILD_EXPECT(p2c[0], 'c'); /* parent unlocked */
		CHILD_RC(pthread_rwlock_trywrlock(l), 0);
		chan_put(c2p[1], 'd');
		CHILD_EXPECT(p2c[0], 'e');
		CHILD_RC(pthread_rwlock_unlock(l), 0);
		CHILD_RC(pthread_rwlock_rdlock(l), 0);
		chan_put(c2p[1], 'f');
		CHILD_EXPECT(p2c[0], 'g');
		CHILD_RC(pthread_rwlock_unlock(l), 0);
		chan_put(c2p[1], 'h');
		_exit(0);
	}
	close(p2c[0]);
	close(c2p[1]);
	ck_assert_rc(pthread_rwlock_wrlock(l), 0);
	chan_put(p2c[1], 'a');
	PARENT_EXPECT(c2p[0], 'b', "child saw the parent's write lock");
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	chan_put(p2c[1], 'c');
	PARENT_EXPECT(c2p[0], 'd', "child took the write lock");
	ck_assert_rc(pthread_rwlock_tryrdlock(l), EBUSY);
	ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
	ck_assert_rc(op_rel(l, OP_CLOCKRD_MONO, 30), ETIMEDOUT);
	chan_put(p2c[1], 'e');
	PARENT_EXPECT(c2p[0], 'f', "child took a read lock");
	ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
	ck_assert_rc(op_rel(l, OP_TIMEDWR, 30), ETIMEDOUT);
	ck_assert_rc(pthread_rwlock_tryrdlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	chan_put(p2c[1], 'g');
	PARENT_EXPECT(c2p[0], 'h', "child released its read lock");
	ck_assert_rc(pthread_rwlock_trywrlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	reap_child(pid);
	ck_assert_rc(pthread_rwlock_destroy(l), 0);
	munmap(l, 4096);
}
END_TEST

START_TEST(pshared_lock_wakes_waiter_in_other_process)
{
	pthread_rwlock_t *l = map_shared_lock();
	int p2c[2], c2p[2];
	pid_t pid;

	init_pshared(l);
	ck_assert_rc(pipe(p2c), 0);
	ck_assert_rc(pipe(c2p), 0);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(30);
		close(p2c[1]);
		close(c2p[0]);
		CHILD_EXPECT(p2c[0], 'a'); /* parent holds the write lock */
		chan_put(c2p[1], 'r');
		CHILD_RC(pthread_rwlock_rdlock(l), 0); /* blocks until the parent unlocks */
		chan_put(c2p[1], 'x');
		CHILD_EXPECT(p2c[0], 'u'); /* parent is blocked in wrlock */
		sleep_ms(100);
		CHILD_RC(pthread_rwlock_unlock(l), 0);
		CHILD_EXPECT(p2c[0], 'w'); /* parent holds the write lock again */
		chan_put(c2p[1], 'y');
		CHILD_RC(pthread_rwlock_wrlock(l), 0);
		chan_put(c2p[1], 'z');
		CHILD_RC(pthread_rwlock_unlock(l), 0);
		_exit(0);
	}
	close(p2c[0]);
	close(c2p[1]);
	ck_assert_rc(pthread_rwlock_wrlock(l), 0);
	chan_put(p2c[1], 'a');
	PARENT_EXPECT(c2p[0], 'r', "child about to block in rdlock");
	sleep_ms(100);
	ck_assert_msg(chan_get(c2p[0], 0) == -1, "child got the read lock while the parent held the write lock");
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	PARENT_EXPECT(c2p[0], 'x', "child woken by the parent's unlock");
	chan_put(p2c[1], 'u');
	/* child releases after ~100 ms; a lost wake-up shows as ETIMEDOUT */
	ck_assert_rc(op_rel(l, OP_CLOCKWR_MONO, 5000), 0);
	chan_put(p2c[1], 'w');
	PARENT_EXPECT(c2p[0], 'y', "child about to block in wrlock");
	sleep_ms(100);
	ck_assert_msg(chan_get(c2p[0], 0) == -1, "child got the write lock while the parent held it");
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	PARENT_EXPECT(c2p[0], 'z', "child writer woken by the parent's unlock");
	reap_child(pid);
	ck_assert_rc(pthread_rwlock_trywrlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	munmap(l, 4096);
}
END_TEST

START_TEST(pshared_read_lock_in_one_process_excludes_writer_in_other)
{
	pthread_rwlock_t *l = map_shared_lock();
	int p2c[2], c2p[2];
	pid_t pid;

	init_pshared(l);
	ck_assert_rc(pipe(p2c), 0);
	ck_assert_rc(pipe(c2p), 0);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(30);
		close(p2c[1]);
		close(c2p[0]);
		CHILD_EXPECT(p2c[0], 'a'); /* parent holds a read lock */
		CHILD_RC(pthread_rwlock_trywrlock(l), EBUSY);
		CHILD_RC(op_rel(l, OP_CLOCKWR_MONO, 50), ETIMEDOUT);
		CHILD_RC(op_rel(l, OP_TIMEDWR, 50), ETIMEDOUT);
		chan_put(c2p[1], 'b');
		CHILD_EXPECT(p2c[0], 'c'); /* parent released it */
		CHILD_RC(pthread_rwlock_trywrlock(l), 0);
		CHILD_RC(pthread_rwlock_unlock(l), 0);
		warm_reads(l, 2000);
		CHILD_RC(pthread_rwlock_rdlock(l), 0);
		chan_put(c2p[1], 'd');
		CHILD_EXPECT(p2c[0], 'e');
		CHILD_RC(pthread_rwlock_unlock(l), 0);
		chan_put(c2p[1], 'f');
		_exit(0);
	}
	close(p2c[0]);
	close(c2p[1]);
	warm_reads(l, 2000);
	ck_assert_rc(pthread_rwlock_rdlock(l), 0);
	chan_put(p2c[1], 'a');
	PARENT_EXPECT(c2p[0], 'b', "child's writer was refused");
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	chan_put(p2c[1], 'c');
	PARENT_EXPECT(c2p[0], 'd', "child holds a read lock");
	ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
	ck_assert_rc(op_rel(l, OP_CLOCKWR_MONO, 50), ETIMEDOUT);
	ck_assert_rc(op_rel(l, OP_TIMEDWR, 50), ETIMEDOUT);
	chan_put(p2c[1], 'e');
	PARENT_EXPECT(c2p[0], 'f', "child released its read lock");
	ck_assert_rc(pthread_rwlock_trywrlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	reap_child(pid);
	munmap(l, 4096);
}
END_TEST

/*
 * The write lock is taken by the parent's thread before fork(): the child's
 * thread is not its owner, so it must wait for it, not get EDEADLK.
 */
START_TEST(pshared_write_lock_taken_before_fork_is_not_owned_by_child)
{
	pthread_rwlock_t *l = map_shared_lock();
	int p2c[2], c2p[2];
	pid_t pid;

	init_pshared(l);
	ck_assert_rc(pipe(p2c), 0);
	ck_assert_rc(pipe(c2p), 0);
	ck_assert_rc(pthread_rwlock_wrlock(l), 0);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(30);
		close(p2c[1]);
		close(c2p[0]);
		CHILD_RC(pthread_rwlock_trywrlock(l), EBUSY);
		CHILD_RC(pthread_rwlock_tryrdlock(l), EBUSY);
		chan_put(c2p[1], 'a');
		CHILD_RC(op_rel(l, OP_CLOCKRD_MONO, 5000), 0); /* parent unlocks after ~100 ms */
		chan_put(c2p[1], 'b');
		CHILD_EXPECT(p2c[0], 'c');
		CHILD_RC(pthread_rwlock_unlock(l), 0);
		chan_put(c2p[1], 'd');
		_exit(0);
	}
	close(p2c[0]);
	close(c2p[1]);
	PARENT_EXPECT(c2p[0], 'a', "child saw the lock busy");
	sleep_ms(100);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	PARENT_EXPECT(c2p[0], 'b', "child got the read lock after the parent's unlock");
	ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
	chan_put(p2c[1], 'c');
	PARENT_EXPECT(c2p[0], 'd', "child released its read lock");
	ck_assert_rc(pthread_rwlock_trywrlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	reap_child(pid);
	munmap(l, 4096);
}
END_TEST

/*
 * A process-shared lock is glibc's own (no held-lock checks, strict mode
 * included): the child's unlock releases the parent's read hold, as
 * glibc's does.
 */
START_TEST(unlock_in_child_of_pshared_lock_read_held_by_parent_releases_it_as_glibc_does)
{
	pthread_rwlock_t *l = map_shared_lock();
	pid_t pid;

	init_pshared(l);
	ck_assert_rc(pthread_rwlock_rdlock(l), 0);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(30);
		CHILD_RC(pthread_rwlock_unlock(l), 0);
		CHILD_RC(pthread_rwlock_trywrlock(l), 0);
		CHILD_RC(pthread_rwlock_unlock(l), 0);
		_exit(0);
	}
	reap_child(pid);
	/* the parent's hold is gone: it must not unlock it */
	ck_assert_other(l, OP_TRYWR, 0, 0);
	ck_assert_rc(pthread_rwlock_wrlock(l), 0);
	ck_assert_other(l, OP_TRYRD, 0, EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	munmap(l, 4096);
}
END_TEST

/* The other side of the exec test: a process that only maps the lock. */
static int pshared_exec_child(int argc, char **argv)
{
	pthread_rwlock_t *l;
	int fd, rfd, wfd;

	alarm(30);
	CHILD_REQUIRE(argc == 5, "usage: %s --pshared-exec-child PATH RFD WFD", argv[0]);
	rfd = atoi(argv[3]);
	wfd = atoi(argv[4]);
	fd = open(argv[2], O_RDWR);
	CHILD_REQUIRE(fd >= 0, "open %s: %s", argv[2], strerror(errno));
	l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHILD_REQUIRE(l != MAP_FAILED, "mmap: %s", strerror(errno));
	close(fd);
	CHILD_RC(pthread_rwlock_tryrdlock(l), EBUSY);
	CHILD_RC(pthread_rwlock_trywrlock(l), EBUSY);
	CHILD_RC(op_rel(l, OP_TIMEDRD, 30), ETIMEDOUT);
	chan_put(wfd, 'a');
	CHILD_RC(pthread_rwlock_rdlock(l), 0); /* parent unlocks after ~100 ms */
	chan_put(wfd, 'b');
	CHILD_EXPECT(rfd, 'c');
	CHILD_RC(pthread_rwlock_unlock(l), 0);
	CHILD_RC(pthread_rwlock_wrlock(l), 0);
	chan_put(wfd, 'd');
	CHILD_EXPECT(rfd, 'e');
	CHILD_RC(pthread_rwlock_unlock(l), 0);
	chan_put(wfd, 'f');
	return 0;
}

START_TEST(pshared_lock_in_file_works_in_exec_process_that_only_maps_it)
{
	char path[] = "/tmp/rwlock-pshared-XXXXXX";
	pthread_rwlock_t *l;
	int fd, p2c[2], c2p[2];
	pid_t pid;

	fd = mkstemp(path);
	ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
	ck_assert_rc(ftruncate(fd, 4096), 0);
	l = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ck_assert_msg(l != MAP_FAILED, "mmap: %s", strerror(errno));
	close(fd);
	init_pshared(l);
	ck_assert_rc(pthread_rwlock_wrlock(l), 0);
	ck_assert_rc(pipe(p2c), 0);
	ck_assert_rc(pipe(c2p), 0);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char rfd[16], wfd[16];

		close(p2c[1]);
		close(c2p[0]);
		snprintf(rfd, sizeof(rfd), "%d", p2c[0]);
		snprintf(wfd, sizeof(wfd), "%d", c2p[1]);
		execl("/proc/self/exe", "posix_rwlock_test", "--pshared-exec-child", path, rfd, wfd,
		      (char *)NULL);
		fprintf(stderr, "exec /proc/self/exe: %s\n", strerror(errno));
		_exit(127);
	}
	close(p2c[0]);
	close(c2p[1]);
	PARENT_EXPECT(c2p[0], 'a', "exec'd process saw the lock busy");
	sleep_ms(100);
	ck_assert_msg(chan_get(c2p[0], 0) == -1, "exec'd process got a read lock while the parent wrote");
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	PARENT_EXPECT(c2p[0], 'b', "exec'd process got the read lock after the parent's unlock");
	ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
	ck_assert_rc(pthread_rwlock_tryrdlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	chan_put(p2c[1], 'c');
	PARENT_EXPECT(c2p[0], 'd', "exec'd process took the write lock");
	ck_assert_rc(pthread_rwlock_tryrdlock(l), EBUSY);
	ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
	chan_put(p2c[1], 'e');
	PARENT_EXPECT(c2p[0], 'f', "exec'd process released the write lock");
	reap_child(pid);
	ck_assert_rc(pthread_rwlock_trywrlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_destroy(l), 0);
	munmap(l, 4096);
	unlink(path);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Many threads, many locks                                            */
/* ------------------------------------------------------------------ */

enum { TL_LOCKS = 32, TL_HELD = 20, TL_THREADS = 1000, TL_BATCH = 50, TL_ROUNDS = 4 };

static pthread_rwlock_t tl_lock[TL_LOCKS];
static long tl_count[TL_LOCKS];
static atomic_long tl_bad;
static char tl_msg[256];

static bool tl_is_write(int t, int round, int j)
{
	return (t + 3 * round + j) % 5 == 0;
}

static int tl_first(int t, int round)
{
	return (t + round) % (TL_LOCKS - TL_HELD + 1);
}

static void tl_fail(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&tl_bad, 1) == 0) {
		va_start(ap, fmt);
		vsnprintf(tl_msg, sizeof(tl_msg), fmt, ap);
		va_end(ap);
	}
}

static void *tl_thread(void *p)
{
	int t = (int)(intptr_t)p;

	for (int round = 0; round < TL_ROUNDS; round++) {
		int first = tl_first(t, round);
		int rc;

		/* ascending order: no deadlock between threads */
		for (int j = first; j < first + TL_HELD; j++) {
			rc = tl_is_write(t, round, j) ? pthread_rwlock_wrlock(&tl_lock[j])
						      : pthread_rwlock_rdlock(&tl_lock[j]);
			if (rc) {
				tl_fail("thread %d: lock %d: %s", t, j, errname(rc));
				return NULL;
			}
		}
		/* a recursive read on one of the read-held locks */
		for (int j = first; j < first + TL_HELD; j++) {
			if (!tl_is_write(t, round, j)) {
				rc = pthread_rwlock_tryrdlock(&tl_lock[j]);
				if (rc == 0)
					rc = pthread_rwlock_unlock(&tl_lock[j]);
				if (rc)
					tl_fail("thread %d: recursive tryrdlock/unlock of lock %d: %s",
						t, j, errname(rc));
				break;
			}
		}
		for (int j = first; j < first + TL_HELD; j++)
			if (tl_is_write(t, round, j))
				tl_count[j]++;
		/* release in the same order as taken (oldest first) */
		for (int j = first; j < first + TL_HELD; j++) {
			rc = pthread_rwlock_unlock(&tl_lock[j]);
			if (rc)
				tl_fail("thread %d: unlock of lock %d: %s", t, j, errname(rc));
		}
	}
	return NULL;
}

START_TEST(thousand_threads_holding_twenty_locks_each_complete_with_correct_counts)
{
	long expected[TL_LOCKS] = { 0 };
	pthread_t th[TL_BATCH];

	for (int i = 0; i < TL_LOCKS; i++) {
		if (i % 3 == 0)
			init_default(&tl_lock[i]);
		else if (i % 3 == 1)
			tl_lock[i] = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
		else
			init_kind(&tl_lock[i], PTHREAD_RWLOCK_PREFER_READER_NP, PTHREAD_PROCESS_PRIVATE);
	}
	for (int t = 0; t < TL_THREADS; t += TL_BATCH) {
		for (int k = 0; k < TL_BATCH; k++)
			ck_assert_rc(pthread_create(&th[k], NULL, tl_thread, (void *)(intptr_t)(t + k)), 0);
		for (int k = 0; k < TL_BATCH; k++)
			ck_assert_rc(pthread_join(th[k], NULL), 0);
		ck_assert_msg(atomic_load(&tl_bad) == 0, "%ld failures; first: %s", atomic_load(&tl_bad), tl_msg);
	}
	for (int t = 0; t < TL_THREADS; t++)
		for (int round = 0; round < TL_ROUNDS; round++)
			for (int j = tl_first(t, round); j < tl_first(t, round) + TL_HELD; j++)
				if (tl_is_write(t, round, j))
					expected[j]++;
	for (int j = 0; j < TL_LOCKS; j++) {
		ck_assert_msg(tl_count[j] == expected[j], "lock %d: count %ld, expected %ld", j, tl_count[j],
			      expected[j]);
		ck_assert_rc(pthread_rwlock_trywrlock(&tl_lock[j]), 0);
		ck_assert_rc(pthread_rwlock_unlock(&tl_lock[j]), 0);
		ck_assert_rc(pthread_rwlock_destroy(&tl_lock[j]), 0);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Mutual exclusion stress                                             */
/* ------------------------------------------------------------------ */

enum { MX_LOCKS = 4, MX_THREADS = 8 };

static pthread_rwlock_t mx_lock[MX_LOCKS];
static bool mx_recursive_ok[MX_LOCKS] = { true, false, true, true };
static atomic_int mx_readers[MX_LOCKS], mx_writers[MX_LOCKS];
static long mx_plain[MX_LOCKS];         /* changed only under the write lock */
static atomic_long mx_wr_ok[MX_LOCKS];  /* successful write acquisitions */
static atomic_long mx_rd_ok, mx_timeouts, mx_busy, mx_bad;
static atomic_bool mx_stop;
static char mx_msg[256];

static void mx_fail(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&mx_bad, 1) == 0) {
		va_start(ap, fmt);
		vsnprintf(mx_msg, sizeof(mx_msg), fmt, ap);
		va_end(ap);
	}
}

static unsigned mx_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void mx_spin(unsigned n)
{
	for (volatile unsigned i = 0; i < n; i++)
		;
}

/* Acquire lock i with op; 0 on success, 1 on a permitted failure. */
static int mx_acquire(int i, enum op op, unsigned *seed)
{
	int rc = op_rel(&mx_lock[i], op, 1 + mx_rand(seed) % 4);

	if (rc == 0)
		return 0;
	if (rc == ETIMEDOUT && op_is_timed(op)) {
		atomic_fetch_add(&mx_timeouts, 1);
		return 1;
	}
	if (rc == EBUSY && op_is_try(op)) {
		atomic_fetch_add(&mx_busy, 1);
		return 1;
	}
	mx_fail("%s on lock %d returned %s", op_names[op], i, errname(rc));
	return 1;
}

static void mx_release(int i)
{
	int rc = pthread_rwlock_unlock(&mx_lock[i]);

	if (rc)
		mx_fail("unlock of lock %d returned %s", i, errname(rc));
}

static void mx_read_section(int i, unsigned *seed)
{
	int w;

	atomic_fetch_add(&mx_readers[i], 1);
	if ((w = atomic_load(&mx_writers[i])) != 0)
		mx_fail("reader inside lock %d beside %d writer(s)", i, w);
	if (mx_recursive_ok[i] && mx_rand(seed) % 8 == 0) {
		enum op rop = (enum op[]){ OP_RD, OP_TRYRD, OP_TIMEDRD, OP_CLOCKRD_MONO }[mx_rand(seed) % 4];
		int rc = op_rel(&mx_lock[i], rop, 1000);

		if (rc)
			mx_fail("recursive %s on lock %d returned %s", op_names[rop], i, errname(rc));
		else
			mx_release(i);
	}
	mx_spin(mx_rand(seed) % 200);
	if ((w = atomic_load(&mx_writers[i])) != 0)
		mx_fail("reader inside lock %d beside %d writer(s)", i, w);
	atomic_fetch_sub(&mx_readers[i], 1);
}

static void mx_write_section(int i, unsigned *seed)
{
	int w, r;

	if ((w = atomic_fetch_add(&mx_writers[i], 1)) != 0)
		mx_fail("writer inside lock %d beside %d other writer(s)", i, w);
	if ((r = atomic_load(&mx_readers[i])) != 0)
		mx_fail("writer inside lock %d beside %d reader(s)", i, r);
	long v = mx_plain[i];
	mx_spin(mx_rand(seed) % 200);
	mx_plain[i] = v + 1;
	atomic_fetch_add(&mx_wr_ok[i], 1);
	if ((r = atomic_load(&mx_readers[i])) != 0)
		mx_fail("writer inside lock %d beside %d reader(s)", i, r);
	atomic_fetch_sub(&mx_writers[i], 1);
}

static void *mx_thread(void *p)
{
	unsigned seed = (unsigned)(intptr_t)p * 7919u + 1;

	while (!atomic_load_explicit(&mx_stop, memory_order_relaxed) && atomic_load(&mx_bad) == 0) {
		int i = mx_rand(&seed) % MX_LOCKS;
		enum op op = mx_rand(&seed) % OP_COUNT;

		if (mx_acquire(i, op, &seed))
			continue;
		if (op_is_write(op)) {
			mx_write_section(i, &seed);
		} else {
			atomic_fetch_add(&mx_rd_ok, 1);
			mx_read_section(i, &seed);
			/* sometimes nest a read of a higher-numbered lock */
			if (i + 1 < MX_LOCKS && mx_rand(&seed) % 4 == 0) {
				int j = i + 1 + mx_rand(&seed) % (MX_LOCKS - i - 1);
				enum op nop = (enum op[]){ OP_RD, OP_TRYRD, OP_CLOCKRD_RT }[mx_rand(&seed) % 3];

				if (!mx_acquire(j, nop, &seed)) {
					mx_read_section(j, &seed);
					mx_release(j);
				}
			}
		}
		mx_release(i);
	}
	return NULL;
}

START_TEST(mutual_exclusion_holds_under_mixed_stress)
{
	pthread_t th[MX_THREADS];
	long total_wr = 0;

	init_default(&mx_lock[0]);
	init_prefer_writer(&mx_lock[1]);
	init_kind(&mx_lock[2], PTHREAD_RWLOCK_PREFER_READER_NP, PTHREAD_PROCESS_SHARED);
	mx_lock[3] = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
	for (int t = 0; t < MX_THREADS; t++)
		ck_assert_rc(pthread_create(&th[t], NULL, mx_thread, (void *)(intptr_t)t), 0);
	sleep_ms(2000);
	atomic_store(&mx_stop, true);
	for (int t = 0; t < MX_THREADS; t++)
		ck_assert_rc(pthread_join(th[t], NULL), 0);
	ck_assert_msg(atomic_load(&mx_bad) == 0, "%ld failures; first: %s", atomic_load(&mx_bad), mx_msg);
	for (int i = 0; i < MX_LOCKS; i++) {
		ck_assert_msg(mx_plain[i] == atomic_load(&mx_wr_ok[i]),
			      "lock %d: %ld increments under the write lock, but %ld write acquisitions "
			      "(lost update)", i, mx_plain[i], atomic_load(&mx_wr_ok[i]));
		total_wr += mx_plain[i];
		ck_assert_rc(pthread_rwlock_trywrlock(&mx_lock[i]), 0);
		ck_assert_rc(pthread_rwlock_unlock(&mx_lock[i]), 0);
		ck_assert_rc(pthread_rwlock_destroy(&mx_lock[i]), 0);
	}
	ck_assert_msg(total_wr > 100 && atomic_load(&mx_rd_ok) > 100,
		      "too little progress: %ld writes, %ld reads", total_wr, atomic_load(&mx_rd_ok));
	fprintf(stderr, "mutual_exclusion_holds_under_mixed_stress: %ld writes, %ld reads, %ld timeouts, "
		"%ld EBUSY\n", total_wr, atomic_load(&mx_rd_ok), atomic_load(&mx_timeouts),
		atomic_load(&mx_busy));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Short deadlines under contention: no deadlock, no lost wake-up       */
/* ------------------------------------------------------------------ */

/*
 * Threads hammer one lock with a mix of operations whose deadlines (100 us)
 * often pass while they wait.  Waiters that give up must leave the lock
 * consistent: some thread must always make progress.  A watchdog fails the
 * test if no operation completes for 1.5 s.
 */
struct churn {
	pthread_rwlock_t lock;
	const enum op *ops;
	size_t nops;
	atomic_long done, bad;
	atomic_int readers, writers;
	atomic_bool stop;
	char msg[200];
};

static void churn_fail(struct churn *c, const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&c->bad, 1) == 0) {
		va_start(ap, fmt);
		vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
		va_end(ap);
	}
}

static struct churn *churn_arg;

static void *churn_thread(void *p)
{
	struct churn *c = churn_arg;
	unsigned seed = (unsigned)(intptr_t)p * 2654435761u + 7;

	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		enum op op;
		struct timespec abs;
		int rc;

		seed = seed * 1103515245u + 12345u;
		op = c->ops[(seed >> 8) % c->nops];
		abs = ts_now(op_clock(op));
		abs.tv_nsec += 100000;
		if (abs.tv_nsec >= 1000000000L) {
			abs.tv_sec++;
			abs.tv_nsec -= 1000000000L;
		}
		rc = op_abs(&c->lock, op, &abs);
		if (rc == 0) {
			if (op_is_write(op)) {
				if (atomic_fetch_add(&c->writers, 1) != 0 || atomic_load(&c->readers) != 0)
					churn_fail(c, "%s: writer inside beside others", op_names[op]);
				atomic_fetch_sub(&c->writers, 1);
			} else {
				atomic_fetch_add(&c->readers, 1);
				if (atomic_load(&c->writers) != 0)
					churn_fail(c, "%s: reader inside beside a writer", op_names[op]);
				atomic_fetch_sub(&c->readers, 1);
			}
			rc = pthread_rwlock_unlock(&c->lock);
			if (rc)
				churn_fail(c, "unlock after %s returned %s", op_names[op], errname(rc));
		} else if (!(rc == ETIMEDOUT && op_is_timed(op)) &&
			   !(rc == EBUSY && op_is_try(op))) {
			churn_fail(c, "%s returned %s", op_names[op], errname(rc));
		}
		atomic_fetch_add_explicit(&c->done, 1, memory_order_relaxed);
	}
	return NULL;
}

/*
 * glibc 2.36's writer-preferring lock itself now and then leaves its
 * waiters waiting for each other for good in this churn when timed write
 * locks give up (results/issue13/noharm-s7/prefer-writer-churn.txt,
 * results/issue13/torture-s14/; README, compatibility): a primary writer
 * whose deadline passes hands the lock to a waiting writer before the last
 * reader has announced the write phase in __wrphase_futex, and that late
 * announcement lands in the next read phase.  Where the lock is glibc's and
 * the churn has timed write locks, a stall there is glibc's behaviour,
 * reported and not failed; exclusion and every result are still checked
 * up to it.  Without timed writes a stall fails under every lock.
 */
static bool churn_has_timed_write(const struct churn *c)
{
	for (size_t i = 0; i < c->nops; i++)
		if (op_is_write(c->ops[i]) && op_is_timed(c->ops[i]))
			return true;
	return false;
}

static bool churn_stall_is_glibcs(bool prefer_writer, struct churn *c, const char *what)
{
	if (!prefer_writer || !lock_underneath_is_glibcs() || !churn_has_timed_write(c))
		return false;
	ck_assert_msg(atomic_load(&c->bad) == 0, "%s", c->msg);
	fprintf(stderr, "%s after %ld operations on glibc's writer-preferring lock: glibc 2.36's own "
		"lost phase hand-over after a timed write lock gave up (README, compatibility); "
		"not a failure here\n", what, atomic_load(&c->done));
	atomic_store(&c->stop, true);
	return true;
}

static void check_churn_makes_progress(const enum op *ops, size_t nops, int nthreads, bool prefer_writer)
{
	static struct churn c;
	pthread_t th[8];
	struct timespec start = ts_now(CLOCK_MONOTONIC), last_change = start;
	long last = -1;

	memset(&c, 0, sizeof(c));
	if (prefer_writer)
		init_prefer_writer(&c.lock);
	else
		init_default(&c.lock);
	c.ops = ops;
	c.nops = nops;
	churn_arg = &c;
	for (int t = 0; t < nthreads; t++)
		ck_assert_rc(pthread_create(&th[t], NULL, churn_thread, (void *)(intptr_t)t), 0);
	while (ms_since(start) < 2000) {
		long d;

		sleep_ms(20);
		d = atomic_load(&c.done);
		if (d != last) {
			last = d;
			last_change = ts_now(CLOCK_MONOTONIC);
		}
		if (ms_since(last_change) >= 1500 &&
		    churn_stall_is_glibcs(prefer_writer, &c, "no operation completed for 1.5 s"))
			return; /* the waiters stuck in glibc end with the test's process */
		ck_assert_msg(ms_since(last_change) < 1500,
			      "no lock operation completed for 1.5 s after %ld had (deadlock or lost wake-up "
			      "among waiters whose deadlines passed)", d);
		ck_assert_msg(atomic_load(&c.bad) == 0, "%s", c.msg);
	}
	atomic_store(&c.stop, true);
	for (int t = 0; t < nthreads; t++) {
		struct timespec dl = ts_add_ms(ts_now(CLOCK_REALTIME), 3000);
		int rc = pthread_timedjoin_np(th[t], NULL, &dl);

		if (rc != 0 && churn_stall_is_glibcs(prefer_writer, &c, "a thread still blocked 3 s after the run"))
			return;
		ck_assert_msg(rc == 0, "a thread was still blocked in a lock operation 3 s after the "
			      "run ended (deadlock or lost wake-up among waiters whose deadlines passed; "
			      "%ld operations had completed)", atomic_load(&c.done));
	}
	ck_assert_msg(atomic_load(&c.bad) == 0, "%ld failures; first: %s", atomic_load(&c.bad), c.msg);
	ck_assert_rc(pthread_rwlock_trywrlock(&c.lock), 0);
	ck_assert_rc(pthread_rwlock_unlock(&c.lock), 0);
}

static const enum op churn_timed_writers_untimed_readers[] = {
	OP_WR, OP_TIMEDWR, OP_CLOCKWR_MONO, OP_CLOCKWR_RT, OP_RD, OP_RD, OP_RD,
};
static const enum op churn_timed_readers_untimed_writers[] = {
	OP_WR, OP_WR, OP_TIMEDRD, OP_CLOCKRD_MONO, OP_CLOCKRD_RT, OP_RD,
};
static const enum op churn_untimed_writers[] = {
	OP_RD, OP_TRYRD, OP_TIMEDRD, OP_CLOCKRD_RT, OP_CLOCKRD_MONO, OP_WR, OP_TRYWR,
};
static const enum op churn_all[] = {
	OP_RD, OP_TRYRD, OP_TIMEDRD, OP_CLOCKRD_RT, OP_CLOCKRD_MONO,
	OP_WR, OP_TRYWR, OP_TIMEDWR, OP_CLOCKWR_RT, OP_CLOCKWR_MONO,
};

START_TEST(timed_writers_giving_up_among_readers_never_deadlock)
{
	check_churn_makes_progress(churn_timed_writers_untimed_readers,
				   NELEM(churn_timed_writers_untimed_readers), 4, false);
}
END_TEST

START_TEST(timed_readers_giving_up_among_writers_never_deadlock)
{
	check_churn_makes_progress(churn_timed_readers_untimed_writers,
				   NELEM(churn_timed_readers_untimed_writers), 4, false);
}
END_TEST

START_TEST(all_lock_operations_with_short_deadlines_never_deadlock)
{
	check_churn_makes_progress(churn_all, NELEM(churn_all), 6, false);
}
END_TEST

START_TEST(all_lock_operations_with_short_deadlines_never_deadlock_on_prefer_writer_lock)
{
	/* no recursion here, so the writer-preferring kind cannot self-deadlock */
	check_churn_makes_progress(churn_all, NELEM(churn_all), 6, true);
}
END_TEST

START_TEST(every_read_operation_with_untimed_writers_never_deadlocks_on_prefer_writer_lock)
{
	/* fails under every lock, glibc's included (churn_stall_is_glibcs) */
	check_churn_makes_progress(churn_untimed_writers, NELEM(churn_untimed_writers), 6, true);
}
END_TEST

/* ------------------------------------------------------------------ */
/* No leak over 100,000 locks                                          */
/* ------------------------------------------------------------------ */

static long rss_bytes(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident * sysconf(_SC_PAGESIZE);
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* All n locks live at once; each used (held) on its own. */
static void cycle_locks(pthread_rwlock_t *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_rc(pthread_rwlock_init(&a[i], NULL), 0);
	for (size_t i = 0; i < n; i++) {
		ck_assert_rc(pthread_rwlock_rdlock(&a[i]), 0);
		ck_assert_rc(pthread_rwlock_tryrdlock(&a[i]), 0);
		ck_assert_rc(pthread_rwlock_unlock(&a[i]), 0);
		ck_assert_rc(pthread_rwlock_unlock(&a[i]), 0);
		ck_assert_rc(pthread_rwlock_wrlock(&a[i]), 0);
		ck_assert_rc(pthread_rwlock_unlock(&a[i]), 0);
	}
	for (size_t i = 0; i < n; i++)
		ck_assert_rc(pthread_rwlock_destroy(&a[i]), 0);
}

START_TEST(hundred_thousand_locks_init_use_destroy_do_not_leak)
{
	enum { N = 100000 };
	pthread_rwlock_t *a = malloc(N * sizeof(*a));
	long rss0, rss1;
	size_t heap0, heap1;

	ck_assert_ptr_nonnull(a);
	memset(a, 0xa5, N * sizeof(*a));
	cycle_locks(a, 1000); /* warm-up: per-thread and per-process setup */
	{
		pthread_rwlock_t *p = malloc(sizeof(*p));
		ck_assert_rc(pthread_rwlock_init(p, NULL), 0);
		ck_assert_rc(pthread_rwlock_destroy(p), 0);
		free(p);
	}
	/*
	 * All 100,000 live at once, at distinct addresses.  destroy changes
	 * nothing (as glibc's), so a variant with heap blocks keeps one per
	 * address for the next lock there: memory follows the peak number of
	 * live locks, measured from the first peak on.  Two more rounds at
	 * the same addresses, and the one-at-a-time phase, must not add.
	 */
	cycle_locks(a, N);
	heap0 = heap_in_use();
	for (int round = 0; round < 2; round++)
		cycle_locks(a, N);
	/*
	 * A variant may keep a heap block per live lock: resident memory may
	 * follow the peak number of live locks (the allocator keeps freed
	 * pages), so RSS is measured over the one-at-a-time phase only.
	 */
	rss0 = rss_bytes();
	/* one at a time in fresh heap blocks */
	for (int i = 0; i < N; i++) {
		pthread_rwlock_t *p = malloc(sizeof(*p));

		ck_assert_ptr_nonnull(p);
		ck_assert_rc(pthread_rwlock_init(p, NULL), 0);
		ck_assert_rc(pthread_rwlock_rdlock(p), 0);
		ck_assert_rc(pthread_rwlock_unlock(p), 0);
		ck_assert_rc(pthread_rwlock_wrlock(p), 0);
		ck_assert_rc(pthread_rwlock_unlock(p), 0);
		ck_assert_rc(pthread_rwlock_destroy(p), 0);
		free(p);
	}
	rss1 = rss_bytes();
	heap1 = heap_in_use();
	fprintf(stderr, "hundred_thousand_locks: RSS %+ld KiB, heap in use %+ld KiB\n",
		(rss1 - rss0) / 1024, ((long)heap1 - (long)heap0) / 1024);
	ck_assert_msg(rss1 - rss0 < 1024 * 1024, "RSS grew by %ld KiB over 100,000 one-at-a-time lock lifetimes",
		      (rss1 - rss0) / 1024);
	ck_assert_msg((long)heap1 - (long)heap0 < 1024 * 1024,
		      "malloc'd memory in use grew by %ld KiB over 300,000 lock lifetimes after the peak",
		      ((long)heap1 - (long)heap0) / 1024);
	free(a);
}
END_TEST

enum { MANY_HELD = 10000 };

static void *hold_many_at_once(void *p)
{
	pthread_rwlock_t *a = p;
	intptr_t bad = 0;

	for (int i = 0; i < MANY_HELD; i++)
		bad |= i % 3 ? pthread_rwlock_rdlock(&a[i]) : pthread_rwlock_wrlock(&a[i]);
	for (int i = 0; i < MANY_HELD; i++)
		bad |= pthread_rwlock_unlock(&a[(i * 7919) % MANY_HELD]);
	return (void *)bad;
}

static void run_hold_many_thread(pthread_rwlock_t *a)
{
	pthread_t th;
	void *ret;

	ck_assert_rc(pthread_create(&th, NULL, hold_many_at_once, a), 0);
	ck_assert_rc(pthread_join(th, &ret), 0);
	ck_assert_msg(ret == NULL, "a lock or unlock failed in a thread holding %d locks at once", MANY_HELD);
}

START_TEST(threads_holding_10000_locks_at_once_leave_no_memory_behind)
{
	pthread_rwlock_t *a = calloc(MANY_HELD, sizeof(*a));
	long rss0, rss1;
	size_t heap0, heap1;

	ck_assert_ptr_nonnull(a);
	for (int i = 0; i < MANY_HELD; i++)
		init_default(&a[i]);
	run_hold_many_thread(a); /* warm-up */
	rss0 = rss_bytes();
	heap0 = heap_in_use();
	for (int t = 0; t < 20; t++)
		run_hold_many_thread(a);
	rss1 = rss_bytes();
	heap1 = heap_in_use();
	fprintf(stderr, "threads_holding_10000_locks: RSS %+ld KiB, heap in use %+ld KiB\n",
		(rss1 - rss0) / 1024, ((long)heap1 - (long)heap0) / 1024);
	ck_assert_msg((long)heap1 - (long)heap0 < 1024 * 1024,
		      "malloc'd memory in use grew by %ld KiB after 20 threads each held %d locks and exited",
		      ((long)heap1 - (long)heap0) / 1024, MANY_HELD);
	ck_assert_msg(rss1 - rss0 < 1024 * 1024,
		      "RSS grew by %ld KiB after 20 threads each held %d locks and exited",
		      (rss1 - rss0) / 1024, MANY_HELD);
	for (int i = 0; i < MANY_HELD; i++)
		ck_assert_rc(pthread_rwlock_destroy(&a[i]), 0);
	free(a);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Which implementation answered                                       */
/* ------------------------------------------------------------------ */

struct rw_sym {
	const char *name;
	void *addr; /* the address as this program sees it */
};

#define RW_SYM(n) { #n, (void *)&n }
static struct rw_sym rw_syms[] = {
	RW_SYM(pthread_rwlock_init),        RW_SYM(pthread_rwlock_destroy),
	RW_SYM(pthread_rwlock_rdlock),      RW_SYM(pthread_rwlock_tryrdlock),
	RW_SYM(pthread_rwlock_timedrdlock), RW_SYM(pthread_rwlock_clockrdlock),
	RW_SYM(pthread_rwlock_wrlock),      RW_SYM(pthread_rwlock_trywrlock),
	RW_SYM(pthread_rwlock_timedwrlock), RW_SYM(pthread_rwlock_clockwrlock),
	RW_SYM(pthread_rwlock_unlock),
};

static const char *expected_lib(void)
{
	const char *e = getenv("EXPECT_RWLOCK_LIB");

	return (e && *e) ? e : "libc.so.6";
}

static void expect_defined_in(const char *what, const char *name, void *addr)
{
	Dl_info info;
	char buf[PATH_MAX];
	const char *base;

	ck_assert_msg(dladdr(addr, &info) != 0 && info.dli_fname,
		      "dladdr found no object for %s (%s at %p)", name, what, addr);
	snprintf(buf, sizeof(buf), "%s", info.dli_fname);
	base = basename(buf);
	ck_assert_msg(strcmp(base, expected_lib()) == 0,
		      "%s (%s) is defined in %s (symbol %s), expected %s", name, what, info.dli_fname,
		      info.dli_sname ? info.dli_sname : "?", expected_lib());
}

START_TEST(all_eleven_rwlock_symbols_resolve_non_null)
{
	for (size_t i = 0; i < NELEM(rw_syms); i++) {
		void *p = dlsym(RTLD_DEFAULT, rw_syms[i].name);

		ck_assert_msg(p != NULL, "dlsym(RTLD_DEFAULT, \"%s\") returned NULL: %s", rw_syms[i].name,
			      dlerror());
		ck_assert_msg(rw_syms[i].addr != NULL, "&%s is NULL", rw_syms[i].name);
	}
}
END_TEST

START_TEST(rwlock_symbols_from_dlsym_are_defined_in_expected_library)
{
	for (size_t i = 0; i < NELEM(rw_syms); i++) {
		void *p = dlsym(RTLD_DEFAULT, rw_syms[i].name);

		ck_assert_msg(p != NULL, "dlsym(RTLD_DEFAULT, \"%s\") returned NULL", rw_syms[i].name);
		expect_defined_in("dlsym(RTLD_DEFAULT)", rw_syms[i].name, p);
	}
}
END_TEST

START_TEST(rwlock_functions_called_by_program_are_defined_in_expected_library)
{
	/* addresses taken in this program's code: what its calls resolve to */
	expect_defined_in("address taken in the program", "pthread_rwlock_rdlock",
			  (void *)&pthread_rwlock_rdlock);
	for (size_t i = 0; i < NELEM(rw_syms); i++)
		expect_defined_in("address taken in the program", rw_syms[i].name, rw_syms[i].addr);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Suite                                                               */
/* ------------------------------------------------------------------ */

#define ADD_LIBBRAVO_TEST(tc, fn)                                             \
	do {                                                                  \
		if (under_glibc())                                            \
			fprintf(stderr, "not run under glibc ([libbravo] only): %s\n", #fn); \
		else                                                          \
			tcase_add_test(tc, fn);                               \
	} while (0)

/* [default]: glibc's result, libbravo's default mode; not in strict mode. */
#define ADD_DEFAULT_TEST(tc, fn)                                              \
	do {                                                                  \
		if (strict_mode())                                            \
			fprintf(stderr, "not run in strict mode ([default]): %s\n", #fn); \
		else                                                          \
			tcase_add_test(tc, fn);                               \
	} while (0)

/* [libbravo] and [default]: libbravo's default mode only. */
#define ADD_LIBBRAVO_DEFAULT_TEST(tc, fn)                                     \
	do {                                                                  \
		if (under_glibc() || strict_mode())                           \
			fprintf(stderr, "not run under glibc or in strict mode: %s\n", #fn); \
		else                                                          \
			tcase_add_test(tc, fn);                               \
	} while (0)

static TCase *new_tcase(Suite *s, const char *name, double timeout)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, timeout);
	suite_add_tcase(s, tc);
	return tc;
}

static Suite *rwlock_suite(void)
{
	Suite *s = suite_create("posix_rwlock");
	TCase *tc;

	tc = new_tcase(s, "edeadlk", 10);
	tcase_add_test(tc, rdlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, timedrdlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, clockrdlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, wrlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, timedwrlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, clockwrlock_while_holding_write_returns_edeadlk);
	tcase_add_test(tc, read_lock_while_holding_write_of_prefer_writer_lock_returns_edeadlk);
	ADD_LIBBRAVO_TEST(tc, wrlock_while_holding_read_returns_edeadlk);
	ADD_LIBBRAVO_TEST(tc, timedwrlock_while_holding_read_returns_edeadlk);
	ADD_LIBBRAVO_TEST(tc, clockwrlock_while_holding_read_returns_edeadlk);
	ADD_LIBBRAVO_TEST(tc, wrlock_while_holding_read_beside_other_readers_returns_edeadlk);
	ADD_LIBBRAVO_TEST(tc, wrlock_while_holding_read_recursively_returns_edeadlk);
	ADD_LIBBRAVO_TEST(tc, write_locks_while_holding_fast_read_return_edeadlk_or_ebusy);

	tc = new_tcase(s, "ebusy", 10);
	tcase_add_test(tc, tryrdlock_while_other_thread_holds_write_returns_ebusy);
	tcase_add_test(tc, tryrdlock_while_caller_holds_write_returns_ebusy);
	tcase_add_test(tc, trywrlock_while_other_thread_holds_read_returns_ebusy);
	tcase_add_test(tc, trywrlock_while_other_thread_holds_write_returns_ebusy);
	tcase_add_test(tc, trywrlock_while_caller_holds_read_returns_ebusy);
	tcase_add_test(tc, trywrlock_while_caller_holds_write_returns_ebusy);
	tcase_add_test(tc, write_holds_of_two_locks_released_in_either_order_release_each);
	tcase_add_test(tc, tryrdlock_while_caller_holds_read_succeeds_and_needs_matching_unlock);
	tcase_add_test(tc, tryrdlock_while_other_threads_hold_read_succeeds);

	tc = new_tcase(s, "unlock_unheld", 10);
	ADD_LIBBRAVO_DEFAULT_TEST(tc, unlock_of_free_lock_returns_0_and_changes_nothing);
	ADD_LIBBRAVO_DEFAULT_TEST(tc, unlock_after_releasing_all_read_locks_returns_0_and_changes_nothing);
	ADD_LIBBRAVO_DEFAULT_TEST(tc, unlock_after_releasing_write_lock_returns_0_and_changes_nothing);
	ADD_DEFAULT_TEST(tc, unlock_while_other_thread_holds_read_releases_that_hold_as_glibc_does);
	ADD_DEFAULT_TEST(tc, unlocks_while_two_other_threads_hold_read_release_one_hold_each_as_glibc_does);
	ADD_LIBBRAVO_DEFAULT_TEST(tc, unlock_while_other_thread_holds_write_returns_0_releases_nothing_and_says_so_once);
	ADD_LIBBRAVO_DEFAULT_TEST(tc, unlock_of_lock_held_only_by_caller_on_another_lock_returns_0_and_changes_nothing);

	/* [strict]: BRAVO_CHECK=1 (tests/preload/run: CK_RUN_CASE=strict). */
	if (strict_mode()) {
		tc = new_tcase(s, "strict", 10);
		tcase_add_test(tc, strict_unlock_of_free_lock_returns_eperm);
		tcase_add_test(tc, strict_unlock_after_releasing_all_read_locks_returns_eperm);
		tcase_add_test(tc, strict_unlock_after_releasing_write_lock_returns_eperm);
		tcase_add_test(tc, strict_unlock_while_other_thread_holds_read_returns_eperm_and_releases_nothing);
		tcase_add_test(tc, strict_unlock_while_other_thread_holds_write_returns_eperm_and_releases_nothing);
		tcase_add_test(tc, strict_unlock_of_lock_held_only_by_caller_on_another_lock_returns_eperm);
		tcase_add_test(tc, strict_destroy_of_held_lock_returns_ebusy_and_the_lock_stays_held);
		tcase_add_test(tc, strict_calls_on_a_destroyed_lock_return_einval);
		tcase_add_test(tc, unlock_in_child_of_pshared_lock_read_held_by_parent_releases_it_as_glibc_does);
	}

	tc = new_tcase(s, "timed", 15);
	tcase_add_test(tc, timed_locks_with_invalid_nsec_return_einval_even_on_a_free_lock);
	tcase_add_test(tc, timedrdlock_with_invalid_nsec_returns_einval_when_lock_is_busy);
	tcase_add_test(tc, clockrdlock_with_invalid_nsec_returns_einval_when_lock_is_busy);
	tcase_add_test(tc, timedwrlock_with_invalid_nsec_returns_einval_when_lock_is_busy);
	tcase_add_test(tc, clockwrlock_with_invalid_nsec_returns_einval_when_lock_is_busy);
	tcase_add_test(tc, clockrdlock_with_unsupported_clock_returns_einval);
	tcase_add_test(tc, clockwrlock_with_unsupported_clock_returns_einval);
	tcase_add_test(tc, timedrdlock_on_free_lock_succeeds_with_past_deadline);
	tcase_add_test(tc, clockrdlock_on_free_lock_succeeds_with_past_deadline);
	tcase_add_test(tc, timedwrlock_on_free_lock_succeeds_with_past_deadline);
	tcase_add_test(tc, clockwrlock_on_free_lock_succeeds_with_past_deadline);
	tcase_add_test(tc, timedrdlock_on_read_held_lock_succeeds_with_past_deadline);
	tcase_add_test(tc, timed_rdlocks_with_past_deadline_time_out_when_write_held);
	tcase_add_test(tc, timed_wrlocks_with_past_deadline_time_out_when_held);
	tcase_add_test(tc, timed_locks_with_negative_tv_sec_time_out_when_busy);
	tcase_add_test(tc, timed_rdlocks_time_out_after_50ms_deadline_on_both_clocks);
	tcase_add_test(tc, timed_wrlocks_time_out_after_50ms_deadline_on_both_clocks);
	tcase_add_test(tc, timed_rdlock_succeeds_when_writer_releases_before_deadline);
	tcase_add_test(tc, timed_wrlock_succeeds_when_reader_releases_before_deadline);
	tcase_add_test(tc, writer_acquires_after_readers_time_out);
	tcase_add_test(tc, reader_acquires_after_writer_times_out);
	tcase_add_test(tc, reader_acquires_after_writer_times_out_on_prefer_writer_lock);
	tcase_add_test(tc, blocked_waiters_acquire_after_timed_waiters_give_up_on_write_held_lock);
	tcase_add_test(tc, blocked_writers_acquire_after_timed_waiters_give_up_on_read_held_lock);
	tcase_add_test(tc, blocked_waiters_acquire_after_timed_waiters_give_up_on_prefer_writer_lock);

	tc = new_tcase(s, "exclusion", 20);
	tcase_add_test(tc, wrlock_waits_for_reader_that_read_the_lock_many_times);
	tcase_add_test(tc, trywrlock_refused_by_reader_leaves_later_writers_excluded);
	tcase_add_test(tc, timedwrlock_timing_out_on_reader_leaves_later_writers_excluded);
	tcase_add_test(tc, clockwrlock_with_past_deadline_on_reader_leaves_later_writers_excluded);
	tcase_add_test(tc, clockwrlock_timing_out_on_reader_leaves_later_writers_excluded);

	tc = new_tcase(s, "phases", 20);
	tcase_add_test(tc, reader_descheduled_across_two_writer_phases_still_gets_in);
	tcase_add_test(tc, timed_reader_descheduled_past_its_deadline_across_writer_phases_leaves_lock_usable);

	tc = new_tcase(s, "recursion", 15);
	tcase_add_test(tc, rdlock_1000_times_while_writer_waits_then_writer_acquires);
	tcase_add_test(tc, tryrdlock_recursive_while_writer_waits_succeeds);
	tcase_add_test(tc, timedrdlock_recursive_while_writer_waits_succeeds);
	tcase_add_test(tc, clockrdlock_recursive_while_writer_waits_succeeds);
	tcase_add_test(tc, recursive_reads_on_many_locks_are_counted_per_lock);

	tc = new_tcase(s, "initializers", 10);
	tcase_add_test(tc, static_initializer_lock_works_without_init);
	tcase_add_test(tc, writer_nonrecursive_initializer_lock_works_without_init);
	tcase_add_test(tc, calloc_zeroed_lock_works_without_init);
	tcase_add_test(tc, many_calloc_zeroed_locks_work_without_init);

	tc = new_tcase(s, "writer_preference", 15);
	tcase_add_test(tc, tryrdlock_by_new_reader_while_writer_waits_returns_ebusy_for_prefer_writer_kind);
	tcase_add_test(tc, tryrdlock_by_new_reader_while_writer_waits_returns_ebusy_for_writer_nonrecursive_initializer);
	tcase_add_test(tc, rdlock_by_new_reader_waits_behind_waiting_writer_for_prefer_writer_kind);
	tcase_add_test(tc, timed_rdlock_by_new_reader_times_out_while_writer_waits_for_prefer_writer_kind);

	tc = new_tcase(s, "destroy", 10);
	tcase_add_test(tc, destroy_of_idle_lock_returns_0);
	tcase_add_test(tc, destroy_of_static_initializer_lock_returns_0);
	tcase_add_test(tc, destroyed_then_reinitialized_lock_works);
	ADD_DEFAULT_TEST(tc, destroy_of_lock_the_caller_holds_returns_0_and_the_lock_stays_held);
	ADD_DEFAULT_TEST(tc, destroy_of_lock_another_thread_holds_returns_0_and_the_lock_stays_held);
	ADD_DEFAULT_TEST(tc, calls_on_a_destroyed_lock_work_as_on_glibc);

	tc = new_tcase(s, "pshared", 20);
	tcase_add_test(tc, pshared_lock_write_held_by_caller_answers_as_glibc);
	tcase_add_test(tc, pshared_lock_excludes_across_fork);
	tcase_add_test(tc, pshared_lock_wakes_waiter_in_other_process);
	tcase_add_test(tc, pshared_read_lock_in_one_process_excludes_writer_in_other);
	tcase_add_test(tc, pshared_write_lock_taken_before_fork_is_not_owned_by_child);
	tcase_add_test(tc, pshared_lock_in_file_works_in_exec_process_that_only_maps_it);
	tcase_add_test(tc, unlock_in_child_of_pshared_lock_read_held_by_parent_releases_it_as_glibc_does);

	tc = new_tcase(s, "scale", 60);
	tcase_add_test(tc, thousand_threads_holding_twenty_locks_each_complete_with_correct_counts);
	tcase_add_test(tc, mutual_exclusion_holds_under_mixed_stress);
	tcase_add_test(tc, timed_writers_giving_up_among_readers_never_deadlock);
	tcase_add_test(tc, timed_readers_giving_up_among_writers_never_deadlock);
	tcase_add_test(tc, all_lock_operations_with_short_deadlines_never_deadlock);
	tcase_add_test(tc, all_lock_operations_with_short_deadlines_never_deadlock_on_prefer_writer_lock);
	tcase_add_test(tc, every_read_operation_with_untimed_writers_never_deadlocks_on_prefer_writer_lock);
	tcase_add_test(tc, hundred_thousand_locks_init_use_destroy_do_not_leak);
	tcase_add_test(tc, threads_holding_10000_locks_at_once_leave_no_memory_behind);

	tc = new_tcase(s, "symbols", 10);
	tcase_add_test(tc, all_eleven_rwlock_symbols_resolve_non_null);
	tcase_add_test(tc, rwlock_symbols_from_dlsym_are_defined_in_expected_library);
	tcase_add_test(tc, rwlock_functions_called_by_program_are_defined_in_expected_library);

	return s;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--pshared-exec-child") == 0)
		return pshared_exec_child(argc, argv);
	if (argc > 1 && strcmp(argv[1], "--unlock-misuse-child") == 0)
		return unlock_misuse_child(argc, argv);

	return run_suite_env(rwlock_suite());
}
