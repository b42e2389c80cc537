#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# run.sh VARIANT BUILDDIR - placement tests for one libbravo variant.
#
# Runs placement_test (tests/preload/placement_test.c) under
# LD_PRELOAD=BUILDDIR/src/.libs/libbravo-VARIANT.so, each run bounded by
# timeout (${PLACEMENT_TIMEOUT:-300} s):
#
#   all variants   placement_test with default settings
#                  its first line says pthread_rwlock_* come from the variant
#                  BRAVO_VERBOSE=1 prints exactly one start-up line
#                  "libbravo: variant=VARIANT ..." on stderr
#   cohort-rw      placement_test with BRAVO_COHORT_NODES=2 BRAVO_COHORT_HANDOFF=8
#                  BRAVO_VERBOSE=1 BRAVO_COHORT_NODES=2: the start-up line
#                  contains nodes=2
#                  BRAVO_COHORT_NODES=abc: exactly one line on stderr mentions
#                  BRAVO_COHORT_NODES, and placement_test still passes
#
# VARIANT glibc runs placement_test once without preload (a self-check).
# The program is compiled into a temporary directory, unless PLACEMENT_TEST
# names a built one.  Prints one PASS/FAIL line per step (with the tail of
# the output on failure) and "N passed, N failed"; exits 1 if a step failed,
# 2 on a usage error.
set -u
# "Default settings" means these are not inherited from the caller.
unset BRAVO_VERBOSE BRAVO_COHORT_NODES BRAVO_COHORT_HANDOFF PLACEMENT_TEST_HANDOFF

if [ $# -ne 2 ]; then
	echo "usage: $0 VARIANT BUILDDIR" >&2
	exit 2
fi
variant=$1
builddir=$2
here=$(cd "$(dirname "$0")" && pwd)
limit=${PLACEMENT_TIMEOUT:-300}
passed=0
failed=0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/placement.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

pass() {
	echo "PASS: $variant: $1"
	passed=$((passed + 1))
}

# fail STEP WHY [LOG...]
fail() {
	step=$1
	why=$2
	shift 2
	echo "FAIL: $variant: $step ($why)"
	for log in "$@"; do
		[ -s "$log" ] || continue
		echo "---- last lines of $(basename "$log"):"
		tail -n 40 "$log"
	done
	failed=$((failed + 1))
}

finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && exit 0
	exit 1
}

case $variant in
'' | */*)
	echo "$0: bad variant name '$variant'" >&2
	exit 2
	;;
glibc)
	lib=
	;;
*)
	lib=$builddir/src/.libs/libbravo-$variant.so
	if [ ! -f "$lib" ]; then
		fail "library" "$lib not found (variant not built?)"
		finish
	fi
	lib=$(cd "$(dirname "$lib")" && pwd -P)/$(basename "$lib")
	;;
esac

if [ -n "${PLACEMENT_TEST:-}" ]; then
	prog=$PLACEMENT_TEST
else
	prog=$tmp/placement_test
	# shellcheck disable=SC2046
	if ! ${CC:-gcc} -std=gnu11 -O2 -Wall -Wextra -pthread "$here/placement_test.c" \
		$(pkg-config --cflags --libs check) -o "$prog" >"$tmp/build.log" 2>&1; then
		fail "build placement_test" "compiler failed" "$tmp/build.log"
		finish
	fi
fi

# under NAME [VAR=VALUE...] -- run placement_test under the variant;
# stdout in $tmp/NAME.out, stderr in $tmp/NAME.err; returns its status.
under() {
	name=$1
	shift
	# only the program is preloaded (not timeout: its start-up line would count)
	if [ -n "$lib" ]; then
		timeout -k 10 "$limit" env LD_PRELOAD="$lib" "$@" "$prog" >"$tmp/$name.out" 2>"$tmp/$name.err"
	else
		timeout -k 10 "$limit" env -u LD_PRELOAD "$@" "$prog" >"$tmp/$name.out" 2>"$tmp/$name.err"
	fi
}

# run_suite STEP NAME [VAR=VALUE...] -- placement_test must pass.
run_suite() {
	step=$1
	name=$2
	shift 2
	under "$name" "$@"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		pass "$step"
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		fail "$step" "timed out after $limit s" "$tmp/$name.out" "$tmp/$name.err"
	else
		fail "$step" "exit $rc" "$tmp/$name.out" "$tmp/$name.err"
	fi
	return "$rc"
}

run_suite "placement_test (default settings)" default

# The runs above and below mean something only if the variant interposes.
if [ -n "$lib" ]; then want=libbravo-$variant.so; else want=libc.so.6; fi
step="pthread_rwlock_* resolve to $want"
if grep -qF "placement_test: pthread_rwlock_wrlock from $want;" "$tmp/default.out"; then
	pass "$step"
else
	fail "$step" "see the first line of the output" "$tmp/default.out"
fi

if [ "$variant" = glibc ]; then
	finish
fi

# One start-up line with BRAVO_VERBOSE=1 (Check forks the tests, so the
# library's constructor runs once: in the parent).  A short run: one tcase.
step="BRAVO_VERBOSE=1 prints one start-up line 'libbravo: variant=$variant ...'"
if under verbose BRAVO_VERBOSE=1 CK_RUN_CASE=exclusion; then
	n=$(grep -c '^libbravo: variant=' "$tmp/verbose.err")
	if [ "$n" -ne 1 ]; then
		fail "$step" "$n start-up lines on stderr" "$tmp/verbose.err"
	elif ! grep -q "^libbravo: variant=$variant\( \|\$\)" "$tmp/verbose.err"; then
		fail "$step" "the start-up line names another variant" "$tmp/verbose.err"
	else
		pass "$step"
	fi
else
	fail "$step" "placement_test failed (exit $?)" "$tmp/verbose.out" "$tmp/verbose.err"
fi

if [ "$variant" = cohort-rw ]; then
	run_suite "placement_test with BRAVO_COHORT_NODES=2 BRAVO_COHORT_HANDOFF=8" nodes2 \
		BRAVO_COHORT_NODES=2 BRAVO_COHORT_HANDOFF=8

	step="BRAVO_VERBOSE=1 BRAVO_COHORT_NODES=2 prints a start-up line with nodes=2"
	if under verbose-nodes2 BRAVO_VERBOSE=1 BRAVO_COHORT_NODES=2 CK_RUN_CASE=handoff; then
		n=$(grep -c '^libbravo: variant=' "$tmp/verbose-nodes2.err")
		if [ "$n" -ne 1 ]; then
			fail "$step" "$n start-up lines on stderr" "$tmp/verbose-nodes2.err"
		elif ! grep '^libbravo: variant=cohort-rw ' "$tmp/verbose-nodes2.err" |
			grep -q '[[:space:]]nodes=2\([[:space:]]\|$\)'; then
			fail "$step" "no nodes=2 in the start-up line" "$tmp/verbose-nodes2.err"
		else
			pass "$step"
		fi
	else
		fail "$step" "placement_test failed (exit $?)" "$tmp/verbose-nodes2.out" \
			"$tmp/verbose-nodes2.err"
	fi

	step="BRAVO_COHORT_NODES=abc: one line about it on stderr, placement_test passes"
	under malformed BRAVO_COHORT_NODES=abc
	rc=$?
	n=$(grep -c 'BRAVO_COHORT_NODES' "$tmp/malformed.err")
	if [ "$rc" -ne 0 ]; then
		fail "$step" "placement_test exit $rc" "$tmp/malformed.out" "$tmp/malformed.err"
	elif [ "$n" -ne 1 ]; then
		fail "$step" "$n lines on stderr mention BRAVO_COHORT_NODES, expected 1" \
			"$tmp/malformed.err"
	else
		pass "$step"
	fi
fi

finish
