#!/bin/bash
# count.sh N LIB EXPECT: run oversubscribed N times under LIB (empty: none), with EXPECT_RWLOCK_LIB=EXPECT
# (empty: unset); a run still going after 20 s is a hang (killed); prints counts.
cd "${BUILD:-.}"
n=$1 lib=$2 exp=$3 hangs=0 fails=0
for i in $(seq 1 $n); do
  env ${lib:+LD_PRELOAD=$lib} ${exp:+EXPECT_RWLOCK_LIB=$exp} ${RUT:+RWLOCK_UNDER_TEST=$RUT} ${PROG:-./tests/torture/oversubscribed} > ${TMPDIR:-/tmp}/c.out 2>&1 &
  pid=$!
  for t in $(seq 1 200); do sleep 0.1; kill -0 $pid 2>/dev/null || break; done
  if kill -0 $pid 2>/dev/null; then hangs=$((hangs+1)); kill -9 $pid; wait $pid 2>/dev/null; continue; fi
  wait $pid || { fails=$((fails+1)); tail -3 ${TMPDIR:-/tmp}/c.out; }
done
echo "runs=$n hangs=$hangs fails=$fails lib=${lib:-none} expect=${exp:-unset} RWLOCK_UNDER_TEST=${RUT:-unset}"
