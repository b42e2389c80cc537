/*
 * held.c - growth and thread-exit cleanup of the held-lock list (held.h).
 */
#include "held.h"

#include <errno.h>
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

/* Free the arrays that growth replaced. */
static void held_free_retired(struct held_list *l)
{
	struct held_spill *r = l->retired;

	l->retired = NULL;
	while (r) {
		struct held_spill *next = r->retired_next;

		free(r);
		r = next;
	}
}

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
		l->n = 0;
	}
	free(spill);
	held_free_retired(l);
}

static void held_key_create(void)
{
	held_key_ok = pthread_key_create(&held_key, held_free_spill) == 0;
}

struct held *held_grow(void)
{
	struct held_list *l = &held_tls;
	uint32_t cap = l->spill ? l->spill->cap * 2 : HELD_INLINE * 4;
	struct held_spill *spill;

	int saved_errno = errno; /* malloc may set it; glibc's calls never do */

	pthread_once(&held_key_once, held_key_create);
	if (!held_key_ok)
		return NULL;
	spill = malloc(sizeof(*spill) + cap * sizeof(spill->e[0]));
	errno = saved_errno;
	if (!spill)
		return NULL;
	spill->cap = cap;
	spill->retired_next = NULL;
	memcpy(spill->e, held_entries(l), l->n * sizeof(spill->e[0]));
	if (pthread_setspecific(held_key, spill) != 0) {
		free(spill);
		return NULL;
	}
	if (l->spill) {
		/*
		 * Not freed yet: this may run in a signal handler that interrupted
		 * a lookup in the old array.  Growth doubles, so the retired
		 * arrays add up to less than the live one.
		 */
		l->spill->retired_next = l->retired;
		l->retired = l->spill;
	}
	/* The copy is complete before a handler can see the new array. */
	atomic_signal_fence(memory_order_release);
	l->spill = spill;
	return spill->e;
}

void held_filter(bool (*keep)(const void *lock))
{
	struct held_list *l = &held_tls;
	struct held *e = held_entries(l);

	for (uint32_t i = l->n; i-- > 0;)
		if (!keep(e[i].lock))
			held_remove(&e[i]);
}
