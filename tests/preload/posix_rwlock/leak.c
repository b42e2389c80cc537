/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * leak.c - tests/preload/posix_rwlock_test: no memory left behind by
 * 100,000 locks, or by threads that held 10,000 locks at once.
 */
#include "posix_rwlock.h"

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
/* Registration (main.c creates the test cases)                        */
/* ------------------------------------------------------------------ */

void add_scale_leak_tests(TCase *tc)
{
	tcase_add_test(tc, hundred_thousand_locks_init_use_destroy_do_not_leak);
	tcase_add_test(tc, threads_holding_10000_locks_at_once_leave_no_memory_behind);
}
