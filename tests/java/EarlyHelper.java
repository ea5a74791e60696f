/* EarlyHelper.java — a profiler's Java helper, called from its agent's JVM_OnLoad
 * (legacy-agents/withhelper.c); it loads the helper's own JNI library, which asks for JVMPI. */
public class EarlyHelper {
    static { System.loadLibrary("earlyask"); }
    static void start() { }
}
