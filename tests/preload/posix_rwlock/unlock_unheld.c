/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unlock_unheld.c - tests/preload/posix_rwlock_test: an unlock by a thread
 * that holds nothing: glibc's results in the default mode, EPERM in strict
 * mode (BRAVO_CHECK=1), and the child process (--unlock-misuse-child)
 * whose stderr shows libbravo's line.
 */
#include "posix_rwlock.h"

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
int unlock_misuse_child(int argc, char **argv)
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

static void *unlock_in_thread(void *l)
{
	return (void *)(intptr_t)pthread_rwlock_unlock(l);
}

/*
 * A reader whose read another thread released (glibc lets it) holds
 * nothing: its write lock gets in, and its next unlock releases that
 * write, as glibc's unlock does by its writer (libbravo once released
 * the forgotten read's list entry instead, and the write stayed held).
 * The read held through the lock underneath, then through BRAVO's table.
 */
START_TEST(reader_whose_read_another_thread_released_write_locks_and_unlocks_the_write)
{
	for (int warm = 0; warm < 2; warm++) {
		pthread_rwlock_t l;
		pthread_t th;
		void *rc;

		init_default(&l);
		if (warm)
			warm_reads(&l, 2000);
		ck_assert_rc(pthread_rwlock_rdlock(&l), 0);
		ck_assert_rc(pthread_create(&th, NULL, unlock_in_thread, &l), 0);
		ck_assert_rc(pthread_join(th, &rc), 0);
		ck_assert_int_eq((int)(intptr_t)rc, 0);
		ck_assert_rc(pthread_rwlock_trywrlock(&l), 0);
		ck_assert_other(&l, OP_TRYRD, 0, EBUSY);
		ck_assert_rc(pthread_rwlock_unlock(&l), 0);
		ck_assert_other(&l, OP_TRYWR, 0, 0);
		ck_assert_other(&l, OP_TRYRD, 0, 0);
		check_basic_usage(&l);
		pthread_rwlock_destroy(&l);
	}
}
END_TEST

/*
 * [libbravo] glibc corrupts its lock here.  libbravo: 0, nothing released,
 * and one line on stderr, once per process, which names no address (a
 * program's stderr may be read by others: libbravo(7), SECURITY).
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
	snprintf(prefix, sizeof(prefix), "libbravo: pthread_rwlock_unlock: ");
	ck_assert_msg(count_lines(err, prefix) == 1 && count_lines(err, "") == 1,
		      "want one line starting \"%s\" on stderr, got: \"%s\"", prefix, err);
	ck_assert_msg(strstr(err, addr) == NULL && strstr(err, "0x") == NULL,
		      "the line names an address (the lock is %s): \"%s\"", addr, err);
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
/* Registration (main.c creates the test cases)                        */
/* ------------------------------------------------------------------ */

void add_unlock_unheld_tests(TCase *tc)
{
	ADD_LIBBRAVO_DEFAULT_TEST(tc, unlock_of_free_lock_returns_0_and_changes_nothing);
	ADD_LIBBRAVO_DEFAULT_TEST(tc, unlock_after_releasing_all_read_locks_returns_0_and_changes_nothing);
	ADD_LIBBRAVO_DEFAULT_TEST(tc, unlock_after_releasing_write_lock_returns_0_and_changes_nothing);
	ADD_DEFAULT_TEST(tc, unlock_while_other_thread_holds_read_releases_that_hold_as_glibc_does);
	ADD_DEFAULT_TEST(tc, unlocks_while_two_other_threads_hold_read_release_one_hold_each_as_glibc_does);
	ADD_DEFAULT_TEST(tc, reader_whose_read_another_thread_released_write_locks_and_unlocks_the_write);
	ADD_LIBBRAVO_DEFAULT_TEST(tc, unlock_while_other_thread_holds_write_returns_0_releases_nothing_and_says_so_once);
	ADD_LIBBRAVO_DEFAULT_TEST(tc, unlock_of_lock_held_only_by_caller_on_another_lock_returns_0_and_changes_nothing);
}

void add_strict_unlock_tests(TCase *tc)
{
	tcase_add_test(tc, strict_unlock_of_free_lock_returns_eperm);
	tcase_add_test(tc, strict_unlock_after_releasing_all_read_locks_returns_eperm);
	tcase_add_test(tc, strict_unlock_after_releasing_write_lock_returns_eperm);
	tcase_add_test(tc, strict_unlock_while_other_thread_holds_read_returns_eperm_and_releases_nothing);
	tcase_add_test(tc, strict_unlock_while_other_thread_holds_write_returns_eperm_and_releases_nothing);
	tcase_add_test(tc, strict_unlock_of_lock_held_only_by_caller_on_another_lock_returns_eperm);
}
