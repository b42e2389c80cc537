/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stats.h - optional statistics (BRAVO_STATS=1, or BRAVO_STATS_FILE=PATH).
 *
 * Counted per thread in TLS (no shared cache line on any lock path), merged
 * into process totals when a thread exits, and printed at process exit as
 * one "libbravo.KEY=VALUE" line each.  When statistics are off, a counting
 * site costs one load and a not-taken branch on a read-only flag.
 */
#ifndef LIBBRAVO_STATS_H
#define LIBBRAVO_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../locks/hidden.h"

/* Buckets of the revocation-time histogram (rev_hist_bucket below). */
#define REV_HIST_BUCKETS 304

/*
 * Counters only BRAVO's paths move come in two runs, STAT_READ_FAST ..
 * STAT_SLOW_LOST_RACE and STAT_REVOCATIONS .. STAT_POLICY_PAID: stats.c
 * leaves them out of other variants' reports.
 */
enum stats_counter {
	STAT_READS,             /* read acquisitions (not re-entries) */
	STAT_READ_FAST,         /* ... through the visible readers table */
	STAT_SLOW_BIAS_OFF,     /* BRAVO slow reads, by cause (bravo.h) */
	STAT_SLOW_INHIBITED,
	STAT_SLOW_WRITER_WAITING,
	STAT_SLOW_COLLISION,
	STAT_SLOW_LOST_RACE,
	STAT_WRITES,            /* write acquisitions */
	STAT_READ_REENTRIES,    /* reads of a lock the thread already read */
	STAT_REVOCATIONS,
	STAT_REVOCATION_NS,
	STAT_REVOCATION_MAX_NS, /* merged as a maximum */
	STAT_REVOCATION_NO_SCAN, /* revocations that skipped the scan (no fast reader since) */
	STAT_SLOTS_SCANNED,     /* table slots read by revocations and drains */
	STAT_BIAS_ENABLED,      /* slow readers that set RBias */
	STAT_POLICY_STRIKES,    /* adaptive policy: revocations bias did not pay for */
	STAT_POLICY_PAID,       /* adaptive policy: strikes halved after bias paid */
	STAT_WAIT_NS,           /* asleep on a futex or yielding */
	STAT_WAITS,             /* futex sleeps and yields (after the spin) */
	STAT_ERR_EDEADLK,       /* error returns, by errno */
	STAT_ERR_EBUSY,
	STAT_ERR_EPERM,
	STAT_ERR_EINVAL,
	STAT_ERR_ETIMEDOUT,
	STAT_ERR_EAGAIN,
	/* Revocation times, a histogram (rev_hist_bucket; not printed). */
	STAT_REVOCATION_HIST,
	STAT_COUNT = STAT_REVOCATION_HIST + REV_HIST_BUCKETS
};

/*
 * The revocation-time histogram is log-linear: below 16 ns one bucket per
 * nanosecond, then eight buckets per power of two, [2^k, 2^(k+1)) cut in
 * eighths.  A bucket's middle is within 6.25% of every time in it, so a
 * median read from it can be held against a target such as 300 ns (256
 * to 287 and 288 to 319 are two buckets; whole powers of two would put 256
 * to 511 in one).  Times of 2^40 ns (18 minutes) and more share the last
 * bucket.
 */
static inline unsigned rev_hist_bucket(uint64_t ns)
{
	unsigned k;

	if (ns < 8)
		return (unsigned)ns;
	k = 63u - (unsigned)__builtin_clzll(ns); /* 2^k <= ns, k >= 3 */
	if (k >= 40)
		return REV_HIST_BUCKETS - 1;
	return 8 * (k - 2) + (unsigned)(ns >> (k - 3) & 7);
}

/* The middle of bucket i, in ns (exact while buckets are 1 ns wide). */
static inline uint64_t rev_hist_middle(unsigned i)
{
	unsigned k = i / 8 + 2, eighth = i % 8;

	if (i < 16)
		return i;
	return ((uint64_t)(8 + eighth) << (k - 3)) + (UINT64_C(1) << (k - 3)) / 2;
}

extern bool stats_on LIBBRAVO_HIDDEN;

void stats_add_slow(enum stats_counter s, uint64_t n);

static inline void stats_add(enum stats_counter s, uint64_t n)
{
	if (__builtin_expect(stats_on, 0))
		stats_add_slow(s, n);
}

/* Count an error return (0 is not counted); returns err. */
int stats_error_slow(int err);

static inline int stats_error(int err)
{
	if (__builtin_expect(stats_on, 0) && err)
		return stats_error_slow(err);
	return err;
}

/*
 * Turn statistics on (at load); the report goes to path, or stderr if NULL.
 * The file is opened at exit with O_APPEND|O_CREAT|O_NOFOLLOW|O_NOCTTY, mode
 * 0644 less the umask; if it cannot be, one line on stderr says why and the
 * report is dropped.  The report (and that line) goes to fd 2 only if fd 2
 * is still the file it was at load (message.h).  Neither raises SIGPIPE nor
 * changes errno.  bias: the variant has BRAVO's fast path; without it the
 * BRAVO counters (fast reads, slow reads by cause, revocations, bias and
 * policy) are always 0 and are not printed.
 */
void stats_start(const char *variant, const char *path, bool bias);

/* The totals so far (all threads), for tests. */
void stats_totals(uint64_t out[STAT_COUNT]);

#endif
