#!/bin/bash
# usage: run1.sh LIB|none T [ENV=VAL...]: unordered_map phase only; prints reads/s and per-thread cpu
lib=$1; T=$2; shift 2
bin=/root/.cache/libbravo/hash_table_bench-7.8.3-2
out=$(mktemp /tmp/htb/o.XXXX)
pre=(); [ "$lib" = none ] || pre=(LD_PRELOAD=$lib)
env "$@" "${pre[@]}" $bin -nthread_read=$T -nsec=5 >$out 2>&1 &
pid=$!
want=$((T+3))
while [ $(ls /proc/$pid/task 2>/dev/null | wc -l) -lt $want ]; do sleep 0.05; done
sleep 1
snap() { for t in /proc/$pid/task/*; do echo "$(basename $t) $(awk '{print $14, $15}' $t/stat) $(grep -E '^(voluntary|nonvoluntary)' $t/status | awk '{printf "%s ", $2}')"; done; }
snap > $out.a; sleep 3; snap > $out.b
cpu=$(join $out.a $out.b | awk '{printf "%d/%d/%d/%d ", $6-$2+$7-$3, $8-$4, $9-$5, 0}')
while ! grep -q "ops/sec" $out; do sleep 0.2; done
kill $pid; wait $pid 2>/dev/null
echo "$(basename $lib) T=$T $* $(grep -E 'read/sec|insert/sec|erases/sec' $out | head -3 | awk '{printf "%s %.0f ", $1, $3}') cpu(ticks/vcs/nvcs): $cpu"
rm -f $out $out.a $out.b
