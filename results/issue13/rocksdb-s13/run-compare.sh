#!/bin/sh
# Thirteenth session: one phase of hash_table_bench judged by bravo-compare's
# own verdict, 7 interleaved rounds at -nsec=5 with T reader threads.  Every
# run's output is kept in out-tT[SUFFIX]/, so that the other phase can be
# judged from the same runs (phase-verdict.py).  Build 0127a57.
# usage: run-compare.sh T LIBDIR [LOCKS [PHASE [SUFFIX]]]
#   LOCKS   default glibc,bravo-pthread,bravo-ba
#   PHASE   unordered_map (the first phase, default) or hash_map
#   SUFFIX  appended to out-tT and to the CSV's name (default none)
# The runs of this session:
#   run-compare.sh 1|2|4 /tmp/old                              -> out-t1, out-t2, out-t4
#   run-compare.sh 4 /tmp/old glibc,bravo-ba hash_map b        -> out-t4b
#   run-compare.sh 4 /tmp/old glibc,bravo-pthread,ba unordered_map c -> out-t4c
T=$1; LIBDIR=$2; LOCKS=${3:-glibc,bravo-pthread,bravo-ba}; PHASE=${4:-unordered_map}; SUFFIX=$5
case $PHASE in
unordered_map) METRIC='std::unordered_map[\s\S]*?ops/sec = ([0-9.]+)'; STEM=unordered-map ;;
hash_map) METRIC='scalable hash map[\s\S]*?ops/sec = ([0-9.]+)'; STEM=hash-map ;;
*) echo "usage: run-compare.sh T LIBDIR [LOCKS [unordered_map|hash_map [SUFFIX]]]" >&2; exit 2 ;;
esac
BIN=$HOME/.cache/libbravo/hash_table_bench-7.8.3-2
here=$(dirname "$0")
exec /work/main/scripts/bravo-compare --libdir "$LIBDIR" --locks "$LOCKS" \
	--runs 7 --timeout 400 --verbose \
	--metric "$METRIC" --higher-is-better \
	--output-dir "$here/out-t$T$SUFFIX" --csv "$here/$STEM-t$T$SUFFIX.csv" \
	-- "$BIN" -nthread_read="$T" -nsec=5
