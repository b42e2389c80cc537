/*
 * registry.c - address-keyed heap blocks (see registry.h).
 *
 * Each shard is a chained hash table that doubles when its load passes 1
 * and halves when it falls below 1/4.
 */
#include "registry.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define REGISTRY_SHARDS 64
#define BLOCK_ALIGN 128

struct entry {
	const void *addr;
	void *block;
	struct entry *next;
};

struct shard {
	pthread_mutex_t mutex;
	struct entry **bucket;
	size_t nbuckets;   /* power of two, or 0 */
	size_t nentries;
} __attribute__((aligned(64)));

static struct shard shards[REGISTRY_SHARDS] = {
	[0 ... REGISTRY_SHARDS - 1] = { .mutex = PTHREAD_MUTEX_INITIALIZER },
};

static size_t addr_hash(const void *addr)
{
	uint64_t z = (uint64_t)(uintptr_t)addr;

	z = (z ^ (z >> 33)) * UINT64_C(0xff51afd7ed558ccd);
	z ^= z >> 33;
	return (size_t)z;
}

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
	struct entry **nb = calloc(n, sizeof(*nb));

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
	free(old);
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

void *registry_attach(const void *addr, void *_Atomic *slot, size_t size, block_reset_fn reset)
{
	struct shard *s = shard_of(addr);
	struct entry *e, *fresh;
	void *block;

	pthread_mutex_lock(&s->mutex);
	block = atomic_load_explicit(slot, memory_order_acquire);
	if (!block && (e = shard_find(s, addr))) {
		/* A lock lived here before and was never destroyed: reuse. */
		block = e->block;
		reset(block);
		/* Release: the reset block is seen by whoever sees the pointer. */
		atomic_store_explicit(slot, block, memory_order_release);
	}
	pthread_mutex_unlock(&s->mutex);
	if (block)
		return block;

	/* Allocate outside the shard lock: the allocator may take locks too. */
	fresh = malloc(sizeof(*fresh));
	block = NULL;
	if (fresh && posix_memalign(&block, BLOCK_ALIGN, (size + BLOCK_ALIGN - 1) & ~(size_t)(BLOCK_ALIGN - 1)))
		block = NULL;
	if (!block) {
		free(fresh);
		return NULL;
	}
	reset(block);
	fresh->addr = addr;
	fresh->block = block;

	pthread_mutex_lock(&s->mutex);
	if (atomic_load_explicit(slot, memory_order_acquire) || shard_find(s, addr)) {
		/* Lost a race with another first user: take theirs. */
		pthread_mutex_unlock(&s->mutex);
		free(block);
		free(fresh);
		return registry_attach(addr, slot, size, reset);
	}
	if (!shard_insert(s, fresh)) {
		pthread_mutex_unlock(&s->mutex);
		free(block);
		free(fresh);
		return NULL;
	}
	atomic_store_explicit(slot, block, memory_order_release);
	pthread_mutex_unlock(&s->mutex);
	return block;
}

void registry_detach(const void *addr, void *_Atomic *slot)
{
	struct shard *s = shard_of(addr);
	struct entry *e = NULL;

	pthread_mutex_lock(&s->mutex);
	if (s->nbuckets) {
		for (struct entry **p = bucket_of(s, addr); *p; p = &(*p)->next) {
			if ((*p)->addr == addr) {
				e = *p;
				*p = e->next;
				s->nentries--;
				break;
			}
		}
		/* Shrink as locks go, so memory follows the live count. */
		if (s->nbuckets > 16 && s->nentries < s->nbuckets / 4)
			shard_resize(s, s->nbuckets / 2);
	}
	atomic_store_explicit(slot, NULL, memory_order_relaxed);
	pthread_mutex_unlock(&s->mutex);
	if (e) {
		free(e->block);
		free(e);
	}
}

static void registry_lock_all(void)
{
	for (int i = 0; i < REGISTRY_SHARDS; i++)
		pthread_mutex_lock(&shards[i].mutex);
}

static void registry_unlock_all(void)
{
	for (int i = REGISTRY_SHARDS; i-- > 0;)
		pthread_mutex_unlock(&shards[i].mutex);
}

void registry_atfork(void)
{
	pthread_atfork(registry_lock_all, registry_unlock_all, registry_unlock_all);
}
