/** DumpStrict: workload of tests/it/dumps/dump_strict.sh (agent legacy-agents/dump_strict.c, a
 *  heap-dump reader written the HPROF way: a switch over exactly the record kinds HotSpot
 *  emitted, fatal on any other).
 *
 *  Holds objects whose dump records the agent checks byte by byte against these facts:
 *  a DumpStrict$Point (fields below, superclass DumpStrict$Base, interfaces Runnable and
 *  java.io.Serializable, statics SCOUNT = 42 and SREF), an array of Points {p, null, p},
 *  an int[] {1, 2, 3}. Loading DumpStrict$Go on main makes the agent read these with JNI,
 *  request heap dumps at levels 0, 1 and 2 and check them. Ground truth: "DumpStrict: ..." */
public class DumpStrict {
    static class Base {
        short s = 0x0506;
        boolean z = true;
    }
    static class Point extends Base implements Runnable, java.io.Serializable {
        static int SCOUNT = 42;
        static Object SREF = "static-ref";
        int x = 0x01020304;
        long y = 0x1122334455667788L;
        Object ref;
        byte b = 0x7f;
        double d = 1.5;
        char c = 'Q';
        public void run() {}
    }
    static class Go {}

    static Point point;
    static Point[] arr;
    static int[] ints;
    static String str;

    public static void main(String[] args) throws Exception {
        str = new String("hello-dump");
        point = new Point();
        point.ref = str;
        arr = new Point[] {point, null, point};
        ints = new int[] {1, 2, 3};
        new Thread(() -> { synchronized (DumpStrict.class) { } }).start(); // a thread that ends
        System.out.println("DumpStrict: ready");
        Class.forName("DumpStrict$Go");
        System.out.println("DumpStrict: done " + point.x + " " + arr.length + " " + ints.length);
    }
}
