/* rawmon_lock.pml — the raw monitors' lock word (shim/monitors/rawmon.c), model-checked.
 *
 * The word is a futex: 0 free, 1 held, 2 held with sleepers possible ("Futexes are tricky",
 * mutex 3, as glibc's lll_lock). Every atomic operation of the C code on it (compare-and-
 * swap, exchange) is one atomic step here; a plain load is a step of its own, so other
 * threads run between a load and what the thread does with it, as in the C code. The futex
 * is a queue of sleepers: futex_wait(2) enqueues the thread only if the word still is 2
 * (atomically, as the kernel checks it), and the thread stays blocked until a futex_wake(1)
 * takes it out; futex_wake(1) takes any one queued thread out, or none when the queue is
 * empty. No spurious wake-ups are modelled: they could only hide a lost wake-up.
 *
 * N threads each take the monitor ROUNDS times: the uncontended compare-and-swap, else the
 * contended path, with the spin of a cool monitor (reads of the word, a compare-and-swap
 * when it reads free) or without it (a hot monitor: chosen at random each time), then the
 * sleeping loop (mark 2 unless it reads 2, sleep while 2, take with an exchange to 2). Exit
 * is an exchange to 0 and a wake when it was 2. Checked by tests/check-model.sh (spin -a,
 * then ./pan): mutual exclusion (the assertion in the critical section) and no lost
 * wake-up (a thread asleep in the queue when every other thread has finished is an invalid
 * end state, which pan reports).
 */
#ifndef N
#define N 3
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif

byte word;         /* 0 free, 1 held, 2 held with sleepers possible */
bit queued[N];     /* asleep on the futex */
byte in_cs;

/* futex_wait(&word, 2): sleep while the word is 2, until woken. */
inline futex_wait2()
{
    atomic {
        if
        :: word == 2 -> queued[_pid - 1] = 1
        :: else -> skip
        fi
    }
    (queued[_pid - 1] == 0)
}

/* futex_wake(&word, 1): one queued thread out, if any. */
inline futex_wake()
{
    atomic {
        if
        :: queued[0] == 1 -> queued[0] = 0
        :: N > 1 && queued[1] == 1 -> queued[1] = 0
        :: N > 2 && queued[2] == 1 -> queued[2] = 0
        :: N > 3 && queued[3] == 1 -> queued[3] = 0
        :: else -> skip
        fi
    }
}

proctype T()
{
    byte r = 0, c, k;
    bit got;
    bool spins;

    do
    :: r < ROUNDS ->
        /* Enter: try_lock, CAS(0 -> 1) */
        got = 0;
        atomic {
            if
            :: word == 0 -> word = 1; got = 1
            :: else -> skip
            fi
        }
        if
        :: got -> goto cs
        :: else -> skip
        fi;
        /* lock_blocking: a cool monitor spins, a hot one does not */
        if
        :: spins = true
        :: spins = false
        fi;
        if
        :: spins ->
            k = 0;
            do
            :: k < 2 ->
                c = word;                       /* the read */
                if
                :: c == 0 ->
                    atomic {
                        if
                        :: word == 0 -> word = 1; got = 1
                        :: else -> skip
                        fi
                    }
                :: else -> skip
                fi;
                if
                :: got -> goto cs
                :: else -> k++
                fi
            :: else -> break
            od
        :: else -> skip
        fi;
        /* c = word == 2 ? 2 : exchange(word, 2) */
        c = word;
        if
        :: c != 2 -> atomic { c = word; word = 2 }
        :: else -> skip
        fi;
        do
        :: c != 0 ->
            futex_wait2();
            atomic { c = word; word = 2 }       /* TAKE: exchange(word, 2) */
        :: else -> break
        od;
cs:
        in_cs++;
        assert(in_cs == 1);
        in_cs--;
        /* Exit: if (exchange(word, 0) == 2) futex_wake(1) */
        atomic { c = word; word = 0 }
        if
        :: c == 2 -> futex_wake()
        :: else -> skip
        fi;
        r++
    :: else -> break
    od
}

init
{
    byte i;
    atomic {
        i = 0;
        do
        :: i < N -> run T(); i++
        :: else -> break
        od
    }
}
