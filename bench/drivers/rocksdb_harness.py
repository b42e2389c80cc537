# SPDX-License-Identifier: BSD-2-Clause
"""rocksdb_harness - what bench/drivers/rocksdb-db-bench and
bench/drivers/rocksdb-hash-table-bench share, over bravo_runner: the lock
resolution, the Runner of their runs (statistics at exit proved with
--stats), the stop on the first run that fails or is not proved ('PRELOAD
DID NOT TAKE EFFECT'), the clean-up of their directories on exit and on a
signal, the summary (median, min, max) and the figures in the tools' one
style.

Invariants:
- at most one benchmark runs at a time (the Runner's); a signal ends it
  and its process group, removes the registered directories and exits
  128 + the signal (130 for Ctrl-C);
- a run counts only if it exited 0 within the timeout and proved its lock:
  a variant's start-up line, and with --stats its statistics at exit (a
  wrapper that drops LD_PRELOAD and execs the benchmark prints the line
  but no statistics); a run under glibc no libbravo line.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

import benchfig
import bravo_plot
import bravo_runner as runner
import bravo_stats as stats

# The lock each variant is judged against: the one it wraps (issue 34,
# item 3b; benchfig.UNDERLYING).  BRAVO-BA's slow path is BA's, so BA,
# not glibc, is the lock it must not fall below; BRAVO-pthread wraps
# glibc's own rwlock.  Every other comparison with glibc is reported as
# information, not judged.
UNDERLYING = benchfig.UNDERLYING
VERDICT_FIELDS = ['phase', 'threads', 'lock', 'baseline', 'role', 'rounds', 'lock_median',
                  'baseline_median', 'glibc_median', 'ratio_median', 'ratio_low',
                  'ratio_high', 'p', 'verdict']
ALPHA = 0.05


class Harness:
    """One harness's process: its name, its scratch directory, the
    directories to remove at exit, its runner."""

    def __init__(self, prog):
        self.prog = prog
        self.dirs = []
        self.tmp = None
        self.runner = None

    def note(self, text):
        print('%s: %s' % (self.prog, text), file=sys.stderr, flush=True)

    def die(self, text):
        print('%s: error: %s' % (self.prog, text), file=sys.stderr, flush=True)
        self.cleanup()
        sys.exit(1)

    def start(self):
        """The scratch directory, and the clean-up on a signal."""
        self.tmp = tempfile.mkdtemp(prefix=self.prog + '.')
        self.dirs.append(self.tmp)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self.on_signal)

    def register(self, path):
        self.dirs.insert(0, path)

    def on_signal(self, signum, frame):
        raise runner.Interrupted(signum)

    def interrupted(self, signum):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        self.note('interrupted: stopping the benchmark and removing its files')
        if self.runner:
            self.runner.stop()
        self.cleanup()
        return runner.exit_status_of(signum)

    def cleanup(self):
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.dirs = []

    def make_runner(self, environment, timeout, stats_on, profile=False):
        self.runner = runner.Runner(self.tmp, environment, timeout=timeout, stats=stats_on,
                                    keep=False, prog=self.prog, stats_must_count=False,
                                    profile=profile)
        return self.runner

    def check(self, run, what):
        """Dies unless the run counts, saying why (its stderr's tail for a
        failed one; 'PRELOAD DID NOT TAKE EFFECT' for an unproved one)."""
        if run.status == 'timeout':
            self.die('run %s timed out after %g s' % (what, self.runner.timeout))
        if run.status == 'failed':
            for line in run.stderr().strip().splitlines()[-5:]:
                print(line, file=sys.stderr)
            self.die('run %s: %s %s' % (what, os.path.basename(run.argv[0]), run.detail))
        if run.status == 'unverified':
            self.die('PRELOAD DID NOT TAKE EFFECT in run %s: %s (does the binary, or a '
                     'wrapper, drop LD_PRELOAD? is it setuid or statically linked?); results '
                     'would be meaningless, stopping' % (what, run.detail))


def resolve(harness_parser, names, libdir):
    """The Locks of names (default: glibc and every variant built)."""
    libraries = runner.find_libraries(libdir)
    try:
        return runner.resolve_locks(names or runner.default_lock_names(libraries),
                                    libraries, libdir)
    except runner.UsageError as e:
        harness_parser.exit_usage(str(e))
    except runner.Fatal as e:
        print('%s: error: %s' % (harness_parser.prog, e), file=sys.stderr)
        sys.exit(1)


def glibc_profile_lock(h, locks, libdir):
    """locks with glibc's replaced by glibc's lock behind libbravo's
    pass-through (LIBDIR/libbravo/libbravo-glibc.so), which profiles it:
    a plain glibc run has no profile.  Dies when the library is missing."""
    if not any(lock.name == runner.BASELINE for lock in locks):
        return locks
    path = os.path.join(libdir, 'libbravo', 'libbravo-glibc.so')
    if not os.path.isfile(path):
        h.die("--profile needs %s (glibc's lock behind libbravo's interposition) for the glibc "
              "runs, which is not there (build it with make, or leave glibc out of --locks)"
              % path)
    try:
        library = runner.check_preloadable(path)
    except runner.Fatal as e:
        h.die(str(e))
    return [runner.Lock(lock.name, library) if lock.name == runner.BASELINE else lock
            for lock in locks]


def check_binary(h, path):
    if not os.path.exists(path):
        h.die("benchmark binary '%s' not found" % path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        h.die("benchmark binary '%s' is not an executable file" % path)


def stat_of(run, key):
    """libbravo's count KEY of a run with statistics, else ''."""
    if not run.stats or not run.stats.get('blocks'):
        return ''
    return str(run.stats.get(key, 0))


def load_1m():
    load = runner.load_average()
    return '' if load is None else '%.2f' % load


def median_min_max_text(values):
    """'median, min, max' as %.6g, and the count; '-' for none."""
    if not values:
        return '-', '-', '-', 0
    med, lo, hi = stats.median_min_max(values)
    return '%.6g' % med, '%.6g' % lo, '%.6g' % hi, len(values)


def numbers(texts):
    out = []
    for t in texts:
        try:
            out.append(float(t))
        except (TypeError, ValueError):
            pass
    return out


def in_order(values):
    """values without repeats, in first-seen order."""
    seen, out = set(), []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def figure(h, png, title, ylabel, series, libdir):
    """The figure of series [(lock, [(threads, median, min, max)])], in the
    tools' style; without gnuplot, a note (the CSV is the result)."""
    if shutil.which('gnuplot') is None:
        h.note('gnuplot not found (Debian: gnuplot-nox): no figure %s' % png)
        return
    series = [(lock, pts) for lock, pts in series if pts]
    if not series:
        h.note('no data point to plot: no figure %s' % png)
        return
    styles = bravo_plot.lock_styles([l for l, _ in series], runner.find_libraries(libdir))
    try:
        bravo_plot.line_figure(png, title, 'threads', ylabel, series, styles)
    except bravo_plot.PlotError as e:
        h.die(str(e))


def judged_pairs(locks):
    """[(lock, baseline, role)] for the locks run: each variant of
    UNDERLYING against its underlying lock ('target') when that ran too;
    every other lock, and a variant whose target is not glibc, against
    glibc ('information')."""
    out = []
    for lock in locks:
        if lock == runner.BASELINE:
            continue
        target = UNDERLYING.get(lock)
        if target is not None and target in locks:
            out.append((lock, target, 'target'))
        if target != runner.BASELINE and runner.BASELINE in locks:
            out.append((lock, runner.BASELINE, 'information'))
    return out


def verdicts(rows, groups, value):
    """The paired comparisons of judged_pairs, per group.  rows: the CSV's
    dicts with 'rep' (the round: the locks of one rep ran interleaved) and
    'lock'; groups: [(group fields {name: value}, its rows)]; value: the
    column compared, higher is better.  Rows of VERDICT_FIELDS (and the
    group's fields)."""
    locks = in_order(r['lock'] for r in rows)
    out = []
    for fields, mine in groups:
        runs = [{'round': r['rep'], 'lock': r['lock'], 'status': 'ok', 'value': v}
                for r in mine for v in numbers([r[value]])]

        def med(lock):
            vals = [x['value'] for x in runs if x['lock'] == lock]
            return '%.6g' % stats.median(vals) if vals else ''
        for lock, baseline, role in judged_pairs(locks):
            c = stats.compare(runs, lock, 'higher', ALPHA, baseline)
            row = dict(fields, lock=lock, baseline=baseline, role=role, rounds=c['pairs'],
                       lock_median=med(lock), baseline_median=med(baseline),
                       glibc_median=med(runner.BASELINE), verdict=c['verdict'])
            if c['pairs']:
                row.update(ratio_median='%.4g' % c['ratio'],
                           ratio_low='%.4g' % c['interval'][0],
                           ratio_high='%.4g' % c['interval'][1], p='%.3g' % c['p'])
            out.append(row)
    return out


def verdict_text(rows, keys):
    """The verdict rows as an aligned table, then one line on the target:
    no variant significantly slower than the lock it wraps."""
    head = keys + ['lock', 'baseline', 'rounds', 'median', 'base median', 'glibc median', 'ratio',
                   '95% interval', 'p', 'verdict', 'role']
    table = [head]
    for r in rows:
        interval = '[%s, %s]' % (r['ratio_low'], r['ratio_high']) if r.get('ratio_low') else ''
        table.append([str(r[k]) for k in keys] + [
            r['lock'], r['baseline'], str(r['rounds']), r['lock_median'], r['baseline_median'],
            r['glibc_median'], r.get('ratio_median', ''), interval, r.get('p', ''), r['verdict'],
            r['role']])
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = ['  '.join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in table]
    targets = [r for r in rows if r['role'] == 'target']
    missed = [r for r in targets if r['verdict'] == 'slower']
    unjudged = sorted({'%s (%s not run)' % (l, b) for l, b in UNDERLYING.items()
                       if any(r['lock'] == l for r in rows) and
                       not any(r['lock'] == l and r['role'] == 'target' for r in rows)})
    what = ', '.join('%s against %s' % (l, b) for l, b in sorted(UNDERLYING.items()))
    if not targets:
        lines.append('target (%s): nothing to judge' % what)
    elif missed:
        lines.append('target (%s, never significantly slower): NOT MET: %s' % (what, '; '.join(
            '%s/%s %s %.3g (p %s)' % (r['lock'], r['baseline'],
                                      ' '.join('%s=%s' % (k, r[k]) for k in keys),
                                      float(r['ratio_median']), r['p']) for r in missed)))
    else:
        lines.append('target (%s, never significantly slower): met in all %d cells'
                     % (what, len(targets)))
    if unjudged:
        lines.append('not judged: %s' % ', '.join(unjudged))
    return '\n'.join(lines) + '\n'


def show_table(path):
    """The summary, as columns, on stderr."""
    try:
        subprocess.run(['column', '-s', ',', '-t', path], stdout=sys.stderr, check=True)
    except (OSError, subprocess.CalledProcessError):
        with open(path) as f:
            sys.stderr.write(f.read())
