import java.lang.reflect.Method;

/** VThreads: starts 8 virtual threads named vt-0..vt-7 where this JVM has them
 *  (Thread.ofVirtual, found by reflection, so the class compiles and runs on JDK 17 too);
 *  each allocates and sleeps a little. Prints "VThreads: started=8 done", or
 *  "VThreads: no Thread.ofVirtual on this JVM". */
public class VThreads {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        Method ofVirtual;
        try {
            ofVirtual = Thread.class.getMethod("ofVirtual");
        } catch (NoSuchMethodException e) {
            System.out.println("VThreads: no Thread.ofVirtual on this JVM");
            return;
        }
        Class<?> builderClass = Class.forName("java.lang.Thread$Builder");
        Object builder = ofVirtual.invoke(null);
        builder = builderClass.getMethod("name", String.class, long.class).invoke(builder, "vt-", 0L);
        Method start = builderClass.getMethod("start", Runnable.class);
        Thread[] ts = new Thread[8];
        for (int i = 0; i < ts.length; i++) {
            Runnable r = () -> {
                for (int k = 0; k < 100; k++)
                    sink = new int[16];
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            };
            ts[i] = (Thread) start.invoke(builder, r);
        }
        for (Thread t : ts)
            t.join();
        System.out.println("VThreads: started=" + ts.length + " done");
    }
}
