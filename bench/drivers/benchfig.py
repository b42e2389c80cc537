# SPDX-License-Identifier: BSD-2-Clause
# benchfig - the paper's figures as sweeps (shared by bench-sweep and
# bench-plot): which program, which command line, which x values, and the
# titles.  Also the CSV layouts both scripts read and write.  The locks
# are the build's (bravo_runner.find_libraries), never a list kept here;
# how a figure looks is bravo_plot's.
#
# Figures (BRAVO paper, Dice & Kogan, USENIX ATC 2019, section 5):
#   fig1   interference -t 64 -l NLOCKS   x = locks in the pool, y = ratio
#          throughput(bravo-ba) / throughput(bravo-ba-private)
#   fig2   alternator -t T                x = threads
#   fig3   test_rwlock T 1 D -c 10 -e 10 -d 1000   x = reader threads (+1 writer)
#   fig4a..fig4f  rwbench -t T -p P       P = 9/10, 1/2, 1/10, 1/100, 1/1000, 1/10000

# Fig 1's two locks and its derived series: per repetition, bravo-ba over
# the benchmark-only bravo-ba-private (a private visible-readers table per
# lock).
RATIO_NUM, RATIO_DEN = "bravo-ba", "bravo-ba-private"
RATIO_SERIES = RATIO_NUM + "/" + RATIO_DEN

# The lock each BRAVO variant wraps, which it is judged against (issue 34,
# item 3b): BRAVO-BA's slow path is BA's, BRAVO-pthread's glibc's own
# rwlock.  Any other comparison with glibc is information, not a target.
UNDERLYING = {"bravo-ba": "ba", "bravo-pthread": "glibc"}

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
    """One figure: its number, program, argument template, x axis; locks
    None: glibc and every variant of the build."""

    def __init__(self, name, prog, subject, xlabel, ylabel, locks=None, ratio=False):
        self.name = name
        self.number = name[3:]
        self.prog = prog
        self.subject = subject
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
                      "inter-lock interference (64 threads, read-only)",
                      "locks in the pool",
                      "throughput ratio bravo-ba / bravo-ba-private",
                      [RATIO_NUM, RATIO_DEN], ratio=True)
    if name == "fig2":
        return Figure("fig2", "alternator", "Alternator",
                      "threads", "notifications (millions/s)")
    if name == "fig3":
        return Figure("fig3", "test_rwlock",
                      "test_rwlock T 1 SECS -c 10 -e 10 -d 1000",
                      "reader threads T (plus 1 writer)",
                      "aggregate throughput (M iterations/s)")
    if name in RWBENCH_P:
        p, words = RWBENCH_P[name]
        return Figure(name, "rwbench", "RWBench with %s (P = %s)" % (words, p),
                      "threads", "aggregate throughput (M ops/s)")
    return None


def default_threads(limit):
    """1, 2, 4, ... up to limit, and limit itself when not a power of 2."""
    out, t = [], 1
    while t <= limit:
        out.append(t)
        t *= 2
    if out[-1] != limit:
        out.append(limit)
    return out
