/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lock_bytes_test - what a lock's bytes may be, beyond what POSIX allows,
 * and what every variant must still do with them (as glibc does):
 *
 *  - a used, unlocked lock copied elsewhere (memcpy, a realloc moving a
 *    struct) is a lock of its own; the old address reused for a new lock
 *    is another one: two writers are never inside either at once;
 *  - a never-initialized lock full of garbage (process-private: __shared
 *    is 0) never crashes a call where glibc's own call does not crash;
 *  - garbage with a non-zero __shared (glibc's mark of a process-shared
 *    lock) is glibc's lock: every call ends as glibc's own call does
 *    (the same return value, hang or signal);
 *  - destroying a zero lock in read-only memory returns 0 and writes
 *    nothing, also at an address where a lock lived before.
 *
 * An ordinary pthread program.  Each garbage call runs in a child process
 * bounded by a timer (glibc itself hangs on some garbage), once through
 * the pthread_rwlock_* this program resolves (the variant under
 * LD_PRELOAD) and once through libc.so.6's own, and the outcomes are
 * printed side by side.  RWLOCK_UNDER_TEST=glibc (no preload) checks the
 * program itself against glibc.  EXPECT_RWLOCK_LIB names the object that
 * must define the functions the program calls (test case "symbols").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/test_util.h"
#include "../lib/check_run.h"

#define TCASE_TIMEOUT 120

/* ------------------------------------------------------------------ */
/* A copied lock and the reused old address                           */
/* ------------------------------------------------------------------ */

/* Two lock places at fixed addresses: the old one is reused in place. */
static pthread_rwlock_t places[2] __attribute__((aligned(64)));

struct holder {
	pthread_rwlock_t *lock;
	pthread_t th;
	atomic_int state; /* 0 start, 1 holding, 2 release, 3 released */
	int rc;
};

static void *holder_main(void *p)
{
	struct holder *h = p;

	h->rc = pthread_rwlock_wrlock(h->lock);
	atomic_store(&h->state, 1);
	while (atomic_load(&h->state) != 2)
		sleep_ms(1);
	if (h->rc == 0)
		h->rc = pthread_rwlock_unlock(h->lock);
	atomic_store(&h->state, 3);
	return NULL;
}

static void holder_start(struct holder *h, pthread_rwlock_t *lock)
{
	h->lock = lock;
	atomic_store(&h->state, 0);
	ck_assert_rc(pthread_create(&h->th, NULL, holder_main, h), 0);
	while (atomic_load(&h->state) != 1)
		sleep_ms(1);
	ck_assert_msg(h->rc == 0, "the holder's wrlock returned %s", errname(h->rc));
}

static void holder_finish(struct holder *h)
{
	atomic_store(&h->state, 2);
	ck_assert_rc(pthread_join(h->th, NULL), 0);
	ck_assert_msg(h->rc == 0, "the holder's unlock returned %s", errname(h->rc));
}

/* Used in both modes, then left unlocked. */
static void use_lock(pthread_rwlock_t *l)
{
	ck_assert_rc(pthread_rwlock_wrlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
	ck_assert_rc(pthread_rwlock_rdlock(l), 0);
	ck_assert_rc(pthread_rwlock_unlock(l), 0);
}

/* How the old address becomes a new lock. */
enum reuse { REUSE_INIT, REUSE_ZERO, REUSE_DESTROY_INIT };

static void reuse_old_address(pthread_rwlock_t *old, enum reuse how)
{
	switch (how) {
	case REUSE_INIT:
		ck_assert_rc(pthread_rwlock_init(old, NULL), 0);
		break;
	case REUSE_ZERO: /* freed without destroy, a new PTHREAD_RWLOCK_INITIALIZER */
		memset(old, 0, sizeof(*old));
		break;
	case REUSE_DESTROY_INIT:
		ck_assert_rc(pthread_rwlock_destroy(old), 0);
		ck_assert_rc(pthread_rwlock_init(old, NULL), 0);
		break;
	}
}

/*
 * A writer holds the copy; the old address becomes a new lock and is used;
 * the copy must still be write-held (nobody else gets in), and the new
 * lock must work on its own.
 */
START_TEST(copied_lock_and_reused_old_address_never_admit_two_writers)
{
	pthread_rwlock_t *old = &places[0], *copy = &places[1];
	struct holder h;

	ck_assert_rc(pthread_rwlock_init(old, NULL), 0);
	use_lock(old);
	memcpy(copy, old, sizeof(*old));
	holder_start(&h, copy);

	reuse_old_address(old, (enum reuse)_i);
	ck_assert_rc(pthread_rwlock_trywrlock(old), 0); /* a lock of its own */
	ck_assert_rc(pthread_rwlock_trywrlock(copy), EBUSY);
	ck_assert_rc(pthread_rwlock_tryrdlock(copy), EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(old), 0);
	ck_assert_rc(pthread_rwlock_trywrlock(copy), EBUSY);
	use_lock(old);
	ck_assert_rc(pthread_rwlock_trywrlock(copy), EBUSY);

	holder_finish(&h);
	ck_assert_rc(pthread_rwlock_trywrlock(copy), 0);
	ck_assert_rc(pthread_rwlock_unlock(copy), 0);
	ck_assert_rc(pthread_rwlock_destroy(copy), 0);
	ck_assert_rc(pthread_rwlock_destroy(old), 0);
}
END_TEST

/* The same, the other way round: the reused address is held, the copy tried. */
START_TEST(reused_old_address_held_keeps_the_copy_a_lock_of_its_own)
{
	pthread_rwlock_t *old = &places[0], *copy = &places[1];
	struct holder h;

	ck_assert_rc(pthread_rwlock_init(old, NULL), 0);
	use_lock(old);
	memcpy(copy, old, sizeof(*old));
	reuse_old_address(old, (enum reuse)_i);
	holder_start(&h, old);

	ck_assert_rc(pthread_rwlock_trywrlock(old), EBUSY);
	ck_assert_rc(pthread_rwlock_trywrlock(copy), 0);
	ck_assert_rc(pthread_rwlock_trywrlock(old), EBUSY);
	ck_assert_rc(pthread_rwlock_unlock(copy), 0);
	use_lock(copy);
	ck_assert_rc(pthread_rwlock_tryrdlock(old), EBUSY);

	holder_finish(&h);
	use_lock(old);
	ck_assert_rc(pthread_rwlock_destroy(copy), 0);
	ck_assert_rc(pthread_rwlock_destroy(old), 0);
}
END_TEST

struct section {
	pthread_rwlock_t *lock;
	atomic_int writers, readers;
	atomic_int violations;
};

struct stress_arg {
	struct section *sec;
	unsigned seed;
};

#define STRESS_ITERS 20000

static void *stress_main(void *p)
{
	struct stress_arg *a = p;
	struct section *s = a->sec;
	unsigned x = a->seed;

	for (int i = 0; i < STRESS_ITERS; i++) {
		x = x * 1103515245u + 12345u;
		if ((x >> 16) % 4 == 0) {
			if (pthread_rwlock_wrlock(s->lock) != 0) {
				atomic_fetch_add(&s->violations, 1);
				continue;
			}
			if (atomic_fetch_add(&s->writers, 1) != 0 || atomic_load(&s->readers) != 0)
				atomic_fetch_add(&s->violations, 1);
			if ((x >> 20) % 16 == 0)
				sched_yield();
			atomic_fetch_sub(&s->writers, 1);
		} else {
			if (pthread_rwlock_rdlock(s->lock) != 0) {
				atomic_fetch_add(&s->violations, 1);
				continue;
			}
			atomic_fetch_add(&s->readers, 1);
			if (atomic_load(&s->writers) != 0)
				atomic_fetch_add(&s->violations, 1);
			atomic_fetch_sub(&s->readers, 1);
		}
		pthread_rwlock_unlock(s->lock);
	}
	return NULL;
}

/* Both locks, each under its own writers and readers, at once. */
START_TEST(copied_lock_and_reused_old_address_each_keep_mutual_exclusion)
{
	pthread_rwlock_t *old = &places[0], *copy = &places[1];
	struct section secs[2] = { { .lock = old }, { .lock = copy } };
	struct stress_arg args[4];
	pthread_t th[4];

	ck_assert_rc(pthread_rwlock_init(old, NULL), 0);
	use_lock(old);
	memcpy(copy, old, sizeof(*old));
	reuse_old_address(old, REUSE_ZERO);
	for (int i = 0; i < 4; i++) {
		args[i] = (struct stress_arg){ &secs[i % 2], 77u + (unsigned)i };
		ck_assert_rc(pthread_create(&th[i], NULL, stress_main, &args[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		ck_assert_rc(pthread_join(th[i], NULL), 0);
	ck_assert_msg(atomic_load(&secs[0].violations) == 0,
		      "%d exclusion violations on the reused address", atomic_load(&secs[0].violations));
	ck_assert_msg(atomic_load(&secs[1].violations) == 0,
		      "%d exclusion violations on the copy", atomic_load(&secs[1].violations));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Garbage bytes                                                       */
/* ------------------------------------------------------------------ */

struct rwlock_fns {
	int (*init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
	int (*destroy)(pthread_rwlock_t *);
	int (*rdlock)(pthread_rwlock_t *);
	int (*tryrdlock)(pthread_rwlock_t *);
	int (*timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*wrlock)(pthread_rwlock_t *);
	int (*trywrlock)(pthread_rwlock_t *);
	int (*timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*unlock)(pthread_rwlock_t *);
};

/* What this program calls: the variant under LD_PRELOAD, or glibc. */
static const struct rwlock_fns resolved = {
	pthread_rwlock_init, pthread_rwlock_destroy,
	pthread_rwlock_rdlock, pthread_rwlock_tryrdlock, pthread_rwlock_timedrdlock,
	pthread_rwlock_clockrdlock,
	pthread_rwlock_wrlock, pthread_rwlock_trywrlock, pthread_rwlock_timedwrlock,
	pthread_rwlock_clockwrlock,
	pthread_rwlock_unlock,
};

/* libc.so.6's own definitions, whatever is preloaded. */
static struct rwlock_fns glibc_fns(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	struct rwlock_fns f;

	ck_assert_msg(libc != NULL, "libc.so.6 not loaded: %s", dlerror());
#define GET(name) (*(void **)&f.name = dlsym(libc, "pthread_rwlock_" #name), \
		   ck_assert_msg(f.name != NULL, "no pthread_rwlock_" #name " in libc.so.6"))
	GET(init); GET(destroy); GET(rdlock); GET(tryrdlock); GET(timedrdlock);
	GET(clockrdlock); GET(wrlock); GET(trywrlock); GET(timedwrlock); GET(clockwrlock);
	GET(unlock);
#undef GET
	return f;
}

enum op {
	OP_RDLOCK, OP_TRYRDLOCK, OP_TIMEDRDLOCK, OP_CLOCKRDLOCK,
	OP_WRLOCK, OP_TRYWRLOCK, OP_TIMEDWRLOCK, OP_CLOCKWRLOCK,
	OP_UNLOCK, OP_DESTROY, OP_INIT, OP_SEQUENCE, NOPS
};

static const char *const op_names[NOPS] = {
	"rdlock", "tryrdlock", "timedrdlock", "clockrdlock",
	"wrlock", "trywrlock", "timedwrlock", "clockwrlock",
	"unlock", "destroy", "init", "wr-un-rd-un-destroy",
};

/* Garbage patterns; the last is seeded random bytes. */
#define NPATTERNS 4
static const char *const pattern_names[NPATTERNS] = { "0xff", "0xa5", "0x5a", "random" };

static pthread_rwlock_t garbage_lock __attribute__((aligned(64)));

/* pshared: __shared non-zero (the pattern's own bytes, or 1), else 0. */
static void fill_garbage(pthread_rwlock_t *l, int pattern, bool pshared)
{
	unsigned char *b = (unsigned char *)l;

	if (pattern < NPATTERNS - 1) {
		memset(b, pattern == 0 ? 0xff : pattern == 1 ? 0xa5 : 0x5a, sizeof(*l));
	} else {
		unsigned x = 2463534242u;

		for (size_t i = 0; i < sizeof(*l); i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			b[i] = (unsigned char)x;
		}
	}
	if (!pshared)
		l->__data.__shared = 0; /* a process-private lock's garbage */
	else if (l->__data.__shared == 0)
		l->__data.__shared = 1; /* a process-shared one's, as glibc reads it */
}

/* The call's return value, or -1 if it returned something else than an errno. */
static int run_op(const struct rwlock_fns *f, pthread_rwlock_t *l, enum op op)
{
	struct timespec rt = ts_add_ms(ts_now(CLOCK_REALTIME), 50);
	struct timespec mt = ts_add_ms(ts_now(CLOCK_MONOTONIC), 50);

	switch (op) {
	case OP_RDLOCK: return f->rdlock(l);
	case OP_TRYRDLOCK: return f->tryrdlock(l);
	case OP_TIMEDRDLOCK: return f->timedrdlock(l, &rt);
	case OP_CLOCKRDLOCK: return f->clockrdlock(l, CLOCK_MONOTONIC, &mt);
	case OP_WRLOCK: return f->wrlock(l);
	case OP_TRYWRLOCK: return f->trywrlock(l);
	case OP_TIMEDWRLOCK: return f->timedwrlock(l, &rt);
	case OP_CLOCKWRLOCK: return f->clockwrlock(l, CLOCK_MONOTONIC, &mt);
	case OP_UNLOCK: return f->unlock(l);
	case OP_DESTROY: return f->destroy(l);
	case OP_INIT: return f->init(l, NULL);
	case OP_SEQUENCE: {
		int r = f->wrlock(l);

		if (r == 0)
			r = f->unlock(l);
		if (r == 0)
			r = f->rdlock(l);
		if (r == 0)
			r = f->unlock(l);
		if (r == 0)
			r = f->destroy(l);
		return r;
	}
	default:
		return -1;
	}
}

enum outcome_kind { OUT_RETURNED, OUT_HUNG, OUT_CRASHED };

struct outcome {
	enum outcome_kind kind;
	int value; /* the return value, or the signal */
};

/*
 * One call on fresh garbage, in a child bounded by a timer of timer_ms:
 * 250 ms is five times the 50 ms of the timed calls; a call still inside
 * after it is taken to hang.  garbage_start forks the child and
 * garbage_end collects its outcome, so that a test runs a pattern's calls
 * side by side and waits out one timer, not one per call.
 */
static pid_t garbage_start(const struct rwlock_fns *f, int pattern, bool pshared, enum op op,
			   long timer_ms)
{
	pid_t pid = fork();

	ck_assert_msg(pid >= 0, "fork failed");
	if (pid == 0) {
		struct itimerval it = { { 0, 0 }, { timer_ms / 1000, timer_ms % 1000 * 1000 } };
		int r;

		signal(SIGALRM, SIG_DFL);
		setitimer(ITIMER_REAL, &it, NULL);
		fill_garbage(&garbage_lock, pattern, pshared);
		r = run_op(f, &garbage_lock, op);
		_exit(r >= 0 && r < 126 ? r : 126);
	}
	return pid;
}

static struct outcome garbage_end(pid_t pid)
{
	struct outcome o = { OUT_CRASHED, 0 };
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status)) {
		o.kind = OUT_RETURNED;
		o.value = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
		o.kind = OUT_HUNG;
	} else {
		o.value = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
	}
	return o;
}

/*
 * Every call of the pattern on garbage, through the variant (mine[op])
 * and through libc.so.6 (theirs[op]), all in children at once.
 */
static void garbage_calls(int pattern, bool pshared, long timer_ms, struct outcome *mine,
			  struct outcome *theirs)
{
	struct rwlock_fns libc = glibc_fns();
	pid_t pm[NOPS], pt[NOPS];

	for (int op = 0; op < NOPS; op++) {
		pm[op] = garbage_start(&resolved, pattern, pshared, (enum op)op, timer_ms);
		pt[op] = garbage_start(&libc, pattern, pshared, (enum op)op, timer_ms);
	}
	for (int op = 0; op < NOPS; op++) {
		mine[op] = garbage_end(pm[op]);
		theirs[op] = garbage_end(pt[op]);
	}
}

static void describe(char *buf, size_t n, struct outcome o)
{
	switch (o.kind) {
	case OUT_RETURNED:
		snprintf(buf, n, "%s", errname(o.value));
		break;
	case OUT_HUNG:
		snprintf(buf, n, "hangs");
		break;
	default:
		snprintf(buf, n, "CRASH (signal %d: %s)", o.value, strsignal(o.value));
		break;
	}
}

START_TEST(calls_on_garbage_bytes_never_crash_where_glibc_does_not)
{
	struct outcome as[NOPS], gs[NOPS];
	int pattern = _i;
	char mine[64], theirs[64];
	int bad = 0;

	garbage_calls(pattern, false, 250, as, gs);
	for (int op = 0; op < NOPS; op++) {
		struct outcome a = as[op], g = gs[op];

		describe(mine, sizeof(mine), a);
		describe(theirs, sizeof(theirs), g);
		printf("garbage %-6s %-20s %s: %-28s glibc: %s\n", pattern_names[pattern],
		       op_names[op], under_glibc() ? "glibc" : "variant", mine, theirs);
		if (a.kind == OUT_CRASHED && g.kind != OUT_CRASHED)
			bad++;
	}
	fflush(stdout);
	ck_assert_msg(bad == 0, "%d calls on garbage (%s) crashed where glibc's did not (see stdout)",
		      bad, pattern_names[pattern]);
}
END_TEST

static bool same_outcome(struct outcome a, struct outcome b)
{
	return a.kind == b.kind && (a.kind == OUT_HUNG || a.value == b.value);
}

/*
 * Garbage marked process-shared: glibc's lock, so each call ends as
 * glibc's.  Outcomes that differ are taken again with a 2 s timer (a
 * timed call's child held up past 250 ms on a busy machine looks hung),
 * and only a difference that stays fails.
 */
START_TEST(calls_on_garbage_bytes_marked_process_shared_end_as_glibc_calls_do)
{
	struct outcome as[NOPS], gs[NOPS], as2[NOPS], gs2[NOPS];
	int pattern = _i;
	char mine[64], theirs[64];
	int bad = 0;
	bool again = false;

	garbage_calls(pattern, true, 250, as, gs);
	for (int op = 0; op < NOPS; op++)
		again |= !same_outcome(as[op], gs[op]);
	if (again)
		garbage_calls(pattern, true, 2000, as2, gs2);
	for (int op = 0; op < NOPS; op++) {
		struct outcome a = as[op], g = gs[op];

		if (!same_outcome(a, g)) {
			a = as2[op];
			g = gs2[op];
		}
		describe(mine, sizeof(mine), a);
		describe(theirs, sizeof(theirs), g);
		printf("pshared garbage %-6s %-20s %s: %-28s glibc: %s\n", pattern_names[pattern],
		       op_names[op], under_glibc() ? "glibc" : "variant", mine, theirs);
		if (!same_outcome(a, g))
			bad++;
	}
	fflush(stdout);
	ck_assert_msg(bad == 0, "%d calls on garbage (%s) marked process-shared ended otherwise "
		      "than glibc's (see stdout)", bad, pattern_names[pattern]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Destroy of a zero lock in read-only memory                          */
/* ------------------------------------------------------------------ */

/* destroy in a child: its return value, or 128 + the signal that killed it. */
static int destroy_in_child(pthread_rwlock_t *l)
{
	int status;
	pid_t pid = fork();

	ck_assert_msg(pid >= 0, "fork failed");
	if (pid == 0)
		_exit(pthread_rwlock_destroy(l));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static pthread_rwlock_t *page_lock(void)
{
	void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_msg(p != MAP_FAILED, "mmap failed");
	return p;
}

START_TEST(destroy_of_zero_lock_in_read_only_memory_returns_0)
{
	pthread_rwlock_t *l = page_lock();
	int r;

	ck_assert_rc(mprotect(l, (size_t)sysconf(_SC_PAGESIZE), PROT_READ), 0);
	r = destroy_in_child(l);
	ck_assert_msg(r == 0, "destroy returned %s%s", r >= 128 ? "signal " : "",
		      r >= 128 ? strsignal(r - 128) : errname(r));
}
END_TEST

/* The address had a used lock, freed without destroy; now a new, unused zero lock. */
START_TEST(destroy_of_zero_lock_in_read_only_memory_where_a_lock_lived_returns_0)
{
	pthread_rwlock_t *l = page_lock();
	int r;

	use_lock(l);
	memset(l, 0, sizeof(*l));
	ck_assert_rc(mprotect(l, (size_t)sysconf(_SC_PAGESIZE), PROT_READ), 0);
	r = destroy_in_child(l);
	ck_assert_msg(r == 0, "destroy returned %s%s", r >= 128 ? "signal " : "",
		      r >= 128 ? strsignal(r - 128) : errname(r));
}
END_TEST

/* Which library answered: the program's calls reach EXPECT_RWLOCK_LIB. */
START_TEST(rwlock_functions_are_defined_in_expected_library)
{
	char why[PATH_MAX + 256];

	ck_assert_msg(rwlock_lib_check(why, sizeof(why)) == 0, "%s", why);
}
END_TEST

static Suite *lock_bytes_suite(void)
{
	Suite *s = suite_create("lock_bytes");
	TCase *tc;

	tc = tcase_create("copies");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_loop_test(tc, copied_lock_and_reused_old_address_never_admit_two_writers,
			    REUSE_INIT, REUSE_DESTROY_INIT + 1);
	tcase_add_loop_test(tc, reused_old_address_held_keeps_the_copy_a_lock_of_its_own,
			    REUSE_INIT, REUSE_DESTROY_INIT + 1);
	tcase_add_test(tc, copied_lock_and_reused_old_address_each_keep_mutual_exclusion);
	suite_add_tcase(s, tc);

	tc = tcase_create("garbage");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_loop_test(tc, calls_on_garbage_bytes_never_crash_where_glibc_does_not,
			    0, NPATTERNS);
	tcase_add_loop_test(tc, calls_on_garbage_bytes_marked_process_shared_end_as_glibc_calls_do,
			    0, NPATTERNS);
	suite_add_tcase(s, tc);

	tc = tcase_create("read_only");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, destroy_of_zero_lock_in_read_only_memory_returns_0);
	tcase_add_test(tc, destroy_of_zero_lock_in_read_only_memory_where_a_lock_lived_returns_0);
	suite_add_tcase(s, tc);

	tc = tcase_create("symbols");
	tcase_set_timeout(tc, TCASE_TIMEOUT);
	tcase_add_test(tc, rwlock_functions_are_defined_in_expected_library);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(lock_bytes_suite());
}
