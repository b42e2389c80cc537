#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# compare_test.sh [BUILDDIR] - checks of bravo-run --compare (bravo-compare).
#
# The subject is tests/tools/compare/ab_probe, whose figure depends only on
# whose pthread_rwlock_rdlock it got and on its run number (see
# ab_probe.c): every verdict below is certain, and no verdict depends on a
# timing (the fixed-duration rule is checked on made-up runs; the check
# that no note comes when wall times differ times sleeps of 0.6 s against
# 0.2 s, a margin no load closes).
# Prints PASS/FAIL per check and "N passed, N failed"; exits 1 if any
# check failed.
set -u

build=$(cd "${1:-.}" && pwd) || exit 1
run=$build/tools/bravo-run
compare=$build/tools/bravo-compare
probe=$build/tests/tools/compare/ab_probe
static_exec=$build/tests/tools/compare/static_exec

for f in "$run" "$compare" "$probe" "$static_exec" "$build/tests/tools/compare/profile_probe"; do
	if [ ! -x "$f" ]; then
		echo "FAIL: no $f: build first (make all check_PROGRAMS)"
		echo "0 passed, 1 failed"
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare_test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# The tests must not inherit the caller's settings.
unset LD_PRELOAD BRAVO_LIBDIR BRAVO_STATS BRAVO_STATS_FILE BRAVO_VERBOSE BRAVO_PROFILE \
	BRAVO_PROFILE_FILE

ops='ops/sec: ([0-9]+)'

# cmp_run ARGS...: bravo-run --compare --quiet ARGS, stdout to $tmp/out,
# stderr to $tmp/err, each run's output in $tmp/runs; sets rc.  A fresh
# counter ($tmp/counter) numbers the probe's runs from 1.
cmp_run() {
	rm -rf "$tmp/counter" "$tmp/runs" "$tmp/runs.csv"
	rc=0
	timeout 120 "$run" --compare --quiet --outdir "$tmp/runs" "$@" \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
}

. "$(dirname "$0")/../../lib/checks.sh"

# row LOCK: the table row of LOCK
row() { grep "^$1 " "$tmp/out"; }
row_has() { row "$1" | grep -q -e "$2"; }
# csv_col N: column N of the CSV's rows, space-separated
csv_col() { tail -n +2 "$tmp/runs.csv" | cut -d, -f"$1" | tr '\n' ' '; }

# ---- the command line ----
rc=0
"$run" --compare --help >"$tmp/out" 2>"$tmp/err" || rc=$?
check help "--compare --help: exit 0, usage on stdout, stderr empty" \
	eval 'rc_is 0 && out_has "^usage: bravo-run --compare" && out_has "--metric" && empty err'
rc=0
"$compare" --version >"$tmp/out" 2>"$tmp/err" || rc=$?
check version "bravo-compare --version: exit 0, a substituted version" \
	eval 'rc_is 0 && out_has "^bravo-compare .*[0-9]" && ! out_has "@"'

# usage_error NAME WHY ARGS...: exit 2, a message and the usage on
# stderr, nothing run (no counter), nothing on stdout.
usage_error() {
	name=$1
	why=$2
	shift 2
	cmp_run "$@"
	check "$name" "$why: exit 2, message and usage on stderr, nothing run" \
		eval 'rc_is 2 && err_has "^usage:" && empty out && [ ! -e "$tmp/counter" ]'
}
usage_error usage-unknown-lock "an unknown lock" --locks glibc,nope -- "$probe" faster "$tmp/counter"
err_has "unknown lock 'nope'" || fail usage-unknown-lock-message "the message names the lock"
usage_error usage-runs-zero "--runs 0" --runs 0 -- "$probe" faster "$tmp/counter"
usage_error usage-runs-not-a-number "--runs x" --runs x -- "$probe" faster "$tmp/counter"
usage_error usage-bad-regex "a regex that does not compile" --metric '(' -- "$probe" faster "$tmp/counter"
usage_error usage-missing-dashdash "no -- before the command" --runs 2 "$probe" faster "$tmp/counter"
usage_error usage-missing-command "nothing after --" --runs 2 --
usage_error usage-unknown-option "an unknown option" --bogus -- "$probe" faster "$tmp/counter"
usage_error usage-lock-not-locks "--lock with --compare" --lock ba -- "$probe" faster "$tmp/counter"
usage_error usage-metric-and-time "--metric with --time" --metric "$ops" --time -- "$probe" faster "$tmp/counter"
usage_error usage-only-glibc "glibc alone: nothing to compare" --locks glibc -- "$probe" faster "$tmp/counter"
usage_error usage-lock-twice "a lock named twice" --locks ba,ba -- "$probe" faster "$tmp/counter"
usage_error usage-alpha "--alpha 1" --alpha 1 -- "$probe" faster "$tmp/counter"
usage_error usage-direction-without-metric "--higher-is-better without --metric" \
	--higher-is-better -- "$probe" faster "$tmp/counter"
usage_error usage-plot-no-directory "--plot into a directory that does not exist" \
	--plot "$tmp/nodir/plot.png" -- "$probe" faster "$tmp/counter"
err_has "no directory" || fail usage-plot-no-directory-message "the message says why"
: >"$tmp/file"
usage_error usage-plot-under-a-file "--plot under a regular file" \
	--plot "$tmp/file/plot.png" -- "$probe" faster "$tmp/counter"
mkdir "$tmp/dir.png"
usage_error usage-plot-is-a-directory "--plot naming a directory" \
	--plot "$tmp/dir.png" -- "$probe" faster "$tmp/counter"
mkdir "$tmp/readonly"
chmod 555 "$tmp/readonly"
if [ ! -w "$tmp/readonly" ]; then    # root writes anyway
	usage_error usage-plot-unwritable "--plot into a read-only directory" \
		--plot "$tmp/readonly/plot.png" -- "$probe" faster "$tmp/counter"
fi
usage_error usage-plot-extension "--plot FILE.jpg: neither .png nor .svg" \
	--plot "$tmp/plot.jpg" -- "$probe" faster "$tmp/counter"
err_has "\.png or \.svg" || fail usage-plot-extension-message "the message names the extensions"
# The one preload policy: a libbravo library in the inherited LD_PRELOAD
# is left out of every run, with a note; any other entry stays, on every
# side, glibc's included, before the variant's library.
rm -f "$tmp/preloads"
LD_PRELOAD="libm.so.6 $build/src/.libs/libbravo-ba.so" cmp_run --locks glibc,bravo-ba --runs 2 \
	--metric "$ops" -- sh -c 'echo "$BRAVO_COMPARE_LOCK $LD_PRELOAD" >>"$0"; echo "ops/sec: 1000"' \
	"$tmp/preloads"
check preload-inherited "an inherited libbravo is left out with one note, libm.so.6 kept on every side" \
	eval 'rc_is 0 && row_has glibc " 2/2 " && row_has bravo-ba " 2/2 " &&
		[ "$(grep -c "left out of every run" "$tmp/err")" -eq 1 ] &&
		[ "$(grep -c "^glibc libm.so.6$" "$tmp/preloads")" -eq 2 ] &&
		[ "$(grep -c "^bravo-ba libm.so.6 $build/src/.libs/libbravo-bravo-ba.so$" "$tmp/preloads")" -eq 2 ]'

cmp_run --runs 2 -- "$tmp/no-such-command"
check command-not-found "a command that does not exist: exit 127, nothing run" \
	eval 'rc_is 127 && err_has "no-such-command" && [ ! -e "$tmp/runs" ]'

# ---- interleaving, and the variant each run really had ----
cmp_run --locks glibc,bravo-ba,ba --runs 3 --metric "$ops" --csv "$tmp/runs.csv" \
	-- "$probe" faster "$tmp/counter"
check csv-one-row-per-run "9 runs: a header and 9 rows" \
	eval 'rc_is 0 && [ "$(wc -l <"$tmp/runs.csv")" -eq 10 ]'
check interleaved "the CSV lists glibc bravo-ba ba, round after round" \
	eval '[ "$(csv_col 3)" = "glibc bravo-ba ba glibc bravo-ba ba glibc bravo-ba ba " ] &&
		[ "$(csv_col 2)" = "1 1 1 2 2 2 3 3 3 " ] && [ "$(csv_col 1)" = "1 2 3 4 5 6 7 8 9 " ]'
check csv-values "each row holds the figure its run printed" \
	eval '[ "$(csv_col 7)" = "1002.0 1498.0 1505.0 1001.0 1497.0 1504.0 1000.0 1496.0 1503.0 " ]'
ok=true
for f in "$tmp"/runs/*-glibc.err; do grep -q "rdlock from .*libc" "$f" || ok=false; done
for v in bravo-ba ba; do
	for f in "$tmp"/runs/*-r?-$v.err; do grep -q "rdlock from .*libbravo-$v\\.so" "$f" || ok=false; done
done
check output-kept-apart "the program's output stays out of the table, in a file per run" \
	eval '! out_has "^ops/sec" && ! err_has "ops/sec: " && ! err_has "rdlock from" &&
		grep -q "^ops/sec: 1505\$" "$tmp"/runs/003-r1-ba.out'
check runs-have-their-lock "glibc runs got glibc's rdlock, variant runs their library's" \
	eval '$ok && [ "$(ls "$tmp"/runs/*.err | wc -l)" -eq 9 ]'

# ---- verdicts, on both sides of the noise ----
cmp_run --locks glibc,bravo-ba --runs 8 --metric "$ops" -- "$probe" faster "$tmp/counter"
check verdict-faster "1500 vs 1000 ops/sec: faster, ratio 1.5" \
	eval 'rc_is 0 && row_has bravo-ba "faster" && row_has bravo-ba " 1\\.[45][0-9]* " &&
		row_has bravo-ba " 8/8 " && out_has "higher is better, inferred from .ops/sec"'
cmp_run --locks glibc,bravo-pthread --runs 8 --metric "$ops" -- "$probe" slower "$tmp/counter"
check verdict-slower "700 vs 1000 ops/sec: slower" \
	eval 'rc_is 0 && row_has bravo-pthread "slower"'
cmp_run --locks glibc,bravo-ba,ba --runs 8 --metric "$ops" -- "$probe" noise "$tmp/counter"
check verdict-noise "the same noisy figure under every lock: no significant difference" \
	eval 'rc_is 0 && row_has bravo-ba "no significant difference" &&
		row_has ba "no significant difference"'
cmp_run --locks glibc,bravo-ba --runs 8 --metric 'latency: ([0-9]+)' -- "$probe" latency "$tmp/counter"
check verdict-lower-is-better "50 vs 100 us: lower is better (inferred), faster" \
	eval 'rc_is 0 && row_has bravo-ba "faster" && out_has "lower is better, inferred from .us"'
cmp_run --locks glibc,bravo-ba --runs 8 --metric "$ops" --lower-is-better -- "$probe" faster "$tmp/counter"
check direction-given "--lower-is-better overrides the units: more ops/sec is slower" \
	eval 'rc_is 0 && row_has bravo-ba "slower" && out_has "lower is better, given"'
cmp_run --locks glibc,bravo-ba --runs 3 --metric 'value: ([0-9]+)' -- "$probe" unitless "$tmp/counter"
check direction-unknown "a figure without a unit and no direction: exit 2, asks for one" \
	eval 'rc_is 2 && err_has "higher-is-better"'
cmp_run --locks glibc,bravo-ba --runs 6 --metric '(?:throughput )?value: ([0-9]+)' \
	-- "$probe" unitless "$tmp/counter"
check direction-from-regex-words "no unit in the output: the regex's own words (throughput) tell" \
	eval 'rc_is 0 && row_has bravo-ba "faster" && out_has "higher is better, inferred from .throughput"'
cmp_run --locks glibc,bravo-ba --runs 8 --metric 'value: ([0-9]+)' --higher-is-better \
	-- "$probe" unitless "$tmp/counter"
check direction-higher-given "--higher-is-better on a figure without a unit" \
	eval 'rc_is 0 && row_has bravo-ba "faster"'
cmp_run --locks glibc,bravo-ba --runs 5 --metric "$ops" -- "$probe" faster "$tmp/counter"
check too-few-rounds "5 rounds cannot reach p < 0.05: no verdict, and a note says so" \
	eval 'rc_is 0 && row_has bravo-ba "no significant difference" &&
		out_has "^note: bravo-ba: .*--runs 6"'
cmp_run --locks glibc,bravo-ba --runs 2 --metric 'ops/sec: (\d+)' -- "$probe" faster "$tmp/counter"
typed="figure: --metric 'ops/sec: (\\d+)' (higher is better"
check metric-as-typed "the report shows the --metric regex as typed, not in Python repr" \
	eval 'rc_is 0 && grep -qF -- "$typed" "$tmp/out"'

# ---- failed runs: reported, not counted ----
cmp_run --locks glibc,bravo-ba --runs 4 --metric "$ops" --csv "$tmp/runs.csv" \
	-- "$probe" faster "$tmp/counter" --fail-on 2,3
check failed-runs-exit-1 "runs 2 and 3 exit 1: exit status 1" eval 'rc_is 1'
check failed-runs-not-counted "the table counts 3 of 4 runs of each lock" \
	eval 'row_has glibc " 3/4 " && row_has bravo-ba " 3/4 " && row_has bravo-ba " 1\\.[45]"'
check failed-runs-in-csv "the CSV marks runs 2 and 3 failed, with their exit status" \
	eval '[ "$(csv_col 4)" = "ok failed failed ok ok ok ok ok " ] &&
		[ "$(csv_col 5 | cut -d" " -f2,3)" = "1 1" ]'
check failed-runs-reported "each failed run is named, with the tail of its stderr and where its output is" \
	eval 'out_has "run 2 (round 1, bravo-ba): failed: exit status 1" &&
		out_has "run 3 (round 2, glibc): failed" && out_has "| ab_probe: run 2 fails on purpose" &&
		out_has "output .* is in $tmp/runs" &&
		grep -q "fails on purpose" "$tmp"/runs/002-r1-bravo-ba.err'
check failed-runs-pairs "a round with a failed run is no pair: 2 paired rounds" \
	eval 'out_has "note: bravo-ba: 2 paired rounds"'
cmp_run --locks glibc,bravo-ba --runs 2 --metric "$ops" -- "$probe" faster "$tmp/counter" --silent-on 4
check no-metric "a run that prints no figure is reported (no-metric), not counted" \
	eval 'rc_is 1 && row_has bravo-ba " 1/2 " && out_has "run 4 (round 2, bravo-ba): no-metric"'
cmp_run --locks glibc,bravo-ba --runs 4 --metric "$ops" --csv "$tmp/runs.csv" \
	-- "$probe" faster "$tmp/counter" --fail-on 1,2
check fail-fast "every run of round 1 fails: it stops there, exit 1, the failures reported" \
	eval 'rc_is 1 && [ "$(wc -l <"$tmp/runs.csv")" -eq 3 ] && [ "$(wc -l <"$tmp/counter")" -eq 2 ] &&
		row_has glibc " 0/1 " && row_has bravo-ba " 0/1 " &&
		out_has "run 1 (round 1, glibc): failed: exit status 1" &&
		out_has "run 2 (round 1, bravo-ba): failed: exit status 1" &&
		out_has "^note: no run of round 1 counted: stopped after it (2 of 8 runs done).*--keep-going" &&
		out_has "output .* is in $tmp/runs"'
cmp_run --locks glibc,bravo-ba --runs 4 --metric "$ops" --keep-going --csv "$tmp/runs.csv" \
	-- "$probe" faster "$tmp/counter" --fail-on 1,2
check keep-going "--keep-going: round 1 fails, every round still runs" \
	eval 'rc_is 1 && [ "$(wc -l <"$tmp/runs.csv")" -eq 9 ] && row_has glibc " 3/4 " &&
		row_has bravo-ba " 3/4 " && ! out_has "stopped after"'
cmp_run --locks glibc,bravo-ba --runs 3 -- sh -c 'kill -SEGV $$'
check fail-fast-crash "a command that crashes in every run: stops after round 1, exit 1" \
	eval 'rc_is 1 && row_has glibc " 0/1 " && out_has "(round 1, bravo-ba): failed: killed by signal 11" &&
		! out_has "round 2" && out_has "stopped after"'
cmp_run --locks glibc,bravo-ba --runs 3 --metric "$ops" -- "$probe" faster "$tmp/counter" --fail-on 2,4,6
check one-lock-failing-goes-on "only bravo-ba fails, in every round: all rounds run" \
	eval 'rc_is 1 && row_has glibc " 3/3 " && row_has bravo-ba " 0/3 " && ! out_has "stopped after"'

# ---- runs that did not run under their variant ----
cmp_run --locks glibc,bravo-ba --runs 2 --metric "$ops" -- "$static_exec" "$probe" faster "$tmp/counter"
check unverified-preload-dropped "a static wrapper drops LD_PRELOAD: variant runs unverified" \
	eval 'rc_is 1 && row_has glibc " 2/2 " && row_has bravo-ba " 0/2 .*no pairs" &&
		out_has "(round 1, bravo-ba): unverified: no \"libbravo: variant=bravo-ba\" line"'
cmp_run --locks glibc,bravo-ba --runs 2 --metric "$ops" --stats \
	-- sh -c 'unset LD_PRELOAD; exec "$0" "$@"' "$probe" faster "$tmp/counter"
check unverified-exec-without-preload "--stats: a shell that execs without LD_PRELOAD is caught" \
	eval 'rc_is 1 && row_has bravo-ba " 0/2 " && out_has "bravo-ba): unverified: no libbravo statistics"'
cmp_run --locks glibc,ba --runs 2 --metric "$ops" \
	-- sh -c 'LD_PRELOAD="$0" exec "$@"' "$build/src/.libs/libbravo-bravo-ba.so" "$probe" faster "$tmp/counter"
check unverified-wrong-variant "a command that preloads another variant itself: every run unverified (so round 1 only)" \
	eval 'rc_is 1 && row_has glibc " 0/1 " && row_has ba " 0/1 " && out_has "stopped after" &&
		out_has "glibc): unverified: libbravo (variant=bravo-ba) was loaded in a run without preload" &&
		out_has "ba): unverified: wrong variant: libbravo: variant=bravo-ba was loaded, not ba"'

# ---- statistics ----
cmp_run --locks glibc,bravo-ba,ba --runs 2 --metric "$ops" --stats --csv "$tmp/runs.csv" \
	-- "$probe" faster "$tmp/counter"
check stats-columns "--stats: fast reads and revocations beside each variant" \
	eval 'rc_is 0 && out_has "fast reads  *revocations" && row_has bravo-ba "%" && row_has ba " 0\\.0% "'
check stats-csv "--stats: the CSV holds each variant run's 10 reads, none for glibc" \
	eval '[ "$(csv_col 9)" = " 10 10  10 10 " ]'

# ---- the per-lock profile ----
# profile_probe's contended lock has one wait (the writer's) under a lock
# that lets a reader in while a writer waits (glibc's default kind), two
# under BA (phase-fair: the second reader waits too); its quiet lock none.
# Semantics, not timing, set these counts (profile_probe.c); every
# acquisition counted (BRAVO_PROFILE_SAMPLE=1, which the runs inherit),
# as the default sampling estimates the reads that do not wait.
pprobe=$build/tests/tools/compare/profile_probe
export BRAVO_PROFILE_SAMPLE=1
cmp_run --locks glibc,ba --runs 2 --metric "$ops" --profile --csv "$tmp/runs.csv" -- "$pprobe"
unset BRAVO_PROFILE_SAMPLE
check profile-every-run "--profile: a profile of every run, glibc's through its pass-through library" \
	eval 'rc_is 0 && [ "$(ls "$tmp"/runs/*-glibc.profile.csv "$tmp"/runs/*-ba.profile.csv | wc -l)" -eq 4 ] &&
		grep -q "^[0-9]*,glibc,.*contended_lock_site" "$tmp"/runs/001-r1-glibc.profile.csv &&
		grep -q "^[0-9]*,ba,.*contended_lock_site" "$tmp"/runs/002-r1-ba.profile.csv'
sect=$(sed -n '/^ba vs glibc: the locks whose time waited differs most/,/^profiles of every run/p' "$tmp/out")
first=$(printf '%s\n' "$sect" | sed -n 3p)
check profile-compare "--profile: ba vs glibc lists the contended lock, 1 wait against 2, 3 acquisitions each" \
	eval 'printf "%s\n" "$first" | grep -q "^  contended_lock_site+0x[0-9a-f]* (profile_probe) default  *profile_probe.c:[0-9]* .* 1  *2  *3  *3$"'
check profile-compare-quiet "--profile: a lock that waited alike under both is not listed" \
	eval '[ -n "$sect" ] && ! printf "%s\n" "$sect" | grep -q quiet_lock_site'
check profile-csv-column "--profile: the runs' CSV names each run's profile file" \
	eval '[ "$(tail -n +2 "$tmp/runs.csv" | grep -c "\.profile\.csv$")" -eq 4 ]'
cmp_run --locks glibc,ba --runs 1 --profile --profile-file x -- "$pprobe"
check profile-file-refused "--profile-file with --compare: exit 2, use --profile" \
	eval 'rc_is 2 && err_has "use --profile"'
mkdir -p "$tmp/variants-only"
cp "$build/src/.libs/libbravo-ba.so" "$tmp/variants-only/"
cmp_run --libdir "$tmp/variants-only" --locks glibc,ba --runs 1 --profile -- "$pprobe"
check profile-no-passthrough "--profile without LIBDIR/libbravo/libbravo-glibc.so: exit 1, says so" \
	eval 'rc_is 1 && err_has "libbravo/libbravo-glibc.so"'

# ---- wall time, timeout, Ctrl-C, plot ----
cmp_run --locks glibc,bravo-ba --runs 2 --time --csv "$tmp/runs.csv" -- "$probe" faster "$tmp/counter"
check time "--time: the wall time of every run, lower is better" \
	eval 'rc_is 0 && out_has "wall time" && row_has bravo-ba " 2/2 " &&
		[ "$(tail -n +2 "$tmp/runs.csv" | cut -d, -f6,7 | grep -c "^0\\.[0-9]*,0\\.[0-9]*$")" -eq 4 ]'
cmp_run --locks glibc,bravo-ba --runs 2 --metric "$ops" --timeout 4 \
	-- "$probe" faster "$tmp/counter" --sleep-on 3 --pid-file "$tmp/pid"
check timeout "--timeout: a run past it is stopped and reported" \
	eval 'rc_is 1 && out_has "run 3 (round 2, glibc): timeout" && ! kill -0 "$(cat "$tmp/pid")" 2>/dev/null'

rm -rf "$tmp/counter" "$tmp/runs" "$tmp/pid"
rc=0
"$run" --compare --quiet --outdir "$tmp/runs" --locks glibc,bravo-ba --runs 3 --metric "$ops" \
	-- "$probe" faster "$tmp/counter" --sleep-on 3 --pid-file "$tmp/pid" >"$tmp/out" 2>"$tmp/err" &
driver=$!
i=0
while [ ! -s "$tmp/pid" ] && [ $i -lt 400 ]; do
	sleep 0.05
	i=$((i + 1))
done
kill -INT "$driver"
wait "$driver" || rc=$?
check interrupt "SIGINT: the running command is stopped, what was measured is printed, exit 130" \
	eval 'rc_is 130 && out_has "interrupted: 2 of 6 runs done" && row_has glibc " 1/1 " &&
		row_has bravo-ba " 1/1 " && ! kill -0 "$(cat "$tmp/pid")" 2>/dev/null'

if command -v gnuplot >/dev/null 2>&1; then
	cmp_run --locks glibc,bravo-ba --runs 2 --metric "$ops" --plot "$tmp/plot.png" \
		-- "$probe" faster "$tmp/counter"
	check plot "--plot: a PNG file" \
		eval 'rc_is 0 && [ "$(head -c 4 "$tmp/plot.png" | od -An -c | tr -d " ")" = "211PNG" ]'
	cmp_run --locks glibc,bravo-ba --runs 2 --metric "$ops" --plot "$tmp/plot.svg" \
		-- "$probe" faster "$tmp/counter"
	check plot-svg "--plot FILE.svg: an SVG file, its y axis named by the metric" \
		eval 'rc_is 0 && grep -q "<svg" "$tmp/plot.svg" &&
			grep -qF "ops/sec: ([0-9]+)" "$tmp/plot.svg" && grep -qF "(higher is better)" "$tmp/plot.svg"'
	# the title is the command line: a newline in it would end gnuplot's
	# command, and a backquote outside a string runs a shell command
	nl='
'
	here=$(pwd)
	cd "$tmp" || exit 1
	cmp_run --locks glibc,bravo-ba --runs 2 --metric "$ops" --plot "$tmp/evil.png" \
		-- env "X=';${nl}system(\"touch marker1\")${nl}\`touch marker2\`" "$probe" faster "$tmp/counter"
	cd "$here" || exit 1
	check plot-runs-nothing "--plot: a command line with ', newlines and backquotes runs nothing in gnuplot" \
		eval 'rc_is 0 && [ -s "$tmp/evil.png" ] && [ ! -e "$tmp/marker1" ] && [ ! -e "$tmp/marker2" ]'
	# a title that begins with ' (gnuplot reads a leading '' as an empty
	# string) and holds a double quote and a backslash: still drawn
	mkdir -p "$tmp/bin" && ln -sf "$probe" "$tmp/bin/'probe"
	PATH="$tmp/bin:$PATH" cmp_run --locks glibc,bravo-ba --runs 2 --metric "$ops" \
		--plot "$tmp/quote.svg" -- "'probe" faster "$tmp/counter" --fail-on 'a"b\c'
	check plot-title-quotes "--plot: a command line that begins with ' and holds \" and \\ is drawn" \
		eval 'rc_is 0 && grep -qF "probe faster" "$tmp/quote.svg"'
else
	fail plot "gnuplot is not installed (scripts/setup-debian installs gnuplot-nox)"
fi

# ---- notes: a fixed-duration command, spread, load ----
# A command that runs for a set time takes the same wall time under every
# lock: under the default figure a note says so.  Judged by the script's own
# same_wall_time() on made-up runs (no timing in the test): medians 1.000
# and 1.019 s are the same, 1.000 and 1.030 s are not; --metric or --time
# given: never.
rc=0
python3 - "$compare" >"$tmp/out" 2>"$tmp/err" <<'PY' || rc=$?
import importlib.machinery, importlib.util, sys, types
loader = importlib.machinery.SourceFileLoader('bravo_compare', sys.argv[1])
spec = importlib.util.spec_from_loader('bravo_compare', loader)
bc = importlib.util.module_from_spec(spec)
loader.exec_module(bc)
def runs(a, b):
    return [dict(lock='glibc', status='ok', value=v) for v in a] + \
           [dict(lock='bravo-ba', status='ok', value=v) for v in b]
default = types.SimpleNamespace(regex=None, time=False)
locks = ['glibc', 'bravo-ba']
print('same', bc.same_wall_time(runs([1.0, 1.0], [1.019, 1.019]), locks, default))
print('differ', bc.same_wall_time(runs([1.0, 1.0], [1.03, 1.03]), locks, default))
print('time', bc.same_wall_time(runs([1.0], [1.0]), locks, types.SimpleNamespace(regex=None, time=True)))
print('metric', bc.same_wall_time(runs([1.0], [1.0]), locks, types.SimpleNamespace(regex='x', time=False)))
print('one-lock', bc.same_wall_time(runs([1.0], []), locks, default))
PY
check fixed-duration-rule "medians within 2% under the default figure only, two locks at least" \
	eval 'rc_is 0 && out_has "^same True$" && out_has "^differ False$" && out_has "^time False$" &&
		out_has "^metric False$" && out_has "^one-lock False$"'
grep -q "the wall time is the same for every lock" "$compare" ||
	fail fixed-duration-note "the script has the note's text"
cmp_run --locks glibc,bravo-ba --runs 2 --time -- sleep 1
check fixed-duration-time-given "--time given: wall time is what was asked for, no such note" \
	eval 'rc_is 0 && row_has bravo-ba " 2/2 " && ! out_has "fixed time"'
cmp_run --locks glibc,bravo-ba --runs 2 \
	-- sh -c 'if [ "$BRAVO_COMPARE_LOCK" = glibc ]; then sleep 0.6; else sleep 0.2; fi'
check fixed-duration-differs "the default figure, wall times that differ by lock: no such note" \
	eval 'rc_is 0 && row_has bravo-ba " 2/2 " && ! out_has "fixed time"'
cmp_run --locks glibc,bravo-ba --runs 3 --metric "$ops" \
	-- sh -c 'if [ "$BRAVO_COMPARE_LOCK" = bravo-ba ]; then echo "ops/sec: $((BRAVO_COMPARE_ROUND * 1000))";
		else echo "ops/sec: 1000"; fi'
check spread-note "bravo-ba's runs spread 3x (1000 to 3000): a note names it and the spread" \
	eval 'rc_is 0 && out_has "^note: bravo-ba: its runs spread 3\\.00x" && ! out_has "^note: glibc"'
check load-average "the 1-minute load average at the start and at the end" \
	eval 'out_has "^load average (1 min): [0-9][0-9.]* at the start, [0-9][0-9.]* at the end$"'

# ---- a real benchmark, once: it completes with a table ----
cmp_run --locks glibc,bravo-pthread --runs 1 --metric 'throughput=([0-9.]+)' \
	-- "$build/bench/rwbench" -t 2 -p 1/100 -d 0.2
check rwbench-smoke "bench/rwbench, its throughput= figure: a table with both locks" \
	eval 'rc_is 0 && row_has glibc " 1/1 " && row_has bravo-pthread " 1/1 " &&
		out_has "higher is better, inferred from .throughput"'

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
