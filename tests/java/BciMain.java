import java.io.InputStream;
import java.lang.reflect.Method;

/** BciMain: the workload of tests/it/methods/bci_rewrite.sh, run under the bcitest agent, which
 *  rewrites every class. It exercises what the rewriter must get right and prints the ground truth:
 *  "BciMain: expect METHOD ENTRIES EXITS" for the methods whose probes the agent counts
 *  (METHOD as Class.name(descriptor)), from counters kept by the code itself. */
public class BciMain {
    static final int[] INPUTS = {-5, 0, 1, 2, 3, 7, 42, 100, 1000};
    static int classifyCalls, twiceCalls, addCalls, codeCalls, blueCalls, xCalls, sumCalls,
        points, loadedCalls, fCalls, gCalls, nativeTwice, nativePlus, nativeBoom;

    static void expect(String m, long entries, long exits) {
        System.out.println("BciMain: expect " + m + " " + entries + " " + exits);
    }

    /** Defines classes from bytes it is given, and BciLoaded itself (child-first). */
    static class Loader extends ClassLoader {
        Loader() {
            super(BciMain.class.getClassLoader());
        }

        Class<?> define(String name, byte[] b) {
            return defineClass(name, b, 0, b.length);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                if (!name.equals("BciLoaded"))
                    return super.loadClass(name, resolve);
                Class<?> c = findLoadedClass(name);
                if (c != null)
                    return c;
                try (InputStream in = getParent().getResourceAsStream("BciLoaded.class")) {
                    return define(name, in.readAllBytes());
                } catch (Exception e) {
                    throw new ClassNotFoundException(name, e);
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        /* conditional branches and switches, traced instruction by instruction */
        long csum = 0;
        StringBuilder in = new StringBuilder();
        for (int x : INPUTS) {
            csum += BciBranch.classify(x);
            classifyCalls++;
            in.append(in.length() > 0 ? "," : "").append(x);
        }
        System.out.println("BciMain: classify inputs=" + in + " sum=" + csum);
        expect("BciBranch.classify(I)I", classifyCalls, classifyCalls);

        /* switches at every alignment; a method that needs goto_w */
        System.out.println("BciMain: switch bad=" + BciSwitch.check());
        expect("BciSwitch.sw(II)I", 80, 80);
        System.out.println("BciMain: big=" + BciBig.big(60) + " reference=" + BciBig.reference(60));
        expect("BciBig.big(I)I", 1, 1);

        /* exceptions through three frames, on main and on a second thread */
        Thread worker = new Thread(() -> {
            BciThrow.run(400);
            BciSync s = new BciSync();
            for (int i = 0; i < 300; i++) {
                s.inc();
                BciSync.sinc();
            }
        }, "bci-worker");
        worker.start();
        worker.join();
        int sum = BciThrow.run(600);
        System.out.println("BciMain: throw sum=" + sum + " caught=" + BciThrow.caught);
        expect("BciThrow.top(I)I", BciThrow.topCalls, BciThrow.topCalls);
        expect("BciThrow.mid(I)I", BciThrow.midCalls, BciThrow.midCalls);
        expect("BciThrow.thrower(I)I", BciThrow.throwerCalls, BciThrow.throwerCalls);

        /* constructors: super(...) arguments computed first; this(...); the gap, on its thread */
        for (int i = -50; i < 50; i++)
            new BciCtor(i);
        for (int i = 0; i < 20; i++)
            new BciCtor(i, 1);
        Thread gap = new Thread(() -> BciCtor.gap(25), "bci-gap");
        gap.start();
        gap.join();
        System.out.println("BciMain: ctor made=" + BciCtor.made + " thrown=" + BciCtor.gaps);
        /* every entry has its exit: 25 x (neg, BOOM, BOOM through this) entries of (I)V
         * that threw, 25 of (II)V that threw, 25 of (String) that threw in parseInt */
        expect("BciCtor.<init>(I)V", BciCtor.made + 3 * 25, BciCtor.made + 3 * 25);
        expect("BciCtor.<init>(II)V", BciCtor.delegated + 25, BciCtor.delegated + 25);
        expect("BciCtor.<init>(Ljava/lang/String;)V", 25, 25);
        expect("BciCtorBase.<init>(I[I)V", BciCtorBase.made + BciCtorBase.rejected,
               BciCtorBase.made + BciCtorBase.rejected);

        /* lambdas and streams */
        System.out.println("BciMain: lambda " + BciLambda.run(3000));
        expect("BciLambda.lambda$run$0(I)I", BciLambda.mapped, BciLambda.mapped);
        expect("BciLambda.lambda$run$1(I)Z", BciLambda.filtered, BciLambda.filtered);

        /* synchronized methods and blocks (the worker did 300 of each) */
        BciSync s = new BciSync();
        int syncThrows = 0;
        for (int i = 0; i < 200; i++) {
            s.inc();
            BciSync.sinc();
            try {
                s.blockThrow(i);
            } catch (IllegalStateException e) {
                syncThrows++;
            }
        }
        System.out.println("BciMain: sync n=" + s.n + " sn=" + BciSync.sn + " throws=" + syncThrows);
        expect("BciSync.inc()V", 500, 500);
        expect("BciSync.sinc()V", BciSync.sn, BciSync.sn);
        expect("BciSync.blockThrow(I)V", 200, 200);

        /* native methods wrapped by the agent */
        BciNative nat = new BciNative();
        long nsum = 0;
        for (int i = 0; i < 100; i++) {
            nsum += BciNative.twice(i);
            nativeTwice++;
            nsum += nat.plus(i);
            nativePlus++;
            try {
                BciNative.boom(i);
            } catch (IllegalStateException e) {
                if (e.getMessage().equals("boom " + i))
                    nativeBoom++;
            }
        }
        System.out.println("BciMain: natives sum=" + nsum + " boom=" + nativeBoom);
        expect("BciNative.twice(I)I", nativeTwice, nativeTwice);
        expect("BciNative.plus(I)I", nativePlus, nativePlus);
        expect("BciNative.boom(I)V", 100, 100);

        /* interface default and static methods, enums, records */
        BciIface f = new BciIfaceImpl();
        int isum = 0;
        for (int i = 0; i < 70; i++) {
            isum += f.twice(i);
            twiceCalls++;
            isum += BciIface.add(i, 1);
            addCalls++;
        }
        expect("BciIface.twice(I)I", twiceCalls, twiceCalls);
        expect("BciIface.add(II)I", addCalls, addCalls);
        expect("BciIfaceImpl.base()I", twiceCalls, twiceCalls);
        int esum = 0;
        for (int i = 0; i < 30; i++)
            for (BciColor c : BciColor.values()) {
                switch (c) {
                case RED: esum += 1; break;
                case GREEN: esum += 2; break;
                default: esum += 3;
                }
                esum += c.code();
                if (c == BciColor.BLUE)
                    blueCalls++;
                else
                    codeCalls++;
            }
        expect("BciColor.code()I", codeCalls, codeCalls);
        expect("BciColor$1.code()I", blueCalls, blueCalls);
        int rsum = 0, rejected = 0;
        for (int i = -10; i < 40; i++) {
            try {
                BciPoint p = new BciPoint(i, 2 * i);
                points++;
                rsum += p.x() + p.sum() + (p.equals(new BciPoint(i, 2 * i)) ? 1 : 0);
                points++;
                xCalls++;
                sumCalls++;
                if (i == 3)
                    System.out.println("BciMain: record " + p);
            } catch (IllegalArgumentException e) {
                rejected++;
            }
        }
        System.out.println("BciMain: interface=" + isum + " enum=" + esum + " record=" + rsum);
        expect("BciPoint.<init>(II)V", points + rejected, points + rejected);
        expect("BciPoint.x()I", xCalls, xCalls);
        expect("BciPoint.sum()I", sumCalls, sumCalls);

        /* a class defined by a custom loader; a version 49 class with jsr/ret */
        Loader l = new Loader();
        BciWork w = (BciWork) Class.forName("BciLoaded", true, l).getDeclaredConstructor().newInstance();
        long lsum = 0;
        for (int i = 0; i < 90; i++) {
            lsum += w.work(i);
            loadedCalls++;
        }
        expect("BciLoaded.work(I)I", loadedCalls, loadedCalls);
        Class<?> old = l.define("BciJsrOld", BciJsr.bytes());
        Method mf = old.getMethod("f", int.class), mg = old.getMethod("g", int.class);
        long jsum = 0;
        boolean jok = true;
        for (int i = 0; i < 40; i++) {
            int a = (Integer) mf.invoke(null, i);
            fCalls++;
            int b = (Integer) mg.invoke(null, i);
            gCalls++;
            jok &= a == 2 * i + 1 && b == i * (i + 1) / 2;
            jsum += a + b;
        }
        System.out.println("BciMain: loaded=" + lsum + " jsr=" + jsum + " jsr_ok=" + jok);
        expect("BciJsrOld.f(I)I", fCalls, fCalls);
        expect("BciJsrOld.g(I)I", gCalls, gCalls);
        System.out.println("BciMain: done");
    }
}
