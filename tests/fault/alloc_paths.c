/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * alloc_paths.c - an ordinary pthread program that goes through every
 * path where an rwlock implementation might allocate memory, printing one
 * line per step with the results of its lock calls, for
 * alloc-fault-check: run with failalloc.so in front of libbravo, each of
 * libbravo's allocations is made to fail in turn, and every run must
 * print exactly what the unfaulted run printed (glibc's rwlock never
 * allocates, so no result of it depends on memory) and exit 0.
 *
 * The steps: first use of many locks (zeroed and initialized: heap blocks
 * and the registry's tables grow), destroy and re-use; one thread holding
 * up to 300 read locks at once, and write locks beside them (the held-lock
 * list grows past its inline entries, twice); an unlock of a read hold by
 * a thread that holds nothing (the hand-off table), with what it implies
 * afterwards; BRAVO's fast reads beside a writer (the visible readers
 * table, made at load or on the first bias); a fork whose child releases
 * the locks it inherited and uses old and new locks; threads that start,
 * hold many locks and exit; and exclusion runs between them.  Exclusion is
 * checked throughout (struct guarded): a violation is a FAIL line on
 * stderr and exit status 1.
 *
 * Every step that allocates runs on one thread at a time (the others wait
 * on flags), so that a run's allocations come in the same order every
 * time; the concurrent steps use only locks already in use and hold few
 * at once, and their calls never fail (no try-locks there: an EBUSY count
 * would depend on timing).  A line counts the results of each function:
 * "rdlock=0*300" is 300 calls of rdlock that returned 0.
 */
#include "../stress/torture.h"

#include <sys/wait.h>

/* ---- tallies of results, one line per step ---- */

enum fn { F_INIT, F_DESTROY, F_RD, F_TRYRD, F_TIMEDRD, F_CLOCKRD, F_WR, F_TRYWR, F_TIMEDWR,
	  F_CLOCKWR, F_UNLOCK, NFNS };

static const char *const fn_name[NFNS] = {
	"init", "destroy", "rdlock", "tryrdlock", "timedrdlock", "clockrdlock",
	"wrlock", "trywrlock", "timedwrlock", "clockwrlock", "unlock",
};

/* Results counted: 0 and the errors a call may give; the rest as "other". */
static const int result_codes[] = { 0, EBUSY, EAGAIN, ETIMEDOUT, EDEADLK, EINVAL, EPERM, ENOMEM };
#define NRESULTS (NELEM(result_codes) + 1)

static atomic_long tally[NFNS][NRESULTS];

static void count(enum fn f, int rc)
{
	size_t i;

	for (i = 0; i < NELEM(result_codes); i++)
		if (result_codes[i] == rc)
			break;
	atomic_fetch_add(&tally[f][i], 1);
}

/* "NAME: fn rc x count ..." for every count of the step, then reset. */
static void step_done(const char *name)
{
	printf("%s:", name);
	for (int f = 0; f < NFNS; f++) {
		for (size_t i = 0; i < NRESULTS; i++) {
			long n = atomic_exchange(&tally[f][i], 0);

			if (n)
				printf(" %s=%s*%ld", fn_name[f],
				       i < NELEM(result_codes) ? errname(result_codes[i]) : "other", n);
		}
	}
	printf("\n");
	fflush(stdout);
}

/* Free-form result line (a value the step computed). */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* ---- the calls ---- */

static int op(pthread_rwlock_t *l, enum fn f)
{
	struct timespec rt = ts_add_ms(ts_now(CLOCK_REALTIME), 2000);
	struct timespec mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), 2000);
	int rc;

	switch (f) {
	case F_RD: rc = pthread_rwlock_rdlock(l); break;
	case F_TRYRD: rc = pthread_rwlock_tryrdlock(l); break;
	case F_TIMEDRD: rc = pthread_rwlock_timedrdlock(l, &rt); break;
	case F_CLOCKRD: rc = pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, &mono); break;
	case F_WR: rc = pthread_rwlock_wrlock(l); break;
	case F_TRYWR: rc = pthread_rwlock_trywrlock(l); break;
	case F_TIMEDWR: rc = pthread_rwlock_timedwrlock(l, &rt); break;
	case F_CLOCKWR: rc = pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &mono); break;
	case F_UNLOCK: rc = pthread_rwlock_unlock(l); break;
	case F_INIT: rc = pthread_rwlock_init(l, NULL); break;
	default: rc = pthread_rwlock_destroy(l); break;
	}
	count(f, rc);
	return rc;
}

static bool fn_writes(enum fn f)
{
	return f >= F_WR && f <= F_CLOCKWR;
}

/* The eight lock functions in turn. */
static enum fn lock_fn(int i)
{
	return (enum fn)(F_RD + i % 8);
}

static enum fn read_fn(int i)
{
	return (enum fn)(F_RD + i % 4);
}

/* A lock taken with f, if it was, is checked (guarded) and released. */
static void use_once(pthread_rwlock_t *l, struct guarded *g, enum fn f)
{
	if (op(l, f) != 0)
		return;
	if (fn_writes(f)) {
		guarded_write_enter(g);
		guarded_write_update(g, false);
		guarded_write_leave(g);
	} else {
		guarded_read_enter(g);
		guarded_read_check(g);
		guarded_read_leave(g);
	}
	op(l, F_UNLOCK);
}

/* Is l free?  trywrlock (and its unlock), counted. */
static void expect_free(pthread_rwlock_t *l)
{
	if (op(l, F_TRYWR) == 0)
		op(l, F_UNLOCK);
}

/* ---- the locks ---- */

enum { MANY = 1200, INITED = 64, HOLD = 300, THREAD_LOCKS = 24, CONCURRENT = 16 };

static pthread_rwlock_t many[MANY];
static struct guarded many_data[MANY];
static pthread_rwlock_t inited[INITED];
static struct guarded inited_data[INITED];
static pthread_rwlock_t handoff_lock;
static pthread_rwlock_t fast_lock;
static struct guarded fast_data;
static pthread_rwlock_t fork_locks[12];
static pthread_rwlock_t thread_new_locks[8][THREAD_LOCKS];

/* Run fn(arg) on a new thread and wait for it. */
static void on_thread(void *(*fn)(void *), void *arg)
{
	join(spawn(fn, arg));
}

/* ---- steps ---- */

/* Many fresh zeroed locks, first used by each lock function in turn. */
static void *first_use_zeroed(void *arg)
{
	(void)arg;
	for (int i = 0; i < MANY; i++)
		use_once(&many[i], &many_data[i], lock_fn(i));
	for (int i = 0; i < MANY; i++)
		expect_free(&many[i]);
	return NULL;
}

/* Initialized locks: first use, destroy, init again, use again. */
static void *first_use_initialized(void *arg)
{
	(void)arg;
	for (int i = 0; i < INITED; i++)
		op(&inited[i], F_INIT);
	for (int i = 0; i < INITED; i++)
		use_once(&inited[i], &inited_data[i], lock_fn(i + 3));
	step_done("first_use_initialized");
	for (int i = 0; i < INITED; i++)
		op(&inited[i], F_DESTROY);
	for (int i = 0; i < INITED; i++)
		op(&inited[i], F_INIT);
	for (int i = 0; i < INITED; i++)
		use_once(&inited[i], &inited_data[i], lock_fn(i + 5));
	for (int i = 0; i < INITED; i++)
		expect_free(&inited[i]);
	step_done("destroy_init_and_use_again");
	return NULL;
}

/*
 * One thread holds up to HOLD read locks at once (each read function in
 * turn), re-enters some, takes write locks beside them, releases all in
 * the order taken, and finds them free.
 */
static void *many_read_holds(void *arg)
{
	int n = (int)(intptr_t)arg;
	int got[HOLD];

	for (int i = 0; i < n; i++) {
		got[i] = op(&many[i], read_fn(i)) == 0;
		if (got[i])
			guarded_read_enter(&many_data[i]);
	}
	for (int i = 0; i < n; i += 7)
		if (got[i] && op(&many[i], read_fn(i + 1)) == 0)
			op(&many[i], F_UNLOCK);
	for (int i = n; i < n + 16; i++) {
		enum fn f = (enum fn)(F_WR + i % 4);

		if (op(&many[i], f) == 0) {
			guarded_write_enter(&many_data[i]);
			guarded_write_update(&many_data[i], false);
			guarded_write_leave(&many_data[i]);
			op(&many[i], F_UNLOCK);
		}
	}
	/* Write holds beside the read holds, all at once. */
	for (int i = n + 16; i < n + 24; i++)
		if (op(&many[i], (enum fn)(F_WR + i % 4)) == 0)
			guarded_write_enter(&many_data[i]);
	for (int i = n + 16; i < n + 24; i++) {
		if (atomic_load(&many_data[i].writers)) {
			guarded_write_leave(&many_data[i]);
			op(&many[i], F_UNLOCK);
		}
	}
	for (int i = 0; i < n; i++) {
		if (got[i]) {
			guarded_read_leave(&many_data[i]);
			op(&many[i], F_UNLOCK);
		}
	}
	for (int i = 0; i < n + 24; i++)
		expect_free(&many[i]);
	return NULL;
}

/* ---- hand-off: an unlock by a thread that holds nothing ---- */

struct reader {
	atomic_int cmd;   /* 1: rdlock, 2: unlock, 3: exit */
	atomic_int done;  /* commands done */
	atomic_int rc;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	int seen = 0;

	for (;;) {
		int c;

		while ((c = atomic_exchange(&r->cmd, 0)) == 0)
			sleep_ms(1);
		if (c == 3)
			return NULL;
		atomic_store(&r->rc, op(&handoff_lock, c == 1 ? F_RD : F_UNLOCK));
		atomic_store(&r->done, ++seen);
	}
}

static int reader_do(struct reader *r, int c)
{
	int before = atomic_load(&r->done);

	atomic_store(&r->cmd, c);
	while (atomic_load(&r->done) == before)
		sleep_ms(1);
	return atomic_load(&r->rc);
}

static void *unheld_unlock(void *arg)
{
	(void)arg;
	op(&handoff_lock, F_UNLOCK);
	return NULL;
}

/*
 * Two readers hold the lock; a third thread that holds nothing unlocks it
 * (glibc: one read hold fewer), then the first reader unlocks: the lock
 * is free.  The second reader then read-locks it again (glibc: a new
 * hold), so a writer must not get in; after its unlock the lock is free.
 */
static void hand_off(void)
{
	struct reader a = { 0 }, b = { 0 };
	pthread_t ta = spawn(reader_main, &a), tb = spawn(reader_main, &b);

	reader_do(&a, 1);
	reader_do(&b, 1);
	on_thread(unheld_unlock, NULL);
	reader_do(&a, 2);
	expect_free(&handoff_lock);
	reader_do(&b, 1);
	if (op(&handoff_lock, F_TRYWR) == 0)
		op(&handoff_lock, F_UNLOCK); /* (counted: glibc says EBUSY) */
	reader_do(&b, 2);
	expect_free(&handoff_lock);
	atomic_store(&a.cmd, 3);
	atomic_store(&b.cmd, 3);
	join(ta);
	join(tb);
	step_done("hand_off");
}

/* ---- BRAVO fast reads beside a writer ---- */

enum { FAST_READERS = 3, FAST_READS = 300, FAST_WRITES = 30 };

static atomic_int fast_go;

static void *fast_reader(void *arg)
{
	(void)arg;
	/* Warm: reads on this thread enable bias (BRAVO), before the others start. */
	while (!atomic_load(&fast_go))
		sched_yield();
	for (int i = 0; i < FAST_READS; i++) {
		if (op(&fast_lock, F_RD) == 0) {
			guarded_read_enter(&fast_data);
			if (i % 16 == 0)
				sched_yield();
			guarded_read_check(&fast_data);
			guarded_read_leave(&fast_data);
			op(&fast_lock, F_UNLOCK);
		}
	}
	return NULL;
}

static void *fast_writer(void *arg)
{
	(void)arg;
	while (!atomic_load(&fast_go))
		sched_yield();
	for (int i = 0; i < FAST_WRITES; i++) {
		use_once(&fast_lock, &fast_data, i % 2 ? F_WR : F_TIMEDWR);
		sched_yield();
	}
	return NULL;
}

static void *warm_fast(void *arg)
{
	(void)arg;
	for (int i = 0; i < 16; i++)
		use_once(&fast_lock, &fast_data, F_RD);
	return NULL;
}

static void bravo_fast_reads(void)
{
	pthread_t th[FAST_READERS + 1];

	on_thread(warm_fast, NULL);
	for (int i = 0; i < FAST_READERS; i++)
		th[i] = spawn(fast_reader, NULL);
	th[FAST_READERS] = spawn(fast_writer, NULL);
	atomic_store(&fast_go, 1);
	for (int i = 0; i <= FAST_READERS; i++)
		join(th[i]);
	note("bravo_fast_reads: writes recorded %llu", (unsigned long long)fast_data.writes);
	expect_free(&fast_lock);
	step_done("bravo_fast_reads");
}

/* ---- exclusion among threads on locks in use (nothing to allocate) ---- */

enum { EXCL_THREADS = 4, EXCL_OPS = 400 };

static atomic_long excl_writes;

static void *exclusion_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 7919u + 1;

	for (int i = 0; i < EXCL_OPS; i++) {
		int k = (int)(next_rand(&seed) % CONCURRENT);
		bool write = next_rand(&seed) % 4 == 0;
		/* Blocking and timed forms only: all must return 0. */
		enum fn f = write ? (i % 3 == 0 ? F_TIMEDWR : i % 3 == 1 ? F_CLOCKWR : F_WR)
				  : (i % 3 == 0 ? F_TIMEDRD : i % 3 == 1 ? F_CLOCKRD : F_RD);

		if (op(&many[k], f) != 0)
			continue;
		if (write) {
			guarded_write_enter(&many_data[k]);
			guarded_write_update(&many_data[k], i % 8 == 0);
			guarded_write_leave(&many_data[k]);
			atomic_fetch_add(&excl_writes, 1);
		} else {
			guarded_read_enter(&many_data[k]);
			if (i % 8 == 0)
				sched_yield();
			guarded_read_check(&many_data[k]);
			guarded_read_leave(&many_data[k]);
		}
		op(&many[k], F_UNLOCK);
	}
	return NULL;
}

static void exclusion(const char *name)
{
	pthread_t th[EXCL_THREADS];
	uint64_t before = 0, after = 0;

	for (int k = 0; k < CONCURRENT; k++)
		before += many_data[k].writes;
	atomic_store(&excl_writes, 0);
	for (int t = 0; t < EXCL_THREADS; t++)
		th[t] = spawn(exclusion_thread, (void *)(intptr_t)t);
	for (int t = 0; t < EXCL_THREADS; t++)
		join(th[t]);
	for (int k = 0; k < CONCURRENT; k++)
		after += many_data[k].writes;
	CHECK(after - before == (uint64_t)atomic_load(&excl_writes),
	      "%llu writes recorded, %ld write acquisitions: an update was lost",
	      (unsigned long long)(after - before), atomic_load(&excl_writes));
	for (int k = 0; k < CONCURRENT; k++)
		expect_free(&many[k]);
	/* The mix of reads and writes depends on timing: print only the sum. */
	{
		long calls = 0, zero = 0;

		for (int f = F_RD; f <= F_UNLOCK; f++)
			for (size_t i = 0; i < NRESULTS; i++) {
				long n = atomic_exchange(&tally[f][i], 0);

				calls += n;
				zero += i == 0 ? n : 0;
			}
		note("%s: calls %ld returned 0: %ld", name, calls, zero);
	}
}

/* ---- fork ---- */

/* In the child: release the inherited read holds, use old and new locks. */
static void fork_child(void)
{
	static pthread_rwlock_t child_new[40];
	static struct guarded child_data[40];

	for (int i = 0; i < 12; i++)
		op(&fork_locks[i], F_UNLOCK);
	for (int i = 0; i < 12; i++)
		expect_free(&fork_locks[i]);
	step_done("fork_child_releases_inherited_holds");
	for (int i = 0; i < 40; i++)
		use_once(&child_new[i], &child_data[i], lock_fn(i));
	for (int i = 0; i < 40; i++)
		use_once(&many[i], &many_data[i], lock_fn(i + 1));
	on_thread(many_read_holds, (void *)(intptr_t)40);
	step_done("fork_child_uses_old_and_new_locks");
	exclusion("fork_child_exclusion");
}

static void fork_with_holds(void)
{
	pid_t pid;
	int status;

	/* The forking thread holds 12 read locks (more than a thread keeps inline). */
	for (int i = 0; i < 12; i++)
		op(&fork_locks[i], read_fn(i));
	step_done("fork_parent_holds");
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		fork_child();
		fflush(stdout);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid: %s", strerror(errno));
	note("fork_child_status: %s %d", WIFEXITED(status) ? "exit" : "signal",
	     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	for (int i = 0; i < 12; i++)
		op(&fork_locks[i], F_UNLOCK);
	for (int i = 0; i < 12; i++)
		expect_free(&fork_locks[i]);
	step_done("fork_parent_releases");
}

/* ---- threads that start, use locks and exit ---- */

static void *short_lived(void *arg)
{
	int t = (int)(intptr_t)arg;
	pthread_rwlock_t *mine = thread_new_locks[t];
	struct guarded g;
	int got[THREAD_LOCKS + 16];

	memset(&g, 0, sizeof(g));
	/* New locks (first use) and old ones, held at once: the list grows. */
	for (int i = 0; i < THREAD_LOCKS; i++)
		got[i] = op(&mine[i], read_fn(i + t)) == 0;
	for (int i = 0; i < 16; i++)
		got[THREAD_LOCKS + i] = op(&many[100 + 16 * t + i], read_fn(i)) == 0;
	for (int i = 0; i < THREAD_LOCKS; i++)
		if (got[i])
			op(&mine[i], F_UNLOCK);
	for (int i = 0; i < 16; i++)
		if (got[THREAD_LOCKS + i])
			op(&many[100 + 16 * t + i], F_UNLOCK);
	use_once(&mine[0], &g, F_WR);
	return NULL;
}

static void threads_start_and_exit(void)
{
	for (int t = 0; t < 8; t++)
		on_thread(short_lived, (void *)(intptr_t)t);
	for (int t = 0; t < 8; t++)
		for (int i = 0; i < THREAD_LOCKS; i++)
			expect_free(&thread_new_locks[t][i]);
	step_done("threads_start_and_exit");
}

/* ---- at the end: every lock free, then destroyed ---- */

static void destroy_all(void)
{
	for (int i = 0; i < MANY; i++)
		op(&many[i], F_DESTROY);
	for (int i = 0; i < INITED; i++)
		op(&inited[i], F_DESTROY);
	for (int t = 0; t < 8; t++)
		for (int i = 0; i < THREAD_LOCKS; i++)
			op(&thread_new_locks[t][i], F_DESTROY);
	for (int i = 0; i < 12; i++)
		op(&fork_locks[i], F_DESTROY);
	op(&handoff_lock, F_DESTROY);
	op(&fast_lock, F_DESTROY);
	step_done("destroy_all");
}

int main(void)
{
	char why[PATH_MAX + 256];

	setvbuf(stdout, NULL, _IOLBF, 0);
	torture_current = "alloc_paths";
	CHECK(rwlock_lib_check(why, sizeof(why)) == 0, "%s", why);
	note("alloc_paths: start");
	on_thread(first_use_zeroed, NULL);
	step_done("first_use_zeroed");
	on_thread(first_use_initialized, NULL);
	exclusion("exclusion_after_first_use");
	on_thread(many_read_holds, (void *)(intptr_t)9);
	step_done("read_holds_9");
	on_thread(many_read_holds, (void *)(intptr_t)HOLD);
	step_done("read_holds_300");
	many_read_holds((void *)(intptr_t)HOLD); /* on the main thread too */
	step_done("read_holds_300_main_thread");
	hand_off();
	bravo_fast_reads();
	fork_with_holds();
	threads_start_and_exit();
	exclusion("exclusion_at_the_end");
	destroy_all();
	note("alloc_paths: done");
	return 0;
}
