/* EarlyAgent.java — a java.lang.instrument agent whose premain loads a JNI library that asks
 * for JVMPI (EarlyHelper -> legacy-agents/earlyask.c). Listed before the shim on the command
 * line, its premain runs in a VMInit that comes before the shim's
 * (tests/it/lifecycle/client_early.sh). */
public class EarlyAgent {
    public static void premain(String args) {
        System.out.println("EarlyAgent: premain");
        EarlyHelper.start();
    }
}
