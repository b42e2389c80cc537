# automake fragment, included from Makefile.am
# ---- RocksDB harnesses (scripts/rocksdb-*, tests/rocksdb): front ends over
# scripts/bravo_runner.py, sharing scripts/rocksdb_harness.py ----
# The harnesses run unmodified RocksDB binaries (Debian's db_bench, and
# hash_table_bench built from Debian's rocksdb source) under every variant.
dist_noinst_SCRIPTS += scripts/rocksdb-db-bench scripts/rocksdb-hash-table-bench
EXTRA_DIST += scripts/rocksdb_harness.py

rocksdb_tests = \
	tests/rocksdb/db-bench-usage \
	tests/rocksdb/db-bench-missing-binary \
	tests/rocksdb/db-bench-unpreloaded \
	tests/rocksdb/db-bench-interrupt \
	tests/rocksdb/db-bench-two-variants \
	tests/rocksdb/db-bench-summarize \
	tests/rocksdb/hash-table-bench-usage \
	tests/rocksdb/hash-table-bench-errors \
	tests/rocksdb/hash-table-bench-parse \
	tests/rocksdb/hash-table-bench-unpreloaded \
	tests/rocksdb/hash-table-bench-interrupt \
	tests/rocksdb/hash-table-bench-summarize \
	tests/rocksdb/hash-table-bench-real
TESTS += $(rocksdb_tests)
EXTRA_DIST += $(rocksdb_tests) tests/rocksdb/lib.sh tests/rocksdb/fake-hash-table-bench

# Run the harnesses' figures on this machine (long: see doc/benchmarking.md, "RocksDB harnesses").
rocksdb-figures:
	$(srcdir)/scripts/rocksdb-db-bench --libdir $(abs_top_builddir)/src/.libs --out rocksdb-fig5
	$(srcdir)/scripts/rocksdb-hash-table-bench --libdir $(abs_top_builddir)/src/.libs --out rocksdb-fig6
.PHONY: rocksdb-figures
