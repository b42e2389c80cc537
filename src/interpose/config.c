/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * config.c - environment settings (see config.h).
 *
 * Every BRAVO_* variable is read with secure_getenv: in a process that
 * gained privileges (AT_SECURE: set-user-ID or set-group-ID, file
 * capabilities) the environment is the unprivileged caller's, so all of
 * them are ignored and the defaults used, silently.  Otherwise a malformed
 * value, and a BRAVO_* name that is none of libbravo's (a misspelling),
 * get one line on stderr each; the defaults stand.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "../../locks/bravo.h"
#include "../../locks/wait.h"
#include "../diag/message.h"

struct config config;

/* BRAVO_STATS_FILE and BRAVO_PROFILE_FILE, copied: the program may change its environment. */
static char stats_file_copy[PATH_MAX];
static char profile_file_copy[PATH_MAX];
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/*
 * Every BRAVO_* name libbravo knows: those its tools set for the programs
 * they run (bravo-run(1)), then each name config_read looks up, added by
 * env_get as it reads it.  config_read runs once (pthread_once).
 */
static const char *known_names[32] = {
	"BRAVO_LIBDIR", "BRAVO_COMPARE_LOCK", "BRAVO_COMPARE_ROUND", "BRAVO_COMPARE_RUN",
	"BRAVO_COMPARE_PORT", "BRAVO_COMPARE_DIR",
};
static unsigned known_count = 6;

/* The value of BRAVO_* variable name (NULL if unset), and name known. */
static const char *env_get(const char *name)
{
	if (known_count < sizeof(known_names) / sizeof(known_names[0]))
		known_names[known_count++] = name;
	return secure_getenv(name);
}

/*
 * Parse a decimal in [min, max]; on error, say so and keep *out.  what_default
 * names the default when it is not a plain number.
 */
static void env_uint_desc(const char *name, unsigned long min, unsigned long max,
			  bool pow2, unsigned long *out, const char *what_default)
{
	const char *s = env_get(name);
	unsigned long v;
	char *end;

	if (!s)
		return;
	errno = 0;
	v = strtoul(s, &end, 10);
	/* Digits only: strtoul would take leading blanks and a sign. */
	if (!(*s >= '0' && *s <= '9') || *end != '\0' || errno || v < min || v > max ||
	    (pow2 && (v & (v - 1)))) {
		if (what_default)
			libbravo_message("ignoring %s=\"%s\" (want %s%lu..%lu); using %s",
					 name, s, pow2 ? "a power of two in " : "", min, max, what_default);
		else
			libbravo_message("ignoring %s=\"%s\" (want %s%lu..%lu); using %lu",
					 name, s, pow2 ? "a power of two in " : "", min, max, *out);
		return;
	}
	*out = v;
}

static void env_uint(const char *name, unsigned long min, unsigned long max,
		     bool pow2, unsigned long *out)
{
	env_uint_desc(name, min, max, pow2, out, NULL);
}

/*
 * A switch: 1 or 0, or yes/no, true/false, on/off in any case; on error,
 * say so and keep *out.
 */
static void env_flag(const char *name, unsigned long *out)
{
	static const char *const words[][2] = {
		{ "0", "1" }, { "no", "yes" }, { "false", "true" }, { "off", "on" },
	};
	const char *s = env_get(name);

	if (!s)
		return;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		for (unsigned long v = 0; v < 2; v++)
			if (strcasecmp(s, words[i][v]) == 0) {
				*out = v;
				return;
			}
	libbravo_message("ignoring %s=\"%s\" (want 1 or 0, yes or no, true or false, on or off); "
			 "using %lu", name, s, *out);
}

/*
 * One of n words (choice[0..n)); on error, say so (listing them) and keep
 * *out.
 */
static void env_choice_of(const char *name, const char *const *choice, unsigned n, unsigned *out)
{
	const char *s = env_get(name);
	char want[160];
	size_t len = 0;

	if (!s)
		return;
	for (unsigned i = 0; i < n; i++)
		if (strcmp(s, choice[i]) == 0) {
			*out = i;
			return;
		}
	want[0] = '\0';
	for (unsigned i = 0; i < n && len < sizeof(want); i++)
		len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s", choice[i],
					i + 2 < n ? ", " : i + 2 == n ? " or " : "");
	libbravo_message("ignoring %s=\"%s\" (want %s); using %s", name, s, want, choice[*out]);
}

/* One of two words (first: index 0); on error, say so and keep *out. */
static void env_choice(const char *name, const char *const choice[2], unsigned *out)
{
	env_choice_of(name, choice, 2, out);
}

static const char *const layout_names[2] = { "2d", "1d" };        /* enum vr_layout */
static const char *const policy_names[2] = { "adaptive", "classic" }; /* enum bravo_policy */
/* enum profile_sort (profile.h) */
const char *const config_profile_sort_names[5] = {
	"wait", "acquisitions", "slow-reads", "revocations", "writer-share",
};

#define NAME_MAX_CHECKED 64

/* Edit distance of a[0..n) and b (short names: NAME_MAX_CHECKED). */
static unsigned edit_distance(const char *a, size_t n, const char *b)
{
	unsigned row[NAME_MAX_CHECKED + 1];
	size_t m = strlen(b);

	for (size_t j = 0; j <= m; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= n; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= m; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[m];
}

/* The known name within 2 edits of name[0..n), or NULL. */
static const char *nearest_known(const char *name, size_t n)
{
	const char *best = NULL;
	unsigned best_d = 3;

	for (unsigned k = 0; k < known_count; k++) {
		unsigned d = edit_distance(name, n, known_names[k]);

		if (d < best_d) {
			best_d = d;
			best = known_names[k];
		}
	}
	return best;
}

/*
 * Say which BRAVO_* variables are not libbravo's (at most 4 lines): after
 * every setting has been read, so that env_get has named them all.
 */
static void warn_unknown_names(void)
{
	extern char **environ;
	unsigned said = 0;

	if (getauxval(AT_SECURE) || !environ)
		return;
	for (char **e = environ; *e && said < 4; e++) {
		const char *eq = strchr(*e, '=');
		size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
		const char *near;
		bool known = false;

		if (strncmp(*e, "BRAVO_", 6) != 0)
			continue;
		for (unsigned k = 0; k < known_count && !known; k++)
			known = strlen(known_names[k]) == n && memcmp(*e, known_names[k], n) == 0;
		if (known)
			continue;
		near = n <= NAME_MAX_CHECKED ? nearest_known(*e, n) : NULL;
		libbravo_message("ignoring %.*s: not a libbravo setting%s%s%s", (int)(n < 80 ? n : 80),
				 *e, near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
		said++;
	}
}

const char *config_table_name(void)
{
	return layout_names[vr_layout];
}

const char *config_policy_name(void)
{
	return policy_names[bravo_policy];
}

/*
 * A report file setting (BRAVO_STATS_FILE, BRAVO_PROFILE_FILE) copied to
 * copy[PATH_MAX]: NULL if unset or empty; NULL and *bad if unusable (said
 * on stderr: what is off).  A path is never shortened to fit.
 */
static const char *file_setting(const char *name, char copy[PATH_MAX], const char *what,
				bool *bad)
{
	const char *s = env_get(name);
	size_t len;

	*bad = false;
	if (!s || !*s)
		return NULL;
	len = strlen(s);
	if (len >= PATH_MAX) {
		libbravo_message("ignoring %s=\"%.48s...\" (%zu bytes; "
				 "a path has at most %d): %s off",
				 name, s, len, PATH_MAX - 1, what);
		*bad = true;
		return NULL;
	}
	memcpy(copy, s, len + 1);
	return copy;
}

/* The profile's settings (BRAVO_PROFILE, BRAVO_PROFILE_*). */
static void profile_settings(void)
{
	unsigned long on = 0, top = 10, locks = 16384, sample = 64;
	unsigned sort = 0;
	bool file_bad;
	const char *file = file_setting("BRAVO_PROFILE_FILE", profile_file_copy, "profile",
					&file_bad);

	env_flag("BRAVO_PROFILE", &on);
	env_uint_desc("BRAVO_PROFILE_TOP", 0, 1000000, false, &top, NULL);
	env_choice_of("BRAVO_PROFILE_SORT", config_profile_sort_names, 5, &sort);
	env_uint("BRAVO_PROFILE_LOCKS", 1, 1u << 20, false, &locks);
	env_uint("BRAVO_PROFILE_SAMPLE", 1, 1u << 20, false, &sample);
	/* An unusable BRAVO_PROFILE_FILE: the profile goes nowhere. */
	config.profile = !file_bad && (on != 0 || file);
	config.profile_file = file;
	config.profile_top = (unsigned)top;
	config.profile_sort = sort;
	config.profile_locks = (unsigned)locks;
	config.profile_sample = (unsigned)sample;
}

static void config_read(void)
{
	unsigned long n = 9, slots = vr_table_default_slots(), spin = 128, verbose = 0;
	unsigned long nodes = 0, handoff = 64, stats = 0, check = 0, payback = 16;
	unsigned long ways = VR_WAYS_DEFAULT;
	unsigned layout = VR_2D, policy = BRAVO_POLICY_ADAPTIVE;
	bool stats_file_bad;
	const char *stats_file;

	libbravo_stderr_remember();
	stats_file = file_setting("BRAVO_STATS_FILE", stats_file_copy, "statistics",
				  &stats_file_bad);

	env_uint("BRAVO_N", 0, 1000000, false, &n);
	env_uint("BRAVO_TABLE_SIZE", VR_TABLE_MIN_SLOTS, 1ul << 24, true, &slots);
	env_choice("BRAVO_TABLE", layout_names, &layout);
	env_uint("BRAVO_TABLE_WAYS", 1, VR_WAYS_MAX, true, &ways);
	env_choice("BRAVO_POLICY", policy_names, &policy);
	env_uint("BRAVO_PAYBACK", 1, 1000000, false, &payback);
	env_uint("BRAVO_SPIN", 0, 1000000, false, &spin);
	env_flag("BRAVO_VERBOSE", &verbose);
	env_flag("BRAVO_STATS", &stats);
	env_flag("BRAVO_CHECK", &check);
	env_uint_desc("BRAVO_COHORT_NODES", 1, 1024, false, &nodes, "the machine's NUMA nodes");
	env_uint("BRAVO_COHORT_HANDOFF", 1, 1000000, false, &handoff);
	profile_settings();
	warn_unknown_names();
	config.slowdown_n = (unsigned)n;
	config.table_slots = (uint32_t)slots;
	config.spin = (unsigned)spin;
	config.verbose = verbose != 0;
	/* An unusable BRAVO_STATS_FILE: the statistics go nowhere. */
	config.stats = !stats_file_bad && (stats != 0 || stats_file);
	config.stats_file = stats_file;
	config.strict = check != 0;
	config.cohort_nodes = (unsigned)nodes;
	config.cohort_handoff = (unsigned)handoff;
	bravo_slowdown_n = config.slowdown_n;
	vr_layout = (enum vr_layout)layout;
	vr_ways = (unsigned)ways;
	bravo_policy = (enum bravo_policy)policy;
	bravo_payback = (unsigned)payback;
	wait_spin_budget = config.spin;
}

/*
 * In a privileged (AT_SECURE) process the BRAVO_* variables are its
 * caller's: ignored (secure_getenv), and removed from the environment as
 * ld.so removes LD_PRELOAD and its kin, so that they do not reach a
 * program it runs after giving up its privileged state (a set-user-ID
 * program that makes its real id root and execs would pass them to a
 * child that is root and not AT_SECURE).  In place: no allocation.
 */
void config_scrub_secure(void)
{
	extern char **environ;
	char **r, **w;

	if (!getauxval(AT_SECURE) || !environ)
		return;
	for (r = w = environ; *r; r++)
		if (strncmp(*r, "BRAVO_", 6) != 0)
			*w++ = *r;
	*w = NULL;
}

void config_load(void)
{
	int saved_errno = errno;

	pthread_once(&config_once, config_read);
	errno = saved_errno;
}

/* NUMA nodes online, from sysfs ("0", "0-3", "0,2-3"): the highest + 1. */
static long numa_nodes_online(void)
{
	char buf[256], *p;
	FILE *f = fopen("/sys/devices/system/node/online", "re");
	long last = 0;

	if (!f)
		return 1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	for (p = buf; *p;) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		last = v;
		p = *end ? end + 1 : end;
	}
	return last + 1;
}

void config_announce(const char *variant, const char *detail)
{
	int saved_errno = errno;

	if (!config.verbose)
		return;
	libbravo_message("variant=%s %s%sspin=%u cpus=%ld numa_nodes=%ld stats=%s%s%s pid=%ld",
			 variant, detail, *detail ? " " : "", config.spin,
			 sysconf(_SC_NPROCESSORS_ONLN), numa_nodes_online(),
			 config.stats ? (config.stats_file ? config.stats_file : "stderr") : "off",
			 config.profile ? " profile=" : "",
			 config.profile ? (config.profile_file ? config.profile_file : "stderr") : "",
			 (long)getpid());
	errno = saved_errno;
}
