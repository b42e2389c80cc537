#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""stats_test.py TOOLS_DIR - the statistics of tools/bravo_stats.py and
the figure and proof helpers of tools/bravo_runner.py, checked against
independent computations (brute force over every sign assignment,
hand-worked examples).  Python 3 standard library."""

import itertools
import re
import sys
import unittest

bc = None      # bravo_stats
br = None      # bravo_runner


def brute_force_wilcoxon(d):
    """Two-sided p by enumerating all 2^n sign assignments of the ranks."""
    d = [x for x in d if x != 0]
    n = len(d)
    r = bc.ranks([abs(x) for x in d])
    w = sum(ri for ri, x in zip(r, d) if x > 0)
    below = above = 0
    for signs in itertools.product((0, 1), repeat=n):
        s = sum(ri for ri, sgn in zip(r, signs) if sgn)
        below += s <= w + 1e-9
        above += s >= w - 1e-9
    return min(1.0, 2 * min(below, above) / 2 ** n)


class Ranks(unittest.TestCase):
    def test_ties_share_their_average_rank(self):
        self.assertEqual(bc.ranks([10, 20, 20, 5]), [2.0, 3.5, 3.5, 1.0])


class Wilcoxon(unittest.TestCase):
    def test_all_positive_gives_two_over_two_to_the_n(self):
        for n in range(1, 12):
            p, used = bc.wilcoxon([1.0 + i for i in range(n)])
            self.assertEqual(used, n)
            self.assertAlmostEqual(p, min(1.0, 2 / 2 ** n))

    def test_textbook_value_n10_w8(self):
        # n = 10, W+ = 8 (ranks 1, 3, 4 positive): P(W+ <= 8) = 25/1024.
        d = [1, -2, 3, 4, -5, -6, -7, -8, -9, -10]
        p, _ = bc.wilcoxon(d)
        self.assertAlmostEqual(p, 50 / 1024)

    def test_exact_matches_brute_force_with_ties_and_zeros(self):
        samples = [
            [0.1, -0.1, 0.2, 0.3, -0.3, 0.0, 0.5],
            [1, 1, 1, -1, 2, 2, -2, 3],
            [0.05, 0.02, -0.01, 0.04, 0.03, -0.02, 0.06, 0.01, 0.07, -0.03, 0.08],
            [2, -2, 2, -2, 2],
        ]
        for d in samples:
            with self.subTest(d=d):
                self.assertAlmostEqual(bc.wilcoxon(d)[0], brute_force_wilcoxon(d))

    def test_zeros_are_dropped(self):
        self.assertEqual(bc.wilcoxon([0, 0, 0]), (1.0, 0))
        self.assertEqual(bc.wilcoxon([0, 1, 2])[1], 2)

    def test_normal_approximation_beyond_the_exact_range(self):
        n = bc.EXACT_WILCOXON_MAX_N + 20
        d = [(i % 7) - 2.5 for i in range(n)]   # mostly positive
        p, used = bc.wilcoxon(d)
        self.assertEqual(used, n)
        self.assertTrue(0 < p < 1)
        self.assertLess(bc.wilcoxon([x for x in range(1, n + 1)])[0], 1e-6)

    def test_normal_approximation_agrees_with_the_exact_test(self):
        d = [((i * 37) % 23) - 9.5 for i in range(40)]
        exact, _ = bc.wilcoxon(d)
        saved, bc.EXACT_WILCOXON_MAX_N = bc.EXACT_WILCOXON_MAX_N, 0
        try:
            approx, _ = bc.wilcoxon(d)
        finally:
            bc.EXACT_WILCOXON_MAX_N = saved
        self.assertAlmostEqual(exact, approx, delta=0.01)


class Bootstrap(unittest.TestCase):
    def test_interval_holds_the_median_and_is_deterministic(self):
        ratios = [0.9, 1.1, 1.0, 1.2, 0.95, 1.05, 1.3]
        lo, hi = bc.bootstrap_interval(ratios)
        self.assertLessEqual(lo, bc.median(ratios))
        self.assertGreaterEqual(hi, bc.median(ratios))
        self.assertGreaterEqual(lo, min(ratios))
        self.assertLessEqual(hi, max(ratios))
        self.assertEqual((lo, hi), bc.bootstrap_interval(ratios))

    def test_identical_ratios_give_a_point(self):
        self.assertEqual(bc.bootstrap_interval([1.5] * 5), (1.5, 1.5))


class Compare(unittest.TestCase):
    def runs(self, base, variant):
        out = []
        for k, (b, v) in enumerate(zip(base, variant), 1):
            out.append({'round': k, 'lock': 'glibc', 'status': 'ok', 'value': b})
            out.append({'round': k, 'lock': 'x', 'status': 'ok' if v else 'failed', 'value': v})
        return out

    def test_higher_is_better_more_is_faster(self):
        c = bc.compare(self.runs([100] * 6, [150, 151, 149, 152, 150, 148]), 'x', 'higher', 0.05)
        self.assertEqual(c['verdict'], 'faster')
        self.assertAlmostEqual(c['ratio'], 1.5, places=2)

    def test_lower_is_better_more_is_slower(self):
        c = bc.compare(self.runs([100] * 6, [150, 151, 149, 152, 150, 148]), 'x', 'lower', 0.05)
        self.assertEqual(c['verdict'], 'slower')

    def test_failed_runs_leave_their_round_out(self):
        c = bc.compare(self.runs([100] * 6, [150, None, 149, None, 150, 148]), 'x', 'higher', 0.05)
        self.assertEqual(c['pairs'], 4)
        self.assertEqual(c['verdict'], 'no significant difference')
        self.assertIn('--runs 6', c['note'])


class Direction(unittest.TestCase):
    def test_units_and_labels(self):
        cases = [
            (('readwhilewriting :  7.509 micros/op ', ' ops/sec 2.0 seconds'), 'higher'),
            (('fillseq :', ' micros/op 318211 ops/sec'), 'lower'),
            (('Requests per second:    ', ' [#/sec] (mean)'), 'higher'),
            (('Time per request:       ', ' [ms] (mean)'), 'lower'),
            (('SUMMARY ops_per_sec=', ' reads=1'), 'higher'),
            (('SUMMARY mode=latency rd_ns=', ' wr_ns=2'), 'lower'),
            (('copied at ', ' MB/s'), 'higher'),
            (('elapsed: ', ''), 'lower'),
        ]
        for (before, after), want in cases:
            with self.subTest(before=before, after=after):
                self.assertEqual(br.direction_of(before, after)[0], want)

    def test_nothing_to_go_by(self):
        self.assertIsNone(br.direction_of('value: ', ''))

    def test_from_the_regex_words(self):
        self.assertEqual(br.direction_from_regex(r'([0-9]+)\s+ops/sec')[0], 'higher')
        self.assertEqual(br.direction_from_regex(r'latency \(us\): ([0-9.]+)')[0], 'lower')
        self.assertIsNone(br.direction_from_regex(r'value: [0-9]+'))


class Figure(unittest.TestCase):
    def test_last_match_first_group(self):
        text = 'ops/sec: 10\nops/sec: 20\nother 30\n'
        self.assertEqual(br.figure_from(text, re.compile(r'ops/sec: ([0-9]+)'))[0], 20.0)

    def test_no_group_takes_the_first_number_of_the_match(self):
        text = 'rate 1,234.5 ops/s in 3 s\n'
        self.assertEqual(br.figure_from(text, re.compile(r'rate \S+ ops/s'))[0], 1234.5)

    def test_no_match(self):
        self.assertIsNone(br.figure_from('nothing here', re.compile(r'ops: ([0-9]+)')))


class Proof(unittest.TestCase):
    def test_rules(self):
        line = b'libbravo: variant=bravo-ba table_slots=4096 pid=1\n'
        glibc, ba, bravo_ba = br.Lock('glibc'), br.Lock('ba', '/x/libbravo-ba.so'), \
            br.Lock('bravo-ba', '/x/libbravo-bravo-ba.so')
        self.assertIsNone(br.proof_failure(bravo_ba, line))
        self.assertIsNone(br.proof_failure(bravo_ba, line + line))
        self.assertIsNone(br.proof_failure(glibc, b'other\n'))
        self.assertIn('run without preload (glibc)', br.proof_failure(glibc, line))
        self.assertIn('wrong variant: libbravo: variant=bravo-ba was loaded, not ba',
                      br.proof_failure(ba, line))
        self.assertIn('wrong variant', br.proof_failure(bravo_ba, line + line.replace(b'=bravo-ba', b'=ba')))
        self.assertIn('did not take effect', br.proof_failure(ba, b''))
        self.assertIn('no libbravo statistics', br.proof_failure(bravo_ba, line, {'blocks': 0}))
        self.assertIn('no rwlock operation',
                      br.proof_failure(bravo_ba, line, {'blocks': 1, 'reads': 0, 'writes': 0}))
        self.assertIsNone(br.proof_failure(bravo_ba, line, {'blocks': 1, 'reads': 3, 'writes': 0}))


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit('usage: stats_test.py TOOLS_DIR')
    sys.dont_write_bytecode = True
    sys.path.insert(0, sys.argv.pop(1))
    import bravo_runner as br    # noqa: E402
    import bravo_stats as bc     # noqa: E402
    unittest.main(verbosity=2)
