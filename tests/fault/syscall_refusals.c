/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syscall_refusals.c - lock calls made by threads whose system calls a
 * sandbox filters (seccomp), refusing with EPERM every call libbravo's
 * lock paths may make beyond glibc's own futex: yields and sleeps of its
 * waits, the oversubscription test's getrusage, the affinity mask, the
 * page-map read, the pool's maps, the fork adoption's tgkill, getcpu
 * (libbravo(7), System calls).  glibc's rwlock needs none of them, so
 * every call must return what glibc's returns and exclusion must hold:
 * a refusal may cost speed, never a result.
 *
 * Each worker installs the filter on itself (a filter binds the thread
 * that installs it and the threads it creates later; the main thread
 * stays free to create threads and report), then works:
 *
 *   - eight threads on 2 CPUs (more threads than CPUs: holding-back
 *     writers and BRAVO revocations that wait), a quarter writes, on a
 *     lock of the default kind and one of the writer-preferring kind,
 *     whose bias comes on and is revoked while the waits are refused;
 *   - one thread read-holding 24 fresh, zeroed locks at once (past the
 *     held-lock list's 8 inline entries, and first uses that want a heap
 *     block under cohort-rw and percpu) while the pool's maps are
 *     refused; another thread's try-locks on them answer EBUSY, the
 *     holder releases them, and then they are free.
 */
#include "fault.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FILTER_ARCH AUDIT_ARCH_AARCH64
#else
#error "syscall_refusals.c: no seccomp architecture for this target"
#endif

/* The system calls refused: libbravo(7)'s list, less write (reports) and getpid. */
static const int refused[] = {
	SYS_sched_yield, SYS_clock_nanosleep, SYS_nanosleep, SYS_getrusage,
	SYS_sched_getaffinity, SYS_openat, SYS_pread64, SYS_mmap, SYS_munmap,
	SYS_mremap, SYS_tgkill, SYS_getcpu,
#ifdef SYS_open
	SYS_open,
#endif
};

#define FILTER_MAX (4 + 2 * NELEM(refused) + 1)

/* This thread's further system calls in `refused` fail with EPERM. */
static void refuse_extra_syscalls(void)
{
	struct sock_filter f[FILTER_MAX];
	struct sock_fprog prog;
	unsigned short n = 0;
	long r;

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < NELEM(refused); i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (unsigned)refused[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = n;
	prog.filter = f;
	CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "prctl(PR_SET_NO_NEW_PRIVS): %s",
	      strerror(errno));
	r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	CHECK(r == 0, "seccomp(SECCOMP_SET_MODE_FILTER): %s (the kernel must offer seccomp filters)",
	      strerror(errno));
	CHECK(syscall(SYS_getrusage, RUSAGE_SELF, &(struct rusage){ 0 }) == -1 && errno == EPERM,
	      "the filter does not refuse getrusage");
}

/* ---- many threads, bias on and off, every wait refused ---- */

static void *filtered_exclusion_worker(void *arg)
{
	refuse_extra_syscalls();
	return exclusion_worker(arg);
}

static void mixed_run_with_refusals(bool prefer_writer)
{
	pthread_rwlock_t lock;
	long writes;

	init_lock_of_kind(&lock, prefer_writer);
	/* Warm the lock on this (unfiltered) thread: BRAVO's bias comes on. */
	for (int i = 0; i < 64; i++) {
		CHECK_RC(pthread_rwlock_rdlock(&lock), 0);
		CHECK_RC(pthread_rwlock_unlock(&lock), 0);
	}
	fault_watchdog(60, "eight filtered threads on one lock");
	writes = exclusion_check(&lock, 8, (int)(4000 * torture_scale()), filtered_exclusion_worker);
	fault_watchdog(0, NULL);
	CHECK(writes > 0, "no write was made");
	CHECK_RC(pthread_rwlock_destroy(&lock), 0);
}

static void lock_calls_keep_glibcs_results_when_their_extra_system_calls_are_refused(void)
{
	mixed_run_with_refusals(false);
}

static void writer_preferring_lock_keeps_glibcs_results_when_extra_system_calls_are_refused(void)
{
	mixed_run_with_refusals(true);
}

/* ---- first uses and many holds with the pool's maps refused ---- */

/* wait_for, for a filtered thread: its sleeps are refused, so it spins on the clock. */
static bool spin_until(atomic_int *flag, int want, long ms)
{
	struct timespec start = ts_now(CLOCK_MONOTONIC);

	while (atomic_load(flag) < want)
		if (ms_since(start) > ms)
			return false;
	return true;
}

enum { FRESH = 24 };
static pthread_rwlock_t fresh[FRESH]; /* zeroed: PTHREAD_RWLOCK_INITIALIZER, never used */
static atomic_int fresh_stage;

static void *fresh_holder(void *arg)
{
	(void)arg;
	refuse_extra_syscalls();
	for (int i = 0; i < FRESH; i++)
		CHECK_RC(pthread_rwlock_rdlock(&fresh[i]), 0);
	for (int i = 0; i < FRESH; i++)
		CHECK_RC(pthread_rwlock_tryrdlock(&fresh[i]), 0); /* a re-entry each */
	atomic_store(&fresh_stage, 1);
	CHECK(spin_until(&fresh_stage, 2, 30000), "the other thread never tried the locks");
	for (int i = FRESH - 1; i >= 0; i--) {
		CHECK_RC(pthread_rwlock_unlock(&fresh[i]), 0);
		CHECK_RC(pthread_rwlock_unlock(&fresh[i]), 0);
	}
	atomic_store(&fresh_stage, 3);
	return NULL;
}

static void *fresh_tryer(void *arg)
{
	(void)arg;
	refuse_extra_syscalls();
	CHECK(spin_until(&fresh_stage, 1, 30000), "the holder never took the locks");
	for (int i = 0; i < FRESH; i++)
		CHECK_RC(pthread_rwlock_trywrlock(&fresh[i]), EBUSY);
	atomic_store(&fresh_stage, 2);
	CHECK(spin_until(&fresh_stage, 3, 30000), "the holder never released the locks");
	for (int i = 0; i < FRESH; i++) {
		CHECK_RC(pthread_rwlock_trywrlock(&fresh[i]), 0);
		CHECK_RC(pthread_rwlock_unlock(&fresh[i]), 0);
	}
	return NULL;
}

static void first_uses_and_many_read_holds_work_when_mmap_is_refused(void)
{
	pthread_t holder, tryer;

	fault_watchdog(60, "24 fresh locks held by a filtered thread");
	holder = spawn(fresh_holder, NULL);
	tryer = spawn(fresh_tryer, NULL);
	join(holder);
	join(tryer);
	fault_watchdog(0, NULL);
	for (int i = 0; i < FRESH; i++)
		check_lock_still_works(&fresh[i], 2, 200);
}

int main(int argc, char **argv)
{
	static const struct torture_check checks[] = {
		TORTURE_CHECK(lock_calls_keep_glibcs_results_when_their_extra_system_calls_are_refused),
		TORTURE_CHECK(writer_preferring_lock_keeps_glibcs_results_when_extra_system_calls_are_refused),
		TORTURE_CHECK(first_uses_and_many_read_holds_work_when_mmap_is_refused),
	};

	return torture_main("syscall_refusals",
			    "lock calls by threads whose extra system calls a seccomp filter refuses",
			    checks, NELEM(checks), argc, argv);
}
