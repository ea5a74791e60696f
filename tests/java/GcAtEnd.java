// GcAtEnd — allocates, keeps a few objects, and ends with System.gc() as its last statement,
// so that the collection's bracket is often still owed when the VM ends: on JDK 25 the
// exiting thread posts it (tests/it/lifecycle/exit_gc.sh).
public class GcAtEnd {
    static Object[] keep;

    public static void main(String[] args) {
        for (int i = 0; i < 200000; i++) {
            Object o = new int[4];
            if (i % 1000 == 0)
                keep = new Object[] {o};
        }
        System.out.println("GcAtEnd: allocated");
        System.gc();
    }
}
