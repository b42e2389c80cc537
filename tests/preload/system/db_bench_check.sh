#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# db_bench_check.sh LIB - Debian's /usr/bin/db_bench (a real, unmodified
# binary: librocksdb binds pthread_rwlock_*@GLIBC_2.34, libgflags
# @GLIBC_2.2.5) runs under LD_PRELOAD=LIB, and both symbol versions bind to
# LIB.  Exit 0 on success, 1 with a message on failure.
set -u
lib=$1
db_bench=${DB_BENCH:-/usr/bin/db_bench}
[ -x "$db_bench" ] || { echo "db_bench_check: $db_bench not found (install rocksdb-tools)"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
LD_DEBUG=bindings LD_DEBUG_OUTPUT="$tmp/bind" LD_PRELOAD="$lib" \
	timeout 120 "$db_bench" --benchmarks=fillseq,readrandom,readwhilewriting --num=2000 \
	--threads=2 --duration=1 --db="$tmp/db" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] || { echo "db_bench_check: db_bench exited $rc"; tail -5 "$tmp/out"; exit 1; }
grep -q 'readrandom' "$tmp/out" || { echo "db_bench_check: no readrandom result"; exit 1; }
name=$(basename "$lib")
for ver in GLIBC_2.34 GLIBC_2.2.5; do
	if ! cat "$tmp"/bind.* | grep "to [^ ]*/$name \[0\]: normal symbol \`pthread_rwlock_rdlock' \[$ver\]" >/dev/null &&
	   ! cat "$tmp"/bind.* | grep "to [^ ]*/$name \[0\]: normal symbol \`pthread_rwlock_[a-z]*' \[$ver\]" >/dev/null; then
		echo "db_bench_check: no pthread_rwlock_* [$ver] reference bound to $name"
		exit 1
	fi
done
if cat "$tmp"/bind.* | grep "librocksdb[^ ]* \[0\] to [^ ]*libc.so.6 \[0\]: normal symbol \`pthread_rwlock_" >/dev/null; then
	echo "db_bench_check: librocksdb still binds a pthread_rwlock function to libc"
	exit 1
fi
echo "db_bench_check: db_bench ran under $name; GLIBC_2.34 and GLIBC_2.2.5 references bound to it"
