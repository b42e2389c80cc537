# SPDX-License-Identifier: BSD-2-Clause
# deb-source.sh - fetching a Debian source package for the test drivers
# that build an upstream test suite from it (tests/preload/glibc,
# tests/preload/posixtest).  Sourced; the caller defines note() (one line
# of progress) before calling these.

# have_deb_src: apt has at least one deb-src source (one-line or deb822).
have_deb_src() {
	grep -hsE '^[[:space:]]*(deb-src[[:space:]]|Types:.*deb-src)' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources | grep -q .
}

# add_deb_src LOGDIR: as root, a deb-src twin of every enabled Debian
# binary source (as bench/drivers/rocksdb-hash-table-bench does), then
# apt-get update (its output in LOGDIR/apt-update.log).
add_deb_src() {
	f=/etc/apt/sources.list.d/debian.sources
	if [ -f "$f" ]; then
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
			/(^|\n)Types:[^\n]*deb/ && !/(^|\n)Enabled: *no/ {
				sub(/(^|\n)Types:[^\n]*/, "\nTypes: deb-src"); sub(/^\n/, ""); print }' \
			"$f" >/etc/apt/sources.list.d/libbravo-deb-src.sources || return 1
		note "added deb-src entries: /etc/apt/sources.list.d/libbravo-deb-src.sources"
	elif [ -f /etc/apt/sources.list ] && grep -qE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list; then
		sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list \
			>/etc/apt/sources.list.d/libbravo-deb-src.list || return 1
		note "added deb-src entries: /etc/apt/sources.list.d/libbravo-deb-src.list"
	else
		return 1
	fi
	apt-get update >"$1/apt-update.log" 2>&1
}

# deb_src_ready LOGDIR: a deb-src entry exists, or was just added; else
# prints why not and returns 1.
deb_src_ready() {
	have_deb_src && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "apt has no deb-src entry and adding one needs root"
		return 1
	fi
	add_deb_src "$1" && return 0
	echo "could not add a deb-src entry or update apt: $(tail -n 1 "$1/apt-update.log" 2>/dev/null)"
	return 1
}
