#!/bin/sh
# Seven more rounds of glibc and bravo-ba at T = 4 (the near miss of the
# 256-stripe map), same command as run-compare.sh; outputs in out-t4b/.
# Judged together with out-t4/ by: phase-verdict.py out-t4 out-t4b REGEX
BIN=$HOME/.cache/libbravo/hash_table_bench-7.8.3-2
here=$(dirname "$0")
exec /work/main/scripts/bravo-compare --libdir "$1" --locks glibc,bravo-ba \
	--runs 7 --timeout 400 --verbose \
	--metric 'scalable hash map[\s\S]*?ops/sec = ([0-9.]+)' --higher-is-better \
	--output-dir "$here/out-t4b" --csv "$here/hash-map-t4b.csv" \
	-- "$BIN" -nthread_read=4 -nsec=5
