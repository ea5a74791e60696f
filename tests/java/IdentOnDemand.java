import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.zip.CRC32;

/* Workload of tests/it/classes/ident_ondemand.sh: 8 threads start at once, each defines and uses
 * its own class (W0..W7) and a shared one, allocating instances and arrays of them; then
 * the ground truth: the name and the declared methods (constructors as <init>) of each
 * class, sorted, as the agent should have kept them from CLASS_LOAD. */
public class IdentOnDemand {
    static final int N = 8;
    static volatile Object sink;

    static class Shared { int v; int bump(int x) { return v += x; } }
    static class W0 { long[] a; W0(int n) { a = new long[n]; } int work0(int k) { Shared s = new Shared(); return s.bump(k + a.length); } }
    static class W1 { Object[] a; W1(int n) { a = new Object[n]; } int work1(int k) { return new Shared().bump(k) + a.length; } }
    static class W2 { W2[] a; W2(int n) { a = new W2[n]; } int work2(int k) { return new Shared().bump(k) + a.length; } }
    static class W3 { String s; W3(int n) { s = "w" + n; } int work3(int k) { return new Shared().bump(k) + s.length(); } }
    static class W4 { int[][] a; W4(int n) { a = new int[n][2]; } int work4(int k) { return new Shared().bump(k) + a.length; } }
    static class W5 { CRC32 c = new CRC32(); W5(int n) { c.update(n); } int work5(int k) { return new Shared().bump(k) + (int) (c.getValue() & 1); } }
    static class W6 { Object o; W6(int n) { o = new Object(); } int work6(int k) { return new Shared().bump(k) + n6(); } int n6() { return 6; } }
    static class W7 { char[] a; W7(int n) { a = new char[n]; } int work7(int k) { return new Shared().bump(k) + a.length; } }

    static class Runner extends Thread {
        final int k;
        final CyclicBarrier go;
        Runner(int k, CyclicBarrier go) { this.k = k; this.go = go; }
        public void run() {
            try { go.await(); } catch (Exception e) { throw new RuntimeException(e); }
            int r = 0;
            for (int i = 0; i < 200; i++) {
                switch (k) {
                case 0: { W0 w = new W0(i); r += w.work0(i); sink = w; break; }
                case 1: { W1 w = new W1(i); r += w.work1(i); sink = w; break; }
                case 2: { W2 w = new W2(i); r += w.work2(i); sink = w; break; }
                case 3: { W3 w = new W3(i); r += w.work3(i); sink = w; break; }
                case 4: { W4 w = new W4(i); r += w.work4(i); sink = w; break; }
                case 5: { W5 w = new W5(i); r += w.work5(i); sink = w; break; }
                case 6: { W6 w = new W6(i); r += w.work6(i); sink = w; break; }
                default: { W7 w = new W7(i); r += w.work7(i); sink = w; break; }
                }
            }
            sink = Integer.valueOf(r);
        }
    }

    static String truth(Class<?> c) {
        List<String> names = new ArrayList<>();
        for (Method m : c.getDeclaredMethods())
            names.add(m.getName());
        for (Constructor<?> k : c.getDeclaredConstructors())
            names.add("<init>");
        Collections.sort(names);
        return c.getName() + " methods=" + String.join(",", names);
    }

    public static void main(String[] args) throws Exception {
        CyclicBarrier go = new CyclicBarrier(N);
        Runner[] t = new Runner[N];
        for (int k = 0; k < N; k++)
            (t[k] = new Runner(k, go)).start();
        for (Runner r : t)
            r.join();
        Class<?>[] all = { IdentOnDemand.class, Shared.class, W0.class, W1.class, W2.class, W3.class, W4.class,
                           W5.class, W6.class, W7.class, Runner.class };
        for (Class<?> c : all)
            System.out.println("IdentOnDemand: truth " + truth(c));
        System.out.println("IdentOnDemand: truth-boot " + truth(Object.class));
        System.out.println("IdentOnDemand: truth-boot " + truth(CRC32.class));
        System.out.println("IdentOnDemand: done");
    }
}
