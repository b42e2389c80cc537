/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memory_exhaustion.c - lock calls made when the process has no memory
 * left to give: every one must return what glibc 2.36 returns (0 for a
 * lock that is free or only read-held, EBUSY from a try-lock that cannot
 * have it), and exclusion must hold.  glibc's rwlock lives in the 56 bytes
 * of pthread_rwlock_t and never allocates, so no rwlock call of glibc can
 * fail for lack of memory; POSIX allows EAGAIN only from the read forms,
 * and only for "the maximum number of read locks ... has been exceeded",
 * never from a write lock.  An interposed lock that allocates (a heap
 * block attached on a lock's first use, a per-thread list of held locks
 * that grows past its inline entries) must not let an allocation failure
 * reach the caller: a program that does not expect EAGAIN from wrlock
 * goes on as if it held the lock, and two writers are inside.
 *
 * Each check runs in a child process (fault_in_child) that first creates
 * the threads it needs and touches all the memory it will use (locks,
 * guarded data, thread stacks, its own stack), then lowers RLIMIT_AS to
 * just above its address-space size (VmSize of /proc/self/status plus a
 * small margin), proves the limit bites (a 1 MiB mmap fails), and then
 * takes the margin and every free byte of malloc's heap for itself (pages
 * by mmap until it fails, then malloc of every size until each fails), so
 * that no allocation of any size can succeed any more: an allocation made
 * by the lock calls fails every time, not depending on what the heap
 * happened to have free.  After that the child uses no allocating call
 * (no stdio but stderr's unbuffered FAIL line, no thread creation;
 * task states are not needed).
 *
 * The checks: first use of fresh locks (zeroed, never used; initialized
 * before and after the limit) by each of the eight lock functions, alone
 * and by two threads contending on them; one thread taking 1, 2, ..., 200
 * distinct read locks at once with each of the four read functions and
 * releasing them in the order taken; read re-entries of many held locks;
 * write locks taken while holding 8 and 200 read locks.  The driver may
 * set BRAVO_STATS or BRAVO_PROFILE: the same results are expected.
 */
#include "fault.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>

enum op { RD, TRYRD, TIMEDRD, CLOCKRD, WR, TRYWR, TIMEDWR, CLOCKWR, NOPS };

static const char *const op_name[NOPS] = {
	"rdlock", "tryrdlock", "timedrdlock", "clockrdlock",
	"wrlock", "trywrlock", "timedwrlock", "clockwrlock",
};

static bool op_writes(enum op op)
{
	return op >= WR;
}

static bool op_tries(enum op op)
{
	return op == TRYRD || op == TRYWR;
}

/* op on l; the timed forms with a deadline 10 s away (never reached here). */
static int do_op(pthread_rwlock_t *l, enum op op)
{
	struct timespec rt = ts_add_ms(ts_now(CLOCK_REALTIME), 10000);
	struct timespec mono = ts_add_ms(ts_now(CLOCK_MONOTONIC), 10000);

	switch (op) {
	case RD: return pthread_rwlock_rdlock(l);
	case TRYRD: return pthread_rwlock_tryrdlock(l);
	case TIMEDRD: return pthread_rwlock_timedrdlock(l, &rt);
	case CLOCKRD: return pthread_rwlock_clockrdlock(l, CLOCK_MONOTONIC, &mono);
	case WR: return pthread_rwlock_wrlock(l);
	case TRYWR: return pthread_rwlock_trywrlock(l);
	case TIMEDWR: return pthread_rwlock_timedwrlock(l, &rt);
	default: return pthread_rwlock_clockwrlock(l, CLOCK_MONOTONIC, &mono);
	}
}

/* op on l must return want; the message names the circumstances (fmt). */
__attribute__((format(printf, 6, 7)))
static void check_op(const char *file, int line, pthread_rwlock_t *l, enum op op, int want,
		     const char *fmt, ...)
{
	int r = do_op(l, op);
	char what[256];
	va_list ap;

	if (r == want)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	torture_fail(file, line, "%s returned %s, expected %s (%s)", op_name[op], errname(r),
		     errname(want), what);
}

#define CHECK_OP(l, op, want, ...) check_op(__FILE__, __LINE__, (l), (op), (want), __VA_ARGS__)

/*
 * ---- threads made before memory runs out: they run jobs on request ----
 *
 * A worker runs until the child's _exit, after the function that started
 * it has returned, and keeps polling its struct worker meanwhile: the
 * struct must be static, never on that function's stack (whose bytes the
 * child's exit path reuses: a worker once read a garbage `posted` there
 * and called a NULL job).
 */

struct worker {
	pthread_t th;
	void (*fn)(void *);
	void *arg;
	atomic_int posted;
	atomic_int done;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int seen = 0;

	for (;;) {
		while (atomic_load(&w->posted) == seen)
			sleep_ms(1);
		seen++;
		w->fn(w->arg);
		atomic_store(&w->done, seen);
	}
	return NULL;
}

static void worker_start(struct worker *w)
{
	memset(w, 0, sizeof(*w));
	w->th = spawn(worker_main, w);
}

static void worker_post(struct worker *w, void (*fn)(void *), void *arg)
{
	CHECK(atomic_load(&w->done) == atomic_load(&w->posted), "worker still busy");
	w->fn = fn;
	w->arg = arg;
	atomic_fetch_add(&w->posted, 1);
}

/* The watchdog names the hang if a job never ends. */
static void worker_wait(struct worker *w)
{
	while (atomic_load(&w->done) != atomic_load(&w->posted))
		sleep_ms(1);
}

static void worker_run(struct worker *w, void (*fn)(void *), void *arg)
{
	worker_post(w, fn, arg);
	worker_wait(w);
}

/* ---- running out of memory ---- */

#define AS_MARGIN (256 * 1024)

/* VmSize of /proc/self/status in KiB, read without stdio (no malloc). */
static long vm_size_kib(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n, got = 0;
	char *p;

	CHECK(fd >= 0, "open /proc/self/status: %s", strerror(errno));
	while (got < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	p = strstr(buf, "\nVmSize:");
	CHECK(p, "no VmSize line in /proc/self/status");
	return strtol(p + 8, NULL, 10);
}

/* Grow the main thread's stack now: it cannot grow under the limit. */
static __attribute__((noinline)) void touch_stack(void)
{
	volatile char pad[256 * 1024];

	for (size_t i = 0; i < sizeof(pad); i += 1024)
		pad[i] = 1;
	(void)pad[0];
}

/* What run_out_of_memory takes is kept here, so no call is optimized away. */
static void *volatile taken;

static void *map_one(size_t bytes)
{
	return mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/*
 * From here on, no allocation can succeed: RLIMIT_AS just above the
 * address space in use, its margin taken by pages of our own, and every
 * free chunk of malloc's heap (and of this thread's cache) handed to us.
 * Called last in a child's set-up, with every thread already made.
 */
static void run_out_of_memory(void)
{
	struct rlimit r;
	long kib;
	void *p;
	int pages = 0;

	touch_stack();
	fflush(stdout);
	fflush(stderr);
	CHECK(getrlimit(RLIMIT_AS, &r) == 0, "getrlimit: %s", strerror(errno));
	kib = vm_size_kib();
	r.rlim_cur = (rlim_t)kib * 1024 + AS_MARGIN;
	CHECK(setrlimit(RLIMIT_AS, &r) == 0, "setrlimit(RLIMIT_AS, %ld KiB): %s",
	      (long)(r.rlim_cur / 1024), strerror(errno));
	p = map_one(1 << 20);
	CHECK(p == MAP_FAILED && errno == ENOMEM,
	      "a 1 MiB mmap succeeded under RLIMIT_AS = VmSize + 256 KiB: the limit proves nothing");
	/* The margin: page by page, kept. */
	while ((taken = map_one(4096)) != MAP_FAILED)
		CHECK(++pages <= 4 * AS_MARGIN / 4096, "mmap keeps succeeding under RLIMIT_AS");
	/* malloc's free memory: every size, largest first, then this thread's cache. */
	for (size_t sz = 1 << 20; sz >= 16; sz /= 2)
		while ((taken = malloc(sz)))
			;
	for (size_t sz = 8; sz <= 4096; sz += 8)
		for (int i = 0; i < 16 && (taken = malloc(sz)); i++)
			;
	CHECK((taken = malloc(16)) == NULL && (taken = malloc(200)) == NULL &&
	      (taken = malloc(4096)) == NULL, "malloc still succeeds: the check would prove nothing");
	CHECK((taken = map_one(4096)) == MAP_FAILED, "mmap of a page still succeeds");
	p = NULL;
	CHECK(posix_memalign(&p, 128, 256) != 0, "posix_memalign still succeeds");
}

/* A child's watchdog (the parent's thread is not copied by fork). */
static void child_watchdog(void)
{
	fault_watchdog_start();
}

/* Run fn in a child within `seconds`; it must exit 0. */
static void in_child(void (*fn)(void *), long seconds)
{
	int status = fault_in_child(fn, NULL, seconds);

	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the child process %s %d (its FAIL line is above)",
	      WIFEXITED(status) ? "exited with status" : "was killed by signal",
	      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* ---- the locks and data (static: mapped before the limit) ---- */

enum { MANY = 200, WRITE_LOCKS = 8, FRESH = NOPS };

static pthread_rwlock_t fresh_zeroed[FRESH];
static pthread_rwlock_t fresh_init_before[FRESH];
static pthread_rwlock_t fresh_init_after[FRESH];
static pthread_rwlock_t contended[2 * FRESH];
static struct guarded contended_data[2 * FRESH];
static pthread_rwlock_t many[MANY];
static pthread_rwlock_t write_locks[WRITE_LOCKS];

static void touch_data(void)
{
	memset(fresh_zeroed, 0, sizeof(fresh_zeroed));
	memset(fresh_init_before, 0, sizeof(fresh_init_before));
	memset(fresh_init_after, 0, sizeof(fresh_init_after));
	memset(contended, 0, sizeof(contended));
	memset(contended_data, 0, sizeof(contended_data));
	memset(many, 0, sizeof(many));
	memset(write_locks, 0, sizeof(write_locks));
}

/*
 * Locks used before memory runs out, read by a few rdlock/unlock pairs
 * (BRAVO enables bias: the fast path's readers then go through its table)
 * and written once, on a thread that never holds more than one: only a
 * growth of the held-lock list could need memory afterwards.
 */
static void warm_job(void *arg)
{
	(void)arg;
	for (int i = 0; i < MANY; i++) {
		CHECK_RC(pthread_rwlock_wrlock(&many[i]), 0);
		CHECK_RC(pthread_rwlock_unlock(&many[i]), 0);
		for (int k = 0; k < 4; k++) {
			CHECK_RC(pthread_rwlock_rdlock(&many[i]), 0);
			CHECK_RC(pthread_rwlock_unlock(&many[i]), 0);
		}
	}
	for (int i = 0; i < WRITE_LOCKS; i++) {
		CHECK_RC(pthread_rwlock_wrlock(&write_locks[i]), 0);
		CHECK_RC(pthread_rwlock_unlock(&write_locks[i]), 0);
	}
}

/* ---- first use of fresh locks ---- */

struct probe {
	pthread_rwlock_t *lock;
	bool write_held;
};

/* Another thread's view of a lock this one holds: never let a writer in. */
static void probe_job(void *arg)
{
	struct probe *p = arg;

	CHECK_RC(pthread_rwlock_trywrlock(p->lock), EBUSY);
	if (p->write_held) {
		CHECK_RC(pthread_rwlock_tryrdlock(p->lock), EBUSY);
	} else {
		CHECK_RC(pthread_rwlock_tryrdlock(p->lock), 0);
		CHECK_RC(pthread_rwlock_unlock(p->lock), 0);
	}
}

static enum op first_op, last_op;

static void first_use_of(pthread_rwlock_t *set, const char *what, struct worker *other)
{
	for (int op = first_op; op <= (int)last_op; op++) {
		struct probe p = { &set[op], op_writes(op) };

		CHECK_OP(&set[op], op, 0, "first use of a %s lock without memory", what);
		worker_run(other, probe_job, &p);
		CHECK_RC(pthread_rwlock_unlock(&set[op]), 0);
		CHECK_RC(pthread_rwlock_trywrlock(&set[op]), 0);
		CHECK_RC(pthread_rwlock_unlock(&set[op]), 0);
	}
}

static void first_use_child(void *arg)
{
	static struct worker other;

	(void)arg;
	child_watchdog();
	touch_data();
	for (int i = 0; i < FRESH; i++)
		CHECK_RC(pthread_rwlock_init(&fresh_init_before[i], NULL), 0);
	worker_start(&other);
	run_out_of_memory();
	for (int i = 0; i < FRESH; i++)
		CHECK_RC(pthread_rwlock_init(&fresh_init_after[i], NULL), 0);
	first_use_of(fresh_zeroed, "zeroed, never used,", &other);
	first_use_of(fresh_init_before, "freshly initialized (before the limit)", &other);
	first_use_of(fresh_init_after, "freshly initialized (under the limit)", &other);
}

static void first_use_by(enum op first, enum op last)
{
	first_op = first;
	last_op = last;
	fault_watchdog(30, "first use of fresh locks without memory");
	in_child(first_use_child, 20);
	fault_watchdog(0, NULL);
}

/*
 * Each read function's first use of a fresh lock (zeroed; initialized
 * before or under the limit) returns 0 with no memory left (glibc never
 * allocates; cohort-rw and Per-CPU attach a heap block on first use), the
 * lock is really held (another thread: trywrlock EBUSY, tryrdlock 0),
 * and free after its unlock.
 */
static void first_use_of_fresh_locks_by_every_read_function_succeeds_without_memory(void)
{
	first_use_by(RD, CLOCKRD);
}

/*
 * The same for each write function (another thread's try-locks: EBUSY).
 * EAGAIN is not even an error POSIX allows a write lock: a program that
 * ignores it goes on as a second writer.
 */
static void first_use_of_fresh_locks_by_every_write_function_succeeds_without_memory(void)
{
	first_use_by(WR, CLOCKWR);
}

/* ---- two threads contending on fresh locks ---- */

enum { CONTENDERS = 2, CONTENDED_OPS = 64 };

struct contender {
	int id;
	atomic_int *arrived;   /* per-lock rendezvous, so first use is concurrent */
	long writes[2 * FRESH];
};

static atomic_int rendezvous[2 * FRESH];

static void contend_job(void *arg)
{
	struct contender *c = arg;

	for (int j = 0; j < 2 * FRESH; j++) {
		pthread_rwlock_t *l = &contended[j];
		struct guarded *g = &contended_data[j];

		atomic_fetch_add(&rendezvous[j], 1);
		while (atomic_load(&rendezvous[j]) < CONTENDERS)
			sched_yield();
		for (int i = 0; i < CONTENDED_OPS; i++) {
			enum op op = (enum op)((i + c->id * 5 + j) % NOPS);
			int r = do_op(l, op);

			if (op_tries(op) && r == EBUSY)
				continue; /* glibc's answer when the other one holds it */
			CHECK(r == 0, "%s on a fresh lock (first used by two threads at once) "
			      "without memory returned %s, expected 0", op_name[op], errname(r));
			if (op_writes(op)) {
				guarded_write_enter(g);
				guarded_write_update(g, i % 4 == 0);
				guarded_write_leave(g);
				c->writes[j]++;
			} else {
				guarded_read_enter(g);
				if (i % 4 == 0)
					sched_yield();
				guarded_read_check(g);
				guarded_read_leave(g);
			}
			CHECK_RC(pthread_rwlock_unlock(l), 0);
		}
	}
}

static void contend_child(void *arg)
{
	static struct worker w[CONTENDERS];
	static struct contender c[CONTENDERS];

	(void)arg;
	child_watchdog();
	touch_data();
	memset(c, 0, sizeof(c));
	for (int j = 0; j < 2 * FRESH; j++)
		atomic_store(&rendezvous[j], 0);
	for (int j = FRESH; j < 2 * FRESH; j++)
		CHECK_RC(pthread_rwlock_init(&contended[j], NULL), 0);
	for (int t = 0; t < CONTENDERS; t++) {
		c[t].id = t;
		worker_start(&w[t]);
	}
	run_out_of_memory();
	for (int t = 0; t < CONTENDERS; t++)
		worker_post(&w[t], contend_job, &c[t]);
	for (int t = 0; t < CONTENDERS; t++)
		worker_wait(&w[t]);
	for (int j = 0; j < 2 * FRESH; j++) {
		long writes = c[0].writes[j] + c[1].writes[j];

		CHECK(contended_data[j].writes == (uint64_t)writes,
		      "lock %d: %llu writes recorded, %ld write acquisitions: an update was lost",
		      j, (unsigned long long)contended_data[j].writes, writes);
		CHECK_RC(pthread_rwlock_trywrlock(&contended[j]), 0);
		CHECK_RC(pthread_rwlock_unlock(&contended[j]), 0);
	}
}

/*
 * Two threads whose first use of fresh locks (zeroed, and initialized) is
 * at the same moment, with every lock function, keep exclusion with no
 * memory left: every call returns 0 (a try-lock: 0 or EBUSY), no writer
 * beside another writer or a reader, no lost update.
 */
static void two_threads_contending_on_fresh_locks_keep_exclusion_without_memory(void)
{
	fault_watchdog(30, "two threads on fresh locks without memory");
	in_child(contend_child, 20);
	fault_watchdog(0, NULL);
}

/* ---- many read locks held at once by one thread ---- */

static enum op many_op;

static void take_many(int k, enum op op)
{
	for (int i = 0; i < k; i++)
		CHECK_OP(&many[i], op, 0, "read lock %d of %d held at once by one thread, without memory",
			 i + 1, k);
}

static void release_many(int k)
{
	for (int i = 0; i < k; i++) /* first taken, first released */
		CHECK(pthread_rwlock_unlock(&many[i]) == 0,
		      "unlock of read lock %d of %d (in the order taken) did not return 0", i + 1, k);
}

static void expect_free(int k, const char *after)
{
	for (int i = 0; i < k; i++) {
		int r = pthread_rwlock_trywrlock(&many[i]);

		CHECK(r == 0, "trywrlock of lock %d after %s returned %s, expected 0 (still held?)",
		      i + 1, after, errname(r));
		CHECK_RC(pthread_rwlock_unlock(&many[i]), 0);
	}
}

static void many_job(void *arg)
{
	(void)arg;
	for (int k = 1; k <= MANY; k++) {
		take_many(k, many_op);
		release_many(k);
		expect_free(k, "releasing them all");
	}
}

static void many_child(void *arg)
{
	static struct worker warm, fresh;

	(void)arg;
	child_watchdog();
	touch_data();
	worker_start(&warm);
	worker_start(&fresh); /* never held a lock: its list has no spill yet */
	worker_run(&warm, warm_job, NULL);
	run_out_of_memory();
	worker_run(&fresh, many_job, NULL);
}

static void many_read_locks_at_once(enum op op)
{
	many_op = op;
	fault_watchdog(30, op_name[op]);
	in_child(many_child, 20);
	fault_watchdog(0, NULL);
}

/*
 * One thread takes 1, 2, ..., 200 distinct read locks at once (locks
 * used before, so only the held-lock list may need memory), each call
 * returning 0 with no memory left, releases them in the order taken (0
 * each), and the locks are then free.  Past the 8 holds a thread keeps
 * inline, today's list grows by mmap and the ninth returns EAGAIN.
 */
static void rdlock_of_1_to_200_locks_held_at_once_succeeds_without_memory(void)
{
	many_read_locks_at_once(RD);
}

static void tryrdlock_of_1_to_200_locks_held_at_once_succeeds_without_memory(void)
{
	many_read_locks_at_once(TRYRD);
}

static void timedrdlock_of_1_to_200_locks_held_at_once_succeeds_without_memory(void)
{
	many_read_locks_at_once(TIMEDRD);
}

static void clockrdlock_of_1_to_200_locks_held_at_once_succeeds_without_memory(void)
{
	many_read_locks_at_once(CLOCKRD);
}

/* ---- read re-entries of held locks ---- */

static void reentry_job(void *arg)
{
	(void)arg;
	take_many(MANY, RD);
	for (int op = RD; op <= CLOCKRD; op++)
		for (int i = 0; i < MANY; i++)
			CHECK_OP(&many[i], op, 0, "read re-entry of lock %d of %d held, without memory",
				 i + 1, MANY);
	for (int n = 0; n < 5; n++)
		release_many(MANY);
	expect_free(MANY, "releasing every hold and re-entry");
}

static void reentry_child(void *arg)
{
	static struct worker warm, fresh;

	(void)arg;
	child_watchdog();
	touch_data();
	worker_start(&warm);
	worker_start(&fresh);
	worker_run(&warm, warm_job, NULL);
	run_out_of_memory();
	worker_run(&fresh, reentry_job, NULL);
}

/*
 * A thread holding 200 read locks re-enters each of them with each read
 * function (0 each, no memory left), then releases every hold (5 per
 * lock, 0 each), and the locks are free.
 */
static void read_reentries_of_200_held_locks_succeed_without_memory(void)
{
	fault_watchdog(30, "read re-entries without memory");
	in_child(reentry_child, 20);
	fault_watchdog(0, NULL);
}

/* ---- write locks while holding many read locks ---- */

static void write_locks_while_holding(int k)
{
	take_many(k, RD);
	/* Each write function, one lock at a time ... */
	for (int op = WR; op <= CLOCKWR; op++) {
		CHECK_OP(&write_locks[0], op, 0, "write lock taken while holding %d read locks, without memory", k);
		CHECK_RC(pthread_rwlock_unlock(&write_locks[0]), 0);
	}
	/* ... then all held at once, released in the order taken. */
	for (int i = 0; i < WRITE_LOCKS; i++)
		CHECK_OP(&write_locks[i], (enum op)(WR + i % 4), 0,
			 "write lock %d taken while holding %d read locks and %d write locks, without memory",
			 i + 1, k, i);
	for (int i = 0; i < WRITE_LOCKS; i++)
		CHECK_RC(pthread_rwlock_unlock(&write_locks[i]), 0);
	release_many(k);
	expect_free(k, "releasing them all");
	for (int i = 0; i < WRITE_LOCKS; i++) {
		CHECK_RC(pthread_rwlock_tryrdlock(&write_locks[i]), 0);
		CHECK_RC(pthread_rwlock_unlock(&write_locks[i]), 0);
	}
}

static int write_while_reading_holds;

static void write_while_reading_job(void *arg)
{
	(void)arg;
	write_locks_while_holding(write_while_reading_holds);
}

static void write_while_reading_child(void *arg)
{
	static struct worker warm, fresh;

	(void)arg;
	child_watchdog();
	touch_data();
	worker_start(&warm);
	worker_start(&fresh);
	worker_run(&warm, warm_job, NULL);
	run_out_of_memory();
	worker_run(&fresh, write_while_reading_job, NULL);
}

static void write_locks_while_holding_read_locks(int k)
{
	write_while_reading_holds = k;
	fault_watchdog(30, "write locks while holding read locks, without memory");
	in_child(write_while_reading_child, 20);
	fault_watchdog(0, NULL);
}

/*
 * A thread holding 8 read locks (as many as a thread keeps inline)
 * write-locks other locks with each write function, one at a time and
 * then 8 at once: 0 each with no memory left (cohort-rw and Per-CPU list
 * write holds too, so their list grows here), and everything is free
 * afterwards.
 */
static void write_locks_taken_while_holding_8_read_locks_succeed_without_memory(void)
{
	write_locks_while_holding_read_locks(8);
}

/* The same while holding 200 read locks. */
static void write_locks_taken_while_holding_200_read_locks_succeed_without_memory(void)
{
	write_locks_while_holding_read_locks(MANY);
}

static const struct torture_check checks[] = {
	TORTURE_CHECK(first_use_of_fresh_locks_by_every_read_function_succeeds_without_memory),
	TORTURE_CHECK(first_use_of_fresh_locks_by_every_write_function_succeeds_without_memory),
	TORTURE_CHECK(two_threads_contending_on_fresh_locks_keep_exclusion_without_memory),
	TORTURE_CHECK(rdlock_of_1_to_200_locks_held_at_once_succeeds_without_memory),
	TORTURE_CHECK(tryrdlock_of_1_to_200_locks_held_at_once_succeeds_without_memory),
	TORTURE_CHECK(timedrdlock_of_1_to_200_locks_held_at_once_succeeds_without_memory),
	TORTURE_CHECK(clockrdlock_of_1_to_200_locks_held_at_once_succeeds_without_memory),
	TORTURE_CHECK(read_reentries_of_200_held_locks_succeed_without_memory),
	TORTURE_CHECK(write_locks_taken_while_holding_8_read_locks_succeed_without_memory),
	TORTURE_CHECK(write_locks_taken_while_holding_200_read_locks_succeed_without_memory),
};

int main(int argc, char **argv)
{
	return torture_main("memory_exhaustion",
			    "lock calls with no memory left (RLIMIT_AS): glibc's results, exclusion kept",
			    checks, NELEM(checks), argc, argv);
}
