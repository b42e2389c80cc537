/*
 * config.c - environment settings (see config.h).
 *
 * Every BRAVO_* variable is read with secure_getenv: in a process that
 * gained privileges (AT_SECURE: set-user-ID or set-group-ID, file
 * capabilities) the environment is the unprivileged caller's, so all of
 * them are ignored and the defaults used, silently.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../locks/bravo.h"
#include "../locks/wait.h"
#include "message.h"

struct config config;

/* BRAVO_STATS_FILE, copied: the program may change its environment. */
static char stats_file_copy[PATH_MAX];
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/*
 * Parse a decimal in [min, max]; on error, say so and keep *out.  what_default
 * names the default when it is not a plain number.
 */
static void env_uint_desc(const char *name, unsigned long min, unsigned long max,
			  bool pow2, unsigned long *out, const char *what_default)
{
	const char *s = secure_getenv(name);
	unsigned long v;
	char *end;

	if (!s)
		return;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*s == '-' || *s == '\0' || *end != '\0' || errno || v < min || v > max ||
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

/* One of two words (first: index 0); on error, say so and keep *out. */
static void env_choice(const char *name, const char *const choice[2], unsigned *out)
{
	const char *s = secure_getenv(name);

	if (!s)
		return;
	for (unsigned i = 0; i < 2; i++)
		if (strcmp(s, choice[i]) == 0) {
			*out = i;
			return;
		}
	libbravo_message("ignoring %s=\"%s\" (want %s or %s); using %s",
			 name, s, choice[0], choice[1], choice[*out]);
}

static const char *const layout_names[2] = { "2d", "1d" };        /* enum vr_layout */
static const char *const policy_names[2] = { "adaptive", "classic" }; /* enum bravo_policy */

const char *config_table_name(void)
{
	return layout_names[vr_layout];
}

const char *config_policy_name(void)
{
	return policy_names[bravo_policy];
}

/*
 * BRAVO_STATS_FILE: NULL if unset or empty; NULL and *bad if unusable
 * (said on stderr).  A path is never shortened to fit.
 */
static const char *stats_file_setting(bool *bad)
{
	const char *s = secure_getenv("BRAVO_STATS_FILE");
	size_t len;

	*bad = false;
	if (!s || !*s)
		return NULL;
	len = strlen(s);
	if (len >= sizeof(stats_file_copy)) {
		libbravo_message("ignoring BRAVO_STATS_FILE=\"%.48s...\" (%zu bytes; "
				 "a path has at most %zu): statistics off",
				 s, len, sizeof(stats_file_copy) - 1);
		*bad = true;
		return NULL;
	}
	memcpy(stats_file_copy, s, len + 1);
	return stats_file_copy;
}

static void config_read(void)
{
	unsigned long n = 9, slots = vr_table_default_slots(), spin = 128, verbose = 0;
	unsigned long nodes = 0, handoff = 64, stats = 0, check = 0, payback = 16;
	unsigned layout = VR_2D, policy = BRAVO_POLICY_ADAPTIVE;
	bool stats_file_bad;
	const char *stats_file;

	libbravo_stderr_remember();
	stats_file = stats_file_setting(&stats_file_bad);

	env_uint("BRAVO_N", 0, 1000000, false, &n);
	env_uint("BRAVO_TABLE_SIZE", VR_TABLE_MIN_SLOTS, 1ul << 24, true, &slots);
	env_choice("BRAVO_TABLE", layout_names, &layout);
	env_choice("BRAVO_POLICY", policy_names, &policy);
	env_uint("BRAVO_PAYBACK", 1, 1000000, false, &payback);
	env_uint("BRAVO_SPIN", 0, 1000000, false, &spin);
	env_uint("BRAVO_VERBOSE", 0, 1, false, &verbose);
	env_uint("BRAVO_STATS", 0, 1, false, &stats);
	env_uint("BRAVO_CHECK", 0, 1, false, &check);
	env_uint_desc("BRAVO_COHORT_NODES", 1, 1024, false, &nodes, "the machine's NUMA nodes");
	env_uint("BRAVO_COHORT_HANDOFF", 1, 1000000, false, &handoff);
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
	bravo_policy = (enum bravo_policy)policy;
	bravo_payback = (unsigned)payback;
	wait_spin_budget = config.spin;
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
	libbravo_message("variant=%s %s%sspin=%u cpus=%ld numa_nodes=%ld stats=%s pid=%ld",
			 variant, detail, *detail ? " " : "", config.spin,
			 sysconf(_SC_NPROCESSORS_ONLN), numa_nodes_online(),
			 config.stats ? (config.stats_file ? config.stats_file : "stderr") : "off",
			 (long)getpid());
	errno = saved_errno;
}
