#!/usr/bin/env python3
"""Judge one phase of hash_table_bench from the runs bravo-compare kept.

usage: phase-verdict.py OUTDIR [OUTDIR...] REGEX

OUTDIR: a bravo-compare --output-dir (files NNN-rROUND-LOCK.out); the
rounds of a later OUTDIR are numbered after those of the earlier ones,
so that two invocations of the same command count as one.  REGEX:
the figure, as bravo-compare's --metric (its first group, last match).
Prints bravo-compare's table (the same statistics, imported from
scripts/bravo-compare), higher is better.  Used for RocksDB's 256-stripe
hash_map, the second phase of the same runs that bravo-compare judged on
the first (unordered_map).
"""
import importlib.machinery
import importlib.util
import os
import re
import sys
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, '..', '..', '..', 'scripts', 'bravo-compare')


def load_tool():
    loader = importlib.machinery.SourceFileLoader('bravo_compare', TOOL)
    spec = importlib.util.spec_from_loader('bravo_compare', loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def main(argv):
    if len(argv) < 3:
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        return 2
    regex = re.compile(argv[-1], re.MULTILINE)
    bc = load_tool()
    name = re.compile(r'^(\d+)-r(\d+)-(.+)\.out$')
    runs, locks = [], []
    offset = 0
    for outdir in argv[1:-1]:
        last = 0
        for f in sorted(os.listdir(outdir)):
            m = name.match(f)
            if not m:
                continue
            with open(os.path.join(outdir, f), errors='replace') as fh:
                fig = bc.figure_from(fh.read(), regex)
            lock = m.group(3)
            if lock not in locks:
                locks.append(lock)
            last = max(last, int(m.group(2)))
            runs.append({'seq': int(m.group(1)), 'round': offset + int(m.group(2)),
                         'lock': lock, 'status': 'ok' if fig else 'no figure',
                         'value': fig[0] if fig else None})
        offset += last
    args = SimpleNamespace(stats=False, alpha=0.05)
    bc.print_table(runs, locks, args, 'higher', sys.stdout)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
