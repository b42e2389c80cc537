/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * stats.c - per-thread counters, their sums, and the report (stats.h).
 *
 * Counters live in blocks from the pool (pool.h), never in TLS: a thread
 * owns one block while it counts, and writes it alone (relaxed stores, no
 * read-modify-write); the sums read every block with relaxed loads.  Every
 * block ever made stays on one list, pushed by CAS and never unlinked, so
 * the sums need no lock (the report at exit takes none) and a list can
 * never be broken by a thread's life:
 *  - a thread's exit (its thread-specific data destructor) gives its block
 *    back, counts and all, to the free blocks, and the next thread that
 *    counts goes on adding to it (the sums do not care whose counts they
 *    are);
 *  - a thread that counts again after that, in a later destructor of its
 *    exit, adds to the shared block with atomic adds;
 *  - so does a thread when no block can be had (no memory).
 * A forked child starts from zero: its threads are its own.
 */
#include "stats.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../locks/events.h"
#include "message.h"
#include "../interpose/pool.h"
#include "../interpose/table_lock.h"

struct stats_block {
	_Atomic uint64_t v[STAT_COUNT];
	struct stats_block *all_next;  /* every block: pushed, never unlinked */
	struct stats_block *free_next; /* free blocks: under stats_mutex */
};

bool stats_on;

/* The thread's block; NULL: none yet, or given back at its exit (stats_exited). */
static __thread struct stats_block *stats_mine __attribute__((tls_model("initial-exec")));
static __thread bool stats_exited __attribute__((tls_model("initial-exec")));
/* Counts of threads without a block of their own: atomic adds. */
static struct stats_block stats_shared;
static struct stats_block *_Atomic stats_all = &stats_shared;
static pthread_mutex_t stats_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct stats_block *stats_free;     /* under stats_mutex */
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

/* Add block b's counts into totals. */
static void add_block(uint64_t *totals, struct stats_block *b)
{
	for (int i = 0; i < STAT_COUNT; i++) {
		uint64_t v = atomic_load_explicit(&b->v[i], memory_order_relaxed);

		if (i == STAT_REVOCATION_MAX_NS)
			totals[i] = v > totals[i] ? v : totals[i];
		else
			totals[i] += v;
	}
}

/* Thread exit: the block goes back to the free ones, its counts in it. */
static void stats_thread_exit(void *arg)
{
	struct stats_block *b = arg;
	struct table_guard g;

	stats_mine = NULL;
	stats_exited = true;
	table_lock(&stats_mutex, &g);
	b->free_next = stats_free;
	stats_free = b;
	table_unlock(&stats_mutex, &g);
}

/* A free block, or a new one on the list of all; NULL if no memory. */
static struct stats_block *block_take(void)
{
	struct stats_block *b;
	struct table_guard g;

	table_lock(&stats_mutex, &g);
	b = stats_free;
	if (b)
		stats_free = b->free_next;
	table_unlock(&stats_mutex, &g);
	if (b)
		return b;
	b = pool_alloc(sizeof(*b));
	if (!b)
		return NULL;
	/* Release: whoever sums the list sees the block zeroed. */
	b->all_next = atomic_load_explicit(&stats_all, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&stats_all, &b->all_next, b,
						      memory_order_release, memory_order_relaxed))
		;
	return b;
}

/* The block the calling thread counts in (see the top). */
static struct stats_block *stats_self(void)
{
	struct stats_block *b = stats_mine;

	if (__builtin_expect(b != NULL, 1))
		return b;
	if (stats_exited)
		return &stats_shared;
	b = block_take();
	if (!b)
		return &stats_shared;
	if (pthread_setspecific(stats_key, b) != 0) {
		stats_thread_exit(b);
		stats_exited = false;
		return &stats_shared;
	}
	stats_mine = b;
	return b;
}

void stats_add_slow(enum stats_counter s, uint64_t n)
{
	struct stats_block *b = stats_self();
	_Atomic uint64_t *c = &b->v[s];
	uint64_t v = atomic_load_explicit(c, memory_order_relaxed);

	if (b == &stats_shared) {
		if (s != STAT_REVOCATION_MAX_NS)
			atomic_fetch_add_explicit(c, n, memory_order_relaxed);
		else
			while (n > v && !atomic_compare_exchange_weak_explicit(c, &v, n,
									    memory_order_relaxed,
									    memory_order_relaxed))
				;
		return;
	}
	if (s == STAT_REVOCATION_MAX_NS)
		v = n > v ? n : v;
	else
		v += n;
	atomic_store_explicit(c, v, memory_order_relaxed);
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
	/* Acquire: pairs with the release that pushed each block. */
	for (struct stats_block *b = atomic_load_explicit(&stats_all, memory_order_acquire); b;
	     b = b->all_next)
		add_block(out, b);
}

static void stats_report(void)
{
	uint64_t t[STAT_COUNT];
	char buf[4096], why[128];
	int fd = 2, n, err, saved_errno = errno;
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
	else if (!libbravo_stderr_writable(true))
		fd = -1; /* stderr is not the one the program started with */
	/* One write: reports of several processes to one file do not interleave. */
	if (fd >= 0 && (err = libbravo_write(fd, buf, (size_t)n)) != 0 && stats_path[0])
		libbravo_message("cannot write statistics to %s: %s; statistics dropped",
				 stats_path, strerror_r(err, why, sizeof(why)));
	if (fd >= 0 && stats_path[0])
		close(fd); /* ours, whatever its number (0 to 2 if the program closed them) */
	errno = saved_errno;
}

/* Before the profile's report (profile.c, a smaller number runs later). */
__attribute__((destructor(LIBBRAVO_DTOR_STATS))) static void stats_at_exit(void)
{
	stats_report();
}

/*
 * A forked child starts counting from zero: its threads are its own.  The
 * forking thread keeps its block; the parent's other threads' blocks are
 * free in the child.  Only the forking thread runs here.
 */
static void stats_after_fork_in_child(void)
{
	stats_free = NULL;
	for (struct stats_block *b = stats_all; b; b = b->all_next) {
		for (int i = 0; i < STAT_COUNT; i++)
			atomic_store_explicit(&b->v[i], 0, memory_order_relaxed);
		if (b != stats_mine && b != &stats_shared) {
			b->free_next = stats_free;
			stats_free = b;
		}
	}
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
