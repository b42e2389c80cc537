/*
 * bravo.c - BRAVO's visible readers table, bias enabling and revocation.
 * See bravo.h for the protocol and its invariants.
 */
#include "bravo.h"

#include "events.h"

#include <errno.h>
#include <limits.h>
#include <sys/mman.h>
#include <unistd.h>

struct vr_table *_Atomic vr_table;
unsigned bravo_slowdown_n = 9;
unsigned long (*bravo_tolerated_slots)(const void *lock);
_Atomic uint64_t bravo_epoch;
__thread char bravo_self __attribute__((tls_model("initial-exec")));

static uint32_t round_up_pow2(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (UINT32_C(1) << 30))
		p <<= 1;
	return p;
}

uint32_t vr_table_default_slots(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	if (cpus < 1)
		cpus = 1;
	/* 64 slots per CPU keeps collisions rare; the paper used 4096 for 72. */
	if (cpus > (1 << 20))
		cpus = 1 << 20;
	return round_up_pow2((uint32_t)cpus * 64u < VR_TABLE_MIN_SLOTS ?
			     VR_TABLE_MIN_SLOTS : (uint32_t)cpus * 64u);
}

bool vr_table_init(uint32_t slots)
{
	struct vr_table *table, *none = NULL;
	size_t bytes;

	uint64_t no_epoch = 0;

	if (atomic_load_explicit(&vr_table, memory_order_acquire))
		return true;
	/* The time base, before any InhibitUntil can be stored. */
	atomic_compare_exchange_strong_explicit(&bravo_epoch, &no_epoch, bravo_clock() - 1,
						memory_order_relaxed, memory_order_relaxed);
	if (slots == 0)
		slots = vr_table_default_slots();
	slots = round_up_pow2(slots < VR_TABLE_MIN_SLOTS ? VR_TABLE_MIN_SLOTS : slots);
	bytes = sizeof(*table) + (size_t)slots * sizeof(vr_slot_t);
	/* mmap: page-aligned (no false sharing with neighbours), no malloc. */
	table = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (table == MAP_FAILED)
		return false;
	table->mask = slots - 1;
	/* Release: the mask (and zeroed slots) are seen by whoever sees the table. */
	if (!atomic_compare_exchange_strong_explicit(&vr_table, &none, table,
						     memory_order_release,
						     memory_order_acquire))
		munmap(table, bytes);
	return true;
}

uint32_t vr_table_slots(void)
{
	struct vr_table *t = atomic_load_explicit(&vr_table, memory_order_acquire);

	return t ? t->mask + 1 : 0;
}

/*
 * Tokens come from a process-wide counter in blocks of 2^16 per thread, so
 * that a program creating many short-lived locks does not bounce one line.
 * 64 bits never wrap; zero is never handed out.
 */
static _Atomic uint64_t token_blocks;
static __thread uint64_t token_next, token_end;

static uint64_t token_new(void)
{
	if (token_next == token_end) {
		token_next = (atomic_fetch_add_explicit(&token_blocks, 1, memory_order_relaxed) + 1) << 16;
		token_end = token_next + (UINT64_C(1) << 16);
	}
	return token_next++;
}

/* The lock's token, drawn now if it has none (racing slow readers agree). */
static void bravo_token_ensure(struct bravo *b)
{
	uint64_t t = atomic_load_explicit(&b->token, memory_order_relaxed);

	if (t == 0)
		atomic_compare_exchange_strong_explicit(&b->token, &t, token_new(),
							memory_order_relaxed, memory_order_relaxed);
}

void bravo_enable_slowpath(struct bravo *b)
{
	uint64_t w = atomic_load_explicit(&b->word, memory_order_relaxed);

	if (w & (BRAVO_RBIAS | BRAVO_DRAINING | BRAVO_WAITERS_MASK))
		return; /* already on, draining, or a writer-preferring writer waits */
	if (!vr_table_init(0) || bravo_inhibited(w, bravo_now()))
		return;
	/* Ordered before RBias by the release CAS below. */
	bravo_token_ensure(b);
	/*
	 * One attempt: losing the race means another reader set it or a writer
	 * arrived.  Release pairs with the fast path's acquire of the word, so
	 * a reader that sees RBias also sees the table.
	 */
	atomic_compare_exchange_strong_explicit(&b->word, &w, w | BRAVO_RBIAS,
						memory_order_release,
						memory_order_relaxed);
}

static void bravo_inhibit(struct bravo *b, uint64_t start)
{
	uint64_t now = bravo_now(), took = now - start;
	/* Clamp: a window past half the 48-bit span would read as the past. */
	uint64_t window = took && bravo_slowdown_n > (UINT64_C(1) << 46) / took ?
			  UINT64_C(1) << 46 : took * bravo_slowdown_n;
	uint64_t until = now + window;
	uint64_t w = atomic_load_explicit(&b->word, memory_order_relaxed);
	uint64_t low = (UINT64_C(1) << BRAVO_TIME_SHIFT) - 1;

	/* CAS loop: waiting writers may change the count bits meanwhile. */
	while (!atomic_compare_exchange_weak_explicit(&b->word, &w,
						      (w & low) | (until << BRAVO_TIME_SHIFT),
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

static const void *token_of(struct bravo *b)
{
	return (const void *)(uintptr_t)atomic_load_explicit(&b->token, memory_order_relaxed);
}

static unsigned long tolerated(const void *lock)
{
	unsigned long (*hook)(const void *) = bravo_tolerated_slots;

	return hook ? hook(lock) : 0;
}

/* Slots holding token, counting no further than limit + 1. */
static unsigned long vr_count(struct vr_table *t, const void *token, unsigned long limit)
{
	unsigned long n = 0;

	for (uint32_t i = 0; i <= t->mask && n <= limit; i++)
		/* seq_cst: ordered after the RBias clear (Dekker, see bravo.h). */
		if (atomic_load_explicit(&t->slot[i], memory_order_seq_cst) == token)
			n++;
	return n;
}

/* True while more than `tolerate` slots hold token. */
static bool vr_holds(struct vr_table *t, const void *token, unsigned long tolerate)
{
	return token && vr_count(t, token, tolerate) > tolerate;
}

/*
 * One step of waiting for readers that cannot wake us (a fast reader's
 * unlock is a plain store): spin, then yield a few times, then sleep with
 * a doubling interval up to 1 ms, so a writer behind a long-held read lock
 * costs about a thousand short wake-ups a second, not a CPU.
 */
struct backoff {
	unsigned step;
};

static int backoff_wait(struct backoff *bo, const struct deadline *dl)
{
	unsigned step = bo->step++;

	if (step < wait_spin_budget) {
		cpu_relax();
		return 0;
	}
	if (deadline_passed(dl))
		return ETIMEDOUT;
	step -= wait_spin_budget;
	if (step < 4) {
		wait_yield();
		return 0;
	}
	step -= 4;
	wait_sleep_ns(step < 6 ? UINT64_C(16000) << step : UINT64_C(1000000), dl);
	return 0;
}

/* Wait until at most `tolerate` slots hold token. */
static int vr_wait_for_readers(struct vr_table *t, const void *token, const struct deadline *dl,
			       unsigned long tolerate)
{
	struct backoff bo = { 0 };
	int r;

	if (tolerate == 0) {
		/* The common case: wait on each slot of the lock in turn. */
		for (uint32_t i = 0; i <= t->mask; i++)
			while (atomic_load_explicit(&t->slot[i], memory_order_seq_cst) == token)
				if ((r = backoff_wait(&bo, dl)))
					return r;
	} else {
		while (vr_holds(t, token, tolerate))
			if ((r = backoff_wait(&bo, dl)))
				return r;
	}
	/*
	 * Acquire: pairs with the release store of each reader's unlock that
	 * we saw, so their critical sections happen before ours.
	 */
	atomic_thread_fence(memory_order_acquire);
	return 0;
}

static void revoked_event(uint64_t t0)
{
	void (*revoked)(uint64_t) = lock_event_revoked;

	if (revoked)
		revoked(lock_event_clock_ns() - t0);
}

int bravo_revoke(struct bravo *b, const void *lock, const struct deadline *dl,
		 enum bravo_wait how, uint64_t *start)
{
	uint64_t t0 = lock_event_revoked ? lock_event_clock_ns() : 0;
	uint64_t old = atomic_load_explicit(&b->word, memory_order_relaxed);
	struct vr_table *t = bravo_table_of(b);
	const void *token = token_of(b);
	bool cleared = false;
	unsigned long tolerate;
	int r = 0;

	if (*start == 0)
		*start = bravo_now();
	if (old & BRAVO_RBIAS) {
		/* seq_cst RMW: the Dekker pair with bravo_read_fast (see bravo.h). */
		old = atomic_fetch_and_explicit(&b->word, ~(BRAVO_RBIAS | BRAVO_USED),
						memory_order_seq_cst);
		cleared = true;
		if (!(old & (BRAVO_USED | BRAVO_DRAINING))) {
			/* No reader took the fast path: nothing to wait for. */
			revoked_event(t0);
			return 0;
		}
	}
	tolerate = tolerated(lock);
	if (!t || !vr_holds(t, token, tolerate))
		goto clear;
	switch (how) {
	case BRAVO_RELEASE:
		atomic_fetch_or_explicit(&b->word, BRAVO_DRAINING, memory_order_relaxed);
		return EAGAIN;
	case BRAVO_NOWAIT:
		r = EBUSY;
		break;
	case BRAVO_HOLD:
		r = vr_wait_for_readers(t, token, dl, tolerate);
		break;
	}
	if (r) {
		/*
		 * Fast readers are still in the table and the caller is about to
		 * release the underlying lock: set RBias again, so the next writer
		 * revokes (and scans) too.  We still hold write permission, the
		 * only state in which RBias may change hands.  Release (no
		 * store-load order needed): readers that see RBias set need
		 * only the table, published long before.
		 */
		if (cleared)
			atomic_fetch_or_explicit(&b->word, BRAVO_RBIAS | BRAVO_USED,
						 memory_order_release);
		return r;
	}
clear:
	/* The table is clear of the lock: end any drain, inhibit bias. */
	atomic_thread_fence(memory_order_acquire);
	if (old & BRAVO_DRAINING || atomic_load_explicit(&b->word, memory_order_relaxed) & BRAVO_DRAINING)
		atomic_fetch_and_explicit(&b->word, ~BRAVO_DRAINING, memory_order_relaxed);
	bravo_inhibit(b, *start);
	revoked_event(t0);
	return 0;
}

int bravo_drain_wait(struct bravo *b, const void *lock, const struct deadline *dl)
{
	struct vr_table *t = bravo_table_of(b);

	return t ? vr_wait_for_readers(t, token_of(b), dl, tolerated(lock)) : 0;
}

unsigned long bravo_fast_readers(struct bravo *b)
{
	struct vr_table *t = bravo_table_of(b);
	const void *token = token_of(b);

	return t && token ? vr_count(t, token, ULONG_MAX - 1) : 0;
}

bool bravo_has_fast_readers(struct bravo *b, const void *lock)
{
	struct vr_table *t = bravo_table_of(b);

	/* Without USED no reader entered through the table since the last scan. */
	if (!t || !(atomic_load_explicit(&b->word, memory_order_acquire) & (BRAVO_USED | BRAVO_DRAINING)))
		return false;
	return vr_holds(t, token_of(b), tolerated(lock));
}

enum bravo_miss bravo_miss_cause(struct bravo *b, uint64_t w, const void *lock)
{
	struct vr_table *t = bravo_table_of(b);
	const void *in_slot;

	if (w & BRAVO_WAITERS_MASK)
		return BRAVO_MISS_WRITER_WAITING;
	if (!(w & BRAVO_RBIAS))
		return bravo_inhibited(w, bravo_now()) ? BRAVO_MISS_INHIBITED : BRAVO_MISS_BIAS_OFF;
	/* Bias was on: either our slot was taken, or a writer got between. */
	in_slot = t ? atomic_load_explicit(vr_slot_of(t, lock), memory_order_relaxed) : NULL;
	return in_slot && in_slot != token_of(b) ? BRAVO_MISS_COLLISION : BRAVO_MISS_LOST_RACE;
}
