# SPDX-License-Identifier: BSD-2-Clause
"""bravo_profile - libbravo's per-lock profiles (BRAVO_PROFILE_FILE, CSV;
libbravo(7), PROFILE) as the tools read them: one run's locks, and which
locks' waits differ most between two locks run on the same command, the
answer to "why is B slower than A on this program".  Python 3 standard
library only.

Invariants:
- A run's profile file may hold the reports of several processes (every
  process of the run appends its own, one header line for the file):
  rows are read as the header names them, repeated header lines skipped,
  and the "evicted" row (the lock lives evicted to keep within
  BRAVO_PROFILE_LOCKS records) kept apart.
- Locks are matched across runs by where the program made them and their
  kind (key_of): addresses differ between runs.  Every life of every
  process made at one call site with one kind adds to one entry.  The
  call site is the function and offset with its object's name, or the
  object's name and offset where no function is known; both are the same
  in every run of one binary.
- A comparison takes, per lock entry and per side, the median over that
  side's runs (a run where the entry does not appear counts 0: the lock
  was not made, or had no acquisition), of the time waited (readers' and
  writers'), of the waits and of the acquisitions.  It lists the entries
  whose median time waited differs most, largest difference first, ties
  by name; entries that differ in neither time nor number of waits are
  left out.
"""

import csv
import io
import os

from bravo_stats import median

HEADER_START = 'pid,variant,rank,'


def read_rows(path):
    """(rows, evicted) of a profile CSV file: the lock rows as dicts, and
    the acquisitions counted by lock lives evicted from the table.  ([], 0)
    for a missing or empty file."""
    try:
        with open(path, newline='') as f:
            text = f.read()
    except OSError:
        return [], 0
    lines = text.splitlines()
    if not lines or not lines[0].startswith(HEADER_START):
        return [], 0
    header = lines[0]
    body = [line for line in lines[1:] if line != header]
    rows, evicted = [], 0
    for row in csv.DictReader(io.StringIO('\n'.join([header] + body))):
        if row.get('state') == 'evicted':
            evicted += number(row.get('reads')) + number(row.get('writes'))
        else:
            rows.append(row)
    return rows, evicted


def has_report(path):
    """True when the file holds a profile (its header line)."""
    try:
        with open(path) as f:
            return f.readline().startswith(HEADER_START)
    except OSError:
        return False


def number(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return 0


def key_of(row):
    """(where the lock was made, its kind): the same in every run."""
    obj = os.path.basename(row.get('site_object') or '') or '?'
    where = row.get('site_function') or '%s+%s' % (obj, row.get('site_object_offset') or '?')
    return ('%s (%s)' % (where, obj), row.get('kind') or '?')


def source_of(row):
    return os.path.basename(row.get('site_source') or '')


def summarize(rows):
    """{key: {'wait_ns', 'waits', 'acquisitions', 'source'}} of one run."""
    out = {}
    for r in rows:
        k = key_of(r)
        e = out.setdefault(k, {'wait_ns': 0, 'waits': 0, 'acquisitions': 0,
                               'source': source_of(r)})
        e['wait_ns'] += number(r.get('read_wait_ns')) + number(r.get('write_wait_ns'))
        e['waits'] += number(r.get('read_waits')) + number(r.get('write_waits'))
        e['acquisitions'] += number(r.get('reads')) + number(r.get('writes'))
    return out


def medians(summaries):
    """{key: medians of each figure over the runs' summaries (0 where absent)}."""
    keys = set()
    for s in summaries:
        keys.update(s)
    out = {}
    for k in keys:
        entries = [s.get(k) for s in summaries]
        out[k] = {f: median([e[f] if e else 0 for e in entries])
                  for f in ('wait_ns', 'waits', 'acquisitions')}
        out[k]['source'] = next((e['source'] for e in entries if e and e['source']), '')
    return out


def differences(base_runs, other_runs, limit=5):
    """The entries whose median time waited differs most between two
    sides, each side a list of run summaries (summarize): a list of
    dicts (key, source, base and other medians, diff_ns), at most limit."""
    a, b = medians(base_runs), medians(other_runs)
    out = []
    zero = {'wait_ns': 0, 'waits': 0, 'acquisitions': 0, 'source': ''}
    for k in set(a) | set(b):
        ea, eb = a.get(k, zero), b.get(k, zero)
        if ea['wait_ns'] == eb['wait_ns'] and ea['waits'] == eb['waits']:
            continue
        out.append({'key': k, 'source': ea['source'] or eb['source'], 'base': ea, 'other': eb,
                    'diff_ns': eb['wait_ns'] - ea['wait_ns']})
    out.sort(key=lambda d: (-abs(d['diff_ns']), d['key']))
    return out[:limit]


def table(base_name, other_name, diffs):
    """Lines of the comparison of two locks' profiles (differences())."""
    lines = ['%s vs %s: the locks whose time waited differs most (medians over the runs)'
             % (other_name, base_name)]
    if not diffs:
        return lines + ['  no lock waited differently']
    header = ['call site (object) kind', 'source', '%s wait ms' % base_name,
              '%s wait ms' % other_name, 'diff ms', '%s waits' % base_name,
              '%s waits' % other_name, '%s acq' % base_name, '%s acq' % other_name]
    rows = [header]
    for d in diffs:
        rows.append(['%s %s' % d['key'], d['source'] or '-',
                     '%.3f' % (d['base']['wait_ns'] / 1e6), '%.3f' % (d['other']['wait_ns'] / 1e6),
                     '%+.3f' % (d['diff_ns'] / 1e6), figure(d['base']['waits']),
                     figure(d['other']['waits']), figure(d['base']['acquisitions']),
                     figure(d['other']['acquisitions'])])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        cells = [c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append('  ' + '  '.join(cells).rstrip())
    return lines


def figure(value):
    """A median: whole numbers as such, halves with one decimal."""
    return '%d' % value if value == int(value) else '%.1f' % value
