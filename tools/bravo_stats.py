# SPDX-License-Identifier: BSD-2-Clause
"""bravo_stats - the statistics of an A/B comparison of locks: the median,
a percentile-bootstrap interval of a median, Wilcoxon's signed-rank test
(exact up to EXACT_WILCOXON_MAX_N differences, else the normal
approximation with ties corrected), and the paired comparison of one
lock against the baseline that bravo-compare prints.

Invariants:
- Deterministic: the bootstrap draws from a generator seeded with
  BOOTSTRAP_SEED, so the same data give the same interval.
- A pair is a (baseline, lock) couple of the same round, both data points
  with positive values; the ratio, its interval and the test use pairs
  only.  The test runs on the logarithms of the ratios, so a lock twice as
  fast and one half as fast weigh alike.
- Python 3 standard library only; tests/tools/compare/stats_test.py checks every
  function against independent computations.
"""

import math
import random

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20190710        # fixed: the same data give the same interval
EXACT_WILCOXON_MAX_N = 60


def median(values):
    """The median of values; NaN for none."""
    v = sorted(values)
    n = len(v)
    if n == 0:
        return float('nan')
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def median_min_max(values):
    """(median, min, max) of values; (None, None, None) for none."""
    if not values:
        return None, None, None
    return median(values), min(values), max(values)


def bootstrap_interval(values, level=0.95):
    """Percentile bootstrap interval of the median of values."""
    rng = random.Random(BOOTSTRAP_SEED)
    n = len(values)
    medians = sorted(median([values[rng.randrange(n)] for _ in range(n)])
                     for _ in range(BOOTSTRAP_RESAMPLES))
    lo = medians[int((1 - level) / 2 * BOOTSTRAP_RESAMPLES)]
    hi = medians[min(BOOTSTRAP_RESAMPLES - 1, int((1 + level) / 2 * BOOTSTRAP_RESAMPLES))]
    return lo, hi


def ranks(values):
    """Ranks 1..n of values, ties sharing their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def _exact_p(r, w_plus):
    """Two-sided p of W+ = w_plus when every sign assignment of the ranks r
    is equally likely.  Ranks doubled are integers (ties give halves): count
    the ways to reach each sum."""
    twice = [int(round(2 * ri)) for ri in r]
    total = sum(twice)
    ways = [0] * (total + 1)
    ways[0] = 1
    for t in twice:
        for s in range(total, t - 1, -1):
            ways[s] += ways[s - t]
    w = int(round(2 * w_plus))
    all_ways = 2 ** len(r)
    below = sum(ways[:w + 1]) / all_ways
    above = sum(ways[w:]) / all_ways
    return min(1.0, 2 * min(below, above))


def _normal_p(r, w_plus):
    """Two-sided p of W+ by the normal approximation, ties corrected, with a
    continuity correction of 1/2."""
    n = len(r)
    mean = n * (n + 1) / 4
    ties = {}
    for ri in r:
        ties[ri] = ties.get(ri, 0) + 1
    var = n * (n + 1) * (2 * n + 1) / 24 - sum(t ** 3 - t for t in ties.values()) / 48
    if var <= 0:
        return 1.0
    z = (abs(w_plus - mean) - 0.5) / math.sqrt(var)
    return min(1.0, math.erfc(max(z, 0) / math.sqrt(2)))


def wilcoxon(differences):
    """Two-sided p of Wilcoxon's signed-rank test (zeros dropped), and the
    number of differences used."""
    d = [x for x in differences if x != 0]
    n = len(d)
    if n == 0:
        return 1.0, 0
    r = ranks([abs(x) for x in d])
    w_plus = sum(ri for ri, x in zip(r, d) if x > 0)
    if n <= EXACT_WILCOXON_MAX_N:
        return _exact_p(r, w_plus), n
    return _normal_p(r, w_plus), n


def rounds_needed(alpha):
    """The fewest paired rounds, all differing one way, that reach p < alpha."""
    return math.floor(math.log2(2 / alpha)) + 1


def pairs_of(runs, lock, baseline):
    """[(baseline value, lock value)] of the rounds where both counted.
    runs: dicts with round, lock, status ('ok' counts) and value."""
    mine = {r['round']: r['value'] for r in runs if r['lock'] == lock and r['status'] == 'ok'}
    base = {r['round']: r['value'] for r in runs if r['lock'] == baseline and r['status'] == 'ok'}
    return [(base[k], mine[k]) for k in sorted(mine)
            if k in base and base[k] > 0 and mine[k] > 0]


def compare(runs, lock, direction, alpha, baseline='glibc'):
    """One lock against the baseline, from its paired rounds: {pairs, and
    when there are any ratio, interval, p; verdict; note when the verdict
    is weak}.  direction: 'higher' or 'lower' is better."""
    pairs = pairs_of(runs, lock, baseline)
    result = {'pairs': len(pairs)}
    if not pairs:
        result.update(verdict='no pairs',
                      note='no round where both it and %s counted' % baseline)
        return result
    ratios = [v / b for b, v in pairs]
    result['ratio'] = median(ratios)
    result['interval'] = bootstrap_interval(ratios)
    p, used = wilcoxon([math.log(x) for x in ratios])
    result['p'] = p
    if p < alpha:
        better = (result['ratio'] > 1) == (direction == 'higher')
        result['verdict'] = 'faster' if better else 'slower'
    else:
        result['verdict'] = 'no significant difference'
        if used == 0 or 2 / 2 ** used >= alpha:
            result['note'] = ('%d paired round%s with a difference cannot reach p < %g; '
                              'use --runs %d or more' %
                              (used, '' if used == 1 else 's', alpha, rounds_needed(alpha)))
    return result
