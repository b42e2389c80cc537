#!/bin/sh
# stats_check.sh VARIANT LIB STATS_TEST - libbravo's statistics and its
# handling of the environment, on a program with known counts
# (stats_test.c).  Prints what differs; exits 1 on any difference.
set -u
variant=$1 lib=$2 prog=$3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

bad() { echo "stats_check: $*"; fail=1; }

# The exact counts, to a file: in the default mode (the two unlocks of free
# locks return 0, as glibc's do: no error) and in strict mode (BRAVO_CHECK=1:
# EPERM each, counted, and one line each on stderr).
case $variant in
bravo-*) fast=999 slow=2 off=2 revocations=2 ;;
*) fast=0 slow=1001 off=0 revocations=0 ;;
esac
for mode in default strict; do
	if [ $mode = strict ]; then check=1 eperm=2; else check=0 eperm=0; fi
	BRAVO_CHECK=$check BRAVO_STATS_FILE="$tmp/stats" LD_PRELOAD="$lib" "$prog" 2>"$tmp/err" ||
		bad "$mode mode: stats_test failed: $(cat "$tmp/err")"
	for kv in variant=$variant reads=1001 read_fast=$fast read_slow=$slow read_slow_bias_off=$off \
		read_slow_inhibited=0 read_slow_collision=0 read_slow_lost_race=0 \
		read_slow_writer_waiting=0 writes=2 read_reentries=3 revocations=$revocations \
		errors_eperm=$eperm errors_ebusy=1 errors_edeadlk=1 errors_einval=1 errors_etimedout=0 \
		errors_eagain=0 waits=0; do
		grep -qx "libbravo.$kv" "$tmp/stats" 2>/dev/null ||
			bad "$mode mode: want libbravo.$kv, got: $(grep "^libbravo.${kv%%=*}=" "$tmp/stats" 2>/dev/null)"
	done
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
grep -qx "libbravo.reads=1001" "$tmp/err1" || bad "BRAVO_STATS=1 printed no reads=1001 on stderr"
LD_PRELOAD="$lib" "$prog" 2>"$tmp/err0" || bad "stats_test failed without statistics"
[ -s "$tmp/err0" ] && bad "statistics off, yet stderr says: $(cat "$tmp/err0")"

# A malformed value: one line naming the variable and the default; the
# program still runs, with the default.
for setting in BRAVO_N=abc BRAVO_N=-1 BRAVO_TABLE_SIZE=1000 BRAVO_TABLE_SIZE=1024 \
	BRAVO_SPIN=12x BRAVO_VERBOSE=2 BRAVO_STATS=yes BRAVO_COHORT_NODES=0 \
	BRAVO_COHORT_HANDOFF=many; do
	name=${setting%%=*}
	env "$setting" LD_PRELOAD="$lib" "$prog" 2>"$tmp/errm" || bad "$setting: the program failed"
	lines=$(wc -l <"$tmp/errm")
	[ "$lines" -eq 1 ] || bad "$setting: want one line on stderr, got $lines: $(cat "$tmp/errm")"
	grep -q "libbravo: ignoring $name=.*; using " "$tmp/errm" || bad "$setting: message does not name $name and the default: $(cat "$tmp/errm")"
done
# And the default is really used: BRAVO_N=abc keeps N = 9.
BRAVO_N=abc BRAVO_VERBOSE=1 LD_PRELOAD="$lib" "$prog" 2>"$tmp/errn"
case $variant in
bravo-*) grep -q "slowdown_n=9" "$tmp/errn" || bad "BRAVO_N=abc: start-up line does not show slowdown_n=9: $(cat "$tmp/errn")" ;;
esac
[ $fail -eq 0 ] && echo "stats_check: $variant: exact counts, stderr/file/off, and malformed settings all as specified"
exit $fail
