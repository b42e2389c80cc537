#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""profile_check.py VARIANT LIB PROFILE_TEST - libbravo's per-lock profile
(BRAVO_PROFILE, BRAVO_PROFILE_FILE and their settings) under one variant,
on a program that knows its locks (profile_test.c): every lock life has
its row with the exact acquisition counts, kind, state and call site; the
CSV has the documented header; the table, the top-N and sort settings, the
limit on records, a forked child's own report, malformed settings, an
unsafe file, and silence without BRAVO_PROFILE.  Each check is one
behaviour, named in its failure line; no timing is asserted.  Prints what
failed; exits 1 if anything did.  Python 3 standard library only."""

import csv
import io
import os
import shutil
import re
import subprocess
import sys
import tempfile

# The CSV header, as man/libbravo.7 documents it.
HEADER = ('pid,variant,rank,lock,generation,state,kind,reads,writes,read_fast_fraction,'
          'read_fast,read_slow_bias_off,read_slow_inhibited,read_slow_writer_waiting,'
          'read_slow_collision,read_slow_lost_race,revocations,revocation_ns,read_waits,'
          'read_wait_ns,read_wait_max_ns,write_waits,write_wait_ns,write_wait_max_ns,'
          'write_holds,write_hold_ns,write_hold_max_ns,site,site_function,site_object,'
          'site_object_offset,site_source')
SLOW = ['read_slow_bias_off', 'read_slow_inhibited', 'read_slow_writer_waiting',
        'read_slow_collision', 'read_slow_lost_race']
BRAVO_COLUMNS = ['read_fast_fraction', 'read_fast'] + SLOW + ['revocations', 'revocation_ns']
LIMIT_S = 60

variant, lib, prog = sys.argv[1:4]
bravo = variant.startswith('bravo-')
failures = []
tmp = tempfile.mkdtemp(prefix='profile_check.')


def bad(check, why):
    failures.append('%s: %s' % (check, why))


def run(args=(), program=None, **settings):
    """(stdout, stderr) of the program (or a copy of it) under the variant
    with settings.  Every acquisition counted (BRAVO_PROFILE_SAMPLE=1)
    unless settings say otherwise; a setting of None is left unset."""
    env = {k: v for k, v in os.environ.items() if not k.startswith('BRAVO_')}
    env.update(LD_PRELOAD=lib, EXPECT_RWLOCK_LIB='libbravo-%s.so' % variant,
               BRAVO_PROFILE_SAMPLE='1')
    env.update(settings)
    env = {k: v for k, v in env.items() if v is not None}
    r = subprocess.run([program or prog] + list(args), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=LIMIT_S)
    if r.returncode != 0:
        raise SystemExit('profile_check: %s failed (exit %d) with %s: %s'
                         % (prog, r.returncode, settings, r.stderr))
    return r.stdout, r.stderr


def lives_of(stdout):
    """The program's own account: {(address, generation): life}, pid, child pid."""
    lives, pid, child = {}, None, None
    for line in stdout.splitlines():
        w = line.split()
        if w[0] == 'life':
            lives[(w[2], int(w[3]))] = dict(
                name=w[1], kind=w[4], state=w[5], function=w[6], line=int(w[7]),
                reads=int(w[8]), writes=int(w[9]), read_waits=int(w[10]))
        elif w[0] == 'pid':
            pid = w[1]
        elif w[0] == 'child':
            child = w[1]
    return lives, pid, child


def csv_rows(path):
    """(header line, rows as dicts) of a profile CSV file."""
    with open(path) as f:
        text = f.read()
    header = text.split('\n', 1)[0]
    return header, list(csv.DictReader(io.StringIO(text)))


def profile_csv(name, args=(), program=None, **settings):
    path = os.path.join(tmp, name + '.csv')
    out, err = run(args, program, BRAVO_PROFILE_FILE=path, **settings)
    header, rows = csv_rows(path)
    return out, err, header, rows


# ---- every life's row: counts, kind, state, site ----

def check_rows(rows, lives, pid, names):
    mine = [r for r in rows if r['pid'] == pid]
    if len(mine) != len(lives):
        bad('one row per lock life', 'want %d rows, got %d' % (len(lives), len(mine)))
    for r in mine:
        life = lives.get((r['lock'], int(r['generation'])))
        if life is None:
            bad('rows name the program\'s locks', 'unknown lock %s#%s' % (r['lock'], r['generation']))
            continue
        check_life(r, life, names)


def check_life(r, life, names):
    name = life['name']
    for key in ('kind', 'state'):
        if r[key] != life[key]:
            bad('%s of %s' % (key, name), 'want %s, got %s' % (life[key], r[key]))
    for key in ('reads', 'writes', 'read_waits'):
        if int(r[key]) != life[key]:
            bad('exact %s of %s' % (key, name), 'want %d, got %s' % (life[key], r[key]))
    if int(r['write_holds']) != life['writes']:
        bad('every write hold of %s timed to its unlock' % name,
            'writes %d, holds %s' % (life['writes'], r['write_holds']))
    if int(r['write_waits']) != 0:
        bad('no write of %s waits' % name, 'write_waits %s' % r['write_waits'])
    check_bravo_columns(r, life)
    check_site(r, life, names)


def check_bravo_columns(r, life):
    name = life['name']
    applies = bravo and life['kind'] != 'process-shared'
    empty = [c for c in BRAVO_COLUMNS if r[c] == '']
    if not applies:
        if len(empty) != len(BRAVO_COLUMNS):
            bad('BRAVO columns of %s not applicable (empty)' % name,
                'filled: %s' % [c for c in BRAVO_COLUMNS if r[c] != ''])
        return
    if empty:
        bad('BRAVO columns of %s filled' % name, 'empty: %s' % empty)
        return
    if int(r['read_fast']) + sum(int(r[c]) for c in SLOW) != life['reads']:
        bad('fast and slow reads of %s add up to its reads' % name,
            'fast %s, slow %s' % (r['read_fast'], [r[c] for c in SLOW]))


def check_site(r, life, names):
    name = life['name']
    if os.path.basename(r['site_object']) != os.path.basename(prog):
        bad('call site object of %s' % name, 'got %r' % r['site_object'])
    if not re.match(r'^0x[0-9a-f]+$', r['site_object_offset']):
        bad('call site offset of %s' % name, 'got %r' % r['site_object_offset'])
    if not names:
        return
    if not r['site_function'].startswith(life['function'] + '+0x'):
        bad('call site function of %s' % name, 'want %s+0x..., got %r'
            % (life['function'], r['site_function']))
    want = 'profile_test.c:%d' % life['line']
    if not r['site_source'].endswith('/' + want) and r['site_source'] != want:
        bad('call site file:line of %s' % name, 'want ...%s, got %r' % (want, r['site_source']))


# ---- the checks ----

def check_table(names_holder):
    """BRAVO_PROFILE=1: the table on stderr, one row per life; says the symbols' source."""
    out, err = run(BRAVO_PROFILE='1')
    lives = lives_of(out)[0]
    lines = err.splitlines()
    first = re.match(r'^libbravo: profile variant=%s pid=\d+: (\d+) locks, all (\d+) by time '
                     r'waited \(BRAVO_PROFILE_SORT=wait\); symbols: (.*)$' % re.escape(variant),
                     lines[0] if lines else '')
    if not first or int(first.group(1)) != len(lives):
        bad('table title', 'got %r' % (lines[:1],))
        return
    names_holder.append(first.group(3) == 'elf')
    if not lines[1].startswith('#  lock'):
        bad('table header', 'got %r' % lines[1])
    body = lines[2:]
    if len(body) != len(lives):
        bad('one table row per lock life', 'want %d, got %d: %s' % (len(lives), len(body), body))
    named = {line.split()[1] for line in body if len(line.split()) > 1}
    for (addr, gen), life in lives.items():
        if '%s#%d' % (addr, gen) not in named:
            bad('table row of %s' % life['name'], 'no row %s#%d' % (addr, gen))
    shared = [line for line in body if ' process-shared ' in line]
    if len(shared) != 1 or shared[0].split()[6:8] != ['n/a', 'n/a']:
        bad('a process-shared lock\'s BRAVO columns say n/a', 'got %r' % shared)
    if not bravo and any(line.split()[6] != 'n/a' for line in body):
        bad('no BRAVO: fast%% says n/a in every row', '%s' % body)


def check_csv(names):
    """The CSV: documented header, every life exact; a forked child counts from zero."""
    out, err, header, rows = profile_csv('all', ['fork'], BRAVO_PROFILE_TOP='0')
    lives, pid, child = lives_of(out)
    if header != HEADER:
        bad('CSV header as documented', 'got %r' % header)
    if err:
        bad('nothing on stderr with BRAVO_PROFILE_FILE', 'got %r' % err)
    check_rows(rows, lives, pid, names)
    kids = [r for r in rows if r['pid'] == child]
    acq = {(r['lock'], r['generation']): int(r['reads']) + int(r['writes']) for r in kids}
    default = [k for k, life in lives.items() if life['name'] == 'default'][0]
    if acq.get((default[0], str(default[1]))) != 5 or sum(acq.values()) != 5:
        bad('a forked child reports only its own acquisitions (5 reads)', 'got %s' % acq)
    for r in rows:
        if int(r['rank']) < 1 or r['variant'] != variant:
            bad('rank and variant columns', 'got %r' % r)
            break


def sort_key(r, key):
    reads, writes = int(r['reads']), int(r['writes'])
    if key == 'wait':
        return int(r['read_wait_ns']) + int(r['write_wait_ns'])
    if key == 'acquisitions':
        return reads + writes
    if key == 'slow-reads':
        return sum(int(r[c]) for c in SLOW) if r[SLOW[0]] != '' else 0
    if key == 'revocations':
        return int(r['revocations']) if r['revocations'] != '' else 0
    return writes / (reads + writes) if reads + writes else 0


def check_sorts(lives):
    """BRAVO_PROFILE_SORT: rows in order of the key; the known winners win."""
    winner = {'wait': 'contended', 'acquisitions': 'default', 'writer-share': 'writer'}
    for key in ('wait', 'acquisitions', 'slow-reads', 'revocations', 'writer-share'):
        out, err, header, rows = profile_csv('sort-' + key, BRAVO_PROFILE_SORT=key)
        lives, pid, child = lives_of(out)
        keys = [sort_key(r, key) for r in rows]
        if keys != sorted(keys, reverse=True) or [int(r['rank']) for r in rows] != \
                list(range(1, len(rows) + 1)):
            bad('BRAVO_PROFILE_SORT=%s orders the rows' % key, 'keys %s' % keys)
        if key in winner and rows:
            top = lives.get((rows[0]['lock'], int(rows[0]['generation'])), {}).get('name')
            if top != winner[key]:
                bad('BRAVO_PROFILE_SORT=%s: the busiest lock first' % key,
                    'want %s, got %s' % (winner[key], top))


def check_top():
    """BRAVO_PROFILE_TOP=N: N rows, in the table and in the CSV."""
    out, err, header, rows = profile_csv('top', BRAVO_PROFILE_TOP='3')
    if len(rows) != 3:
        bad('BRAVO_PROFILE_TOP=3 keeps 3 CSV rows', 'got %d' % len(rows))
    out, err = run(BRAVO_PROFILE='1', BRAVO_PROFILE_TOP='2')
    lines = err.splitlines()
    if len(lines) != 4 or 'the busiest 2 by' not in lines[0]:
        bad('BRAVO_PROFILE_TOP=2 shows 2 table rows', 'got %r' % lines)


def evicted_row(rows):
    """(kept rows, the evicted row or None) of a CSV's rows."""
    kept = [r for r in rows if r['state'] != 'evicted']
    evicted = [r for r in rows if r['state'] == 'evicted']
    return kept, evicted[0] if len(evicted) == 1 else None


def acquisitions(r):
    return int(r['reads']) + int(r['writes'])


def check_limit():
    """BRAVO_PROFILE_LOCKS=3: 3 records; the lives evicted to make room are
    one row, and every acquisition is in a kept row or in that one."""
    out, err, header, rows = profile_csv('limit', BRAVO_PROFILE_LOCKS='3', BRAVO_PROFILE_TOP='0')
    lives = lives_of(out)[0]
    kept, evicted = evicted_row(rows)
    total = sum(life['reads'] + life['writes'] for life in lives.values())
    if len(kept) != 3 or evicted is None:
        bad('BRAVO_PROFILE_LOCKS=3 keeps 3 rows and one evicted row', 'got %d rows, %r'
            % (len(kept), evicted))
        return
    if int(evicted['generation']) < len(lives) - 3:
        bad('the evicted row counts every life evicted', 'want at least %d, got %r'
            % (len(lives) - 3, evicted))
    if acquisitions(evicted) + sum(acquisitions(r) for r in kept) != total:
        bad('the evicted and kept rows hold every acquisition', 'want %d, got %d + %d'
            % (total, acquisitions(evicted), sum(acquisitions(r) for r in kept)))
    # A life evicted and used again is a new row, counted from then, its
    # generation counted afresh: a row is part of some life at its address.
    for r in kept:
        at = [life for (lock, _), life in lives.items() if lock == r['lock']]
        if not any(int(r['reads']) <= life['reads'] and int(r['writes']) <= life['writes']
                   for life in at):
            bad('a kept row is part of a life at its address', 'got %r for %r' % (r, at))
    out, err = run(BRAVO_PROFILE='1', BRAVO_PROFILE_LOCKS='3')
    if not re.search(r'^libbravo: profile: evicted: %s lock lives, the least acquired, to make '
                     r'room \(BRAVO_PROFILE_LOCKS=3 records\): %d acquisitions, [0-9.]+ ms '
                     r'waited on them$' % (evicted['generation'], acquisitions(evicted)),
                     err, re.MULTILINE):
        bad('the table says what was evicted', 'got %r' % err.splitlines()[-1:])


def check_churn():
    """Many short-lived locks (20000 by 2 threads, each used once, never
    initialized or destroyed) between a hot lock and a late one, with room
    for 64: the hot and the late lock keep exact rows, the least acquired
    are evicted, and every acquisition is counted once."""
    n = 20000
    out, err, header, rows = profile_csv('churn', ['churn', str(n), '2'],
                                         BRAVO_PROFILE_LOCKS='64', BRAVO_PROFILE_TOP='0')
    lives, pid, _ = lives_of(out)
    kept, evicted = evicted_row(rows)
    if len(kept) > 64 or evicted is None:
        bad('churn: at most 64 rows and an evicted row', 'got %d rows, %r' % (len(kept), evicted))
        return
    for (lock, generation), life in lives.items():
        mine = [r for r in kept if r['lock'] == lock]
        if len(mine) != 1 or int(mine[0]['reads']) != life['reads'] or \
                int(mine[0]['writes']) != life['writes']:
            bad('churn: the %s lock keeps its one exact row' % life['name'],
                'want %r, got %r' % (life, mine))
    # Each churned lock is used once, by the acquisition that makes its
    # record: never evicted before it counted, so each row is exactly 1.
    others = [r for r in kept if (r['lock'], int(r['generation'])) not in lives]
    if any(acquisitions(r) != 1 for r in others):
        bad('churn: the other rows are churned locks, one acquisition each', 'got %r'
            % [r for r in others if acquisitions(r) != 1][:2])
    if int(evicted['generation']) + len(others) != n:
        bad('churn: each churned lock is a row or an evicted life',
            'want %d, got %s + %d' % (n, evicted['generation'], len(others)))
    total = n + sum(life['reads'] + life['writes'] for life in lives.values())
    if acquisitions(evicted) + sum(acquisitions(r) for r in kept) != total:
        bad('churn: every acquisition counted once', 'want %d, got %d + %d'
            % (total, acquisitions(evicted), sum(acquisitions(r) for r in kept)))


def check_stats_totals():
    """With the statistics on too, the rows (process-shared locks aside:
    glibc's, which the statistics do not see) add up to the statistics'
    totals: acquisitions and, under BRAVO, each read class and the
    revocations."""
    out, err, header, rows = profile_csv('stats', BRAVO_STATS='1', BRAVO_PROFILE_TOP='0')
    stats = dict(re.findall(r'^libbravo\.(\w+)=(\d+)$', err, re.MULTILINE))
    mine = [r for r in rows if r['kind'] != 'process-shared']
    keys = ['reads', 'writes']
    if bravo:
        keys += ['read_fast', 'read_slow_bias_off', 'read_slow_inhibited',
                 'read_slow_writer_waiting', 'read_slow_collision', 'read_slow_lost_race',
                 'revocations']
    for k in keys:
        want = stats.get(k)
        got = sum(int(r[k] or 0) for r in mine)
        if want is None or int(want) != got:
            bad('the rows add up to the statistics\' %s' % k, 'statistics %s, rows %d'
                % (want, got))


def sampled_lives(name, args):
    """profile_test ARGS under the default sampling: each life it prints,
    with its row in the CSV (None if it has none)."""
    out, err, header, rows = profile_csv(name, args, BRAVO_PROFILE_SAMPLE=None,
                                         BRAVO_PROFILE_TOP='0')
    lives, pid, _ = lives_of(out)
    by_life = {(r['lock'], int(r['generation'])): r for r in rows if r['pid'] == pid}
    return [(life, by_life.get(key)) for key, life in lives.items()]


def check_sampled():
    """The default BRAVO_PROFILE_SAMPLE (64): the acquisitions that do not
    wait are sampled, one in 64 counted as 64.  The default lock's 200000
    reads and 20000 writes are estimated within 20%, its read classes add
    up to its reads, some of its write holds are timed; what is never
    sampled stays exact: every count of the process-shared lock, the
    contended lock's one read that waited.  Every lock made by init has
    its row (the static lock, first used on a fast path, has one only if
    sampled)."""
    reads, writes = 200000, 20000
    for life, r in sampled_lives('sampled', ['many', str(reads), str(writes)]):
        name = life['name']
        if r is None:
            if name != 'static':
                bad('sampled: %s keeps its row' % name, 'no row')
            continue
        for k in ('kind', 'state'):
            if r[k] != life[k]:
                bad('sampled: %s of %s' % (k, name), 'want %s, got %s' % (life[k], r[k]))
        if name == 'default':
            for k, want in (('reads', reads), ('writes', writes)):
                if not 0.8 * want <= int(r[k]) <= 1.2 * want:
                    bad('sampled: %s of default estimated within 20%%' % k,
                        'want %d, got %s' % (want, r[k]))
            if not 1 <= int(r['write_holds']) < writes:
                bad('sampled: some of default\'s write holds timed', 'got %s' % r['write_holds'])
            check_bravo_columns(r, dict(life, reads=int(r['reads'])))
        elif name == 'shared':
            for k in ('reads', 'writes'):
                if int(r[k]) != life[k]:
                    bad('sampled: process-shared %s exact' % k,
                        'want %d, got %s' % (life[k], r[k]))
        elif name == 'contended' and int(r['read_waits']) != 1:
            bad('sampled: the read that waited counted', 'read_waits %s' % r['read_waits'])


def check_sampled_threads():
    """The default sampling over threads that each make few fast reads:
    4000 threads, one after another, 5 reads each.  A thread's first
    sample falls anywhere in its first 64 fast acquisitions, so the reads
    are estimated within 25% (about 4.6 standard deviations), not 64 per
    thread (13 times too many)."""
    n, k = 4000, 5
    for life, r in sampled_lives('sampled-threads', ['threads', str(n), str(k)]):
        if r is None:
            bad('sampled threads: the lock keeps its row', 'no row')
        elif not 0.75 * life['reads'] <= int(r['reads']) <= 1.25 * life['reads']:
            bad('sampled threads: %d threads\' %d reads each estimated within 25%%' % (n, k),
                'want %d, got %s' % (life['reads'], r['reads']))


def check_names_escaped():
    """A program whose file name holds a line break, a comma, a quote, a
    backslash and an escape character (names are the program's to choose):
    every report line stays one line.  The CSV parses to one row per life
    with the object's name escaped (\\n, \\x1b, \\\\) and quoted, and the
    table on stderr has no control character."""
    odd = os.path.join(tmp, 'odd\n* * * * * root x,"y\\z\x1b')
    shutil.copy(prog, odd)
    out, err, header, rows = profile_csv('odd', program=odd, BRAVO_PROFILE_TOP='0')
    lives, pid = lives_of(out)[:2]
    mine = [r for r in rows if r['pid'] == pid]
    want = os.path.join(tmp, 'odd\\n* * * * * root x,"y\\\\z\\x1b')
    if len(mine) != len(lives) or any(r['site_object'] != want for r in mine):
        bad('odd program name: one CSV row per life, object escaped',
            'want %d rows naming %r, got %r' % (len(lives), want,
                                               [r['site_object'] for r in mine]))
    text = open(os.path.join(tmp, 'odd.csv')).read()
    if text.count('\n') != len(rows) + 1:
        bad('odd program name: one CSV line per row', 'got %d lines for %d rows'
            % (text.count('\n'), len(rows)))
    out, err = run(program=odd, BRAVO_PROFILE='1')
    if any(ord(c) < 32 and c != '\n' for c in err) or '\x7f' in err:
        bad('odd program name: no control character in the table', 'got %r' % err)
    if len(err.splitlines()) != len(lives) + 2:
        bad('odd program name: one table line per row', 'got %r' % err.splitlines())


def check_silence():
    """No BRAVO_PROFILE: nothing printed, no file."""
    out, err = run()
    if err:
        bad('nothing on stderr without BRAVO_PROFILE', 'got %r' % err)


def one_line(setting, value, want, **more):
    """Run with setting=value: stderr holds one line about it, naming want."""
    out, err = run(**{setting: value}, **more)
    said = [l for l in err.splitlines() if l.startswith('libbravo: ignoring %s=' % setting)]
    if len(said) != 1 or want not in said[0]:
        bad('%s=%s: one line naming the default' % (setting, value), 'got %r' % err.splitlines())
    return out, err


def check_malformed():
    """A malformed value: one line, and the default in effect."""
    out, err = one_line('BRAVO_PROFILE', 'maybe', 'using 0')
    if len(err.splitlines()) != 1:
        bad('BRAVO_PROFILE=maybe: the profile stays off', 'got %r' % err)
    path = os.path.join(tmp, 'malformed.csv')
    for setting, value, want in (('BRAVO_PROFILE_TOP', 'ten', 'using 10'),
                                 ('BRAVO_PROFILE_SAMPLE', '0', 'using 64'),
                                 ('BRAVO_PROFILE_LOCKS', '0', 'using 16384')):
        out, err = one_line(setting, value, want, BRAVO_PROFILE_FILE=path)
        if len(err.splitlines()) != 1:
            bad('%s=%s: nothing else on stderr' % (setting, value), 'got %r' % err)
    out, err = one_line('BRAVO_PROFILE_SORT', 'fastest', 'using wait', BRAVO_PROFILE='1')
    if 'by time waited (BRAVO_PROFILE_SORT=wait)' not in err:
        bad('BRAVO_PROFILE_SORT=fastest: sorted by wait', 'got %r' % err.splitlines()[:2])
    out, err = run(BRAVO_PROFILE_FILE='/' + 'x' * 5000)
    if len(err.splitlines()) != 1 or 'profile off' not in err:
        bad('BRAVO_PROFILE_FILE too long: one line, profile off', 'got %r' % err)


def check_file_safety():
    """BRAVO_PROFILE_FILE: never through a symbolic link; appended, one header."""
    target = os.path.join(tmp, 'target')
    link = os.path.join(tmp, 'link')
    with open(target, 'w') as f:
        f.write('keep\n')
    os.symlink(target, link)
    out, err = run(BRAVO_PROFILE_FILE=link)
    if open(target).read() != 'keep\n' or 'it is a symbolic link; profile dropped' not in err:
        bad('BRAVO_PROFILE_FILE through a symbolic link refused', 'stderr %r' % err)
    path = os.path.join(tmp, 'twice.csv')
    run(BRAVO_PROFILE_FILE=path)
    run(BRAVO_PROFILE_FILE=path)
    text = open(path).read().splitlines()
    if text.count(HEADER) != 1 or text[0] != HEADER:
        bad('two runs append to one file under one header', 'headers at %s'
            % [i for i, l in enumerate(text) if l == HEADER])


def main():
    out, err = run()
    lives = lives_of(out)[0]
    names = []
    check_table(names)
    names = bool(names and names[0])
    check_csv(names)
    check_sorts(lives)
    check_top()
    check_limit()
    check_churn()
    check_stats_totals()
    check_sampled()
    check_sampled_threads()
    check_names_escaped()
    check_silence()
    check_malformed()
    check_file_safety()
    for f in failures:
        print('profile_check: %s: FAIL: %s' % (variant, f))
    if not failures:
        print('profile_check: %s: every lock life exact (%d), CSV header, table, top-N, five '
              'sorts, limit, eviction under churn, the statistics\' totals, sampling (also over '
              'short threads), fork, '
              'names escaped, malformed settings, file safety, silence when off%s'
              % (variant, len(lives), '' if names else
                 '; call site functions and lines NOT checked: no names'))
    return 1 if failures else 0


if __name__ == '__main__':
    try:
        sys.exit(main())
    finally:
        subprocess.run(['rm', '-rf', tmp])
