# SPDX-License-Identifier: BSD-2-Clause
"""bravo_runner - run a command under a lock, prove that the lock was the
one it ran on, interleave the locks in rounds, and hand back every run.
The one runner of libbravo's tools: bravo-compare (bravo-run --compare),
bench-sweep, noharm-sweep, native-compare and the RocksDB harnesses are
front ends over it.  Python 3 standard library only.

A lock is glibc (BASELINE: no preload, glibc's own rwlock) or a libbravo
variant, the library libbravo-NAME.so of a library directory; the names
are those of the libraries found there, never a list kept here.

The preload policy, the same for every tool (Environment):
- the libbravo libraries an inherited LD_PRELOAD holds are dropped from
  every run, with one note on stderr: a run is under its own lock only;
- the other entries (an allocator, say) are kept, on every side, glibc's
  included, so the comparison stays fair; a tool's own extra preloads
  (--allocator) come after them; the variant's library comes last;
- BRAVO_STATS, BRAVO_STATS_FILE, BRAVO_PROFILE, BRAVO_PROFILE_FILE and
  BRAVO_VERBOSE are not inherited; every run has BRAVO_VERBOSE=1, and
  statistics or a profile only when the tool asks.

Invariants:
- At most one command runs at a time; it runs in a session of its own,
  bounded by the timeout, and a timeout or a signal to the tool (Ctrl-C,
  SIGTERM, SIGHUP: Interrupted) ends its whole process group.
- A run is 'ok' only if it exited 0 within the timeout and its stderr
  proves the lock (proof_failure): a variant's runs print at least one
  "libbravo: variant=NAME" start-up line and none naming another variant
  (with statistics also a report at exit that counted lock operations,
  with a profile a profile at exit); a run without a preload prints none.  Front ends may then judge an ok
  run further (its figure) and set another status.
- Rounds (run_rounds): round r runs its whole plan, in order, before round
  r+1; the records list grows by one record per run, in the order they
  ran, and keeps them when a run is interrupted (its status
  'interrupted').
"""

import contextlib
import csv
import glob
import os
import re
import signal
import subprocess
import sys
import time

import bravo_profile
from bravo_stats import median, median_min_max  # noqa: F401  (front ends' helpers)

BASELINE = 'glibc'
LIBRARY = re.compile(r'^libbravo-([A-Za-z0-9][A-Za-z0-9_.-]*)\.so$')
LOCK_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9_.-]*$')
STARTUP = re.compile(rb'^libbravo: variant=(\S+)', re.MULTILINE)
STATS_LINE = re.compile(r'^libbravo\.(\w+)=([0-9]+)$')
PRIVATE_SUFFIX = '-private'       # benchmark-only builds (bench/README.md)


class UsageError(Exception):
    """A bad command line (exit 2)."""


class Fatal(Exception):
    """Nothing can be measured: a library or program is missing (exit 1)."""


class Interrupted(Exception):
    """A signal to the tool; signum says which."""

    def __init__(self, signum=signal.SIGINT):
        Exception.__init__(self, signum)
        self.signum = signum


class RunTimeout(Exception):
    pass


# ---- the locks ----------------------------------------------------------

class Lock:
    """A lock to run under: name, and the library to preload (None: none)."""

    def __init__(self, name, library=None):
        self.name = name
        self.library = library

    def __repr__(self):
        return 'Lock(%r, %r)' % (self.name, self.library)


def build_tree_libdir(top):
    """Where the libraries of a build tree whose top directory is top are."""
    return os.path.join(os.path.abspath(top), 'src', '.libs')


def find_libraries(libdir, private=False):
    """{name: path} of the libbravo-NAME.so in libdir, by name; the
    benchmark-only NAME-private ones only when private is true."""
    found = {}
    for path in sorted(glob.glob(os.path.join(glob.escape(libdir), 'libbravo-*.so'))):
        m = LIBRARY.match(os.path.basename(path))
        if m and os.path.isfile(path) and (private or not m.group(1).endswith(PRIVATE_SUFFIX)):
            found[m.group(1)] = path
    return found


def default_lock_names(libraries):
    """glibc, then every variant found (not the benchmark-only ones)."""
    return [BASELINE] + sorted(n for n in libraries if not n.endswith(PRIVATE_SUFFIX))


def resolve_locks(names, libraries, libdir, baseline_first=False):
    """The Locks of names (glibc or a name in libraries {name: path}).
    UsageError for a bad or unknown name; Fatal when libdir holds no
    library at all (nothing built there).  baseline_first: glibc first,
    added when missing (a comparison against it)."""
    names = list(names)
    for n in names:
        if not LOCK_NAME.match(n):
            raise UsageError("bad lock name '%s'" % n)
    if len(set(names)) != len(names):
        raise UsageError('a lock is named twice in %s' % ','.join(names))
    if baseline_first:
        names = [BASELINE] + [n for n in names if n != BASELINE]
    locks = []
    for n in names:
        if n == BASELINE:
            locks.append(Lock(n))
        elif n in libraries:
            locks.append(Lock(n, check_preloadable(libraries[n])))
        elif libraries:
            raise UsageError("unknown lock '%s'; available: %s (in %s)"
                             % (n, ' '.join(default_lock_names(libraries)), libdir))
        else:
            raise Fatal('missing lock library %s (build it with make, or give --libdir DIR)'
                        % os.path.join(libdir, 'libbravo-%s.so' % n))
    return locks


def check_preloadable(path):
    """path, absolute; Fatal when ld.so could not take it from LD_PRELOAD."""
    path = os.path.abspath(path)
    if re.search(r'[\s:]', path):
        raise Fatal('cannot preload %s: a path in LD_PRELOAD cannot hold spaces or colons' % path)
    return path


# ---- the environment of a run: the one preload policy --------------------

def is_libbravo(entry):
    return os.path.basename(entry).startswith('libbravo')


class Environment:
    """The environment of every run (see the module's comment for the
    policy).  base: the tool's environment; extra_preload: the tool's own
    preloads; say: where the one note goes."""

    NOT_INHERITED = ('BRAVO_STATS', 'BRAVO_STATS_FILE', 'BRAVO_PROFILE', 'BRAVO_PROFILE_FILE',
                     'BRAVO_VERBOSE')

    def __init__(self, base=None, extra_preload=(), say=None):
        self.base = dict(os.environ if base is None else base)
        entries = [e for e in re.split(r'[ :]+', self.base.pop('LD_PRELOAD', '')) if e]
        self.dropped = [e for e in entries if is_libbravo(e)]
        self.kept = [e for e in entries if not is_libbravo(e)] + list(extra_preload)
        for name in self.NOT_INHERITED:
            self.base.pop(name, None)
        if self.dropped and say:
            say('the inherited LD_PRELOAD holds %s: left out of every run (each run '
                'preloads its own lock only)' % ' '.join(self.dropped))

    def preload(self, lock):
        """LD_PRELOAD's value for a run under lock ('' for none)."""
        return ' '.join(self.kept + ([lock.library] if lock.library else []))

    def for_run(self, lock, stats_file=None, extra=None, profile_file=None):
        env = dict(self.base)
        env['BRAVO_VERBOSE'] = '1'
        value = self.preload(lock)
        if value:
            env['LD_PRELOAD'] = value
        if stats_file and lock.library:
            env['BRAVO_STATS'] = '1'
            env['BRAVO_STATS_FILE'] = stats_file
        if profile_file and lock.library:
            # every lock in the file, so that runs can be matched lock by lock
            env['BRAVO_PROFILE_FILE'] = profile_file
            env['BRAVO_PROFILE_TOP'] = '0'
        env.update(extra or {})
        return env


# ---- one run ------------------------------------------------------------

class Run:
    """One run: where it stands in the plan (seq, round, lock, info: the
    front end's own fields), what it ran (argv) and what came of it."""

    def __init__(self, lock, argv, rnd=1, info=None, env=None):
        self.lock = lock
        self.argv = list(argv)
        self.round = rnd
        self.info = dict(info or {})
        self.env = dict(env or {})        # added to the run's environment
        self.seq = 0
        self.status = None                # ok failed timeout unverified interrupted ...
        self.detail = ''
        self.exit_status = None
        self.wall_s = None
        self.stdout_path = self.stderr_path = self.stats_path = self.profile_path = None
        self.stats = None                 # {counter: sum} with --stats
        self.value = None                 # the figure, set by the front end

    def stdout(self):
        return read_text(self.stdout_path)

    def stderr(self):
        return read_text(self.stderr_path)

    def ok(self):
        return self.status == 'ok'

    def fail(self, status, detail):
        self.status, self.detail = status, detail
        return self


def read_bytes(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except (OSError, TypeError):
        return b''


def read_text(path):
    return read_bytes(path).decode('utf-8', 'replace')


def parse_stats(path):
    """Sum of the statistics reports in a BRAVO_STATS_FILE: {key: number},
    and 'blocks', the number of reports."""
    totals, blocks = {}, 0
    for line in read_text(path).splitlines():
        if line.startswith('libbravo: statistics'):
            blocks += 1
            continue
        m = STATS_LINE.match(line)
        if m and m.group(1) != 'pid':
            totals[m.group(1)] = totals.get(m.group(1), 0) + int(m.group(2))
    totals['blocks'] = blocks
    return totals


def proof_failure(lock, stderr, stats=None, must_count=True, profile_path=None):
    """None when stderr (bytes) proves the run was under lock, else why not.
    stats: the run's statistics (parse_stats) when it was asked for them;
    must_count: they must count a lock operation (else a report will do);
    profile_path: the run's profile file, which must hold a profile."""
    names = [n.decode('utf-8', 'replace') for n in STARTUP.findall(stderr)]
    if lock.library is None:
        if names:
            return ('libbravo (variant=%s) was loaded in a run without preload (%s)'
                    % (names[0], lock.name))
        return None
    if not names:
        return 'no "libbravo: variant=%s" line on stderr: the preload did not take effect' \
            % lock.name
    wrong = [n for n in names if n != lock.name]
    if wrong:
        return 'wrong variant: libbravo: variant=%s was loaded, not %s' % (wrong[0], lock.name)
    if stats is not None:
        if stats['blocks'] == 0:
            return ('no libbravo statistics at exit: the process that loaded it exec\'d '
                    'without LD_PRELOAD, or did not exit normally')
        if must_count and stats.get('reads', 0) + stats.get('writes', 0) == 0:
            return 'libbravo served no rwlock operation (did the command drop LD_PRELOAD?)'
    if profile_path is not None and not bravo_profile.has_report(profile_path):
        return ('no libbravo profile at exit in %s: the process that loaded it exec\'d '
                'without LD_PRELOAD, or did not exit normally' % profile_path)
    return None


class Runner:
    """Runs one command at a time.  outdir: where each run's stdout and
    stderr go (keep: a file pair per run, else one pair overwritten);
    timeout: seconds per run (None: no bound); stats: statistics for the
    variants' runs, which must count a lock operation unless not
    stats_must_count (a report at exit then proves the preload); profile:
    a per-lock profile of every run with a library (run.profile_path, a
    CSV of every lock)."""

    def __init__(self, outdir, environment, timeout=None, stats=False, keep=True, prog=None,
                 stats_must_count=True, profile=False):
        self.outdir = outdir
        self.environment = environment
        self.timeout = timeout
        self.stats = stats
        self.profile = profile
        self.stats_must_count = stats_must_count
        self.keep = keep
        self.prog = prog or os.path.basename(sys.argv[0])
        self.child = None
        self.count = 0

    def stem(self, run):
        if not self.keep:
            return os.path.join(self.outdir, 'run')
        return os.path.join(self.outdir, '%03d-r%d-%s' % (run.seq, run.round, run.lock.name))

    def run(self, run, tick=None):
        """Runs it and sets its outcome; Interrupted after stopping it."""
        self.count += 1
        run.seq = run.seq or self.count
        stem = self.stem(run)
        run.stdout_path, run.stderr_path = stem + '.out', stem + '.err'
        self.report_paths(run, stem)
        env = self.environment.for_run(run.lock, run.stats_path, run.env, run.profile_path)
        status = self.execute(run, env, tick)
        if status is None:
            return run
        run.exit_status = status
        if status != 0:
            why = 'exit status %d' % status if status > 0 else 'killed by signal %d' % -status
            return run.fail('failed', why)
        if run.stats_path:
            run.stats = parse_stats(run.stats_path)
        why = proof_failure(run.lock, read_bytes(run.stderr_path), run.stats,
                            self.stats_must_count, run.profile_path)
        if why:
            return run.fail('unverified', why)
        run.status = 'ok'
        return run

    def report_paths(self, run, stem):
        """The files of the lock's reports at exit (statistics, profile),
        for a run under a library, emptied of an earlier run's."""
        if self.stats and run.lock.library:
            run.stats_path = stem + '.stats'
        if self.profile and run.lock.library:
            run.profile_path = stem + '.profile.csv'
        for path in (run.stats_path, run.profile_path):
            if path:
                with contextlib.suppress(OSError):
                    os.unlink(path)

    def execute(self, run, env, tick):
        """The exit status, or None with the run's status set (it could
        not start, or ran past the timeout)."""
        with open(run.stdout_path, 'wb') as out, open(run.stderr_path, 'wb') as err:
            start = time.perf_counter()
            try:
                # A session of its own: a Ctrl-C at the terminal reaches only
                # the tool, which ends the command's whole process group.
                self.child = subprocess.Popen(run.argv, stdin=subprocess.DEVNULL, stdout=out,
                                              stderr=err, start_new_session=True, env=env)
            except OSError as e:
                run.fail('failed', 'cannot run %s: %s' % (run.argv[0], e.strerror))
                return None
            try:
                status = self.wait(start, tick)
            except Interrupted:
                self.stop()
                run.wall_s = time.perf_counter() - start
                run.fail('interrupted', 'stopped by a signal to %s' % self.prog)
                raise
            run.wall_s = time.perf_counter() - start
            if status is None:
                self.stop()
                run.fail('timeout', 'timed out after %gs (--timeout)' % self.timeout)
                return None
            self.child = None
            return status

    def wait(self, start, tick):
        """The command's exit status, or None past the timeout; tick() each
        second.  The wait blocks in waitpid, so it ends the moment the
        command does; a timer signal interrupts it each second for tick()
        and the timeout."""
        deadline = start + self.timeout if self.timeout else None

        def arm():
            left = 1.0
            if deadline is not None:
                left = min(left, deadline - time.perf_counter())
            signal.setitimer(signal.ITIMER_REAL, max(left, 0.001))

        def on_alarm(signum, frame):
            if deadline is not None and time.perf_counter() >= deadline:
                raise RunTimeout()
            if tick:
                tick()
            arm()

        previous = signal.signal(signal.SIGALRM, on_alarm)
        arm()
        try:
            return self.child.wait()
        except RunTimeout:
            return None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    def stop(self):
        """Ends the running command and everything it started."""
        child, self.child = self.child, None
        if child is None:
            return
        for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(OSError):
                os.killpg(child.pid, sig)
            try:
                child.wait(grace)
                break
            except subprocess.TimeoutExpired:
                continue
        # the group may outlive its leader: end what is left of it
        with contextlib.suppress(OSError):
            os.killpg(child.pid, signal.SIGKILL)


# ---- rounds -------------------------------------------------------------

def round_order(items, rnd, order='fixed'):
    """items in the order round rnd runs them: 'fixed' as given, 'alternate'
    reversed in even rounds, 'rotate' rotated left by rnd - 1."""
    items = list(items)
    if order == 'alternate' and rnd % 2 == 0:
        return items[::-1]
    if order == 'rotate' and items:
        k = (rnd - 1) % len(items)
        return items[k:] + items[:k]
    return items


def run_rounds(runner, rounds, plan, records, judge=None, after=None, before=None,
               stop='first-round', keep_going=False):
    """Runs plan(r) for r in rounds, each run in turn; appends each to
    records.  judge(run) may refine an ok run (its figure); after(run)
    follows each run, before(run) precedes it.  stop: 'first-round' stops
    after a round 1 with no ok run (the command itself is broken) unless
    keep_going; 'first-failure' stops at the first run that is not ok;
    None runs everything.  Returns why it stopped early, or None.
    Interrupted propagates, the interrupted run in records."""
    try:
        for rnd in rounds:
            for run in plan(rnd):
                records.append(run)
                if before:
                    before(run)
                runner.run(run, (lambda r=run: before(r)) if before else None)
                if run.ok() and judge:
                    judge(run)
                if after:
                    after(run)
                if stop == 'first-failure' and not run.ok():
                    return 'first-failure'
            if (stop == 'first-round' and not keep_going and rnd == rounds[0]
                    and len(rounds) > 1 and not any(r.ok() for r in records)):
                return 'first-round'
    except Interrupted:
        if records and records[-1].status is None:
            records[-1].fail('interrupted', 'stopped by a signal to %s' % runner.prog)
        raise
    return None


@contextlib.contextmanager
def interruptible(signals=(signal.SIGINT, signal.SIGTERM, signal.SIGHUP)):
    """Inside: those signals raise Interrupted; after: they are ignored
    (the report of what was measured is not cut short)."""
    def on_signal(signum, frame):
        raise Interrupted(signum)

    for sig in signals:
        signal.signal(sig, on_signal)
    try:
        yield
    finally:
        for sig in signals:
            signal.signal(sig, signal.SIG_IGN)


def exit_status_of(signum):
    """The exit status of a tool stopped by signum: 130 for SIGINT, else
    128 + the signal number."""
    return 128 + int(signum)


# ---- what a run prints --------------------------------------------------

def result_line(text):
    """({key: value}, None) of the one 'RESULT key=value ...' line of a
    bench/ program's stdout, or (None, why not)."""
    lines = [line for line in text.splitlines() if line.startswith('RESULT ')]
    if len(lines) != 1:
        return None, '%d RESULT lines on stdout (want 1)' % len(lines)
    fields = dict(w.split('=', 1) for w in lines[0].split()[1:] if '=' in w)
    try:
        if float(fields.get('throughput', 'x')) < 0:
            raise ValueError
    except ValueError:
        return None, 'no numeric throughput= in: ' + lines[0][:200]
    return fields, None


def cpus_busy(fields):
    """The CPUs a run kept busy: cpu_s / duration_s of its RESULT fields
    (bench/noharm), or None where they do not say (an older program, or
    cpu_s=-1: the kernel did not say)."""
    try:
        cpu, secs = float(fields['cpu_s']), float(fields['duration_s'])
    except (KeyError, TypeError, ValueError):
        return None
    return cpu / secs if cpu >= 0 and secs > 0 else None


NUMBER = re.compile(r'[-+]?(?:\d[\d,_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?')


def figure_from(text, regex):
    """(value, text before it, text after it on its line) of the last match
    of regex: its first group when it has one, else the match; the first
    number in it.  None when there is no such number."""
    last = None
    for last in regex.finditer(text):
        pass
    if last is None:
        return None
    start, end = last.span(1) if regex.groups else last.span()
    if start < 0:
        return None
    n = NUMBER.search(text, start, end)
    if n is None:
        return None
    try:
        value = float(n.group(0).replace(',', '').replace('_', ''))
    except ValueError:
        return None
    line_start = text.rfind('\n', 0, n.start()) + 1
    line_end = text.find('\n', n.end())
    if line_end < 0:
        line_end = len(text)
    return value, text[line_start:n.start()], text[n.end():line_end]


# Which way is better, from the words around a figure.
HIGHER_UNIT = re.compile(r'^[a-z]*/s(ec(ond)?s?)?$|^(qps|tps|iops|rps|[kmgt]?i?b/s)$')
LOWER_UNIT = re.compile(r'/op$|^(s|sec|secs|seconds?|ms|msec|us|usec|µs|ns|nsec|'
                        r'micros|millis|nanos|cycles|minutes?)$')
HIGHER_LABEL = re.compile(r'ops/s|op/s|per[ _]s(ec|econd)?\b|/sec|/s\b|qps|tps|iops|'
                          r'throughput|bandwidth|\brate\b|speed', re.IGNORECASE)
LOWER_LABEL = re.compile(r'latency|\btime\b|elapsed|duration|/op\b|micros|nanos|'
                         r'seconds|\bwall\b|_(ns|us|ms)\b', re.IGNORECASE)


def direction_of(before, after):
    """('higher' or 'lower', the word that tells) from the text before and
    after a number: the unit after it, else the label nearest before it;
    None when neither tells."""
    token = after.strip().split(None, 1)
    if token:
        unit = token[0].lower().strip('[](),;:#')
        if LOWER_UNIT.search(unit):
            return 'lower', unit
        if HIGHER_UNIT.search(unit):
            return 'higher', unit
    best = None
    for direction, pattern in (('higher', HIGHER_LABEL), ('lower', LOWER_LABEL)):
        for m in pattern.finditer(before):
            if best is None or m.end() > best[0]:
                word = m.group(0)
                if not re.search(r'\s', word):
                    word = re.search(r'\S*$', before[:m.start()]).group(0) + \
                        re.match(r'\S*', before[m.start():]).group(0)
                best = (m.end(), direction, word.strip(':=,;()'))
    if best:
        return best[1], best[2]
    return None


def first_group_span(pattern):
    """Where the first capturing group of a regex is, in its text."""
    depth, start, i, in_class = 0, None, 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == '\\':
            i += 2
            continue
        if in_class:
            in_class = c != ']'
        elif c == '[':
            in_class = True
            if pattern[i + 1:i + 2] == ']':
                i += 1
        elif c == '(':
            capturing = not pattern.startswith('(?', i) or pattern.startswith('(?P<', i)
            if start is None and capturing:
                start, depth = i, 0
            if start is not None:
                depth += 1
        elif c == ')' and start is not None:
            depth -= 1
            if depth == 0:
                return start, i + 1
        i += 1
    return None


def literal_text(pattern):
    """A regex's text with its syntax blanked out: the words a user wrote."""
    text = re.sub(r'\\[dDsSwWbBAZ]|\[[^\]]*\]|\{[0-9,]*\}|\(\?[:=!]|\(\?P<\w+>', ' ', pattern)
    text = re.sub(r'\\(.)', r'\1', text)
    return re.sub(r'[()*+?|^$]', ' ', text)


def direction_from_regex(pattern):
    """direction_of() the words of a regex around its first group."""
    span = first_group_span(pattern)
    if span is None:
        return None
    return direction_of(literal_text(pattern[:span[0]]), literal_text(pattern[span[1]:]))


# ---- output -------------------------------------------------------------

class CsvLog:
    """A CSV file that grows by whole rows, each flushed as written."""

    def __init__(self, path, fields, append=False):
        self.fields = fields
        fresh = not append or not os.path.exists(path) or os.path.getsize(path) == 0
        self.file = open(path, 'a' if append else 'w', newline='')
        self.writer = csv.DictWriter(self.file, fields, lineterminator='\n', extrasaction='ignore')
        if fresh:
            self.writer.writeheader()
            self.file.flush()

    def write(self, row):
        self.writer.writerow({k: row.get(k, '') for k in self.fields})
        self.file.flush()

    def close(self):
        self.file.close()


def write_csv(path, fields, rows):
    """Writes rows at once, through a temporary file renamed into place."""
    tmp = path + '.tmp'
    with open(tmp, 'w', newline='') as f:
        w = csv.DictWriter(f, fields, lineterminator='\n', extrasaction='ignore')
        w.writeheader()
        for row in rows:
            w.writerow({k: row.get(k, '') for k in fields})
    os.replace(tmp, path)


def shown_path(path, base):
    """path relative to base when inside it (for a recorded command)."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(base))
    return path if rel.startswith('..') else rel


def shown_command(environment, run, base=None):
    """The run as a shell command line: BRAVO_VERBOSE=1, its LD_PRELOAD,
    its argv; paths inside base shown relative to it."""
    import shlex

    def path(p):
        return shown_path(p, base) if base else p

    words = ['BRAVO_VERBOSE=1']
    preload = [path(p) for p in environment.preload(run.lock).split()]
    if preload:
        words.append('LD_PRELOAD=' + shlex.quote(' '.join(preload)))
    words.append(shlex.quote(path(run.argv[0])))
    return ' '.join(words + [shlex.quote(a) for a in run.argv[1:]])


def load_average():
    """The 1-minute load average, or None where the system has none."""
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None
