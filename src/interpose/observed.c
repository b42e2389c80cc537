/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * observed.c - the acquisition path that is watched: strict mode's
 * misuse reports, the per-lock profile, and its samples of the fast paths.
 *
 * rwlock.c sends a call here (acquire_observed) only while acquire_plain
 * is clear: before the load, in strict mode (BRAVO_CHECK=1) or with the
 * profile (BRAVO_PROFILE=1).  Map of a call:
 *
 *   acquire_observed
 *     process-shared -> pshared_acquire (glibc's, timed if profiled)
 *     profile sampling on -> acquire_sampled (read_sampled, write_sampled:
 *       the paths that do not wait, one in N counted)
 *     strict: a destroyed lock -> misuse (EINVAL and a line)
 *     holds_answer (acquire.h) -> acquire_profiled (tries, then a timed
 *       wait) or take (acquire.h)
 *
 * Unlocks are not routed here: a profiled write hold is marked in the lock
 * (profile_mark_writer) and its timing ends in rwlock.c's unlock_slow, or,
 * for a lock in glibc's bytes, in unlock_glibc_profiled.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../diag/message.h"
#include "../diag/profile.h"
#include "../diag/stats.h"
#include "acquire.h"
#include "config.h"
#include "handle.h"
#include "held.h"
#include "real.h"


/* ---- strict mode's reports ---- */

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

int misuse(int err, const char *call, const void *rw, const char *what, const void *caller)
{
	report_strict(call, rw, what, caller);
	return stats_error(err);
}

/* ---- the profile (profile.h): on the observed path only ---- */

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
void profile_load(void)
{
	profile_start(variant_name, variant_has_bias);
	if (!profile_on)
		return;
	glibc_unlock = real_rwlock.unlock;
	real_rwlock.unlock = unlock_glibc_profiled;
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

/* ---- process-shared locks: glibc's, timed with the profile ---- */

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

/* ---- the full path with the profile ---- */

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

/* The fast paths are sampled (the profile's): acquire_observed takes them. */
static inline bool fast_paths_sampled(void)
{
	return atomic_load_explicit(&fast_paths, memory_order_acquire) == FAST_PATHS_SAMPLED;
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
 * does not sample the same one every time.  A thread's first gap is
 * uniform in [0, N - 1], each thread seeded apart: each of its first N
 * fast acquisitions is the sample with probability 1/N, so threads that
 * make only a few are not each counted as N.  A sample that could not be
 * taken fast stays due: the next fast acquisition is the sample, so the
 * estimate of the fast acquisitions stays unbiased.  A signal handler's
 * acquisitions in between only move the sample.
 */
#ifdef SAMPLED_FAST_PATHS
enum sample_mode { SAMPLE_READ, SAMPLE_WRITE };

static __thread uint32_t sample_gap[2] __attribute__((tls_model("initial-exec")));
static __thread uint64_t sample_rng __attribute__((tls_model("initial-exec"))); /* 0: not started */
/* Threads started, for their seeds (relaxed: only a distinct number is wanted). */
static atomic_uint_fast64_t sample_threads;

static uint32_t sample_random(uint32_t bound)
{
	sample_rng = sample_rng * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
	return (uint32_t)((sample_rng >> 33) % bound);
}

/* The thread's first gaps, uniform in [0, N - 1]. */
static __attribute__((noinline)) void sample_start(void)
{
	uint64_t k = atomic_fetch_add_explicit(&sample_threads, 1, memory_order_relaxed);

	sample_rng = ((k + 1) * UINT64_C(0x9e3779b97f4a7c15)) ^ (uintptr_t)&sample_rng;
	sample_rng |= 1;
	sample_gap[SAMPLE_READ] = sample_random(config.profile_sample);
	sample_gap[SAMPLE_WRITE] = sample_random(config.profile_sample);
}

/*
 * Is this thread's next fast acquisition in mode m the sample?  A gap of
 * 0 is also a thread's state before its first sample_start, so only that
 * case looks at whether the thread has started.
 */
static inline bool sample_due(enum sample_mode m)
{
	if (__builtin_expect(sample_gap[m] != 0, 1))
		return false;
	if (__builtin_expect(sample_rng == 0, 0)) {
		sample_start();
		return sample_gap[m] == 0;
	}
	return true;
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
	sample_gap[m] = sample_random(2 * config.profile_sample - 1);
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
	/*
	 * A hold of the lock underneath that it answers for is not listed
	 * (acquire.h): the sampled paths run only outside strict mode.
	 */
	if (hold_unlisted_by_design(data))
		hold_under_unlisted(rw);
	else if (__builtin_expect(!held_push_fast(rw, entry, data), 0)) {
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
int acquire_observed(pthread_rwlock_t *rw, enum held_mode mode,
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
	r = holds_answer(rw, mode, try, dl);
	if (r >= 0)
		return stats_error(r);
	if (profile_on)
		return stats_error(acquire_profiled(rw, mode, try, dl, caller));
	return take(rw, mode, try, dl);
}
