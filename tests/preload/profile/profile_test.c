/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile_test - an ordinary pthread program with known locks made at
 * known call sites, each doing a known mix of calls, for checking
 * libbravo's per-lock profile (BRAVO_PROFILE, BRAVO_PROFILE_FILE) against
 * exact counts (tests/preload/profile/profile_check.py).
 *
 * Every lock life is made in a function of its own (noinline, the call's
 * result used, so the call site is that function's), and the program
 * counts its own successful calls.  On stdout, one line per lock life:
 *
 *   life NAME ADDRESS GENERATION KIND STATE FUNCTION LINE READS WRITES READ_WAITS
 *
 * KIND default, writer-preferring or process-shared; STATE live,
 * destroyed or reinit; LINE the source line of the call that made it;
 * READ_WAITS the reads that had to wait (the contended lock's).  Then
 * "pid N" (the process whose report that is) and, with an argument
 * "fork", "child N": a child that took 5 reads of the default lock and
 * exited normally (its report counts only those).
 *
 * The mix: single-threaded but for the contended lock, where a reader
 * thread starts while the main thread holds the lock for writing, which
 * it releases only once the reader sleeps in the lock: that read waits,
 * exactly once.  A write hold is also released out of order (not the most
 * recent hold), and a read re-entry is made (not an acquisition).
 *
 * With the arguments "many R W", the default lock takes R reads and W
 * writes instead of 100 and 10 (enough for the profile's sampling to
 * estimate them).
 *
 * With the arguments "churn N T", the program instead makes a lock "hot"
 * (200 reads), then T threads use N locks at N distinct addresses once
 * each, never initialized or destroyed (as std::shared_mutex churns
 * them), and take 10 reads and a write of the hot lock after every 100 of
 * them; then a lock "late" (50 reads, 50 writes).  It prints the two
 * lives' lines and "churn N".
 *
 * With the arguments "threads N K", N threads, one after another, each
 * take K reads of the lock "hot" (K writes before them, by the main
 * thread, so that it has its row): few reads per thread, which the
 * profile's sampling must not count as one sample each.  It prints the
 * life's line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/test_util.h"

enum { DEFAULT, WRITER, SHARED, STATIC, DOOMED, REINIT1, REINIT2, CONTENDED, LIVES };

struct life {
	const char *name, *kind, *state, *function;
	pthread_rwlock_t *lock;
	unsigned generation;
	int line;
	unsigned reads, writes, read_waits;
};

static struct life lives[LIVES];
static pthread_rwlock_t default_lock, writer_lock, reinit_lock, doomed_lock, contended_lock;
static pthread_rwlock_t static_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t *shared_lock; /* in MAP_SHARED memory */
static int failures;

/* The line profile_check.py reads for a life (lives_of). */
static void print_life(const struct life *l)
{
	printf("life %s %p %u %s %s %s %d %u %u %u\n", l->name, (void *)l->lock, l->generation,
	       l->kind, l->state, l->function, l->line, l->reads, l->writes, l->read_waits);
}

static void check(int r, const char *what)
{
	if (r != 0) {
		fprintf(stderr, "profile_test: %s returned %d\n", what, r);
		failures++;
	}
}

static void life(int i, const char *name, pthread_rwlock_t *l, const char *kind,
		 const char *function, int line, unsigned generation)
{
	lives[i] = (struct life){ .name = name, .kind = kind, .state = "live", .function = function,
				  .lock = l, .generation = generation, .line = line };
}

static void rd(int i)
{
	check(pthread_rwlock_rdlock(lives[i].lock), "rdlock");
	lives[i].reads++;
}

static void wr(int i)
{
	check(pthread_rwlock_wrlock(lives[i].lock), "wrlock");
	lives[i].writes++;
}

static void un(int i)
{
	check(pthread_rwlock_unlock(lives[i].lock), "unlock");
}

static void reads_and_writes(int i, unsigned reads, unsigned writes)
{
	for (unsigned k = 0; k < reads; k++) {
		rd(i);
		un(i);
	}
	for (unsigned k = 0; k < writes; k++) {
		wr(i);
		un(i);
	}
}

/* ---- the call sites: one function per lock life ---- */

static __attribute__((noinline)) void make_default_lock(void)
{
	life(DEFAULT, "default", &default_lock, "default", __func__, __LINE__ + 1, 1);
	check(pthread_rwlock_init(&default_lock, NULL), "init default");
}

static __attribute__((noinline)) void make_writer_lock(void)
{
	pthread_rwlockattr_t a;

	check(pthread_rwlockattr_init(&a), "attr init");
	check(pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), "setkind");
	life(WRITER, "writer", &writer_lock, "writer-preferring", __func__, __LINE__ + 1, 1);
	check(pthread_rwlock_init(&writer_lock, &a), "init writer");
	pthread_rwlockattr_destroy(&a);
}

static __attribute__((noinline)) void make_shared_lock(void)
{
	pthread_rwlockattr_t a;

	shared_lock = mmap(NULL, sizeof(*shared_lock), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared_lock == MAP_FAILED) {
		perror("profile_test: mmap");
		exit(1);
	}
	check(pthread_rwlockattr_init(&a), "attr init");
	check(pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED), "setpshared");
	life(SHARED, "shared", shared_lock, "process-shared", __func__, __LINE__ + 1, 1);
	check(pthread_rwlock_init(shared_lock, &a), "init shared");
	pthread_rwlockattr_destroy(&a);
}

/* A static initializer: the site is the first use. */
static __attribute__((noinline)) void first_use_of_static_lock(void)
{
	life(STATIC, "static", &static_lock, "default", __func__, __LINE__ + 1, 1);
	check(pthread_rwlock_rdlock(&static_lock), "first rdlock of the static lock");
	lives[STATIC].reads++;
	check(pthread_rwlock_unlock(&static_lock), "unlock");
}

static __attribute__((noinline)) void make_doomed_lock(void)
{
	life(DOOMED, "doomed", &doomed_lock, "default", __func__, __LINE__ + 1, 1);
	check(pthread_rwlock_init(&doomed_lock, NULL), "init doomed");
}

static __attribute__((noinline)) void make_reinit_lock_first(void)
{
	life(REINIT1, "reinit1", &reinit_lock, "default", __func__, __LINE__ + 1, 1);
	check(pthread_rwlock_init(&reinit_lock, NULL), "init reinit (first)");
}

static __attribute__((noinline)) void make_reinit_lock_second(void)
{
	life(REINIT2, "reinit2", &reinit_lock, "default", __func__, __LINE__ + 1, 2);
	check(pthread_rwlock_init(&reinit_lock, NULL), "init reinit (second)");
}

static __attribute__((noinline)) void make_contended_lock(void)
{
	life(CONTENDED, "contended", &contended_lock, "default", __func__, __LINE__ + 1, 1);
	check(pthread_rwlock_init(&contended_lock, NULL), "init contended");
}

/* ---- the mix ---- */

static _Atomic pid_t reader_tid;

static void *contended_reader(void *arg)
{
	(void)arg;
	atomic_store(&reader_tid, (pid_t)syscall(SYS_gettid));
	rd(CONTENDED); /* the main thread holds it for writing: this read waits */
	un(CONTENDED);
	return NULL;
}

/*
 * One read that waits behind a write hold: the write hold lasts until the
 * reader, having announced itself, is asleep -- in the lock's wait, the
 * only place it can sleep after that (no timing is assumed; bounded at
 * 60 s).
 */
static void contend(void)
{
	struct timespec tick = { 0, 1000 * 1000 };
	pthread_t t;
	pid_t tid;
	int polls = 0;

	wr(CONTENDED);
	check(pthread_create(&t, NULL, contended_reader, NULL), "pthread_create");
	while ((tid = atomic_load(&reader_tid)) == 0 || task_state(tid) != 'S') {
		if (++polls > 60000) {
			fprintf(stderr, "profile_test: the reader never waited for the lock\n");
			exit(1);
		}
		nanosleep(&tick, NULL);
	}
	un(CONTENDED);
	check(pthread_join(t, NULL), "pthread_join");
	lives[CONTENDED].read_waits = 1;
	reads_and_writes(CONTENDED, 2, 0);
}

/* A write hold released while a read hold taken after it is still held. */
static void out_of_order(void)
{
	wr(WRITER);
	rd(DEFAULT);
	un(WRITER);
	un(DEFAULT);
}

/*
 * A read re-entry: a second hold of a lock the thread reads, not an
 * acquisition -- but where glibc's lock answers for reads
 * (BRAVO-pthread's default mode), a first hold that glibc's lock took
 * (bias off, or inhibited for a while after the writes before: timing
 * decides) is not listed, and the re-entry is glibc's own, a new
 * acquisition.  glibc's count of readers says which way the first went.
 */
static void reentry(void)
{
	rd(DEFAULT);
	if (reads_answered_as_glibc() && glibc_readers(&default_lock) == 1)
		lives[DEFAULT].reads++;
	check(pthread_rwlock_rdlock(&default_lock), "read re-entry");
	un(DEFAULT);
	un(DEFAULT);
}

static void child(void)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		perror("profile_test: fork");
		exit(1);
	}
	if (pid == 0) {
		for (int k = 0; k < 5; k++) {
			check(pthread_rwlock_rdlock(&default_lock), "child rdlock");
			check(pthread_rwlock_unlock(&default_lock), "child unlock");
		}
		exit(failures ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "profile_test: the child failed\n");
		failures++;
	}
	printf("child %ld\n", (long)pid);
}

/* ---- churn: many short-lived locks between a hot one and a late one ---- */

static pthread_rwlock_t hot_lock, late_lock;

static __attribute__((noinline)) void make_hot_lock(void)
{
	life(0, "hot", &hot_lock, "default", __func__, __LINE__ + 1, 1);
	check(pthread_rwlock_init(&hot_lock, NULL), "init hot");
}

static __attribute__((noinline)) void make_late_lock(void)
{
	life(1, "late", &late_lock, "default", __func__, __LINE__ + 1, 1);
	check(pthread_rwlock_init(&late_lock, NULL), "init late");
}

struct churner {
	pthread_t thread;
	pthread_rwlock_t *many;
	unsigned n, hot_reads, hot_writes;
};

/* n locks used once each; 10 reads and a write of the hot lock after every 100. */
static void *churn_thread(void *arg)
{
	struct churner *c = arg;

	for (unsigned i = 0; i < c->n; i++) {
		check(pthread_rwlock_rdlock(&c->many[i]), "rdlock churn");
		check(pthread_rwlock_unlock(&c->many[i]), "unlock churn");
		if (i % 100 != 99)
			continue;
		for (int k = 0; k < 10; k++) {
			check(pthread_rwlock_rdlock(&hot_lock), "rdlock hot");
			check(pthread_rwlock_unlock(&hot_lock), "unlock hot");
		}
		check(pthread_rwlock_wrlock(&hot_lock), "wrlock hot");
		check(pthread_rwlock_unlock(&hot_lock), "unlock hot");
		c->hot_reads += 10;
		c->hot_writes++;
	}
	return NULL;
}

static int churn(unsigned n, unsigned threads)
{
	pthread_rwlock_t *many = calloc(n, sizeof(*many)); /* zeros: PTHREAD_RWLOCK_INITIALIZER */
	struct churner c[8] = { { 0 } };

	if (!many || threads < 1 || threads > 8) {
		fprintf(stderr, "profile_test: churn %u %u: no memory, or not 1-8 threads\n", n, threads);
		return 1;
	}
	make_hot_lock();
	reads_and_writes(0, 200, 0);
	for (unsigned t = 0; t < threads; t++) {
		c[t].many = many + (size_t)n / threads * t;
		c[t].n = t + 1 < threads ? n / threads : n - n / threads * t;
		if (pthread_create(&c[t].thread, NULL, churn_thread, &c[t]) != 0) {
			fprintf(stderr, "profile_test: pthread_create failed\n");
			return 1;
		}
	}
	for (unsigned t = 0; t < threads; t++) {
		pthread_join(c[t].thread, NULL);
		lives[0].reads += c[t].hot_reads;
		lives[0].writes += c[t].hot_writes;
	}
	make_late_lock();
	reads_and_writes(1, 50, 50);
	for (int i = 0; i < 2; i++)
		print_life(&lives[i]);
	printf("churn %u\npid %ld\n", n, (long)getpid());
	free(many); /* never destroyed, as libstdc++ does */
	return failures ? 1 : 0;
}

static unsigned short_thread_reads;

static void *short_thread(void *arg)
{
	for (unsigned i = 0; i < short_thread_reads; i++) {
		check(pthread_rwlock_rdlock(&hot_lock), "rdlock");
		check(pthread_rwlock_unlock(&hot_lock), "unlock");
	}
	return arg;
}

static int short_threads(unsigned n, unsigned k)
{
	make_hot_lock();
	reads_and_writes(0, 0, k);
	short_thread_reads = k;
	for (unsigned t = 0; t < n; t++) {
		pthread_t th;

		if (pthread_create(&th, NULL, short_thread, NULL) != 0) {
			fprintf(stderr, "profile_test: pthread_create failed\n");
			return 1;
		}
		pthread_join(th, NULL);
	}
	lives[0].reads += n * k;
	print_life(&lives[0]);
	printf("pid %ld\n", (long)getpid());
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned default_reads = 100, default_writes = 10;

	rwlock_lib_require("profile_test"); /* which library answered (EXPECT_RWLOCK_LIB) */
	if (argc > 3 && strcmp(argv[1], "churn") == 0)
		return churn((unsigned)strtoul(argv[2], NULL, 10), (unsigned)strtoul(argv[3], NULL, 10));

	if (argc > 3 && strcmp(argv[1], "threads") == 0)
		return short_threads((unsigned)strtoul(argv[2], NULL, 10),
				     (unsigned)strtoul(argv[3], NULL, 10));
	if (argc > 3 && strcmp(argv[1], "many") == 0) {
		default_reads = (unsigned)strtoul(argv[2], NULL, 10);
		default_writes = (unsigned)strtoul(argv[3], NULL, 10);
	}
	make_default_lock();
	make_writer_lock();
	make_shared_lock();
	first_use_of_static_lock();
	make_doomed_lock();
	make_reinit_lock_first();
	make_contended_lock();

	reads_and_writes(DEFAULT, default_reads, default_writes);
	reads_and_writes(WRITER, 50, 49);
	reads_and_writes(SHARED, 30, 5);
	reads_and_writes(STATIC, 6, 2);
	reads_and_writes(DOOMED, 4, 1);
	reads_and_writes(REINIT1, 6, 1);
	out_of_order();
	reentry();
	contend();

	check(pthread_rwlock_destroy(&doomed_lock), "destroy doomed");
	lives[DOOMED].state = "destroyed";
	make_reinit_lock_second();
	lives[REINIT1].state = "reinit";
	reads_and_writes(REINIT2, 9, 2);
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "fork") == 0)
		child();

	for (int i = 0; i < LIVES; i++)
		print_life(&lives[i]);
	printf("pid %ld\n", (long)getpid());
	return failures ? 1 : 0;
}
