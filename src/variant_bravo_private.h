/*
 * variant_bravo_private.h - BRAVO-BA with a private visible readers table
 * per lock: the "ideal" BRAVO-BA of the paper's figure 1 (section 5.1),
 * immune to collisions between locks in the shared table, at a footprint
 * of tens of KiB per lock.  For benchmarks only (bench/interference):
 * built by make as src/.libs/libbravo-bravo-ba-private.so, never
 * installed, not a --with-lock choice, unknown to the launcher.
 *
 * The same generic BRAVO wrapper (locks/bravo.h) over BA, compiled with
 * -DLIBBRAVO_BRAVO_PRIVATE_TABLE, which makes bravo_table_of() find the
 * table right after the lock's BRAVO word instead of loading the global
 * one.  Each lock is a heap block (heap_handle.h, as Cohort-RW and
 * Per-CPU), attached on first use:
 *
 *   offset   0   the BRAVO word, then the BA lock (one sector, as the two
 *                share the 56-byte handle in BRAVO-BA)
 *   offset 128   struct vr_table: mask on its own sector, then the slots
 *                (as many as the shared table would have: BRAVO_TABLE_SIZE,
 *                else 64 per CPU and at least 4096)
 */
#ifndef LIBBRAVO_VARIANT_BRAVO_PRIVATE_H
#define LIBBRAVO_VARIANT_BRAVO_PRIVATE_H
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../locks/ba.h"
#include "../locks/bravo.h"
#include "config.h"
#include "handle.h"
#include "heap_handle.h"
#include "stats.h"
#include "under_ba.h"

static const char variant_name[] = "bravo-ba-private";

struct bravo_private_lock {
	struct bravo bravo; /* bravo_table_of(&bravo) is the table below */
	struct ba_lock ba;
	char pad[BRAVO_PRIVATE_TABLE_OFFSET - sizeof(struct bravo) - sizeof(struct ba_lock)];
	struct vr_table table; /* flexible: the slots follow */
};

_Static_assert(offsetof(struct bravo_private_lock, table) == BRAVO_PRIVATE_TABLE_OFFSET,
	       "the table sits where bravo_table_of() looks");

static uint32_t private_slots; /* fixed at load */

static size_t private_size(void)
{
	return sizeof(struct bravo_private_lock) + (size_t)private_slots * sizeof(vr_slot_t);
}

static void private_reset(void *block)
{
	struct bravo_private_lock *l = block;

	memset(l, 0, private_size());
	ba_init(&l->ba);
	vr_table_init_private(&l->table, private_slots);
}

static struct bravo_private_lock *private_of(pthread_rwlock_t *rw)
{
	return handle_block(rw, private_size(), private_reset);
}

static inline void variant_load(void)
{
	if (config.strict || config.stats)
		bravo_enable_bits |= BRAVO_FULL_PATH;
	/* The shared table is not used; making it fixes the size and the epoch. */
	vr_table_init(config.table_slots);
	private_slots = vr_table_slots() ? vr_table_slots() : vr_table_default_slots();
	registry_atfork();
}

static inline const char *variant_detail(void)
{
	static char detail[96];

	snprintf(detail, sizeof(detail), "table=private table_slots=%u slowdown_n=%u lock_bytes=%zu",
		 private_slots, bravo_slowdown_n, private_size());
	return detail;
}

static inline int variant_init(pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
	handle_heap_init(rw, attr);
	return 0;
}

static inline bool variant_is_idle(pthread_rwlock_t *rw)
{
	struct bravo_private_lock *l = handle_held_block(rw);

	return !l || (!bravo_has_fast_readers(&l->bravo, &l->ba) && ba_is_idle(&l->ba));
}

static inline int variant_destroy(pthread_rwlock_t *rw)
{
	if (!variant_is_idle(rw))
		return EBUSY;
	registry_detach(rw, handle_block_slot(rw));
	return 0;
}

/* Benchmarks only: no unlock on another thread's behalf. */
static inline uintptr_t variant_hold_class(uintptr_t data)
{
	return data != 0;
}

static inline void variant_read_forget(pthread_rwlock_t *rw, uintptr_t data)
{
	(void)rw;
	if (data)
		bravo_read_fast_unlock((vr_slot_t *)data);
}

static inline bool variant_read_release_other(pthread_rwlock_t *rw, uintptr_t *data)
{
	(void)rw;
	(void)data;
	return false;
}


/* The read fast path (variant.h): a slot of the lock's own table.
 * Its one pointer load (the handle's block) matches the shared variant's
 * (the global table); the table itself sits at a fixed offset in the block. */
#define VARIANT_READ_FAST 1

static inline bool variant_read_fast(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct bravo_private_lock *l = handle_sealed_block(rw);
	vr_slot_t *slot = l ? bravo_read_fast(&l->bravo, true) : NULL;

	*data = (uintptr_t)slot;
	return slot != NULL;
}


static inline void variant_read_fast_unlock(uintptr_t data)
{
	bravo_read_fast_unlock((vr_slot_t *)data);
}

/* Statistics: a fast read, or a slow one by cause (enum bravo_miss order). */
static void count_read(struct bravo_private_lock *l, uintptr_t slot, uint64_t seen)
{
	stat_add_slow(slot ? STAT_READ_FAST
			   : STAT_SLOW_BIAS_OFF + bravo_miss_cause(&l->bravo, seen), 1);
}

static inline uint64_t seen_word(struct bravo_private_lock *l)
{
	return __builtin_expect(stats_on, 0) ?
	       atomic_load_explicit(&l->bravo.word, memory_order_relaxed) : 0;
}

static inline int variant_read_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	struct bravo_private_lock *l = private_of(rw);
	uint64_t seen;
	int r;

	if (!l)
		return EAGAIN;
	seen = seen_word(l);
	r = bravo_read_lock(&l->bravo, &l->ba, &ba_under_ops, data, dl);
	if (__builtin_expect(stats_on, 0) && r == 0)
		count_read(l, *data, seen);
	return r;
}

static inline int variant_read_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct bravo_private_lock *l = private_of(rw);
	uint64_t seen;

	if (!l)
		return EAGAIN;
	seen = seen_word(l);
	if (!bravo_read_trylock(&l->bravo, &l->ba, &ba_under_ops, data))
		return EBUSY;
	if (__builtin_expect(stats_on, 0))
		count_read(l, *data, seen);
	return 0;
}

static inline void variant_read_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	struct bravo_private_lock *l = handle_held_block(rw);

	bravo_read_unlock(&l->ba, &ba_under_ops, data);
}

static inline int variant_write_lock(pthread_rwlock_t *rw, uintptr_t *data, const struct deadline *dl)
{
	struct bravo_private_lock *l = private_of(rw);

	(void)data;
	if (!l)
		return EAGAIN;
	return bravo_write_lock(&l->bravo, &l->ba, &ba_under_ops, handle_prefers_writers(rw), false, dl);
}

static inline int variant_write_trylock(pthread_rwlock_t *rw, uintptr_t *data)
{
	struct bravo_private_lock *l = private_of(rw);

	(void)data;
	if (!l)
		return EAGAIN;
	return bravo_write_trylock(&l->bravo, &l->ba, &ba_under_ops) ? 0 : EBUSY;
}

static inline void variant_write_unlock(pthread_rwlock_t *rw, uintptr_t data)
{
	struct bravo_private_lock *l = handle_held_block(rw);

	(void)data;
	bravo_write_unlock(&l->ba, &ba_under_ops);
}

#endif
