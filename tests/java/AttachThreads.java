/* AttachThreads.java — legacy-agents/attachask.c: asks for JVMPI on a thread it attached itself. */
public class AttachThreads {
    static { System.loadLibrary("attachask"); }
    static native void start();
    static native boolean done();
}
