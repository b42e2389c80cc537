/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * profile.h - the per-lock contention profile (BRAVO_PROFILE=1, or
 * BRAVO_PROFILE_FILE=PATH): which locks carry the contention, where the
 * program made them, and how each behaved under this variant.
 *
 * Off by default, and then nothing here runs: rwlock.c calls these only
 * where profile_on is set, and the inline fast paths never see it.  With
 * the profile on, rwlock.c takes the acquisitions that do not wait out of
 * line and counts one in config.profile_sample of them (the sample) as
 * that many (acquire_sampled); every other acquisition
 * takes the full path and is counted exactly.  BRAVO_PROFILE_SAMPLE=1, or
 * statistics, keep every call on the full path.
 *
 * One record per lock life, keyed by the lock's address: made by
 * pthread_rwlock_init or by the first counted use of an address that has
 * none (static initializers), with the caller of that call as the lock's
 * site.
 * A destroy ends the life (the record stays, marked destroyed); an init of
 * an address that has a record, or a use after its destroy, starts the
 * next generation, and the old record stays.  At most
 * config.profile_locks records: when they are all taken, the least
 * acquired are evicted (their counts kept together in one row).
 *
 * What a record counts (rwlock.c calls in, from the full path or with a
 * sample): read and write acquisitions (not read re-entries), each read's
 * class (a read through BRAVO's table, or a slow read by cause; nothing
 * under a variant without BRAVO, or for a process-shared lock), the waits
 * (a blocking call whose try-lock failed, timed with CLOCK_MONOTONIC
 * around the blocking call only), BRAVO's revocations made while
 * acquiring it, and write holds (from the write acquisition to its
 * unlock, through the thread's open holds below).
 *
 * Concurrency: records are shared by every thread.  The hot counters
 * (acquisitions and read classes) are split in per-CPU shards of one cache
 * line each, bumped with relaxed atomic adds; the rest (waits,
 * revocations, maxima) only move on contended paths and live in the
 * record's head, with relaxed adds and CAS loops for the maxima.  Relaxed
 * is enough: the counts are only summed at exit, ordered with nothing.
 * Records are found through an open-addressing index read without a lock
 * (see profile.c for the publication order); they are made under one
 * pthread_mutex (never an rwlock: ours are interposed), taken with every
 * signal blocked and held across fork.
 */
#ifndef LIBBRAVO_PROFILE_H
#define LIBBRAVO_PROFILE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "../../locks/hidden.h"

/* BRAVO_PROFILE_SORT: what makes a lock busy (config_profile_sort_names). */
enum profile_sort {
	PROFILE_SORT_WAIT,         /* readers' and writers' time waited */
	PROFILE_SORT_ACQUISITIONS, /* reads + writes */
	PROFILE_SORT_SLOW_READS,   /* BRAVO's slow reads */
	PROFILE_SORT_REVOCATIONS,
	PROFILE_SORT_WRITER_SHARE, /* writes / (reads + writes) */
};

enum profile_kind { PROFILE_KIND_DEFAULT, PROFILE_KIND_WRITER_PREF, PROFILE_KIND_PSHARED };

/*
 * How a read was taken: through BRAVO's table, slowly for one of BRAVO's
 * causes (enum bravo_miss order), or neither (a variant without BRAVO, a
 * process-shared lock).
 */
enum profile_read {
	PROFILE_READ_FAST,
	PROFILE_READ_SLOW, /* + enum bravo_miss */
	PROFILE_READ_NA = PROFILE_READ_SLOW + 5,
};

struct profile_lock;

/* The start of a record that the lock paths read inline. */
struct profile_lock_head {
	_Atomic uint32_t seq; /* the life the record is in: a new one when it is reused */
};

/* p's life now: compare with an earlier answer to see p evicted and reused. */
static inline uint32_t profile_life(const struct profile_lock *p)
{
	return atomic_load_explicit(&((const struct profile_lock_head *)(const void *)p)->seq,
				    memory_order_relaxed);
}

extern bool profile_on LIBBRAVO_HIDDEN;

/*
 * Turn the profile on (at load): variant names the report, bias says the
 * variant has BRAVO (else its columns are not applicable).  Chains to the
 * revocation hook already set (statistics), so both see every revocation.
 */
void profile_start(const char *variant, bool bias);

/* A lock (re)initialized by caller: a new record, the next generation. */
void profile_lock_init(const void *lock, enum profile_kind kind, const void *caller);
/* A lock destroyed: its record's life ends (the record stays). */
void profile_lock_destroy(const void *lock);
/*
 * The record of the lock's current life, made (caller, kind) if it has
 * none, its last one was destroyed, or its record was evicted.  Never
 * NULL.
 */
struct profile_lock *profile_lock_of(const void *lock, enum profile_kind kind,
				     const void *caller);

/* Revocations made while acquiring a lock, before its record is looked up. */
struct profile_pending {
	const void *lock;
	uint64_t revocations, revocation_ns;
};

/*
 * Around the algorithm's calls of one acquisition of lock: revocations
 * made in between are the lock's, given to its record p by
 * profile_leave.  outer keeps what the thread had pending (a signal
 * handler's acquisition nests) and gets it back.  A handler may run
 * anywhere in between: it saves and restores the whole struct, and the
 * signal fences keep the compiler from moving the stores across it.
 */
extern __thread struct profile_pending profile_current
	__attribute__((tls_model("initial-exec"))) LIBBRAVO_HIDDEN;
void profile_revocations_add(struct profile_lock *p, uint64_t n, uint64_t ns);

static inline void profile_enter(struct profile_pending *outer, const void *lock)
{
	*outer = profile_current;
	atomic_signal_fence(memory_order_seq_cst);
	profile_current = (struct profile_pending){ .lock = lock };
	atomic_signal_fence(memory_order_seq_cst);
}

static inline void profile_leave(const struct profile_pending *outer, struct profile_lock *p)
{
	struct profile_pending mine = profile_current;

	atomic_signal_fence(memory_order_seq_cst);
	profile_current = *outer;
	atomic_signal_fence(memory_order_seq_cst);
	if (__builtin_expect(mine.revocations != 0, 0))
		profile_revocations_add(p, mine.revocations, mine.revocation_ns);
}

uint64_t profile_clock_ns(void);
/* A blocking call that had to wait, for ns (write: a writer's wait). */
void profile_waited(struct profile_lock *p, bool write, uint64_t ns);
/*
 * An acquisition: a read of class how, or a write (whose hold began at
 * start), counted as n (a sample counts for the acquisitions it stands for).
 */
void profile_read(struct profile_lock *p, enum profile_read how, uint64_t n);
void profile_write(struct profile_lock *p, const void *lock, uint64_t start, uint64_t n);
/*
 * The acquisition that looked p up has counted what it had to: a record
 * its lookup made may now be evicted.  profile_read and profile_write do
 * it; a failed acquisition calls it.
 */
void profile_counted(struct profile_lock *p);
/*
 * This thread releases its write hold of lock, if it has one open: the
 * hold ends.  Nothing if it has none (a read unlock, a hold taken before
 * the profile, a second call for the same unlock).
 */
void profile_write_release(const void *lock);
/* True if this thread has write holds open (cheap; a TLS load). */
bool profile_holds_open(void);

#endif
