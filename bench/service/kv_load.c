/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kv_load.c - the load generator of kv_server: it drives the server and
 * verifies every answer.  A plain pthread program; it is run without the
 * preload, the server with it (bravo-run --compare --server).
 *
 *   kv_load --port N [--host ADDR] [--connections N]
 *           [--duration SECONDS | --requests N] [--write-share P]
 *           [--keys N] [--seed N]
 *
 * Each of --connections threads opens one connection and, once all are
 * open, sends requests one at a time, each answered before the next: a key
 * uniform in [0, --keys), a PUT with probability --write-share (a fraction
 * like 1/100, or a decimal), else a GET.  A PUT writes a version drawn from
 * one counter of the whole run (above the start time's seconds times 2^32,
 * so above any earlier run's) with its check (kv_proto.h).
 *
 * Every answer is verified: a GET's is "VAL K VERSION.CHECK" for the key
 * asked, its check is that of (key, version) - never torn, never another
 * key's - and its version is not below any this connection has written or
 * read for the key (the server keeps the highest version, so a value that
 * goes backwards is a lost or reordered write); a PUT's is "OK".  A wrong
 * answer is said on stderr (the first 20) and counted; a connection that
 * fails (refused, closed, or no answer within 5 s) is said and ends.
 *
 * The last line on stdout:
 *   kv_load: requests=N errors=N throughput=OPS_PER_S
 * requests answered, and their rate between the start of all connections
 * and the end of the last.  Exit status 0 with no error, 1 with any, 2 on a
 * bad command line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "kv_proto.h"

#define CONNECTIONS_MAX 1024
/* how long a connect, a send or an answer may take */
#define SOCKET_TIMEOUT_S 5
/* wrong answers said on stderr; the rest only counted */
#define ERRORS_SHOWN 20

static const char usage_text[] =
	"usage: kv_load --port N [--host ADDR] [--connections N]\n"
	"               [--duration SECONDS | --requests N] [--write-share P]\n"
	"               [--keys N] [--seed N]\n";

static const char help_text[] =
	"The load generator of kv_server: drives it and verifies every answer.\n"
	"  --port N           the server's TCP port\n"
	"  --host ADDR        the server's host name or address (default 127.0.0.1)\n"
	"  --connections N    threads, one connection each (default 4)\n"
	"  --duration SECONDS how long to run (default 1)\n"
	"  --requests N       or: this many requests in all, then stop\n"
	"  --write-share P    share of PUTs, a fraction (1/100) or decimal (default 0.01)\n"
	"  --keys N           keys to use, at most the server's --keys (default 10000)\n"
	"  --seed N           seed of the threads' random keys and mix (default 1)\n"
	"Prints 'kv_load: requests=N errors=N throughput=OPS_PER_S'; exit 0 if no\n"
	"error, 1 on a wrong answer or a failed connection.\n";

struct options {
	const char *host;
	const char *port;
	unsigned connections;
	double duration;   /* seconds; 0 with --requests */
	uint64_t requests; /* 0: run for --duration */
	double write_share;
	unsigned keys;
	uint64_t seed;
};

/* What the connections share. */
struct run {
	const struct options *opt;
	struct addrinfo *server;
	uint64_t version_base;
	atomic_uint_fast64_t versions; /* handed out so far */
	atomic_bool stop;
	atomic_uint errors_said;
	pthread_barrier_t start;
	/* the threads still sending, for main to wait on */
	pthread_mutex_t done_lock;
	pthread_cond_t done;
	unsigned running;
};

/* One connection and its thread. */
struct client {
	alignas(64) pthread_t thread;
	struct run *run;
	unsigned index;
	int fd;
	uint64_t rng;
	bool bounded;	/* do QUOTA requests, not until stop */
	uint64_t quota;
	uint64_t requests; /* answered */
	uint64_t errors;   /* wrong answers, and a failure */
	uint64_t *seen;	   /* per key, the highest version this connection knows of */
	size_t in_len;	   /* received bytes in IN */
	size_t line_len;   /* of them, the line last returned, newline included */
	char in[KV_LINE_MAX];
};

/* ---- reporting ---- */

static void say_error(struct client *c, const char *fmt, va_list ap)
{
	unsigned said = atomic_fetch_add(&c->run->errors_said, 1);
	char msg[512];

	if (said > ERRORS_SHOWN)
		return;
	if (said == ERRORS_SHOWN) {
		fprintf(stderr, "kv_load: more errors, not shown\n");
		return;
	}
	vsnprintf(msg, sizeof msg, fmt, ap);
	fprintf(stderr, "kv_load: connection %u: %s\n", c->index, msg);
}

/* A wrong answer: said and counted; the connection goes on. */
static void wrong_answer(struct client *c, const char *fmt, ...)
{
	va_list ap;

	c->errors++;
	va_start(ap, fmt);
	say_error(c, fmt, ap);
	va_end(ap);
}

/* A failed connection: said and counted; the caller ends it. */
static bool connection_failed(struct client *c, const char *fmt, ...)
{
	va_list ap;

	c->errors++;
	va_start(ap, fmt);
	say_error(c, fmt, ap);
	va_end(ap);
	return false;
}

/* ---- the connection ---- */

static void set_timeouts(int fd)
{
	struct timeval tv = {.tv_sec = SOCKET_TIMEOUT_S};
	int one = 1;

	/* on Linux SO_SNDTIMEO bounds connect() too */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Connects to the first address of the server's that answers. */
static bool connect_client(struct client *c)
{
	const struct options *opt = c->run->opt;
	int err = 0;

	for (struct addrinfo *a = c->run->server; a != NULL; a = a->ai_next) {
		c->fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (c->fd < 0) {
			err = errno;
			continue;
		}
		set_timeouts(c->fd);
		if (connect(c->fd, a->ai_addr, a->ai_addrlen) == 0)
			return true;
		err = errno == EINPROGRESS ? ETIMEDOUT : errno;
		close(c->fd);
		c->fd = -1;
	}
	return connection_failed(c, "cannot connect to %s port %s: %s", opt->host, opt->port,
				 strerror(err));
}

static bool send_line(struct client *c, const char *line, size_t len)
{
	size_t sent = 0;

	while (sent < len) {
		ssize_t n = send(c->fd, line + sent, len - sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return connection_failed(c, "could not send a request within %d s",
						 SOCKET_TIMEOUT_S);
		if (n <= 0)
			return connection_failed(c, "send: %s", strerror(errno));
		sent += (size_t)n;
	}
	return true;
}

/* The next answer line, without its newline, or NULL (said why). */
static char *receive_line(struct client *c, const char *request)
{
	memmove(c->in, c->in + c->line_len, c->in_len - c->line_len);
	c->in_len -= c->line_len;
	c->line_len = 0;
	for (;;) {
		char *nl = memchr(c->in, '\n', c->in_len);
		if (nl != NULL) {
			*nl = '\0';
			c->line_len = (size_t)(nl - c->in) + 1;
			return c->in;
		}
		if (c->in_len == sizeof c->in) {
			connection_failed(c, "%s: an answer longer than %d bytes", request,
					  KV_LINE_MAX - 1);
			return NULL;
		}
		ssize_t n = recv(c->fd, c->in + c->in_len, sizeof c->in - c->in_len, 0);
		if (n > 0) {
			c->in_len += (size_t)n;
		} else if (n == 0) {
			connection_failed(c, "%s: the server closed the connection", request);
			return NULL;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			connection_failed(c, "%s: no answer within %d s", request,
					  SOCKET_TIMEOUT_S);
			return NULL;
		} else if (errno != EINTR) {
			connection_failed(c, "%s: recv: %s", request, strerror(errno));
			return NULL;
		}
	}
}

/* ---- requests ---- */

/* xorshift64*: the thread's keys and mix */
static uint64_t next_random(struct client *c)
{
	c->rng ^= c->rng >> 12;
	c->rng ^= c->rng << 25;
	c->rng ^= c->rng >> 27;
	return c->rng * UINT64_C(0x2545f4914f6cdd1d);
}

static void saw_version(struct client *c, unsigned key, uint64_t version)
{
	if (version > c->seen[key])
		c->seen[key] = version;
}

/* Is LINE a right answer to GET KEY?  Says why not. */
static void verify_get(struct client *c, unsigned key, const char *line)
{
	uint64_t k, version, check;
	const char *p = strncmp(line, "VAL ", 4) == 0 ? kv_parse_u64(line + 4, &k) : NULL;

	if (p == NULL || *p != ' ' || (p = kv_parse_value(p + 1, &version, &check)) == NULL ||
	    *p != '\0')
		wrong_answer(c, "GET %u: malformed answer '%s'", key, line);
	else if (k != key)
		wrong_answer(c, "GET %u: the answer is key %" PRIu64 "'s: '%s'", key, k, line);
	else if (check != kv_check(key, version))
		wrong_answer(c,
			     "GET %u: '%s' is no value written for key %u (torn, or another key's): "
			     "its check would be %016" PRIx64,
			     key, line, key, kv_check(key, version));
	else if (version < c->seen[key])
		wrong_answer(c,
			     "GET %u: version %" PRIu64 " went backwards (this connection knew %" PRIu64
			     ")",
			     key, version, c->seen[key]);
	else
		saw_version(c, key, version);
}

static bool do_get(struct client *c, unsigned key)
{
	char request[64];
	int len = snprintf(request, sizeof request, "GET %u\n", key);
	const char *line;

	if (!send_line(c, request, (size_t)len))
		return false;
	request[len - 1] = '\0';
	if ((line = receive_line(c, request)) == NULL)
		return false;
	verify_get(c, key, line);
	return true;
}

static bool do_put(struct client *c, unsigned key)
{
	struct run *r = c->run;
	uint64_t version = r->version_base + 1 +
			   atomic_fetch_add_explicit(&r->versions, 1, memory_order_relaxed);
	char request[96];
	int len = snprintf(request, sizeof request, "PUT %u " KV_VALUE_FORMAT "\n", key, version,
			   kv_check(key, version));
	const char *line;

	if (!send_line(c, request, (size_t)len))
		return false;
	request[len - 1] = '\0';
	if ((line = receive_line(c, request)) == NULL)
		return false;
	if (strcmp(line, "OK") != 0)
		wrong_answer(c, "%s: answer '%s', not 'OK'", request, line);
	else
		saw_version(c, key, version); /* the server now holds it or a higher one */
	return true;
}

/* One request, answered and verified; false if the connection failed. */
static bool one_request(struct client *c)
{
	const struct options *opt = c->run->opt;
	unsigned key = (unsigned)(next_random(c) % opt->keys);
	bool write = (double)(next_random(c) >> 11) * 0x1p-53 < opt->write_share;
	bool ok = write ? do_put(c, key) : do_get(c, key);

	if (ok)
		c->requests++;
	return ok;
}

static bool more_requests(struct client *c)
{
	if (c->bounded)
		return c->requests < c->quota;
	return !atomic_load_explicit(&c->run->stop, memory_order_relaxed);
}

static void thread_done(struct run *r)
{
	pthread_mutex_lock(&r->done_lock);
	r->running--;
	pthread_cond_signal(&r->done);
	pthread_mutex_unlock(&r->done_lock);
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	bool connected = connect_client(c);

	pthread_barrier_wait(&c->run->start);
	while (connected && more_requests(c) && one_request(c)) {
	}
	if (c->fd >= 0)
		close(c->fd);
	thread_done(c->run);
	return NULL;
}

/* ---- command line ---- */

static _Noreturn void usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "kv_load: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	exit(2);
}

static uint64_t parse_count(const char *name, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;
	const char *end = kv_parse_u64(arg, &v);

	if (end == NULL || *end != '\0' || v < min || v > max) {
		fprintf(stderr,
			"kv_load: %s wants a whole number from %" PRIu64 " to %" PRIu64
			", not '%s'\n",
			name, min, max, arg);
		fprintf(stderr, "%s", usage_text);
		exit(2);
	}
	return v;
}

/* A number ending at the end of S, into *OUT. */
static bool parse_real(const char *s, double *out)
{
	char *end;

	if (*s == '\0' || *s == ' ' || *s == '+' || *s == '-')
		return false;
	errno = 0;
	*out = strtod(s, &end);
	return errno == 0 && *end == '\0';
}

/* --write-share: "A/B" or a decimal, from 0 to 1 */
static double parse_share(const char *arg)
{
	const char *slash = strchr(arg, '/');
	double num = 0, den = 1;
	bool ok;

	if (slash != NULL) {
		char *head = strndup(arg, (size_t)(slash - arg));
		ok = head != NULL && parse_real(head, &num) && parse_real(slash + 1, &den) &&
		     den > 0;
		free(head);
	} else {
		ok = parse_real(arg, &num);
	}
	if (!ok || !(num / den >= 0 && num / den <= 1))
		usage_error("--write-share wants a fraction like 1/100 or a decimal from 0 to 1, "
			    "not '%s'",
			    arg);
	return num / den;
}

static double parse_duration(const char *arg)
{
	double d;

	if (!parse_real(arg, &d) || !(d > 0 && d <= 1e6))
		usage_error("--duration wants seconds above 0 (at most 1e6), not '%s'", arg);
	return d;
}

static void parse_options(int argc, char **argv, struct options *opt)
{
	static const struct option longopts[] = {
		{"port", required_argument, NULL, 'p'},
		{"host", required_argument, NULL, 'H'},
		{"connections", required_argument, NULL, 'c'},
		{"duration", required_argument, NULL, 'd'},
		{"requests", required_argument, NULL, 'n'},
		{"write-share", required_argument, NULL, 'w'},
		{"keys", required_argument, NULL, 'k'},
		{"seed", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool duration_given = false;
	int c;

	*opt = (struct options){.host = "127.0.0.1", .connections = 4, .duration = 1,
				.write_share = 0.01, .keys = 10000, .seed = 1};
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': parse_count("--port", optarg, 1, 65535); opt->port = optarg; break;
		case 'H': opt->host = optarg; break;
		case 'c':
			opt->connections =
				(unsigned)parse_count("--connections", optarg, 1, CONNECTIONS_MAX);
			break;
		case 'd': opt->duration = parse_duration(optarg); duration_given = true; break;
		case 'n': opt->requests = parse_count("--requests", optarg, 1, UINT64_MAX); break;
		case 'w': opt->write_share = parse_share(optarg); break;
		case 'k':
			opt->keys = (unsigned)parse_count("--keys", optarg, 1, KV_KEYS_MAX);
			break;
		case 's': opt->seed = parse_count("--seed", optarg, 0, UINT64_MAX); break;
		case 'h': printf("%s%s", usage_text, help_text); exit(0);
		case ':': usage_error("option %s needs a value", argv[optind - 1]); break;
		default: usage_error("unknown option %s", argv[optind - 1]); break;
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (opt->port == NULL)
		usage_error("%s", "--port is required");
	if (duration_given && opt->requests > 0)
		usage_error("%s", "--duration and --requests exclude each other");
}

/* ---- main ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct addrinfo *resolve(const struct options *opt)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
	struct addrinfo *res;
	int err = getaddrinfo(opt->host, opt->port, &hints, &res);

	if (err != 0) {
		fprintf(stderr, "kv_load: cannot resolve %s: %s\n", opt->host, gai_strerror(err));
		printf("kv_load: requests=0 errors=1 throughput=0\n");
		exit(1);
	}
	return res;
}

static struct client *make_clients(struct run *r)
{
	const struct options *opt = r->opt;
	struct client *clients =
		aligned_alloc(alignof(struct client), sizeof(struct client) * opt->connections);

	if (clients == NULL) {
		fprintf(stderr, "kv_load: out of memory\n");
		exit(1);
	}
	for (unsigned i = 0; i < opt->connections; i++) {
		struct client *c = &clients[i];
		memset(c, 0, sizeof *c);
		c->run = r;
		c->index = i;
		c->fd = -1;
		c->rng = kv_mix64(opt->seed * 1024 + i + 1) | 1;
		c->bounded = opt->requests > 0;
		c->quota = opt->requests / opt->connections +
			   (i < opt->requests % opt->connections);
		c->seen = calloc(opt->keys, sizeof *c->seen);
		if (c->seen == NULL) {
			fprintf(stderr, "kv_load: out of memory for %u keys\n", opt->keys);
			exit(1);
		}
	}
	return clients;
}

/* Waits until every thread is done, or --duration is over. */
static void wait_for_clients(struct run *r)
{
	struct timespec deadline;
	double d = r->opt->requests > 0 ? 1e9 : r->opt->duration;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += (time_t)d;
	deadline.tv_nsec += (long)((d - (double)(time_t)d) * 1e9);
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->done_lock);
	while (r->running > 0 &&
	       pthread_cond_timedwait(&r->done, &r->done_lock, &deadline) != ETIMEDOUT) {
	}
	pthread_mutex_unlock(&r->done_lock);
	atomic_store(&r->stop, true);
}

int main(int argc, char **argv)
{
	static struct options opt;
	static struct run r;
	struct client *clients;
	uint64_t requests = 0, errors = 0;
	double start, elapsed;

	parse_options(argc, argv, &opt);
	r.opt = &opt;
	r.server = resolve(&opt);
	r.version_base = (uint64_t)time(NULL) << 32;
	r.running = opt.connections;
	pthread_mutex_init(&r.done_lock, NULL);
	pthread_cond_init(&r.done, NULL);
	pthread_barrier_init(&r.start, NULL, opt.connections + 1);
	clients = make_clients(&r);
	for (unsigned i = 0; i < opt.connections; i++) {
		int err = pthread_create(&clients[i].thread, NULL, client_main, &clients[i]);
		if (err != 0) {
			fprintf(stderr, "kv_load: pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
	pthread_barrier_wait(&r.start);
	start = now_s();
	wait_for_clients(&r);
	for (unsigned i = 0; i < opt.connections; i++) {
		pthread_join(clients[i].thread, NULL);
		requests += clients[i].requests;
		errors += clients[i].errors;
		free(clients[i].seen);
	}
	elapsed = now_s() - start;
	printf("kv_load: requests=%" PRIu64 " errors=%" PRIu64 " throughput=%.1f\n", requests,
	       errors,
	       elapsed > 0 ? (double)requests / elapsed : 0.0);
	freeaddrinfo(r.server);
	free(clients);
	return errors == 0 ? 0 : 1;
}
