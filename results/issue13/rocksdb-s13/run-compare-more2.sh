#!/bin/sh
# Seven more rounds at T = 4 of glibc, bravo-pthread and ba (BA, the lock
# under bravo-ba), same command as run-compare.sh; outputs in out-t4c/.
# Judged with out-t4/ and out-t4b/ by phase-verdict.py (rounds renumbered).
BIN=$HOME/.cache/libbravo/hash_table_bench-7.8.3-2
here=$(dirname "$0")
exec /work/main/scripts/bravo-compare --libdir "$1" --locks glibc,bravo-pthread,ba \
	--runs 7 --timeout 400 --verbose \
	--metric 'std::unordered_map[\s\S]*?ops/sec = ([0-9.]+)' --higher-is-better \
	--output-dir "$here/out-t4c" --csv "$here/unordered-map-t4c.csv" \
	-- "$BIN" -nthread_read=4 -nsec=5
