/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wait.c - futex glue for the spin-then-park primitive (see wait.h).
 *
 * errno: glibc's pthread_rwlock_* functions never change errno, so no
 * function here may either.  The futex syscall sets it on every failure
 * (EAGAIN when the word already changed, EINTR on a signal, ETIMEDOUT), and
 * clock_gettime, sched_yield and the statistics hooks may; each exported
 * function saves errno on entry and restores it before it returns.
 */
#include "wait.h"

#include "events.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

unsigned wait_spin_budget = 128;
_Atomic unsigned wait_ncpus;
__thread const void *_Atomic wait_writer_pending __attribute__((tls_model("initial-exec")));
__thread uint32_t wait_self __attribute__((tls_model("initial-exec")));
__thread struct wait_read wait_read_now __attribute__((tls_model("initial-exec")));

/*
 * Numbers from a process-wide counter (a forked child's threads go on
 * from its parent's count): 2^32 threads before one repeats.  0 is
 * skipped.  A handler that interrupts the assignment may take a number
 * of its own first; either is the thread's from then on.
 */
uint32_t wait_self_assign(void)
{
	static _Atomic uint32_t next;
	uint32_t id;

	do
		id = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) + 1;
	while (id == 0);
	wait_self = id;
	return id;
}
void (*lock_event_waited)(uint64_t ns);
void (*lock_event_revoked)(uint64_t ns);
void (*lock_event_count)(enum lock_event ev, uint64_t n);

static long sys_futex(_Atomic uint32_t *uaddr, int op, uint32_t val,
		      const struct timespec *ts, uint32_t val3)
{
	return syscall(SYS_futex, (uint32_t *)uaddr, op, val, ts, NULL, val3);
}

bool deadline_passed(const struct deadline *dl)
{
	struct timespec now;
	int saved_errno;

	if (!dl || !dl->abstime)
		return false;
	if (dl->abstime->tv_sec < 0)
		return true;
	saved_errno = errno;
	clock_gettime(dl->clock, &now);
	errno = saved_errno;
	if (now.tv_sec != dl->abstime->tv_sec)
		return now.tv_sec > dl->abstime->tv_sec;
	return now.tv_nsec >= dl->abstime->tv_nsec;
}

int wait_park(_Atomic uint32_t *word, uint32_t expected, const struct deadline *dl)
{
	int op = FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG;
	const struct timespec *ts = NULL;
	int saved_errno = errno;

	if (dl && dl->abstime) {
		/* The kernel rejects a negative absolute time with EINVAL. */
		if (deadline_passed(dl))
			return ETIMEDOUT;
		ts = dl->abstime;
		if (dl->clock == CLOCK_REALTIME)
			op |= FUTEX_CLOCK_REALTIME;
	}
	void (*waited)(uint64_t) = lock_event_waited;
	uint64_t t0 = waited ? lock_event_clock_ns() : 0;
	long r = sys_futex(word, op, expected, ts, FUTEX_BITSET_MATCH_ANY);
	int err = r == 0 ? 0 : errno;

	if (waited)
		waited(lock_event_clock_ns() - t0);
	errno = saved_errno;
	if (err == ETIMEDOUT)
		return ETIMEDOUT;
	/* 0 (woken), EAGAIN (word changed), EINTR (signal): the caller re-checks. */
	return 0;
}

int wait_park_polled(_Atomic uint32_t *word, uint32_t expected, const struct deadline *dl,
		     uint64_t *nap_ns)
{
	struct timespec nap, now, *rel = &nap;
	uint64_t ns = *nap_ns ? *nap_ns : UINT64_C(1000000);
	int saved_errno = errno;

	*nap_ns = ns < UINT64_C(1000000000) ? 2 * ns : ns;
	nap = (struct timespec){ (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	if (dl && dl->abstime) {
		if (deadline_passed(dl))
			return ETIMEDOUT;
		clock_gettime(dl->clock, &now);
		errno = saved_errno;
		/* The deadline first: park until it (wait_park), not past it. */
		if ((int64_t)(dl->abstime->tv_sec - now.tv_sec) * 1000000000 +
			    (dl->abstime->tv_nsec - now.tv_nsec) <= (int64_t)ns)
			return wait_park(word, expected, dl);
	}
	void (*waited)(uint64_t) = lock_event_waited;
	uint64_t t0 = waited ? lock_event_clock_ns() : 0;

	/* FUTEX_WAIT: a relative time on CLOCK_MONOTONIC. */
	sys_futex(word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, expected, rel, 0);
	if (waited)
		waited(lock_event_clock_ns() - t0);
	errno = saved_errno;
	return 0; /* woken, changed, a signal or the nap over: the caller re-checks */
}

void wait_wake(_Atomic uint32_t *word, int count)
{
	int saved_errno = errno;

	sys_futex(word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, (uint32_t)count, NULL, 0);
	errno = saved_errno;
}

/*
 * The affinity mask's CPUs, by the system call itself (async-signal-safe:
 * a signal handler's wait may be the first).  Once at load, and again by
 * any thread that finds it unset; the same answer either way.  The mask
 * has room for 8192 CPUs (a cpu_set_t's 1024 would make the kernel
 * refuse the call on a larger machine); a refusal counts as one CPU
 * (waiters then never spin: slower, never wrong).
 */
unsigned wait_cpus_init(void)
{
	unsigned long mask[8192 / (8 * sizeof(unsigned long))];
	int saved_errno = errno;
	long r = syscall(SYS_sched_getaffinity, 0, sizeof(mask), mask);
	unsigned n = 0;

	for (long i = 0; r > 0 && i < r / (long)sizeof(mask[0]); i++)
		n += (unsigned)__builtin_popcountl(mask[i]);

	errno = saved_errno;
	if (n == 0)
		n = 1;
	atomic_store_explicit(&wait_ncpus, n, memory_order_relaxed);
	return n;
}

bool wait_preempt_rate_oversubscribed(uint64_t preempts, uint64_t ns, unsigned cpus)
{
	/* In doubles: a window of days on thousands of CPUs would overflow 64 bits. */
	return ns > 0 && (double)preempts * 1e9 >= (double)WAIT_PREEMPTS_PER_CPU * cpus * (double)ns;
}

/*
 * The last look (wait_oversubscribed): its time (0: none yet), which the
 * next looker claims by a CAS, the process's involuntary switches then,
 * and its verdict.  Racy by design: a looker preempted for a whole
 * sample period inside its look can leave the next one a time and a
 * count of different looks, and then one verdict is wrong until the
 * look after; relaxed, since the verdict only chooses between yielding
 * and watching, both of them safe.
 */
static _Atomic uint64_t oversub_last_ns, oversub_last_preempts;
static _Atomic bool oversub_verdict;

bool wait_oversubscribed(void)
{
	uint64_t now = lock_event_clock_ns();
	uint64_t last = atomic_load_explicit(&oversub_last_ns, memory_order_relaxed);
	int saved_errno = errno;
	struct rusage ru;
	bool over = false;

	if ((last != 0 && now - last < WAIT_OVERSUB_SAMPLE_NS) ||
	    !atomic_compare_exchange_strong_explicit(&oversub_last_ns, &last, now,
						     memory_order_relaxed, memory_order_relaxed)) {
		errno = saved_errno;
		return atomic_load_explicit(&oversub_verdict, memory_order_relaxed);
	}
	/* The system call itself: nothing of glibc's between a handler and the kernel. */
	if (syscall(SYS_getrusage, RUSAGE_SELF, &ru) == 0) {
		uint64_t before = atomic_load_explicit(&oversub_last_preempts, memory_order_relaxed);
		uint64_t preempts = (uint64_t)ru.ru_nivcsw;

		/* A first look, or a forked child's (its count starts again): no verdict yet. */
		over = last != 0 && preempts >= before &&
		       wait_preempt_rate_oversubscribed(preempts - before, now - last, wait_cpus());
		atomic_store_explicit(&oversub_last_preempts, preempts, memory_order_relaxed);
	}
	atomic_store_explicit(&oversub_verdict, over, memory_order_relaxed);
	errno = saved_errno;
	return over;
}

__attribute__((constructor)) static void wait_cpus_at_load(void)
{
	wait_cpus_init();
}

void wait_yield(void)
{
	void (*waited)(uint64_t) = lock_event_waited;
	uint64_t t0;
	int saved_errno = errno;

	t0 = waited ? lock_event_clock_ns() : 0;
	sched_yield();
	if (waited)
		waited(lock_event_clock_ns() - t0);
	errno = saved_errno;
}

void wait_sleep_ns(uint64_t ns, const struct deadline *dl)
{
	void (*waited)(uint64_t) = lock_event_waited;
	uint64_t t0 = waited ? lock_event_clock_ns() : 0;
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	int saved_errno = errno;

	(void)dl; /* the caller checks its deadline after each sleep */
	/*
	 * The system call itself: glibc's clock_nanosleep is a cancellation
	 * point, and a writer cancelled here would die with the lock half
	 * taken.  syscall() is not one: a cancellation request waits for the
	 * program's next cancellation point.
	 */
	syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &ts, NULL);
	errno = saved_errno;
	if (waited)
		waited(lock_event_clock_ns() - t0);
}
