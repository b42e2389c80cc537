#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""runner_test.py TOOLS_DIR - tools/bravo_runner.py, the one runner of
the tools: the libraries of a libdir, lock resolution, the preload policy,
the proof of the preload on real runs, interleaving orders, the timeout,
Ctrl-C, fail-fast; and tools/bravo_profile.py, the per-lock profiles'
reading and comparison.  Needs no build: the 'variant' runs are shell commands
that print the start-up line a library would, with a library path that
does not exist (ld.so ignores it with a warning).  No timing is asserted
beyond a run being stopped.  Python 3 standard library."""

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import unittest

br = None      # bravo_runner
bp = None      # bravo_profile

FAKE_LIB = '/nonexistent/libbravo-fake.so'


def shell(script):
    return ['sh', '-c', script]


def alive(pid):
    """The process runs (a zombie, waiting for an init that reaps slowly,
    does not)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except OSError:
        return False


class Scratch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix='runner_test.')

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def runner(self, timeout=None, stats=False, base=None, profile=False):
        env = br.Environment(base=dict(os.environ, **(base or {})))
        return br.Runner(self.dir, env, timeout=timeout, stats=stats, prog='runner_test',
                         profile=profile)


class Libraries(Scratch):
    def test_found_by_name_private_ones_on_request(self):
        for name in ('libbravo-a.so', 'libbravo-b-private.so', 'libbravo.so', 'other.so'):
            open(os.path.join(self.dir, name), 'w').close()
        self.assertEqual(sorted(br.find_libraries(self.dir)), ['a'])
        self.assertEqual(sorted(br.find_libraries(self.dir, private=True)), ['a', 'b-private'])
        self.assertEqual(br.default_lock_names(br.find_libraries(self.dir, private=True)),
                         ['glibc', 'a'])

    def test_resolve(self):
        libs = {'a': '/l/libbravo-a.so', 'b': '/l/libbravo-b.so'}
        locks = br.resolve_locks(['b', 'glibc'], libs, '/l', baseline_first=True)
        self.assertEqual([(l.name, l.library) for l in locks],
                         [('glibc', None), ('b', '/l/libbravo-b.so')])
        with self.assertRaisesRegex(br.UsageError, "unknown lock 'c'; available: glibc a b"):
            br.resolve_locks(['c'], libs, '/l')
        with self.assertRaisesRegex(br.UsageError, 'named twice'):
            br.resolve_locks(['a', 'a'], libs, '/l')
        with self.assertRaisesRegex(br.UsageError, 'bad lock name'):
            br.resolve_locks(['a;b'], libs, '/l')
        with self.assertRaisesRegex(br.Fatal, 'missing lock library /none/libbravo-a.so'):
            br.resolve_locks(['a'], {}, '/none')
        with self.assertRaisesRegex(br.Fatal, 'spaces or colons'):
            br.resolve_locks(['a'], {'a': '/l l/libbravo-a.so'}, '/l l')


class PreloadPolicy(unittest.TestCase):
    base = {'LD_PRELOAD': 'libjemalloc.so.2:/x/libbravo-ba.so  /y/libbravo.so libm.so.6',
            'BRAVO_STATS': '1', 'BRAVO_STATS_FILE': '/tmp/s', 'BRAVO_VERBOSE': '0',
            'HOME': '/h'}

    def test_libbravo_dropped_with_one_note_others_kept_on_every_side(self):
        notes = []
        env = br.Environment(self.base, extra_preload=['/a/alloc.so'], say=notes.append)
        self.assertEqual(len(notes), 1)
        self.assertIn('/x/libbravo-ba.so /y/libbravo.so', notes[0])
        glibc = env.for_run(br.Lock('glibc'))
        variant = env.for_run(br.Lock('v', '/l/libbravo-v.so'))
        self.assertEqual(glibc['LD_PRELOAD'], 'libjemalloc.so.2 libm.so.6 /a/alloc.so')
        self.assertEqual(variant['LD_PRELOAD'],
                         'libjemalloc.so.2 libm.so.6 /a/alloc.so /l/libbravo-v.so')
        for e in (glibc, variant):
            self.assertEqual(e['BRAVO_VERBOSE'], '1')
            self.assertNotIn('BRAVO_STATS', e)
            self.assertNotIn('BRAVO_STATS_FILE', e)
            self.assertEqual(e['HOME'], '/h')

    def test_nothing_to_preload_leaves_no_variable(self):
        env = br.Environment({'LD_PRELOAD': '/x/libbravo-ba.so'})
        self.assertNotIn('LD_PRELOAD', env.for_run(br.Lock('glibc')))
        self.assertEqual(env.for_run(br.Lock('v', '/l/libbravo-v.so'))['LD_PRELOAD'],
                         '/l/libbravo-v.so')

    def test_no_note_when_nothing_is_dropped(self):
        notes = []
        br.Environment({'LD_PRELOAD': 'libm.so.6'}, say=notes.append)
        self.assertEqual(notes, [])

    def test_statistics_only_for_a_variant_run_that_asks(self):
        env = br.Environment({})
        v = env.for_run(br.Lock('v', '/l/libbravo-v.so'), stats_file='/s')
        self.assertEqual((v['BRAVO_STATS'], v['BRAVO_STATS_FILE']), ('1', '/s'))
        self.assertNotIn('BRAVO_STATS', env.for_run(br.Lock('glibc'), stats_file='/s'))


class ProofOnRuns(Scratch):
    def fake(self, line):
        """A 'variant' run whose stderr holds line (the library is ignored)."""
        return br.Run(br.Lock('fake', FAKE_LIB), shell('echo "%s" >&2' % line))

    def test_a_variant_run_proved_by_its_startup_line(self):
        run = self.runner().run(self.fake('libbravo: variant=fake pid=1'))
        self.assertEqual((run.status, run.exit_status), ('ok', 0))
        self.assertIsNotNone(run.wall_s)

    def test_a_variant_run_without_the_line_is_unverified(self):
        run = self.runner().run(self.fake('hello'))
        self.assertEqual(run.status, 'unverified')
        self.assertIn('did not take effect', run.detail)

    def test_another_variant_named_is_unverified(self):
        run = self.runner().run(self.fake('libbravo: variant=fake\nlibbravo: variant=ba'))
        self.assertEqual(run.status, 'unverified')
        self.assertIn('wrong variant: libbravo: variant=ba was loaded, not fake', run.detail)

    def test_a_run_without_preload_that_shows_libbravo_is_unverified(self):
        run = self.runner().run(br.Run(br.Lock('glibc'),
                                       shell('echo "libbravo: variant=ba" >&2')))
        self.assertEqual(run.status, 'unverified')
        self.assertIn('run without preload (glibc)', run.detail)

    def test_the_run_sees_the_policy_environment(self):
        r = self.runner(base={'LD_PRELOAD': '/x/libbravo-ba.so', 'BRAVO_STATS': '1'})
        run = r.run(br.Run(br.Lock('glibc'), shell(
            'echo "${LD_PRELOAD-unset} ${BRAVO_STATS-unset} $BRAVO_VERBOSE $EXTRA"'),
            env={'EXTRA': 'x'}))
        self.assertEqual(run.status, 'ok')
        self.assertEqual(run.stdout().strip(), 'unset unset 1 x')

    def test_exit_status_and_signal(self):
        run = self.runner().run(br.Run(br.Lock('glibc'), shell('exit 3')))
        self.assertEqual((run.status, run.detail), ('failed', 'exit status 3'))
        run = self.runner().run(br.Run(br.Lock('glibc'), shell('kill -SEGV $$')))
        self.assertEqual((run.status, run.detail), ('failed', 'killed by signal 11'))
        run = self.runner().run(br.Run(br.Lock('glibc'), [os.path.join(self.dir, 'none')]))
        self.assertEqual(run.status, 'failed')
        self.assertIn('cannot run', run.detail)

    def test_statistics_that_counted_nothing_are_unverified(self):
        run = self.runner(stats=True).run(self.fake('libbravo: variant=fake'))
        self.assertEqual(run.status, 'unverified')
        self.assertIn('no libbravo statistics at exit', run.detail)
        script = ('echo "libbravo: variant=fake" >&2; printf "libbravo: statistics\\n'
                  'libbravo.reads=7\\nlibbravo.writes=1\\n" >"$BRAVO_STATS_FILE"')
        run = self.runner(stats=True).run(br.Run(br.Lock('fake', FAKE_LIB), shell(script)))
        self.assertEqual(run.status, 'ok')
        self.assertEqual((run.stats['reads'], run.stats['writes'], run.stats['blocks']), (7, 1, 1))


    def test_a_profile_is_asked_for_every_lock_and_must_come(self):
        run = self.runner(profile=True).run(self.fake('libbravo: variant=fake'))
        self.assertEqual(run.status, 'unverified')
        self.assertIn('no libbravo profile at exit', run.detail)
        script = ('echo "libbravo: variant=fake" >&2; '
                  'printf "pid,variant,rank,lock\\n1,fake,1,0x10\\n" >"$BRAVO_PROFILE_FILE"; '
                  'echo "$BRAVO_PROFILE_TOP"')
        run = self.runner(profile=True).run(br.Run(br.Lock('fake', FAKE_LIB), shell(script)))
        self.assertEqual(run.status, 'ok')
        self.assertEqual(run.stdout().strip(), '0')
        self.assertTrue(run.profile_path.endswith('.profile.csv'))
        run = self.runner(profile=True).run(br.Run(br.Lock('glibc'), shell(
            'echo "${BRAVO_PROFILE_FILE-unset}"')))
        self.assertEqual((run.status, run.stdout().strip(), run.profile_path),
                         ('ok', 'unset', None))

    def test_a_profile_setting_is_not_inherited(self):
        r = self.runner(base={'BRAVO_PROFILE': '1', 'BRAVO_PROFILE_FILE': '/tmp/p'})
        run = r.run(br.Run(br.Lock('glibc'), shell(
            'echo "${BRAVO_PROFILE-unset} ${BRAVO_PROFILE_FILE-unset}"')))
        self.assertEqual(run.stdout().strip(), 'unset unset')


class Profiles(Scratch):
    """bravo_profile.py: reading a run's profile file, matching locks across
    runs, the differences of two sides."""
    HEADER = ('pid,variant,rank,lock,generation,state,kind,reads,writes,read_waits,'
              'read_wait_ns,write_waits,write_wait_ns,site_function,site_object,'
              'site_object_offset,site_source')

    def write(self, name, lines):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write('\n'.join([self.HEADER] + lines) + '\n')
        return path

    def test_two_processes_one_header_and_the_evicted_row(self):
        path = self.write('p.csv', [
            '1,ba,1,0x10,1,live,default,5,1,1,100,0,0,f+0x1,/bin/prog,0x20,prog.c:3',
            self.HEADER,
            '2,ba,1,0x10,1,live,default,2,0,0,0,0,0,f+0x1,/bin/prog,0x20,prog.c:3',
            '2,ba,,,3,evicted,,7,2,,,,,,,,'])
        rows, evicted = bp.read_rows(path)
        self.assertEqual((len(rows), evicted), (2, 9))
        s = bp.summarize(rows)
        self.assertEqual(s, {('f+0x1 (prog)', 'default'):
                             {'wait_ns': 100, 'waits': 1, 'acquisitions': 8, 'source': 'prog.c:3'}})
        self.assertEqual(bp.read_rows(os.path.join(self.dir, 'none')), ([], 0))
        self.assertTrue(bp.has_report(path))

    def test_a_site_without_a_function_is_its_object_and_offset(self):
        self.assertEqual(bp.key_of({'site_function': '', 'site_object': '/lib/libx.so',
                                    'site_object_offset': '0x4f0', 'kind': 'process-shared'}),
                         ('libx.so+0x4f0 (libx.so)', 'process-shared'))

    def summary(self, wait_ns, waits=1, acq=10, site='f'):
        return {(site + '+0x1 (prog)', 'default'):
                {'wait_ns': wait_ns, 'waits': waits, 'acquisitions': acq, 'source': ''}}

    def runs_of(self, *summaries):
        out = {}
        for s in summaries:
            out.update(s)
        return out

    def test_medians_the_largest_difference_first_alike_left_out(self):
        g = self.summary(5, site='g')
        base = [self.runs_of(self.summary(100), g), self.runs_of(self.summary(300), g),
                self.summary(200)]
        other = [self.runs_of(self.summary(1000), g), self.runs_of(self.summary(900), g),
                 self.runs_of(self.summary(1100), self.summary(0, 0, site='h'))]
        d = bp.differences(base, other)
        self.assertEqual([(x['key'][0], x['diff_ns']) for x in d], [('f+0x1 (prog)', 800)])
        # g: medians 5 and 5 (a run without it counts 0: median of 5, 5, 0 is 5)
        self.assertEqual(bp.table('glibc', 'ba', [])[1], '  no lock waited differently')
        lines = bp.table('glibc', 'ba', d)
        self.assertTrue(lines[0].startswith('ba vs glibc:'))
        self.assertIn('+0.001', lines[2])


class Bounds(Scratch):
    def test_timeout_stops_the_whole_process_group(self):
        pidfile = os.path.join(self.dir, 'pid')
        run = self.runner(timeout=0.5).run(br.Run(br.Lock('glibc'), shell(
            'sleep 60 & echo $! >"%s"; wait' % pidfile)))
        self.assertEqual(run.status, 'timeout')
        self.assertIn('timed out after 0.5s', run.detail)
        time.sleep(0.2)
        self.assertFalse(alive(int(open(pidfile).read())), 'the background sleep survived')

    def test_a_signal_to_the_tool_stops_the_run_and_keeps_the_records(self):
        pidfile = os.path.join(self.dir, 'pid')
        records = []
        r = self.runner()

        def plan(rnd):
            return [br.Run(br.Lock('glibc'), shell('echo ok')),
                    br.Run(br.Lock('glibc'), shell('sleep 60 & echo $! >"%s"; wait' % pidfile))]

        timer = threading.Timer(0.7, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with self.assertRaises(br.Interrupted) as caught:
            with br.interruptible():
                br.run_rounds(r, range(1, 3), plan, records)
        timer.join()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self.assertEqual(caught.exception.signum, signal.SIGINT)
        self.assertEqual(br.exit_status_of(caught.exception.signum), 130)
        self.assertEqual([x.status for x in records], ['ok', 'interrupted'])
        time.sleep(0.2)
        self.assertFalse(alive(int(open(pidfile).read())), 'the interrupted run survived')


class Rounds(Scratch):
    def test_orders(self):
        items = ['a', 'b', 'c']
        self.assertEqual(br.round_order(items, 2, 'fixed'), items)
        self.assertEqual(br.round_order(items, 1, 'alternate'), items)
        self.assertEqual(br.round_order(items, 2, 'alternate'), ['c', 'b', 'a'])
        self.assertEqual([br.round_order(items, r, 'rotate') for r in (1, 2, 3, 4)],
                         [items, ['b', 'c', 'a'], ['c', 'a', 'b'], items])

    def plan_of(self, failing=()):
        """Locks glibc and v; a run fails when (round, lock) is in failing."""
        def plan(rnd):
            runs = []
            for lock in br.round_order([br.Lock('glibc'), br.Lock('v', FAKE_LIB)], rnd,
                                       'alternate'):
                bad = (rnd, lock.name) in failing
                line = '' if lock.library is None else 'echo "libbravo: variant=v" >&2; '
                runs.append(br.Run(lock, shell(line + ('exit 1' if bad else 'true')), rnd))
            return runs
        return plan

    def order(self, records):
        return ['%d%s' % (r.round, r.lock.name) for r in records]

    def test_every_round_runs_every_lock_before_the_next(self):
        records = []
        why = br.run_rounds(self.runner(), range(1, 4), self.plan_of(), records)
        self.assertIsNone(why)
        self.assertEqual(self.order(records), ['1glibc', '1v', '2v', '2glibc', '3glibc', '3v'])
        self.assertEqual([r.seq for r in records], [1, 2, 3, 4, 5, 6])
        self.assertTrue(all(r.ok() for r in records))

    def test_a_first_round_without_data_stops_unless_keep_going(self):
        broken = {(r, l) for r in (1, 2, 3) for l in ('glibc', 'v')}
        records = []
        self.assertEqual(br.run_rounds(self.runner(), range(1, 4), self.plan_of(broken),
                                       records), 'first-round')
        self.assertEqual(len(records), 2)
        records = []
        self.assertIsNone(br.run_rounds(self.runner(), range(1, 4), self.plan_of(broken),
                                        records, keep_going=True))
        self.assertEqual(len(records), 6)

    def test_one_lock_failing_throughout_does_not_stop_the_rounds(self):
        records = []
        why = br.run_rounds(self.runner(), range(1, 4),
                            self.plan_of({(1, 'v'), (2, 'v'), (3, 'v')}), records)
        self.assertIsNone(why)
        self.assertEqual(len(records), 6)

    def test_first_failure_stops_at_once(self):
        records = []
        why = br.run_rounds(self.runner(), range(1, 4), self.plan_of({(2, 'glibc')}), records,
                            stop='first-failure')
        self.assertEqual(why, 'first-failure')
        self.assertEqual(self.order(records), ['1glibc', '1v', '2v', '2glibc'])

    def test_judge_refines_an_ok_run(self):
        def judge(run):
            fields, why = br.result_line(run.stdout())
            if why:
                run.fail('no-result', why)

        def plan(rnd):
            return [br.Run(br.Lock('glibc'), shell('echo "RESULT prog=x throughput=5.0"')),
                    br.Run(br.Lock('glibc'), shell('echo nothing'))]
        records = []
        br.run_rounds(self.runner(), [1], plan, records, judge=judge, stop=None)
        self.assertEqual([r.status for r in records], ['ok', 'no-result'])
        self.assertIn('0 RESULT lines', records[1].detail)


class Output(Scratch):
    def test_result_line(self):
        fields, why = br.result_line('x\nRESULT prog=a threads=2 throughput=12.5 k=v\n')
        self.assertIsNone(why)
        self.assertEqual(fields['throughput'], '12.5')
        self.assertIn('2 RESULT lines', br.result_line('RESULT a=1\nRESULT a=2\n')[1])
        self.assertIn('no numeric throughput', br.result_line('RESULT prog=a\n')[1])

    def test_shown_command_names_the_policy_preload_relative_to_the_tree(self):
        env = br.Environment({'LD_PRELOAD': '/x/libbravo-ba.so'})
        run = br.Run(br.Lock('v', '/b/src/.libs/libbravo-v.so'), ['/b/bench/p', '-t', "it's"])
        self.assertEqual(br.shown_command(env, run, '/b'),
                         "BRAVO_VERBOSE=1 LD_PRELOAD=src/.libs/libbravo-v.so bench/p -t "
                         "'it'\"'\"'s'")

    def test_csv_log_grows_by_whole_rows(self):
        path = os.path.join(self.dir, 'a.csv')
        log = br.CsvLog(path, ['a', 'b'])
        log.write({'a': 1, 'b': 'x,y'})
        log.close()
        log = br.CsvLog(path, ['a', 'b'], append=True)
        log.write({'a': 2})
        log.close()
        self.assertEqual(open(path).read(), 'a,b\n1,"x,y"\n2,\n')


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit('usage: runner_test.py TOOLS_DIR')
    sys.dont_write_bytecode = True
    sys.path.insert(0, sys.argv.pop(1))
    import bravo_runner as br    # noqa: E402
    import bravo_profile as bp   # noqa: E402
    unittest.main(verbosity=2)
