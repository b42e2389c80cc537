#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# launcher_test.sh [BUILDDIR [LAUNCHER]] - checks of bravo-run, the launcher.
#
# BUILDDIR: the build tree (default: the current directory, where automake
# runs its tests); LAUNCHER: the built script (default:
# BUILDDIR/tools/bravo-run).  LAUNCHER_SHELL=dash (or bash, ...) runs the
# launcher under that shell instead of its #! line.  Prints PASS/FAIL per
# check and "N passed, N failed"; exits 1 if any check failed.
set -u

build=$(cd "${1:-.}" && pwd) || exit 1
launcher=${2:-$build/tools/bravo-run}
case $launcher in
/*) ;;
*) launcher=$(pwd)/$launcher ;;
esac
libs=$build/src/.libs

if [ ! -f "$launcher" ]; then
	echo "FAIL: no launcher at $launcher"
	echo "0 passed, 1 failed"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/launcher_test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# br ARGS...: the launcher, stdout to $tmp/out, stderr to $tmp/err; sets rc.
br() {
	rc=0
	${LAUNCHER_SHELL:+"$LAUNCHER_SHELL"} "$launcher" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

# brenv VAR=VALUE ARGS...: br with VAR=VALUE in the launcher's environment
# (not "VAR=VALUE br": shells differ on whether that outlives the call).
brenv() {
	assignment=$1
	shift
	rc=0
	env "$assignment" ${LAUNCHER_SHELL:+"$LAUNCHER_SHELL"} "$launcher" "$@" \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
}

. "$(dirname "$0")/../lib/checks.sh"


variants=
for f in "$libs"/libbravo-*.so; do
	[ -f "$f" ] || continue
	n=${f##*/libbravo-}
	n=${n%.so}
	case $n in *-private) continue ;; esac	# benchmark-only builds
	variants="$variants $n"
done
if [ -z "$variants" ]; then
	echo "FAIL: no $libs/libbravo-*.so: build first"
	echo "0 passed, 1 failed"
	exit 1
fi
default=
for n in $variants; do
	if cmp -s "$libs/libbravo.so" "$libs/libbravo-$n.so"; then default=$n; fi
done

# The tests must not inherit the caller's settings.
unset LD_PRELOAD BRAVO_LIBDIR BRAVO_STATS BRAVO_STATS_FILE BRAVO_VERBOSE
show_preload='echo "${LD_PRELOAD-unset}"'

# ---- informational options ----
br --help
check help "exit 0, usage on stdout mentioning --lock, stderr empty" \
	eval 'rc_is 0 && out_has "--lock" && out_has "^usage: bravo-run" && empty err'
br -h
check help-short "-h is --help" eval 'rc_is 0 && out_has "--lock"'
br --version
check version "exit 0, name and a substituted version" \
	eval 'rc_is 0 && out_has "^bravo-run .*[0-9]" && ! out_has "@"'

br --list
ok=true
for n in $variants; do
	grep -q "^$n  *$libs/libbravo-$n\\.so" "$tmp/out" || ok=false
done
set -- $variants
[ $(($(wc -l <"$tmp/out"))) -eq $# ] || ok=false
check list "every libbravo-*.so of $libs, one per line, with its path" \
	eval 'rc_is 0 && $ok'
check list-default "the default ($default) is marked, and only it" \
	eval '[ -n "$default" ] && grep -q "^$default .*(default)\$" "$tmp/out" &&
		[ "$(grep -c "(default)" "$tmp/out")" -eq 1 ]'

# ---- the preload ----
br --lock ba -- sh -c "$show_preload"
check lock-ba "LD_PRELOAD is the absolute path of libbravo-ba.so" \
	eval 'rc_is 0 && out_is "$libs/libbravo-ba.so"'
br --lock=ba sh -c "$show_preload"
check lock-equals-no-dashdash "--lock=NAME, and no -- before a command" \
	eval 'rc_is 0 && out_is "$libs/libbravo-ba.so"'
br sh -c "$show_preload"
check lock-default "no --lock: libbravo.so" \
	eval 'rc_is 0 && out_is "$libs/libbravo.so"'
br --verbose --lock bravo-ba -- true
check verbose-bravo-ba "the library's start-up line names bravo-ba (the preload took effect)" \
	eval 'rc_is 0 && err_has "^libbravo: variant=bravo-ba "'
br --verbose -- true
check verbose-default "the default library is $default" \
	eval 'rc_is 0 && err_has "^libbravo: variant=$default "'
for n in $variants; do
	br --verbose --lock "$n" -- true
	check "verbose-$n" "libbravo: variant=$n on stderr" \
		eval 'rc_is 0 && err_has "^libbravo: variant=$n "'
done

brenv LD_PRELOAD=libm.so.6 --verbose --lock ba -- sh -c "$show_preload"
check preload-kept "an existing LD_PRELOAD stays in front" \
	eval 'rc_is 0 && out_is "libm.so.6 $libs/libbravo-ba.so" &&
		err_has "^libbravo: variant=ba "'
brenv LD_PRELOAD= --lock ba -- sh -c "$show_preload"
check preload-empty "an empty LD_PRELOAD leaves no leading space" \
	eval 'rc_is 0 && out_is "$libs/libbravo-ba.so"'
br --lock glibc --verbose -- sh -c "$show_preload"
check glibc-unset "--lock glibc: LD_PRELOAD stays unset, no libbravo line" \
	eval 'rc_is 0 && out_is unset && ! err_has "^libbravo:"'
brenv LD_PRELOAD=libm.so.6 --lock glibc -- sh -c "$show_preload"
check glibc-unchanged "--lock glibc: an existing LD_PRELOAD is unchanged" \
	eval 'rc_is 0 && out_is libm.so.6'
brenv LD_PRELOAD="libm.so.6:$libs/libbravo-ba.so" --lock bravo-ba -- sh -c "$show_preload"
check preload-libbravo-dropped "a libbravo library already preloaded is left out, with a note" \
	eval 'rc_is 0 && out_is "libm.so.6 $libs/libbravo-bravo-ba.so" && err_has "left out"'
brenv LD_PRELOAD="$libs/libbravo-ba.so" --lock glibc -- sh -c "$show_preload"
check glibc-libbravo-dropped "--lock glibc: a libbravo library already preloaded is left out" \
	eval 'rc_is 0 && out_is unset && err_has "left out"'
br --lock glibc --libdir "$tmp/nowhere" -- true
check glibc-needs-no-library "--lock glibc runs without any libbravo" eval 'rc_is 0'

# ---- the environment it sets ----
env_of='printf "%s|%s|%s\n" "${BRAVO_STATS-unset}" "${BRAVO_STATS_FILE-unset}" "${BRAVO_VERBOSE-unset}"'
br --lock ba -- sh -c "$env_of"
check env-none "no option: no BRAVO_* variable set" \
	eval 'rc_is 0 && out_is "unset|unset|unset"'
br --stats --lock ba -- sh -c "$env_of"
check stats "--stats: BRAVO_STATS=1" eval 'rc_is 0 && out_is "1|unset|unset"'
br --stats-file "$tmp/stats.txt" --lock ba -- sh -c "$env_of"
check stats-file "--stats-file F: BRAVO_STATS=1 BRAVO_STATS_FILE=F" \
	eval 'rc_is 0 && out_is "1|$tmp/stats.txt|unset"'
mkdir "$tmp/cwd"
rc=0
(cd "$tmp/cwd" && ${LAUNCHER_SHELL:+"$LAUNCHER_SHELL"} "$launcher" --stats-file rel.txt \
	--lock ba -- sh -c "$env_of") >"$tmp/out" 2>"$tmp/err" || rc=$?
check stats-file-relative "a relative FILE is made absolute" \
	eval 'rc_is 0 && out_is "1|$(cd "$tmp/cwd" && pwd)/rel.txt|unset"'
# End to end, where the library has its statistics: the file is written,
# or the statistics come on stderr.
if grep -q BRAVO_STATS_FILE "$libs/libbravo-ba.so"; then
	br --stats-file "$tmp/stats.txt" --lock ba -- true
	check stats-file-written "--stats-file F: the library writes its statistics to F" \
		eval 'rc_is 0 && grep -q "variant=ba" "$tmp/stats.txt" && ! err_has "statistics"'
	br --stats --lock ba -- true
	check stats-stderr "--stats: the library prints its statistics on stderr" \
		eval 'rc_is 0 && err_has "^libbravo: statistics.*variant=ba"'
else
	echo "SKIP: stats-file-written, stats-stderr (this libbravo has no statistics)"
fi
br --verbose --lock ba -- sh -c "$env_of"
check verbose-env "--verbose: BRAVO_VERBOSE=1" eval 'rc_is 0 && out_is "unset|unset|1"'

# ---- --profile ----
profile_of='printf "%s|%s|%s\n" "${BRAVO_PROFILE-unset}" "${BRAVO_PROFILE_FILE-unset}" "${LD_PRELOAD-unset}"'
br --profile --lock ba -- sh -c "$profile_of"
check profile "--profile: BRAVO_PROFILE=1" eval 'rc_is 0 && out_is "1|unset|$libs/libbravo-ba.so"'
br --profile-file "$tmp/profile.csv" --lock ba -- sh -c "$profile_of"
check profile-file "--profile-file F: BRAVO_PROFILE=1 BRAVO_PROFILE_FILE=F" \
	eval 'rc_is 0 && out_is "1|$tmp/profile.csv|$libs/libbravo-ba.so"'
rc=0
(cd "$tmp/cwd" && ${LAUNCHER_SHELL:+"$LAUNCHER_SHELL"} "$launcher" --profile-file rel.csv \
	--lock ba -- sh -c "$profile_of") >"$tmp/out" 2>"$tmp/err" || rc=$?
check profile-file-relative "--profile-file: a relative FILE is made absolute" \
	eval 'rc_is 0 && out_is "1|$(cd "$tmp/cwd" && pwd)/rel.csv|$libs/libbravo-ba.so"'
br --profile --lock glibc -- sh -c "$profile_of"
check profile-glibc "--lock glibc --profile: glibc's lock behind the pass-through library" \
	eval 'rc_is 0 && out_is "1|unset|$libs/libbravo/libbravo-glibc.so"'
br --profile-file="$tmp/profile.csv" --lock ba echo --profile
check profile-after-command "a --profile after the command is the command's" \
	eval 'rc_is 0 && out_is "--profile"'
br --profile-file
check missing-argument-profile-file "--profile-file without FILE: exit 2" eval 'rc_is 2'
mkdir "$tmp/variants-only"
cp "$libs/libbravo-ba.so" "$tmp/variants-only/"
br --libdir "$tmp/variants-only" --profile --lock glibc -- true
check profile-glibc-missing "--lock glibc --profile without the pass-through: exit 1, says which file" \
	eval 'rc_is 1 && err_has "libbravo/libbravo-glibc.so"'
# End to end, on a program whose waits follow from the lock's semantics
# (tests/tools/compare/profile_probe.c): a table on stderr naming its
# locks' call sites; CSV to the file; glibc's own lock profiled.
probe=$build/tests/tools/compare/profile_probe
if [ -x "$probe" ]; then
	br --profile --lock ba -- "$probe"
	check profile-table "--profile: the library's table on stderr names the locks' call sites" \
		eval 'rc_is 0 && err_has "^libbravo: profile variant=ba " && err_has "contended_lock_site+0x" &&
			err_has "quiet_lock_site+0x"'
	rm -f "$tmp/profile.csv"
	br --profile-file "$tmp/profile.csv" --lock glibc -- "$probe"
	check profile-glibc-file "--lock glibc --profile-file F: glibc's lock profiled, as CSV in F" \
		eval 'rc_is 0 && grep -q "^[0-9]*,glibc,1,.*contended_lock_site" "$tmp/profile.csv" && empty err'
else
	echo "FAIL: no $probe: build first (make check_PROGRAMS)"
	failed=$((failed + 1))
fi

# ---- the command ----
br --lock ba -- sh -c 'exit 7'
check exit-status "the command's exit status passes through" eval 'rc_is 7'
# (bash reports "Terminated" on its stderr: hide it)
{ br --lock ba -- sh -c 'kill -TERM $$'; } 2>/dev/null
check signal "death by a signal passes through (128+15)" eval 'rc_is 143'
br --lock ba -- sh -c 'printf "[%s]" "$@"' argv0 "a b" "" '$x' '*'
check arguments "arguments are passed untouched" \
	eval 'rc_is 0 && out_is "[a b][][\$x][*]"'
br --lock ba echo --lock x --stats
check options-after-command "options after the command are the command's" \
	eval 'rc_is 0 && out_is "--lock x --stats"'
rc=0
${LAUNCHER_SHELL:+"$LAUNCHER_SHELL"} "$launcher" --lock ba -- sh -c 'echo $$' >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait $pid || rc=$?
check exec "the command replaces the launcher (same process)" eval 'rc_is 0 && out_is "$pid"'
br --lock ba -- "$tmp/no-such-command"
check command-not-found "a missing command: exit 127" eval 'rc_is 127'

# ---- --compare: handed over to bravo-compare ----
br --compare --help
check compare-help "--compare --help: bravo-compare's usage" \
	eval 'rc_is 0 && out_has "^usage: bravo-run --compare" && out_has "--locks"'
br --libdir "$tmp/nowhere" --compare --runs 1 -- true
check compare-takes-options "options before --compare go to the comparison (--libdir)" \
	eval 'rc_is 1 && err_has "$tmp/nowhere" && err_has "^bravo-compare:"'
br --compare --runs 0 -- true
check compare-usage-error "a bad comparison command line: exit 2" eval 'rc_is 2'
br --lock glibc -- echo --compare
check compare-after-dashdash "a --compare after -- is the command's" \
	eval 'rc_is 0 && out_is "--compare"'
br --lock glibc echo x --compare
check compare-after-command "a --compare after the command is the command's" \
	eval 'rc_is 0 && out_is "x --compare"'
br --stats-file "--compare" --lock glibc -- true
check compare-as-value "a --compare that is an option's value is that value" \
	eval 'rc_is 0'

# ---- usage errors ----
br --bogus -- true
check unknown-option "exit 2, message and usage on stderr" \
	eval 'rc_is 2 && err_has "bogus" && err_has "^usage:" && empty out'
br --lock nope -- true
ok=true
for n in $variants; do tr ' ' '\n' <"$tmp/err" | grep -qx -e "$n" || ok=false; done
check unknown-lock "exit 2, the message lists every variant" \
	eval 'rc_is 2 && err_has "nope" && $ok && empty out'
br --lock ../ba -- true
check lock-with-slash "a NAME with a / is unknown" eval 'rc_is 2'
br --lock ba
check missing-command "no command: exit 2" eval 'rc_is 2 && err_has "^usage:"'
br --lock ba --
check dashdash-alone "-- and nothing after: exit 2" eval 'rc_is 2 && err_has "^usage:"'
br
check no-arguments "no arguments at all: exit 2" eval 'rc_is 2'
br --lock
check missing-argument "--lock without NAME: exit 2" eval 'rc_is 2 && err_has "lock"'
br --stats-file
check missing-argument-file "--stats-file without FILE: exit 2" eval 'rc_is 2'
br --libdir= -- true
check empty-argument "--libdir= (empty): exit 2" eval 'rc_is 2'
br --list -- true
check list-with-command "--list with a command: exit 2" eval 'rc_is 2'

# ---- where the libraries are found ----
mkdir "$tmp/empty"
br --libdir "$tmp/empty" -- true
check libdir-empty "a --libdir without libbravo-*.so: exit 1, naming it" \
	eval 'rc_is 1 && err_has "$tmp/empty"'
br --libdir "$tmp/nowhere" --list
check libdir-missing "a --libdir that does not exist: exit 1" \
	eval 'rc_is 1 && err_has "$tmp/nowhere"'

mkdir "$tmp/alt"
for n in $variants; do ln -s "$libs/libbravo-$n.so" "$tmp/alt/"; done
ln -s "libbravo-$default.so" "$tmp/alt/libbravo.so"
brenv "BRAVO_LIBDIR=$tmp/alt" --lock ba -- sh -c "$show_preload"
check bravo-libdir "BRAVO_LIBDIR wins over the build tree" \
	eval 'rc_is 0 && out_is "$tmp/alt/libbravo-ba.so"'
brenv "BRAVO_LIBDIR=$tmp/alt" --list
check bravo-libdir-list "--list shows BRAVO_LIBDIR's libraries" \
	eval 'rc_is 0 && out_has "^ba  *$tmp/alt/libbravo-ba\\.so"'
touch "$tmp/alt/libbravo-bravo-ba-private.so"
brenv "BRAVO_LIBDIR=$tmp/alt" --list
check list-skips-private "--list leaves out the benchmark-only libbravo-*-private.so" \
	eval 'rc_is 0 && out_has "^ba " && ! out_has "private"'
rm "$tmp/alt/libbravo-bravo-ba-private.so"
brenv "BRAVO_LIBDIR=$tmp/empty" --libdir "$tmp/alt" --lock ba -- sh -c "$show_preload"
check libdir-over-env "--libdir wins over BRAVO_LIBDIR" \
	eval 'rc_is 0 && out_is "$tmp/alt/libbravo-ba.so"'
brenv "BRAVO_LIBDIR=$tmp/empty" --lock ba -- true
check bravo-libdir-empty "a BRAVO_LIBDIR without libbravo-*.so: exit 1, naming it" \
	eval 'rc_is 1 && err_has "$tmp/empty"'
rm "$tmp/alt/libbravo.so"
br --libdir "$tmp/alt" -- true
check no-default "no libbravo.so and no --lock: exit 1" eval 'rc_is 1'

# A copy outside the build tree, with a relative --libdir.
mkdir "$tmp/bin"
cp "$launcher" "$tmp/bin/bravo-run"
rc=0
(cd "$build" && ${LAUNCHER_SHELL:+"$LAUNCHER_SHELL"} "$tmp/bin/bravo-run" --libdir src/.libs \
	--verbose --lock bravo-ba -- sh -c "$show_preload") >"$tmp/out" 2>"$tmp/err" || rc=$?
check copy-with-libdir "a copy outside the build tree finds them with --libdir" \
	eval 'rc_is 0 && out_is "$libs/libbravo-bravo-ba.so" &&
		err_has "^libbravo: variant=bravo-ba "'
rc=0
${LAUNCHER_SHELL:+"$LAUNCHER_SHELL"} "$tmp/bin/bravo-run" --list >"$tmp/out" 2>"$tmp/err" || rc=$?
check copy-without-libdir "a copy outside the build tree does not use the build tree" \
	eval '! grep -q "$libs" "$tmp/out" "$tmp/err" && { rc_is 0 || { rc_is 1 && err_has "no libbravo"; }; }'
# ... and a symlink to the built launcher still finds its build tree.
ln -s "$launcher" "$tmp/bin/link"
rc=0
${LAUNCHER_SHELL:+"$LAUNCHER_SHELL"} "$tmp/bin/link" --lock ba -- sh -c "$show_preload" \
	>"$tmp/out" 2>"$tmp/err" || rc=$?
if command -v readlink >/dev/null 2>&1 && readlink -f / >/dev/null 2>&1; then
	check symlink "a symlink to the built launcher finds the build tree" \
		eval 'rc_is 0 && out_is "$libs/libbravo-ba.so"'
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
