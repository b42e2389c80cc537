/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * shared_mutex_test.cc - integration tests through std::shared_mutex and
 * std::shared_timed_mutex (libstdc++ builds both on pthread_rwlock_t).
 *
 * An ordinary C++ program that knows nothing of libbravo; it is run under
 * LD_PRELOAD of each variant and without preload (RWLOCK_UNDER_TEST=glibc).
 * Nothing here is libbravo-specific, so nothing is skipped under glibc.
 * EXPECT_RWLOCK_LIB names the object that must define pthread_rwlock_*
 * (default libc.so.6).
 */
#include <check.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "../lib/check_run.h"

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;
using sysclock = std::chrono::system_clock;

namespace {

/* Run f in another thread and return its result. */
template <class F> bool in_other_thread(F f)
{
	bool r = false;
	std::thread t([&] { r = f(); });
	t.join();
	return r;
}

/* A thread that holds m (shared or exclusive) until release() is called. */
template <class M> class Holder {
public:
	Holder(M &m, bool exclusive) : m_(m), exclusive_(exclusive)
	{
		t_ = std::thread([this] {
			if (exclusive_)
				m_.lock();
			else
				m_.lock_shared();
			acquired_.store(true);
			while (!release_.load())
				std::this_thread::sleep_for(1ms);
			if (exclusive_)
				m_.unlock();
			else
				m_.unlock_shared();
		});
		while (!acquired_.load())
			std::this_thread::sleep_for(1ms);
	}
	void release()
	{
		if (t_.joinable()) {
			release_.store(true);
			t_.join();
		}
	}
	~Holder() { release(); }

private:
	M &m_;
	bool exclusive_;
	std::atomic<bool> acquired_{ false }, release_{ false };
	std::thread t_;
};

long rss_bytes()
{
	long size = 0, resident = -1;
	FILE *f = std::fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (std::fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	std::fclose(f);
	return resident * sysconf(_SC_PAGESIZE);
}

long long ms_between(steady::time_point a, steady::time_point b)
{
	return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

} // namespace

/* ------------------------------------------------------------------ */
/* std::shared_mutex                                                   */
/* ------------------------------------------------------------------ */

START_TEST(shared_mutex_try_lock_and_try_lock_shared_on_free_mutex_succeed)
{
	std::shared_mutex m;

	ck_assert(m.try_lock());
	m.unlock();
	ck_assert(m.try_lock_shared());
	m.unlock_shared();
	m.lock();
	m.unlock();
	m.lock_shared();
	m.unlock_shared();
}
END_TEST

START_TEST(shared_mutex_lock_excludes_readers_and_writers_in_other_threads)
{
	std::shared_mutex m;

	m.lock();
	ck_assert_msg(!in_other_thread([&] {
		bool ok = m.try_lock();
		if (ok)
			m.unlock();
		return ok;
	}), "try_lock succeeded in another thread while the mutex was locked");
	ck_assert_msg(!in_other_thread([&] {
		bool ok = m.try_lock_shared();
		if (ok)
			m.unlock_shared();
		return ok;
	}), "try_lock_shared succeeded in another thread while the mutex was locked");
	m.unlock();
	ck_assert(in_other_thread([&] {
		bool ok = m.try_lock();
		if (ok)
			m.unlock();
		return ok;
	}));
}
END_TEST

START_TEST(shared_mutex_lock_shared_admits_readers_and_excludes_writers)
{
	std::shared_mutex m;

	m.lock_shared();
	ck_assert_msg(in_other_thread([&] {
		bool ok = m.try_lock_shared();
		if (ok)
			m.unlock_shared();
		return ok;
	}), "try_lock_shared failed in another thread while only readers held the mutex");
	ck_assert_msg(!in_other_thread([&] {
		bool ok = m.try_lock();
		if (ok)
			m.unlock();
		return ok;
	}), "try_lock succeeded in another thread while a reader held the mutex");
	m.unlock_shared();
	ck_assert(in_other_thread([&] {
		bool ok = m.try_lock();
		if (ok)
			m.unlock();
		return ok;
	}));
}
END_TEST

START_TEST(shared_mutex_try_lock_fails_while_caller_holds_it)
{
	std::shared_mutex m;

	m.lock_shared();
	ck_assert(!m.try_lock());
	m.unlock_shared();
	m.lock();
	ck_assert(!m.try_lock());
	ck_assert(!m.try_lock_shared());
	m.unlock();
	ck_assert(m.try_lock());
	m.unlock();
}
END_TEST

START_TEST(shared_mutex_lock_waits_until_reader_unlocks)
{
	std::shared_mutex m;
	std::atomic<bool> got{ false };

	m.lock_shared();
	std::thread w([&] {
		m.lock();
		got.store(true);
		m.unlock();
	});
	std::this_thread::sleep_for(100ms);
	ck_assert_msg(!got.load(), "lock() returned while a reader held the mutex");
	m.unlock_shared();
	auto start = steady::now();
	while (!got.load() && steady::now() - start < 5s)
		std::this_thread::sleep_for(1ms);
	ck_assert_msg(got.load(), "lock() still blocked 5 s after the reader unlocked");
	w.join();
}
END_TEST

START_TEST(shared_mutex_lock_shared_waits_until_writer_unlocks)
{
	std::shared_mutex m;
	std::atomic<bool> got{ false };

	m.lock();
	std::thread r([&] {
		m.lock_shared();
		got.store(true);
		m.unlock_shared();
	});
	std::this_thread::sleep_for(100ms);
	ck_assert_msg(!got.load(), "lock_shared() returned while a writer held the mutex");
	m.unlock();
	auto start = steady::now();
	while (!got.load() && steady::now() - start < 5s)
		std::this_thread::sleep_for(1ms);
	ck_assert_msg(got.load(), "lock_shared() still blocked 5 s after the writer unlocked");
	r.join();
}
END_TEST

START_TEST(shared_lock_and_unique_lock_raii_work)
{
	std::shared_mutex m;

	{
		std::shared_lock<std::shared_mutex> a(m);
		std::shared_lock<std::shared_mutex> b(m, std::try_to_lock);
		ck_assert(b.owns_lock());
		std::unique_lock<std::shared_mutex> c(m, std::try_to_lock);
		ck_assert(!c.owns_lock());
	}
	{
		std::unique_lock<std::shared_mutex> c(m, std::try_to_lock);
		ck_assert(c.owns_lock());
	}
	std::lock_guard<std::shared_mutex> g(m);
}
END_TEST

/* ------------------------------------------------------------------ */
/* std::shared_timed_mutex                                             */
/* ------------------------------------------------------------------ */

START_TEST(shared_timed_mutex_try_lock_for_times_out_while_writer_holds)
{
	std::shared_timed_mutex m;
	Holder<std::shared_timed_mutex> h(m, true);
	auto start = steady::now();

	ck_assert_msg(!m.try_lock_for(50ms), "try_lock_for succeeded while another thread held the lock");
	auto end = steady::now();
	ck_assert_msg(end - start >= 50ms, "try_lock_for(50ms) gave up after %lld ms", ms_between(start, end));
	ck_assert_msg(end - start < 2s, "try_lock_for(50ms) took %lld ms", ms_between(start, end));
	h.release();
	ck_assert(m.try_lock_for(50ms));
	m.unlock();
}
END_TEST

START_TEST(shared_timed_mutex_try_lock_for_times_out_while_reader_holds)
{
	std::shared_timed_mutex m;
	Holder<std::shared_timed_mutex> h(m, false);
	auto start = steady::now();

	ck_assert_msg(!m.try_lock_for(50ms), "try_lock_for succeeded while another thread read-held the lock");
	ck_assert_msg(steady::now() - start >= 50ms, "try_lock_for(50ms) gave up early");
	h.release();
	ck_assert(m.try_lock_for(50ms));
	m.unlock();
}
END_TEST

START_TEST(shared_timed_mutex_try_lock_shared_for_times_out_while_writer_holds)
{
	std::shared_timed_mutex m;
	Holder<std::shared_timed_mutex> h(m, true);
	auto start = steady::now();

	ck_assert_msg(!m.try_lock_shared_for(50ms),
		      "try_lock_shared_for succeeded while another thread held the lock");
	auto end = steady::now();
	ck_assert_msg(end - start >= 50ms, "try_lock_shared_for(50ms) gave up after %lld ms",
		      ms_between(start, end));
	h.release();
	ck_assert(m.try_lock_shared_for(50ms));
	m.unlock_shared();
}
END_TEST

START_TEST(shared_timed_mutex_try_lock_shared_until_times_out_on_steady_and_system_clock)
{
	std::shared_timed_mutex m;
	Holder<std::shared_timed_mutex> h(m, true);

	auto dl = steady::now() + 50ms;
	ck_assert_msg(!m.try_lock_shared_until(dl), "try_lock_shared_until(steady_clock) succeeded while held");
	ck_assert_msg(steady::now() >= dl, "try_lock_shared_until(steady_clock) gave up before its deadline");
	auto sdl = sysclock::now() + 50ms;
	ck_assert_msg(!m.try_lock_shared_until(sdl), "try_lock_shared_until(system_clock) succeeded while held");
	ck_assert_msg(sysclock::now() >= sdl, "try_lock_shared_until(system_clock) gave up before its deadline");
	h.release();
	ck_assert(m.try_lock_shared_until(steady::now() + 50ms));
	m.unlock_shared();
	ck_assert(m.try_lock_shared_until(sysclock::now() + 50ms));
	m.unlock_shared();
}
END_TEST

START_TEST(shared_timed_mutex_try_lock_until_times_out_on_steady_and_system_clock)
{
	std::shared_timed_mutex m;
	Holder<std::shared_timed_mutex> h(m, false);

	auto dl = steady::now() + 50ms;
	ck_assert_msg(!m.try_lock_until(dl), "try_lock_until(steady_clock) succeeded while read-held");
	ck_assert_msg(steady::now() >= dl, "try_lock_until(steady_clock) gave up before its deadline");
	auto sdl = sysclock::now() + 50ms;
	ck_assert_msg(!m.try_lock_until(sdl), "try_lock_until(system_clock) succeeded while read-held");
	ck_assert_msg(sysclock::now() >= sdl, "try_lock_until(system_clock) gave up before its deadline");
	h.release();
	ck_assert(m.try_lock_until(steady::now() + 50ms));
	m.unlock();
	ck_assert(m.try_lock_until(sysclock::now() + 50ms));
	m.unlock();
}
END_TEST

START_TEST(shared_timed_mutex_timed_locks_on_free_mutex_succeed_even_with_past_deadline)
{
	std::shared_timed_mutex m;

	ck_assert(m.try_lock_until(steady::now() - 1s));
	m.unlock();
	ck_assert(m.try_lock_until(sysclock::now() - 1s));
	m.unlock();
	ck_assert(m.try_lock_shared_until(steady::now() - 1s));
	m.unlock_shared();
	ck_assert(m.try_lock_shared_until(sysclock::now() - 1s));
	m.unlock_shared();
	ck_assert(m.try_lock_for(0ms));
	m.unlock();
	ck_assert(m.try_lock_shared_for(0ms));
	m.unlock_shared();
}
END_TEST

START_TEST(shared_timed_mutex_try_lock_for_succeeds_when_holder_releases_in_time)
{
	std::shared_timed_mutex m;
	Holder<std::shared_timed_mutex> h(m, false);
	std::thread rel([&] {
		std::this_thread::sleep_for(50ms);
		h.release();
	});

	ck_assert_msg(m.try_lock_for(5s), "try_lock_for(5s) failed although the reader left after 50 ms");
	m.unlock();
	rel.join();
	Holder<std::shared_timed_mutex> w(m, true);
	std::thread rel2([&] {
		std::this_thread::sleep_for(50ms);
		w.release();
	});
	ck_assert_msg(m.try_lock_shared_for(5s),
		      "try_lock_shared_for(5s) failed although the writer left after 50 ms");
	m.unlock_shared();
	rel2.join();
}
END_TEST

/* A reader that has read many times (warm), then a timed writer gives up:
 * later writers must still be kept out while the reader holds it. */
START_TEST(shared_timed_mutex_writers_stay_excluded_after_timed_writer_gives_up)
{
	std::shared_timed_mutex m;
	std::atomic<bool> held{ false }, release{ false };
	std::thread r([&] {
		for (int i = 0; i < 2000; i++) {
			m.lock_shared();
			m.unlock_shared();
		}
		m.lock_shared();
		held.store(true);
		while (!release.load())
			std::this_thread::sleep_for(1ms);
		m.unlock_shared();
	});
	while (!held.load())
		std::this_thread::sleep_for(1ms);
	bool a = m.try_lock_for(30ms);
	if (a)
		m.unlock();
	bool b = m.try_lock();
	if (b)
		m.unlock();
	bool c = m.try_lock_until(steady::now() + 30ms);
	if (c)
		m.unlock();
	release.store(true);
	r.join();
	ck_assert_msg(!a, "try_lock_for(30ms) got the lock while a reader held it");
	ck_assert_msg(!b, "try_lock got the lock while a reader held it (after a timed writer gave up)");
	ck_assert_msg(!c, "try_lock_until got the lock while a reader held it (after a timed writer gave up)");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Stress                                                              */
/* ------------------------------------------------------------------ */

namespace {

struct Stress {
	std::atomic<int> readers{ 0 }, writers{ 0 };
	long plain = 0;
	std::atomic<long> wr_ok{ 0 }, rd_ok{ 0 }, bad{ 0 }, ops{ 0 };
	std::atomic<int> finished{ 0 };
	std::atomic<bool> stop{ false };
	char msg[200] = "";

	void violation(const char *m)
	{
		if (bad.fetch_add(1) == 0)
			std::snprintf(msg, sizeof(msg), "%s", m);
	}
	void read_section()
	{
		readers.fetch_add(1);
		if (writers.load() != 0)
			violation("reader inside beside a writer");
		for (volatile int i = 0; i < 50; i++)
			;
		if (writers.load() != 0)
			violation("reader inside beside a writer");
		readers.fetch_sub(1);
		rd_ok.fetch_add(1);
	}
	void write_section()
	{
		if (writers.fetch_add(1) != 0)
			violation("two writers inside");
		if (readers.load() != 0)
			violation("writer inside beside a reader");
		long v = plain;
		for (volatile int i = 0; i < 50; i++)
			;
		plain = v + 1;
		wr_ok.fetch_add(1);
		if (readers.load() != 0)
			violation("writer inside beside a reader");
		writers.fetch_sub(1);
	}
};

/*
 * Runs op in nthreads threads for 1 s.  Fails (without hanging until the
 * test's timeout) if no operation completes for 1.5 s, or if a thread is
 * still stuck in the mutex 3 s after the run ended.
 */
template <class M, class Op> void run_stress(Stress &s, M &m, int nthreads, Op op)
{
	std::vector<std::thread> ts;

	for (int t = 0; t < nthreads; t++)
		ts.emplace_back([&, t] {
			unsigned seed = 12345u + 977u * (unsigned)t;
			while (!s.stop.load(std::memory_order_relaxed) && s.bad.load() == 0) {
				seed = seed * 1103515245u + 12345u;
				op(s, m, (seed >> 8) % 8);
				s.ops.fetch_add(1, std::memory_order_relaxed);
			}
			s.finished.fetch_add(1);
		});
	auto start = steady::now(), last_change = start;
	long last = -1;
	while (steady::now() - start < 1s) {
		std::this_thread::sleep_for(20ms);
		long n = s.ops.load();
		if (n != last) {
			last = n;
			last_change = steady::now();
		}
		if (steady::now() - last_change > 1500ms)
			ck_abort_msg("no operation on the mutex completed for 1.5 s after %ld had (deadlock or "
				     "lost wake-up)", n);
	}
	s.stop.store(true);
	auto end = steady::now();
	while (s.finished.load() < nthreads) {
		if (steady::now() - end > 3s)
			ck_abort_msg("%d of %d threads still blocked in the mutex 3 s after the run ended "
				     "(deadlock or lost wake-up; %ld operations had completed)",
				     nthreads - s.finished.load(), nthreads, s.ops.load());
		std::this_thread::sleep_for(10ms);
	}
	for (auto &t : ts)
		t.join();
}

} // namespace

START_TEST(shared_mutex_stress_keeps_writers_alone)
{
	std::shared_mutex m;
	Stress s;

	run_stress(s, m, 6, [](Stress &s, std::shared_mutex &m, unsigned k) {
		switch (k) {
		case 0:
		case 1:
			m.lock();
			s.write_section();
			m.unlock();
			break;
		case 2:
			if (m.try_lock()) {
				s.write_section();
				m.unlock();
			}
			break;
		case 3:
			if (m.try_lock_shared()) {
				s.read_section();
				m.unlock_shared();
			}
			break;
		default:
			m.lock_shared();
			s.read_section();
			m.unlock_shared();
			break;
		}
	});
	ck_assert_msg(s.bad.load() == 0, "%ld violations; first: %s", s.bad.load(), s.msg);
	ck_assert_msg(s.plain == s.wr_ok.load(), "lost update: %ld increments, %ld write sections", s.plain,
		      s.wr_ok.load());
	ck_assert_msg(s.wr_ok.load() > 100 && s.rd_ok.load() > 100, "too little progress: %ld writes, %ld reads",
		      s.wr_ok.load(), s.rd_ok.load());
}
END_TEST

START_TEST(shared_timed_mutex_stress_keeps_writers_alone)
{
	std::shared_timed_mutex m;
	Stress s;

	run_stress(s, m, 6, [](Stress &s, std::shared_timed_mutex &m, unsigned k) {
		switch (k) {
		case 0:
			m.lock();
			s.write_section();
			m.unlock();
			break;
		case 1:
			if (m.try_lock_for(std::chrono::microseconds(500))) {
				s.write_section();
				m.unlock();
			}
			break;
		case 2:
			if (m.try_lock_until(sysclock::now() + std::chrono::microseconds(500))) {
				s.write_section();
				m.unlock();
			}
			break;
		case 3:
			if (m.try_lock_shared_for(std::chrono::microseconds(500))) {
				s.read_section();
				m.unlock_shared();
			}
			break;
		case 4:
			if (m.try_lock_shared_until(sysclock::now() + std::chrono::microseconds(500))) {
				s.read_section();
				m.unlock_shared();
			}
			break;
		case 5:
			if (m.try_lock()) {
				s.write_section();
				m.unlock();
			}
			break;
		default:
			m.lock_shared();
			s.read_section();
			m.unlock_shared();
			break;
		}
	});
	ck_assert_msg(s.bad.load() == 0, "%ld violations; first: %s", s.bad.load(), s.msg);
	ck_assert_msg(s.plain == s.wr_ok.load(), "lost update: %ld increments, %ld write sections", s.plain,
		      s.wr_ok.load());
	ck_assert_msg(s.wr_ok.load() > 100 && s.rd_ok.load() > 100, "too little progress: %ld writes, %ld reads",
		      s.wr_ok.load(), s.rd_ok.load());
}
END_TEST

/* ------------------------------------------------------------------ */
/* A million heap-allocated mutexes                                    */
/* ------------------------------------------------------------------ */

START_TEST(million_heap_shared_mutexes_do_not_grow_rss)
{
	const int batch = 1000, batches = 1000;
	std::vector<std::shared_mutex *> v(batch);
	long rss0 = 0;

	for (int b = 0; b < batches; b++) {
		for (int i = 0; i < batch; i++)
			v[i] = new std::shared_mutex;
		for (int i = 0; i < batch; i++) {
			v[i]->lock_shared();
			v[i]->unlock_shared();
			v[i]->lock();
			v[i]->unlock();
			if (!v[i]->try_lock_shared())
				ck_abort_msg("try_lock_shared failed on a free mutex");
			v[i]->unlock_shared();
		}
		for (int i = 0; i < batch; i++)
			delete v[i];
		if (b == 0)
			rss0 = rss_bytes(); /* after warm-up */
	}
	long rss1 = rss_bytes();
	std::fprintf(stderr, "million_heap_shared_mutexes: RSS %+ld KiB\n", (rss1 - rss0) / 1024);
	ck_assert_msg(rss1 - rss0 <= 4L * 1024 * 1024,
		      "RSS grew by %ld KiB over a million shared_mutex lifetimes", (rss1 - rss0) / 1024);
}
END_TEST

START_TEST(million_heap_shared_timed_mutexes_do_not_grow_rss)
{
	const int batch = 1000, batches = 1000;
	std::vector<std::shared_timed_mutex *> v(batch);
	long rss0 = 0;

	for (int b = 0; b < batches; b++) {
		for (int i = 0; i < batch; i++)
			v[i] = new std::shared_timed_mutex;
		for (int i = 0; i < batch; i++) {
			v[i]->lock_shared();
			v[i]->unlock_shared();
			v[i]->lock();
			v[i]->unlock();
		}
		for (int i = 0; i < batch; i++)
			delete v[i];
		if (b == 0)
			rss0 = rss_bytes();
	}
	long rss1 = rss_bytes();
	std::fprintf(stderr, "million_heap_shared_timed_mutexes: RSS %+ld KiB\n", (rss1 - rss0) / 1024);
	ck_assert_msg(rss1 - rss0 <= 4L * 1024 * 1024,
		      "RSS grew by %ld KiB over a million shared_timed_mutex lifetimes", (rss1 - rss0) / 1024);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Which implementation answered                                       */
/* ------------------------------------------------------------------ */

START_TEST(rwlock_functions_used_by_shared_mutex_are_defined_in_expected_library)
{
	const char *e = std::getenv("EXPECT_RWLOCK_LIB");
	std::string expected = (e && *e) ? e : "libc.so.6";
	const char *names[] = { "pthread_rwlock_rdlock", "pthread_rwlock_wrlock", "pthread_rwlock_unlock",
				"pthread_rwlock_tryrdlock", "pthread_rwlock_trywrlock",
				"pthread_rwlock_timedrdlock", "pthread_rwlock_timedwrlock",
				"pthread_rwlock_clockrdlock", "pthread_rwlock_clockwrlock",
				"pthread_rwlock_destroy", "pthread_rwlock_init" };

	for (const char *n : names) {
		void *p = dlsym(RTLD_DEFAULT, n);
		Dl_info info;
		char buf[PATH_MAX];

		ck_assert_msg(p != nullptr, "dlsym(RTLD_DEFAULT, \"%s\") returned NULL", n);
		ck_assert_msg(dladdr(p, &info) != 0 && info.dli_fname, "dladdr found no object for %s", n);
		std::snprintf(buf, sizeof(buf), "%s", info.dli_fname);
		ck_assert_msg(expected == basename(buf), "%s is defined in %s, expected %s", n, info.dli_fname,
			      expected.c_str());
	}
	Dl_info info;
	char buf[PATH_MAX];
	ck_assert(dladdr(reinterpret_cast<void *>(&pthread_rwlock_rdlock), &info) != 0 && info.dli_fname);
	std::snprintf(buf, sizeof(buf), "%s", info.dli_fname);
	ck_assert_msg(expected == basename(buf), "pthread_rwlock_rdlock as the program calls it is in %s, expected %s",
		      info.dli_fname, expected.c_str());
}
END_TEST

static TCase *new_tcase(Suite *s, const char *name, double timeout)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, timeout);
	suite_add_tcase(s, tc);
	return tc;
}

int main()
{
	Suite *s = suite_create("shared_mutex");
	TCase *tc;

	tc = new_tcase(s, "shared_mutex", 15);
	tcase_add_test(tc, shared_mutex_try_lock_and_try_lock_shared_on_free_mutex_succeed);
	tcase_add_test(tc, shared_mutex_lock_excludes_readers_and_writers_in_other_threads);
	tcase_add_test(tc, shared_mutex_lock_shared_admits_readers_and_excludes_writers);
	tcase_add_test(tc, shared_mutex_try_lock_fails_while_caller_holds_it);
	tcase_add_test(tc, shared_mutex_lock_waits_until_reader_unlocks);
	tcase_add_test(tc, shared_mutex_lock_shared_waits_until_writer_unlocks);
	tcase_add_test(tc, shared_lock_and_unique_lock_raii_work);

	tc = new_tcase(s, "shared_timed_mutex", 15);
	tcase_add_test(tc, shared_timed_mutex_try_lock_for_times_out_while_writer_holds);
	tcase_add_test(tc, shared_timed_mutex_try_lock_for_times_out_while_reader_holds);
	tcase_add_test(tc, shared_timed_mutex_try_lock_shared_for_times_out_while_writer_holds);
	tcase_add_test(tc, shared_timed_mutex_try_lock_shared_until_times_out_on_steady_and_system_clock);
	tcase_add_test(tc, shared_timed_mutex_try_lock_until_times_out_on_steady_and_system_clock);
	tcase_add_test(tc, shared_timed_mutex_timed_locks_on_free_mutex_succeed_even_with_past_deadline);
	tcase_add_test(tc, shared_timed_mutex_try_lock_for_succeeds_when_holder_releases_in_time);
	tcase_add_test(tc, shared_timed_mutex_writers_stay_excluded_after_timed_writer_gives_up);

	/* "long": the reruns of tests/preload/run (jemalloc first) leave them out (CK_EXCLUDE_TAGS). */
	tc = new_tcase(s, "stress", 30);
	tcase_set_tags(tc, "long");
	tcase_add_test(tc, shared_mutex_stress_keeps_writers_alone);
	tcase_add_test(tc, shared_timed_mutex_stress_keeps_writers_alone);

	tc = new_tcase(s, "scale", 60);
	tcase_set_tags(tc, "long");
	tcase_add_test(tc, million_heap_shared_mutexes_do_not_grow_rss);
	tcase_add_test(tc, million_heap_shared_timed_mutexes_do_not_grow_rss);

	tc = new_tcase(s, "symbols", 10);
	tcase_add_test(tc, rwlock_functions_used_by_shared_mutex_are_defined_in_expected_library);

	return run_suite_env(s);
}
