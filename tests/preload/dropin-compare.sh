#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# dropin-compare.sh VARIANT PROG OUTDIR - does one libbravo variant behave
# as glibc where a program can tell?  tests/preload/run runs it as the
# check "dropin" of each variant's suite.
#
# Runs PROG (tests/preload/dropin, from tests/preload/dropin_test.c, an
# ordinary pthread program that knows nothing of libbravo) once without
# preload and once under LD_PRELOAD of $build/src/.libs/libbravo-VARIANT.so,
# and requires every check that passes natively (or is skipped natively as
# a promise beyond glibc) to pass under the variant too, except where the
# program lists an expected difference for that check and variant
# (`dropin --differences`: CHECK VARIANT REASON).  It also runs the
# strict-mode checks (`dropin --strict`, BRAVO_CHECK=1), which must all
# pass.  VARIANT glibc: the native run alone, where every check must pass
# or be skipped (the checks themselves are right).
#
# One line per check, with both results side by side:
#
#   PASS: VARIANT: CHECK (native PASS, VARIANT PASS)
#   XFAIL: VARIANT: CHECK (native PASS, VARIANT FAIL; expected: REASON)
#   FAIL: VARIANT: CHECK (native PASS, VARIANT FAIL): the program's detail
#
# then "N passed, N failed (N expected differences, S s)"; exit status 1
# if anything failed.  Every run is bounded by timeout (DROPIN_TIMEOUT
# seconds, default 120); each check also has its own watchdog inside the
# program.  Environment: abs_top_builddir (default: the current directory).
set -u

[ $# -eq 3 ] || { echo "usage: dropin-compare.sh VARIANT PROG OUTDIR" >&2; exit 2; }
variant=$1
prog=$2
outdir=$3
build=${abs_top_builddir:-$(pwd)}
limit=${DROPIN_TIMEOUT:-120}
passed=0
failed=0
xfailed=0

now() {
	date +%s.%N
}
start=$(now)

# Settings of the library come only from this script.
unset LD_PRELOAD BRAVO_CHECK BRAVO_N BRAVO_TABLE_SIZE BRAVO_SPIN BRAVO_VERBOSE BRAVO_STATS \
	BRAVO_STATS_FILE BRAVO_COHORT_NODES BRAVO_COHORT_HANDOFF RWLOCK_UNDER_TEST

if [ ! -x "$prog" ]; then
	echo "FAIL: $prog not built (make check builds it)"
	echo "0 passed, 1 failed"
	exit 1
fi
mkdir -p "$outdir"

# result FILE CHECK: PASS, FAIL, SKIP, or MISSING (the run died first).
result() {
	r=$(sed -n "s/^\(PASS\|FAIL\|SKIP\) $2: .*/\1/p" "$1" | head -n 1)
	echo "${r:-MISSING}"
}

# detail FILE CHECK: the program's words after "CHECK: ".
detail() {
	sed -n "s/^\(PASS\|FAIL\|SKIP\) $2: //p" "$1" | head -n 1
}

# bounded OUTFILE COMMAND...: run under timeout; a time-out is noted in the file.
bounded() {
	out=$1
	shift
	timeout -k 5 "$limit" "$@" >"$out" 2>"$out.err"
	rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "(the whole run timed out after $limit s)" >>"$out"
	fi
}

checks=$("$prog" --list)
"$prog" --differences >"$outdir/$variant.differences"
native=$outdir/$variant.native.out

# The program against glibc itself: every check must pass (or be skipped).
bounded "$native" env RWLOCK_UNDER_TEST=glibc EXPECT_RWLOCK_LIB=libc.so.6 "$prog"
for c in $checks; do
	n=$(result "$native" "$c")
	case $n in
	PASS | SKIP)
		if [ "$variant" = glibc ]; then
			echo "$n: native: $c"
			passed=$((passed + 1))
		fi
		;;
	*)
		echo "FAIL: native: $c ($n without preload: the check itself is wrong, or the machine too loaded): $(detail "$native" "$c")"
		failed=$((failed + 1))
		;;
	esac
done

v=$variant
if [ "$v" != glibc ]; then
	lib=$build/src/.libs/libbravo-$v.so
	out=$outdir/$v.out
	bounded "$out" env LD_PRELOAD="$lib" RWLOCK_UNDER_TEST=libbravo EXPECT_RWLOCK_LIB="libbravo-$v.so" "$prog"
	for c in $checks; do
		n=$(result "$native" "$c")
		r=$(result "$out" "$c")
		[ "$n" = PASS ] || [ "$n" = SKIP ] || continue # reported above
		if [ "$r" = PASS ]; then
			echo "PASS: $v: $c (native $n, $v PASS)"
			passed=$((passed + 1))
			continue
		fi
		reason=$(awk -v c="$c" -v v="$v" '$1 == c && $2 == v { $1 = ""; $2 = ""; sub(/^  /, ""); print; exit }' \
			"$outdir/$variant.differences")
		if [ -n "$reason" ]; then
			echo "XFAIL: $v: $c (native $n, $v $r; expected: $reason)"
			xfailed=$((xfailed + 1))
		else
			why=$(detail "$out" "$c")
			[ "$r" = MISSING ] && why=$(tail -n 3 "$out" "$out.err" | tr '\n' ' ')
			echo "FAIL: $v: $c (native $n, $v $r): $why"
			failed=$((failed + 1))
		fi
	done

	# Strict mode: only the library's own rules, no glibc to compare with.
	sout=$outdir/$v.strict.out
	bounded "$sout" env LD_PRELOAD="$lib" RWLOCK_UNDER_TEST=libbravo EXPECT_RWLOCK_LIB="libbravo-$v.so" \
		BRAVO_CHECK=1 "$prog" --strict
	scount=$(grep -c '^\(PASS\|FAIL\) ' "$sout" || true)
	if [ "$scount" -eq 0 ]; then
		echo "FAIL: $v: strict checks (no result): $(tail -n 3 "$sout" "$sout.err" | tr '\n' ' ')"
		failed=$((failed + 1))
	fi
	while read -r res name rest; do
		name=${name%:}
		case $res in
		PASS) echo "PASS: $v: $name (BRAVO_CHECK=1)"; passed=$((passed + 1)) ;;
		FAIL) echo "FAIL: $v: $name (BRAVO_CHECK=1): $rest"; failed=$((failed + 1)) ;;
		esac
	done <"$sout"
fi

secs=$(echo "$start $(now)" | awk '{ printf "%.1f", $2 - $1 }')
echo "$passed passed, $failed failed ($xfailed expected differences, $secs s)"
[ "$failed" -eq 0 ]
