#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# stats_check.sh VARIANT LIB STATS_TEST - libbravo's statistics and its
# handling of the environment, on a program with known counts
# (stats_test.c).  Prints what differs; exits 1 on any difference.
set -u
variant=$1 lib=$2 prog=$3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

bad() { echo "stats_check: $*"; fail=1; }
# Every run is under the variant: stats_test checks that it answered.
EXPECT_RWLOCK_LIB=libbravo-$variant.so
export EXPECT_RWLOCK_LIB

# The exact counts, to a file: in the default mode (the two unlocks of free
# locks return 0, as glibc's do: no error) and in strict mode (BRAVO_CHECK=1:
# EPERM each, counted, and one line each on stderr).
# The BRAVO counters (fast and slow reads by cause, revocations) only under
# the BRAVO variants; the others never move them and do not print them.
case $variant in
bravo-*) bias="read_fast=999 read_slow=2 read_slow_bias_off=2 read_slow_inhibited=0 \
	read_slow_collision=0 read_slow_lost_race=0 read_slow_writer_waiting=0 revocations=2" ;;
*) bias= ;;
esac
# BRAVO-pthread's default mode lists no hold of glibc's lock (stats_test.c):
# the second lock's first re-entry is a new, fast, read (reads, read_fast
# one more, re-entries one fewer), and the reader's write lock times out
# as glibc's does instead of EDEADLK.
reads=1001
[ $variant = bravo-pthread ] && reads=1002
for mode in default strict; do
	if [ $mode = strict ]; then check=1 eperm=2; else check=0 eperm=0; fi
	counts="reads=1001 $bias read_reentries=3 errors_edeadlk=1 errors_etimedout=0"
	if [ $variant = bravo-pthread ] && [ $mode = default ]; then
		counts="reads=$reads $(echo "$bias" | sed 's/read_fast=999/read_fast=1000/') read_reentries=2 \
			errors_edeadlk=0 errors_etimedout=1"
	fi
	BRAVO_CHECK=$check BRAVO_STATS_FILE="$tmp/stats" LD_PRELOAD="$lib" "$prog" 2>"$tmp/err" ||
		bad "$mode mode: stats_test failed: $(cat "$tmp/err")"
	for kv in variant=$variant $counts writes=2 \
		errors_eperm=$eperm errors_ebusy=1 errors_einval=1 \
		errors_eagain=0 waits=0; do
		grep -qx "libbravo.$kv" "$tmp/stats" 2>/dev/null ||
			bad "$mode mode: want libbravo.$kv, got: $(grep "^libbravo.${kv%%=*}=" "$tmp/stats" 2>/dev/null)"
	done
	[ -z "$bias" ] && grep -E '^libbravo\.(read_fast|read_slow|revocation|slots_scanned|bias_enabled|policy_)' \
		"$tmp/stats" >"$tmp/extra" && bad "$mode mode: BRAVO counters under $variant: $(cat "$tmp/extra")"
	if [ $mode = default ]; then
		[ -s "$tmp/err" ] && bad "unexpected stderr with BRAVO_STATS_FILE: $(cat "$tmp/err")"
	else
		lines=$(grep -c '^libbravo: pthread_rwlock_unlock(0x[0-9a-f]*): .* (caller 0x[0-9a-f]*)$' "$tmp/err")
		[ "$lines" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 2 ] ||
			bad "BRAVO_CHECK=1: want two misuse lines on stderr, got: $(cat "$tmp/err")"
	fi
done

# BRAVO_STATS=1: the same report on stderr; off: nothing at all.
BRAVO_STATS=1 LD_PRELOAD="$lib" "$prog" 2>"$tmp/err1" || bad "stats_test failed under BRAVO_STATS=1"
grep -qx "libbravo.reads=$reads" "$tmp/err1" || bad "BRAVO_STATS=1 printed no reads=$reads on stderr"
LD_PRELOAD="$lib" "$prog" 2>"$tmp/err0" || bad "stats_test failed without statistics"
[ -s "$tmp/err0" ] && bad "statistics off, yet stderr says: $(cat "$tmp/err0")"

# A malformed value: one line naming the variable and the default; the
# program still runs, with the default.  A number is decimal digits only:
# no blank, sign or base prefix.
for setting in BRAVO_N=abc BRAVO_N=-1 "BRAVO_N= 5" BRAVO_N=+5 "BRAVO_N=5 " BRAVO_N=0x5 \
	BRAVO_TABLE_SIZE=1000 BRAVO_TABLE_SIZE=1024 \
	BRAVO_TABLE_WAYS=0 BRAVO_TABLE_WAYS=3 BRAVO_TABLE_WAYS=128 BRAVO_SPIN=12x BRAVO_VERBOSE=2 BRAVO_STATS=maybe BRAVO_CHECK=-1 BRAVO_COHORT_NODES=0 \
	BRAVO_COHORT_HANDOFF=many; do
	name=${setting%%=*}
	env "$setting" LD_PRELOAD="$lib" "$prog" 2>"$tmp/errm" || bad "$setting: the program failed"
	lines=$(wc -l <"$tmp/errm")
	[ "$lines" -eq 1 ] || bad "$setting: want one line on stderr, got $lines: $(cat "$tmp/errm")"
	grep -q "libbravo: ignoring $name=.*; using " "$tmp/errm" || bad "$setting: message does not name $name and the default: $(cat "$tmp/errm")"
done
# And the default is really used: a malformed BRAVO_N keeps N = 9, as
# its line says (and the BRAVO variants' start-up line shows).
for n in abc -1 " 5" +5 "5 " 0x5; do
	BRAVO_N=$n BRAVO_VERBOSE=1 LD_PRELOAD="$lib" "$prog" 2>"$tmp/errn" || bad "BRAVO_N=\"$n\": the program failed"
	grep -qxF "libbravo: ignoring BRAVO_N=\"$n\" (want 0..1000000); using 9" "$tmp/errn" ||
		bad "BRAVO_N=\"$n\": no line saying it is ignored for 9: $(cat "$tmp/errn")"
	case $variant in
	bravo-*) grep -q "slowdown_n=9" "$tmp/errn" ||
		bad "BRAVO_N=\"$n\": start-up line does not show slowdown_n=9: $(cat "$tmp/errn")" ;;
	esac
done
# A value's control characters are escaped in the message, a backslash
# doubled: one line, as the value reads.
esc=$(printf '\033')
nl='
'
want='libbravo: ignoring BRAVO_N="1\n2\x1b[31m\\" (want 0..1000000); using 9'
BRAVO_N="1${nl}2${esc}[31m\\" LD_PRELOAD="$lib" "$prog" 2>"$tmp/errc" ||
	bad "BRAVO_N with control characters: the program failed"
[ "$(cat "$tmp/errc")" = "$want" ] || bad "BRAVO_N with control characters: want '$want', got: $(cat "$tmp/errc")"
# One too long escaped is cut, still one line ending in "...", with no
# raw control byte.
BRAVO_N=$(printf '%0300d' 0 | tr 0 "$esc") LD_PRELOAD="$lib" "$prog" 2>"$tmp/errc" ||
	bad "BRAVO_N of 300 ESC: the program failed"
lines=$(wc -l <"$tmp/errc")
raw=$(LC_ALL=C tr -d '\040-\176\n' <"$tmp/errc" | wc -c)
[ "$lines" -eq 1 ] && [ "$raw" -eq 0 ] && grep -q '^libbravo: ignoring BRAVO_N="\\x1b.*\.\.\.$' "$tmp/errc" ||
	bad "BRAVO_N of 300 ESC: want one cut line without raw control bytes, got $lines line(s), $raw raw byte(s): $(od -c "$tmp/errc" | tail -n 4)"
# The 2D table's ways: 8 by default, BRAVO_TABLE_WAYS otherwise, 3 refused.
case $variant in
bravo-*)
	for ways in default:8 1:1 16:16 3:8; do
		set -- ${ways%%:*}
		[ "$1" = default ] && set --
		env ${1:+BRAVO_TABLE_WAYS=$1} BRAVO_VERBOSE=1 LD_PRELOAD="$lib" "$prog" 2>"$tmp/errw" ||
			bad "BRAVO_TABLE_WAYS=${1:-unset}: the program failed"
		grep -q "table=2d .*table_ways=${ways#*:} " "$tmp/errw" ||
			bad "BRAVO_TABLE_WAYS=${1:-unset}: start-up line does not show table_ways=${ways#*:}: $(cat "$tmp/errw")"
	done ;;
esac

# A switch takes 1/0, yes/no, true/false, on/off in any case.
for on in 1 yes YES true On; do
	BRAVO_STATS=$on LD_PRELOAD="$lib" "$prog" 2>"$tmp/errs" || bad "BRAVO_STATS=$on: the program failed"
	grep -qx "libbravo.reads=$reads" "$tmp/errs" || bad "BRAVO_STATS=$on: no report: $(cat "$tmp/errs")"
done
for off in 0 no False OFF; do
	BRAVO_STATS=$off LD_PRELOAD="$lib" "$prog" 2>"$tmp/errs" || bad "BRAVO_STATS=$off: the program failed"
	[ -s "$tmp/errs" ] && bad "BRAVO_STATS=$off: stderr says: $(cat "$tmp/errs")"
done

# A BRAVO_* name that is not libbravo's: one line naming it (and the
# setting it is nearest to, if any), and the defaults; the names its tools
# set (BRAVO_LIBDIR, BRAVO_COMPARE_*) are quiet.
unknown() { # unknown SETTING WANT
	env "$1" LD_PRELOAD="$lib" "$prog" 2>"$tmp/erru" || bad "$1: the program failed"
	[ "$(cat "$tmp/erru")" = "$2" ] || bad "$1: want '$2' on stderr, got: $(cat "$tmp/erru")"
}
unknown BRAVO_STAT=1 "libbravo: ignoring BRAVO_STAT: not a libbravo setting (did you mean BRAVO_STATS?)"
unknown BRAVO_TABLESIZE=1024 "libbravo: ignoring BRAVO_TABLESIZE: not a libbravo setting (did you mean BRAVO_TABLE_SIZE?)"
unknown BRAVO_HOME=/opt "libbravo: ignoring BRAVO_HOME: not a libbravo setting"
unknown BRAVO_PROFILES=1 "libbravo: ignoring BRAVO_PROFILES: not a libbravo setting (did you mean BRAVO_PROFILE?)"
unknown BRAVO_PROFILE_SROT=wait "libbravo: ignoring BRAVO_PROFILE_SROT: not a libbravo setting (did you mean BRAVO_PROFILE_SORT?)"
for tool in BRAVO_LIBDIR=/usr/lib BRAVO_COMPARE_LOCK=glibc BRAVO_COMPARE_ROUND=1 BRAVO_COMPARE_RUN=1 \
	BRAVO_COMPARE_PORT=4242 BRAVO_COMPARE_DIR=/tmp; do
	unknown "$tool" ""
done

[ $fail -eq 0 ] && echo "stats_check: $variant: exact counts, stderr/file/off, switches, malformed settings (escaped) and unknown names all as specified"
exit $fail
