# benchfig - the paper's figures as sweeps (shared by bench-sweep and
# bench-plot): which program, which command line, which locks, which x values,
# and the titles.  Also the CSV layouts both scripts read and write.
#
# Figures (BRAVO paper, Dice & Kogan, USENIX ATC 2019, section 5):
#   fig1   interference -t 64 -l NLOCKS   x = locks in the pool, y = ratio
#          throughput(bravo-ba) / throughput(bravo-ba-private)
#   fig2   alternator -t T                x = threads
#   fig3   test_rwlock T 1 D -c 10 -e 10 -d 1000   x = reader threads (+1 writer)
#   fig4a..fig4f  rwbench -t T -p P       P = 9/10, 1/2, 1/10, 1/100, 1/1000, 1/10000

import os

# The locks of the paper's figures 2-4, in the order they are run and keyed.
PAPER_LOCKS = ["glibc", "ba", "bravo-ba", "bravo-pthread", "cohort-rw", "percpu"]
# Every lock the sweep knows: "glibc" is no preload; the others are
# libbravo-NAME.so.  bravo-ba-private is the benchmark-only variant of fig 1
# (a private visible-readers table per lock).
KNOWN_LOCKS = PAPER_LOCKS + ["bravo-ba-private"]

# Names in the plots' keys, as the paper writes them.
LOCK_LABEL = {
    "glibc": "pthread (glibc)",
    "ba": "BA",
    "bravo-ba": "BRAVO-BA",
    "bravo-pthread": "BRAVO-pthread",
    "cohort-rw": "Cohort-RW",
    "percpu": "Per-CPU",
    "bravo-ba-private": "BRAVO-BA, private table",
}

# One colour and point type per lock, the same in every figure.
LOCK_STYLE = {
    "glibc": ("#000000", 4),
    "ba": ("#1f77b4", 6),
    "bravo-ba": ("#d62728", 7),
    "bravo-pthread": ("#ff7f0e", 5),
    "cohort-rw": ("#2ca02c", 9),
    "percpu": ("#9467bd", 13),
    "bravo-ba-private": ("#1f77b4", 6),
}

# Fig 1's derived series: per repetition, bravo-ba over bravo-ba-private.
RATIO_NUM, RATIO_DEN = "bravo-ba", "bravo-ba-private"
RATIO_SERIES = RATIO_NUM + "/" + RATIO_DEN

FIG1_THREADS = 64          # the paper's 64 threads
FIG1_POOLS_PAPER = [1 << i for i in range(14)]          # 1 .. 8192
FIG1_POOLS_SHORT = [1, 4, 16, 64, 256, 1024, 4096, 8192]

RWBENCH_P = {
    "fig4a": ("9/10", "90% writes"),
    "fig4b": ("1/2", "50% writes"),
    "fig4c": ("1/10", "10% writes"),
    "fig4d": ("1/100", "1% writes"),
    "fig4e": ("1/1000", "0.1% writes"),
    "fig4f": ("1/10000", "0.01% writes"),
}

FIGURES = ["fig1", "fig2", "fig3"] + sorted(RWBENCH_P)

RAW_FIELDS = ["figure", "lock", "x", "rep", "threads", "duration_s",
              "throughput", "status", "detail", "started_utc", "command"]
SUMMARY_FIELDS = ["figure", "lock", "x", "median", "min", "max", "runs",
                  "failed", "duration_s"]


class Figure:
    """One figure: program, argument template, default locks, x axis."""

    def __init__(self, name, prog, title, xlabel, ylabel, locks, ratio=False):
        self.name = name
        self.prog = prog
        self.title = title
        self.xlabel = xlabel
        self.ylabel = ylabel
        self.locks = locks
        self.ratio = ratio

    def args(self, x, duration, fig1_threads=FIG1_THREADS):
        """The program's arguments for one point (x, duration as text)."""
        if self.name == "fig1":
            return ["-t", str(fig1_threads), "-l", str(x), "-d", duration]
        if self.name == "fig2":
            return ["-t", str(x), "-d", duration]
        if self.name == "fig3":
            return [str(x), "1", duration, "-c", "10", "-e", "10", "-d", "1000"]
        return ["-t", str(x), "-p", RWBENCH_P[self.name][0], "-d", duration]


def figure(name):
    """The Figure called name, or None."""
    if name == "fig1":
        return Figure("fig1", "interference",
                      "Figure 1: inter-lock interference (64 threads, read-only)",
                      "locks in the pool",
                      "throughput ratio BRAVO-BA / BRAVO-BA with private table",
                      [RATIO_NUM, RATIO_DEN], ratio=True)
    if name == "fig2":
        return Figure("fig2", "alternator", "Figure 2: Alternator",
                      "threads", "notifications (millions/s)", PAPER_LOCKS)
    if name == "fig3":
        return Figure("fig3", "test_rwlock",
                      "Figure 3: test\\_rwlock T 1 SECS -c 10 -e 10 -d 1000",
                      "reader threads T (plus 1 writer)",
                      "aggregate throughput (M iterations/s)", PAPER_LOCKS)
    if name in RWBENCH_P:
        p, words = RWBENCH_P[name]
        return Figure(name, "rwbench",
                      "Figure 4%s: RWBench with %s (P = %s)" % (name[-1], words, p),
                      "threads", "aggregate throughput (M ops/s)", PAPER_LOCKS)
    return None


def cpu_count():
    """Online CPUs available to this process."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_threads(limit):
    """1, 2, 4, ... up to limit, and limit itself when not a power of 2."""
    out, t = [], 1
    while t <= limit:
        out.append(t)
        t *= 2
    if out[-1] != limit:
        out.append(limit)
    return out


def gnuplot_string(text):
    """text as a gnuplot double-quoted string that gnuplot takes literally:
    backslash and double quote escaped, the backquote (command substitution,
    done even inside double quotes) as its octal escape, a newline as \\n,
    other control characters dropped."""
    out = []
    for ch in str(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "`":
            out.append("\\140")
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) >= 32 and ch != "\x7f":
            out.append(ch)
    return '"' + "".join(out) + '"'


def machine_text():
    """'CPU MODEL, N CPUs' from /proc/cpuinfo and the CPUs usable here."""
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                    model = " ".join(value.split())
                    break
    except OSError:
        pass
    return "%s, %d CPUs" % (model or "unknown CPU model", cpu_count())
