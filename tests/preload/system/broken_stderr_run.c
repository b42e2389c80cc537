/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * broken_stderr_run PROGRAM [ARG...] - run PROGRAM with stderr a pipe
 * whose reading end is already closed (a reader that exited), SIGPIPE at
 * its default action and unblocked, whatever the caller had.  A write on
 * stderr then raises SIGPIPE: the program dies of it (exit status 141 in
 * a shell) unless it never writes there.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fds[2];
	sigset_t pipe_only;

	if (argc < 2) {
		fprintf(stderr, "usage: broken_stderr_run PROGRAM [ARG...]\n");
		return 2;
	}
	if (pipe(fds) != 0 || close(fds[0]) != 0) {
		perror("broken_stderr_run: pipe");
		return 2;
	}
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&pipe_only);
	sigaddset(&pipe_only, SIGPIPE);
	sigprocmask(SIG_UNBLOCK, &pipe_only, NULL);
	if (dup2(fds[1], 2) != 2) {
		perror("broken_stderr_run: dup2");
		return 2;
	}
	close(fds[1]);
	execvp(argv[1], argv + 1);
	return 127; /* stderr is the broken pipe: nowhere to say why */
}
