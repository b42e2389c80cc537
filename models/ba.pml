/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ba.pml - SPIN model of the Brandenburg-Anderson phase-fair lock as
 * implemented in locks/ba.{h,c}: the rin/rout reader indicator, the writer
 * phase (BA_PRES plus sequence number, which is also the writers' mutex),
 * sleeping writers (BA_WSLEEP, wseq) and futex parking.
 *
 * What is modelled (C function -> Promela):
 *   ba_read_lock            fetch_add(rin, RINC), then the slow path
 *   ba_read_lock_slowpath   re-read rin, CAS in BA_RPARK, park on rin's
 *                           writer half, on time-out ba_read_withdraw
 *   ba_read_trylock         CAS loop adding RINC while no writer is present
 *   ba_read_unlock(_wake)   fetch_add(rout, ROUT_INC); if BA_WPARK was set,
 *                           fetch_and(~WPARK) and wake one
 *   ba_write_begin          one CAS on a rin without BA_PRES that sets it
 *                           and the next sequence (BA_WSLEEP too if this
 *                           writer slept): returns the ticket; else read
 *                           wseq, CAS in BA_WSLEEP while BA_PRES is set,
 *                           park on wseq
 *   ba_write_wait           drained test, fetch_or(WPARK) and re-check in
 *                           the returned value, park on rout
 *   ba_write_unlock         fetch_and(~(PRES|RPARK|WSLEEP)), wake all
 *                           readers if RPARK was set; if WSLEEP was set,
 *                           bump wseq and wake one writer
 *   ba_write_trylock        a CAS that announces only on a rin without
 *                           BA_PRES whose count equals rout's (one step)
 *
 * Abstractions:
 *  - rin is the tuple (cnt, pres, rpark, wsleep, seq), rout is (ocnt,
 *    wpark), wseq is abstracted (wwin, wbump below); each
 *    C atomic operation on one of the words is one atomic step on its
 *    tuple.  A CAS loop that re-reads until its condition fails
 *    (ba_read_trylock, ba_read_withdraw) is one conditional atomic step:
 *    the loop ends exactly when one CAS succeeds on a value meeting the
 *    condition, or a read value fails it.
 *  - Counts are kept modulo CNT (4): arrivals minus departures is at most
 *    the number of readers, so equality modulo CNT is equality modulo 2^31.
 *    The sequence is kept modulo SEQ (4) instead of 2^29; see TMO.
 *  - Futexes: futex_wait(word, val) atomically compares the word and, if
 *    equal, puts the thread in the word's wait set (otherwise it returns at
 *    once, EAGAIN); the thread then blocks until a futex_wake takes it out
 *    of the set (a wake of one picks any sleeper), or until it times out.
 *    Spurious returns (EINTR) are not modelled: every caller re-checks its
 *    condition in a loop, so they only add iterations.  A lost wake-up
 *    shows as a thread blocked forever: an invalid end state.
 *  - Spinning (ba_spin_phase, wait_spin, ba_write_begin's spin) is only
 *    re-reading: the model goes straight to the park path.  The CAS that
 *    marks BA_WSLEEP is modelled as succeeding iff BA_PRES is still set
 *    (the code retries on any other change of rin, re-reading wseq: a
 *    later schedule of the same steps).
 *  - Deadlines: timed operations may time out while parked, at most TMO
 *    times in a whole run (a global budget shared with the try-lock race
 *    below).  The sequence is kept modulo SEQ = TMO + 2.  A reader sees its
 *    writer phase come back only after SEQ - 1 writer phases in a row that
 *    ended without a critical section (2^29 - 1 in the code) while it was
 *    descheduled; such a phase comes only from a time-out, and the budget
 *    bounds those to TMO < SEQ - 1, as 2^29 does in practice.  The write
 *    try-lock announces by a CAS only on a drained lock, so it always
 *    enters.  -DSEQWRAP=1 models the try-lock the code had before: a count
 *    test of two separate loads, then an unconditional announce that can
 *    count a reader arriving in between and leave again; with no bound on
 *    such phases SPIN finds the resulting hang (the reader waits for a
 *    phase to end, the writer of that phase counted it and waits for it).
 *
 * Memory ordering: the model is sequentially consistent.  Every update of
 * rin and rout is an RMW, so each word has one modification order
 * and SC is exact for the values the RMWs see; the orderings in the code
 * (acquire on the reader's arrival and the writer's drained test, release
 * on departures and on the writer's leave, acq_rel on the announce) give
 * the happens-before between critical sections that the interleaving model
 * takes for granted.  The protocol needs no store-load (Dekker) ordering:
 * a reader and a writer always meet on the same word through RMWs (the
 * reader's arrival vs the writer's announce on rin, departures vs the
 * WPARK fetch_or on rout).
 *
 *  - Operations: every thread loops forever by default, so a thread that
 *    sleeps with nobody depending on it (a writer waiting for the writer
 *    side while the others go on) is starved, not deadlocked, and a safety
 *    search cannot see its lost wake-up.  -DOPS=n bounds the operations of
 *    all threads together: once they are spent every thread must be back
 *    at its start, and one still asleep is an invalid end state.
 *
 * Properties:
 *  - mutual exclusion: a writer in its critical section sees no reader and
 *    no other writer there, a reader sees no writer (assertions);
 *  - phase-fairness: a reader that arrived during a writer phase enters
 *    after at most one writer critical section (assertion on a ghost count);
 *  - no deadlock and no lost wake-up: invalid end states (a writer's lost
 *    wake-up only with OPS).
 *
 * Parameters: NR readers (2), NW writers (2), TMO (1), TRY (1: try-lock
 * operations too), SEQWRAP (0), OPS (0), MUTANT 0 or:
 *   1  ba_write_unlock does not wake parked readers
 *   2  ba_write_wait parks without re-checking the count it got back
 *      from its fetch_or(WPARK)
 *   3  ba_write_trylock announces (and enters) without its count test
 *   4  a reader parks without setting BA_RPARK
 *   5  a writer that slept takes the writer side without BA_WSLEEP
 *      (needs 3 writers: the others' sleep is then forgotten)
 *   6  ba_write_unlock wakes a sleeping writer without bumping wseq
 *   7  a writer marks BA_WSLEEP without checking that BA_PRES is set
 *   8  a writer skips the marking CAS when rin, read before wseq, already
 *      showed BA_WSLEEP (the leave may have come in between)
 */

#ifndef NR
#define NR 2
#endif
#ifndef NW
#define NW 2
#endif
#ifndef TMO
#define TMO 1
#endif
#ifndef TRY
#define TRY 1
#endif
#ifndef SEQWRAP
#define SEQWRAP 0
#endif
#ifndef MUTANT
#define MUTANT 0
#endif
#ifndef OPS
#define OPS 0
#endif

#define CNT (NR + 1)
#define SEQ (TMO + 2)

/* rin */
byte cnt;
bool pres;
bool rpark;
bool wsleep;
byte seq;
/* rout */
byte ocnt;
bool wpark;
/*
 * wseq, the writers' futex word, as the only thing its value tells: did a
 * leave bump it since this writer read it?  wwin: writers between their
 * read of wseq and their park; wbump: those of them it was bumped for
 * (exact for the 32-bit counter, which no run wraps; the bits are zero
 * outside the window, so they add no states elsewhere).
 */
byte wwin;
byte wbump;
/* futex wait sets: bit i = thread i (readers 0..NR-1, writers NR..) */
byte fx_rin;
byte fx_rout;
byte fx_ws;
/* deadline budget */
byte tmo = TMO;
/* operations left to all threads together (OPS = 0: no bound) */
byte ops = OPS;
/* ghosts */
byte rcs;
byte wcs;
bool waiting[NR];
byte seen[NR];

#define BIT(id) (1 << (id))

#define OP_BLOCK 0
#define OP_TIMED 1
#define OP_TRY   2

/* leave the wait set, by a wake (r = 0) or a time-out (r = 1) */
inline park_block(set, id, timed, r)
{
	if
	:: (set & BIT(id)) == 0 -> r = 0
	:: atomic { timed && tmo > 0 && (set & BIT(id)) != 0 ->
		set = set & ~BIT(id); tmo--; r = 1 }
	fi
}

/* futex_wake(word, 1): any one sleeper */
inline wake_one(set)
{
	atomic {
		if
		:: set == 0
		:: set & BIT(0) -> set = set & ~BIT(0)
		:: set & BIT(1) -> set = set & ~BIT(1)
		:: set & BIT(2) -> set = set & ~BIT(2)
		:: set & BIT(3) -> set = set & ~BIT(3)
		:: set & BIT(4) -> set = set & ~BIT(4)
		fi
	}
}

proctype reader(byte id)
{
	byte op, wseq, vcnt;
	bool vrpark, timed, r;

end:	do
	:: atomic { (OPS == 0 || ops > 0) -> ops = (OPS == 0 -> 0 : ops - 1) };
		if
		:: op = OP_BLOCK
		:: TMO > 0 -> op = OP_TIMED
		:: TRY -> op = OP_TRY
		fi;
		timed = (op != OP_BLOCK);
		if
		:: op == OP_TRY ->
			/* ba_read_trylock */
			atomic {
				if
				:: !pres -> cnt = (cnt + 1) % CNT; r = 1
				:: else -> r = 0
				fi
			}
			if :: r -> goto acquired :: else -> goto done fi
		:: else
		fi;
		/* ba_read_lock: fetch_add(rin, RINC), acquire */
		atomic {
			cnt = (cnt + 1) % CNT;
			if
			:: !pres -> goto acquired
			:: else -> wseq = seq; waiting[id] = 1; seen[id] = 0
			fi
		}
		/* ba_read_lock_slowpath(wphase = PRES | wseq) */
slowpath:
		/* v = rin; if the phase changed, enter (v's PRES/seq are wphase) */
		atomic {
			if
			:: !pres || seq != wseq -> goto acquired
			:: else -> vrpark = rpark; vcnt = cnt
			fi
		}
#if MUTANT != 4
		if
		:: !vrpark ->
			/* CAS(rin, v, v | RPARK) */
			atomic {
				if
				:: pres && rpark == vrpark && cnt == vcnt && seq == wseq ->
					rpark = 1; r = 1
				:: else -> r = 0
				fi;
				vcnt = 0
			}
			if :: !r -> goto slowpath :: else fi
		:: else
		fi;
		vrpark = 1;
#endif
		/* wait_park(rin's writer half, v | RPARK) */
		atomic {
			if
			:: pres && rpark == vrpark && seq == wseq ->
				fx_rin = fx_rin | BIT(id)
			:: else
			fi;
			vrpark = 0
		}
		park_block(fx_rin, id, timed, r);
		if
		:: r ->
			/* ba_read_withdraw */
			atomic {
				if
				:: pres && seq == wseq ->
					cnt = (cnt + CNT - 1) % CNT;
					waiting[id] = 0;
					goto done
				:: else
				fi
			}
		:: else
		fi;
		goto slowpath;
acquired:
		atomic {
			rcs++;
			assert(wcs == 0);
			assert(seen[id] <= 1);
			waiting[id] = 0
		}
		rcs--;
		/* ba_read_unlock: fetch_add(rout, ROUT_INC), release */
		atomic { r = wpark; ocnt = (ocnt + 1) % CNT }
		if
		:: r ->
			wpark = 0;	/* fetch_and(~WPARK) */
			wake_one(fx_rout)
		:: else
		fi;
done:		atomic { op = 0; wseq = 0; vcnt = 0; vrpark = 0; timed = 0; r = 0 }
	od
}

proctype writer(byte id)
{
	byte op, ticket, v, i;
	bool timed, r, slept, vws;

end:	do
	:: atomic { (OPS == 0 || ops > 0) -> ops = (OPS == 0 -> 0 : ops - 1) };
		if
		:: op = OP_BLOCK
		:: TMO > 0 -> op = OP_TIMED
		:: TRY -> op = OP_TRY
		fi;
		timed = (op != OP_BLOCK);
		if
		:: op == OP_TRY ->
			/*
			 * ba_write_trylock: load rout, then CAS rin only if no
			 * writer is present and its count equals it (one step).
			 * SEQWRAP: the old two-load test, where a reader can
			 * arrive and another depart between the loads, the
			 * announce counts the new reader and the try-lock leaves
			 * again (see the header).
			 */
			if
			:: atomic { SEQWRAP -> v = cnt }
				if
				:: v != ocnt -> goto done
				:: else
				fi;
				atomic {
					if
					:: !pres -> ticket = cnt; pres = 1; seq = (seq + 1) % SEQ
					:: else -> goto done
					fi
				}
				if
				:: ocnt == ticket -> goto cs
				:: else -> goto leave
				fi
			:: atomic {
				if
				:: !pres && (MUTANT == 3 || cnt == ocnt) ->
					ticket = cnt; pres = 1; seq = (seq + 1) % SEQ;
					goto cs
				:: else -> goto done
				fi
			   }
			fi
		:: else
		fi;
		/* ba_write_begin */
enter:
		atomic {
			if
			:: !pres ->
				ticket = cnt; pres = 1; seq = (seq + 1) % SEQ;
#if MUTANT != 5
				wsleep = slept;
#endif
				goto wait
			:: else -> vws = wsleep
			fi
		}
		atomic { wwin = wwin | BIT(id); wbump = wbump & ~BIT(id) }	/* read wseq */
		/* CAS(rin, v, v | WSLEEP): succeeds while a writer is present */
		atomic {
			if
#if MUTANT == 7
			:: true -> wsleep = 1; r = 1
#elif MUTANT == 8
			:: vws -> r = 1
			:: !vws && pres -> wsleep = 1; r = 1
			:: !vws && !pres -> r = 0; wwin = wwin & ~BIT(id); wbump = wbump & ~BIT(id)
#else
			:: pres -> wsleep = 1; r = 1
			:: else -> r = 0; wwin = wwin & ~BIT(id); wbump = wbump & ~BIT(id)
#endif
			fi;
			vws = 0
		}
		if :: !r -> goto enter :: else fi;
		slept = 1;
		/* wait_park(wseq, the value read): sleep unless it was bumped since */
		atomic {
			if :: (wbump & BIT(id)) == 0 -> fx_ws = fx_ws | BIT(id) :: else fi;
			wwin = wwin & ~BIT(id); wbump = wbump & ~BIT(id)
		}
		park_block(fx_ws, id, timed, r);
		if :: r -> goto done :: else -> goto enter fi;
		/* ba_write_wait */
wait:
		if :: ocnt == ticket -> goto cs :: else fi;
		atomic {
			/* v = fetch_or(rout, WPARK) | WPARK; re-check its count */
			v = ocnt; wpark = 1;
#if MUTANT != 2
			if :: v == ticket -> v = 0; goto cs :: else fi
#endif
		}
		/* wait_park(rout, v | WPARK) */
		atomic {
			if :: ocnt == v && wpark -> fx_rout = fx_rout | BIT(id) :: else fi;
			v = 0
		}
		park_block(fx_rout, id, timed, r);
		if
		:: r && ocnt != ticket -> goto leave
		:: else -> goto wait
		fi;
cs:
		atomic {
			wcs++;
			assert(rcs == 0 && wcs == 1);
			i = 0;
			do
			:: i < NR ->
				if
				:: waiting[i] -> seen[i]++; assert(seen[i] <= 1)
				:: else
				fi;
				i++
			:: else -> break
			od;
			i = 0
		}
		wcs--;
leave:
		/* ba_write_unlock: fetch_and(~(PRES|RPARK|WSLEEP)), acq_rel */
		atomic { r = rpark; v = wsleep; pres = 0; rpark = 0; wsleep = 0 }
#if MUTANT != 1
		if :: r -> fx_rin = 0 :: else fi;	/* wake all */
#endif
		if
		:: v ->
#if MUTANT != 6
			wbump = wbump | wwin;	/* wseq++ */
#endif
			wake_one(fx_ws)
		:: else
		fi;
done:		atomic { op = 0; ticket = 0; v = 0; timed = 0; r = 0; slept = 0 }
	od
}

init {
	byte i;

	atomic {
		i = 0;
		do
		:: i < NR -> run reader(i); i++
		:: else -> break
		od;
		i = 0;
		do
		:: i < NW -> run writer(NR + i); i++
		:: else -> break
		od
	}
}
