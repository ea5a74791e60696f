/** CLASS_LOAD_HOOK garbage target (ident_unload test): for the class containing the constant
 *  below, the agent returns bytes that are not a class file; the shim must reject them and
 *  load this class unchanged. */
public class IdentHookGarbage {
    static String text() {
        return "HOOK_GARBAGE_CASE";
    }

    static int sum(int a, int b) {
        return a + b;
    }
}
