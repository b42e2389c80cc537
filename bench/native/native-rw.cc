/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * native-rw.cc - one workload, many reader-writer locks (issue 13): the
 * libbravo variants beside the native rwlocks a program could use instead.
 *
 *   native-rw [--lock NAME] [-t T] [-p P] [-l L] [-c C] [-n N] [-d SECS] [-s SEED]
 *
 * The workload is the no-harm benchmark's.  T threads share L locks, each
 * lock with its guarded pair on its own 128-byte sector.  Each iteration:
 *   - pick a lock uniformly at random with the thread's xorshift64* PRNG
 *     (no pick when L = 1);
 *   - a Bernoulli trial with probability P on the same PRNG decides write or
 *     read;
 *   - take the lock (write or read), advance the PRNG C steps, unlock;
 *   - outside the lock, advance the PRNG a uniform number of steps in
 *     [0, N) (N = 0: nothing).
 *
 * Correctness check (as rwbench's): a writer makes its lock's guarded pair
 * (first, second) unequal and equal again inside its critical section; a
 * reader that sees them differ, or totals that differ from the write count,
 * fail the run (exit 1).
 *
 * The locks (--lock NAME; --list-locks names those built in):
 *   pthread           pthread_rwlock_t: glibc's, or a libbravo variant's
 *                     under LD_PRELOAD
 *   std-shared-mutex  std::shared_mutex: libstdc++ wraps glibc's
 *                     pthread_rwlock_t (so a preload replaces it too)
 *   ck-rwlock         Concurrency Kit ck_rwlock_t (centralized, spinning)
 *   ck-pflock         ck_pflock_t (phase-fair, Brandenburg & Anderson's PF-T)
 *   ck-tflock         ck_tflock_ticket_t (task-fair ticket lock)
 *   ck-bytelock       ck_bytelock_t (Dice & Shavit's TLRW byte lock: one
 *                     reader byte per thread for the first 56 threads)
 *   tbb-spin-rw       oneTBB tbb::spin_rw_mutex (spin, then yield)
 *   tbb-queuing-rw    oneTBB tbb::queuing_rw_mutex (fair, queue of nodes)
 *   absl-mutex        Abseil absl::Mutex, ReaderLock/WriterLock
 *   none              no exclusion at all, for tests of the correctness
 *                     check (which must then fail with 2 threads)
 * CK, oneTBB and Abseil are compiled in only when configure found their
 * headers (HAVE_NATIVE_CK, _TBB, _ABSL); a lock not built in is an error
 * (exit 2) that says what to install.
 *
 * Each lock is used as a program would use it: header-inline code stays
 * inline (CK, tbb::spin_rw_mutex), library calls stay calls (pthread,
 * absl::Mutex, tbb::queuing_rw_mutex); ck-bytelock goes through one
 * out-of-line C function per operation (ck-bytelock.c), its header not
 * being valid C++.
 *
 * RESULT prog=native-rw threads=T duration_s=.. throughput=LOOPS/S lock=NAME
 *        loops=.. reads=.. writes=.. write_probability=P locks=L cs=C ncs=N
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memory>
#include <new>
#include <shared_mutex>

extern "C" {
#define _Noreturn [[noreturn]]
#include "../common.h"
#undef _Noreturn
}

#ifdef HAVE_NATIVE_CK
#include <ck_pflock.h>
#include <ck_rwlock.h>
#include <ck_tflock.h>
#include "ck-bytelock.h"
#endif
#ifdef HAVE_NATIVE_TBB
#include <tbb/queuing_rw_mutex.h>
#include <tbb/spin_rw_mutex.h>
#endif
#ifdef HAVE_NATIVE_ABSL
#include <absl/synchronization/mutex.h>
#endif

static const char usage[] =
	"usage: native-rw [--lock NAME] [-t T] [-p P] [-l L] [-c C] [-n N]\n"
	"                 [-d SECS] [-s SEED]\n"
	"       native-rw --list-locks\n"
	"\n"
	"The no-harm workload on one of several rwlocks: T threads, L locks; each\n"
	"iteration picks a lock at random, writes with probability P (else\n"
	"reads), advances the thread's PRNG C steps under the lock and a uniform\n"
	"[0,N) steps outside.\n"
	"\n"
	"      --lock NAME          pthread (default: glibc's, or a libbravo variant\n"
	"                           under LD_PRELOAD), std-shared-mutex, ck-rwlock,\n"
	"                           ck-pflock, ck-tflock, ck-bytelock, tbb-spin-rw,\n"
	"                           tbb-queuing-rw, absl-mutex; none (tests only:\n"
	"                           no exclusion, the check must fail)\n"
	"      --list-locks         the locks built into this program, one a line\n"
	"  -t, --threads T          threads, 1..1024 (default 1)\n"
	"  -p, --write-probability P\n"
	"                           0..1 as a decimal or a fraction, e.g. 1/1000\n"
	"                           (default 1/1000)\n"
	"  -l, --locks L            locks, each on its own 128-byte sector,\n"
	"                           1..1048576 (default 1)\n"
	"  -c, --cs C               PRNG steps inside the lock, 0..1000000 (default 10)\n"
	"  -n, --ncs N              bound of the uniform PRNG steps outside,\n"
	"                           0..1000000, 0 = none (default 200)\n"
	"  -d, --duration SECS      measured interval, decimals allowed (default 1)\n"
	"  -s, --seed N             PRNG seed (default 1)\n"
	"  -h, --help               this text\n"
	"\n"
	"Prints one line on stdout:\n"
	"  RESULT prog=native-rw threads=T duration_s=.. throughput=LOOPS_PER_S\n"
	"         lock=NAME loops=.. reads=.. writes=.. write_probability=P\n"
	"         locks=L cs=C ncs=N\n"
	"Exit status: 0 ok, 1 lock error or correctness failure, 2 usage or a lock\n"
	"not built in.\n";

namespace {

/* ---- the locks: one adapter each ----
 *
 * An adapter names the lock type, a per-thread Holder (the state a thread
 * needs to take any of the locks: a queue node, a reader slot; most have
 * none) and the four operations, each returning false on a failed call.
 * init() runs once per lock on default-constructed storage.
 */

struct Pthread {
	using lock_type = pthread_rwlock_t;
	struct Holder {
		explicit Holder(unsigned) {}
	};
	static bool init(lock_type &l) { return pthread_rwlock_init(&l, nullptr) == 0; }
	static void destroy(lock_type &l) { pthread_rwlock_destroy(&l); }
	static bool read_lock(lock_type &l, Holder &) { return pthread_rwlock_rdlock(&l) == 0; }
	static bool read_unlock(lock_type &l, Holder &) { return pthread_rwlock_unlock(&l) == 0; }
	static bool write_lock(lock_type &l, Holder &) { return pthread_rwlock_wrlock(&l) == 0; }
	static bool write_unlock(lock_type &l, Holder &) { return pthread_rwlock_unlock(&l) == 0; }
};

/* The operations of a C++ lock with the standard SharedMutex names. */
template <class M> struct SharedMutexLike {
	using lock_type = M;
	struct Holder {
		explicit Holder(unsigned) {}
	};
	static bool init(lock_type &) { return true; }
	static void destroy(lock_type &) {}
	static bool read_lock(lock_type &l, Holder &) { l.lock_shared(); return true; }
	static bool read_unlock(lock_type &l, Holder &) { l.unlock_shared(); return true; }
	static bool write_lock(lock_type &l, Holder &) { l.lock(); return true; }
	static bool write_unlock(lock_type &l, Holder &) { l.unlock(); return true; }
};

using StdSharedMutex = SharedMutexLike<std::shared_mutex>;

/* No lock: the correctness check's own test. */
struct NoLock {
	struct lock_type {
		char unused;
	};
	struct Holder {
		explicit Holder(unsigned) {}
	};
	static bool init(lock_type &) { return true; }
	static void destroy(lock_type &) {}
	static bool read_lock(lock_type &, Holder &) { return true; }
	static bool read_unlock(lock_type &, Holder &) { return true; }
	static bool write_lock(lock_type &, Holder &) { return true; }
	static bool write_unlock(lock_type &, Holder &) { return true; }
};

#ifdef HAVE_NATIVE_CK
/* CK's locks take a pointer and have no per-thread state (but the byte lock). */
#define CK_ADAPTER(Name, type, prefix)                                                        \
	struct Name {                                                                           \
		using lock_type = type;                                                         \
		struct Holder {                                                                 \
			explicit Holder(unsigned) {}                                            \
		};                                                                              \
		static bool init(lock_type &l) { prefix##_init(&l); return true; }              \
		static void destroy(lock_type &) {}                                             \
		static bool read_lock(lock_type &l, Holder &) { prefix##_read_lock(&l); return true; } \
		static bool read_unlock(lock_type &l, Holder &) { prefix##_read_unlock(&l); return true; } \
		static bool write_lock(lock_type &l, Holder &) { prefix##_write_lock(&l); return true; } \
		static bool write_unlock(lock_type &l, Holder &) { prefix##_write_unlock(&l); return true; } \
	}
CK_ADAPTER(CkRwlock, ck_rwlock_t, ck_rwlock);
CK_ADAPTER(CkPflock, ck_pflock_t, ck_pflock);
CK_ADAPTER(CkTflock, ck_tflock_ticket_t, ck_tflock_ticket);
#undef CK_ADAPTER

/*
 * The byte lock identifies a thread by a slot number: 1..56 own a reader
 * byte, larger ones share a reader counter.  A writer's slot must be unique
 * and non-zero (the lock stores it as the owner), so thread i uses i + 1.
 */
struct CkBytelock {
	using lock_type = native_bytelock;
	struct Holder {
		unsigned slot;
		explicit Holder(unsigned id) : slot(id + 1) {}
	};
	static bool init(lock_type &l) { native_bytelock_init(&l); return true; }
	static void destroy(lock_type &) {}
	static bool read_lock(lock_type &l, Holder &h) { native_bytelock_read_lock(&l, h.slot); return true; }
	static bool read_unlock(lock_type &l, Holder &h) { native_bytelock_read_unlock(&l, h.slot); return true; }
	static bool write_lock(lock_type &l, Holder &h) { native_bytelock_write_lock(&l, h.slot); return true; }
	static bool write_unlock(lock_type &l, Holder &) { native_bytelock_write_unlock(&l); return true; }
};
#endif

#ifdef HAVE_NATIVE_TBB
using TbbSpinRw = SharedMutexLike<tbb::spin_rw_mutex>;

/* A queuing lock's waiter spins on its own node: one per thread suffices,
 * as a thread holds one lock at a time. */
struct TbbQueuingRw {
	using lock_type = tbb::queuing_rw_mutex;
	struct Holder {
		tbb::queuing_rw_mutex::scoped_lock node;
		explicit Holder(unsigned) {}
	};
	static bool init(lock_type &) { return true; }
	static void destroy(lock_type &) {}
	static bool read_lock(lock_type &l, Holder &h) { h.node.acquire(l, false); return true; }
	static bool read_unlock(lock_type &, Holder &h) { h.node.release(); return true; }
	static bool write_lock(lock_type &l, Holder &h) { h.node.acquire(l, true); return true; }
	static bool write_unlock(lock_type &, Holder &h) { h.node.release(); return true; }
};
#endif

#ifdef HAVE_NATIVE_ABSL
struct AbslMutex {
	using lock_type = absl::Mutex;
	struct Holder {
		explicit Holder(unsigned) {}
	};
	static bool init(lock_type &) { return true; }
	static void destroy(lock_type &) {}
	static bool read_lock(lock_type &l, Holder &) { l.ReaderLock(); return true; }
	static bool read_unlock(lock_type &l, Holder &) { l.ReaderUnlock(); return true; }
	static bool write_lock(lock_type &l, Holder &) { l.WriterLock(); return true; }
	static bool write_unlock(lock_type &l, Holder &) { l.WriterUnlock(); return true; }
};
#endif

/* ---- the workload ---- */

struct Options {
	bench_common common;
	const char *p_text = "1/1000";
	double p = 0;
	uint64_t write_threshold = 0;
	unsigned nlocks = 1;
	unsigned cs = 10;
	unsigned ncs = 200;
};

/* One lock and the pair it guards, alone on their sector. */
template <class A> struct alignas(BENCH_SECTOR) Cell {
	typename A::lock_type lock{};
	volatile uint64_t first = 0;  /* bumped by a writer on entry */
	volatile uint64_t second = 0; /* bumped by a writer before leaving */
};

template <class A> struct Shared {
	Cell<A> *cells;
	const Options *o;
};

/*
 * The PRNG state and the work's sum must be in registers here: the
 * critical section's steps cannot move out of it (past an inline unlock)
 * and the guarded pair's two accesses keep them between them.
 */
static inline void pin(uint64_t &rng, uint64_t &sink)
{
	__asm__ __volatile__("" : "+r"(rng), "+r"(sink) : : "memory");
}

template <class A> void *worker(void *arg)
{
	bench_thread *t = static_cast<bench_thread *>(arg);
	const Shared<A> *sh = static_cast<const Shared<A> *>(t->arg);
	const Options &o = *sh->o;
	typename A::Holder holder(t->id);
	uint64_t rng = t->rng;
	uint64_t reads = 0, writes = 0, sink = 0, errors = 0;

	bench_wait_start();
	while (!bench_stopped()) {
		Cell<A> &c = o.nlocks == 1 ? sh->cells[0]
					   : sh->cells[bench_rand_below(&rng, o.nlocks)];

		if (bench_trial(&rng, o.write_threshold)) {
			if (!A::write_lock(c.lock, holder)) {
				errors++;
				break;
			}
			c.first = c.first + 1;
			sink += bench_rand_steps(&rng, o.cs);
			pin(rng, sink);
			c.second = c.second + 1;
			if (!A::write_unlock(c.lock, holder)) {
				errors++;
				break;
			}
			writes++;
		} else {
			if (!A::read_lock(c.lock, holder)) {
				errors++;
				break;
			}
			uint64_t seen = c.first;
			sink += bench_rand_steps(&rng, o.cs);
			pin(rng, sink);
			errors += seen != c.second;
			if (!A::read_unlock(c.lock, holder)) {
				errors++;
				break;
			}
			reads++;
		}
		if (o.ncs)
			sink += bench_rand_steps(&rng, bench_rand_below(&rng, o.ncs));
	}
	t->rng = rng;
	t->reads = reads;
	t->writes = writes;
	t->ops = reads + writes;
	t->sink = sink;
	t->errors = errors;
	return nullptr;
}

template <class A> int run(const char *name, const Options &o)
{
	std::unique_ptr<Cell<A>[]> cells(new (std::nothrow) Cell<A>[o.nlocks]);
	uint64_t reads = 0, writes = 0, errors = 0, guarded = 0;
	unsigned threads = o.common.threads;

	if (!cells) {
		fprintf(stderr, "native-rw: out of memory for %u locks\n", o.nlocks);
		return 1;
	}
	for (unsigned i = 0; i < o.nlocks; i++) {
		if (!A::init(cells[i].lock)) {
			fprintf(stderr, "native-rw: %s: cannot initialize lock %u\n", name, i);
			return 1;
		}
	}
	/* Every lock used once before the measured interval, so a lock that
	 * sets itself up on first use (libbravo's heap variants) does it here. */
	{
		typename A::Holder holder(0);
		for (unsigned i = 0; i < o.nlocks; i++) {
			if (!A::read_lock(cells[i].lock, holder) ||
			    !A::read_unlock(cells[i].lock, holder)) {
				fprintf(stderr, "native-rw: %s: lock %u fails\n", name, i);
				return 1;
			}
		}
	}

	Shared<A> sh = { cells.get(), &o };
	bench_thread *t = bench_spawn(threads, o.common.seed, worker<A>, &sh);
	double elapsed = bench_run_interval(o.common.duration);
	errors = bench_join(t, threads);
	for (unsigned i = 0; i < threads; i++) {
		reads += t[i].reads;
		writes += t[i].writes;
	}
	for (unsigned i = 0; i < o.nlocks; i++) {
		if (cells[i].first != cells[i].second)
			errors++;
		guarded += cells[i].first;
		A::destroy(cells[i].lock);
	}
	if (guarded != writes)
		errors++;
	free(t);
	if (errors) {
		fprintf(stderr, "native-rw: FAILURE: %s: %" PRIu64
			" lock errors or torn reads/writes\n", name, errors);
		return 1;
	}
	printf("native-rw: %s, %u threads, %u locks, P(write)=%s: %" PRIu64 " reads, %" PRIu64
	       " writes in %.3f s\n", name, threads, o.nlocks, o.p_text, reads, writes, elapsed);
	bench_result(threads, elapsed, (double)(reads + writes) / elapsed,
		     " lock=%s loops=%" PRIu64 " reads=%" PRIu64 " writes=%" PRIu64
		     " write_probability=%g locks=%u cs=%u ncs=%u",
		     name, reads + writes, reads, writes, o.p, o.nlocks, o.cs, o.ncs);
	return 0;
}

#ifdef HAVE_NATIVE_ABSL
int run_absl(const char *name, const Options &o)
{
	/* As a production build has it: no lock-order graph (debug builds only). */
	absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
	return run<AbslMutex>(name, o);
}
#endif

struct LockEntry {
	const char *name;
	int (*run)(const char *, const Options &); /* null: not built in */
	const char *missing;                        /* why not, and what to do */
	bool listed;                                /* in --list-locks */
};

#define NOT_BUILT(pkg, lib) \
	nullptr, "not built in: configure did not find " lib " (install " pkg " and re-run ./configure)"

const LockEntry lock_table[] = {
	{ "pthread", run<Pthread>, nullptr, true },
	{ "std-shared-mutex", run<StdSharedMutex>, nullptr, true },
#ifdef HAVE_NATIVE_CK
	{ "ck-rwlock", run<CkRwlock>, nullptr, true },
	{ "ck-pflock", run<CkPflock>, nullptr, true },
	{ "ck-tflock", run<CkTflock>, nullptr, true },
	{ "ck-bytelock", run<CkBytelock>, nullptr, true },
#else
	{ "ck-rwlock", NOT_BUILT("libck-dev", "Concurrency Kit"), true },
	{ "ck-pflock", NOT_BUILT("libck-dev", "Concurrency Kit"), true },
	{ "ck-tflock", NOT_BUILT("libck-dev", "Concurrency Kit"), true },
	{ "ck-bytelock", NOT_BUILT("libck-dev", "Concurrency Kit"), true },
#endif
#ifdef HAVE_NATIVE_TBB
	{ "tbb-spin-rw", run<TbbSpinRw>, nullptr, true },
	{ "tbb-queuing-rw", run<TbbQueuingRw>, nullptr, true },
#else
	{ "tbb-spin-rw", NOT_BUILT("libtbb-dev", "oneTBB"), true },
	{ "tbb-queuing-rw", NOT_BUILT("libtbb-dev", "oneTBB"), true },
#endif
#ifdef HAVE_NATIVE_ABSL
	{ "absl-mutex", run_absl, nullptr, true },
#else
	{ "absl-mutex", NOT_BUILT("libabsl-dev", "Abseil"), true },
#endif
	{ "none", run<NoLock>, nullptr, false },
};

} // namespace

int main(int argc, char **argv)
{
	enum { OPT_LOCK = 256, OPT_LIST };
	static const struct option longopts[] = {
		BENCH_COMMON_LONGOPTS,
		{ "lock", required_argument, nullptr, OPT_LOCK },
		{ "list-locks", no_argument, nullptr, OPT_LIST },
		{ "write-probability", required_argument, nullptr, 'p' },
		{ "locks", required_argument, nullptr, 'l' },
		{ "cs", required_argument, nullptr, 'c' },
		{ "ncs", required_argument, nullptr, 'n' },
		{ nullptr, 0, nullptr, 0 },
	};
	Options o;
	const char *lock_name = "pthread";
	bool list = false;
	int c;

	bench_setup("native-rw", usage);
	bench_common_defaults(&o.common);
	opterr = 0;
	while ((c = getopt_long(argc, argv, BENCH_COMMON_SHORTOPTS "p:l:c:n:", longopts,
				nullptr)) != -1) {
		if (bench_common_option(c, optarg, &o.common))
			continue;
		switch (c) {
		case OPT_LOCK:
			lock_name = optarg;
			break;
		case OPT_LIST:
			list = true;
			break;
		case 'p':
			o.p_text = optarg;
			break;
		case 'l':
			o.nlocks = (unsigned)bench_parse_ulong("--locks", optarg, 1, 1u << 20);
			break;
		case 'c':
			o.cs = (unsigned)bench_parse_ulong("--cs", optarg, 0, 1000000);
			break;
		case 'n':
			o.ncs = (unsigned)bench_parse_ulong("--ncs", optarg, 0, 1000000);
			break;
		default:
			bench_bad_option(c, argv);
		}
	}
	bench_no_operands(argc, argv);
	if (list) {
		for (const LockEntry &e : lock_table)
			if (e.listed && e.run)
				puts(e.name);
		return 0;
	}
	o.p = bench_parse_probability("--write-probability", o.p_text);
	o.write_threshold = bench_probability_threshold(o.p);

	for (const LockEntry &e : lock_table) {
		if (strcmp(e.name, lock_name) != 0)
			continue;
		if (!e.run) {
			fprintf(stderr, "native-rw: lock '%s' %s\n", e.name, e.missing);
			return 2;
		}
		return e.run(e.name, o);
	}
	bench_usage_error("unknown lock '%s'", lock_name);
}
