# SPDX-License-Identifier: BSD-2-Clause
"""bravo_plot - the one figure style of libbravo's tools, drawn with
gnuplot: every figure's title names it ('Figure N: ...' where it has a
number), the machine (CPU model and count) and glibc's version; the legend
uses the locks' names as the tools' --locks takes them; each lock has its
own colour and point type, the same in every figure of one build (glibc
black, then the variants in name order: lock_styles); a thread axis is
log2 with a tick at each measured value only; medians carry min-max bars.

Invariants: every string that reaches gnuplot (titles, labels, lock
names, file names) goes through gnuplot_string, so nothing in a CSV, a
lock name, a path or a command line runs a command or ends gnuplot's; the
script is fed on stdin with the data inline (datablocks), leaving no file
behind.  Python 3 standard library and gnuplot.
"""

import os
import shutil
import subprocess

# Distinct colours (no two blues, no pale yellow), then point types.
PALETTE = ['#000000', '#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e',
           '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22']
POINTS = [4, 7, 5, 9, 13, 11, 15, 6, 8, 10, 12]
TERMINALS = {'.png': "pngcairo size %d,%d enhanced font 'sans,10'",
             '.svg': "svg size %d,%d enhanced font 'sans,10'"}
LOG_Y_SPAN = 100        # medians spanning more than this: a log y axis


class PlotError(Exception):
    pass


def gnuplot_string(text):
    """text as a gnuplot double-quoted string that gnuplot takes literally:
    backslash and double quote escaped, the backquote (command
    substitution, done even inside double quotes) as its octal escape, a
    newline as \\n (a line break in a title), other control characters
    dropped.  Not single quotes: gnuplot reads a leading '' as an empty
    string."""
    out = []
    for ch in str(text):
        if ch == '\\':
            out.append('\\\\')
        elif ch == '"':
            out.append('\\"')
        elif ch == '`':
            out.append('\\140')
        elif ch == '\n':
            out.append('\\n')
        elif ord(ch) >= 32 and ch != '\x7f':
            out.append(ch)
    return '"' + ''.join(out) + '"'


def cpu_count():
    """Online CPUs available to this process."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def machine_text():
    """'CPU MODEL, N CPUs' from /proc/cpuinfo and the CPUs usable here."""
    model = None
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                key, _, value = line.partition(':')
                if key.strip() in ('model name', 'Model', 'cpu model') and value.strip():
                    model = ' '.join(value.split())
                    break
    except OSError:
        pass
    return '%s, %d CPUs' % (model or 'unknown CPU model', cpu_count())


def glibc_text():
    """'glibc 2.36', or what the C library calls itself."""
    try:
        return os.confstr('CS_GNU_LIBC_VERSION') or 'unknown C library'
    except (ValueError, OSError, AttributeError):
        return 'unknown C library'


def title_text(subject, number=None, note=None):
    """'Figure N: subject', the machine and glibc, then the note: lines."""
    head = 'Figure %s: %s' % (number, subject) if number else subject
    lines = [head, '%s; %s' % (machine_text(), glibc_text())]
    if note:
        lines.append(note)
    return '\n'.join(lines)


def lock_styles(locks, known=()):
    """{lock: (colour, point type)}: glibc first, then every name of known
    (the build's libraries) and locks, sorted; so one build's figures agree.
    A series named A/B (a ratio) takes A's style (style_of)."""
    names = sorted(n for n in (set(known) | set(locks)) - {'glibc'} if '/' not in n)
    order = ['glibc'] + names
    return {n: (PALETTE[i % len(PALETTE)], POINTS[i % len(POINTS)]) for i, n in enumerate(order)}


def style_of(styles, name):
    """The style of a series: its lock's, or of the lock it is named after
    (a 'bravo-ba/bravo-ba-private' ratio takes bravo-ba's)."""
    return styles.get(name) or styles.get(name.split('/')[0]) or (PALETTE[-1], POINTS[-1])


def header(out, width=960, height=640):
    ext = os.path.splitext(out)[1].lower()
    if ext not in TERMINALS:
        raise PlotError('%s: the file name must end in .png or .svg' % out)
    return ['set terminal ' + TERMINALS[ext] % (width, height),
            'set output %s' % gnuplot_string(out)]


def log2_axis(xs):
    """A log2 x axis with a tick at each measured value only."""
    xs = sorted(set(xs))
    return ['set logscale x 2',
            'set xtics (%s)' % ', '.join('"%g" %g' % (x, x) for x in xs),
            'set xrange [%g:%g]' % (xs[0] / 1.3, xs[-1] * 1.3)]


def y_axis(ylabel, medians, zero=True):
    """A linear y axis from 0, or log10 when the medians span over LOG_Y_SPAN."""
    medians = [m for m in medians if m > 0]
    if medians and max(medians) > LOG_Y_SPAN * min(medians):
        return ['set logscale y 10', 'set ylabel %s' % gnuplot_string(ylabel + ', log scale')]
    return (['set yrange [0:*]'] if zero else []) + ['set ylabel %s' % gnuplot_string(ylabel)]


def datablock(name, rows):
    return ['$%s << EOD' % name] + [' '.join('%.9g' % v for v in row) for row in rows] + ['EOD']


def median_lines(series, styles, nudge_step=0.025, prefix='d'):
    """Datablocks and plot clauses of series [(name, [(x, median, min,
    max)])]: medians joined by lines, min-max bars; each series nudged
    sideways a little on the log axis so that bars stay apart."""
    lines, clauses = [], []
    for n, (name, points) in enumerate(series):
        nudge = 2 ** (nudge_step * (n - (len(series) - 1) / 2))
        lines += datablock('%s%d' % (prefix, n),
                           [(x * nudge, med, lo, hi) for x, med, lo, hi in points])
        colour, pt = style_of(styles, name)
        clauses.append("$%s%d using 1:2:3:4 with yerrorlines lw 2 pt %d ps 1.2 lc rgb '%s' "
                       "title %s" % (prefix, n, pt, colour, gnuplot_string(name)))
    return lines, clauses


def line_figure(out, title, xlabel, ylabel, series, styles, extra=(), zero=True):
    """A figure of medians with min-max bars against a log2 x axis (threads,
    or pool sizes).  series: [(lock, [(x, median, min, max)])]."""
    xs = [p[0] for _, pts in series for p in pts]
    if not xs:
        raise PlotError('no data points to plot')
    s = header(out)
    s += ['set title %s noenhanced' % gnuplot_string(title),
          'set xlabel %s noenhanced' % gnuplot_string(xlabel)]
    s += log2_axis(xs)
    s += y_axis(ylabel, [p[1] for _, pts in series for p in pts], zero)
    s += ['set grid', 'set bars small', 'set key outside right top noenhanced']
    s += list(extra)
    data, clauses = median_lines(series, styles)
    s += data
    s.append('plot ' + ', \\\n     '.join(clauses))
    draw('\n'.join(s) + '\n', out)


def draw(script, out):
    """Runs gnuplot on script; PlotError unless it wrote out."""
    if shutil.which('gnuplot') is None:
        raise PlotError('gnuplot not found (Debian: apt-get install gnuplot-nox)')
    done = subprocess.run(['gnuplot'], input=script, universal_newlines=True,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if done.returncode != 0 or not os.path.isfile(out) or os.path.getsize(out) == 0:
        raise PlotError('gnuplot failed to draw %s: %s' % (out, done.stderr.strip()[-500:]))
