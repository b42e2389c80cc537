/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pshared.c - tests/preload/posix_rwlock_test: process-shared locks across
 * fork and exec, with the helpers of the child processes (--pshared-exec-
 * child).
 */
#include "posix_rwlock.h"

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
int pshared_exec_child(int argc, char **argv)
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
/* Registration (main.c creates the test cases)                        */
/* ------------------------------------------------------------------ */

void add_pshared_tests(TCase *tc)
{
	tcase_add_test(tc, pshared_lock_write_held_by_caller_answers_as_glibc);
	tcase_add_test(tc, pshared_lock_excludes_across_fork);
	tcase_add_test(tc, pshared_lock_wakes_waiter_in_other_process);
	tcase_add_test(tc, pshared_read_lock_in_one_process_excludes_writer_in_other);
	tcase_add_test(tc, pshared_write_lock_taken_before_fork_is_not_owned_by_child);
	tcase_add_test(tc, pshared_lock_in_file_works_in_exec_process_that_only_maps_it);
	tcase_add_test(tc, unlock_in_child_of_pshared_lock_read_held_by_parent_releases_it_as_glibc_does);
}

void add_strict_pshared_tests(TCase *tc)
{
	tcase_add_test(tc, unlock_in_child_of_pshared_lock_read_held_by_parent_releases_it_as_glibc_does);
}
