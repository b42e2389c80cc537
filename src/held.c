/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * held.c - growth and thread-exit cleanup of the held-lock list (held.h).
 */
#include "held.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* self -1: no id is ever -1, so a lock naming "no writer" (0) is never ours. */
__thread struct held_list held_tls __attribute__((tls_model("initial-exec"))) = { .self = -1 };

static pthread_key_t held_key;
static pthread_once_t held_key_once = PTHREAD_ONCE_INIT;
static int held_key_ok;

/* Rounds of thread-specific data destructors seen by held_free_spill. */
static __thread unsigned held_exit_rounds;

/* Arrays of whole pages from mmap: async-signal-safe, unlike malloc. */
static size_t spill_bytes(uint32_t cap)
{
	return sizeof(struct held_spill) + cap * sizeof(struct held);
}

static struct held_spill *spill_alloc(uint32_t cap)
{
	void *p = mmap(NULL, spill_bytes(cap), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void spill_free(struct held_spill *s)
{
	munmap(s, spill_bytes(s->cap));
}

/* Free the arrays that growth replaced. */
static void held_free_retired(struct held_list *l)
{
	struct held_spill *r = l->retired;

	l->retired = NULL;
	while (r) {
		struct held_spill *next = r->retired_next;

		spill_free(r);
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
 * held (found by tests/stress/cancel_exit).
 */
static void held_free_spill(void *spill)
{
	struct held_list *l = &held_tls;

	if (l->spill == spill && l->used > 0 &&
	    ++held_exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS &&
	    pthread_setspecific(held_key, spill) == 0)
		return;
	if (l->spill == spill) {
		/* A later push starts over in the inline array. */
		l->room = 0;
		l->used = 0;
		atomic_signal_fence(memory_order_release);
		l->base = NULL;
		l->spill = NULL;
	}
	spill_free(spill);
	held_free_retired(l);
}

pid_t held_self_refresh(void)
{
	held_tls.self = gettid(); /* never fails, leaves errno alone */
	return held_tls.self;
}

/*
 * fork(): the forking thread learns its id before (it may have taken write
 * locks without asking for it: glibc records the id itself) and keeps it
 * among the ids of its past, then takes the child's.  A fork without the
 * handlers (_Fork, a raw clone) leaves self stale: the first unlock of a
 * lock that then seems not ours asks the kernel again (rwlock.c).
 */
static void held_before_fork(void)
{
	held_self_refresh();
}

static void held_after_fork_in_child(void)
{
	struct held_list *l = &held_tls;

	memmove(&l->forked_from[1], &l->forked_from[0],
		(HELD_FORK_GENERATIONS - 1) * sizeof(l->forked_from[0]));
	l->forked_from[0] = l->self;
	held_self_refresh();
}

static void held_key_create(void)
{
	held_key_ok = pthread_key_create(&held_key, held_free_spill) == 0;
	pthread_atfork(held_before_fork, NULL, held_after_fork_in_child);
}

void held_init(void)
{
	pthread_once(&held_key_once, held_key_create);
}

struct held *held_grow(void)
{
	struct held_list *l = &held_tls;
	/* A page first (170 entries of 24 bytes after the header), then doubling. */
	uint32_t cap = l->spill ? l->spill->cap * 2
				: (uint32_t)((4096 - sizeof(struct held_spill)) / sizeof(struct held));
	struct held_spill *spill;
	uint32_t n = held_count(l);
	int saved_errno;

	if (!l->base) {
		/* First push (or first since exit cleanup): the inline array. */
		l->base = l->inl;
		atomic_signal_fence(memory_order_release);
		l->room = sizeof(l->inl);
		return l->base;
	}
	saved_errno = errno; /* mmap may set it; glibc's calls never do */

	held_init();
	if (!held_key_ok)
		return NULL;
	spill = spill_alloc(cap);
	errno = saved_errno;
	if (!spill)
		return NULL;
	spill->cap = cap;
	spill->retired_next = NULL;
	memcpy(spill->e, l->base, n * sizeof(spill->e[0]));
	if (pthread_setspecific(held_key, spill) != 0) {
		spill_free(spill);
		errno = saved_errno;
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
	/*
	 * The copy is complete before a handler can see the new array, and
	 * room grows last: a handler never sees room the array lacks.
	 */
	atomic_signal_fence(memory_order_release);
	l->spill = spill;
	l->base = spill->e;
	atomic_signal_fence(memory_order_release);
	l->room = (size_t)cap * sizeof(struct held);
	return spill->e;
}
