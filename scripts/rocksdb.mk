# SPDX-License-Identifier: BSD-2-Clause
# automake fragment, included from Makefile.am
# ---- RocksDB harnesses (scripts/rocksdb-*; tests: tests/tools/rocksdb): front
# ends over tools/bravo_runner.py, sharing scripts/rocksdb_harness.py ----
# The harnesses run unmodified RocksDB binaries (Debian's db_bench, and
# hash_table_bench built from Debian's rocksdb source) under every variant.
dist_noinst_SCRIPTS += scripts/rocksdb-db-bench scripts/rocksdb-hash-table-bench
EXTRA_DIST += scripts/rocksdb_harness.py

# Run the harnesses' figures on this machine (long: see doc/benchmarking.md, "RocksDB harnesses").
rocksdb-figures:
	$(srcdir)/scripts/rocksdb-db-bench --libdir $(abs_top_builddir)/src/.libs --out rocksdb-fig5
	$(srcdir)/scripts/rocksdb-hash-table-bench --libdir $(abs_top_builddir)/src/.libs --out rocksdb-fig6
.PHONY: rocksdb-figures
