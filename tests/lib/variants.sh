# SPDX-License-Identifier: BSD-2-Clause
# variants.sh - the lock variants of this build, for the test drivers:
# configure.ac's one list (lb_variants), as configure wrote it into
# libbravo.pc's "variants=" line.  Sourced with $build set to the build
# tree; sets libbravo_variants (space-separated), or says why it cannot
# and exits 1.
libbravo_variants=$(sed -n 's/^variants=//p' "$build/libbravo.pc" 2>/dev/null)
if [ -z "$libbravo_variants" ]; then
	echo "FAIL: $(basename "$0"): no variants= line in $build/libbravo.pc (run configure first)"
	exit 1
fi
