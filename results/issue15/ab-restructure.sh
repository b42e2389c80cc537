#!/bin/bash
# ab.sh LOCK ROUNDS: db_bench readwhilewriting with the profile on, old (67d54b9) vs new build, interleaved
lock=$1; rounds=$2
D=$(mktemp -d /dev/shm/ab.XXXX)
run() { rm -rf $D/db; BRAVO_PROFILE_FILE=$D/p.csv LD_PRELOAD=$1 /usr/bin/db_bench --threads=2 --benchmarks=fillseq,readwhilewriting --duration=3 --memtablerep=skip_list --inplace_update_support=1 --allow_concurrent_memtable_write=0 --num=10000 --inplace_update_num_locks=1 --stats_interval=10000000 --db=$D/db 2>&1 | awk '/^readwhilewriting/ {print $5}'; }
for r in $(seq 1 $rounds); do
  if [ $((r % 2)) = 1 ]; then o=$(run /tmp/pco/src/.libs/libbravo-$lock.so); n=$(run /work/main/src/.libs/libbravo-$lock.so);
  else n=$(run /work/main/src/.libs/libbravo-$lock.so); o=$(run /tmp/pco/src/.libs/libbravo-$lock.so); fi
  echo "$r $lock old $o new $n ratio $(awk "BEGIN{print $n/$o}")"
done
rm -rf $D
