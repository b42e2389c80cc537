/*
 * held.c - growth and thread-exit cleanup of the held-lock list (held.h).
 */
#include "held.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

__thread struct held_list held_tls __attribute__((tls_model("initial-exec")));

static pthread_key_t held_key;
static pthread_once_t held_key_once = PTHREAD_ONCE_INIT;
static int held_key_ok;

/* Rounds of thread-specific data destructors seen by held_free_spill. */
static __thread unsigned held_exit_rounds;

/*
 * Thread exit: free the spill array (locks still held stay held).
 *
 * Other thread-specific data destructors may still unlock locks this
 * thread holds, and they run in key order, perhaps after this one: while
 * the list is not empty, hand the array back, so it is kept for the next
 * round, up to the last round glibc runs (PTHREAD_DESTRUCTOR_ITERATIONS).
 * Freeing it at once made such unlocks fail with EPERM and left the locks
 * held (found by tests/torture/cancel_exit).
 */
static void held_free_spill(void *spill)
{
	struct held_list *l = &held_tls;

	if (l->spill == spill && l->n > 0 &&
	    ++held_exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS &&
	    pthread_setspecific(held_key, spill) == 0)
		return;
	if (l->spill == spill) {
		l->spill = NULL;
		l->cap = 0;
		l->n = 0;
	}
	free(spill);
}

static void held_key_create(void)
{
	held_key_ok = pthread_key_create(&held_key, held_free_spill) == 0;
}

struct held *held_grow(void)
{
	struct held_list *l = &held_tls;
	uint32_t cap = l->spill ? l->cap * 2 : HELD_INLINE * 4;
	struct held *spill;

	pthread_once(&held_key_once, held_key_create);
	if (!held_key_ok)
		return NULL;
	spill = malloc(cap * sizeof(*spill));
	if (!spill)
		return NULL;
	memcpy(spill, held_entries(l), l->n * sizeof(*spill));
	if (pthread_setspecific(held_key, spill) != 0) {
		free(spill);
		return NULL;
	}
	free(l->spill);
	l->spill = spill;
	l->cap = cap;
	return spill;
}

void held_filter(bool (*keep)(const void *lock))
{
	struct held_list *l = &held_tls;
	struct held *e = held_entries(l);

	for (uint32_t i = l->n; i-- > 0;)
		if (!keep(e[i].lock))
			held_remove(&e[i]);
}
