/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * oprand.c - randomized operation-sequence tester for pthread rwlocks.
 *
 * An ordinary pthread program (it knows nothing of libbravo), run under
 * LD_PRELOAD of each variant and without preload.  Several threads each run
 * a seeded random sequence of rwlock calls on a small set of locks (default
 * kind, static initializer, writer-preferring kind, process-shared), misuse
 * included, and check every return value against a reference model.  The
 * first divergence is printed (seed, thread, step, call, model state,
 * expected, got) and the program exits 1.
 *
 * The model.  Per lock and thread: how the thread holds the lock (nothing,
 * read with a count, write) and whether it is inside a blocking call on it
 * (waiting to read or write).  One mutex, model_mu, guards it all.
 * Invariants that make the checks exact without timing:
 *
 *   - A thread records a hold after its acquisition returned and erases it
 *     before it calls unlock, under model_mu; so a recorded hold is a real
 *     one, and a recorded holder cannot release while we hold model_mu.
 *   - A call that cannot block for long (try-locks, unlock, destroy, init,
 *     timed calls with short deadlines) runs *inline*: under model_mu.
 *     Nothing about the lock can change during it except through threads
 *     recorded as waiting.  So: a lock nobody else holds or waits for must
 *     be granted; a lock a recorded writer holds cannot be read-locked, and
 *     a timed call on it must time out.
 *   - A call that may block runs outside model_mu with the thread recorded
 *     as waiting; its result is checked against what the caller's own state
 *     allows (0 or ETIMEDOUT, EDEADLK, ...), and a success is then checked
 *     against the recorded holders (a writer must find none, a reader no
 *     writer).
 *   - Untimed rdlock/wrlock are issued only by a thread that holds nothing;
 *     any other wait is timed.  So a wait for a thread that waits for us
 *     always ends: the tester cannot deadlock on a correct lock, and a hang
 *     (no step completed for --hang seconds) is reported as a failure.
 *
 * Besides, per lock, atomic counts of threads inside the critical section
 * (incremented right after an acquisition returns, decremented right
 * before unlock) check writer-xor-readers at every acquisition.
 *
 * Models: "libbravo" is libbravo's default mode: glibc 2.36's results
 * (destroy returns 0 and changes nothing, calls on a destroyed lock work,
 * an unlock by a thread that holds nothing returns 0 and releases one read
 * hold on another reader's behalf when there is one, a timed call with a
 * bad deadline is EINVAL first) plus what libbravo adds (EDEADLK for
 * read-then-write, read re-entry that never waits); process-shared locks
 * are glibc's own.  Under BRAVO-pthread (its object's name) the default
 * mode's reads are glibc's lock's (doc/compatibility.md): a reader's own
 * write and re-entry get glibc's results there as well (cfg.glibc_reads:
 * a write times out, a re-entry may wait behind a waiting writer).  "strict" is BRAVO_CHECK=1: EPERM for an unlock by a
 * thread that holds nothing (nothing released), EBUSY from destroy of a held
 * lock, EINVAL on a destroyed lock.  "posix" only issues calls whose result
 * POSIX or glibc defines, for the run without preload.  The default picks by
 * where pthread_rwlock_rdlock comes from (and BRAVO_CHECK=1 in the
 * environment: strict).  --mutant=NAME makes the model deliberately wrong,
 * to show that a divergence is caught.
 *
 * An unlock by a non-holder that releases another reader's hold (default
 * model) leaves a *phantom*: a reader the model still records but whose
 * hold the lock no longer counts.  The model keeps their number per lock
 * (phantom <= recorded readers; the lock counts recorded readers minus
 * phantoms) and, while there are any, lets the recorded readers only
 * unlock and nobody take the lock for writing (which one is the phantom is
 * the library's choice, so a re-entry or a writer's result is not exact).
 *
 * Built with -DOPRAND_FUZZER it is a libFuzzer target instead (make fuzz):
 * one thread, every choice taken from the input bytes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/test_util.h"

#define MAX_THREADS 8
#define MAX_LOCKS 4
#define HISTORY 8

/* ---- operations ---- */

enum op {
	OP_TRYRD, OP_TRYWR, OP_RD, OP_WR, OP_TIMEDRD, OP_TIMEDWR,
	OP_CLOCKRD, OP_CLOCKWR, OP_UNLOCK, OP_DESTROY, OP_INIT, OP_NULL,
	OP_COUNT
};

static const char *const op_names[OP_COUNT] = {
	"tryrdlock", "trywrlock", "rdlock", "wrlock", "timedrdlock", "timedwrlock",
	"clockrdlock", "clockwrlock", "unlock", "destroy", "init", "null-lock",
};

/* Deadlines of timed calls. */
enum when { W_NONE, W_PAST, W_NEAR, W_EPOCH, W_NEGATIVE, W_BAD_NSEC, W_BAD_CLOCK };

static const char *const when_names[] = {
	"", "past", "near", "epoch", "negative-tv_sec", "bad-tv_nsec", "bad-clock",
};

static bool is_read(enum op o)
{
	return o == OP_TRYRD || o == OP_RD || o == OP_TIMEDRD || o == OP_CLOCKRD;
}

static bool is_write(enum op o)
{
	return o == OP_TRYWR || o == OP_WR || o == OP_TIMEDWR || o == OP_CLOCKWR;
}

static bool is_try(enum op o)
{
	return o == OP_TRYRD || o == OP_TRYWR;
}

static bool is_timed(enum op o)
{
	return o == OP_TIMEDRD || o == OP_TIMEDWR || o == OP_CLOCKRD || o == OP_CLOCKWR;
}

/* One concrete call. */
struct call {
	enum op op;
	enum op null_of;     /* OP_NULL: the call made with a NULL lock */
	int lock;
	enum when when;
	clockid_t clock;
	long near_ns;        /* W_NEAR: how far ahead */
	bool inline_;        /* under model_mu */
};

/* ---- result sets ---- */

enum { RES_OK, RES_EBUSY, RES_EDEADLK, RES_EINVAL, RES_ETIMEDOUT, RES_EPERM, RES_EAGAIN, RES_COUNT };
static const int r_codes[RES_COUNT] = { 0, EBUSY, EDEADLK, EINVAL, ETIMEDOUT, EPERM, EAGAIN };
static const char *const r_names[RES_COUNT] = {
	"0", "EBUSY", "EDEADLK", "EINVAL", "ETIMEDOUT", "EPERM", "EAGAIN",
};
#define S(r) (1u << (r))

static int r_index(int code)
{
	for (int i = 0; i < RES_COUNT; i++)
		if (r_codes[i] == code)
			return i;
	return -1;
}

static void set_str(unsigned set, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < RES_COUNT; i++)
		if (set & S(i))
			used += (size_t)snprintf(buf + used, n - used, "%s%s",
						 used ? " or " : "", r_names[i]);
}

static const char *code_str(int code, char *buf, size_t n)
{
	int i = r_index(code);

	if (i >= 0)
		return r_names[i];
	snprintf(buf, n, "%d (%s)", code, strerror(code));
	return buf;
}

/* ---- configuration ---- */

enum model_kind { MODEL_LIBBRAVO, MODEL_STRICT, MODEL_POSIX };

static const char *const model_names[] = { "libbravo", "strict", "posix" };

static struct {
	uint64_t seed;
	unsigned steps;
	unsigned threads;
	unsigned locks;
	unsigned hang_s;
	enum model_kind model;
	const char *mutant;
	bool destroy_waited;   /* default model: destroy while threads wait */
	bool glibc_reads;      /* default model: a reader's own calls are glibc's (BRAVO-pthread) */
} cfg = { 1, 2000, 3, 4, 20, MODEL_LIBBRAVO, NULL, false, false };

/* Mutant models: each is wrong in one place and must be caught. */
static bool mutant(const char *name)
{
	return cfg.mutant && strcmp(cfg.mutant, name) == 0;
}

static const char *const mutant_names[] = {
	"free-trywrlock-busy",   /* trywrlock of a free lock: expects EBUSY */
	"readers-exclude",       /* a reader excludes other readers */
	"unlock-unheld-eperm",   /* unlock by a non-holder: expects EPERM (libbravo model) */
	"unlock-unheld-ok",      /* unlock by a non-holder: expects 0 (strict model) */
	NULL,
};

/* ---- the locks and the model ---- */

enum lock_kind { K_DEFAULT, K_STATIC, K_WRITER_PREF, K_PSHARED };
static const char *const kind_names[] = { "default", "static-initializer", "writer-preferring",
					  "process-shared" };

static pthread_rwlock_t locks[MAX_LOCKS];

enum hold { H_NONE, H_READ, H_WRITE };

struct lock_model {
	enum hold hold[MAX_THREADS];
	unsigned reads[MAX_THREADS];   /* read count when H_READ */
	unsigned waiting_r, waiting_w; /* threads inside a blocking call */
	unsigned phantom;              /* recorded read holds the lock no longer counts */
	bool destroyed;                /* strict: EINVAL; else: destroyed while idle */
};

static pthread_mutex_t model_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lock_model model[MAX_LOCKS];

/* Threads inside the critical section, per lock (checked invariant). */
static atomic_int cs_readers[MAX_LOCKS], cs_writers[MAX_LOCKS];

static atomic_ulong progress;           /* steps done, all threads */
static atomic_ulong result_counts[RES_COUNT];
static unsigned long released_for_others;   /* default model: phantoms made (under model_mu) */

struct thread_state {
	unsigned idx;
	uint64_t rng;
	unsigned step;
	struct call hist[HISTORY];
	int hist_res[HISTORY];
	unsigned nhist;
	_Atomic(int) cur_op;   /* for the hang report */
	_Atomic(int) cur_lock;
	atomic_uint cur_step;
};

static struct thread_state tstate[MAX_THREADS];

/* The last calls of all threads, in the order they were checked (under model_mu). */
#define GLOBAL_HISTORY 24
static struct {
	unsigned thread, step;
	struct call call;
	int res;
} ghist[GLOBAL_HISTORY];
static unsigned long nghist;

static enum lock_kind kind_of(int lock)
{
	return (enum lock_kind)lock;
}

static int init_lock(int i)
{
	pthread_rwlockattr_t a;
	int r;

	if (kind_of(i) == K_DEFAULT || kind_of(i) == K_STATIC)
		return pthread_rwlock_init(&locks[i], NULL);
	pthread_rwlockattr_init(&a);
	if (kind_of(i) == K_WRITER_PREF)
		pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	else
		pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	r = pthread_rwlock_init(&locks[i], &a);
	pthread_rwlockattr_destroy(&a);
	return r;
}

/* ---- random numbers (splitmix64: any seed is fine) ---- */

static __attribute__((unused)) uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#ifdef OPRAND_FUZZER
/* Under libFuzzer every choice comes from the input bytes instead. */
static const uint8_t *fuzz_in;
static size_t fuzz_left;

static unsigned rnd_below(uint64_t *s, unsigned n)
{
	uint32_t v = 0;

	(void)s;
	for (unsigned i = 0; i < (n > 256 ? 4u : 1u) && fuzz_left; i++, fuzz_left--)
		v = v << 8 | *fuzz_in++;
	return v % n;
}
#else
static unsigned rnd_below(uint64_t *s, unsigned n)
{
	return (unsigned)(rnd(s) % n);
}
#endif

/* ---- reporting ---- */

static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;

static void call_str(const struct call *c, char *buf, size_t n)
{
	enum op o = c->op == OP_NULL ? c->null_of : c->op;

	if (c->op == OP_NULL) {
		snprintf(buf, n, "%s(NULL)", op_names[o]);
		return;
	}
	snprintf(buf, n, "%s(L%d %s%s%s%s)%s", op_names[o], c->lock, kind_names[kind_of(c->lock)],
		 c->when ? ", deadline " : "", c->when ? when_names[c->when] : "",
		 c->when && c->clock == CLOCK_MONOTONIC ? " on CLOCK_MONOTONIC" : "",
		 c->inline_ ? " [inline]" : " [waiting]");
}

static void model_str(int lock, unsigned self, char *buf, size_t n)
{
	const struct lock_model *m = &model[lock];
	size_t used;

	used = (size_t)snprintf(buf, n, "L%d%s:", lock, m->destroyed ? " destroyed" : "");
	for (unsigned t = 0; t < cfg.threads; t++) {
		const char *h = m->hold[t] == H_READ ? "read" : m->hold[t] == H_WRITE ? "write" : "none";

		if (m->hold[t] == H_READ)
			used += (size_t)snprintf(buf + used, n - used, " T%u%s=read x%u", t,
						 t == self ? "(self)" : "", m->reads[t]);
		else
			used += (size_t)snprintf(buf + used, n - used, " T%u%s=%s", t,
						 t == self ? "(self)" : "", h);
	}
	snprintf(buf + used, n - used, "; waiting readers=%u writers=%u; phantom read holds=%u",
		 m->waiting_r, m->waiting_w, m->phantom);
}

static void print_history(const struct thread_state *ts)
{
	char cs[160], eb[48];
	unsigned first = ts->nhist > HISTORY ? ts->nhist - HISTORY : 0;

	for (unsigned i = first; i < ts->nhist; i++) {
		call_str(&ts->hist[i % HISTORY], cs, sizeof(cs));
		fprintf(stderr, "    step %u: %s -> %s\n", i, cs,
			code_str(ts->hist_res[i % HISTORY], eb, sizeof(eb)));
	}
}

/*
 * The first divergence: print it and exit 1 (the other threads are not
 * stopped first; report_mu keeps a second report from interleaving).
 * Called with model_mu held or not; the model snapshot may be stale then.
 */
__attribute__((format(printf, 4, 5)))
static _Noreturn void diverge(const struct thread_state *ts, const struct call *c, int lockmodel,
			      const char *fmt, ...)
{
	char cs[160], ms[400];
	va_list ap;

	pthread_mutex_lock(&report_mu);
	call_str(c, cs, sizeof(cs));
#ifdef OPRAND_FUZZER
	fprintf(stderr, "oprand: DIVERGENCE fuzz input step=%u op=%s\n", ts->step, cs);
#else
	fprintf(stderr, "oprand: DIVERGENCE seed=%" PRIu64 " thread=%u step=%u op=%s\n",
		cfg.seed, ts->idx, ts->step, cs);
#endif
	fputs("  ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (lockmodel >= 0) {
		model_str(lockmodel, ts->idx, ms, sizeof(ms));
		fprintf(stderr, "  model: %s\n", ms);
	}
	fprintf(stderr, "  this thread's previous calls:\n");
	print_history(ts);
	fprintf(stderr, "  all threads' last checked calls (oldest first; may be stale):\n");
	for (unsigned long i = nghist > GLOBAL_HISTORY ? nghist - GLOBAL_HISTORY : 0; i < nghist; i++) {
		char eb[48];

		call_str(&ghist[i % GLOBAL_HISTORY].call, cs, sizeof(cs));
		fprintf(stderr, "    T%u step %u: %s -> %s\n", ghist[i % GLOBAL_HISTORY].thread,
			ghist[i % GLOBAL_HISTORY].step, cs,
			code_str(ghist[i % GLOBAL_HISTORY].res, eb, sizeof(eb)));
	}
#ifdef OPRAND_FUZZER
	fprintf(stderr, "  reproduce: oprand-fuzz CRASH-FILE (the input libFuzzer saves now)%s%s\n",
		cfg.mutant ? ", with OPRAND_MUTANT=" : "", cfg.mutant ? cfg.mutant : "");
	fflush(stderr);
	abort();   /* libFuzzer saves the input that led here */
#endif
	fprintf(stderr, "  reproduce: %soprand --seed %" PRIu64 " --threads %u --steps %u --locks %u%s%s%s%s%s\n",
		cfg.model == MODEL_STRICT ? "BRAVO_CHECK=1 " : "",
		cfg.seed, cfg.threads, cfg.steps, cfg.locks,
		cfg.model != MODEL_LIBBRAVO ? " --model " : "",
		cfg.model != MODEL_LIBBRAVO ? model_names[cfg.model] : "",
		cfg.mutant ? " --mutant " : "", cfg.mutant ? cfg.mutant : "",
		cfg.destroy_waited ? " --destroy-waited" : "");
	fflush(stderr);
	_exit(1);
}

/* ---- the model's expectations ---- */

/* What other threads do with a lock, from the model (under model_mu). */
struct others {
	unsigned readers;   /* threads holding for reading */
	bool writer;        /* a thread holding for writing */
	unsigned waiting_r, waiting_w;
};

static struct others others_of(int lock, unsigned self)
{
	const struct lock_model *m = &model[lock];
	struct others o = { 0, false, m->waiting_r, m->waiting_w };

	for (unsigned t = 0; t < cfg.threads; t++) {
		if (t == self)
			continue;
		if (m->hold[t] == H_READ)
			o.readers++;
		else if (m->hold[t] == H_WRITE)
			o.writer = true;
	}
	return o;
}

/*
 * Whether the lock can be had at once, from an inline call's view:
 * +1 certainly (and nothing can change that during the call), -1 certainly
 * not (a recorded holder excludes us and cannot release meanwhile), 0 the
 * model cannot tell (threads waiting on the lock may take it at any time).
 */
static int availability(bool write, const struct others *o)
{
	if (o->writer)
		return -1;
	if (write && o->readers)
		return -1;
	if (!write && o->readers && mutant("readers-exclude"))
		return -1;
	if (o->waiting_w)
		return 0;
	if (write && o->waiting_r)
		return 0;
	return 1;
}

/* The results an acquisition by a thread that does not hold the lock may have. */
static unsigned acquire_free(const struct call *c, const struct others *o)
{
	bool write = is_write(c->op);
	int avail = c->inline_ ? availability(write, o) : 0;
	bool posix = cfg.model == MODEL_POSIX;

	if (is_try(c->op)) {
		if (avail > 0)
			return write && mutant("free-trywrlock-busy") ? S(RES_EBUSY) : S(RES_OK);
		return avail < 0 ? S(RES_EBUSY) : S(RES_OK) | S(RES_EBUSY);
	}
	if (!is_timed(c->op))
		return S(RES_OK);   /* untimed: waits as long as it takes */
	if (c->when == W_BAD_NSEC) {
		/* POSIX: checked only when the lock is busy; glibc checks first. */
		if (!posix)
			return S(RES_EINVAL);
		if (avail > 0)
			return S(RES_OK) | S(RES_EINVAL);
		return avail < 0 ? S(RES_EINVAL) : S(RES_OK) | S(RES_EINVAL);
	}
	/* POSIX: never a timeout when the lock can be had at once. */
	if (avail > 0)
		return S(RES_OK);
	return avail < 0 ? S(RES_ETIMEDOUT) : S(RES_OK) | S(RES_ETIMEDOUT);
}

/* The results the call may have; lock model under model_mu for inline calls. */
static unsigned expected(const struct call *c, unsigned self)
{
	bool posix = cfg.model == MODEL_POSIX, strict = cfg.model == MODEL_STRICT;
	bool pshared;
	const struct lock_model *m;
	struct others o;
	enum hold h;

	if (c->op == OP_NULL)
		return S(RES_EINVAL);
	m = &model[c->lock];
	pshared = kind_of(c->lock) == K_PSHARED;
	/* libbravo (and glibc 2.36): a bad deadline is EINVAL before anything else. */
	if (is_timed(c->op) && (c->when == W_BAD_CLOCK || (!posix && c->when == W_BAD_NSEC)))
		return S(RES_EINVAL);
	if (strict && m->destroyed) {
		/* Strict: any call on a destroyed lock is EINVAL (nobody held
		 * it when it was destroyed, so an unlock is one too). */
		if (c->op == OP_INIT)
			return S(RES_OK);
		return S(RES_EINVAL);
	}
	h = m->hold[self];
	o = others_of(c->lock, self);
	switch (c->op) {
	case OP_UNLOCK:
		if (h != H_NONE)
			return S(RES_OK);
		if (strict && !pshared)
			return mutant("unlock-unheld-ok") ? S(RES_OK) : S(RES_EPERM);
		/* Default mode (and glibc for a process-shared lock, issued
		 * only when others read it): 0, one read hold released on
		 * another reader's behalf if there is one, else nothing. */
		return mutant("unlock-unheld-eperm") ? S(RES_EPERM) : S(RES_OK);
	case OP_DESTROY:
		/* Strict: EBUSY while held (issued only when nobody waits);
		 * default and process-shared: glibc's, 0 and nothing changes. */
		if (strict && !pshared && (h != H_NONE || o.readers || o.writer))
			return S(RES_EBUSY);
		return S(RES_OK);
	case OP_INIT:
		return S(RES_OK);
	default:
		break;
	}
	if (h == H_WRITE) {
		unsigned e = is_try(c->op) ? S(RES_EBUSY) : S(RES_EDEADLK);

		if (posix && is_timed(c->op) && c->when == W_BAD_NSEC)
			e |= S(RES_EINVAL);   /* glibc checks the deadline first */
		return e;
	}
	if (h == H_READ && is_write(c->op)) {
		unsigned e;

		if (is_try(c->op))
			return S(RES_EBUSY);
		if (!posix && !pshared && !cfg.glibc_reads)
			return S(RES_EDEADLK);
		/* BRAVO-pthread: glibc's lock, whose write waits (the bad deadline was EINVAL above) */
		if (!posix && !pshared)
			return S(RES_ETIMEDOUT);
		/* glibc does not detect read-then-write: a timed call times out. */
		e = S(RES_EDEADLK) | S(RES_ETIMEDOUT);
		if (c->when == W_BAD_NSEC)
			e |= S(RES_EINVAL);
		return e;
	}
	if (h == H_READ) {
		unsigned e;

		/* A read re-entry: libbravo only bumps the count (but BRAVO-pthread: glibc's). */
		if (!posix && !pshared && !cfg.glibc_reads)
			return S(RES_OK);
		/* glibc: a re-entry queues behind a waiting writer when the
		 * lock prefers writers (or may), and checks deadlines first. */
		e = S(RES_OK);
		if (o.waiting_w || !c->inline_)
			e |= is_try(c->op) ? S(RES_EBUSY) : is_timed(c->op) ? S(RES_ETIMEDOUT) : 0;
		if (is_timed(c->op) && c->when == W_BAD_NSEC)
			e |= S(RES_EINVAL);
		return e;
	}
	return acquire_free(c, &o);
}

/* ---- generating calls ---- */

static bool holds_anything(unsigned self)
{
	for (unsigned l = 0; l < cfg.locks; l++)
		if (model[l].hold[self] != H_NONE)
			return true;
	return false;
}

/* Nobody holds (phantoms included) or waits for the lock. */
static bool lock_idle(int lock)
{
	const struct lock_model *m = &model[lock];

	for (unsigned t = 0; t < cfg.threads; t++)
		if (m->hold[t] != H_NONE)
			return false;
	return !m->waiting_r && !m->waiting_w && !m->phantom;
}

/* A timespec for the call's deadline on clock (W_NONE: unused). */
static struct timespec deadline_of(const struct call *c)
{
	struct timespec t;

	switch (c->when) {
	case W_PAST:
		clock_gettime(c->clock, &t);
		t.tv_sec -= 1;
		return t;
	case W_NEAR:
		clock_gettime(c->clock, &t);
		t.tv_nsec += c->near_ns;
		while (t.tv_nsec >= 1000000000) {
			t.tv_nsec -= 1000000000;
			t.tv_sec++;
		}
		return t;
	case W_EPOCH:
		return (struct timespec){ 0, 0 };
	case W_NEGATIVE:
		return (struct timespec){ -1, 0 };
	case W_BAD_NSEC:
		clock_gettime(c->clock, &t);
		t.tv_nsec = (t.tv_sec & 1) ? 1000000000 : -1;
		return t;
	default:
		clock_gettime(c->clock, &t);
		return t;
	}
}

/*
 * Choose the next call of thread ts; under model_mu (the choice looks at
 * the model so that it never issues a call that could deadlock the tester
 * or whose result is undefined in the model in force).
 */
static struct call choose(struct thread_state *ts)
{
	static const unsigned weights[OP_COUNT] = {
		[OP_TRYRD] = 12, [OP_TRYWR] = 10, [OP_RD] = 9, [OP_WR] = 7,
		[OP_TIMEDRD] = 8, [OP_TIMEDWR] = 8, [OP_CLOCKRD] = 8, [OP_CLOCKWR] = 8,
		[OP_UNLOCK] = 10, [OP_DESTROY] = 2, [OP_INIT] = 0, [OP_NULL] = 1,
	};
	bool posix = cfg.model == MODEL_POSIX, strict = cfg.model == MODEL_STRICT;
	unsigned self = ts->idx, total = 0, pick;
	struct call c = { .op = OP_TRYRD, .clock = CLOCK_REALTIME };
	const struct lock_model *m;
	bool pshared, dead;

	c.lock = (int)rnd_below(&ts->rng, cfg.locks);
	m = &model[c.lock];
	pshared = kind_of(c.lock) == K_PSHARED;
	dead = strict && m->destroyed;   /* strict: every call is EINVAL */
	if (m->destroyed && lock_idle(c.lock) && rnd_below(&ts->rng, 3) == 0) {
		c.op = OP_INIT;
		c.inline_ = true;
		return c;
	}
	/*
	 * Release more often than acquire, so holds stay short; and while
	 * the lock has phantom read holds, a recorded reader only unlocks.
	 */
	if (m->hold[self] != H_NONE && (rnd_below(&ts->rng, 5) < 2 || m->phantom)) {
		c.op = OP_UNLOCK;
		c.inline_ = true;
		return c;
	}
	for (int i = 0; i < OP_COUNT; i++)
		total += weights[i];
	pick = rnd_below(&ts->rng, total);
	for (int i = 0; i < OP_COUNT; i++) {
		if (pick < weights[i]) {
			c.op = (enum op)i;
			break;
		}
		pick -= weights[i];
	}
	if (c.op == OP_NULL) {
		static const enum op of[] = { OP_TRYRD, OP_TRYWR, OP_RD, OP_WR, OP_TIMEDRD,
					      OP_TIMEDWR, OP_UNLOCK, OP_DESTROY };

		if (posix)   /* undefined in POSIX; glibc crashes */
			c.op = OP_TRYRD;
		else
			c.null_of = of[rnd_below(&ts->rng, sizeof(of) / sizeof(of[0]))];
	}
	if (is_timed(c.op)) {
		static const enum when ws[] = { W_PAST, W_NEAR, W_NEAR, W_NEAR, W_EPOCH,
						W_NEGATIVE, W_BAD_NSEC, W_BAD_NSEC };

		c.when = ws[rnd_below(&ts->rng, sizeof(ws) / sizeof(ws[0]))];
		if (c.op == OP_CLOCKRD || c.op == OP_CLOCKWR) {
			if (rnd_below(&ts->rng, 2))
				c.clock = CLOCK_MONOTONIC;
			if (rnd_below(&ts->rng, 10) == 0)
				c.when = W_BAD_CLOCK;
		}
	}
	/* Phantom read holds: nobody takes the lock for writing meanwhile. */
	if (m->phantom && is_write(c.op)) {
		c.op = OP_TRYRD;
		c.when = W_NONE;
	}
	/* Inline, or a blocking call outside model_mu with the thread marked waiting. */
	c.inline_ = rnd_below(&ts->rng, 2);
	if (c.op == OP_RD || c.op == OP_WR) {
		if (dead || m->hold[self] == H_WRITE) {
			c.inline_ = true;   /* EINVAL, EDEADLK at once */
		} else if (m->hold[self] == H_READ && !posix && !pshared && !cfg.glibc_reads) {
			c.inline_ = true;   /* libbravo: re-entry or EDEADLK at once */
		} else if (holds_anything(self)) {
			/* An untimed wait while holding could deadlock the tester. */
			c.op = c.op == OP_RD ? OP_CLOCKRD : OP_CLOCKWR;
			c.when = W_NEAR;
		} else {
			c.inline_ = false;
		}
	}
	c.near_ns = c.inline_ ? 20000 + (long)rnd_below(&ts->rng, 200000)
			      : 50000 + (long)rnd_below(&ts->rng, 2000000);
	/*
	 * Phantom read holds: calls on the lock run inline too (they cannot
	 * block: nobody writes), so that no read hold is taken unknown to
	 * the model while a recorded reader's unlock may release it.
	 */
	if (is_try(c.op) || c.op == OP_UNLOCK || c.op == OP_NULL || dead || m->phantom)
		c.inline_ = true;
	if (c.op == OP_UNLOCK && m->hold[self] == H_NONE && !dead) {
		if (posix || pshared)
			c.op = OP_TRYRD;   /* undefined in POSIX; glibc corrupts its lock */
		else if (!strict && (m->waiting_r || m->waiting_w))
			/* Default mode: it may release a hold a waiter has just
			 * taken, before the model knows of it. */
			c.op = OP_TRYRD;
	}
	if (c.op == OP_DESTROY) {
		struct others o = others_of(c.lock, self);
		bool held = m->hold[self] != H_NONE || o.readers || o.writer;

		/*
		 * posix: only an idle lock (else undefined); strict: never a
		 * lock a thread is inside a call on (it may just be taking or
		 * leaving it).  Default mode and process-shared locks: destroy
		 * is glibc's, 0 and the lock unchanged, held or not (waited
		 * too with --destroy-waited).
		 */
		if (posix && (m->waiting_r || m->waiting_w || held))
			c.op = OP_TRYWR;
		else if (strict && !pshared && (m->waiting_r || m->waiting_w))
			c.op = OP_TRYWR;
		else if (!cfg.destroy_waited && (m->waiting_r || m->waiting_w))
			/* see --destroy-waited */
			c.op = m->phantom ? OP_TRYRD : OP_TRYWR;
		c.inline_ = true;
	}
	return c;
}

/* ---- issuing calls ---- */

/*
 * A call with a NULL lock.  glibc declares the lock argument nonnull, so
 * the call goes through a function pointer the compiler cannot see
 * through: neither the optimizer nor UBSan's nonnull-attribute check then
 * acts on the NULL, which is what is being tested.
 */
static int issue_null(enum op o)
{
	int (*plain)(pthread_rwlock_t *) = NULL;
	int (*timed)(pthread_rwlock_t *, const struct timespec *) = NULL;
	struct timespec t = { 0, 0 };

	switch (o) {
	case OP_TRYRD: plain = pthread_rwlock_tryrdlock; break;
	case OP_TRYWR: plain = pthread_rwlock_trywrlock; break;
	case OP_RD: plain = pthread_rwlock_rdlock; break;
	case OP_WR: plain = pthread_rwlock_wrlock; break;
	case OP_UNLOCK: plain = pthread_rwlock_unlock; break;
	case OP_DESTROY: plain = pthread_rwlock_destroy; break;
	case OP_TIMEDRD: timed = pthread_rwlock_timedrdlock; break;
	case OP_TIMEDWR: timed = pthread_rwlock_timedwrlock; break;
	default: abort();
	}
	__asm__("" : "+r"(plain), "+r"(timed));
	return plain ? plain(NULL) : timed(NULL, &t);
}

static int issue(const struct call *c)
{
	pthread_rwlock_t *rw = &locks[c->lock];
	enum op o = c->op;
	struct timespec t;

	if (o == OP_NULL)
		return issue_null(c->null_of);
	if (is_timed(o))
		t = deadline_of(c);
	switch (o) {
	case OP_TRYRD: return pthread_rwlock_tryrdlock(rw);
	case OP_TRYWR: return pthread_rwlock_trywrlock(rw);
	case OP_RD: return pthread_rwlock_rdlock(rw);
	case OP_WR: return pthread_rwlock_wrlock(rw);
	case OP_TIMEDRD: return pthread_rwlock_timedrdlock(rw, &t);
	case OP_TIMEDWR: return pthread_rwlock_timedwrlock(rw, &t);
	case OP_CLOCKRD:
		return pthread_rwlock_clockrdlock(rw, c->when == W_BAD_CLOCK ? CLOCK_PROCESS_CPUTIME_ID
									      : c->clock, &t);
	case OP_CLOCKWR:
		return pthread_rwlock_clockwrlock(rw, c->when == W_BAD_CLOCK ? CLOCK_PROCESS_CPUTIME_ID
									      : c->clock, &t);
	case OP_UNLOCK: return pthread_rwlock_unlock(rw);
	case OP_DESTROY: return pthread_rwlock_destroy(rw);
	case OP_INIT: return init_lock(c->lock);
	default: abort();
	}
}

/* Critical-section counters: writer xor readers, checked at every entry. */
static void cs_enter(struct thread_state *ts, const struct call *c, bool write)
{
	int l = c->lock;

	if (write) {
		int w = atomic_fetch_add(&cs_writers[l], 1) + 1;
		int r = atomic_load(&cs_readers[l]);

		if (w != 1 || r != 0)
			diverge(ts, c, -1, "write lock granted with %d writer(s) and %d reader(s) "
				"inside the critical section", w - 1, r);
	} else {
		int w;

		atomic_fetch_add(&cs_readers[l], 1);
		w = atomic_load(&cs_writers[l]);
		if (w != 0)
			diverge(ts, c, -1, "read lock granted with %d writer(s) inside the critical section", w);
	}
}

static void cs_leave(int lock, enum hold h)
{
	if (h == H_WRITE)
		atomic_fetch_sub(&cs_writers[lock], 1);
	else
		atomic_fetch_sub(&cs_readers[lock], 1);
}

static unsigned recorded_readers(int lock)
{
	unsigned n = 0;

	for (unsigned t = 0; t < cfg.threads; t++)
		n += model[lock].hold[t] == H_READ;
	return n;
}

/*
 * A recorded reader released its last hold: a phantom hold is now its, if
 * no counted hold is left (the lock counts recorded readers - phantoms).
 */
static void settle_phantoms(int lock)
{
	unsigned r = recorded_readers(lock);

	if (model[lock].phantom > r)
		model[lock].phantom = r;
}

/*
 * A granted acquisition, recorded in the model (under model_mu); counted:
 * cs_enter() already ran, right after the call returned.
 */
static void record_grant(struct thread_state *ts, const struct call *c, bool counted)
{
	struct lock_model *m = &model[c->lock];
	unsigned self = ts->idx;
	bool write = is_write(c->op);
	struct others o = others_of(c->lock, self);

	if (m->hold[self] == H_READ) {   /* re-entry */
		m->reads[self]++;
		return;
	}
	if (o.writer || (write && o.readers))
		diverge(ts, c, c->lock, "%s lock granted while the model has %s",
			write ? "write" : "read", o.writer ? "another writer holding it" : "readers holding it");
	if (!counted)
		cs_enter(ts, c, write);
	m->destroyed = false;   /* default mode: destroyed, then used again */
	m->hold[self] = write ? H_WRITE : H_READ;
	m->reads[self] = write ? 0 : 1;
}

static void check_result(struct thread_state *ts, const struct call *c, unsigned allowed,
			 int got, int lock)
{
	char es[96], gb[48];
	int i = r_index(got);

	if (i >= 0 && (allowed & S(i))) {
		atomic_fetch_add_explicit(&result_counts[i], 1, memory_order_relaxed);
		return;
	}
	set_str(allowed, es, sizeof(es));
	diverge(ts, c, lock, "expected %s, got %s", es, code_str(got, gb, sizeof(gb)));
}

/* One step of thread ts. */
static void step(struct thread_state *ts)
{
	unsigned self = ts->idx, allowed;
	bool counted = false;
	struct lock_model *m;
	struct others o0;
	enum hold h0;
	struct call c;
	int r;

	pthread_mutex_lock(&model_mu);
	c = choose(ts);
	m = &model[c.lock];
	h0 = m->hold[self];
	o0 = others_of(c.lock, self);
	atomic_store(&ts->cur_op, c.op);
	atomic_store(&ts->cur_lock, c.lock);
	atomic_store(&ts->cur_step, ts->step);
	allowed = expected(&c, self);
	if (c.inline_) {
		if (c.op == OP_UNLOCK && m->hold[self] != H_NONE && !m->destroyed) {
			/* Erase the hold before the release. */
			if (m->hold[self] == H_WRITE || m->reads[self] == 1)
				cs_leave(c.lock, m->hold[self]);
		}
		r = issue(&c);
		check_result(ts, &c, allowed, r, c.lock);
	} else {
		if (is_read(c.op))
			m->waiting_r++;
		else
			m->waiting_w++;
		pthread_mutex_unlock(&model_mu);
		r = issue(&c);
		/* A first hold (not a re-entry): count it before the model knows. */
		counted = r == 0 && m->hold[self] == H_NONE;
		if (counted)
			cs_enter(ts, &c, is_write(c.op));
		pthread_mutex_lock(&model_mu);
		if (is_read(c.op))
			m->waiting_r--;
		else
			m->waiting_w--;
		check_result(ts, &c, allowed, r, c.lock);
	}
	if (r == 0 && c.op != OP_NULL) {
		switch (c.op) {
		case OP_UNLOCK:
			if (h0 == H_NONE) {
				/* Default mode: one read hold of another reader went. */
				if (cfg.model == MODEL_LIBBRAVO && !o0.writer &&
				    recorded_readers(c.lock) > m->phantom) {
					m->phantom++;
					released_for_others++;
				}
			} else if (m->hold[self] == H_READ && m->reads[self] > 1) {
				m->reads[self]--;
			} else {
				m->hold[self] = H_NONE;
				settle_phantoms(c.lock);
			}
			break;
		case OP_DESTROY:
			/* posix model: make it a lock again at once (no calls on a destroyed lock). */
			if (cfg.model == MODEL_POSIX) {
				r = init_lock(c.lock);
				if (r != 0)
					diverge(ts, &c, c.lock, "init after destroy returned %d", r);
			} else if (kind_of(c.lock) == K_PSHARED) {
				/* glibc's destroy: nothing changes */
			} else if (cfg.model == MODEL_STRICT) {
				m->destroyed = true;
			} else {
				/* default mode: nothing changes; an idle lock may be re-initialized */
				m->destroyed = lock_idle(c.lock);
			}
			break;
		case OP_INIT:
			m->destroyed = false;
			break;
		default:
			if (is_read(c.op) || is_write(c.op))
				record_grant(ts, &c, counted);
			break;
		}
	}
	ts->hist[ts->nhist % HISTORY] = c;
	ts->hist_res[ts->nhist % HISTORY] = r;
	ts->nhist++;
	ghist[nghist % GLOBAL_HISTORY].thread = self;
	ghist[nghist % GLOBAL_HISTORY].step = ts->step;
	ghist[nghist % GLOBAL_HISTORY].call = c;
	ghist[nghist % GLOBAL_HISTORY].res = r;
	nghist++;
	pthread_mutex_unlock(&model_mu);
	atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
}

/* Release what the thread still holds, checking each unlock. */
static void release_all(struct thread_state *ts)
{
	pthread_mutex_lock(&model_mu);
	for (unsigned l = 0; l < cfg.locks; l++) {
		struct lock_model *m = &model[l];
		struct call c = { .op = OP_UNLOCK, .lock = (int)l, .inline_ = true };

		while (m->hold[ts->idx] != H_NONE) {
			enum hold h = m->hold[ts->idx];
			int r;

			if (h == H_WRITE || m->reads[ts->idx] == 1)
				cs_leave((int)l, h);
			r = pthread_rwlock_unlock(&locks[l]);
			check_result(ts, &c, S(RES_OK), r, (int)l);
			if (h == H_READ && --m->reads[ts->idx] > 0)
				continue;
			m->hold[ts->idx] = H_NONE;
			settle_phantoms((int)l);
		}
	}
	pthread_mutex_unlock(&model_mu);
}

#ifndef OPRAND_FUZZER
/*
 * Time outside model_mu between steps, so that the threads interleave
 * (a glibc mutex re-taken at once by the thread that released it would
 * otherwise let one thread run many steps alone).
 */
static void think(struct thread_state *ts)
{
	unsigned n = rnd_below(&ts->rng, 8);

	if (n == 0) {
		sched_yield();
		return;
	}
	for (unsigned i = rnd_below(&ts->rng, 64u << n); i > 0; i--)
		atomic_signal_fence(memory_order_seq_cst);   /* a compiler barrier: keep the loop */
}

static pthread_barrier_t start_line;

static void *thread_main(void *arg)
{
	struct thread_state *ts = arg;

	pthread_barrier_wait(&start_line);   /* all threads start together */

	for (ts->step = 0; ts->step < cfg.steps; ts->step++) {
		step(ts);
		think(ts);
	}
	release_all(ts);
	atomic_store(&ts->cur_op, -1);
	return NULL;
}

/* A hang is a failure: no step completed anywhere for cfg.hang_s seconds. */
static void *watchdog(void *arg)
{
	unsigned long last = atomic_load(&progress);
	unsigned still = 0;

	(void)arg;
	for (;;) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		unsigned long now;

		nanosleep(&ts, NULL);
		now = atomic_load(&progress);
		if (now != last) {
			last = now;
			still = 0;
			continue;
		}
		if (++still < cfg.hang_s * 10)
			continue;
		pthread_mutex_lock(&report_mu);
		fprintf(stderr, "oprand: HANG seed=%" PRIu64 ": no step completed in %u s; threads:\n",
			cfg.seed, cfg.hang_s);
		for (unsigned t = 0; t < cfg.threads; t++) {
			int op = atomic_load(&tstate[t].cur_op);

			if (op < 0)
				fprintf(stderr, "  T%u finished\n", t);
			else
				fprintf(stderr, "  T%u step %u: %s on L%d\n", t,
					atomic_load(&tstate[t].cur_step), op_names[op],
					atomic_load(&tstate[t].cur_lock));
		}
		fflush(stderr);
		_exit(1);
	}
	return NULL;
}

#endif /* !OPRAND_FUZZER */

/* Where the rwlock functions come from (libbravo or libc). */
static const char *rwlock_object(void)
{
	Dl_info info;
	void *f = dlsym(RTLD_DEFAULT, "pthread_rwlock_rdlock");

	if (!f || !dladdr(f, &info) || !info.dli_fname)
		return "?";
	return info.dli_fname;
}

/* libbravo's default mode or strict mode (BRAVO_CHECK=1), or glibc. */
static enum model_kind default_model(const char *obj)
{
	const char *check = getenv("BRAVO_CHECK");

	if (!strstr(obj, "libbravo"))
		return MODEL_POSIX;
	return check && strcmp(check, "1") == 0 ? MODEL_STRICT : MODEL_LIBBRAVO;
}

/*
 * The libbravo model under BRAVO-pthread: its default mode lists no hold
 * of glibc's lock, so a reader's own calls get glibc's results.
 */
static bool glibc_reads_of(const char *obj)
{
	const char *base = strrchr(obj, '/');

	return cfg.model == MODEL_LIBBRAVO &&
	       strcmp(base ? base + 1 : obj, "libbravo-bravo-pthread.so") == 0;
}

#ifdef OPRAND_FUZZER
/*
 * libFuzzer harness: one thread, every choice from the input; the locks and
 * the model start afresh for each input.  A lock held only by the caller
 * never makes a call block, so no input can hang.  OPRAND_MUTANT names a
 * mutant model (to see the fuzzer find a divergence).
 */
static int init_all_locks(void);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *m = getenv("OPRAND_MUTANT");

	(void)argc;
	(void)argv;
	cfg.threads = 1;
	cfg.model = default_model(rwlock_object());
	cfg.glibc_reads = glibc_reads_of(rwlock_object());
	if (m && *m) {
		for (int i = 0; mutant_names[i]; i++)
			if (strcmp(m, mutant_names[i]) == 0)
				cfg.mutant = mutant_names[i];
		if (!cfg.mutant)
			fprintf(stderr, "oprand-fuzz: OPRAND_MUTANT='%s' is not a mutant; using none\n", m);
	}
	fprintf(stderr, "oprand-fuzz: model=%s%s%s rwlock=%s\n", model_names[cfg.model],
		cfg.mutant ? " mutant=" : "", cfg.mutant ? cfg.mutant : "", rwlock_object());
	if (init_all_locks() != 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct thread_state *ts = &tstate[0];

	fuzz_in = data;
	fuzz_left = size;
	ts->idx = 0;
	ts->nhist = 0;
	for (ts->step = 0; fuzz_left > 0; ts->step++)
		step(ts);
	release_all(ts);
	/* Back to fresh locks: each must be idle now. */
	for (unsigned l = 0; l < cfg.locks; l++) {
		struct call c = { .op = OP_DESTROY, .lock = (int)l, .inline_ = true };
		int r;

		if (model[l].destroyed && (r = init_lock((int)l)) != 0)
			diverge(ts, &c, (int)l, "init of a destroyed lock returned %d", r);
		if ((r = pthread_rwlock_destroy(&locks[l])) != 0)
			diverge(ts, &c, (int)l, "destroy of an idle lock returned %d", r);
		memset(&model[l], 0, sizeof(model[l]));
	}
	if (init_all_locks() != 0)
		abort();
	return 0;
}
#endif

/* Every lock fresh: the static one by its initializer, the others by init. */
static int init_all_locks(void)
{
	int r;

	for (unsigned l = 0; l < cfg.locks; l++) {
		if (kind_of((int)l) == K_STATIC) {
			locks[l] = (pthread_rwlock_t)PTHREAD_RWLOCK_INITIALIZER;
			continue;
		}
		if ((r = init_lock((int)l)) != 0) {
			fprintf(stderr, "oprand: init of L%u failed: %s\n", l, strerror(r));
			return r;
		}
	}
	return 0;
}

#ifndef OPRAND_FUZZER
/* ---- command line ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: oprand [OPTION]...\n"
		"Randomized rwlock operation sequences from several threads, checked\n"
		"against a reference model; run it under LD_PRELOAD of a libbravo variant\n"
		"or without preload (glibc).\n"
		"\n"
		"  --seed N        random seed (default 1); the same seed gives each\n"
		"                  thread the same choices (interleavings still vary)\n"
		"  --steps N       calls per thread (default 2000)\n"
		"  --threads N     threads, 1..%d (default 3)\n"
		"  --locks N       locks, 1..%d: default kind, static initializer,\n"
		"                  writer-preferring kind, process-shared (default 4)\n"
		"  --model M       libbravo (libbravo's default mode: glibc's results plus\n"
		"                  EDEADLK and read re-entry; under libbravo-bravo-pthread.so\n"
		"                  a reader's own calls get glibc's results), strict (BRAVO_CHECK=1: EPERM,\n"
		"                  EBUSY from destroy, EINVAL on a destroyed lock) or posix\n"
		"                  (only calls POSIX/glibc define); default: libbravo when\n"
		"                  the rwlock functions come from a libbravo object (strict\n"
		"                  with BRAVO_CHECK=1), else posix\n"
		"  --expect-lib S  fail unless every pthread_rwlock_* function is defined in\n"
		"                  the object S (a basename: libbravo-ba.so, libc.so.6);\n"
		"                  S1,S2: each in one of them, and each of them defines one\n"
		"  --mutant NAME   make the model deliberately wrong (it must then diverge):\n"
		"                  free-trywrlock-busy, readers-exclude, unlock-unheld-eperm\n"
		"                  (libbravo model), unlock-unheld-ok (strict model)\n"
		"  --destroy-waited  libbravo model: destroy a lock also while threads are\n"
		"                  inside blocking calls on it (it must stay usable)\n"
		"  --hang S        report a hang after S seconds without progress (default 20)\n"
		"  --help          this message\n"
		"\n"
		"Exit status: 0 no divergence, 1 divergence or hang, 2 usage.\n",
		MAX_THREADS, MAX_LOCKS);
}

static _Noreturn void bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "oprand: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'oprand --help'.\n");
	exit(2);
}

static uint64_t parse_num(const char *s, const char *name, uint64_t lo, uint64_t hi)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!s[0] || s[0] == '-')
		bad_usage("%s: not a number", name);
	v = strtoull(s, &end, 0);
	if (errno || *end || v < lo || v > hi)
		bad_usage("%s: bad or out-of-range value", name);
	return v;
}


int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, 0, 's' },
		{ "steps", required_argument, 0, 'n' },
		{ "threads", required_argument, 0, 't' },
		{ "locks", required_argument, 0, 'l' },
		{ "model", required_argument, 0, 'm' },
		{ "expect-lib", required_argument, 0, 'e' },
		{ "mutant", required_argument, 0, 'u' },
		{ "hang", required_argument, 0, 'g' },
		{ "destroy-waited", no_argument, 0, 'd' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *model_arg = NULL, *expect = NULL, *obj;
	pthread_t th[MAX_THREADS], wd;
	int o, r;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 's': cfg.seed = parse_num(optarg, "--seed", 0, UINT64_MAX); break;
		case 'n': cfg.steps = (unsigned)parse_num(optarg, "--steps", 1, 100000000); break;
		case 't': cfg.threads = (unsigned)parse_num(optarg, "--threads", 1, MAX_THREADS); break;
		case 'l': cfg.locks = (unsigned)parse_num(optarg, "--locks", 1, MAX_LOCKS); break;
		case 'g': cfg.hang_s = (unsigned)parse_num(optarg, "--hang", 1, 3600); break;
		case 'm': model_arg = optarg; break;
		case 'e': expect = optarg; break;
		case 'u': cfg.mutant = optarg; break;
		case 'd': cfg.destroy_waited = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
	if (cfg.mutant) {
		bool known = false;

		for (int i = 0; mutant_names[i]; i++)
			known |= strcmp(cfg.mutant, mutant_names[i]) == 0;
		if (!known)
			bad_usage("unknown mutant '%s'", cfg.mutant);
	}
	obj = rwlock_object();
	if (expect) {
		char why[PATH_MAX + 256];

		if (rwlock_lib_check_in(expect, why, sizeof(why)) != 0) {
			fprintf(stderr, "oprand: %s (--expect-lib)\n", why);
			return 1;
		}
	}
	if (!model_arg)
		cfg.model = default_model(obj);
	else if (strcmp(model_arg, "libbravo") == 0)
		cfg.model = MODEL_LIBBRAVO;
	else if (strcmp(model_arg, "strict") == 0)
		cfg.model = MODEL_STRICT;
	else if (strcmp(model_arg, "posix") == 0)
		cfg.model = MODEL_POSIX;
	else
		bad_usage("--model: '%s' is not libbravo, strict or posix", model_arg);
	cfg.glibc_reads = glibc_reads_of(obj);
	if (mutant("unlock-unheld-eperm") && cfg.model != MODEL_LIBBRAVO)
		bad_usage("mutant '%s' applies to the libbravo model only", cfg.mutant);
	if (mutant("unlock-unheld-ok") && cfg.model != MODEL_STRICT)
		bad_usage("mutant '%s' applies to the strict model only", cfg.mutant);

	if (init_all_locks() != 0)
		return 1;
	printf("oprand: seed=%" PRIu64 " threads=%u steps=%u locks=%u model=%s%s%s%s rwlock=%s\n",
	       cfg.seed, cfg.threads, cfg.steps, cfg.locks, model_names[cfg.model],
	       cfg.glibc_reads ? " reads=glibc" : "",
	       cfg.mutant ? " mutant=" : "", cfg.mutant ? cfg.mutant : "", obj);
	fflush(stdout);
	for (unsigned t = 0; t < cfg.threads; t++) {
		tstate[t].idx = t;
		tstate[t].rng = cfg.seed * 0x100000001b3ull + t + 1;
		rnd(&tstate[t].rng);
	}
	if ((r = pthread_create(&wd, NULL, watchdog, NULL)) != 0) {
		fprintf(stderr, "oprand: pthread_create: %s\n", strerror(r));
		return 1;
	}
	pthread_barrier_init(&start_line, NULL, cfg.threads);
	for (unsigned t = 0; t < cfg.threads; t++)
		if ((r = pthread_create(&th[t], NULL, thread_main, &tstate[t])) != 0) {
			fprintf(stderr, "oprand: pthread_create: %s\n", strerror(r));
			return 1;
		}
	for (unsigned t = 0; t < cfg.threads; t++)
		pthread_join(th[t], NULL);

	/* Every lock is idle at the end: destroy must succeed. */
	for (unsigned l = 0; l < cfg.locks; l++) {
		struct call c = { .op = OP_DESTROY, .lock = (int)l, .inline_ = true };
		struct thread_state *ts = &tstate[0];

		if (model[l].destroyed && (r = init_lock((int)l)) != 0)
			diverge(ts, &c, (int)l, "final init returned %d", r);
		r = pthread_rwlock_destroy(&locks[l]);
		if (r != 0)
			diverge(ts, &c, (int)l, "destroy of an idle lock after the run returned %d", r);
	}
	if (cfg.mutant)
		printf("oprand: no divergence from mutant model %s\n", cfg.mutant);
	printf("oprand: OK, no divergence in %lu calls; results:", atomic_load(&progress));
	for (int i = 0; i < RES_COUNT; i++)
		printf(" %s=%lu", r_names[i], atomic_load(&result_counts[i]));
	if (cfg.model == MODEL_LIBBRAVO)
		printf("; read holds released for another reader: %lu", released_for_others);
	printf("\n");
	return 0;
}
#endif /* !OPRAND_FUZZER */
