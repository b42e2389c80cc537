/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pool.c - size classes over mmap (see pool.h).
 */
#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "table_lock.h"

#define POOL_MIN_SHIFT 6   /* 64 bytes */
#define POOL_MAX_SHIFT 12  /* 4 KiB */
#define POOL_CLASSES (POOL_MAX_SHIFT - POOL_MIN_SHIFT + 1)
#define POOL_CHUNK (64 * 1024)

struct pool_free_obj {
	struct pool_free_obj *next;
};

static pthread_mutex_t pool_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct pool_free_obj *free_list[POOL_CLASSES]; /* under pool_mutex */

static void *pages(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t page_round(size_t size)
{
	return (size + 4095) & ~(size_t)4095;
}

/* The class of size (its index), or -1 above the largest: whole pages. */
static int class_of(size_t size)
{
	int shift = POOL_MIN_SHIFT;

	while (shift <= POOL_MAX_SHIFT && ((size_t)1 << shift) < size)
		shift++;
	return shift <= POOL_MAX_SHIFT ? shift - POOL_MIN_SHIFT : -1;
}

/* A chunk cut into objects of class c, all but the first put on its list. */
static void *refill(int c)
{
	size_t obj = (size_t)1 << (c + POOL_MIN_SHIFT);
	char *chunk = pages(POOL_CHUNK);

	if (!chunk)
		return NULL;
	for (size_t off = POOL_CHUNK - obj; off > 0; off -= obj) {
		struct pool_free_obj *f = (struct pool_free_obj *)(void *)(chunk + off);

		f->next = free_list[c];
		free_list[c] = f;
	}
	return chunk;
}

void *pool_alloc(size_t size)
{
	int saved_errno = errno, c = class_of(size ? size : 1);
	struct table_guard g;
	void *p;

	if (c < 0) {
		p = pages(page_round(size));
		errno = saved_errno;
		return p; /* zeroed by the kernel */
	}
	table_lock(&pool_mutex, &g);
	p = free_list[c];
	if (p)
		free_list[c] = free_list[c]->next;
	else
		p = refill(c);
	table_unlock(&pool_mutex, &g);
	errno = saved_errno;
	if (p)
		memset(p, 0, (size_t)1 << (c + POOL_MIN_SHIFT));
	return p;
}

void pool_free(void *p, size_t size)
{
	int saved_errno = errno, c = class_of(size ? size : 1);
	struct pool_free_obj *f = p;
	struct table_guard g;

	if (!p)
		return;
	if (c < 0) {
		munmap(p, page_round(size));
		errno = saved_errno;
		return;
	}
	table_lock(&pool_mutex, &g);
	f->next = free_list[c];
	free_list[c] = f;
	table_unlock(&pool_mutex, &g);
}

__thread unsigned table_guarded __attribute__((tls_model("initial-exec")));

/* Held across fork (only the forking thread runs these): see table_lock.h. */
static struct table_guard fork_guard;

static void pool_fork_prepare(void)
{
	table_lock(&pool_mutex, &fork_guard);
}

static void pool_fork_resume(void)
{
	table_unlock(&pool_mutex, &fork_guard);
}

static void pool_atfork_once(void)
{
	pthread_atfork(pool_fork_prepare, pool_fork_resume, pool_fork_resume);
}

void pool_atfork(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, pool_atfork_once);
}
