/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * static_exec - run a command with LD_PRELOAD removed, from a statically
 * linked binary (so no preloaded library loads into it either): a wrapper
 * under which a preload never takes effect.
 *
 * usage: static_exec COMMAND [ARGS...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs("usage: static_exec COMMAND [ARGS...]\n", stderr);
		return 2;
	}
	unsetenv("LD_PRELOAD");
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
