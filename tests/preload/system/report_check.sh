#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# report_check.sh VARIANT LIB STDERR_TEST BROKEN_STDERR_RUN
# - libbravo's own output (statistics, messages) never changes what the
# program does, and the statistics file is opened safely:
#
#   symlink      BRAVO_STATS_FILE at a symbolic link (to a file, or
#                dangling): refused with one line, the target untouched
#   mode         the file is created 0644 less the umask
#   too-long     a path longer than PATH_MAX: one line, no file created
#                under a shortened name
#   broken-pipe  stderr a pipe whose reader has exited: the exit status is
#                the program's own (0, as without preload), not SIGPIPE's
#   reopened     the program closed stderr and opened a file on fd 2: the
#                file gets none of libbravo's text
#   write-fails  BRAVO_STATS_FILE or BRAVO_PROFILE_FILE a file whose write
#                fails (/dev/full): one line saying the report is dropped,
#                and the program's own exit status (0)
#
# Prints what differs; exits 1 on any difference.
set -u
variant=$1 lib=$2 prog=$3 broken=$4
limit=60
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "report_check: $variant: $*"; fail=1; }
unset LD_PRELOAD BRAVO_N BRAVO_TABLE_SIZE BRAVO_SPIN BRAVO_VERBOSE BRAVO_STATS \
	BRAVO_STATS_FILE BRAVO_CHECK BRAVO_COHORT_NODES BRAVO_COHORT_HANDOFF BRAVO_PROFILE BRAVO_PROFILE_FILE
# stderr_test checks which library answered: the variant, and libc.so.6 in
# the runs without preload (env EXPECT_RWLOCK_LIB=$native).
EXPECT_RWLOCK_LIB=libbravo-$variant.so
export EXPECT_RWLOCK_LIB
native=libc.so.6
t() { timeout -k 5 "$limit" "$@"; }
# under ENV... : stderr_test under the variant, stderr in $tmp/err (timeout
# outside: not itself under the variant).
under() { timeout -k 5 "$limit" env "$@" LD_PRELOAD="$lib" "$prog" 2>"$tmp/err"; }
one_line() { # one_line WHAT PATTERN: $tmp/err is exactly one line matching PATTERN
	lines=$(wc -l <"$tmp/err")
	[ "$lines" -eq 1 ] && grep -q -e "$2" "$tmp/err" ||
		bad "$1: want one line on stderr matching '$2', got $lines: $(cat "$tmp/err")"
}

# symlink: to an existing file, and dangling (O_CREAT would follow it).
printf 'keep\n' >"$tmp/target"
ln -s "$tmp/target" "$tmp/link"
ln -s "$tmp/nothing" "$tmp/dangling"
under BRAVO_STATS_FILE="$tmp/link" || bad "symlink: the program failed (exit $?)"
[ "$(cat "$tmp/target")" = keep ] && [ ! -L "$tmp/target" ] || bad "symlink: the target was written: $(head -n 2 "$tmp/target")"
one_line symlink "^libbravo: cannot write statistics to $tmp/link: .*symbolic link"
under BRAVO_STATS_FILE="$tmp/dangling" || bad "dangling symlink: the program failed (exit $?)"
[ -e "$tmp/nothing" ] && bad "dangling symlink: its target $tmp/nothing was created"
one_line dangling-symlink "^libbravo: cannot write statistics to $tmp/dangling: "

# mode: 0644 less the umask.
(umask 022 && under BRAVO_STATS_FILE="$tmp/m022") || bad "mode: the program failed"
(umask 077 && under BRAVO_STATS_FILE="$tmp/m077") || bad "mode: the program failed"
[ "$(stat -c %a "$tmp/m022" 2>/dev/null)" = 644 ] || bad "mode: umask 022 gave $(stat -c %a "$tmp/m022" 2>&1), want 644"
[ "$(stat -c %a "$tmp/m077" 2>/dev/null)" = 600 ] || bad "mode: umask 077 gave $(stat -c %a "$tmp/m077" 2>&1), want 600"

# too-long: 21 nested directories of 200-character names, so that any cut
# at PATH_MAX - 1 bytes falls inside an existing directory (made in two
# halves: the shell's cd cannot go past PATH_MAX).
name=$(printf '%0200d' 0 | tr 0 d)
half1=$name half2=$name
for i in 2 3 4 5 6 7 8 9 10; do half1="$half1/$name"; done
for i in 2 3 4 5 6 7 8 9 10 11; do half2="$half2/$name"; done
mkdir "$tmp/long"
(cd "$tmp/long" && mkdir -p "$half1" && cd "$half1" && mkdir -p "$half2") ||
	bad "too-long: cannot make the directories"
long="$tmp/long/$half1/$half2/stats"
[ ${#long} -gt 4096 ] || bad "too-long: the path is only ${#long} bytes"
under BRAVO_STATS_FILE="$long" || bad "too-long: the program failed (exit $?)"
one_line too-long "^libbravo: ignoring BRAVO_STATS_FILE=.*bytes"
created=$(find "$tmp/long" ! -type d | wc -l)
[ "$created" -ne 0 ] && bad "too-long: created $created file(s) under a shortened name, e.g. ...$(find "$tmp/long" ! -type d | head -n 1 | tail -c 60)"

# broken-pipe: the exit status is the program's own, as without preload.
t "$broken" env EXPECT_RWLOCK_LIB=$native "$prog"
want=$?
[ "$want" -eq 0 ] || bad "broken-pipe: without preload the program exits $want"
for settings in BRAVO_STATS=1 BRAVO_VERBOSE=1 BRAVO_N=abc "BRAVO_STATS=1 BRAVO_VERBOSE=1 BRAVO_N=abc" \
	BRAVO_STATS_FILE="$tmp/link"; do
	# shellcheck disable=SC2086 # settings is a list of NAME=VALUE words
	t "$broken" env $settings LD_PRELOAD="$lib" "$prog"
	got=$?
	[ "$got" -eq "$want" ] || bad "broken-pipe: $settings: exit $got, want $want (141: killed by SIGPIPE)"
done

# reopened: fd 2 closed then a file opened on it, or fd 2 closed from the
# start; the file holds the program's line only (the report on stderr, or
# the line saying the statistics file is refused).  Without preload first.
own="stderr_test: the program's own line"
for how in plain closed-at-exec; do
	for pre in none stats refused; do
		rm -f "$tmp/log"
		case $pre in
		none) set -- env EXPECT_RWLOCK_LIB=$native ;;
		stats) set -- env LD_PRELOAD="$lib" BRAVO_STATS=1 BRAVO_VERBOSE=1 ;;
		refused) set -- env LD_PRELOAD="$lib" BRAVO_STATS_FILE="$tmp/link" ;;
		esac
		if [ $how = plain ]; then
			timeout -k 5 "$limit" "$@" "$prog" "$tmp/log" 2>"$tmp/err"
		else
			timeout -k 5 "$limit" "$@" "$prog" "$tmp/log" 2>&-
		fi
		rc=$?
		[ $rc -eq 0 ] || bad "reopened ($how, $pre): exit $rc"
		[ "$(cat "$tmp/log" 2>/dev/null)" = "$own" ] ||
			bad "reopened ($how, $pre): the program's file holds: $(head -n 3 "$tmp/log" 2>/dev/null)"
	done
done
# write-fails: the report's write fails (ENOSPC); the program's own result.
if [ -w /dev/full ]; then
	under BRAVO_STATS_FILE=/dev/full || bad "write-fails: statistics: the program failed (exit $?)"
	one_line write-fails-statistics "^libbravo: cannot write statistics to /dev/full: .*; statistics dropped$"
	under BRAVO_PROFILE_FILE=/dev/full || bad "write-fails: profile: the program failed (exit $?)"
	one_line write-fails-profile "^libbravo: cannot write the profile to /dev/full: .*; profile dropped$"
else
	bad "write-fails: no writable /dev/full"
fi

# The report still comes when stderr is the one it started with.
under BRAVO_STATS=1 || bad "stderr report: the program failed"
grep -qx "libbravo.variant=$variant" "$tmp/err" || bad "BRAVO_STATS=1: no report on an unchanged stderr"

[ $fail -eq 0 ] && echo "report_check: $variant: symlinks refused, mode, too-long path, broken pipe, reopened stderr, failed report writes all as specified"
exit $fail
