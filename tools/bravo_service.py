# SPDX-License-Identifier: BSD-2-Clause
"""bravo_service - one run of a service under a lock: the server with the
lock preloaded, a load generator without it, the figure from the load
generator.  Python 3 standard library only; bravo-compare --server is its
front end (bravo-run(1), SERVICES).

A run (ServiceRunner.run):
 1. a loopback port free for TCP and UDP alike (free_port) and a fresh
    working directory, substituted for {port} and {dir} in the server
    command, the readiness and stop specifications and the load
    generator's arguments;
 2. the server, with the run's lock preloaded (the runner's Environment),
    in a session of its own, its output in STEM.server.out/.err;
 3. ready (Readiness): the server's own socket listening on a TCP port
    or bound to a UDP port (nothing is sent to it: bound is not
    answering), a file that appears, or a line in its output; bounded by
    the readiness timeout; a server that exits first, or a port held by
    another process, is named as such;
 4. the load generator, with no libbravo preload (other preloads kept),
    bounded by the run timeout, its output in STEM.out/.err: the figure
    (--metric) or its wall time;
 5. stop: a signal to the server's process group, or a stop command;
    bounded by the stop timeout, then SIGKILL of the whole group.  The
    server must stop cleanly: exit status 0, or death by the stop signal
    itself.

Invariants: no process of a run outlives it (its server's group gets
SIGKILL at the end whatever happened, and on Interrupted); the proof of the
lock (proof_failure) reads the server's stderr, its statistics and its
profile; the load generator must not have loaded libbravo.
"""

import contextlib
import os
import re
import shlex
import signal
import socket
import subprocess
import time

import bravo_runner as runner

POLL_S = 0.05
GLIBC = runner.Lock(runner.BASELINE)


class Readiness:
    """When the server is ready: 'tcp:PORT' (a socket of the server's
    process group in state LISTEN on PORT), 'udp:PORT' (a UDP socket of
    the server's group bound to PORT: UDP has no listening state, and no
    datagram is sent, so a bound socket is taken as ready whether or not
    the server answers yet), 'file:PATH' or 'line:REGEX' (its stdout or
    stderr); PORT, PATH and REGEX may hold the placeholders.  The
    default: tcp:{port}."""

    KINDS = ('tcp', 'udp', 'file', 'line')

    def __init__(self, spec):
        kind, sep, arg = spec.partition(':')
        if not sep or kind not in self.KINDS or not arg:
            raise runner.UsageError('--ready %r: give tcp:PORT, udp:PORT, file:PATH or '
                                    'line:REGEX' % spec)
        if kind in ('tcp', 'udp') and not (arg == '{port}' or arg.isdigit()):
            raise runner.UsageError('--ready %r: the port is a number or {port}' % spec)
        if kind == 'line':
            try:
                re.compile(arg, re.MULTILINE)
            except re.error as e:
                raise runner.UsageError('--ready %r: bad regular expression: %s' % (spec, e))
        self.spec, self.kind, self.arg = spec, kind, arg

    def describe(self, subst):
        return '%s:%s' % (self.kind, subst(self.arg))


class StopSpec:
    """How the server is asked to stop: 'signal:NAME' (TERM, INT, QUIT,
    HUP, USR1, USR2; or a number) sent to its process group, or
    'command:CMD', run without the preload.  The default: signal:TERM."""

    def __init__(self, spec):
        kind, sep, arg = spec.partition(':')
        self.spec, self.signum, self.command = spec, None, None
        if sep and kind == 'signal' and arg:
            self.signum = signal_number(arg)
            if self.signum is None:
                raise runner.UsageError('--stop %r: no such signal' % spec)
        elif sep and kind == 'command' and arg.strip():
            try:
                self.command = shlex.split(arg)
            except ValueError as e:
                raise runner.UsageError('--stop %r: %s' % (spec, e))
        else:
            raise runner.UsageError('--stop %r: give signal:NAME or command:CMD' % spec)


def signal_number(name):
    if name.isdigit():
        n = int(name)
        return n if 0 < n < signal.NSIG and n != signal.SIGKILL else None
    name = name.upper()
    name = name if name.startswith('SIG') else 'SIG' + name
    n = getattr(signal, name, None)
    return None if n is None or n == signal.SIGKILL else int(n)


class Service:
    """The server side of every run: its command (a shell-quoted string),
    readiness and stop specifications and their timeouts (seconds)."""

    def __init__(self, command, ready=None, stop=None, ready_timeout=30.0, stop_timeout=10.0):
        try:
            self.argv = shlex.split(command)
        except ValueError as e:
            raise runner.UsageError('--server %r: %s' % (command, e))
        if not self.argv:
            raise runner.UsageError('--server needs a command')
        self.command = command
        self.ready = Readiness(ready or 'tcp:{port}')
        self.stop = StopSpec(stop or 'signal:TERM')
        self.ready_timeout = ready_timeout
        self.stop_timeout = stop_timeout


FREE_PORT_TRIES = 50


def free_port():
    """A port of 127.0.0.1 free now for TCP and for UDP alike (--ready
    tcp:{port} or udp:{port}): the kernel's pick of a TCP port, kept only
    when a UDP socket can be bound to it too (both held while checked).
    Free now only: another process may take it before the server does
    (then the server fails to bind, which the run reports).  Should
    FREE_PORT_TRIES picks all be taken for UDP (not seen), the last, free
    for TCP only."""
    port = None
    for _ in range(FREE_PORT_TRIES):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as tcp, \
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            tcp.bind(('127.0.0.1', 0))
            port = tcp.getsockname()[1]
            try:
                udp.bind(('127.0.0.1', port))
            except OSError:
                continue
            return port
    return port


def listening_inodes(kind, port):
    """The socket inodes listening on port (TCP: state LISTEN; UDP: bound),
    from /proc/net/{tcp,tcp6} or {udp,udp6}."""
    inodes = set()
    for name in (kind, kind + '6'):
        try:
            with open('/proc/net/' + name) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10:
                continue
            local, state, inode = fields[1], fields[3], fields[9]
            if int(local.rsplit(':', 1)[1], 16) != port:
                continue
            if (kind == 'tcp' and state == '0A') or kind == 'udp':
                inodes.add(inode)
    return inodes


def socket_owners(inodes):
    """{pid} of the processes that hold one of these socket inodes."""
    wanted = {'socket:[%s]' % i for i in inodes}
    owners = set()
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        fd_dir = '/proc/%s/fd' % pid
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            with contextlib.suppress(OSError):
                if os.readlink('%s/%s' % (fd_dir, fd)) in wanted:
                    owners.add(int(pid))
                    break
    return owners


def in_group(pid, pgid):
    try:
        return os.getpgid(pid) == pgid
    except OSError:
        return False


class ServiceRunner(runner.Runner):
    """runner.Runner for a service: run(run) starts the server under
    run.lock, runs run.argv (the load generator) without libbravo, stops
    the server.  run.stdout_path/stderr_path are the load generator's
    (the figure); run.server_stdout_path/server_stderr_path the server's
    (the proof)."""

    def __init__(self, outdir, environment, service, **kw):
        super().__init__(outdir, environment, **kw)
        self.service = service
        self.server = None
        self.server_paths = (None, None)

    def run(self, run, tick=None):
        self.count += 1
        run.seq = run.seq or self.count
        stem = self.stem(run)
        port, workdir = free_port(), stem + '.dir'
        os.makedirs(workdir, exist_ok=True)
        run.port, run.workdir = port, workdir

        def subst(text):
            return text.replace('{port}', str(port)).replace('{dir}', workdir)

        run.argv = [subst(a) for a in run.argv]
        run.stdout_path, run.stderr_path = stem + '.out', stem + '.err'
        run.server_stdout_path, run.server_stderr_path = stem + '.server.out', stem + '.server.err'
        self.report_paths(run, stem)
        extra = dict(run.env, BRAVO_COMPARE_PORT=str(port), BRAVO_COMPARE_DIR=workdir)
        try:
            return self.run_service(run, subst, extra, tick)
        finally:
            self.kill_server()

    def run_service(self, run, subst, extra, tick):
        server_env = self.environment.for_run(run.lock, run.stats_path, extra, run.profile_path)
        argv = [subst(a) for a in self.service.argv]
        if not self.start_server(run, argv, server_env):
            return run
        start = time.perf_counter()
        why = self.wait_ready(run, subst, tick)
        run.ready_s = time.perf_counter() - start
        if why:
            return run.fail('not-ready', why)
        loadgen_env = self.environment.for_run(GLIBC, extra=extra)
        loadgen_env.pop('BRAVO_VERBOSE', None)
        status = self.execute(run, loadgen_env, tick)
        if status is None:
            return run        # could not start, timed out (the server is stopped below)
        run.exit_status = status
        server_status, stop_why = self.stop_server(subst, loadgen_env)
        run.server_status = server_status
        if status != 0:
            why = 'exit status %d' % status if status > 0 else 'killed by signal %d' % -status
            if server_status is not None and not self.clean(server_status):
                why += '; the server %s' % describe_status(server_status)
            return run.fail('failed', 'load generator: ' + why)
        if stop_why:
            return run.fail('unclean-stop', stop_why)
        if not self.clean(server_status):
            return run.fail('unclean-stop', 'the server %s when asked to stop (%s)' %
                            (describe_status(server_status), self.service.stop.spec))
        return self.prove(run)

    def start_server(self, run, argv, env):
        self.server_paths = (run.server_stdout_path, run.server_stderr_path)
        with open(run.server_stdout_path, 'wb') as out, open(run.server_stderr_path, 'wb') as err:
            try:
                self.server = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out,
                                               stderr=err, start_new_session=True, env=env)
            except OSError as e:
                run.fail('no-server', 'cannot run the server %s: %s' % (argv[0], e.strerror))
                return False
        return True

    def wait_ready(self, run, subst, tick):
        """None once the server is ready, else why not (it exited, or the
        readiness timeout passed)."""
        ready = self.service.ready
        deadline = time.monotonic() + self.service.ready_timeout
        next_tick = time.monotonic() + 1.0
        foreign = None
        while True:
            status = self.server.poll()
            if status is not None:
                why = 'the server %s before it was ready' % describe_status(status)
                if foreign:
                    why += ' (port %s is held by another process, pid %d)' % foreign
                return why
            found = self.ready_now(ready, subst)
            if found is True:
                return None
            if isinstance(found, tuple):
                foreign = found
            now = time.monotonic()
            if now >= deadline:
                why = 'the server was not ready after %gs (--ready %s)' % (
                    self.service.ready_timeout, ready.describe(subst))
                if foreign:
                    why += '; port %s is held by another process, pid %d' % foreign
                return why
            if tick and now >= next_tick:
                tick()
                next_tick = now + 1.0
            time.sleep(POLL_S)

    def ready_now(self, ready, subst):
        """True when ready; (port, pid) when the port listens but for a
        process outside the server's group; else False."""
        arg = subst(ready.arg)
        if ready.kind == 'file':
            return os.path.exists(arg)
        if ready.kind == 'line':
            out, err = self.server_paths
            text = runner.read_text(out) + '\n' + runner.read_text(err)
            return re.search(arg, text, re.MULTILINE) is not None
        inodes = listening_inodes(ready.kind, int(arg))
        if not inodes:
            return False
        owners = socket_owners(inodes)
        if any(in_group(pid, self.server.pid) for pid in owners):
            return True
        others = sorted(owners)
        return (arg, others[0]) if others else False

    def stop_server(self, subst, env):
        """(exit status of the server or None, why the stop was not clean
        or None)."""
        server, stop = self.server, self.service.stop
        status = server.poll()
        if status is not None:
            return status, 'the server %s before it was asked to stop' % describe_status(status)
        if stop.signum is not None:
            with contextlib.suppress(OSError):
                os.killpg(server.pid, stop.signum)
        else:
            argv = [subst(a) for a in stop.command]
            try:
                subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=env,
                               timeout=self.service.stop_timeout)
            except (OSError, subprocess.TimeoutExpired) as e:
                return None, self.force_stop('the stop command failed (%s)' % e)
        try:
            return server.wait(self.service.stop_timeout), None
        except subprocess.TimeoutExpired:
            return None, self.force_stop('the server did not stop within %gs (--stop %s)' %
                                         (self.service.stop_timeout, stop.spec))

    def force_stop(self, why):
        self.kill_server()
        return why + '; killed with its process group'

    def clean(self, status):
        if status == 0:
            return True
        return status < 0 and -status == self.service.stop.signum

    def kill_server(self):
        """SIGKILL to the server's whole process group (what is left of it)."""
        server, self.server = self.server, None
        if server is None:
            return
        with contextlib.suppress(OSError):
            os.killpg(server.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            server.wait(5.0)

    def stop(self):
        """Interrupted or timed out: the load generator and the server."""
        super().stop()
        self.kill_server()

    def prove(self, run):
        if run.stats_path:
            run.stats = runner.parse_stats(run.stats_path)
        why = runner.proof_failure(run.lock, runner.read_bytes(run.server_stderr_path),
                                   run.stats, self.stats_must_count, run.profile_path)
        if why:
            return run.fail('unverified', 'server: ' + why)
        if runner.STARTUP.search(runner.read_bytes(run.stderr_path)):
            return run.fail('unverified', 'the load generator loaded libbravo (an '
                            'LD_PRELOAD it set itself, or /etc/ld.so.preload)')
        run.status = 'ok'
        return run


def describe_status(status):
    if status is None:
        return 'did not exit'
    if status >= 0:
        return 'exited with status %d' % status
    return 'was killed by signal %d (%s)' % (-status, signal_name(-status))


def signal_name(n):
    with contextlib.suppress(ValueError):
        return signal.Signals(n).name
    return str(n)
