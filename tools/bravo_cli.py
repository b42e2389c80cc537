# SPDX-License-Identifier: BSD-2-Clause
"""bravo_cli - the one command-line convention of libbravo's tools
(bravo-compare, bench-sweep, bench-plot, noharm-sweep, native-compare,
rocksdb-db-bench, rocksdb-hash-table-bench).

The convention, as GNU programs have it:
- long options only, `--name VALUE` or `--name=VALUE`; a later option
  wins over an earlier one;
- `--help` (or -h): the usage and the help on stdout, exit 0;
  `--version`: 'PROG (libbravo) VERSION' on stdout, exit 0;
- a usage error: one line 'PROG: WHAT; FIX' on stderr, then the synopsis
  and "Try 'PROG --help' for more information.", exit 2.  The words are
  the same in every tool: 'unknown option', 'needs a value', 'takes no
  value', 'unexpected argument', 'missing -- before the command';
- a tool that runs a command takes it after `--`; anything before the
  `--` that is not an option is an error that says to put the `--` in.

Invariants: parse() returns or raises UsageError, never exits; only
main_guard() turns --help, --version and usage errors into an exit.
Python 3 standard library only.
"""

import difflib
import os
import re
import sys


class UsageError(Exception):
    """A bad command line: the message names what is wrong and the fix."""


class HelpRequested(Exception):
    pass


class VersionRequested(Exception):
    pass


class Option:
    """One option.  metavar None: a flag (True when given).  parse turns
    the text into the value (raising UsageError with the reason).  Hidden
    aliases are accepted and never shown."""

    def __init__(self, name, metavar=None, parse=None, default=None, aliases=(), dest=None):
        self.name = name
        self.metavar = metavar
        self.parse = parse or (lambda text: text)
        self.default = default if metavar is not None else bool(default)
        self.aliases = tuple(aliases)
        self.dest = dest or name[2:].replace('-', '_')


class Values:
    """The parsed options as attributes, plus given: the names typed."""

    def __init__(self, options):
        for o in options:
            setattr(self, o.dest, o.default)
        self.given = set()

    def __repr__(self):
        return 'Values(%r)' % self.__dict__


def source_version(here=None):
    """The package version from configure.ac's AC_INIT, for the tools run
    from a source tree (the installed ones have it substituted)."""
    here = here or os.path.dirname(os.path.abspath(__file__))
    try:
        with open(os.path.join(os.path.dirname(here), 'configure.ac')) as f:
            m = re.search(r'AC_INIT\(\[[^]]*\],\s*\[([^]]+)\]', f.read())
            if m:
                return m.group(1)
    except OSError:
        pass
    return 'unknown'


class Parser:
    """The command line of one tool.  command: True when the tool runs a
    command given after `--`."""

    def __init__(self, prog, synopsis, help_text, options, command=False, version=None):
        self.prog = prog
        self.synopsis = synopsis.rstrip('\n') + '\n'
        self.help_text = help_text
        self.options = list(options)
        self.command = command
        self.version = version or source_version()
        self.by_name = {}
        for o in self.options:
            for name in (o.name,) + o.aliases:
                self.by_name[name] = o

    def usage_error_text(self, message):
        return '%s: %s\n%sTry \'%s --help\' for more information.\n' % (
            self.prog, message, self.synopsis, self.prog)

    def unknown(self, word):
        visible = [o.name for o in self.options]
        near = difflib.get_close_matches(word.split('=', 1)[0], visible, n=1, cutoff=0.75)
        hint = "; did you mean '%s'?" % near[0] if near else " (%s --help lists them)" % self.prog
        return UsageError("unknown option '%s'%s" % (word, hint))

    def split_command(self, argv):
        """(options part, command or None)."""
        if not self.command:
            return argv, None
        if '--' in argv:
            cut = argv.index('--')
            return argv[:cut], argv[cut + 1:]
        return argv, None

    def parse(self, argv):
        """Values and the command (a list, or None for a tool without one)."""
        words, command = self.split_command(list(argv))
        if '-h' in words or '--help' in words:
            raise HelpRequested()
        if '--version' in words:
            raise VersionRequested()
        values = Values(self.options)
        i = 0
        while i < len(words):
            word = words[i]
            i += 1
            if not word.startswith('-') or word == '-':
                raise self.stray(word, words[i:], command)
            name, eq, text = word.partition('=')
            option = self.by_name.get(name) if name.startswith('--') else None
            if option is None:
                raise self.unknown(word)
            if option.metavar is None:
                if eq:
                    raise UsageError('option %s takes no value' % name)
                setattr(values, option.dest, True)
            else:
                if not eq:
                    if i >= len(words):
                        raise UsageError('option %s needs a value: %s %s'
                                         % (name, option.name, option.metavar))
                    text = words[i]
                    i += 1
                setattr(values, option.dest, self.value_of(option, name, text))
            values.given.add(option.name)
        if self.command:
            if command is None:
                raise UsageError('missing -- before the command: %s [OPTIONS] -- COMMAND [ARGS...]'
                                 % self.prog)
            if not command:
                raise UsageError('missing command after --')
        return values, command

    def value_of(self, option, name, text):
        try:
            return option.parse(text)
        except UsageError as e:
            raise UsageError('%s %s: %s' % (name, shown(text), e))

    def stray(self, word, rest, command):
        if self.command and command is None:
            return UsageError("missing -- before the command: %s [OPTIONS] -- %s"
                              % (self.prog, ' '.join([word] + rest)))
        if self.command:
            return UsageError("unexpected argument '%s' before --: options start with --" % word)
        return UsageError("unexpected argument '%s': %s takes options only (%s --help)"
                          % (word, self.prog, self.prog))

    def main_guard(self, argv):
        """parse(), turning --help, --version and a usage error into their
        output and exit status (0, 0, 2)."""
        try:
            return self.parse(argv)
        except HelpRequested:
            sys.stdout.write(self.synopsis + self.help_text)
            sys.exit(0)
        except VersionRequested:
            print('%s (libbravo) %s' % (self.prog, self.version))
            sys.exit(0)
        except UsageError as e:
            self.exit_usage(str(e))

    def exit_usage(self, message):
        sys.stderr.write(self.usage_error_text(message))
        sys.exit(2)


def shown(text):
    return "'%s'" % text if "'" not in text else '"%s"' % text


# ---- value parsers: each raises UsageError with the reason ----

def integer(minimum=1, maximum=None):
    def parse(text):
        if not re.fullmatch(r'[0-9]+', text):
            raise UsageError('not a whole number')
        value = int(text)
        if value < minimum:
            raise UsageError('must be at least %d' % minimum)
        if maximum is not None and value > maximum:
            raise UsageError('must be at most %d' % maximum)
        return value
    return parse


DECIMAL = r'[0-9]+(?:\.[0-9]*)?|\.[0-9]+'


def seconds(text):
    """A positive decimal number of seconds, returned as the text typed (the
    programs get it as typed; float(value) for arithmetic)."""
    if not re.fullmatch(DECIMAL, text) or float(text) <= 0:
        raise UsageError('not a positive decimal number of seconds')
    return text


def fraction(text):
    """0 < P <= 1, a decimal or A/B; the value as a float."""
    m = re.fullmatch(r'(%s)(?:/(%s))?' % (DECIMAL, DECIMAL), text)
    if not m:
        raise UsageError('not a decimal or a fraction A/B')
    value = float(m.group(1))
    if m.group(2) is not None:
        if float(m.group(2)) <= 0:
            raise UsageError('a zero denominator')
        value /= float(m.group(2))
    if value > 1:
        raise UsageError('more than 1')
    return value


def nonempty(text):
    if not text:
        raise UsageError('empty')
    return text


def items(parse=None, separators=','):
    """A comma-separated list, no empty item, no item twice."""
    def parse_list(text):
        words = [w.strip() for w in re.split('[%s]' % re.escape(separators), text)]
        if not text or any(not w for w in words):
            raise UsageError('an empty item')
        if len(set(words)) != len(words):
            raise UsageError('an item named twice')
        return [item(parse, w) for w in words] if parse else words
    return parse_list


def item(parse, word):
    try:
        return parse(word)
    except UsageError as e:
        raise UsageError("item '%s': %s" % (word, e))
