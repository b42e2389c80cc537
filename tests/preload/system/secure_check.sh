#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# secure_check.sh VARIANT SECURE_TEST - a privileged (AT_SECURE) program
# ignores the BRAVO_* environment of its unprivileged caller.
#
# SECURE_TEST (secure_test.c) is linked directly against the variant.  A
# set-user-ID root copy of it is run as nobody (setpriv): the kernel marks
# it AT_SECURE.  With BRAVO_STATS_FILE pointing into a directory only root
# can write, at a mode-600 root file, or at a symbolic link to it, nothing
# may be created or appended; BRAVO_VERBOSE and malformed values print
# nothing.  A control run of the same copy as root (not AT_SECURE) shows
# the statistics do reach the file when the environment is the program's
# own.  Exits 77 (skip), saying why, where no privileged context can be
# had: not root, no setpriv, a nosuid mount, no_new_privs.
set -u
variant=$1 prog=$2
limit=60
fail=0
bad() { echo "secure_check: $variant: $*"; fail=1; }
skip() { echo "secure_check: SKIP: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "not root: cannot make a set-user-ID root program"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) not installed"
[ -x "$prog" ] || { echo "secure_check: $prog was not built"; exit 1; }
unset LD_PRELOAD BRAVO_N BRAVO_TABLE_SIZE BRAVO_SPIN BRAVO_VERBOSE BRAVO_STATS \
	BRAVO_STATS_FILE BRAVO_CHECK BRAVO_COHORT_NODES BRAVO_COHORT_HANDOFF \
	BRAVO_PROFILE BRAVO_PROFILE_FILE BRAVO_PROFILE_TOP BRAVO_PROFILE_SORT BRAVO_PROFILE_LOCKS \
	BRAVO_PROFILE_SAMPLE
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cp "$prog" "$tmp/prog" && chown 0:0 "$tmp/prog" && chmod 4755 "$tmp/prog" || exit 1
mkdir "$tmp/rootonly" && chmod 755 "$tmp/rootonly"
printf 'secret\n' >"$tmp/secret" && chmod 600 "$tmp/secret"
ln -s "$tmp/secret" "$tmp/link"

# as_nobody ENV...: the set-user-ID copy, run by uid/gid 65534 (with
# $prog_arg as its argument, if set).
prog_arg=
as_nobody() {
	env "$@" timeout -k 5 "$limit" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$tmp/prog" ${prog_arg:+"$prog_arg"} >"$tmp/out" 2>"$tmp/err"
}

# Is there a privileged context at all?
as_nobody || skip "the set-user-ID copy did not run as nobody (exit $?): $(cat "$tmp/err")"
case $(cat "$tmp/out") in
"at_secure=1 euid=0 ruid=65534 lib="*) ;;
"at_secure=0"*) skip "set-user-ID has no effect here (nosuid mount of $tmp? no_new_privs?): $(cat "$tmp/out")" ;;
*) echo "secure_check: unexpected probe output: $(cat "$tmp/out") $(cat "$tmp/err")"; exit 1 ;;
esac
case $(cat "$tmp/out") in
*"/libbravo-$variant.so") ;;
*) echo "secure_check: pthread_rwlock_rdlock is not libbravo-$variant.so's: $(cat "$tmp/out")"; exit 1 ;;
esac
# nobody really cannot write there (else the checks below prove nothing).
if setpriv --reuid=65534 --regid=65534 --clear-groups sh -c ": >'$tmp/rootonly/x'" 2>/dev/null ||
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c ": >>'$tmp/secret'" 2>/dev/null; then
	echo "secure_check: nobody can write $tmp/rootonly or $tmp/secret: no privilege to test"
	exit 1
fi

# Control: the same program as root, its own environment (not AT_SECURE).
BRAVO_STATS_FILE="$tmp/rootonly/control" timeout -k 5 "$limit" "$tmp/prog" >"$tmp/out" 2>"$tmp/err" ||
	bad "control run as root failed: $(cat "$tmp/err")"
grep -q "^at_secure=0" "$tmp/out" || bad "control run is AT_SECURE: $(cat "$tmp/out")"
grep -qx "libbravo.variant=$variant" "$tmp/rootonly/control" 2>/dev/null ||
	bad "control run as root wrote no statistics to $tmp/rootonly/control"
BRAVO_PROFILE_FILE="$tmp/rootonly/control.csv" timeout -k 5 "$limit" "$tmp/prog" >"$tmp/out" 2>"$tmp/err" ||
	bad "control run as root with a profile failed: $(cat "$tmp/err")"
grep -q "^[0-9]*,$variant,1," "$tmp/rootonly/control.csv" 2>/dev/null ||
	bad "control run as root wrote no profile to $tmp/rootonly/control.csv"

# The privileged runs: nothing created, nothing appended, nothing said.
as_nobody BRAVO_STATS_FILE="$tmp/rootonly/created" || bad "exit $? with BRAVO_STATS_FILE in a root-only directory"
[ -e "$tmp/rootonly/created" ] && bad "a set-user-ID program created $tmp/rootonly/created: $(head -n 2 "$tmp/rootonly/created")"
for target in secret link; do
	as_nobody BRAVO_STATS_FILE="$tmp/$target" BRAVO_STATS=1 || bad "exit $? with BRAVO_STATS_FILE=$target"
	[ "$(cat "$tmp/secret")" = secret ] || { bad "a set-user-ID program appended to a mode-600 file through BRAVO_STATS_FILE=$target"; printf 'secret\n' >"$tmp/secret"; }
	[ -s "$tmp/err" ] && bad "BRAVO_STATS_FILE=$target: stderr: $(cat "$tmp/err")"
done
as_nobody BRAVO_STATS=1 BRAVO_VERBOSE=1 BRAVO_N=abc BRAVO_TABLE_SIZE=7 BRAVO_CHECK=2 BRAVO_STAT=1 ||
	bad "exit $? with BRAVO_STATS/VERBOSE and malformed settings"
[ -s "$tmp/err" ] && bad "a set-user-ID program printed libbravo text for its caller's BRAVO_*: $(cat "$tmp/err")"
# No profile either: not on stderr, not into a file, malformed settings unsaid.
as_nobody BRAVO_PROFILE=1 BRAVO_PROFILE_TOP=x BRAVO_PROFILE_SORT=y BRAVO_PROFILE_LOCKS=0 ||
	bad "exit $? with BRAVO_PROFILE=1 and malformed profile settings"
[ -s "$tmp/err" ] && bad "a set-user-ID program printed a profile or a profile setting's complaint: $(cat "$tmp/err")"
as_nobody BRAVO_PROFILE_FILE="$tmp/rootonly/profile.csv" || bad "exit $? with BRAVO_PROFILE_FILE in a root-only directory"
[ -e "$tmp/rootonly/profile.csv" ] && bad "a set-user-ID program created $tmp/rootonly/profile.csv"
as_nobody BRAVO_PROFILE_FILE="$tmp/link" || bad "exit $? with BRAVO_PROFILE_FILE=link"
[ "$(cat "$tmp/secret")" = secret ] || bad "a set-user-ID program appended its profile to a mode-600 file"

# A set-user-ID program that makes its real id root and runs a program:
# that program is root and not AT_SECURE, so it would act on BRAVO_*; the
# privileged process removed them from its environment (as ld.so removes
# LD_PRELOAD), so the child has none, and creates nothing.
prog_arg=become-root
as_nobody BRAVO_STATS_FILE="$tmp/rootonly/exec-created" BRAVO_PROFILE_FILE="$tmp/rootonly/exec.csv" \
	BRAVO_VERBOSE=1 BRAVO_N=3 || bad "exit $? when it became root and ran itself"
prog_arg=
grep -q "^at_secure=0 euid=0 ruid=0 " "$tmp/out" || bad "the child is not root and un-AT_SECURE: $(cat "$tmp/out")"
grep -qx "bravo_vars=0" "$tmp/out" || bad "the child was given its caller's BRAVO_* ($(grep bravo_vars "$tmp/out"))"
[ -e "$tmp/rootonly/exec-created" ] && bad "the child created $tmp/rootonly/exec-created"
[ -e "$tmp/rootonly/exec.csv" ] && bad "the child created $tmp/rootonly/exec.csv"
[ -s "$tmp/err" ] && bad "the child printed libbravo text: $(cat "$tmp/err")"

[ $fail -eq 0 ] && echo "secure_check: $variant: set-user-ID program as nobody ignores BRAVO_* (no statistics, no profile: nothing created, appended or printed) and removes them (a program it runs as root gets none); as root it writes both"
exit $fail
