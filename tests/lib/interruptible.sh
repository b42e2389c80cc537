# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# interruptible.sh - bounded runs that Ctrl-C still stops, for the bash
# scripts that run one command at a time (tests/check-sanitizers).
# Sourced.
#
# timeout(1) runs its command in a process group of its own, out of reach
# of the terminal's Ctrl-C, and bash runs a trap only once a foreground
# command has ended.  So the run is waited for in the background, where a
# signal interrupts the wait, and the caller's INT/TERM trap calls run_stop.

run_pid=

# run_bounded OUT ERR LIMIT KILL_AFTER COMMAND...: COMMAND under timeout,
# its stdout to file OUT and stderr to file ERR (ERR = OUT: both in one);
# its status.  The redirections are the background command's only: a trap
# that runs meanwhile still writes to the script's own stdout and stderr.
run_bounded() {
	local out=$1 err=$2 limit=$3 kill_after=$4 rc=0
	shift 4
	if [ "$err" = "$out" ]; then
		timeout -k "$kill_after" "$limit" "$@" >"$out" 2>&1 &
	else
		timeout -k "$kill_after" "$limit" "$@" >"$out" 2>"$err" &
	fi
	run_pid=$!
	wait "$run_pid" || rc=$?
	run_pid=
	return "$rc"
}

# run_stop: stop the run in progress, if any (timeout passes the signal on
# to its command's whole process group).
run_stop() {
	if [ -n "$run_pid" ]; then
		kill -TERM "$run_pid" 2>/dev/null || true
		wait "$run_pid" 2>/dev/null || true
	fi
}
