/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * reader_calls.c - tests/preload/posix_rwlock_test: a reader's own calls
 * on the lock it reads -- a write lock, a read re-entry, an unlock by
 * another thread -- where glibc's lock answers for reads, as glibc's own
 * answers: under glibc, and under BRAVO-pthread outside strict mode,
 * which lists only its fast (table) holds and leaves the rest to glibc's
 * lock (reads_answered_as_glibc; doc/compatibility.md).  Elsewhere
 * libbravo's list of the thread's holds answers (edeadlk_ebusy.c:
 * EDEADLK), and those checks are not registered.
 *
 * Each check runs on three kinds of read hold, which BRAVO-pthread takes
 * three ways; under glibc they are all the same hold:
 *   HOLD_FIRST   the first read of a fresh lock (BRAVO: glibc's lock, and
 *                bias comes on behind it);
 *   HOLD_FAST    a read after many (BRAVO: a slot of the visible readers
 *                table, glibc's lock untouched);
 *   HOLD_SHARED  a read of a private lock in MAP_SHARED memory, which
 *                BRAVO never biases (doc/compatibility.md): every read
 *                of it is glibc's.
 * Under BRAVO-pthread the count in glibc's own bytes shows which way the
 * hold went (glibc_readers), so that each path is known to be the one
 * tested.  Under glibc and the profile's pass-through to glibc's lock
 * (libbravo-glibc.so) every hold is glibc's.  A wait that glibc would
 * make for ever is observed with a deadline.
 */
#include "posix_rwlock.h"

enum hold_kind { HOLD_FIRST, HOLD_FAST, HOLD_SHARED, HOLD_KINDS };

static const char *const hold_names[HOLD_KINDS] = {
	"the first read of a fresh lock", "a read after many", "a read of a lock in shared memory",
};

/* The lock kinds a check runs on, and how its messages name them. */
static const int lock_kinds[] = { PTHREAD_RWLOCK_DEFAULT_NP,
				  PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP };
enum { LOCK_KINDS = sizeof(lock_kinds) / sizeof(lock_kinds[0]) };
static const char *const lock_kind_notes[LOCK_KINDS] = { "", " (writer-preferring)" };

/* The lock has BRAVO's fast path, whose holds glibc's bytes do not count. */
static bool biased_lock(void)
{
	return strcmp(expected_rwlock_lib(), "libbravo-bravo-pthread.so") == 0;
}

/* A fresh lock of kind for a hold of kind k; free it with lock_free. */
static pthread_rwlock_t *lock_new(enum hold_kind k, int kind)
{
	pthread_rwlock_t *l;

	if (k == HOLD_SHARED) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		ck_assert_msg(p != MAP_FAILED, "mmap: %s", strerror(errno));
		memset(p, 0, 4096); /* the page present: libbravo looks at it */
		l = p;
	} else {
		l = calloc(1, sizeof(*l));
		ck_assert_ptr_nonnull(l);
	}
	init_kind(l, kind, PTHREAD_PROCESS_PRIVATE);
	if (k == HOLD_FAST)
		warm_reads(l, 2000);
	return l;
}

static void lock_free(pthread_rwlock_t *l, enum hold_kind k)
{
	pthread_rwlock_destroy(l);
	if (k == HOLD_SHARED)
		munmap(l, 4096);
	else
		free(l);
}

/*
 * Take one read hold of kind k (the caller's first of l), and check the
 * way it went: glibc's count is 0 for BRAVO-pthread's fast hold, 1 for
 * every other.
 */
static void read_hold(pthread_rwlock_t *l, enum hold_kind k)
{
	ck_assert_rc(pthread_rwlock_rdlock(l), 0);
	ck_assert_msg(glibc_readers(l) == (k == HOLD_FAST && biased_lock() ? 0u : 1u),
			      "%s: glibc's lock counts %u readers", hold_names[k], glibc_readers(l));
}

/* An unlock of l by a new thread; its result. */
static void *unlock_main(void *p)
{
	return (void *)(intptr_t)pthread_rwlock_unlock(p);
}

static int other_thread_unlock(pthread_rwlock_t *l)
{
	pthread_t th;
	void *rc;

	ck_assert_rc(pthread_create(&th, NULL, unlock_main, l), 0);
	ck_assert_rc(pthread_join(th, &rc), 0);
	return (int)(intptr_t)rc;
}

/* A thread that unlocks l after ms milliseconds. */
struct late_unlock {
	pthread_rwlock_t *l;
	long ms;
	int rc;
	pthread_t th;
};

static void *late_unlock_main(void *p)
{
	struct late_unlock *u = p;

	sleep_ms(u->ms);
	u->rc = pthread_rwlock_unlock(u->l);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* A write lock by the reader: a wait, as glibc's                      */
/* ------------------------------------------------------------------ */

/* glibc does not see that the caller reads the lock: its write waits. */
START_TEST(write_lock_by_its_reader_waits_as_under_glibc)
{
	for (int k = 0; k < HOLD_KINDS; k++) {
		pthread_rwlock_t *l = lock_new(k, PTHREAD_RWLOCK_DEFAULT_NP);
		struct timespec past = { 0, 0 };

		read_hold(l, k);
		ck_assert_rc(pthread_rwlock_trywrlock(l), EBUSY);
		ck_assert_msg(op_rel(l, OP_TIMEDWR, 100) == ETIMEDOUT,
			      "%s, then timedwrlock: not ETIMEDOUT", hold_names[k]);
		ck_assert_msg(op_rel(l, OP_CLOCKWR_MONO, 100) == ETIMEDOUT,
			      "%s, then clockwrlock: not ETIMEDOUT", hold_names[k]);
		ck_assert_msg(pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &past) == ETIMEDOUT,
			      "%s, then clockwrlock with a deadline in the past: not ETIMEDOUT",
			      hold_names[k]);
		expect_still_read_held_then_release(l);
		lock_free(l, k);
	}
}
END_TEST

/* The same on a writer-preferring lock, and beside another reader. */
START_TEST(write_lock_by_a_reader_beside_another_reader_waits_as_under_glibc)
{
	for (int kind = 0; kind < LOCK_KINDS; kind++) {
		for (int k = 0; k < HOLD_KINDS; k++) {
			pthread_rwlock_t *l = lock_new(k, lock_kinds[kind]);
			struct holder h;

			read_hold(l, k);
			holder_start(&h, l, false);
			ck_assert_msg(op_rel(l, OP_TIMEDWR, 100) == ETIMEDOUT,
				      "%s%s beside another reader, then timedwrlock: not ETIMEDOUT",
				      hold_names[k], lock_kind_notes[kind]);
			ck_assert_rc(pthread_rwlock_unlock(l), 0);
			ck_assert_other(l, OP_TRYWR, 0, EBUSY);
			holder_stop(&h);
			ck_assert_other(l, OP_TRYWR, 0, 0);
			lock_free(l, k);
		}
	}
}
END_TEST

/*
 * The wait is a real one: another thread's unlock of the caller's read
 * (glibc lets any thread release a read hold) lets its write in, and the
 * writer's unlock then releases its write.
 */
START_TEST(write_lock_by_its_reader_gets_in_once_another_thread_releases_the_read)
{
	for (int kind = 0; kind < LOCK_KINDS; kind++) {
		for (int k = 0; k < HOLD_KINDS; k++) {
			pthread_rwlock_t *l = lock_new(k, lock_kinds[kind]);
			struct late_unlock u = { .l = l, .ms = 100 };

			read_hold(l, k);
			ck_assert_rc(pthread_create(&u.th, NULL, late_unlock_main, &u), 0);
			ck_assert_msg(op_rel(l, OP_CLOCKWR_MONO, 5000) == 0,
				      "%s%s: the reader's write lock did not get in after another "
				      "thread released its read", hold_names[k], lock_kind_notes[kind]);
			ck_assert_rc(pthread_join(u.th, NULL), 0);
			ck_assert_rc(u.rc, 0);
			ck_assert_other(l, OP_TRYRD, 0, EBUSY);
			ck_assert_rc(pthread_rwlock_unlock(l), 0); /* the write */
			ck_assert_other(l, OP_TRYWR, 0, 0);
			/* and the lock works on for the caller */
			ck_assert_rc(pthread_rwlock_rdlock(l), 0);
			ck_assert_other(l, OP_TRYWR, 0, EBUSY);
			ck_assert_rc(pthread_rwlock_unlock(l), 0);
			ck_assert_other(l, OP_TRYWR, 0, 0);
			ck_assert_rc(pthread_rwlock_wrlock(l), 0);
			ck_assert_rc(pthread_rwlock_unlock(l), 0);
			ck_assert_other(l, OP_TRYWR, 0, 0);
			lock_free(l, k);
		}
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* A read re-entry: a new hold, as glibc's                              */
/* ------------------------------------------------------------------ */

/* A writer-preferring lock holds a reader's re-entry back behind a waiting writer. */
START_TEST(read_reentry_of_writer_preferring_lock_waits_behind_a_waiting_writer_as_under_glibc)
{
	for (int k = 0; k < HOLD_KINDS; k++) {
		pthread_rwlock_t *l = lock_new(k, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		struct waiter w;

		read_hold(l, k);
		waiter_start(&w, l, OP_WR, 0, false);
		waiter_expect_blocked(&w);
		ck_assert_msg(pthread_rwlock_tryrdlock(l) == EBUSY,
			      "%s, a writer waiting, then tryrdlock: not EBUSY", hold_names[k]);
		ck_assert_msg(op_rel(l, OP_TIMEDRD, 100) == ETIMEDOUT,
			      "%s, a writer waiting, then timedrdlock: not ETIMEDOUT", hold_names[k]);
		ck_assert_msg(!atomic_load(&w.done), "%s: the writer got in while it was read", hold_names[k]);
		ck_assert_rc(pthread_rwlock_unlock(l), 0);
		ck_assert_waiter_gets_through(&w, 0, "writer after the reader left");
		waiter_release_and_join(&w);
		lock_free(l, k);
	}
}
END_TEST

/*
 * Another thread's unlock releases one of the reader's holds (glibc
 * counts them), not its every re-entry: the lock stays read-held until
 * the reader's own unlock.
 */
START_TEST(unlock_by_another_thread_releases_one_of_a_reentered_readers_holds_as_under_glibc)
{
	for (int k = 0; k < HOLD_KINDS; k++) {
		pthread_rwlock_t *l;

		/*
		 * A fast hold's re-entry is counted on its entry: another
		 * thread's unlock then releases both (doc/compatibility.md).
		 */
		if (k == HOLD_FAST && biased_lock())
			continue;
		l = lock_new(k, PTHREAD_RWLOCK_DEFAULT_NP);
		read_hold(l, k);
		ck_assert_rc(pthread_rwlock_rdlock(l), 0);
		ck_assert_rc(other_thread_unlock(l), 0);
		ck_assert_msg(other_thread_op(l, OP_TRYWR, 0) == EBUSY,
			      "%s and a re-entry, one released by another thread: the lock is free",
			      hold_names[k]);
		ck_assert_rc(pthread_rwlock_unlock(l), 0);
		ck_assert_other(l, OP_TRYWR, 0, 0);
		lock_free(l, k);
	}
}
END_TEST

/* ------------------------------------------------------------------ */
/* Registration (main.c creates the test case)                         */
/* ------------------------------------------------------------------ */

void add_reader_calls_tests(TCase *tc)
{
	ADD_GLIBC_READS_TEST(tc, write_lock_by_its_reader_waits_as_under_glibc);
	ADD_GLIBC_READS_TEST(tc, write_lock_by_a_reader_beside_another_reader_waits_as_under_glibc);
	ADD_GLIBC_READS_TEST(tc, write_lock_by_its_reader_gets_in_once_another_thread_releases_the_read);
	ADD_GLIBC_READS_TEST(tc, read_reentry_of_writer_preferring_lock_waits_behind_a_waiting_writer_as_under_glibc);
	ADD_GLIBC_READS_TEST(tc, unlock_by_another_thread_releases_one_of_a_reentered_readers_holds_as_under_glibc);
}
