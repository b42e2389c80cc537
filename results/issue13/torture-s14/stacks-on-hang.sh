#!/bin/bash
# run oversubscribed under bravo-pthread until a run exceeds 20 s; then dump stacks.
# Without EXPECT_RWLOCK_LIB the changed test times writes to its writer-preferring locks too (the old rule).
cd "${BUILD:-.}"
for i in $(seq 1 ${1:-200}); do
  LD_PRELOAD=$PWD/src/.libs/libbravo-bravo-pthread.so ./tests/torture/oversubscribed > ${TMPDIR:-/tmp}/out.$i 2>&1 &
  pid=$!
  for t in $(seq 1 200); do sleep 0.1; kill -0 $pid 2>/dev/null || break; done
  if kill -0 $pid 2>/dev/null; then
    echo "HANG at run $i pid $pid"
    gdb -p $pid -batch -ex "p/x locks" -ex "p guard" -ex "thread apply all bt full" > ${TMPDIR:-/tmp}/bt.$i 2>&1
    kill -9 $pid
    exit 1
  fi
  wait $pid; rc=$?
  [ $rc -ne 0 ] && { echo "run $i rc $rc"; tail -5 ${TMPDIR:-/tmp}/out.$i; }
  rm -f ${TMPDIR:-/tmp}/out.$i
done
echo "no hang in $i runs"
