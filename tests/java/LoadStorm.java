import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntUnaryOperator;

/** LoadStorm [SECONDS] [THREADS] [virtual] [exit]: the workload of tests/it/threads/sampler_hang.sh. For SECONDS
 *  (default 8), THREADS (default 32) threads "storm-NN" each loop over six kinds of work:
 *  allocate objects of LoadStorm's own classes (Node chains with int[] payloads, Leaf[] arrays
 *  of Leafs), enter one of 4 shared locks, notify and wait(1) on one of them, start and join a
 *  short-lived thread "storm-short-N" (which allocates a little), and define LoadStormCargoSub,
 *  LoadStormCargo and LoadStormCargoApi from their class files through a fresh class loader
 *  and run them (3 CLASS_LOADs of new classes each time, on many threads at once, while their
 *  code runs under a sampler). With "virtual", on a JVM that has virtual threads (probed:
 *  Thread.ofVirtual, found by reflection), the storm-NN and storm-short-N threads are virtual
 *  threads (a program of today); main says which it made ("LoadStorm: virtual=yes|no").
 *  Then every thread is joined and main prints its ground truth:
 *    LoadStorm: truth threads=T seconds=S iterations=N nodes=N int_arrays=N leaves=N
 *               leaf_arrays=N lock_entries=N waits=N short_threads=N loaders=N classes_defined=N
 *    LoadStorm: defined NAME N           one line per cargo class
 *    LoadStorm: DONE
 *  With "exit", main then ends the VM with System.exit(0) (the other way a VM ends: no
 *  DestroyJavaVM thread). */
public class LoadStorm {
    static final class Node {
        final int v;
        final int[] payload;
        final Node next;

        Node(int v, Node next) {
            this.v = v;
            this.payload = new int[8];
            this.next = next;
        }
    }

    static final class Leaf {
        long a;
        Object ref;
    }

    static final String[] CARGO = {"LoadStormCargoApi", "LoadStormCargo", "LoadStormCargoSub"};
    static final Map<String, byte[]> bytes = new HashMap<>();
    static final Map<String, AtomicLong> definedByName = new HashMap<>();
    static final Object[] locks = {new Object(), new Object(), new Object(), new Object()};
    static final AtomicLong iterations = new AtomicLong(), nodes = new AtomicLong(),
            intArrays = new AtomicLong(), leaves = new AtomicLong(), leafArrays = new AtomicLong(),
            lockEntries = new AtomicLong(), waits = new AtomicLong(), shortThreads = new AtomicLong(),
            loaders = new AtomicLong(), classesDefined = new AtomicLong();
    static volatile boolean stop;
    static volatile Object sink;

    /** Defines the three cargo classes from their bytes; everything else from the parent. */
    static final class CargoLoader extends ClassLoader {
        CargoLoader() {
            super(LoadStorm.class.getClassLoader());
        }

        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            byte[] b = bytes.get(name);
            if (b == null)
                return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    c = defineClass(name, b, 0, b.length);
                    classesDefined.incrementAndGet();
                    definedByName.get(name).incrementAndGet();
                }
                return c;
            }
        }
    }

    static void allocate(int k) {
        Node n = null;
        for (int i = 0; i < 16; i++)
            n = new Node(k + i, n);
        nodes.addAndGet(16);
        intArrays.addAndGet(16);
        sink = n;
    }

    static void allocateLeaves(int k) {
        Leaf[] a = new Leaf[32];
        for (int i = 0; i < a.length; i++) {
            a[i] = new Leaf();
            a[i].a = k + i;
        }
        leaves.addAndGet(32);
        leafArrays.incrementAndGet();
        sink = a;
    }

    static int contend(Object lock, int k) {
        int s = k;
        synchronized (lock) {
            lockEntries.incrementAndGet();
            for (int i = 0; i < 2000; i++)
                s = s * 31 + i;
        }
        return s;
    }

    static void waitOn(Object lock) throws InterruptedException {
        synchronized (lock) {
            lockEntries.incrementAndGet();
            lock.notifyAll();
            lock.wait(1);
            waits.incrementAndGet();
        }
    }

    /** Thread.ofVirtual() when asked for and this JVM has it, else null. */
    static Object virtualBuilder;

    /** A new thread named name running r: virtual if virtualBuilder is set. */
    static Thread newThread(Runnable r, String name) {
        if (virtualBuilder == null)
            return new Thread(r, name);
        try {
            Class<?> b = Class.forName("java.lang.Thread$Builder");
            Object named = b.getMethod("name", String.class).invoke(virtualBuilder, name);
            return (Thread) b.getMethod("unstarted", Runnable.class).invoke(named, r);
        } catch (ReflectiveOperationException e) {
            throw new RuntimeException(e);
        }
    }

    static void shortThread(int k) throws InterruptedException {
        Thread t = newThread(() -> {
            Leaf l = new Leaf();
            l.ref = new int[4];
            sink = l;
        }, "storm-short-" + shortThreads.incrementAndGet());
        t.start();
        t.join();
    }

    static int loadCargo(int k) throws Exception {
        CargoLoader l = new CargoLoader();
        loaders.incrementAndGet();
        Class<?> c = l.loadClass("LoadStormCargoSub");
        IntUnaryOperator op = (IntUnaryOperator) c.getDeclaredConstructor().newInstance();
        return op.applyAsInt(k);
    }

    static void work(int id) {
        try {
            int acc = 0;
            for (int i = 0; !stop; i++) {
                switch ((i + id) % 6) {
                case 0: allocate(i); break;
                case 1: acc += contend(locks[(i + id) & 3], i); break;
                case 2: waitOn(locks[(i * 7 + id) & 3]); break;
                case 3: if (i % 4 == 3) shortThread(i); else allocateLeaves(i); break;
                case 4: acc += loadCargo(i); break;
                default: allocateLeaves(i); acc += loadCargo(i + 1); break;
                }
                iterations.incrementAndGet();
            }
            sink = acc;
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        int secs = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 32;
        boolean exit = false;
        for (int i = 2; i < args.length; i++)
            exit |= args[i].equals("exit");
        if (args.length > 2 && args[2].equals("virtual")) {
            try {
                virtualBuilder = Thread.class.getMethod("ofVirtual").invoke(null);
            } catch (NoSuchMethodException e) {
                virtualBuilder = null; /* a JVM before virtual threads: platform threads */
            }
        }
        System.out.println("LoadStorm: virtual=" + (virtualBuilder != null ? "yes" : "no"));
        for (String name : CARGO) {
            try (InputStream in = LoadStorm.class.getResourceAsStream("/" + name + ".class")) {
                bytes.put(name, in.readAllBytes());
            }
            definedByName.put(name, new AtomicLong());
        }
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            final int id = i;
            ts[i] = newThread(() -> work(id), String.format("storm-%02d", i));
        }
        for (Thread t : ts)
            t.start();
        System.out.println("LoadStorm: started threads=" + n + " seconds=" + secs);
        Thread.sleep(secs * 1000L);
        stop = true;
        for (Thread t : ts)
            t.join();
        System.out.println("LoadStorm: truth threads=" + n + " seconds=" + secs + " iterations="
                + iterations.get() + " nodes=" + nodes.get() + " int_arrays=" + intArrays.get()
                + " leaves=" + leaves.get() + " leaf_arrays=" + leafArrays.get() + " lock_entries="
                + lockEntries.get() + " waits=" + waits.get() + " short_threads=" + shortThreads.get()
                + " loaders=" + loaders.get() + " classes_defined=" + classesDefined.get());
        for (String name : CARGO)
            System.out.println("LoadStorm: defined " + name + " " + definedByName.get(name).get());
        System.out.println("LoadStorm: DONE");
        if (exit)
            System.exit(0); /* the VM ends on this thread, not on DestroyJavaVM */
    }
}
