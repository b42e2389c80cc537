#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# run.sh ROUNDS THREADS SECS HOT_SHARE HOT_W COLD_W
R=$1; shift  # run from the folder holding ./mixed; before = libraries of 5a59dfb in /tmp/head-libs
for i in $(seq "$R"); do
  for spec in glibc= before-bp=/tmp/head-libs/libbravo-bravo-pthread.so after-bp=/work/main/src/.libs/libbravo-bravo-pthread.so ba=/work/main/src/.libs/libbravo-ba.so before-bb=/tmp/head-libs/libbravo-bravo-ba.so after-bb=/work/main/src/.libs/libbravo-bravo-ba.so; do
    name=${spec%%=*}; lib=${spec#*=}
    echo "$i $name $(LD_PRELOAD=$lib ./mixed "$@")"
  done
done
