/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * message.h - libbravo's own output on stderr (and the statistics file),
 * written so that it cannot change what the program does:
 *
 *   - no SIGPIPE: SIGPIPE is blocked in the writing thread around the
 *     write, and a SIGPIPE the write itself raised (it was not pending
 *     before) is taken off again;
 *   - errno is the caller's afterwards;
 *   - short writes and EINTR are retried; no stdio (no FILE lock, no
 *     buffer), no allocation; cancellation is disabled around the write
 *     (write(2) is a cancellation point, the rwlock functions are not).
 *
 * And libbravo writes on fd 2 only while it is still the file it was when
 * the library loaded (libbravo_stderr_remember, from config_load): a
 * program that closed stderr and opened something else on fd 2 (a log,
 * a socket) gets none of libbravo's text in it.
 *
 * Usable from any thread and from any lock path.
 */
#ifndef LIBBRAVO_MESSAGE_H
#define LIBBRAVO_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The reports at exit, as destructor priorities (a larger number runs
 * first): the statistics, then the profile, whose report is the longer
 * to make (it reads the objects' symbols).
 */
#define LIBBRAVO_DTOR_STATS 200
#define LIBBRAVO_DTOR_PROFILE 101

/* Note what fd 2 is now (or that it is closed).  Once, at load. */
void libbravo_stderr_remember(void);

/* fd 2 is the file noted (true too if none was noted yet). */
bool libbravo_stderr_unchanged(void);

/*
 * May a line go to fd 2?  Never to a network socket (an inetd-style
 * service's fd 2 is its peer: a line there would be protocol data); with
 * unchanged_only, only to the stderr noted at load.
 */
bool libbravo_stderr_writable(bool unchanged_only);

/*
 * Open a report file (the statistics', the profile's) to append to it:
 * never through a symbolic link (the last component), never becoming the
 * controlling terminal, never blocking on a FIFO with no reader; created
 * with mode 0644 less the umask.  -1 if it cannot be, said on stderr
 * ("cannot write WHAT to PATH: why; WHAT dropped").  *empty: the file
 * holds nothing yet (a regular file of size 0).
 */
int libbravo_report_open(const char *path, const char *what, bool *empty);

/* Write all of buf to fd as above; 0 if all of it was written, else the error. */
int libbravo_write(int fd, const void *buf, size_t len);

/*
 * One line on fd 2: "libbravo: " then fmt formatted (vsnprintf into a
 * 1 KiB stack buffer; a longer line is cut and ends in "..."), its control
 * characters and backslashes escaped (\n, \x1b, \\: what it quotes cannot
 * break the line), then a newline; one write(2).  Nothing if fd 2 is not
 * the stderr noted at load, or is a network socket.
 */
void libbravo_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
