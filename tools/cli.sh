# shellcheck shell=sh
# SPDX-License-Identifier: BSD-2-Clause
# cli.sh - the option convention of tools/bravo_cli.py, for the shell
# scripts (scripts/setup-debian, bench/drivers/icount,
# tests/check-sanitizers).  Sourced, POSIX sh.  Beside bravo_cli.py in
# tools/, whose convention it is, though no installed tool sources it.
# The caller sets $prog and $cli_dir (this file's directory, tools/ of
# the source tree) and defines synopsis (the usage lines, on stdout).
#
# Invariants: a usage error prints one line 'PROG: WHAT; FIX', the
# synopsis and "Try 'PROG --help' for more information." on stderr and
# exits 2; --version prints 'PROG (libbravo) VERSION' (configure.ac's) on
# stdout and exits 0; the words are bravo_cli.py's.

cli_usage_error() {
	printf '%s: %s\n' "$prog" "$1" >&2
	synopsis >&2
	printf "Try '%s --help' for more information.\n" "$prog" >&2
	exit 2
}

cli_unknown_option() {
	cli_usage_error "unknown option '$1' ($prog --help lists them)"
}

# cli_need_value OPTION METAVAR COUNT: COUNT (the arguments left, the
# option included) holds a value.
cli_need_value() {
	[ "$3" -ge 2 ] || cli_usage_error "option $1 needs a value: $1 $2"
}

cli_version() {
	v=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$cli_dir/../configure.ac" 2>/dev/null)
	printf '%s (libbravo) %s\n' "$prog" "${v:-unknown}"
	exit 0
}
