/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * page_kind.h - is a lock's memory shared with other processes?
 *
 * A lock of the default (process-private) kind placed in MAP_SHARED
 * memory and used by two processes is a common bug that glibc forgives:
 * its lock state is all in the lock's bytes.  libbravo's is not always:
 * BRAVO's fast readers publish in a table private to their process, and
 * Cohort-RW and Per-CPU keep the lock in a heap block of their process.
 * So before a lock first relies on such state (BRAVO draws its token,
 * the heap variants attach a block) libbravo asks the kernel what the
 * lock's page is, and a lock in shared memory runs in its bytes alone:
 * BRAVO never enables bias on it, the heap variants run BA in place
 * (their heap_handle.h).
 *
 * The answer comes from /proc/self/pagemap: a present page that is
 * "file-backed or shared anonymous" (bit 61) is shared; an anonymous page
 * (private memory, a private mapping's written copy) is not.  The caller
 * has just written the lock, so its page is present and, if privately
 * mapped, already copied.  Without /proc (or without permission to read
 * it) the answer is "not shared", as before this check existed
 * (libbravo(7), BUGS).  Three system calls, made directly (no
 * cancellation point, no allocation), once per lock life.
 */
#ifndef LIBBRAVO_PAGE_KIND_H
#define LIBBRAVO_PAGE_KIND_H

#include <stdbool.h>

#include "../../locks/hidden.h"

bool page_shared(const void *addr) LIBBRAVO_HIDDEN;

#endif
