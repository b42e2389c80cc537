# SPDX-License-Identifier: BSD-2-Clause
# lib.sh - sourced by the tests in tests/tools/rocksdb: where the harnesses and the
# built libraries are, a scratch directory removed at exit, and checks that
# print what failed.
#
# The tests run from the build tree (make check sets abs_top_builddir and
# srcdir), or by hand from a built source tree.
set -eu

build=${abs_top_builddir:-$(pwd)}
top_src=$(cd "$(dirname "$0")/../../.." && pwd)
libdir=$build/src/.libs
db_bench_harness=$top_src/bench/drivers/rocksdb-db-bench
hash_harness=$top_src/bench/drivers/rocksdb-hash-table-bench
fakes=$top_src/tests/tools/rocksdb
test_name=$(basename "$0")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/$test_name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

fail() {
	echo "FAIL: $test_name: $*"
	for f in "$tmp/out" "$tmp/err"; do
		[ -s "$f" ] && { echo "--- $f (tail)"; tail -15 "$f"; }
	done
	exit 1
}

# run_h HARNESS ARGS...: stdout to $tmp/out, stderr to $tmp/err; sets rc.
run_h() {
	rc=0
	"$@" >"$tmp/out" 2>"$tmp/err" </dev/null || rc=$?
}

expect_rc() {
	[ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"
}

expect_err() {
	grep -q -e "$1" "$tmp/err" || fail "stderr lacks '$1'"
}

# csv_col FILE NAME: the values of column NAME (header row 1), one per line.
csv_col() {
	awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next }
		c { print $c }' "$1"
}

# expect_positive_numbers FILE COLUMN ROWS: COLUMN has ROWS values, each a
# number > 0.
expect_positive_numbers() {
	n=$(csv_col "$1" "$2" | awk '$1 ~ /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/ && $1 + 0 > 0' | wc -l)
	[ "$n" -eq "$3" ] || fail "$1: column $2 has $n positive numbers, expected $3: $(csv_col "$1" "$2" | tr '\n' ' ')"
}

need_libs() {
	for v in "$@"; do
		[ -f "$libdir/libbravo-$v.so" ] || fail "no $libdir/libbravo-$v.so: build first"
	done
}

pass() {
	echo "PASS: $test_name"
	exit 0
}
