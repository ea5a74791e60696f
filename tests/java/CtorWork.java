/** CtorWork MODE THREADS N: constructors for the ctor_recv test (legacy-agents/ctor_recv.c).
 *
 *  Every constructor of the Ctor* classes calls CtorWork.truth(this) once `this` is
 *  initialized; truth is a native of the agent, which compares jobject2jobjectID(this) with
 *  the obj_id METHOD_ENTRY2 gave for that constructor. THREADS threads start at once (each
 *  loading the classes it uses first), and each constructs N objects of MODE:
 *    plain   new CtorLeaf(i): CtorLeaf(int) -> this(int, int) -> CtorMid -> CtorBase, nothing
 *            run before any super(...)/this(...) call but its arguments' arithmetic
 *    args    new CtorCall(i): super(twice(i)), a method called before super(...)
 *    nested  new CtorHolder(): super(new CtorLeaf(7)), an object constructed before super(...)
 *    mix     the three in turn
 *  and calls mark() on each object it made. Prints the ground truth:
 *    CtorWork: mode=M threads=T n=N objects=O truth=K   (K: truth calls, one per constructor) */
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

public class CtorWork {
    static final AtomicInteger TRUTH = new AtomicInteger();
    static final AtomicInteger OBJECTS = new AtomicInteger();

    static native void truth(Object self);

    static void seen(Object self) {
        TRUTH.incrementAndGet();
        truth(self);
    }

    static Object make(String mode, int i) {
        if (mode.equals("plain") || (mode.equals("mix") && i % 3 == 0))
            return new CtorLeaf(i);
        if (mode.equals("args") || (mode.equals("mix") && i % 3 == 1))
            return new CtorCall(i);
        return new CtorHolder();
    }

    public static void main(String[] args) throws Exception {
        final String mode = args[0];
        int threads = Integer.parseInt(args[1]);
        final int n = Integer.parseInt(args[2]);
        final CountDownLatch go = new CountDownLatch(1);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(new Runnable() {
                public void run() {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                    for (int i = 0; i < n; i++) {
                        CtorMarked o = (CtorMarked) make(mode, i);
                        o.mark();
                        OBJECTS.incrementAndGet();
                    }
                }
            }, "ctor-" + t);
            ts[t].start();
        }
        go.countDown();
        for (Thread t : ts)
            t.join();
        System.out.print("CtorWork: mode=");
        System.out.print(mode);
        System.out.print(" threads=");
        System.out.print(threads);
        System.out.print(" n=");
        System.out.print(n);
        System.out.print(" objects=");
        System.out.print(OBJECTS.get());
        System.out.print(" truth=");
        System.out.println(TRUTH.get());
    }
}

interface CtorMarked {
    void mark();
}

class CtorBase implements CtorMarked {
    int v;
    CtorBase(int x) {
        super();
        CtorWork.seen(this);
        v = x;
    }
    public void mark() {
        v++;
    }
}

class CtorMid extends CtorBase {
    CtorMid(int x) {
        super(x * 2);
        CtorWork.seen(this);
    }
}

class CtorLeaf extends CtorMid {
    CtorLeaf(int x) {
        this(x, x + 1);
        CtorWork.seen(this);
    }
    CtorLeaf(int x, int y) {
        super(x + y);
        CtorWork.seen(this);
    }
}

class CtorCall extends CtorBase {
    static int twice(int x) {
        return 2 * x;
    }
    CtorCall(int x) {
        super(twice(x));
        CtorWork.seen(this);
    }
}

class CtorBase2 implements CtorMarked {
    final Object inner;
    CtorBase2(Object o) {
        super();
        CtorWork.seen(this);
        inner = o;
    }
    public void mark() {
        ((CtorMarked) inner).mark();
    }
}

class CtorHolder extends CtorBase2 {
    CtorHolder() {
        super(new CtorLeaf(7));
        CtorWork.seen(this);
    }
}
