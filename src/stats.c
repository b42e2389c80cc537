/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stats.c - per-thread counters, their merging, and the report (stats.h).
 *
 * Each thread's block is written only by its thread (relaxed stores, no
 * read-modify-write) and read by others only to total them, with relaxed
 * loads.  Blocks of live threads sit on a list; a thread's exit folds its
 * block into the process totals and takes it off the list.
 */
#include "stats.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../locks/events.h"
#include "message.h"

struct stats_block {
	uint64_t v[STAT_COUNT];
	struct stats_block *next, **pprev;
	bool listed;
};

bool stats_on;

static __thread struct stats_block stats_tls __attribute__((tls_model("initial-exec")));
static pthread_mutex_t stats_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct stats_block *stats_live;     /* under stats_mutex */
static uint64_t stats_done[STAT_COUNT];    /* exited threads; under stats_mutex */
static pthread_key_t stats_key;
static const char *stats_variant = "?";
static bool stats_bias;                    /* print the BRAVO counters */
static char stats_path[PATH_MAX];

static const char *const stats_names[STAT_COUNT] = {
	[STAT_READS] = "reads",
	[STAT_READ_FAST] = "read_fast",
	[STAT_SLOW_BIAS_OFF] = "read_slow_bias_off",
	[STAT_SLOW_INHIBITED] = "read_slow_inhibited",
	[STAT_SLOW_WRITER_WAITING] = "read_slow_writer_waiting",
	[STAT_SLOW_COLLISION] = "read_slow_collision",
	[STAT_SLOW_LOST_RACE] = "read_slow_lost_race",
	[STAT_WRITES] = "writes",
	[STAT_READ_REENTRIES] = "read_reentries",
	[STAT_REVOCATIONS] = "revocations",
	[STAT_REVOCATION_NS] = "revocation_ns_total",
	[STAT_REVOCATION_MAX_NS] = "revocation_ns_max",
	[STAT_REVOCATION_NO_SCAN] = "revocations_no_scan",
	[STAT_SLOTS_SCANNED] = "slots_scanned",
	[STAT_BIAS_ENABLED] = "bias_enabled",
	[STAT_POLICY_STRIKES] = "policy_strikes",
	[STAT_POLICY_PAID] = "policy_paid",
	[STAT_WAIT_NS] = "wait_ns",
	[STAT_WAITS] = "waits",
	[STAT_ERR_EDEADLK] = "errors_edeadlk",
	[STAT_ERR_EBUSY] = "errors_ebusy",
	[STAT_ERR_EPERM] = "errors_eperm",
	[STAT_ERR_EINVAL] = "errors_einval",
	[STAT_ERR_ETIMEDOUT] = "errors_etimedout",
	[STAT_ERR_EAGAIN] = "errors_eagain",
};

/* The counters that only BRAVO's fast path and revocations move. */
static bool is_bias_counter(int i)
{
	return (i >= STAT_READ_FAST && i <= STAT_SLOW_LOST_RACE) ||
	       (i >= STAT_REVOCATIONS && i <= STAT_POLICY_PAID);
}

static void merge(uint64_t *into, const uint64_t *from, bool atomic_from)
{
	for (int i = 0; i < STAT_COUNT; i++) {
		uint64_t v = atomic_from ? __atomic_load_n(&from[i], __ATOMIC_RELAXED) : from[i];

		if (i == STAT_REVOCATION_MAX_NS)
			into[i] = v > into[i] ? v : into[i];
		else
			into[i] += v;
	}
}

/* Thread exit: fold the block into the totals. */
static void stats_thread_exit(void *arg)
{
	struct stats_block *b = arg;

	pthread_mutex_lock(&stats_mutex);
	merge(stats_done, b->v, false);
	if (b->listed) {
		*b->pprev = b->next;
		if (b->next)
			b->next->pprev = b->pprev;
		b->listed = false;
	}
	memset(b->v, 0, sizeof(b->v));
	pthread_mutex_unlock(&stats_mutex);
}

static struct stats_block *stats_self(void)
{
	struct stats_block *b = &stats_tls;

	if (!b->listed) {
		pthread_mutex_lock(&stats_mutex);
		b->next = stats_live;
		b->pprev = &stats_live;
		if (stats_live)
			stats_live->pprev = &b->next;
		stats_live = b;
		b->listed = true;
		pthread_mutex_unlock(&stats_mutex);
		pthread_setspecific(stats_key, b);
	}
	return b;
}

void stats_add_slow(enum stats_counter s, uint64_t n)
{
	struct stats_block *b = stats_self();
	uint64_t v = b->v[s];

	if (s == STAT_REVOCATION_MAX_NS)
		v = n > v ? n : v;
	else
		v += n;
	__atomic_store_n(&b->v[s], v, __ATOMIC_RELAXED);
}

int stats_error_slow(int err)
{
	switch (err) {
	case EDEADLK: stats_add_slow(STAT_ERR_EDEADLK, 1); break;
	case EBUSY: stats_add_slow(STAT_ERR_EBUSY, 1); break;
	case EPERM: stats_add_slow(STAT_ERR_EPERM, 1); break;
	case EINVAL: stats_add_slow(STAT_ERR_EINVAL, 1); break;
	case ETIMEDOUT: stats_add_slow(STAT_ERR_ETIMEDOUT, 1); break;
	case EAGAIN: stats_add_slow(STAT_ERR_EAGAIN, 1); break;
	}
	return err;
}

static void on_waited(uint64_t ns)
{
	stats_add_slow(STAT_WAIT_NS, ns);
	stats_add_slow(STAT_WAITS, 1);
}

static void on_revoked(uint64_t ns)
{
	stats_add_slow(STAT_REVOCATIONS, 1);
	stats_add_slow(STAT_REVOCATION_NS, ns);
	stats_add_slow(STAT_REVOCATION_MAX_NS, ns);
	stats_add_slow(STAT_REVOCATION_HIST + rev_hist_bucket(ns), 1);
}

static void on_counted(enum lock_event ev, uint64_t n)
{
	static const enum stats_counter of[LOCK_EV_KINDS] = {
		[LOCK_EV_BIAS_ENABLED] = STAT_BIAS_ENABLED,
		[LOCK_EV_REVOKE_NO_SCAN] = STAT_REVOCATION_NO_SCAN,
		[LOCK_EV_SLOTS_SCANNED] = STAT_SLOTS_SCANNED,
		[LOCK_EV_POLICY_STRIKE] = STAT_POLICY_STRIKES,
		[LOCK_EV_POLICY_PAID] = STAT_POLICY_PAID,
	};

	if ((unsigned)ev < LOCK_EV_KINDS)
		stats_add_slow(of[ev], n);
}

/*
 * The median revocation time from the histogram: the middle of the bucket
 * holding the middle revocation (within 6.25% of the true median).
 */
static uint64_t revocation_median_ns(const uint64_t t[STAT_COUNT])
{
	uint64_t total = t[STAT_REVOCATIONS], seen = 0;

	if (total == 0)
		return 0;
	for (unsigned i = 0; i < REV_HIST_BUCKETS; i++) {
		seen += t[STAT_REVOCATION_HIST + i];
		if (2 * seen >= total)
			return rev_hist_middle(i);
	}
	return t[STAT_REVOCATION_MAX_NS];
}

void stats_totals(uint64_t out[STAT_COUNT])
{
	memset(out, 0, STAT_COUNT * sizeof(out[0]));
	pthread_mutex_lock(&stats_mutex);
	merge(out, stats_done, false);
	for (struct stats_block *b = stats_live; b; b = b->next)
		merge(out, b->v, true);
	pthread_mutex_unlock(&stats_mutex);
}

static void stats_report(void)
{
	uint64_t t[STAT_COUNT];
	char buf[4096];
	int fd = 2, n, saved_errno = errno;
	uint64_t slow;

	if (!stats_on)
		return;
	stats_totals(t);
	slow = t[STAT_READS] - t[STAT_READ_FAST];
	n = snprintf(buf, sizeof(buf), "libbravo: statistics variant=%s pid=%ld\n"
		     "libbravo.variant=%s\nlibbravo.pid=%ld\n",
		     stats_variant, (long)getpid(), stats_variant, (long)getpid());
	for (int i = 0; i < STAT_REVOCATION_HIST && n < (int)sizeof(buf); i++) {
		if (!stats_bias && is_bias_counter(i))
			continue;
		n += snprintf(buf + n, sizeof(buf) - n, "libbravo.%s=%llu\n", stats_names[i],
			      (unsigned long long)t[i]);
		if (i == STAT_READ_FAST && n < (int)sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n,
				      "libbravo.read_slow=%llu\nlibbravo.read_fast_fraction=%.4f\n",
				      (unsigned long long)slow,
				      t[STAT_READS] ? (double)t[STAT_READ_FAST] / (double)t[STAT_READS] : 0.0);
		if (i == STAT_REVOCATION_MAX_NS && n < (int)sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n,
				      "libbravo.revocation_ns_mean=%llu\nlibbravo.revocation_ns_median=%llu\n",
				      (unsigned long long)(t[STAT_REVOCATIONS] ?
							   t[STAT_REVOCATION_NS] / t[STAT_REVOCATIONS] : 0),
				      (unsigned long long)revocation_median_ns(t));
	}
	if (n > (int)sizeof(buf))
		n = sizeof(buf);
	if (stats_path[0])
		fd = libbravo_report_open(stats_path, "statistics", NULL);
	else if (!libbravo_stderr_unchanged())
		fd = -1; /* stderr is not the one the program started with */
	/* One write: reports of several processes to one file do not interleave. */
	if (fd >= 0)
		libbravo_write(fd, buf, (size_t)n);
	if (fd >= 0 && stats_path[0])
		close(fd); /* ours, whatever its number (0 to 2 if the program closed them) */
	errno = saved_errno;
}

/*
 * Before the profile's report (profile.c, a smaller number runs later):
 * naming the profile's call sites takes libdw's rwlocks, which are not the
 * program's.
 */
__attribute__((destructor(LIBBRAVO_DTOR_STATS))) static void stats_at_exit(void)
{
	stats_report();
}

/* A forked child starts counting from zero: its threads are its own. */
static void stats_after_fork_in_child(void)
{
	memset(stats_done, 0, sizeof(stats_done));
	stats_live = NULL;
	stats_tls.listed = false;
	memset(stats_tls.v, 0, sizeof(stats_tls.v));
	pthread_mutex_init(&stats_mutex, NULL);
}

void stats_start(const char *variant, const char *path, bool bias)
{
	int saved_errno = errno;

	stats_variant = variant;
	stats_bias = bias;
	if (path) {
		size_t len = strlen(path);

		if (len >= sizeof(stats_path)) { /* config.c refuses these first */
			libbravo_message("statistics file name too long (%zu bytes): statistics off",
					 len);
			return;
		}
		memcpy(stats_path, path, len + 1);
	}
	if (pthread_key_create(&stats_key, stats_thread_exit) == 0) {
		pthread_atfork(NULL, NULL, stats_after_fork_in_child);
		lock_event_waited = on_waited;
		lock_event_revoked = on_revoked;
		lock_event_count = on_counted;
		stats_on = true;
	}
	errno = saved_errno;
}
