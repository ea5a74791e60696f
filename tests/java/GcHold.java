/* GcHold.java — the Java side of a game's JNI library that holds GC off around frames
 * (legacy-agents/gchold.c). */
public class GcHold {
    static { System.loadLibrary("gchold"); }
    static native boolean init();
    static native void frameBegin();
    static native void frameEnd();
    static native int finished();
    static native void summary();
}
