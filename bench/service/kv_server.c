/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kv_server.c - a multi-threaded TCP key-value server whose table is
 * guarded by pthread rwlocks: the service of our own that kv_load drives,
 * so that the lock variants are compared on a whole server (bravo-run
 * --compare --server).  An ordinary pthread program that knows nothing of
 * libbravo: preloaded with a variant, its stripes run on that variant.
 *
 *   kv_server --port N [--bind ADDR] [--threads N] [--stripes N] [--keys N]
 *             [--prefer-writer] [--ready-file PATH] [--quiet] [--unlocked]
 *
 * The table has --keys keys, each starting at version 0 (kv_proto.h); key
 * k is guarded by the rwlock of stripe k % --stripes.  A PUT writes the
 * value's two halves one after the other with a pause between them, so a
 * reader that a lock lets in beside a writer reads a torn value, which
 * the client's check reports.
 *
 * The protocol: one request line, one answer line, over a persistent
 * connection (bench/README.md):
 *   GET K         VAL K VERSION.CHECK
 *   PUT K V.C     OK       (kept unless key K holds a higher version)
 *   STATS         STATS requests=.. gets=.. puts=.. stale_puts=.. ...
 *   QUIT          BYE, and the server closes the connection
 *   (else)        ERR REASON
 *
 * The main thread accepts connections and hands each to an idle worker of
 * a fixed pool (--threads), which serves it until the client closes it; a
 * connection that finds no worker idle within a second is answered
 * "ERR busy" and closed.  Listening, it prints
 *   kv_server: listening on ADDR:PORT
 * and writes the port to --ready-file.  SIGTERM or SIGINT: it stops
 * accepting, ends each connection after the request being served, joins
 * the workers, removes the ready file, prints
 *   kv_server: requests=N gets=N puts=N stale_puts=N errors=N connections=N
 * (not with --quiet) and exits 0, or 1 if a lock call failed.  Exit 1 too
 * when it cannot listen; 2 on a bad command line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "kv_proto.h"

#define THREADS_MAX 1024
#define STRIPES_MAX 65536
/* how long a new connection waits for an idle worker before "ERR busy" */
#define HAND_OVER_WAIT_S 1
/* busy-loop steps between the two halves of a write */
#define WRITE_GAP_STEPS 64
#define OUT_BUFFER 8192
/* how long an answer may wait for the client to read */
#define SEND_TIMEOUT_S 5

static const char usage_text[] =
	"usage: kv_server --port N [--bind ADDR] [--threads N] [--stripes N] [--keys N]\n"
	"                 [--prefer-writer] [--ready-file PATH] [--quiet] [--unlocked]\n";

static const char help_text[] =
	"A TCP key-value server whose table is guarded by pthread rwlocks.\n"
	"  --port N          TCP port to listen on (0: any free port, printed)\n"
	"  --bind ADDR       numeric IPv4 or IPv6 address (default 127.0.0.1)\n"
	"  --threads N       worker threads, one connection each (default 16)\n"
	"  --stripes N       rwlocks; key k is guarded by lock k %% N (default 16)\n"
	"  --keys N          keys in the table (default 10000)\n"
	"  --prefer-writer   writer-preferring rwlocks (default attributes otherwise)\n"
	"  --ready-file PATH once listening, write the port to PATH (removed at exit)\n"
	"  --quiet           no summary line at exit\n"
	"  --unlocked        take no lock at all (only to test that clients catch it)\n"
	"Protocol: GET K, PUT K VERSION.CHECK, STATS, QUIT; one line each way.\n"
	"SIGTERM or SIGINT: finish, print the summary line, exit 0.\n";

struct options {
	const char *bind_addr;
	const char *ready_file;
	long port; /* -1 until given */
	unsigned threads;
	unsigned stripes;
	unsigned keys;
	bool prefer_writer;
	bool quiet;
	bool unlocked;
};

/* ---- the table ---- */

struct stripe {
	alignas(64) pthread_rwlock_t lock;
};

/* Volatile: each half is its own store and load, never merged into one. */
struct slot {
	volatile uint64_t version;
	volatile uint64_t check;
};

struct table {
	struct stripe *stripes;
	struct slot *slots;
	unsigned nstripes;
	unsigned nkeys;
	bool locking;
	atomic_uint lock_failures;
};

static int table_init_locks(struct table *t, bool prefer_writer)
{
	pthread_rwlockattr_t attr;
	pthread_rwlockattr_t *attrp = NULL;
	int err;

	if (prefer_writer) {
		pthread_rwlockattr_init(&attr);
		pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		attrp = &attr;
	}
	for (unsigned i = 0; i < t->nstripes; i++) {
		err = pthread_rwlock_init(&t->stripes[i].lock, attrp);
		if (err != 0) {
			fprintf(stderr, "kv_server: pthread_rwlock_init: %s\n", strerror(err));
			return -1;
		}
	}
	if (attrp != NULL)
		pthread_rwlockattr_destroy(attrp);
	return 0;
}

static int table_init(struct table *t, const struct options *opt)
{
	t->nstripes = opt->stripes;
	t->nkeys = opt->keys;
	t->locking = !opt->unlocked;
	atomic_init(&t->lock_failures, 0);
	t->stripes = aligned_alloc(alignof(struct stripe), sizeof(struct stripe) * t->nstripes);
	t->slots = calloc(t->nkeys, sizeof(struct slot));
	if (t->stripes == NULL || t->slots == NULL) {
		fprintf(stderr, "kv_server: out of memory for %u keys\n", t->nkeys);
		return -1;
	}
	for (unsigned k = 0; k < t->nkeys; k++) {
		t->slots[k].version = 0;
		t->slots[k].check = kv_check(k, 0);
	}
	return table_init_locks(t, opt->prefer_writer);
}

static void table_destroy(struct table *t)
{
	for (unsigned i = 0; i < t->nstripes; i++)
		pthread_rwlock_destroy(&t->stripes[i].lock);
	free(t->stripes);
	free((void *)t->slots);
}

/* A failed lock call: said on stderr (the first few), counted, and the
 * request answered "ERR lock". */
static bool lock_call_ok(struct table *t, int err, const char *call)
{
	if (err == 0)
		return true;
	if (atomic_fetch_add(&t->lock_failures, 1) < 10)
		fprintf(stderr, "kv_server: %s: %s\n", call, strerror(err));
	return false;
}

static bool stripe_lock(struct table *t, unsigned key, bool write)
{
	pthread_rwlock_t *lock = &t->stripes[key % t->nstripes].lock;

	if (!t->locking)
		return true;
	if (write)
		return lock_call_ok(t, pthread_rwlock_wrlock(lock), "pthread_rwlock_wrlock");
	return lock_call_ok(t, pthread_rwlock_rdlock(lock), "pthread_rwlock_rdlock");
}

static bool stripe_unlock(struct table *t, unsigned key)
{
	if (!t->locking)
		return true;
	return lock_call_ok(t, pthread_rwlock_unlock(&t->stripes[key % t->nstripes].lock),
			    "pthread_rwlock_unlock");
}

/* Reads key KEY's value under its stripe's read lock. */
static bool table_get(struct table *t, unsigned key, uint64_t *version, uint64_t *check)
{
	if (!stripe_lock(t, key, false))
		return false;
	*version = t->slots[key].version;
	*check = t->slots[key].check;
	return stripe_unlock(t, key);
}

/* A pause between a write's halves that the compiler keeps. */
static void write_gap(void)
{
	for (volatile int i = 0; i < WRITE_GAP_STEPS; i++) {
	}
}

/* Under the write lock: stores VERSION.CHECK unless KEY holds a higher
 * version (*STORED says which), version first, check after a pause. */
static bool table_put(struct table *t, unsigned key, uint64_t version, uint64_t check,
		      bool *stored)
{
	struct slot *s = &t->slots[key];

	if (!stripe_lock(t, key, true))
		return false;
	*stored = version > s->version;
	if (*stored) {
		s->version = version;
		write_gap();
		/* Unlocked (a test that clients catch it): give the CPU away
		 * mid-write, so that a reader sees the torn value even when
		 * the threads share one CPU. */
		if (!t->locking)
			sched_yield();
		s->check = check;
	}
	return stripe_unlock(t, key);
}

/* ---- the workers ---- */

struct counters {
	atomic_uint_fast64_t requests;
	atomic_uint_fast64_t gets;
	atomic_uint_fast64_t puts;
	atomic_uint_fast64_t stale_puts;
	atomic_uint_fast64_t errors;
	atomic_uint_fast64_t connections;
};

struct server;

struct worker {
	alignas(64) pthread_t thread;
	struct server *server;
	int fd; /* the connection being served, -1 none (server->pool_lock) */
	struct counters count;
};

struct server {
	struct options opt;
	struct table table;
	int listen_fd;
	struct worker *workers;
	/* hand-over of connections from the accepting thread to the workers */
	pthread_mutex_t pool_lock;
	pthread_cond_t work;	/* a connection is pending, or stopping */
	pthread_cond_t handed;	/* a worker went idle, or took the pending one */
	int pending;		/* handed over, not yet taken; -1 none */
	unsigned idle;		/* workers waiting, less the pending one */
	bool stopping;
};

/* One connection's buffers. */
struct conn {
	int fd;
	bool closing; /* QUIT, or a line too long: close after the answers */
	size_t in_len;
	size_t out_len;
	char in[KV_LINE_MAX];
	char out[OUT_BUFFER];
};

/* Only this thread writes its counters: a load and a store, no lock prefix. */
static void bump(atomic_uint_fast64_t *counter)
{
	atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static uint64_t read_counter(atomic_uint_fast64_t *counter)
{
	return atomic_load_explicit(counter, memory_order_relaxed);
}

static void answer(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(c->out + c->out_len, sizeof c->out - c->out_len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof c->out - c->out_len) /* cut short: cannot happen */
		n = (int)(sizeof c->out - c->out_len - 1);
	c->out_len += (size_t)n;
}

static bool send_answers(struct conn *c)
{
	size_t sent = 0;

	while (sent < c->out_len) {
		ssize_t n = send(c->fd, c->out + sent, c->out_len - sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		sent += (size_t)n;
	}
	c->out_len = 0;
	return true;
}

/* A key at S that the table has, ending at END_CHAR: *KEY and the
 * character after it, or NULL. */
static const char *parse_key(const struct table *t, const char *s, char end_char, unsigned *key)
{
	uint64_t k;
	const char *p = kv_parse_u64(s, &k);

	if (p == NULL || *p != end_char || k >= t->nkeys)
		return NULL;
	*key = (unsigned)k;
	return p;
}

static void do_get(struct worker *w, struct conn *c, const char *args)
{
	struct table *t = &w->server->table;
	uint64_t version, check;
	unsigned key;

	if (parse_key(t, args, '\0', &key) == NULL) {
		answer(c, "ERR bad key (GET KEY, KEY below %u)\n", t->nkeys);
		bump(&w->count.errors);
	} else if (!table_get(t, key, &version, &check)) {
		answer(c, "ERR lock\n");
		bump(&w->count.errors);
	} else {
		answer(c, "VAL %u " KV_VALUE_FORMAT "\n", key, version, check);
		bump(&w->count.gets);
	}
}

static void do_put(struct worker *w, struct conn *c, const char *args)
{
	struct table *t = &w->server->table;
	uint64_t version, check;
	unsigned key;
	bool stored;
	const char *p = parse_key(t, args, ' ', &key);

	if (p == NULL || (p = kv_parse_value(p + 1, &version, &check)) == NULL || *p != '\0') {
		answer(c, "ERR bad put (PUT KEY VERSION.CHECK, KEY below %u)\n", t->nkeys);
		bump(&w->count.errors);
	} else if (!table_put(t, key, version, check, &stored)) {
		answer(c, "ERR lock\n");
		bump(&w->count.errors);
	} else {
		answer(c, "OK\n");
		bump(&w->count.puts);
		if (!stored)
			bump(&w->count.stale_puts);
	}
}

/* "requests=N gets=N puts=N stale_puts=N errors=N connections=N": every
 * worker's counters summed, for STATS and the summary line */
static void format_counters(struct server *s, char *buf, size_t size)
{
	uint64_t requests = 0, gets = 0, puts = 0, stale_puts = 0, errors = 0, connections = 0;

	for (unsigned i = 0; i < s->opt.threads; i++) {
		struct counters *n = &s->workers[i].count;
		requests += read_counter(&n->requests);
		gets += read_counter(&n->gets);
		puts += read_counter(&n->puts);
		stale_puts += read_counter(&n->stale_puts);
		errors += read_counter(&n->errors);
		connections += read_counter(&n->connections);
	}
	snprintf(buf, size,
		 "requests=%" PRIu64 " gets=%" PRIu64 " puts=%" PRIu64 " stale_puts=%" PRIu64
		 " errors=%" PRIu64 " connections=%" PRIu64,
		 requests, gets, puts, stale_puts, errors, connections);
}

static void do_stats(struct worker *w, struct conn *c)
{
	struct server *s = w->server;
	char counters[KV_LINE_MAX];

	format_counters(s, counters, sizeof counters);
	answer(c, "STATS %s keys=%u stripes=%u threads=%u\n", counters, s->opt.keys,
	       s->opt.stripes, s->opt.threads);
}

static void handle_request(struct worker *w, struct conn *c, const char *line)
{
	bump(&w->count.requests);
	if (strncmp(line, "GET ", 4) == 0) {
		do_get(w, c, line + 4);
	} else if (strncmp(line, "PUT ", 4) == 0) {
		do_put(w, c, line + 4);
	} else if (strcmp(line, "STATS") == 0) {
		do_stats(w, c);
	} else if (strcmp(line, "QUIT") == 0) {
		answer(c, "BYE\n");
		c->closing = true;
	} else {
		answer(c, "ERR unknown command (GET, PUT, STATS, QUIT)\n");
		bump(&w->count.errors);
	}
}

/* Answers every whole line in the input buffer, sending the answers as
 * the output buffer fills.  False when the connection is to end. */
static bool handle_lines(struct worker *w, struct conn *c)
{
	size_t start = 0;
	char *nl;

	while (!c->closing && (nl = memchr(c->in + start, '\n', c->in_len - start)) != NULL) {
		*nl = '\0';
		if (nl > c->in + start && nl[-1] == '\r')
			nl[-1] = '\0';
		if (sizeof c->out - c->out_len < KV_LINE_MAX && !send_answers(c))
			return false;
		handle_request(w, c, c->in + start);
		start = (size_t)(nl - c->in) + 1;
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	if (!c->closing && c->in_len == sizeof c->in) {
		answer(c, "ERR line too long (over %d bytes)\n", KV_LINE_MAX - 1);
		bump(&w->count.errors);
		c->closing = true;
	}
	return send_answers(c) && !c->closing;
}

/* Serves one connection until the client closes it, QUITs, or the server
 * shuts its reading side down (stopping). */
static void serve_connection(struct worker *w, int fd)
{
	struct conn *c = malloc(sizeof *c);

	if (c == NULL)
		return;
	c->fd = fd;
	c->closing = false;
	c->in_len = 0;
	c->out_len = 0;
	bump(&w->count.connections);
	for (;;) {
		ssize_t n = recv(fd, c->in + c->in_len, sizeof c->in - c->in_len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		c->in_len += (size_t)n;
		if (!handle_lines(w, c))
			break;
	}
	free(c);
}

/* Waits, idle, for a connection; -1 when the server stops.  Called and
 * returns with pool_lock held. */
static int take_connection(struct worker *w)
{
	struct server *s = w->server;
	int fd;

	s->idle++;
	pthread_cond_broadcast(&s->handed);
	while (s->pending < 0 && !s->stopping)
		pthread_cond_wait(&s->work, &s->pool_lock);
	if (s->pending < 0)
		return -1;
	fd = s->pending;
	s->pending = -1;
	w->fd = fd;
	pthread_cond_broadcast(&s->handed);
	return fd;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct server *s = w->server;
	int fd;

	pthread_mutex_lock(&s->pool_lock);
	while ((fd = take_connection(w)) >= 0) {
		pthread_mutex_unlock(&s->pool_lock);
		serve_connection(w, fd);
		pthread_mutex_lock(&s->pool_lock);
		w->fd = -1;
		close(fd);
	}
	pthread_mutex_unlock(&s->pool_lock);
	return NULL;
}

/* Hands connection FD to an idle worker; false if none came idle within
 * HAND_OVER_WAIT_S. */
static bool hand_over(struct server *s, int fd)
{
	struct timespec deadline;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += HAND_OVER_WAIT_S;
	pthread_mutex_lock(&s->pool_lock);
	while (ok && !(s->pending < 0 && s->idle > 0))
		ok = pthread_cond_timedwait(&s->handed, &s->pool_lock, &deadline) != ETIMEDOUT ||
		     (s->pending < 0 && s->idle > 0);
	if (ok) {
		s->pending = fd;
		s->idle--;
		pthread_cond_signal(&s->work);
	}
	pthread_mutex_unlock(&s->pool_lock);
	return ok;
}

static int start_workers(struct server *s)
{
	int err;

	s->workers = aligned_alloc(alignof(struct worker), sizeof(struct worker) * s->opt.threads);
	if (s->workers == NULL) {
		fprintf(stderr, "kv_server: out of memory for %u threads\n", s->opt.threads);
		return -1;
	}
	memset(s->workers, 0, sizeof(struct worker) * s->opt.threads);
	for (unsigned i = 0; i < s->opt.threads; i++) {
		s->workers[i].server = s;
		s->workers[i].fd = -1;
		err = pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]);
		if (err != 0) {
			fprintf(stderr, "kv_server: pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
	return 0;
}

/* Ends every connection after the request being served and joins the
 * workers. */
static void stop_workers(struct server *s)
{
	pthread_mutex_lock(&s->pool_lock);
	s->stopping = true;
	if (s->pending >= 0)
		shutdown(s->pending, SHUT_RD);
	for (unsigned i = 0; i < s->opt.threads; i++)
		if (s->workers[i].fd >= 0)
			shutdown(s->workers[i].fd, SHUT_RD);
	pthread_cond_broadcast(&s->work);
	pthread_mutex_unlock(&s->pool_lock);
	for (unsigned i = 0; i < s->opt.threads; i++)
		pthread_join(s->workers[i].thread, NULL);
}

/* ---- listening ---- */

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* Blocks SIGTERM and SIGINT in this thread and the workers it will start;
 * *WAIT_MASK is the mask to wait for connections under, which lets them in. */
static void catch_stop_signals(sigset_t *wait_mask)
{
	struct sigaction sa;
	sigset_t stop_set;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &stop_set, wait_mask);
	sigdelset(wait_mask, SIGTERM);
	sigdelset(wait_mask, SIGINT);
}

/* --bind and --port as a socket address; false if ADDR is not numeric. */
static bool socket_address(const char *addr, unsigned port, struct sockaddr_storage *ss,
			   socklen_t *len)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof *ss);
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*len = sizeof *in4;
		return true;
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof *in6;
		return true;
	}
	return false;
}

/* "ADDR:PORT" ("[ADDR]:PORT" for IPv6) of a bound socket */
static void format_address(int fd, char *buf, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		snprintf(buf, size, "[%s]:%u", host, ntohs(in6->sin6_port));
		return;
	}
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof host);
		port = ntohs(in4->sin_port);
	}
	snprintf(buf, size, "%s:%u", host, port);
}

static unsigned bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* A non-blocking listening socket on --bind:--port, or -1 (said why). */
static int open_listener(const struct options *opt)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1;
	int fd;

	socket_address(opt->bind_addr, (unsigned)opt->port, &ss, &len);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		fprintf(stderr, "kv_server: socket: %s\n", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 128) != 0) {
		fprintf(stderr, "kv_server: cannot listen on %s port %ld: %s\n", opt->bind_addr,
			opt->port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Writes the port to PATH, whole or not at all (a temporary file renamed). */
static int write_ready_file(const char *path, unsigned port)
{
	size_t size = strlen(path) + 32;
	char *tmp = malloc(size);
	FILE *f;
	int ok;

	if (tmp == NULL)
		return -1;
	snprintf(tmp, size, "%s.tmp.%ld", path, (long)getpid());
	f = fopen(tmp, "w");
	ok = f != NULL && fprintf(f, "%u\n", port) > 0;
	ok = (f != NULL && fclose(f) == 0) && ok && rename(tmp, path) == 0;
	if (!ok) {
		fprintf(stderr, "kv_server: cannot write the ready file %s: %s\n", path,
			strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return ok ? 0 : -1;
}

static void accept_one(struct server *s)
{
	static const char busy[] = "ERR busy: every worker thread serves a connection\n";
	struct timeval send_timeout = {.tv_sec = SEND_TIMEOUT_S};
	int one = 1;
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			fprintf(stderr, "kv_server: accept: %s\n", strerror(errno));
			usleep(100000);
		}
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	/* a client that stops reading cannot hold a worker, nor the shutdown */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
	if (!hand_over(s, fd)) {
		send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL);
		close(fd);
	}
}

/* Accepts connections until SIGTERM or SIGINT. */
static void accept_loop(struct server *s, const sigset_t *wait_mask)
{
	while (!stop_signal) {
		fd_set readable;

		FD_ZERO(&readable);
		FD_SET(s->listen_fd, &readable);
		if (pselect(s->listen_fd + 1, &readable, NULL, NULL, NULL, wait_mask) > 0)
			accept_one(s);
		else if (errno != EINTR)
			fprintf(stderr, "kv_server: pselect: %s\n", strerror(errno));
	}
}

/* ---- command line ---- */

static _Noreturn void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "kv_server: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	exit(2);
}

static unsigned long parse_number(const char *opt_name, const char *arg, unsigned long min,
				  unsigned long max)
{
	uint64_t v;
	const char *end = kv_parse_u64(arg, &v);

	if (end == NULL || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "kv_server: %s wants a whole number from %lu to %lu, not '%s'\n",
			opt_name, min, max, arg);
		fprintf(stderr, "%s", usage_text);
		exit(2);
	}
	return (unsigned long)v;
}

static void parse_options(int argc, char **argv, struct options *opt)
{
	static const struct option longopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"bind", required_argument, NULL, 'b'},
		{"threads", required_argument, NULL, 't'},
		{"stripes", required_argument, NULL, 's'},
		{"keys", required_argument, NULL, 'k'},
		{"ready-file", required_argument, NULL, 'r'},
		{"prefer-writer", no_argument, NULL, 'w'},
		{"quiet", no_argument, NULL, 'q'},
		{"unlocked", no_argument, NULL, 'u'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct sockaddr_storage ss;
	socklen_t len;
	int c;

	*opt = (struct options){.bind_addr = "127.0.0.1", .port = -1, .threads = 16,
				.stripes = 16, .keys = 10000};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': opt->port = (long)parse_number("--port", optarg, 0, 65535); break;
		case 'b': opt->bind_addr = optarg; break;
		case 't': opt->threads = parse_number("--threads", optarg, 1, THREADS_MAX); break;
		case 's': opt->stripes = parse_number("--stripes", optarg, 1, STRIPES_MAX); break;
		case 'k': opt->keys = parse_number("--keys", optarg, 1, KV_KEYS_MAX); break;
		case 'r': opt->ready_file = optarg; break;
		case 'w': opt->prefer_writer = true; break;
		case 'q': opt->quiet = true; break;
		case 'u': opt->unlocked = true; break;
		case 'h': printf("%s%s", usage_text, help_text); exit(0);
		case ':': usage_error("option %s needs a value", argv[optind - 1]); break;
		default: usage_error("unknown option %s", argv[optind - 1]); break;
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (opt->port < 0)
		usage_error("%s", "--port is required");
	if (!socket_address(opt->bind_addr, 0, &ss, &len))
		usage_error("--bind wants a numeric IPv4 or IPv6 address, not '%s'",
			    opt->bind_addr);
}

/* ---- main ---- */

static void print_summary(struct server *s)
{
	char counters[KV_LINE_MAX];

	format_counters(s, counters, sizeof counters);
	printf("kv_server: %s\n", counters);
	fflush(stdout);
}

/* The listening line, and the ready file; false if that cannot be written. */
static bool announce(struct server *s)
{
	char addr[INET6_ADDRSTRLEN + 16];

	format_address(s->listen_fd, addr, sizeof addr);
	printf("kv_server: listening on %s\n", addr);
	fflush(stdout);
	return s->opt.ready_file == NULL ||
	       write_ready_file(s->opt.ready_file, bound_port(s->listen_fd)) == 0;
}

int main(int argc, char **argv)
{
	static struct server s;
	sigset_t wait_mask;
	bool ready, failed;

	parse_options(argc, argv, &s.opt);
	if (table_init(&s.table, &s.opt) != 0)
		return 1;
	s.listen_fd = open_listener(&s.opt);
	if (s.listen_fd < 0)
		return 1;
	catch_stop_signals(&wait_mask);
	pthread_mutex_init(&s.pool_lock, NULL);
	pthread_cond_init(&s.work, NULL);
	pthread_cond_init(&s.handed, NULL);
	s.pending = -1;
	if (start_workers(&s) != 0)
		return 1;
	ready = announce(&s);
	if (ready) /* else nobody would know it is listening: stop, exit 1 */
		accept_loop(&s, &wait_mask);
	close(s.listen_fd);
	stop_workers(&s);
	if (s.opt.ready_file != NULL && ready)
		unlink(s.opt.ready_file);
	if (!s.opt.quiet)
		print_summary(&s);
	failed = !ready || atomic_load(&s.table.lock_failures) != 0;
	table_destroy(&s.table);
	free(s.workers);
	return failed ? 1 : 0;
}
