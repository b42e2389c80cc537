/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * events.h - what the algorithms tell a listener (libbravo's statistics).
 *
 * Hooks are NULL unless statistics are on; they are only looked at on slow
 * paths (a futex sleep, a revocation), never on a fast path.
 */
#ifndef LIBBRAVO_EVENTS_H
#define LIBBRAVO_EVENTS_H

#include <stdint.h>
#include <time.h>

#include "hidden.h"

/* Time asleep in a futex wait, or yielding while a revocation waits. */
extern void (*lock_event_waited)(uint64_t ns) LIBBRAVO_HIDDEN;
/* A BRAVO revocation (bias cleared, table scanned) and how long it took. */
extern void (*lock_event_revoked)(uint64_t ns) LIBBRAVO_HIDDEN;

/* Counted BRAVO events, for the statistics of revocation and policy. */
enum lock_event {
	LOCK_EV_BIAS_ENABLED,   /* a slow reader set RBias */
	LOCK_EV_REVOKE_NO_SCAN, /* a revocation found no fast reader since: no scan */
	LOCK_EV_SLOTS_SCANNED,  /* table slots read by revocations and drains */
	LOCK_EV_POLICY_STRIKE,  /* adaptive policy: bias did not pay, one more strike */
	LOCK_EV_POLICY_PAID,    /* adaptive policy: bias paid, strikes halved */
	LOCK_EV_KINDS
};
extern void (*lock_event_count)(enum lock_event ev, uint64_t n) LIBBRAVO_HIDDEN;

static inline uint64_t lock_event_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
