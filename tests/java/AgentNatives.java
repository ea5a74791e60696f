/** AgentNatives: a helper class whose native method the legacy agent implements and binds
 *  with JNI RegisterNatives, as old agents did for their Java-side hooks
 *  (legacy-agents/crasher.c, option natives). Prints "AgentNatives: answer=42". */
public class AgentNatives {
    static native int answer();

    public static void main(String[] args) {
        System.out.println("AgentNatives: answer=" + answer());
    }
}
