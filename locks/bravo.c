/*
 * bravo.c - BRAVO's visible readers table, bias enabling and revocation.
 * See bravo.h for the protocol and its invariants.
 */
#include "bravo.h"

#include "events.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

struct vr_table *_Atomic vr_table;
unsigned bravo_slowdown_n = 9;
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

void bravo_enable_slowpath(struct bravo *b)
{
	uint64_t w = atomic_load_explicit(&b->word, memory_order_relaxed);

	if (w & (BRAVO_RBIAS | BRAVO_WAITERS_MASK))
		return; /* already on, or a writer-preferring writer waits */
	if (!vr_table_init(0) || bravo_inhibited(w, bravo_now()))
		return;
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

/* Wait until no slot holds lock: spin, then yield (readers never wake us). */
static int vr_wait_for_readers(struct vr_table *t, const void *lock, const struct deadline *dl,
			       bool nowait)
{
	for (uint32_t i = 0; i <= t->mask; i++) {
		unsigned spins = 0;

		/* seq_cst: ordered after the RBias clear (Dekker, see bravo.h). */
		while (atomic_load_explicit(&t->slot[i], memory_order_seq_cst) == lock) {
			if (nowait)
				return EBUSY;
			if (++spins < wait_spin_budget) {
				cpu_relax();
				continue;
			}
			if (deadline_passed(dl))
				return ETIMEDOUT;
			wait_yield();
		}
	}
	atomic_thread_fence(memory_order_acquire);
	return 0;
}

int bravo_revoke(struct bravo *b, const void *lock, const struct deadline *dl, bool nowait)
{
	void (*revoked)(uint64_t) = lock_event_revoked;
	uint64_t t0 = revoked ? lock_event_clock_ns() : 0;
	uint64_t start = bravo_now(), old;
	int r;

	/* seq_cst RMW: the Dekker pair with bravo_read_fast (see bravo.h). */
	old = atomic_fetch_and_explicit(&b->word, ~(BRAVO_RBIAS | BRAVO_USED), memory_order_seq_cst);
	if (!(old & BRAVO_USED)) {
		/* No reader took the fast path: nothing to wait for. */
		if (revoked)
			revoked(lock_event_clock_ns() - t0);
		return 0;
	}
	r = vr_wait_for_readers(bravo_table_of(b), lock, dl, nowait);
	if (r) {
		/*
		 * Fast readers are still in the table and the caller is about to
		 * release the underlying lock: set RBias again, so the next writer
		 * revokes (and scans) too.  We still hold write permission, the
		 * only state in which RBias may change hands.
		 */
		atomic_fetch_or_explicit(&b->word, BRAVO_RBIAS | BRAVO_USED, memory_order_release);
		return r;
	}
	bravo_inhibit(b, start);
	if (revoked)
		revoked(lock_event_clock_ns() - t0);
	return 0;
}

bool bravo_has_fast_readers(struct bravo *b, const void *lock)
{
	struct vr_table *t = bravo_table_of(b);

	/* Without USED no reader entered through the table since the last scan. */
	if (!t || !(atomic_load_explicit(&b->word, memory_order_acquire) & BRAVO_USED))
		return false;
	for (uint32_t i = 0; i <= t->mask; i++)
		if (atomic_load_explicit(&t->slot[i], memory_order_acquire) == lock)
			return true;
	return false;
}

enum bravo_miss bravo_miss_cause(uint64_t w, const void *lock)
{
	return bravo_miss_cause_in(atomic_load_explicit(&vr_table, memory_order_acquire), w, lock);
}

enum bravo_miss bravo_miss_cause_in(struct vr_table *t, uint64_t w, const void *lock)
{
	const void *in_slot;

	if (w & BRAVO_WAITERS_MASK)
		return BRAVO_MISS_WRITER_WAITING;
	if (!(w & BRAVO_RBIAS))
		return bravo_inhibited(w, bravo_now()) ? BRAVO_MISS_INHIBITED : BRAVO_MISS_BIAS_OFF;
	/* Bias was on: either our slot was taken, or a writer got between. */
	in_slot = t ? atomic_load_explicit(vr_slot_of(t, lock), memory_order_relaxed) : NULL;
	return in_slot && in_slot != lock ? BRAVO_MISS_COLLISION : BRAVO_MISS_LOST_RACE;
}
