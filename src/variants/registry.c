/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * registry.c - address-keyed heap blocks (see registry.h).
 *
 * Each shard is a chained hash table that doubles when its load passes 1
 * and halves when it falls below 1/4.  Each entry records the size its
 * block was allocated with, so that a reset never writes past a block.
 */
/* Only the variants with heap blocks (src/variants/NAME.h) need this file. */
#ifdef LIBBRAVO_HEAP_BLOCKS
#include "registry.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "../interpose/addr_hash.h"
#include "../interpose/page_kind.h"
#include "../interpose/pool.h"
#include "../interpose/table_lock.h"

#define REGISTRY_SHARDS 64
#define BLOCK_ALIGN 128

struct entry {
	const void *addr;
	void *block;
	size_t size;               /* what it was allocated for */
	bool (*idle)(void *block); /* the kind's idle test, or NULL */
	struct entry *next;
};

struct shard {
	pthread_mutex_t mutex;
	struct entry **bucket;
	size_t nbuckets;   /* power of two, or 0 */
	size_t nentries;
} __attribute__((aligned(64)));

_Atomic uintptr_t registry_secret;

static struct shard shards[REGISTRY_SHARDS] = {
	[0 ... REGISTRY_SHARDS - 1] = { .mutex = PTHREAD_MUTEX_INITIALIZER },
};

static struct shard *shard_of(const void *addr)
{
	return &shards[addr_hash(addr) % REGISTRY_SHARDS];
}

static struct entry **bucket_of(struct shard *s, const void *addr)
{
	return &s->bucket[(addr_hash(addr) / REGISTRY_SHARDS) & (s->nbuckets - 1)];
}

static struct entry *shard_find(struct shard *s, const void *addr)
{
	if (!s->nbuckets)
		return NULL;
	for (struct entry *e = *bucket_of(s, addr); e; e = e->next)
		if (e->addr == addr)
			return e;
	return NULL;
}

/* Rehash into n buckets; on no memory, chains just get longer. */
static void shard_resize(struct shard *s, size_t n)
{
	struct entry **old = s->bucket;
	size_t oldn = s->nbuckets;
	struct entry **nb = pool_alloc(n * sizeof(*nb));

	if (!nb)
		return;
	s->bucket = nb;
	s->nbuckets = n;
	for (size_t i = 0; i < oldn; i++) {
		for (struct entry *e = old[i], *next; e; e = next) {
			struct entry **b = bucket_of(s, e->addr);

			next = e->next;
			e->next = *b;
			*b = e;
		}
	}
	if (old)
		pool_free(old, oldn * sizeof(*old));
}

static bool shard_insert(struct shard *s, struct entry *e)
{
	struct entry **b;

	if (s->nentries >= s->nbuckets)
		shard_resize(s, s->nbuckets ? s->nbuckets * 2 : 16);
	if (!s->nbuckets)
		return false;
	b = bucket_of(s, e->addr);
	e->next = *b;
	*b = e;
	s->nentries++;
	return true;
}

/* The secret, made on first need: any non-zero value is correct. */
static uintptr_t secret_get(void)
{
	uintptr_t s = atomic_load_explicit(&registry_secret, memory_order_relaxed);
	uintptr_t mine = 0, expected = 0;
	struct timespec ts;

	if (s)
		return s;
	if (getrandom(&mine, sizeof(mine), GRND_NONBLOCK) != (ssize_t)sizeof(mine)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		mine = (uintptr_t)addr_hash((const void *)(uintptr_t)ts.tv_nsec) ^
		       (uintptr_t)addr_hash(&mine) ^ ((uintptr_t)getpid() << 32);
	}
	mine |= 1;
	if (atomic_compare_exchange_strong_explicit(&registry_secret, &expected, mine,
						    memory_order_relaxed, memory_order_relaxed))
		return mine;
	return expected;
}

/* Seal block into *hs (shard mutex held): seal first, then the pointer. */
static void slot_install(const void *addr, struct heap_slot *hs, void *block)
{
	atomic_store_explicit(&hs->seal, registry_seal(addr, block, secret_get()),
			      memory_order_relaxed);
	/* Release: whoever sees the pointer sees the seal and the reset block. */
	atomic_store_explicit(&hs->block, block, memory_order_release);
}

static bool block_idle(const struct entry *e)
{
	return !e->idle || e->idle(e->block);
}

/* Unlink e from s (mutex held); shrink as locks go, so memory follows the live count. */
static void shard_remove(struct shard *s, struct entry *e)
{
	for (struct entry **p = bucket_of(s, e->addr); *p; p = &(*p)->next) {
		if (*p == e) {
			*p = e->next;
			s->nentries--;
			break;
		}
	}
	if (s->nbuckets > 16 && s->nentries < s->nbuckets / 4)
		shard_resize(s, s->nbuckets / 2);
}

/* A block's allocation: whole sectors (the kind's size, rounded up). */
static size_t block_bytes(size_t size)
{
	return (size + BLOCK_ALIGN - 1) & ~(size_t)(BLOCK_ALIGN - 1);
}

static void entry_free(struct entry *e)
{
	pool_free(e->block, block_bytes(e->size));
	pool_free(e, sizeof(*e));
}

/* Mark the lock in place (shard mutex held); no block was sealed in *hs. */
static void mark_inplace(struct heap_slot *hs)
{
	atomic_store_explicit(&hs->seal, REGISTRY_INPLACE_SEAL, memory_order_relaxed);
	/* Release: whoever sees the mark sees the seal. */
	atomic_store_explicit(&hs->block, REGISTRY_INPLACE_BLOCK, memory_order_release);
}

/* Under s's mutex: addr's sealed block, or the remembered one reset and sealed; else NULL. */
static void *attach_known(struct shard *s, const void *addr, struct heap_slot *hs,
			  const struct block_kind *kind, struct entry **dropped)
{
	void *block = registry_block(addr, hs);
	struct entry *e;

	if (block || registry_inplace(hs) || !(e = shard_find(s, addr)))
		return block;
	/* A lock lived here before and was never destroyed. */
	if (e->size == kind->size && block_idle(e)) {
		kind->reset(e->block, kind->param);
		slot_install(addr, hs, e->block);
		return e->block;
	}
	/*
	 * Not the size this lock needs now (built before the topology was
	 * read, say), or someone is still in it: a new block.  Only addr's
	 * handle could reach the old one, and it does not: free it if idle,
	 * else leave it.
	 */
	shard_remove(s, e);
	if (block_idle(e))
		*dropped = e;
	return NULL;
}

static void *attach(const void *addr, struct heap_slot *hs, const struct block_kind *kind)
{
	struct shard *s = shard_of(addr);
	struct entry *fresh, *dropped = NULL;
	bool shared = page_shared(hs);
	struct table_guard g;
	void *block;

	table_lock(&s->mutex, &g);
	block = attach_known(s, addr, hs, kind, &dropped);
	if (!block && shared && !registry_inplace(hs))
		mark_inplace(hs);
	table_unlock(&s->mutex, &g);
	if (dropped)
		entry_free(dropped);
	if (block || registry_inplace(hs))
		return block;

	/* Allocate outside the shard's mutex (the pool has one of its own). */
	fresh = pool_alloc(sizeof(*fresh));
	block = fresh ? pool_alloc(block_bytes(kind->size)) : NULL;
	if (block) {
		kind->reset(block, kind->param);
		*fresh = (struct entry){ addr, block, kind->size, kind->idle, NULL };
	}

	table_lock(&s->mutex, &g);
	if (registry_block(addr, hs) || registry_inplace(hs) || shard_find(s, addr)) {
		/* Lost a race with another first user: take theirs. */
		table_unlock(&s->mutex, &g);
		if (block)
			entry_free(fresh);
		else if (fresh)
			pool_free(fresh, sizeof(*fresh));
		return attach(addr, hs, kind);
	}
	if (!block || !shard_insert(s, fresh)) {
		/* No memory: the lock runs in place for its life. */
		mark_inplace(hs);
		table_unlock(&s->mutex, &g);
		if (block)
			entry_free(fresh);
		else if (fresh)
			pool_free(fresh, sizeof(*fresh));
		return NULL;
	}
	slot_install(addr, hs, block);
	table_unlock(&s->mutex, &g);
	return block;
}

/* One guard for all the tables attach takes (table_lock.h). */
void *registry_attach(const void *addr, struct heap_slot *hs, const struct block_kind *kind)
{
	struct table_guard g;
	void *block;

	table_guard_begin(&g);
	block = attach(addr, hs, kind);
	table_guard_end(&g);
	return block;
}

/*
 * Detached blocks are not freed at once: a thread may still be inside a
 * call on the lock (a waker touching the block after its release, a
 * waiter that raced with destroy).  They wait in a FIFO until newer ones
 * add up to RETIRE_BYTES, and are freed then only if idle (a busy one
 * goes back to the tail).  The list is the only reference left to them.
 */
#define RETIRE_BYTES (256 * 1024)

static pthread_mutex_t retire_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct entry *retire_head, *retire_tail;
static size_t retire_bytes;

static void retire(struct entry *e)
{
	struct entry *due = NULL, **tail = &due;
	struct table_guard g;

	table_lock(&retire_mutex, &g);
	e->next = NULL;
	if (retire_tail)
		retire_tail->next = e;
	else
		retire_head = e;
	retire_tail = e;
	retire_bytes += e->size;
	/* Each block is looked at once per call: a busy one cannot loop us. */
	for (size_t n = 0; retire_bytes > RETIRE_BYTES && retire_head != e && n < 4; n++) {
		struct entry *old = retire_head;

		retire_head = old->next;
		if (block_idle(old)) {
			retire_bytes -= old->size;
			*tail = old;
			tail = &old->next;
			old->next = NULL;
		} else {
			old->next = NULL;
			retire_tail->next = old;
			retire_tail = old;
		}
	}
	table_unlock(&retire_mutex, &g);
	while (due) {
		struct entry *next = due->next;

		entry_free(due);
		due = next;
	}
}

void registry_detach(const void *addr, struct heap_slot *hs)
{
	struct shard *s = shard_of(addr);
	struct entry *e, *dropped = NULL;
	struct table_guard outer, g;
	void *block;

	table_guard_begin(&outer); /* one guard for the shard and the retire list */
	table_lock(&s->mutex, &g);
	block = registry_block(addr, hs);
	e = shard_find(s, addr);
	if (e && (e->block == block || (!block && block_idle(e)))) {
		shard_remove(s, e);
		dropped = e;
	}
	if (block) {
		atomic_store_explicit(&hs->block, NULL, memory_order_relaxed);
		atomic_store_explicit(&hs->seal, 0, memory_order_relaxed);
	}
	table_unlock(&s->mutex, &g);
	if (dropped)
		retire(dropped);
	table_guard_end(&outer);
}

/* Held across fork (only the forking thread runs these): see table_lock.h. */
static struct table_guard fork_guard;

static void registry_lock_all(void)
{
	/* Signals blocked first, then the mutexes (table_lock.h). */
	table_guard_begin(&fork_guard);
	for (int i = 0; i < REGISTRY_SHARDS; i++)
		pthread_mutex_lock(&shards[i].mutex);
	pthread_mutex_lock(&retire_mutex);
}

static void registry_unlock_all(void)
{
	pthread_mutex_unlock(&retire_mutex);
	for (int i = REGISTRY_SHARDS; i-- > 0;)
		pthread_mutex_unlock(&shards[i].mutex);
	table_guard_end(&fork_guard);
}

static void registry_atfork_once(void)
{
	pthread_atfork(registry_lock_all, registry_unlock_all, registry_unlock_all);
}

void registry_atfork(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	/* Twice would lock every shard twice at fork: a deadlock. */
	pthread_once(&once, registry_atfork_once);
}

#endif /* LIBBRAVO_HEAP_BLOCKS */
