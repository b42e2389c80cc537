# SPDX-License-Identifier: BSD-2-Clause
# checks.sh - the PASS/FAIL bookkeeping of the shell test scripts
# (tests/tools).  Sourced; the caller sets $tmp and
# $rc, and runs its command under test with stdout in $tmp/out and
# stderr in $tmp/err.
passed=0
failed=0

pass() {
	echo "PASS: $1"
	passed=$((passed + 1))
}

# fail NAME WHY: prints the last run's output too.
fail() {
	echo "FAIL: $1: $2"
	echo "  exit status: $rc"
	sed 's/^/  stdout: /' "$tmp/out"
	sed 's/^/  stderr: /' "$tmp/err"
	failed=$((failed + 1))
}

# check NAME WHY COMMAND...: PASS when COMMAND succeeds.
check() {
	name=$1
	why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$name" "$why"; fi
}

out_is() { [ "$(cat "$tmp/out")" = "$1" ]; }
out_has() { grep -q -e "$1" "$tmp/out"; }
err_has() { grep -q -e "$1" "$tmp/err"; }
rc_is() { [ "$rc" -eq "$1" ]; }
empty() { [ ! -s "$tmp/$1" ]; }
