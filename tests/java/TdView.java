/* TdView.java — the Java side of a thread-dump viewer whose JNI library (legacy-agents/tdview.c)
 * gets JVMPI itself, as libraries did on JDK 1.2-1.4. */
public class TdView {
    static { System.loadLibrary("tdview"); }
    static native boolean init();
    static native int dump();
}
