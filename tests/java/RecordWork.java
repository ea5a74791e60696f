/* RecordWork — a program that does the same thing on every JVM and in every VM mode, for
 * recordings that are compared (tests/it/lifecycle/record_diff.sh).
 *
 *   java RecordWork [ROUNDS]     (default 200)
 *
 * Per round it makes a fixed number of calls (a recursion, a loop of small methods, an
 * exception thrown and caught) and allocates a fixed number of objects of its own classes,
 * every one of them kept in an array so that no compiler can leave one out (escape
 * analysis). Two worker threads, "rw-worker-1" and "rw-worker-2", run one after the other,
 * each started and joined before the next; a class of its own is loaded late by name; a
 * collection is asked for at the end (its objects are all still kept).
 * Prints "RecordWork: done rounds=N calls=C objects=O".
 */
public class RecordWork {
    static final class Item {
        final int value;
        final Item next;
        Item(int value, Item next) { this.value = value; this.next = next; }
        int sum() { return next == null ? value : value + next.sum(); }
    }

    static final class Oops extends Exception {
        Oops(String m) { super(m, null, false, false); }
    }

    static final class Late {
        static int answer() { return 42; }
    }

    static int calls;
    static int objects;
    static Item[] kept;

    static int fib(int n) {
        calls++;
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    static int square(int x) {
        calls++;
        return x * x;
    }

    static void fail(int i) throws Oops {
        calls++;
        if (i % 7 == 0)
            throw new Oops("round " + i);
    }

    static int round(int r, Item[] into) {
        int acc = fib(10);
        for (int i = 0; i < 20; i++)
            acc += square(i);
        Item chain = null;
        for (int i = 0; i < 5; i++) {
            chain = new Item(i, chain);
            objects++;
        }
        into[r] = chain;
        acc += chain.sum();
        try {
            fail(r);
        } catch (Oops e) {
            acc++;
        }
        return acc;
    }

    static void work(String name, int rounds) throws InterruptedException {
        Thread t = new Thread(() -> {
            Item[] mine = new Item[rounds];
            for (int r = 0; r < rounds; r++)
                round(r, mine);
            synchronized (RecordWork.class) {
                kept = mine;
            }
        }, name);
        t.start();
        t.join();
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
        Item[] mine = new Item[rounds];
        long acc = 0;
        for (int r = 0; r < rounds; r++)
            acc += round(r, mine);
        work("rw-worker-1", rounds);
        work("rw-worker-2", rounds);
        acc += (Integer) Class.forName("RecordWork$Late").getDeclaredMethod("answer").invoke(null);
        System.gc();
        System.out.println("RecordWork: done rounds=" + rounds + " calls=" + calls + " objects=" + objects
                           + " acc=" + acc + " kept=" + (mine[rounds - 1] != null && kept != null));
    }
}
