# rocksdb-common.sh - shared by scripts/rocksdb-db-bench and
# scripts/rocksdb-hash-table-bench (sourced, bash): option checks, the lock
# libraries, running one benchmark child with and without LD_PRELOAD, the
# proof that the preload took effect, cleanup on Ctrl-C, median/min/max, and
# the gnuplot figure.
#
# The caller sets $prog before sourcing, and calls rdb_init_cleanup once.
# Invariants:
#   - at most one benchmark child runs at a time; its pid is in $rdb_child
#     while it runs, so the INT/TERM/EXIT trap can end it;
#   - everything a run writes lives under $rdb_tmp (removed on exit), or in
#     the directories the caller registered with rdb_register_dir.

rdb_all_locks="glibc ba bravo-ba bravo-pthread cohort-rw percpu"

rdb_child=
rdb_tmp=
rdb_dirs=()

rdb_die() {
	echo "$prog: error: $*" >&2
	exit 1
}

rdb_die_usage() {
	echo "$prog: $*" >&2
	echo "Try '$prog --help'." >&2
	exit 2
}

rdb_note() {
	echo "$prog: $*" >&2
}

# rdb_need_value OPTION NARGS: an option that takes a value has one.
rdb_need_value() {
	[ "$2" -ge 2 ] || rdb_die_usage "option $1 needs a value"
}

# rdb_check_uint NAME VALUE MIN: VALUE is a decimal integer >= MIN.
rdb_check_uint() {
	case $2 in
	'' | *[!0-9]*) rdb_die_usage "$1 must be a whole number, not '$2'" ;;
	esac
	[ ${#2} -le 9 ] && [ "$2" -ge "$3" ] || rdb_die_usage "$1 must be between $3 and 999999999, not '$2'"
}

# rdb_list_words LIST: a comma- or space-separated list, one word per line.
rdb_list_words() {
	printf '%s\n' "$1" | tr ', ' '\n\n' | sed '/^$/d'
}

# rdb_check_locks LIST: every name is glibc or a variant; echoes the words.
rdb_check_locks() {
	local w out=
	for w in $(rdb_list_words "$1"); do
		case " $rdb_all_locks " in
		*" $w "*) out="$out $w" ;;
		*) rdb_die_usage "unknown lock variant '$w' (valid: $rdb_all_locks)" ;;
		esac
	done
	[ -n "$out" ] || rdb_die_usage "empty lock list"
	echo $out
}

# rdb_check_threads LIST: positive integers; echoes them.
rdb_check_threads() {
	local w out=
	for w in $(rdb_list_words "$1"); do
		rdb_check_uint "thread count" "$w" 1
		out="$out $w"
	done
	[ -n "$out" ] || rdb_die_usage "empty thread list"
	echo $out
}

# rdb_lib_for LOCK LIBDIR: the library to preload for LOCK ('' for glibc).
rdb_lib_for() {
	[ "$1" = glibc ] && return 0
	echo "$2/libbravo-$1.so"
}

# rdb_preload_for LOCK LIBDIR ALLOCLIB: the LD_PRELOAD value of a run ('':
# none): the allocator first, then the lock's library.
rdb_preload_for() {
	local lib
	lib=$(rdb_lib_for "$1" "$2")
	if [ -n "$3" ] && [ -n "$lib" ]; then echo "$3:$lib"; else echo "$3$lib"; fi
}

# rdb_check_libs LOCKS LIBDIR: every variant's library exists.
rdb_check_libs() {
	local l lib
	for l in $1; do
		lib=$(rdb_lib_for "$l" "$2")
		[ -z "$lib" ] || [ -f "$lib" ] ||
			rdb_die "no library for variant '$l': $lib does not exist (run make, or give --libdir DIR)"
	done
}

# rdb_check_binary PATH: an executable file.
rdb_check_binary() {
	[ -e "$1" ] || rdb_die "benchmark binary '$1' not found"
	[ -f "$1" ] && [ -x "$1" ] || rdb_die "benchmark binary '$1' is not an executable file"
}

# rdb_allocator_lib NAME|PATH: the allocator library to preload ('' = none).
rdb_allocator_lib() {
	local f
	case $1 in
	none | glibc | '') return 0 ;;
	jemalloc)
		for f in /usr/lib/"$(gcc -print-multiarch 2>/dev/null)"/libjemalloc.so.2 /usr/lib/*/libjemalloc.so.2 /usr/lib/libjemalloc.so.2; do
			[ -f "$f" ] && { echo "$f"; return 0; }
		done
		rdb_die "jemalloc not found (install Debian's libjemalloc2)" ;;
	/*) [ -f "$1" ] || rdb_die "allocator library '$1' not found"; echo "$1" ;;
	*) rdb_die_usage "unknown allocator '$1' (valid: none, jemalloc, or an absolute path to a .so)" ;;
	esac
}

# ---- cleanup ---------------------------------------------------------------

rdb_register_dir() {
	rdb_dirs+=("$1")
}

rdb_kill_child() {
	if [ -n "$rdb_child" ]; then
		kill -TERM "$rdb_child" 2>/dev/null || true
		wait "$rdb_child" 2>/dev/null || true
		rdb_child=
	fi
}

rdb_cleanup() {
	local d
	rdb_kill_child
	for d in "${rdb_dirs[@]+"${rdb_dirs[@]}"}"; do
		[ -n "$d" ] && rm -rf -- "$d"
	done
	[ -n "$rdb_tmp" ] && rm -rf -- "$rdb_tmp"
	return 0
}

rdb_on_signal() {
	trap - INT TERM
	rdb_note "interrupted: stopping the benchmark and removing its files"
	rdb_cleanup
	exit "$1"
}

# rdb_init_cleanup: make $rdb_tmp, and clean up on exit and on INT/TERM.
rdb_init_cleanup() {
	rdb_tmp=$(mktemp -d "${TMPDIR:-/tmp}/$prog.XXXXXX") || rdb_die "cannot create a temporary directory"
	trap 'rdb_cleanup' EXIT
	trap 'rdb_on_signal 130' INT
	trap 'rdb_on_signal 143' TERM
}

# ---- one run ---------------------------------------------------------------

# Statistics in the variants' runs (the harnesses' --stats): 0 or 1.  Off by
# default: they count every call and shut the inline read and write fast
# paths, so a variant measured with them against glibc without them is not
# a fair A/B.
rdb_stats=0

# rdb_run LOCK LIBDIR ALLOCLIB LIMIT OUT ERR -- COMMAND...: run COMMAND with
# BRAVO_VERBOSE=1 (and BRAVO_STATS=1 when rdb_stats is 1) and LD_PRELOAD set
# to the allocator and the lock's library (or neither), stdout to OUT,
# stderr to ERR, at most LIMIT seconds.  The inherited LD_PRELOAD,
# BRAVO_STATS and BRAVO_STATS_FILE are not passed on.  Returns the exit
# status (124: timed out).
rdb_run() {
	local lock=$1 libdir=$2 alloc=$3 limit=$4 out=$5 err=$6 preload rc=0 stats=
	shift 7
	preload=$(rdb_preload_for "$lock" "$libdir" "$alloc")
	[ "$rdb_stats" = 0 ] || stats=BRAVO_STATS=1
	# shellcheck disable=SC2086 # $stats: one word or none
	env -u LD_PRELOAD -u BRAVO_STATS -u BRAVO_STATS_FILE BRAVO_VERBOSE=1 $stats \
		${preload:+LD_PRELOAD="$preload"} timeout "$limit" "$@" >"$out" 2>"$err" </dev/null &
	rdb_child=$!
	wait "$rdb_child" || rc=$?
	rdb_child=
	return $rc
}

# rdb_verify_preload LOCK ERR: the run's stderr proves the lock it ran on: a
# variant printed its start-up line (and, with statistics, its statistics
# at exit); glibc (no preload) printed no libbravo line at all.  Dies
# loudly otherwise.
rdb_verify_preload() {
	local lock=$1 err=$2
	if [ "$lock" = glibc ]; then
		if grep -q '^libbravo' "$err"; then
			rdb_die "the glibc run (no preload) printed libbravo lines: a libbravo library was loaded anyway ($(grep -m1 '^libbravo' "$err")). Is it linked into the binary or in /etc/ld.so.preload?"
		fi
		return 0
	fi
	grep -q "^libbravo: variant=$lock " "$err" ||
		rdb_die "PRELOAD DID NOT TAKE EFFECT: the $lock run printed no 'libbravo: variant=$lock' line on stderr, so it ran without libbravo (does the binary, or a wrapper, drop LD_PRELOAD? is it setuid or statically linked?). Results would be meaningless; stopping."
	[ "$rdb_stats" = 0 ] || grep -q "^libbravo.variant=$lock\$" "$err" ||
		rdb_die "PRELOAD DID NOT TAKE EFFECT for the whole run: the $lock run started under libbravo but printed no statistics at exit (libbravo.variant=$lock), so the process that ran the benchmark was not the preloaded one (a wrapper that exec's it without LD_PRELOAD?) or did not exit normally. Stopping."
}

# rdb_stat ERR KEY: the value of libbravo.KEY in ERR ('' when absent).
rdb_stat() {
	sed -n "s/^libbravo\\.$2=//p" "$1" | tail -n 1
}

# rdb_load: the 1-minute load average now (the machine's business besides
# the benchmark), or '' where /proc/loadavg is missing.
rdb_load() {
	cut -d' ' -f1 /proc/loadavg 2>/dev/null || true
}

# ---- statistics and figure -------------------------------------------------

# rdb_median_min_max: numbers on stdin -> "median min max n" (n = 0: "- - - 0").
rdb_median_min_max() {
	sort -g | awk '{ v[NR] = $1 }
		END {
			if (NR == 0) { print "- - - 0"; exit }
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.6g %.6g %.6g %d\n", m, v[1], v[NR], NR
		}'
}

# rdb_gp_quote TEXT: TEXT as a gnuplot double-quoted string that gnuplot
# takes literally: backslash and double quote escaped, the backquote
# (command substitution, done even inside double quotes) as its octal
# escape, control characters dropped (a newline would end the command).
# Not single quotes: gnuplot reads a leading '' as an empty string.
rdb_gp_quote() {
	local t=${1//[[:cntrl:]]/}
	t=${t//\\/\\\\}
	t=${t//\"/\\\"}
	t=${t//\`/\\140}
	printf '"%s"' "$t"
}

# rdb_plot PNG TITLE YLABEL SERIES...: each SERIES is "LABEL=FILE", FILE
# holding "threads value" lines; one line per series.  Needs gnuplot; without
# it, says so and returns 0 (the CSV is the result).  Every string reaches
# gnuplot through rdb_gp_quote: a crafted CSV (--summarize-only) runs nothing.
rdb_plot() {
	local png=$1 title=$2 ylabel=$3 s sep= cmd
	shift 3
	if ! command -v gnuplot >/dev/null 2>&1; then
		rdb_note "gnuplot not found (Debian: gnuplot-nox): no figure $png"
		return 0
	fi
	cmd="set terminal pngcairo size 900,600 noenhanced; set output $(rdb_gp_quote "$png");"
	cmd="$cmd set title $(rdb_gp_quote "$title"); set xlabel 'threads';"
	cmd="$cmd set ylabel $(rdb_gp_quote "$ylabel");"
	cmd="$cmd set key outside right; set grid; set yrange [0:*]; set xtics 1;"
	cmd="$cmd set format y '%.1s%c';"
	cmd="$cmd plot"
	for s in "$@"; do
		cmd="$cmd$sep $(rdb_gp_quote "${s#*=}") using 1:2 with linespoints title $(rdb_gp_quote "${s%%=*}")"
		sep=,
	done
	gnuplot -e "$cmd" 2>"$rdb_tmp/gnuplot.err" ||
		{ cat "$rdb_tmp/gnuplot.err" >&2; rdb_die "gnuplot failed to draw $png"; }
}
