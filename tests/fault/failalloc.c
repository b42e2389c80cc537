/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * failalloc.c - a preloaded shim that makes libbravo's allocations fail on
 * request, for alloc-fault-check.
 *
 * Build:  gcc -shared -fPIC -O2 -o failalloc.so tests/fault/failalloc.c -ldl
 * Use:    LD_PRELOAD="failalloc.so libbravo-V.so" PROGRAM
 *
 * It interposes malloc, calloc, realloc, posix_memalign, aligned_alloc,
 * memalign, mmap, mmap64, mremap (the allocation calls) and free, munmap,
 * and forwards each to the next definition (dlsym(RTLD_NEXT)).  Only the
 * allocation calls whose immediate caller (__builtin_return_address(0))
 * lies in the text of an object whose file name contains "libbravo-"
 * (found once, with dl_iterate_phdr) are counted and may fail; the rest
 * of the process (the program, libc's own allocations, libnuma, libdw)
 * is left alone.  Allocations libc makes on libbravo's behalf (fopen,
 * pthread_setspecific's second-level arrays) are libc's, not counted.
 *
 * Environment (read once, at the first call):
 *   FAILALLOC_NTH=n     fail only libbravo's n-th allocation call (1-based)
 *   FAILALLOC_FROM=n    fail the n-th and every later one
 *   FAILALLOC_REPORT=path  at exit, append one line to path:
 *                       "calls=N failed=M live_bytes=B"
 *   FAILALLOC_TRACE=1   one line on stderr per counted call:
 *                       "failalloc: call N FUNCTION SIZE +0xOFFSET pid PID"
 *                       (OFFSET: the caller's return address in libbravo,
 *                       as addr2line -e libbravo-V.so takes it; FAIL at the
 *                       end if it failed)
 * A failed call returns NULL (posix_memalign: ENOMEM; mmap and mremap:
 * MAP_FAILED) with errno ENOMEM, and changes nothing.
 *
 * calls and failed are counted in a page shared with forked children (a
 * MAP_SHARED mapping made at start-up), so the calls a child makes while
 * its parent waits for it are numbered after the parent's, and can be
 * failed too; the report is written by the process that started (a child
 * that calls exit() writes none), after every destructor (libbravo's
 * included: its exit-time allocations are counted).  live_bytes is that
 * process's own: bytes of libbravo's allocations not freed yet -- malloc
 * family by the size asked for, mmap by length in pages -- tracked in a
 * fixed open-addressing table (no allocation of its own), whoever frees
 * them.
 *
 * libbravo calls mmap from signal handlers: on that path the shim uses
 * atomics only (no lock, no allocation).  dlsym may itself call calloc
 * before calloc is resolved: such calls get a small static buffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

/* ---- the next definitions ---- */

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static void *(*next_memalign)(size_t, size_t);
static void *(*next_mmap)(void *, size_t, int, int, int, off_t);
static void *(*next_mmap64)(void *, size_t, int, int, int, off_t);
static void *(*next_mremap)(void *, size_t, size_t, int, ...);
static int (*next_munmap)(void *, size_t);

/* ---- state ---- */

enum { UNINIT, INITIALIZING, READY };
static _Atomic int state;
static __thread bool in_init __attribute__((tls_model("initial-exec")));

/* libbravo's text: [lo, hi) of each executable segment. */
#define MAX_RANGES 8
static uintptr_t range_lo[MAX_RANGES], range_hi[MAX_RANGES];
static int nranges;
static uintptr_t bravo_base; /* its load address: trace offsets are addr2line's */

static unsigned long fail_nth, fail_from;
static int trace_fd = -1;
static const char *report_path;
static pid_t start_pid;

/* Shared with forked children: the numbering of calls goes on there. */
struct shared {
	_Atomic unsigned long calls;
	_Atomic unsigned long failed;
};
static struct shared shared_fallback;
static struct shared *shared = &shared_fallback;

static _Atomic long long live_bytes;

/* ---- the bootstrap buffer: dlsym's own calls before calloc is resolved ---- */

static _Alignas(64) char boot_buf[64 * 1024];
static _Atomic size_t boot_used;

static bool in_boot(const void *p)
{
	return (const char *)p >= boot_buf && (const char *)p < boot_buf + sizeof(boot_buf);
}

static void *boot_alloc(size_t align, size_t size)
{
	size_t start, off;

	if (align < 16)
		align = 16;
	do {
		start = atomic_load(&boot_used);
		off = (start + 16 + align - 1) & ~(align - 1); /* room for the size before it */
		if (off + size > sizeof(boot_buf))
			return NULL;
	} while (!atomic_compare_exchange_weak(&boot_used, &start, off + size));
	memcpy(boot_buf + off - sizeof(size_t), &size, sizeof(size));
	return boot_buf + off;
}

static size_t boot_size(const void *p)
{
	size_t size;

	memcpy(&size, (const char *)p - sizeof(size_t), sizeof(size));
	return size;
}

/* ---- live allocations: address -> bytes, open addressing, tombstones ---- */

#define TABLE_BITS 16
#define TABLE_SIZE (1u << TABLE_BITS)
#define KEY_EMPTY 0
#define KEY_GONE 1

struct slot {
	_Atomic uintptr_t key;
	_Atomic size_t bytes;
};
static struct slot table[TABLE_SIZE];
static _Atomic long table_live; /* entries in use: free's lookup is skipped at 0 */

static size_t hash_of(uintptr_t p)
{
	return (size_t)(((uint64_t)p >> 4) * UINT64_C(0x9E3779B97F4A7C15) >> (64 - TABLE_BITS));
}

static void track(const void *p, size_t bytes)
{
	uintptr_t key = (uintptr_t)p;
	size_t h = hash_of(key);

	atomic_fetch_add(&live_bytes, (long long)bytes);
	for (size_t i = 0; i < TABLE_SIZE; i++) {
		struct slot *s = &table[(h + i) & (TABLE_SIZE - 1)];
		uintptr_t k = atomic_load(&s->key);

		while (k == KEY_EMPTY || k == KEY_GONE) {
			if (atomic_compare_exchange_weak(&s->key, &k, key)) {
				atomic_store(&s->bytes, bytes);
				atomic_fetch_add(&table_live, 1);
				return;
			}
		}
	}
	/* Full (never, at libbravo's scale): the bytes stay counted as live. */
}

/* Forget p; its bytes, or 0 if it is not tracked. */
static size_t untrack(const void *p)
{
	uintptr_t key = (uintptr_t)p;
	size_t h = hash_of(key);

	if (!p || atomic_load(&table_live) == 0)
		return 0;
	for (size_t i = 0; i < TABLE_SIZE; i++) {
		struct slot *s = &table[(h + i) & (TABLE_SIZE - 1)];
		uintptr_t k = atomic_load(&s->key);

		if (k == KEY_EMPTY)
			return 0;
		if (k == key) {
			size_t bytes = atomic_load(&s->bytes);

			if (!atomic_compare_exchange_strong(&s->key, &k, KEY_GONE))
				return 0; /* someone else freed it at the same time */
			atomic_fetch_sub(&table_live, 1);
			atomic_fetch_sub(&live_bytes, (long long)bytes);
			return bytes;
		}
	}
	return 0;
}

static size_t page_round(size_t n)
{
	size_t page = 4096;

	return (n + page - 1) & ~(page - 1);
}

/* ---- set-up ---- */

static unsigned long env_count(const char *name)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	return errno || *end ? 0 : v;
}

static int find_libbravo(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libbravo-"))
		return 0;
	if (!nranges)
		bravo_base = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum && nranges < MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		range_lo[nranges] = info->dlpi_addr + ph->p_vaddr;
		range_hi[nranges] = range_lo[nranges] + ph->p_memsz;
		nranges++;
	}
	return 0;
}

static void report(void *arg)
{
	char line[160];
	int fd, n;

	(void)arg;
	if (!report_path || getpid() != start_pid)
		return;
	n = snprintf(line, sizeof(line), "calls=%lu failed=%lu live_bytes=%lld\n",
		     atomic_load(&shared->calls), atomic_load(&shared->failed),
		     atomic_load(&live_bytes));
	fd = open(report_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) != n) {
		/* nothing to do: the driver finds no line */
	}
	close(fd);
}

static void resolve(void)
{
	void *p;

	next_malloc = dlsym(RTLD_NEXT, "malloc");
	next_calloc = dlsym(RTLD_NEXT, "calloc");
	next_realloc = dlsym(RTLD_NEXT, "realloc");
	next_free = dlsym(RTLD_NEXT, "free");
	next_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	next_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	next_memalign = dlsym(RTLD_NEXT, "memalign");
	next_mmap = dlsym(RTLD_NEXT, "mmap");
	next_mmap64 = dlsym(RTLD_NEXT, "mmap64");
	next_mremap = dlsym(RTLD_NEXT, "mremap");
	next_munmap = dlsym(RTLD_NEXT, "munmap");
	if (!next_mmap64)
		next_mmap64 = next_mmap;

	fail_nth = env_count("FAILALLOC_NTH");
	fail_from = env_count("FAILALLOC_FROM");
	report_path = getenv("FAILALLOC_REPORT");
	if (getenv("FAILALLOC_TRACE") && strcmp(getenv("FAILALLOC_TRACE"), "1") == 0)
		trace_fd = 2;
	if (report_path && !*report_path)
		report_path = NULL;
	start_pid = getpid();
	p = (void *)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		shared = p;
	dl_iterate_phdr(find_libbravo, NULL);
	/*
	 * dso NULL: run by exit() itself, not by this object's destructor.
	 * Registered from our constructor (before the program's start-up code
	 * registers the dynamic linker's destructors), it runs after them all.
	 */
	__cxa_atexit(report, NULL, NULL);
}

/* Ready to forward?  false: a call made while resolving (serve it from boot_buf). */
static bool ensure_init(void)
{
	int s = atomic_load_explicit(&state, memory_order_acquire);

	if (__builtin_expect(s == READY, 1))
		return true;
	if (in_init)
		return false;
	s = UNINIT;
	if (atomic_compare_exchange_strong(&state, &s, INITIALIZING)) {
		int saved = errno;

		in_init = true;
		resolve();
		in_init = false;
		atomic_store_explicit(&state, READY, memory_order_release);
		errno = saved;
		return true;
	}
	while (atomic_load_explicit(&state, memory_order_acquire) != READY)
		sched_yield();
	return true;
}

__attribute__((constructor)) static void failalloc_init(void)
{
	ensure_init();
}

/* ---- tracing (async-signal-safe: no stdio) ---- */

static char *put_num(char *p, unsigned long v, int base)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % (unsigned long)base];
		v /= (unsigned long)base;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static void trace(unsigned long n, const char *fn, size_t size, const void *caller, bool failed)
{
	char line[160], *p = line;

	if (trace_fd < 0)
		return;
	memcpy(p, "failalloc: call ", 16);
	p += 16;
	p = put_num(p, n, 10);
	*p++ = ' ';
	memcpy(p, fn, strlen(fn));
	p += strlen(fn);
	*p++ = ' ';
	p = put_num(p, size, 10);
	memcpy(p, " +0x", 4);
	p += 4;
	p = put_num(p, (uintptr_t)caller - bravo_base, 16);
	memcpy(p, " pid ", 5);
	p += 5;
	p = put_num(p, (unsigned long)getpid(), 10);
	if (failed) {
		memcpy(p, " FAIL", 5);
		p += 5;
	}
	*p++ = '\n';
	if (write(trace_fd, line, (size_t)(p - line)) < 0) {
		/* nothing to do */
	}
}

/* ---- the decision ---- */

static bool from_libbravo(const void *caller)
{
	uintptr_t a = (uintptr_t)caller;

	for (int i = 0; i < nranges; i++)
		if (a >= range_lo[i] && a < range_hi[i])
			return true;
	return false;
}

/* A libbravo call: count it; true if it is to fail. */
static bool counted_fails_at(const char *fn, size_t size, const void *caller)
{
	unsigned long n = atomic_fetch_add(&shared->calls, 1) + 1;
	bool fail = (fail_nth && n == fail_nth) || (fail_from && n >= fail_from);

	if (fail)
		atomic_fetch_add(&shared->failed, 1);
	trace(n, fn, size, caller, fail);
	return fail;
}

#define counted_fails(fn, size) counted_fails_at(fn, size, caller)

/* ---- the interposed functions ---- */

EXPORT void *malloc(size_t size)
{
	const void *caller = __builtin_return_address(0);
	void *p;

	if (!ensure_init())
		return boot_alloc(16, size);
	if (!from_libbravo(caller))
		return next_malloc(size);
	if (counted_fails("malloc", size)) {
		errno = ENOMEM;
		return NULL;
	}
	p = next_malloc(size);
	if (p)
		track(p, size);
	return p;
}

EXPORT void *calloc(size_t n, size_t size)
{
	const void *caller = __builtin_return_address(0);
	void *p;

	if (!ensure_init()) {
		if (size && n > SIZE_MAX / size)
			return NULL;
		return boot_alloc(16, n * size); /* static: already zero */
	}
	if (!from_libbravo(caller))
		return next_calloc(n, size);
	if (counted_fails("calloc", n * size)) {
		errno = ENOMEM;
		return NULL;
	}
	p = next_calloc(n, size);
	if (p)
		track(p, n * size);
	return p;
}

EXPORT void *realloc(void *old, size_t size)
{
	const void *caller = __builtin_return_address(0);
	void *p;

	if (!ensure_init() || in_boot(old)) {
		/* A bootstrap block: moved out (it is never freed). */
		void *q = in_init || !next_malloc ? boot_alloc(16, size) : malloc(size);

		if (q && old)
			memcpy(q, old, boot_size(old) < size ? boot_size(old) : size);
		return q;
	}
	if (!from_libbravo(caller)) {
		/* A libbravo block the program reallocates: it is the program's now. */
		untrack(old);
		return next_realloc(old, size);
	}
	if (counted_fails("realloc", size)) {
		errno = ENOMEM;
		return NULL;
	}
	p = next_realloc(old, size);
	if (p || size == 0)
		untrack(old);
	if (p)
		track(p, size);
	return p;
}

EXPORT void free(void *p)
{
	if (!p || in_boot(p))
		return;
	if (!ensure_init())
		return; /* cannot happen: only boot_buf blocks exist before */
	untrack(p);
	next_free(p);
}

EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	const void *caller = __builtin_return_address(0);
	int r;

	if (!ensure_init()) {
		void *p = boot_alloc(align, size);

		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	if (!from_libbravo(caller))
		return next_posix_memalign(out, align, size);
	if (counted_fails("posix_memalign", size))
		return ENOMEM;
	r = next_posix_memalign(out, align, size);
	if (r == 0)
		track(*out, size);
	return r;
}

EXPORT void *aligned_alloc(size_t align, size_t size)
{
	const void *caller = __builtin_return_address(0);
	void *p;

	if (!ensure_init())
		return boot_alloc(align, size);
	if (!from_libbravo(caller))
		return next_aligned_alloc(align, size);
	if (counted_fails("aligned_alloc", size)) {
		errno = ENOMEM;
		return NULL;
	}
	p = next_aligned_alloc(align, size);
	if (p)
		track(p, size);
	return p;
}

EXPORT void *memalign(size_t align, size_t size)
{
	const void *caller = __builtin_return_address(0);
	void *p;

	if (!ensure_init())
		return boot_alloc(align, size);
	if (!from_libbravo(caller))
		return next_memalign(align, size);
	if (counted_fails("memalign", size)) {
		errno = ENOMEM;
		return NULL;
	}
	p = next_memalign(align, size);
	if (p)
		track(p, size);
	return p;
}

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	return (void *)r;
}

static void *do_mmap(bool is64, const void *caller, void *addr, size_t len, int prot, int flags,
		     int fd, off_t off)
{
	void *(*next)(void *, size_t, int, int, int, off_t);
	void *p;

	if (!ensure_init() || !(next = is64 ? next_mmap64 : next_mmap))
		return raw_mmap(addr, len, prot, flags, fd, off);
	if (!from_libbravo(caller))
		return next(addr, len, prot, flags, fd, off);
	if (counted_fails("mmap", len)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = next(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		track(p, page_round(len));
	return p;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(false, __builtin_return_address(0), addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(true, __builtin_return_address(0), addr, len, prot, flags, fd, off);
}

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	const void *caller = __builtin_return_address(0);
	void *new_addr = NULL, *p;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!ensure_init() || !next_mremap)
		return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	if (from_libbravo(caller) && counted_fails("mremap", new_len)) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = next_mremap(old, old_len, new_len, flags, new_addr);
	if (p != MAP_FAILED && untrack(old))
		track(p, page_round(new_len));
	else if (p != MAP_FAILED && from_libbravo(caller))
		track(p, page_round(new_len) - page_round(old_len)); /* growth of a mapping of another's */
	return p;
}

EXPORT int munmap(void *addr, size_t len)
{
	size_t had;
	int r;

	if (!ensure_init() || !next_munmap)
		return (int)syscall(SYS_munmap, addr, len);
	r = next_munmap(addr, len);
	if (r == 0 && (had = untrack(addr)) > page_round(len))
		track((char *)addr + page_round(len), had - page_round(len)); /* the tail stays */
	return r;
}
