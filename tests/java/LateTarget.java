/* LateTarget.java — loaded only after lateuse asked for JVMPI (tests/java/LateApp.java). */
public class LateTarget {
    int n;
    int work(int k) { return n += k; }
}
