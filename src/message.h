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
 * Usable from any thread and from any lock path.
 */
#ifndef LIBBRAVO_MESSAGE_H
#define LIBBRAVO_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>

/* Write all of buf to fd as above; true if all of it was written. */
bool libbravo_write(int fd, const void *buf, size_t len);

/*
 * One line on fd 2: "libbravo: " then fmt formatted (vsnprintf into a
 * 1 KiB stack buffer; a longer line is cut and ends in "..."), then a
 * newline if fmt did not end in one; one write(2).
 */
void libbravo_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
