#!/bin/sh
# one db_bench readwhilewriting run on a fresh database; $1 = reader threads
d=/dev/shm/bravo-dbb.$$; rm -rf "$d"
/usr/bin/db_bench --threads="$1" --benchmarks=fillseq,readwhilewriting --duration=3 --memtablerep=skip_list --inplace_update_support=1 --allow_concurrent_memtable_write=0 --num=10000 --inplace_update_num_locks=1 --stats_interval=10000000 --db="$d"
r=$?; rm -rf "$d"; exit $r
