/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * scale.c - tests/preload/posix_rwlock_test: many threads on many locks,
 * and mutual exclusion under mixed stress.
 */
#include "posix_rwlock.h"

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
/* Registration (main.c creates the test cases)                        */
/* ------------------------------------------------------------------ */

void add_scale_threads_tests(TCase *tc)
{
	tcase_add_test(tc, thousand_threads_holding_twenty_locks_each_complete_with_correct_counts);
	tcase_add_test(tc, mutual_exclusion_holds_under_mixed_stress);
}
