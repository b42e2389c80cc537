#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# leak_check.sh VARIANT LIB LEAK_TEST - leak_test under valgrind (memcheck)
# and the variant: no block lost (definitely, indirectly or possibly: each
# is an error), and what is still reachable at exit within a bound derived
# from what the program does.
#
# The bound.  The heap variants (percpu, cohort-rw) keep one block per lock
# address in their registry (src/variants/registry.h): programs free locks without
# pthread_rwlock_destroy, and glibc's destroy, like the default mode's,
# changes nothing, so the block stays with its address until a new lock
# there takes it back.  That memory is bounded by the number of distinct
# lock addresses, which leak_test prints (its heap locks and its static
# ones; valgrind does not hand a freed address out again before 20 MB of
# later frees, so under valgrind every heap lock has an address of its
# own).  Per address: the block, lock_bytes from the start-up line
# (BRAVO_VERBOSE=1), and at most 64 bytes of bookkeeping (a 40-byte
# registry entry and at most two 8-byte bucket pointers, the table doubling
# when its load reaches 1).  Plus 64 KiB for what does not grow with the
# locks (the CPU table, the 64 shards' first buckets).  The variants
# without a registry (no lock_bytes) get the 64 KiB only: today they leave
# nothing.  Freeing the registry at exit instead is not safe: another
# library's destructors and threads still running may use their locks
# after ours has run.
set -u
variant=$1 lib=$2 prog=$3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

command -v valgrind >/dev/null 2>&1 || {
	echo "leak_check: valgrind not installed (scripts/setup-debian installs it)"
	exit 1
}
env LD_PRELOAD="$lib" EXPECT_RWLOCK_LIB="libbravo-$variant.so" BRAVO_VERBOSE=1 \
	valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect,possible \
	--error-exitcode=9 "$prog" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ]; then
	echo "leak_check: $variant: exit $rc (9: valgrind found errors or lost blocks):"
	tail -n 40 "$tmp/err"
	exit 1
fi

# The program's start-up line is the last (valgrind's launcher has one too).
line=$(grep "^libbravo: variant=$variant " "$tmp/err" | tail -n 1)
[ -n "$line" ] || { echo "leak_check: $variant: no start-up line"; tail -n 5 "$tmp/err"; exit 1; }
lock_bytes=$(echo "$line" | sed -n 's/.* lock_bytes=\([0-9]*\).*/\1/p')
addresses=$(sed -n 's/^leak_test: done, \([0-9]*\) lock addresses$/\1/p' "$tmp/out")
[ -n "$addresses" ] || { echo "leak_check: $variant: leak_test did not finish:"; cat "$tmp/out"; exit 1; }
in_use=$(sed -n 's/^==[0-9]*== *in use at exit: \([0-9,]*\) bytes.*/\1/p' "$tmp/err" | tr -d ,)
[ -n "$in_use" ] || { echo "leak_check: $variant: no heap summary from valgrind"; tail -n 20 "$tmp/err"; exit 1; }

fixed=65536
per_address=0
[ -z "$lock_bytes" ] || per_address=$((lock_bytes + 64))
bound=$((addresses * per_address + fixed))
how="$addresses lock addresses x (${lock_bytes:-0} lock_bytes + 64 registry) + 64 KiB"
[ -n "$lock_bytes" ] || how="no registry: 64 KiB"
if [ "$in_use" -gt "$bound" ]; then
	echo "leak_check: $variant: $in_use bytes still reachable at exit, over the bound $bound ($how):"
	grep '^==[0-9]*== ' "$tmp/err" | tail -n 20
	exit 1
fi
echo "leak_check: $variant: nothing lost; $in_use bytes still reachable at exit, bound $bound ($how)"
