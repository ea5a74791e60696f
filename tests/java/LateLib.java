/* LateLib.java — loads legacy-agents/lateuse.c, which asks for JVMPI in its JNI_OnLoad. */
public class LateLib {
    static { System.loadLibrary("lateuse"); }
    static void load() { }
}
