/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * page_kind.c - /proc/self/pagemap, read directly (see page_kind.h).
 */
#include "page_kind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGEMAP_PRESENT (UINT64_C(1) << 63)
#define PAGEMAP_FILE_OR_SHARED (UINT64_C(1) << 61)

/* Set once /proc/self/pagemap could not be opened: do not ask again. */
static atomic_bool pagemap_missing;

bool page_shared(const void *addr)
{
	long page = sysconf(_SC_PAGESIZE);
	int saved_errno = errno;
	uint64_t entry = 0;
	long fd, n;

	if (atomic_load_explicit(&pagemap_missing, memory_order_relaxed))
		return false;
	fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == EACCES || errno == EPERM)
			atomic_store_explicit(&pagemap_missing, true, memory_order_relaxed);
		errno = saved_errno;
		return false;
	}
	n = syscall(SYS_pread64, fd, &entry, sizeof(entry),
		    (off_t)((uintptr_t)addr / (uintptr_t)(page > 0 ? page : 4096) * sizeof(entry)));
	syscall(SYS_close, fd);
	errno = saved_errno;
	return n == (long)sizeof(entry) && (entry & PAGEMAP_PRESENT) &&
	       (entry & PAGEMAP_FILE_OR_SHARED);
}
