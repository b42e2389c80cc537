#!/bin/sh
# Thirteenth session: hash_table_bench's one-lock map (unordered_map, the
# first phase) judged by bravo-compare's own verdict, 7 interleaved rounds
# at -nsec=5, T reader threads; every run's output is kept in out-tT/ so
# that the second phase (RocksDB's 256-stripe hash_map) can be judged
# from the same runs (hash-map-verdict.py).  Build 0127a57.
# usage: run-compare.sh T LIBDIR
T=$1; LIBDIR=$2
BIN=$HOME/.cache/libbravo/hash_table_bench-7.8.3-2
here=$(dirname "$0")
exec /work/main/scripts/bravo-compare --libdir "$LIBDIR" --locks glibc,bravo-pthread,bravo-ba \
	--runs 7 --timeout 400 --verbose \
	--metric 'std::unordered_map[\s\S]*?ops/sec = ([0-9.]+)' --higher-is-better \
	--output-dir "$here/out-t$T" --csv "$here/unordered-map-t$T.csv" \
	-- "$BIN" -nthread_read="$T" -nsec=5
