/*
 * variant_bravo.c - BRAVO-BA and BRAVO-pthread: the generic BRAVO wrapper
 * (locks/bravo.h) over an underlying lock chosen at build time.
 *
 *   LIBBRAVO_UNDER_BA       BA inline at offset 0 of the handle
 *   LIBBRAVO_UNDER_PTHREAD  glibc's own rwlock, the whole handle, in place
 *
 * The BRAVO word lives in the handle's __pad2 either way, so neither variant
 * allocates.  The underlying ops are constant and the wrapper is inlined,
 * so the compiler calls them directly.
 */
#ifndef LIBBRAVO_VARIANT_BRAVO_H
#define LIBBRAVO_VARIANT_BRAVO_H
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../locks/ba.h"
#include "../locks/bravo.h"
#include "config.h"
#include "handle.h"
#include "real.h"
#include "stats.h"

#if defined(LIBBRAVO_UNDER_BA)

static const char variant_name[] = "bravo-ba";

_Static_assert(sizeof(struct ba_lock) <= offsetof(pthread_rwlock_t, __data.__pad3),
	       "BA fits before the handle's marker");

static int under_read_lock(void *u, const struct deadline *dl)
{
	return ba_read_lock(u, dl);
}

static bool under_read_trylock(void *u)
{
	return ba_read_trylock(u);
}

static void under_read_unlock(void *u)
{
	ba_read_unlock(u);
}

static int under_write_lock(void *u, const struct deadline *dl)
{
	return ba_write_lock(u, dl);
}

static bool under_write_trylock(void *u)
{
	return ba_write_trylock(u);
}

static void under_write_unlock(void *u)
{
	ba_write_unlock(u);
}

static bool under_idle(pthread_rwlock_t *rw)
{
	return ba_is_idle((struct ba_lock *)(void *)rw);
}

/*
 * BA is phase-fair already: a waiting writer holds off new slow readers,
 * and fast readers that slip in before its revocation only lengthen the
 * current reader phase.  A program that asks for the writer-preferring kind
 * gets the fast path shut while a writer waits as well, as under
 * BRAVO-pthread.
 */
static bool writer_pref(pthread_rwlock_t *rw)
{
	return handle_prefers_writers(rw);
}

static inline int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	int kind = PTHREAD_RWLOCK_DEFAULT_NP;

	if (attr)
		pthread_rwlockattr_getkind_np(attr, &kind);
	memset(rw, 0, sizeof(*rw));
	rw->__data.__flags = (unsigned)kind;
	return 0;
}

#elif defined(LIBBRAVO_UNDER_PTHREAD)

static const char variant_name[] = "bravo-pthread";

static int under_read_lock(void *u, const struct deadline *dl)
{
	int r;

	do {
		r = dl && dl->abstime ? real()->clockrdlock(u, dl->clock, dl->abstime)
				      : real()->rdlock(u);
	} while (r == EAGAIN); /* glibc's reader count overflowed: wait */
	return r;
}

static bool under_read_trylock(void *u)
{
	return real()->tryrdlock(u) == 0;
}

static void under_read_unlock(void *u)
{
	real()->unlock(u);
}

static int under_write_lock(void *u, const struct deadline *dl)
{
	return dl && dl->abstime ? real()->clockwrlock(u, dl->clock, dl->abstime)
				 : real()->wrlock(u);
}

static bool under_write_trylock(void *u)
{
	return real()->trywrlock(u) == 0;
}

static void under_write_unlock(void *u)
{
	real()->unlock(u);
}

static bool under_idle(pthread_rwlock_t *rw)
{
	if (real()->trywrlock(rw) != 0)
		return false;
	real()->unlock(rw);
	return true;
}

/* glibc's writer-preferring kind: keep fast readers out while writers wait. */
static bool writer_pref(pthread_rwlock_t *rw)
{
	return handle_prefers_writers(rw);
}

static inline int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	return real()->init(rw, attr); /* zeroes the BRAVO word and the marker */
}

#else
#error "variant_bravo.c needs LIBBRAVO_UNDER_BA or LIBBRAVO_UNDER_PTHREAD"
#endif

static const struct rw_ops under_ops = {
	.read_lock = under_read_lock,
	.read_trylock = under_read_trylock,
	.read_unlock = under_read_unlock,
	.write_lock = under_write_lock,
	.write_trylock = under_write_trylock,
	.write_unlock = under_write_unlock,
};

static inline void variant_load(void)
{
	vr_table_init(config.table_slots);
}

static inline const char *variant_detail(void)
{
	static char detail[64];

	snprintf(detail, sizeof(detail), "table_slots=%u slowdown_n=%u",
		 vr_table_slots(), bravo_slowdown_n);
	return detail;
}

static inline int variant_destroy(pthread_rwlock_t *rw)
{
	if (bravo_has_fast_readers(handle_bravo(rw), rw) || !under_idle(rw))
		return EBUSY;
	return 0;
}

/* Statistics: a fast read, or a slow one by cause (enum bravo_miss order). */
static void count_read(pthread_rwlock_t *rw, uintptr_t slot, uint64_t seen)
{
	stat_add_slow(slot ? STAT_READ_FAST : STAT_SLOW_BIAS_OFF + bravo_miss_cause(seen, rw), 1);
}

/* The lock word as a reader finds it, only when statistics want it. */
static inline uint64_t seen_word(pthread_rwlock_t *rw)
{
	return __builtin_expect(stats_on, 0) ?
	       atomic_load_explicit(&handle_bravo(rw)->word, memory_order_relaxed) : 0;
}

static inline int variant_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	uint64_t seen = seen_word(rw);
	int r = bravo_read_lock(handle_bravo(rw), rw, &under_ops, data, dl);

	if (__builtin_expect(stats_on, 0) && r == 0)
		count_read(rw, *data, seen);
	return r;
}

static inline int variant_read_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	uint64_t seen = seen_word(rw);

	if (!bravo_read_trylock(handle_bravo(rw), rw, &under_ops, data))
		return EBUSY;
	if (__builtin_expect(stats_on, 0))
		count_read(rw, *data, seen);
	return 0;
}

static inline void variant_read_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	bravo_read_unlock(rw, &under_ops, data);
}

static inline int variant_write_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	(void)data;
	return bravo_write_lock(handle_bravo(rw), rw, &under_ops, writer_pref(rw), dl);
}

static inline int variant_write_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)data;
	return bravo_write_trylock(handle_bravo(rw), rw, &under_ops) ? 0 : EBUSY;
}

static inline void variant_write_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)data;
	bravo_write_unlock(rw, &under_ops);
}

#endif
