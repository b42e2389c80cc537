/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rwlock.c - the exported pthread_rwlock_* functions.
 *
 * Thin by design: handle -> held-lock list -> algorithm.  Every blocking
 * entry point funnels into rwlock_acquire() (rdlock is a timed lock without
 * a deadline).  The contract is glibc 2.36's results (README, "glibc
 * compatibility"):
 *
 *   EINVAL   NULL lock; a timed call's clock not REALTIME/MONOTONIC or
 *            tv_nsec outside [0, 1e9) (checked first, as glibc does)
 *   EDEADLK  rdlock/timedrdlock while holding the lock for writing, and the
 *            write forms while holding it at all (glibc hangs on
 *            read-then-write; we report it)
 *   EBUSY    try-locks that cannot have the lock (also when the caller
 *            holds it, except a read re-entry)
 *   ETIMEDOUT the deadline passed while the lock was busy
 *   EAGAIN   read re-entry count exhausted (2^32 - 1 holds)
 *
 * Never for lack of memory: a read hold that cannot be listed is kept
 * unlisted (held.h).  No call is a cancellation point, and none acts on a
 * cancellation request at any wait (wait.h).
 *
 * destroy and unlock succeed as glibc's do: destroy of a held lock returns
 * 0, and an unlock by a thread that holds nothing releases one read hold
 * on another reader's behalf (handoff.h).  Strict mode (BRAVO_CHECK=1)
 * adds POSIX's recommended errors instead -- EBUSY from destroy of a held
 * lock, EPERM from unlock by a non-holder, EINVAL on a destroyed lock --
 * each with one line on stderr naming the call, the lock and the caller.
 *
 * Write holds are known from the lock, which names its writer (variant.h,
 * VARIANT_WRITE_OWNER), as glibc knows its own, and are not in the list:
 * the uncontended write path is the variant's try-lock and a check, its
 * unlock a compare and a tail call.
 *
 * A read re-entry only bumps the recursion count, so a thread re-reading a
 * lock never queues behind a waiting writer.  An entry is pushed only once
 * the lock is taken and removed before it is released, so a signal handler
 * that locks on the same thread never finds a hold that is not there.
 * Process-shared locks are glibc's, operated in place with no bookkeeping.
 * No call changes errno.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "handoff.h"
#include "held.h"
#include "handle.h"
#include "message.h"
#include "page_kind.h"
#include "pool.h"
#include "profile.h"
#include "real.h"
#include "stats.h"
#include "variant.h"

#define EXPORT __attribute__((visibility("default")))
#define CALLER __builtin_return_address(0)

/*
 * glibc declares these functions nonnull, so GCC drops a plain NULL test
 * of their argument (-fno-delete-null-pointer-checks does not stop it).
 * forget_nonnull hides where a pointer came from.  The exports with fast
 * paths pass their argument through it once, on entry, and test it
 * plainly; null_ptr tests a hidden copy (one move more), for the paths
 * that get rw from elsewhere.
 */
#define forget_nonnull(p) __asm__("" : "+r"(p))

static inline bool null_ptr(const void *p)
{
	forget_nonnull(p);
	return p == NULL;
}

/* ---- loading: the constructor, or the first call if that comes first ---- */

static atomic_bool loaded;
static __thread bool loading;

/*
 * The write fast path and the read try-lock path open once the library is
 * loaded, unless strict mode or statistics want to see every call.  With
 * the profile they are sampled: shut inline, and taken out of line
 * (acquire_sampled, from acquire_observed), where one acquisition in
 * config.profile_sample is counted (BRAVO_PROFILE_SAMPLE=1: shut).
 * Acquire/release: a thread that finds them open or sampled finds glibc's
 * functions resolved (BRAVO-pthread's try-locks call them) and the
 * profile started, as ensure_loaded would have.
 */
enum fast_paths { FAST_PATHS_SHUT, FAST_PATHS_OPEN, FAST_PATHS_SAMPLED };
/* A variant with paths that do not wait (variant.h): the profile samples them. */
#if defined(VARIANT_READ_NOWAIT) && defined(VARIANT_WRITE_FAST)
#define SAMPLED_FAST_PATHS 1
#endif
static _Atomic uint8_t fast_paths;

/*
 * Loaded, and neither strict mode nor the profile wants to see the
 * acquisitions: rwlock_acquire's one test for all three, so that the
 * variants whose every call takes the full path (Cohort-RW, Per-CPU) pay
 * nothing for the profile.  Release/acquire as loaded: a thread that finds
 * it set finds the load done.
 */
static atomic_bool acquire_plain;

static void profile_load(void);

static enum fast_paths fast_paths_chosen(void)
{
	if (config.strict || config.stats)
		return FAST_PATHS_SHUT;
	if (!config.profile)
		return FAST_PATHS_OPEN;
#ifdef SAMPLED_FAST_PATHS
	if (profile_on && config.profile_sample > 1)
		return FAST_PATHS_SAMPLED;
#endif
	return FAST_PATHS_SHUT;
}

/* The fast paths are sampled (the profile's): acquire_observed takes them. */
static inline bool fast_paths_sampled(void)
{
	return atomic_load_explicit(&fast_paths, memory_order_acquire) == FAST_PATHS_SAMPLED;
}

static void libbravo_load_once(void)
{
	int saved_errno = errno, cancel_state;

	/* The first call may be the program's: no cancellation point acts, errno stays. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	/* First: its fork handler runs last before a fork, after the tables' (table_lock.h). */
	pool_atfork();
	real_resolve();
	config_load();
	config_scrub_secure(); /* idempotent: a first call may come before the constructor */
	if (config.stats)
		stats_start(variant_name, config.stats_file, variant_has_bias);
	if (config.profile)
		profile_load();
	handoff_atfork();
	held_init();
	variant_load();
	config_announce(variant_name, variant_detail());
	atomic_store_explicit(&fast_paths, fast_paths_chosen(), memory_order_release);
	pthread_setcancelstate(cancel_state, NULL);
	errno = saved_errno;
}

static void libbravo_load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	/* A call made by the load itself (a library it calls) finds defaults. */
	if (loading)
		return;
	loading = true;
	pthread_once(&once, libbravo_load_once);
	loading = false;
	atomic_store_explicit(&loaded, true, memory_order_release);
	atomic_store_explicit(&acquire_plain, !config.strict && !profile_on, memory_order_release);
}

static inline void ensure_loaded(void)
{
	if (__builtin_expect(!atomic_load_explicit(&loaded, memory_order_acquire), 0))
		libbravo_load();
}

/*
 * Before anything of the program that comes after the preload: a
 * privileged process drops its caller's BRAVO_* (config.c).
 */
__attribute__((constructor(101))) static void libbravo_constructor(void)
{
	config_scrub_secure();
	libbravo_load();
}

/* ---- misuse reports ---- */

/*
 * Strict mode (BRAVO_CHECK=1): one line on stderr naming the call, the
 * lock and the caller (message.h: errno and SIGPIPE are safe), to
 * whatever fd 2 is now: the user asked for them, and may have pointed fd 2
 * at a file of their own to get them; never to a network socket.
 */
static void report_strict(const char *call, const void *rw, const char *what, const void *caller)
{
	char line[256];
	int n = snprintf(line, sizeof(line), "libbravo: %s(%p): %s (caller %p)\n",
			 call, rw, what, caller);

	if (n <= 0 || !libbravo_stderr_writable(false))
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	libbravo_write(2, line, (size_t)n);
}

/* Strict mode: a misuse gets its POSIX error and a line. */
static int misuse(int err, const char *call, const void *rw, const char *what, const void *caller)
{
	report_strict(call, rw, what, caller);
	return stats_error(err);
}

/* ---- the algorithm, for private locks ---- */

static int algo_trylock(pthread_rwlock_t *rw, enum held_mode mode, uintptr_t *data)
{
	return mode == HELD_READ ? variant_read_trylock(rw, data)
				 : variant_write_trylock(rw, data);
}

static int algo_lock(pthread_rwlock_t *rw, enum held_mode mode, uintptr_t *data,
		     const struct deadline *dl)
{
	return mode == HELD_READ ? variant_read_lock(rw, data, dl)
				 : variant_write_lock(rw, data, dl);
}

/*
 * Release one read hold of rw on some other reader's behalf, recording it
 * (handoff.h) in the lock's life; false if the lock has none that this
 * variant can release, or no record can be had.
 */
static bool release_for_other(pthread_rwlock_t *rw)
{
	uint32_t life = handle_life_ensure(rw);
	uintptr_t cls = 0;

	if (!handoff_reserve())
		return false;
	if (!variant_read_release_other(rw, &cls)) {
		handoff_unreserve();
		return false;
	}
	handoff_add(rw, cls, life);
	return true;
}

/* An own read entry whose hold another thread released: forget it. */
static bool held_handed_off(pthread_rwlock_t *rw, struct held *h)
{
	uintptr_t data = h->data;

	if (held_mode_of(h) != HELD_READ ||
	    !handoff_take(rw, variant_hold_class(rw, data), handle_life(rw)))
		return false;
	held_remove(h);
	variant_read_forget(rw, data);
	return true;
}

/* An own entry of an earlier life of the lock (variant_hold_stale): forget it. */
static bool held_stale(pthread_rwlock_t *rw, struct held *h)
{
	uintptr_t data = h->data;

	if (!variant_hold_stale(rw, data))
		return false;
	held_remove(h);
	variant_read_forget(rw, data);
	return true;
}

/* ---- write holds named in the lock (variant.h, VARIANT_WRITE_OWNER) ---- */

/*
 * May the caller adopt a lock named by writer, an id its thread had
 * before a fork (held.h)?  Only if that cannot be another thread's hold:
 * the lock's memory is the process's own copy (not shared with the parent
 * that may still hold it: page_kind.h), and no thread of this process has
 * that id now (ids are recycled: a later thread may have been given it,
 * and hold the lock).  A thread of the parent's past that held it cannot
 * be inside: in this process it never ran.
 */
static bool adoption_safe(pthread_rwlock_t *rw, pid_t writer)
{
	int saved_errno = errno;
	bool mine = syscall(SYS_tgkill, getpid(), writer, 0) != 0 && errno == ESRCH;

	errno = saved_errno;
	return mine && !page_shared(rw);
}

/*
 * A lock that names a writer other than the caller's id: the caller still
 * holds it if the name is the id this thread had before a fork and
 * adopting it is safe (adoption_safe); the lock is then given the child's
 * id, which glibc's unlock looks for.  unlocking: the caller's id may be
 * stale (a fork that ran no handlers): before saying no, ask the kernel
 * again; only unlocks ask, where "no" leads to the misuse paths.
 */
static __attribute__((noinline)) bool write_named_other(pthread_rwlock_t *rw, pid_t writer,
							bool unlocking)
{
	if (unlocking && writer == held_self_refresh())
		return true;
	if (!held_forked_from(writer) || !adoption_safe(rw, writer))
		return false;
	/* keeping the profile's mark (handle.h): the unlock still ends the hold */
	handle_set_writer(rw, held_self() | (handle_writer(rw) & HANDLE_WRITER_PROFILED));
	return true;
}

/* True if the caller holds rw for writing; unlocking: the caller says it does. */
static inline bool write_held_by_self(pthread_rwlock_t *rw, bool unlocking)
{
	pid_t writer = handle_writer(rw);

	if (__builtin_expect(writer == 0, 1))
		return false;
	writer = handle_writer_id(writer);
	return writer == held_self() || write_named_other(rw, writer, unlocking);
}

/* ---- the profile (profile.h): on the full path only ---- */

/* The kind of lock rw is, from its bytes. */
static enum profile_kind profile_kind_of(pthread_rwlock_t *rw)
{
	if (handle_is_pshared(rw))
		return PROFILE_KIND_PSHARED;
	return handle_prefers_writers(rw) ? PROFILE_KIND_WRITER_PREF : PROFILE_KIND_DEFAULT;
}

/* glibc's own unlock, while profile_load has put unlock_glibc_profiled in its place. */
static int (*glibc_unlock)(pthread_rwlock_t *);

/*
 * glibc's unlock with the profile on (real_rwlock.unlock): every unlock
 * of a lock in glibc's bytes comes here -- a process-shared lock under any
 * variant, every lock under BRAVO-pthread, whose inline unlock calls
 * glibc's through that pointer.  A write unlock (glibc names the caller
 * as the writer) ends the hold's timing first.
 */
static int unlock_glibc_profiled(pthread_rwlock_t *rw)
{
	bool ours = profile_holds_open() && handle_writer(rw) == held_self();
	int r = glibc_unlock(rw);

	/* After the release: the clock is read outside the critical section. */
	if (ours)
		profile_write_release(rw);
	return r;
}

/*
 * At load, with BRAVO_PROFILE: the records, and glibc's unlock wrapped.
 * Before the load is published (loaded), so no thread holds a lock yet
 * whose unlock reads the pointer.
 */
static void profile_load(void)
{
	profile_start(variant_name, variant_has_bias);
	if (!profile_on)
		return;
	glibc_unlock = real_rwlock.unlock;
	real_rwlock.unlock = unlock_glibc_profiled;
}

/*
 * A write hold of rw ends (unlock_slow): its timing too.  Holds in glibc's
 * bytes end in unlock_glibc_profiled instead.
 */
static inline void profile_release(pthread_rwlock_t *rw)
{
#ifndef VARIANT_WRITE_UNLOCK_GLIBC
	if (__builtin_expect(profile_on, 0) && profile_holds_open())
		profile_write_release(rw);
#else
	(void)rw;
#endif
}

/*
 * The write hold just taken must reach the full path's unlock, where its
 * timing ends: where libbravo names the writer, the name gets
 * HANDLE_WRITER_PROFILED (handle.h).  glibc's names need nothing: its
 * unlock is wrapped.
 */
static inline void profile_mark_writer(pthread_rwlock_t *rw)
{
#ifndef VARIANT_WRITE_UNLOCK_GLIBC
	handle_set_writer(rw, held_self() | HANDLE_WRITER_PROFILED);
#else
	(void)rw;
#endif
}

/*
 * One profiled acquisition's times.  A write's hold begins just before
 * its try-lock, or at the end of its wait, and ends after its release
 * (unlock_slow), so that no clock is read inside an uncontended write's
 * critical section; a read reads the clock only if it waits.  A wait is
 * counted if the blocking call took the lock or ran out of time.
 */
struct profiled_call {
	uint64_t start;   /* a write's hold */
	uint64_t wait_ns;
	bool waited;
};

static inline void profiled_begin(struct profiled_call *c, enum held_mode mode)
{
	*c = (struct profiled_call){ .start = mode == HELD_WRITE ? profile_clock_ns() : 0 };
}

/* Before the blocking call: when its wait begins. */
static inline uint64_t profiled_wait_begin(const struct profiled_call *c, enum held_mode mode)
{
	return mode == HELD_WRITE ? c->start : profile_clock_ns();
}

/* After the blocking call begun at t0, which returned r. */
static inline void profiled_wait_end(struct profiled_call *c, uint64_t t0, int r)
{
	c->wait_ns = profile_clock_ns() - t0;
	c->waited = r == 0 || r == ETIMEDOUT;
	c->start = t0 + c->wait_ns;
}

/* The call's wait, if it waited, counted in p. */
static inline void profiled_count_wait(struct profile_lock *p, enum held_mode mode,
				       const struct profiled_call *c)
{
	if (c->waited)
		profile_waited(p, mode == HELD_WRITE, c->wait_ns);
}

/*
 * A lock's record, looked up before an algorithm call, so that a write's
 * critical section does not hold the lookup, and looked up again after it
 * only if eviction reused the record meanwhile (its life changed).
 */
struct profiled_lock {
	struct profile_lock *p;
	uint32_t life;
	enum profile_kind kind;
	const void *caller;
};

static inline void profiled_lookup(struct profiled_lock *pl, pthread_rwlock_t *rw,
				   enum profile_kind kind, const void *caller)
{
	pl->p = profile_lock_of(rw, kind, caller);
	pl->life = profile_life(pl->p);
	pl->kind = kind;
	pl->caller = caller;
}

/* The record of the lock's life now. */
static inline struct profile_lock *profiled_record(struct profiled_lock *pl, pthread_rwlock_t *rw)
{
	if (__builtin_expect(profile_life(pl->p) != pl->life, 0))
		pl->p = profile_lock_of(rw, pl->kind, pl->caller);
	return pl->p;
}

/* ---- process-shared locks: glibc's, in place ---- */

static int pshared_call(pthread_rwlock_t *rw, enum held_mode mode, bool try,
			const struct deadline *dl)
{
	const struct real_rwlock *g = real();

	if (try)
		return mode == HELD_READ ? g->tryrdlock(rw) : g->trywrlock(rw);
	if (!dl)
		return mode == HELD_READ ? g->rdlock(rw) : g->wrlock(rw);
	return mode == HELD_READ ? g->clockrdlock(rw, dl->clock, dl->abstime)
				 : g->clockwrlock(rw, dl->clock, dl->abstime);
}

/*
 * With the profile: glibc's try-lock first, and its blocking call, timed,
 * only if that failed.  A write hold ends in unlock_glibc_profiled.
 */
static __attribute__((noinline)) int pshared_profiled(pthread_rwlock_t *rw, enum held_mode mode,
							bool try, const struct deadline *dl,
							const void *caller)
{
	struct profiled_lock pl;
	struct profile_lock *p;
	struct profiled_call c;
	int r;

	profiled_lookup(&pl, rw, PROFILE_KIND_PSHARED, caller);
	profiled_begin(&c, mode);
	r = pshared_call(rw, mode, true, NULL);
	if (r != 0 && !try) {
		uint64_t t0 = profiled_wait_begin(&c, mode);

		r = pshared_call(rw, mode, false, dl);
		profiled_wait_end(&c, t0, r);
	}
	p = profiled_record(&pl, rw);
	profiled_count_wait(p, mode, &c);
	if (r)
		profile_counted(p);
	else if (mode == HELD_READ)
		profile_read(p, PROFILE_READ_NA, 1);
	else
		profile_write(p, rw, c.start, 1);
	return r;
}

static int pshared_acquire(pthread_rwlock_t *rw, enum held_mode mode, bool try,
			   const struct deadline *dl, const void *caller)
{
	if (__builtin_expect(profile_on, 0))
		return pshared_profiled(rw, mode, try, dl, caller);
	return pshared_call(rw, mode, try, dl);
}

/* ---- the one acquisition path ---- */

static bool deadline_valid(const struct deadline *dl)
{
	if (dl->clock != CLOCK_REALTIME && dl->clock != CLOCK_MONOTONIC)
		return false;
	/* NULL: glibc waits without a deadline. */
	return !dl->abstime || (dl->abstime->tv_nsec >= 0 && dl->abstime->tv_nsec < 1000000000);
}

/* What the caller's own entry says about a new request; -1: go to the lock. */
static int held_check(struct held *h, enum held_mode mode, bool try)
{
	if (held_mode_of(h) == HELD_WRITE || mode == HELD_WRITE)
		return try ? EBUSY : EDEADLK;
	if (h->reentries == UINT32_MAX - 1)
		return EAGAIN;
	h->reentries++;
	stats_add(STAT_READ_REENTRIES, 1);
	return 0;
}

/*
 * A read hold just taken (data) that the held-lock list has no room for
 * (no memory: held.h): keep it unlisted, of the plain class.  A hold of
 * another class is traded for a plain one (released, then taken again as
 * the call would: waiting, timed or not at all).  A guest read (wait.h)
 * touches no lock: it is only counted.  0, or what taking the plain hold
 * returned (EBUSY, ETIMEDOUT: the lock changed hands meanwhile).
 */
static __attribute__((noinline)) int hold_unlisted(pthread_rwlock_t *rw, uintptr_t data, bool try,
						   const struct deadline *dl)
{
	int r;

	if (data == VARIANT_GUEST) {
		atomic_fetch_add_explicit(&held_tls.unlisted_guests, 1, memory_order_relaxed);
		return 0;
	}
	if (data != 0) {
		variant_read_unlock(rw, data);
		r = try ? variant_read_trylock_plain(rw) : variant_read_lock_plain(rw, dl);
		if (r)
			return r;
	}
	held_unlisted_add();
	return 0;
}

/* List a read hold just taken, or keep it unlisted (hold_unlisted). */
static inline int hold_listed(pthread_rwlock_t *rw, uintptr_t data, bool try,
			      const struct deadline *dl)
{
	if (__builtin_expect(held_push(rw, HELD_READ, data), 1))
		return 0;
	return hold_unlisted(rw, data, try, dl);
}

/*
 * With the profile (profile.h), for a lock the caller does not hold:
 * rwlock_acquire's algorithm calls, but a blocking call tries first, and
 * only a wait that follows a failed try is timed; revocations made in
 * between are the lock's.  The hold is recorded as rwlock_acquire records
 * it, a write hold marked so that its unlock ends its timing.
 */
static __attribute__((noinline)) int acquire_profiled(pthread_rwlock_t *rw, enum held_mode mode,
						       bool try, const struct deadline *dl,
						       const void *caller)
{
	uint64_t seen = mode == HELD_READ ? variant_read_seen(rw) : 0;
	struct wait_read outer_read = wait_read_save(); /* as take's */
	struct profile_pending outer;
	struct profiled_lock pl;
	struct profile_lock *p;
	struct profiled_call c;
	uintptr_t data = 0;
	int r;

	profiled_lookup(&pl, rw, profile_kind_of(rw), caller);
	profiled_begin(&c, mode);
	profile_enter(&outer, rw);
	r = algo_trylock(rw, mode, &data);
	if (r != 0 && !try) {
		if (dl && dl->abstime && dl->abstime->tv_sec < 0) {
			r = ETIMEDOUT;
		} else {
			uint64_t t0 = profiled_wait_begin(&c, mode);

			r = algo_lock(rw, mode, &data, dl);
			profiled_wait_end(&c, t0, r);
		}
	}
	if (r == 0 && mode == HELD_READ)
		r = hold_listed(rw, data, try, dl);
	wait_read_restore(&outer_read);
	p = profiled_record(&pl, rw);
	profile_leave(&outer, p);
	profiled_count_wait(p, mode, &c);
	if (r) {
		profile_counted(p);
		return r;
	}
	if (mode == HELD_READ) {
		profile_read(p, variant_read_class(rw, data, seen), 1);
	} else {
		profile_mark_writer(rw);
		profile_write(p, rw, c.start, 1);
	}
	stats_add(mode == HELD_READ ? STAT_READS : STAT_WRITES, 1);
	return 0;
}

/*
 * What the caller's own holds of rw answer a new request with: a read
 * re-entry (0, counted), EDEADLK, EBUSY or EAGAIN; -1: go to the lock.
 */
static inline __attribute__((always_inline)) int holds_answer(pthread_rwlock_t *rw,
							      enum held_mode mode, bool try)
{
	struct held *h;
	int r = -1;

	held_pin(); /* h stays where it is (held.h) */
	h = held_find(rw);
	if (h && (held_stale(rw, h) || (handoff_any() && held_handed_off(rw, h))))
		h = NULL;
	if (h)
		r = held_check(h, mode, try);
	held_unpin();
	if (r < 0 && write_held_by_self(rw, false))
		r = try ? EBUSY : EDEADLK;
	return r;
}

/*
 * The lock itself, for a caller that holds none of it.  dl == NULL: wait
 * forever; try: never wait.  Timed calls try first, and a deadline in the
 * past (negative tv_sec) then times out at once.
 */
static inline __attribute__((always_inline)) int take(pthread_rwlock_t *rw, enum held_mode mode,
						      bool try, const struct deadline *dl)
{
	/* A read waited for stays marked until it is listed (wait.h, wait_read_now). */
	struct wait_read outer = wait_read_save();
	uintptr_t data = 0;
	int r;

	if (try || (dl && dl->abstime)) {
		r = algo_trylock(rw, mode, &data);
		if (r == 0 || try)
			goto out;
		if (dl->abstime->tv_sec < 0) {
			r = ETIMEDOUT;
			goto out;
		}
	}
	r = algo_lock(rw, mode, &data, dl);
out:
	if (r == 0 && mode == HELD_READ)
		r = hold_listed(rw, data, try, dl);
	wait_read_restore(&outer);
	if (r)
		return stats_error(r);
	stats_add(mode == HELD_READ ? STAT_READS : STAT_WRITES, 1);
	return 0;
}

/* ---- the fast paths, sampled by the profile ---- */

/*
 * With the profile on (and BRAVO_PROFILE_SAMPLE above 1) the inline paths
 * are shut, so every call comes to acquire_observed.  There, before the
 * holds are looked up, the acquisitions that do not wait -- a read through
 * BRAVO's table, the read try-lock, the write fast path -- are taken by
 * the same variant calls and recorded under the same rules as rdlock_fast,
 * rdlock_slow and wrlock_fast take them inline when the paths are open.
 * Of these, one in N (config.profile_sample) is the sample, and the
 * profile counts it as N; the others count nothing.  Whatever they cannot
 * take goes on to the full path (acquire_profiled), which counts every
 * acquisition, wait and revocation; so does a write whose fast path found
 * bias to revoke.
 *
 * The gaps between samples are drawn per thread and per mode, uniformly
 * in [0, 2N - 2] (mean N - 1): a thread that alternates between locks
 * does not sample the same one every time.  A sample that could not be
 * taken fast stays due: the next fast acquisition is the sample, so the
 * estimate of the fast acquisitions stays unbiased.  A signal handler's
 * acquisitions in between only move the sample.
 */
#ifdef SAMPLED_FAST_PATHS
enum sample_mode { SAMPLE_READ, SAMPLE_WRITE };

static __thread uint32_t sample_gap[2] __attribute__((tls_model("initial-exec")));
static __thread uint64_t sample_rng __attribute__((tls_model("initial-exec")));

/* Is this thread's next fast acquisition in mode m the sample? */
static inline bool sample_due(enum sample_mode m)
{
	return sample_gap[m] == 0;
}

/* A fast acquisition that was not the sample. */
static inline void sample_skip(enum sample_mode m)
{
	if (sample_gap[m] != 0)
		sample_gap[m]--;
}

/* The sample was taken: draw the gap to the next. */
static void sample_draw(enum sample_mode m)
{
	uint32_t n = config.profile_sample;

	if (sample_rng == 0)
		sample_rng = (uintptr_t)&sample_rng | 1; /* differs per thread */
	sample_rng = sample_rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	sample_gap[m] = (uint32_t)((sample_rng >> 33) % (2 * (uint64_t)n - 1));
}

static __attribute__((noinline)) void read_sample_count(pthread_rwlock_t *rw, uintptr_t data,
							uint64_t seen, const void *caller)
{
	struct profile_lock *p = profile_lock_of(rw, profile_kind_of(rw), caller);

	profile_read(p, variant_read_class(rw, data, seen), config.profile_sample);
}

/* A read that does not wait, sampled: 0 taken, -1 not (the full path's). */
static inline int read_sampled(pthread_rwlock_t *rw, const void *caller)
{
	bool due = sample_due(SAMPLE_READ);
	uint64_t seen = due ? variant_read_seen(rw) : 0;
	enum held_mode entry = HELD_READ | HELD_FAST;
	uintptr_t data = 0;

	if (!variant_read_settle(rw, &data)) {
		enum read_nowait nowait = variant_read_nowait(rw, &data);

		if (nowait == READ_NOWAIT_HELD)
			entry = HELD_READ;
		else if (nowait != READ_NOWAIT_SETTLE || !variant_read_settle(rw, &data))
			return -1;
	}
	if (__builtin_expect(!held_push_fast(rw, entry, data), 0)) {
		if (entry & HELD_FAST)
			variant_read_fast_unlock(data);
		else
			variant_read_unlock(rw, data);
		return -1;
	}
	if (__builtin_expect(!due, 1)) {
		sample_skip(SAMPLE_READ);
		return 0;
	}
	sample_draw(SAMPLE_READ);
	read_sample_count(rw, data, seen, caller);
	return 0;
}

/*
 * The write fast path found bias to revoke, and holds the lock underneath:
 * the revocation that never waits, counted in pl's record (looked up now
 * if pl has none), and so is the write if it took the lock.  0 taken, -1
 * not (the full path counts the write).
 */
static __attribute__((noinline)) int write_revoke_profiled(pthread_rwlock_t *rw,
							   struct profiled_lock *pl,
							   const void *caller)
{
	struct profile_pending outer;
	struct profile_lock *p;
	bool held;

	if (!pl->p)
		profiled_lookup(pl, rw, profile_kind_of(rw), caller);
	profile_enter(&outer, rw);
	held = variant_write_fast_revoke(rw);
	p = profiled_record(pl, rw);
	profile_leave(&outer, p);
	if (!held) {
		profile_counted(p);
		return -1;
	}
	profile_mark_writer(rw);
	profile_write(p, rw, profile_clock_ns(), 1);
	return 0;
}

/*
 * A write that does not wait, sampled: 0 taken, -1 not.  The sample's
 * record is looked up and its hold's clock read before the try-lock, as
 * acquire_profiled does, so that neither is inside its critical section.
 */
static inline int write_sampled(pthread_rwlock_t *rw, const void *caller)
{
	struct profiled_lock pl = { NULL };
	bool due = sample_due(SAMPLE_WRITE);
	uint64_t start = 0;

	if (due) {
		profiled_lookup(&pl, rw, profile_kind_of(rw), caller);
		start = profile_clock_ns();
	}
	switch (variant_write_fast(rw)) {
	case WRITE_FAST_HELD:
		if (__builtin_expect(!due, 1)) {
			sample_skip(SAMPLE_WRITE);
			return 0;
		}
		sample_draw(SAMPLE_WRITE);
		profile_mark_writer(rw);
		profile_write(profiled_record(&pl, rw), rw, start, config.profile_sample);
		return 0;
	case WRITE_FAST_REVOKE:
		return write_revoke_profiled(rw, &pl, caller);
	default:
		break;
	}
	if (pl.p)
		profile_counted(profiled_record(&pl, rw));
	return -1;
}

/* acquire_observed's sampled step: 0 taken, -1 not. */
static int acquire_sampled(pthread_rwlock_t *rw, enum held_mode mode, const void *caller)
{
	return mode == HELD_READ ? read_sampled(rw, caller) : write_sampled(rw, caller);
}
#endif /* SAMPLED_FAST_PATHS */

/*
 * rwlock_acquire before the load, in strict mode or with the profile:
 * the process-shared test, the sampled fast paths (an untimed call, with
 * the profile), strict mode's test, the caller's holds, then the
 * profile's acquisition or the plain one.
 */
static __attribute__((noinline)) int acquire_observed(pthread_rwlock_t *rw, enum held_mode mode,
						      bool try, const struct deadline *dl,
						      const void *caller)
{
	int r;

	ensure_loaded();
	if (handle_is_pshared(rw))
		return stats_error(pshared_acquire(rw, mode, try, dl, caller));
#ifdef SAMPLED_FAST_PATHS
	if (!dl && fast_paths_sampled() && acquire_sampled(rw, mode, caller) == 0)
		return 0;
#endif
	if (config.strict && handle_is_destroyed(rw))
		return misuse(EINVAL, mode == HELD_READ ? "pthread_rwlock_rdlock" : "pthread_rwlock_wrlock",
			      rw, "the lock was destroyed", caller);
	r = holds_answer(rw, mode, try);
	if (r >= 0)
		return stats_error(r);
	if (profile_on)
		return stats_error(acquire_profiled(rw, mode, try, dl, caller));
	return take(rw, mode, try, dl);
}

/* The one acquisition path (see the top of the file). */
static inline __attribute__((always_inline)) int
rwlock_acquire(pthread_rwlock_t *rw, enum held_mode mode, bool try,
			  const struct deadline *dl, const void *caller)
{
	int r;

	if (null_ptr(rw))
		return stats_error(EINVAL);
	if (dl && !deadline_valid(dl))
		return stats_error(EINVAL);
	if (__builtin_expect(!atomic_load_explicit(&acquire_plain, memory_order_acquire), 0))
		return acquire_observed(rw, mode, try, dl, caller);
	if (handle_is_pshared(rw))
		return stats_error(pshared_call(rw, mode, try, dl));
	r = holds_answer(rw, mode, try);
	if (r >= 0)
		return stats_error(r);
	return take(rw, mode, try, dl);
}

static int rwlock_acquire_timed(pthread_rwlock_t *rw, enum held_mode mode,
				clockid_t clk, const struct timespec *abstime, const void *caller)
{
	struct deadline dl = { abstime, clk };

	return rwlock_acquire(rw, mode, false, &dl, caller);
}

EXPORT int pthread_rwlock_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	int pshared = PTHREAD_PROCESS_PRIVATE, r;

	if (null_ptr(rw))
		return EINVAL;
	if (attr && pthread_rwlockattr_getpshared(attr, &pshared) != 0)
		return EINVAL;
	ensure_loaded();
	/* A new lock at this address: no hold of the old one carries over. */
	held_forget(rw);
	handoff_forget(rw);
	if (pshared == PTHREAD_PROCESS_SHARED)
		r = real()->init(rw, attr); /* sets __shared: glibc's from now on */
	else
		r = variant_init(rw, attr);
	if (__builtin_expect(profile_on, 0) && r == 0)
		profile_lock_init(rw, profile_kind_of(rw), CALLER); /* its next life */
	return r;
}

/* A destroy that succeeded: the profile's record of the lock's life ends. */
static int destroyed(pthread_rwlock_t *rw)
{
	if (__builtin_expect(profile_on, 0))
		profile_lock_destroy(rw);
	return 0;
}

EXPORT int pthread_rwlock_destroy(pthread_rwlock_t *rw)
{
	const char *why = NULL;

	if (null_ptr(rw))
		return stats_error(EINVAL);
	if (handle_is_pshared(rw)) {
		int r = real()->destroy(rw);

		return r ? r : destroyed(rw);
	}
	if (!config.strict)
		/*
		 * glibc's destroy changes nothing, and neither do we: a heap
		 * block stays with its address (the registry gives it to the
		 * next lock there), so a thread still inside a call on the lock
		 * -- a waiter, one leaving after a time-out, a waker -- never
		 * touches freed memory, nor a block other than the lock's.  (An
		 * idle test cannot tell that no thread is about to enter: oprand
		 * --destroy-waited broke exclusion when idle blocks were swapped.)
		 */
		return destroyed(rw);
	if (handle_is_destroyed(rw))
		why = "the lock was already destroyed";
	else if (held_find(rw) || write_held_by_self(rw, false))
		why = "the calling thread holds the lock";
	else if (variant_destroy(rw) != 0)
		why = "another thread holds or waits for the lock";
	if (why)
		return misuse(handle_is_destroyed(rw) ? EINVAL : EBUSY, "pthread_rwlock_destroy",
			      rw, why, CALLER);
	handle_mark_destroyed(rw);
	return destroyed(rw);
}

/*
 * The read fast path: the variant's (a BRAVO table slot), recorded in the
 * held-lock list, with no call and no frame.  It may skip the list lookup:
 * a thread holding rw for writing finds bias revoked, and one that reads
 * it through the table already finds its own slot taken or takes a second
 * one (locks/bravo.h); a read hold of the lock underneath is simply
 * another hold.  The variant keeps it shut before the load (no bias yet)
 * and in strict mode or with statistics (which see every call); anything
 * else -- a full list, a process-shared lock (its BRAVO word is zero) --
 * takes rwlock_acquire.
 *
 * Failing that, rdlock_slow first tries the variant's read that does not
 * wait (variant_read_nowait): BA's read try-lock; under BRAVO the table's
 * path with the settling the inline one leaves out (the first fast reader
 * since bias came on), or while bias is off and this read would not
 * enable it, the try-lock of the lock underneath.  It is
 * recorded without a lookup under the same rules: it fails while the
 * caller holds rw for writing, and succeeds for a reader of rw only as a
 * second hold, which needs no lookup either (a re-entry behind a waiting
 * writer fails it: BA's writer phase, glibc's writer-preferring try-lock,
 * BRAVO's waiting writers; the full path then counts the re-entry).  Shut
 * as the write fast path is, and for process-shared locks.
 */
/* The try-lock paths are open for rw (fast_paths); pshared_too: also if process-shared. */
static inline __attribute__((always_inline)) bool try_paths_open(pthread_rwlock_t *rw,
								 bool pshared_too)
{
	return atomic_load_explicit(&fast_paths, memory_order_acquire) == FAST_PATHS_OPEN &&
	       (pshared_too || !handle_is_pshared(rw));
}

/* rw: through forget_nonnull */
static inline __attribute__((always_inline)) bool rdlock_fast(pthread_rwlock_t *rw)
{
	uintptr_t data;

	if (rw == NULL)
		return false;
	if (!variant_read_fast(rw, &data))
		return false;
	if (__builtin_expect(held_push_fast(rw, HELD_READ | HELD_FAST, data), 1))
		return true;
	variant_read_fast_unlock(data);
	return false;
}

static __attribute__((noinline)) int rdlock_full(pthread_rwlock_t *rw, const void *caller, bool try)
{
	return rwlock_acquire(rw, HELD_READ, try, NULL, caller);
}

/*
 * The inline list had no room for the hold rdlock_slow took: undo it, take
 * the full path.  Out of line, so that the table's fast path above keeps
 * no frame; the full path is a tail call from here.
 */
static __attribute__((noinline)) int rdlock_undo_full(pthread_rwlock_t *rw, uintptr_t data,
						      const void *caller, bool try)
{
	variant_read_unlock(rw, data);
	return rdlock_full(rw, caller, try);
}

/*
 * The variant's fast path with what the inline one leaves out; out of
 * line, so that rdlock_slow's try-lock path keeps no frame for its call.
 */
static __attribute__((noinline)) int rdlock_settle(pthread_rwlock_t *rw, const void *caller,
						   bool try)
{
	uintptr_t data;

	if (variant_read_settle(rw, &data)) {
		if (__builtin_expect(held_push_fast(rw, HELD_READ | HELD_FAST, data), 1))
			return 0;
		variant_read_fast_unlock(data);
	}
	return rdlock_full(rw, caller, try);
}

/*
 * Inline in both read exports, after rdlock_fast; what needs a frame
 * beyond the try-lock's call is out of line.  Out of line itself, behind
 * a tail jump, it cost bias-off reads 14-20 points at two threads in the
 * VM's slow state (results/README.md, issue 13, eighth session), with the
 * same accesses.  null_ptr, not a plain test: that lets GCC load the
 * caller's address on entry, giving the fast path a frame.
 */
static inline __attribute__((always_inline)) int rdlock_slow(pthread_rwlock_t *rw,
							      const void *caller, bool try)
{
	uintptr_t data;

	if (!null_ptr(rw) && try_paths_open(rw, VARIANT_READ_NOWAIT_PSHARED)) {
		switch (variant_read_nowait(rw, &data)) {
		case READ_NOWAIT_HELD:
			if (__builtin_expect(held_push_fast(rw, HELD_READ, data), 1))
				return 0;
			return rdlock_undo_full(rw, data, caller, try);
		case READ_NOWAIT_SETTLE:
			return rdlock_settle(rw, caller, try);
		case READ_NOWAIT_MISS:
			break;
		}
	}
	return rdlock_full(rw, caller, try);
}

EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *rw)
{
	forget_nonnull(rw);
	if (rdlock_fast(rw))
		return 0;
	return rdlock_slow(rw, CALLER, false);
}

EXPORT int pthread_rwlock_tryrdlock(pthread_rwlock_t *rw)
{
	forget_nonnull(rw);
	if (rdlock_fast(rw))
		return 0;
	return rdlock_slow(rw, CALLER, true);
}

EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_READ, CLOCK_REALTIME, abstime, CALLER);
}

EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *rw, clockid_t clk,
				      const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_READ, clk, abstime, CALLER);
}

/*
 * The write fast path: the variant's uncontended write lock, a try-lock
 * that names the writer in the lock (no list entry).  It may skip the list
 * lookup because the variant's fast path fails while the caller holds rw
 * in any mode (variant.h); EDEADLK and EBUSY then come from
 * rwlock_acquire.  Shut before the load, in strict mode and with
 * statistics, and for process-shared locks (glibc's bytes) unless the
 * variant's fast path is glibc's own (VARIANT_WRITE_FAST_PSHARED).
 * rw: through forget_nonnull.
 */
static inline __attribute__((always_inline)) enum write_fast wrlock_fast(pthread_rwlock_t *rw)
{
	if (rw == NULL || !try_paths_open(rw, VARIANT_WRITE_FAST_PSHARED))
		return WRITE_FAST_MISS;
	return variant_write_fast(rw);
}

static __attribute__((noinline)) int wrlock_slow(pthread_rwlock_t *rw, bool try, const void *caller)
{
	return rwlock_acquire(rw, HELD_WRITE, try, NULL, caller);
}

/*
 * The fast path holds the lock underneath and found bias to revoke: the
 * revocation that never waits (only BRAVO variants get here, which keep
 * write holds out of the list), else the full path.  Out of line and a
 * tail call, so the write fast path keeps needing no frame.
 */
#if defined(VARIANT_WRITE_FAST_REVOKE) && !defined(VARIANT_WRITE_OWNER)
#error "wrlock_revoke pushes no list entry: its variant must name its writer in the lock"
#endif
static __attribute__((noinline)) int wrlock_revoke(pthread_rwlock_t *rw, bool try, const void *caller)
{
	if (variant_write_fast_revoke(rw))
		return 0;
	return wrlock_slow(rw, try, caller);
}

EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *rw)
{
	forget_nonnull(rw);
	switch (wrlock_fast(rw)) {
	case WRITE_FAST_HELD:
		return 0;
	case WRITE_FAST_REVOKE:
		return wrlock_revoke(rw, false, CALLER);
	default:
		return wrlock_slow(rw, false, CALLER);
	}
}

EXPORT int pthread_rwlock_trywrlock(pthread_rwlock_t *rw)
{
	forget_nonnull(rw);
	switch (wrlock_fast(rw)) {
	case WRITE_FAST_HELD:
		return 0;
	case WRITE_FAST_REVOKE:
		return wrlock_revoke(rw, true, CALLER);
	default:
		return wrlock_slow(rw, true, CALLER);
	}
}

EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *rw, const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_WRITE, CLOCK_REALTIME, abstime, CALLER);
}

EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *rw, clockid_t clk,
				      const struct timespec *abstime)
{
	return rwlock_acquire_timed(rw, HELD_WRITE, clk, abstime, CALLER);
}

/* Unlock by a thread that holds nothing on rw (it may hold no entry at all). */
static int unlock_unheld(pthread_rwlock_t *rw, const void *caller)
{
	static atomic_bool warned;

	/* The first call of this thread may be this one: the variant needs the load. */
	ensure_loaded();
	if (config.strict) {
		if (handle_is_destroyed(rw))
			return misuse(EINVAL, "pthread_rwlock_unlock", rw, "the lock was destroyed", caller);
		return misuse(EPERM, "pthread_rwlock_unlock", rw,
			      "the calling thread holds no lock on it", caller);
	}
	if (release_for_other(rw) || variant_is_idle(rw))
		return 0; /* released as glibc would; or nothing held: glibc returns 0 */
	/*
	 * Default mode's one warning: no addresses (a program's stderr may be
	 * read by others, and an address says where its memory is), only to
	 * the stderr it started with (libbravo_message).
	 */
	if (!atomic_exchange_explicit(&warned, true, memory_order_relaxed))
		libbravo_message("pthread_rwlock_unlock: the calling thread holds no lock on it and "
				 "no read hold could be released on another thread's behalf "
				 "(write-held elsewhere?); nothing released, reported once");
	(void)caller;
	return 0;
}

static __attribute__((noinline)) int unlock_slow(pthread_rwlock_t *rw, const void *caller);

/*
 * Release the most recent entry, a single read hold of rw taken on any
 * path (no re-entry, no hold released on another thread's behalf): what
 * unlock_slow would do, less the lookup.  Out of line, and reached by
 * tail calls, so that the read fast path's unlock keeps needing no frame.
 */
static __attribute__((noinline)) int unlock_read_top(pthread_rwlock_t *rw, uintptr_t data)
{
	void *target = variant_read_unlock_target(rw, data);

	held_pop(); /* off the list right before the release (see the top of the file) */
	variant_read_unlock_at(target, rw, data);
	return 0;
}

/*
 * unlock_read_top, less the call where the variant releases a hold of
 * the lock underneath (data 0) inline (VARIANT_READ_UNLOCK_UNDER).
 */
static inline __attribute__((always_inline)) int unlock_read_single(pthread_rwlock_t *rw,
								     uintptr_t data)
{
#ifdef VARIANT_READ_UNLOCK_UNDER
	if (data == 0) {
		held_pop(); /* off the list before the release */
		return variant_read_unlock_under(rw);
	}
#endif
	return unlock_read_top(rw, data);
}

/*
 * A write hold the lock names (VARIANT_WRITE_OWNER): not in the list.
 * Out of line, so that the read fast path's unlock keeps needing no
 * frame; glibc's unlock is a tail call, which needs none: inline.
 */
#ifdef VARIANT_WRITE_UNLOCK_GLIBC
static inline __attribute__((always_inline)) int unlock_write_named(pthread_rwlock_t *rw)
#else
static __attribute__((noinline)) int unlock_write_named(pthread_rwlock_t *rw)
#endif
{
#ifdef VARIANT_WRITE_UNLOCK_GLIBC
	/*
	 * The lock is glibc's, process-shared or not: its unlock, in tail
	 * position (glibc's returns 0).  Loaded: this thread write-locked it.
	 */
	return real_loaded()->unlock(rw);
#else
	if (handle_is_pshared(rw))
		return real()->unlock(rw);
	variant_write_unlock(rw, 0);
	return 0;
#endif
}

/*
 * The fast paths: the most recent entry is rw's, and is a single read
 * hold taken by rdlock_fast, or any other single hold; read holds only
 * while no hold is outstanding that another thread released on its
 * reader's behalf.  Or the lock names the caller as its writer (a
 * process-shared lock's glibc id included: unlock_write_named tells).
 * held_tls.self is -1 until asked, which no lock names.
 */
EXPORT int pthread_rwlock_unlock(pthread_rwlock_t *rw)
{
	struct held *h;

	forget_nonnull(rw);
	h = held_top_of(rw);

	if (h) {
		if (h->state == HELD_STATE(HELD_READ | HELD_FAST, 0) && !handoff_any()) {
			uintptr_t data = h->data;

			held_pop();
			variant_read_fast_unlock(data);
			return 0;
		}
		if (h->state == HELD_STATE(HELD_READ, 0) && !handoff_any())
			return unlock_read_single(rw, h->data);
	} else if (rw != NULL && handle_writer(rw) == held_tls.self) {
		return unlock_write_named(rw);
	}
	return unlock_slow(rw, CALLER);
}

/*
 * Unlock by a thread with no entry for rw and no write hold of it: one of
 * its unlisted holds (held.h) if it has any and rw has a hold of the kind
 * -- a guest read while its writer waits, or a read of the plain class,
 * which is released as an entry of that class would be (a hold of the
 * class released on its reader's behalf is taken as ours) -- else an
 * unlock on another thread's behalf.
 */
static int unlock_unlisted(pthread_rwlock_t *rw, const void *caller)
{
	struct held_list *l = &held_tls;

	if (atomic_load_explicit(&l->unlisted_guests, memory_order_relaxed) &&
	    atomic_load_explicit(&wait_writer_pending, memory_order_relaxed)) {
		atomic_fetch_sub_explicit(&l->unlisted_guests, 1, memory_order_relaxed);
		return 0;
	}
	if (!atomic_load_explicit(&l->unlisted, memory_order_relaxed) ||
	    !variant_read_held_class(rw, 0) || !held_unlisted_take())
		return unlock_unheld(rw, caller);
	if (handoff_any() && handoff_take(rw, 0, handle_life(rw)))
		release_for_other(rw);
	else
		variant_read_unlock(rw, 0);
	return 0;
}

/*
 * The hold of the caller's entry just removed (data): released, or, if a
 * hold of its class was released on its reader's behalf, counted as that
 * one, and another released in its place.
 */
static void unlock_entry(pthread_rwlock_t *rw, uintptr_t data, void *target)
{
	if (handoff_any() && handoff_take(rw, variant_hold_class(rw, data), handle_life(rw))) {
		variant_read_forget(rw, data);
		release_for_other(rw);
	} else {
		variant_read_unlock_at(target, rw, data);
	}
}

static int unlock_slow(pthread_rwlock_t *rw, const void *caller)
{
	struct held *h;
	uintptr_t data = 0;
	void *target = NULL;
	int r;

	if (null_ptr(rw))
		return stats_error(EINVAL);
	if (handle_is_pshared(rw))
		return real()->unlock(rw);
	held_pin(); /* h stays where it is (held.h) */
	h = held_find(rw);
	if (h && held_stale(rw, h))
		h = NULL;
	if (h && h->reentries > 0) {
		h->reentries--;
		held_unpin();
		return 0;
	}
	if (h) {
		/* Off the list before the lock is released (see the top of the file). */
		data = h->data;
		target = variant_read_unlock_target(rw, data);
		held_remove(h);
	}
	held_unpin();
	if (h) {
		unlock_entry(rw, data, target);
		return 0;
	}
	if (write_held_by_self(rw, true)) {
		r = unlock_write_named(rw);
		profile_release(rw); /* after the release: its clock read is not in the critical section */
		return r;
	}
	return unlock_unlisted(rw, caller);
}
