# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
#
# ---- bench/service (issue 35): a key-value service of our own ----
# kv_server, a TCP key-value server whose striped table is guarded by
# pthread rwlocks, and kv_load, its load generator, which verifies every
# answer.  Plain pthread programs: the server runs on a variant under
# LD_PRELOAD, the load generator without it (bravo-run --compare --server).
# bench/README.md documents both; tests/tools/service/kv-check tests them.
noinst_PROGRAMS += bench/service/kv_server bench/service/kv_load
bench_service_kv_server_SOURCES = bench/service/kv_server.c bench/service/kv_proto.h
bench_service_kv_load_SOURCES = bench/service/kv_load.c bench/service/kv_proto.h
