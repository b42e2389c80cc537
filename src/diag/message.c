/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * message.c - writing to stderr without side effects on the program
 * (message.h).
 */
#include "message.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* fd 2 at load: its identity, published by the release store of state. */
enum { STDERR_UNKNOWN, STDERR_OPEN, STDERR_CLOSED };
static int stderr_state;
static dev_t stderr_dev;
static ino_t stderr_ino;

void libbravo_stderr_remember(void)
{
	int saved_errno = errno;
	struct stat st;

	if (fstat(2, &st) == 0) {
		stderr_dev = st.st_dev;
		stderr_ino = st.st_ino;
		__atomic_store_n(&stderr_state, STDERR_OPEN, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&stderr_state, STDERR_CLOSED, __ATOMIC_RELEASE);
	}
	errno = saved_errno;
}

/* A socket of the internet families: a peer, not a log. */
static bool network_socket(int fd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);

	return getsockname(fd, (struct sockaddr *)&sa, &len) == 0 &&
	       (sa.ss_family == AF_INET || sa.ss_family == AF_INET6);
}

bool libbravo_stderr_writable(bool unchanged_only)
{
	int saved_errno = errno;
	bool ok = (!unchanged_only || libbravo_stderr_unchanged()) && !network_socket(2);

	errno = saved_errno;
	return ok;
}

bool libbravo_stderr_unchanged(void)
{
	int saved_errno = errno, state = __atomic_load_n(&stderr_state, __ATOMIC_ACQUIRE);
	struct stat st;
	bool same;

	if (state == STDERR_UNKNOWN)
		return true;
	same = state == STDERR_OPEN && fstat(2, &st) == 0 &&
	       st.st_dev == stderr_dev && st.st_ino == stderr_ino;
	errno = saved_errno;
	return same;
}

int libbravo_report_open(const char *path, const char *what, bool *empty)
{
	int cancel_state, fd;

	/* At exit: open is a cancellation point, and no report may end the thread. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC |
		  O_NONBLOCK, 0644);
	pthread_setcancelstate(cancel_state, NULL);
	char why[128];
	struct stat st;
	int flags;

	if (fd < 0) {
		int err = errno;
		const char *reason = strerror_r(err, why, sizeof(why));

		if (err == ELOOP)
			reason = "it is a symbolic link";
		libbravo_message("cannot write %s to %s: %s; %s dropped", what, path, reason, what);
		return -1;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	if (empty)
		*empty = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
	return fd;
}

int libbravo_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	int saved_errno = errno, cancel_state, err = 0;
	sigset_t pipe_only, old_mask, pending;
	bool blocked, was_pending = false;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	blocked = pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask) == 0;
	if (blocked && sigpending(&pending) == 0)
		was_pending = sigismember(&pending, SIGPIPE) == 1;
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	/* Our write raised SIGPIPE (blocked, so still pending): take it back. */
	if (err == EPIPE && blocked && !was_pending) {
		static const struct timespec no_wait = { 0, 0 };

		while (sigtimedwait(&pipe_only, NULL, &no_wait) < 0 && errno == EINTR)
			;
	}
	if (blocked)
		pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
	pthread_setcancelstate(cancel_state, NULL);
	errno = saved_errno;
	return err;
}

/*
 * in[0..n) into out[size] with control characters and backslashes
 * escaped (\\n, \\x1b, \\\\): a message holds no line break of the text it
 * quotes (a path, an environment value).  *len: the length written, whole
 * escapes only; false if the rest did not fit.
 */
static bool escape_line(const char *in, size_t n, char *out, size_t size, size_t *len)
{
	size_t o = 0;
	bool fits = true;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		char esc[5];
		size_t k;

		if (c == '\\' || c == '\n' || c == '\r' || c == '\t') {
			esc[0] = '\\';
			esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : '\\';
			k = 2;
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			k = 4;
		} else {
			esc[0] = (char)c;
			k = 1;
		}
		if (o + k > size) {
			fits = false;
			break;
		}
		memcpy(out + o, esc, k);
		o += k;
	}
	*len = o;
	return fits;
}

void libbravo_message(const char *fmt, ...)
{
	static const char prefix[] = "libbravo: ";
	static const char cut[] = "...\n";
	char buf[1024], line[1024];
	size_t len = sizeof(prefix) - 1, room = sizeof(buf) - len;
	int saved_errno = errno, n;
	va_list ap;

	if (!libbravo_stderr_writable(true))
		return;
	memcpy(buf, prefix, len);
	va_start(ap, fmt);
	n = vsnprintf(buf + len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= room)
		n = (int)room - 1;
	len += (size_t)n;
	if (len > sizeof(prefix) - 1 && buf[len - 1] == '\n')
		len--;
	if (!escape_line(buf, len, line, sizeof(line) - sizeof(cut), &len)) {
		/* Cut after the last whole escape: end in "...\n". */
		memcpy(line + len, cut, sizeof(cut) - 1);
		len += sizeof(cut) - 1;
	} else {
		line[len++] = '\n';
	}
	libbravo_write(2, line, len);
	errno = saved_errno;
}
