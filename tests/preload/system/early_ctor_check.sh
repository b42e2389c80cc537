#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# early_ctor_check.sh VARIANT LIB EARLY_LIB EARLY_TEST - locks first used in
# another library's constructor, before or after libbravo's own, under
# valgrind (memcheck) and with settings: early_ctor_test passes, valgrind
# reports no error (an invalid read or write: a heap block built before
# the settings or the topology were read, then overrun by a reset), and
# the start-up line shows the configured parameters.
set -u
variant=$1 lib=$2 early=$3 prog=$4
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

bad() { echo "early_ctor_check: $*"; fail=1; }

command -v valgrind >/dev/null 2>&1 || { bad "valgrind not installed (scripts/setup-debian installs it)"; exit 1; }

case $variant in
cohort-rw) want="nodes=2 handoff=3" ;;
bravo-*) want="table=1d table_slots=8192" ;;
percpu) want="sublocks=$(getconf _NPROCESSORS_ONLN)" ;;
*) want="" ;;
esac

for order in first second; do
	if [ $order = first ]; then preload="$lib $early"; else preload="$early $lib"; fi
	# early_ctor_lib's constructor runs first when it is named last.
	# (valgrind's launcher is preloaded too: its own start-up line is the first.)
	timeout -k 10 240 env LD_PRELOAD="$preload" EXPECT_RWLOCK_LIB="libbravo-$variant.so" BRAVO_VERBOSE=1 BRAVO_TABLE=1d BRAVO_TABLE_SIZE=8192 \
		BRAVO_COHORT_NODES=2 BRAVO_COHORT_HANDOFF=3 valgrind -q --error-exitcode=9 \
		"$prog" >"$tmp/$order.out" 2>"$tmp/$order.err"
	rc=$?
	if [ $rc -eq 9 ] || grep -q '^==[0-9]*== ' "$tmp/$order.err"; then
		bad "early-ctor-$order: valgrind found errors:"
		grep '^==[0-9]*== ' "$tmp/$order.err" | head -n 30
	elif [ $rc -ne 0 ]; then
		bad "early-ctor-$order: exit $rc: $(tail -n 5 "$tmp/$order.err")"
	fi
	# The program's start-up line: the last one.
	line=$(grep "^libbravo: variant=$variant " "$tmp/$order.err" | tail -n 1)
	[ -n "$line" ] || bad "early-ctor-$order: no start-up line: $(tail -n 5 "$tmp/$order.err")"
	for kv in $want; do
		echo "$line" | grep -q "[[:space:]]$kv\([[:space:]]\|\$\)" ||
			bad "early-ctor-$order: the start-up line lacks $kv: $line"
	done
done
[ $fail -eq 0 ] && echo "early_ctor_check: $variant: locks used in an early constructor, re-initialized and reused, clean under valgrind, settings as configured ($want)"
exit $fail
