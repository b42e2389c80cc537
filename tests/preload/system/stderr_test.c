/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stderr_test [FILE] - an ordinary pthread program that takes some
 * rwlocks, writes nothing on stderr and exits 0.
 *
 * With FILE, it first closes stderr and opens FILE, which becomes its
 * fd 2 (a log file, say), and writes one line of its own there: FILE must
 * then hold that line only, nothing libbravo writes at exit may land in it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/test_util.h"

int main(int argc, char **argv)
{
	static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
	static const char line[] = "stderr_test: the program's own line\n";
	int fd = -1, bad = 0;

	rwlock_lib_require("stderr_test"); /* which library answered (EXPECT_RWLOCK_LIB) */

	if (argc > 2)
		return 2;
	if (argc == 2) {
		close(2);
		fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd != 2)
			return 3;
	}
	for (int i = 0; i < 100; i++) {
		bad |= pthread_rwlock_rdlock(&lock);
		bad |= pthread_rwlock_unlock(&lock);
	}
	bad |= pthread_rwlock_wrlock(&lock);
	bad |= pthread_rwlock_unlock(&lock);
	if (fd == 2 && write(fd, line, strlen(line)) != (ssize_t)strlen(line))
		return 4;
	return bad ? 1 : 0;
}
