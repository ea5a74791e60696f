/** CLASS_LOAD_HOOK rewrite target (ident_unload test): the agent finds the UTF-8 constant
 *  below in the class bytes and replaces it with one of the same length. Only this class
 *  contains it (callers print text(), the literal is not inlined anywhere else). */
public class IdentHooked {
    static String text() {
        return "HOOK_ORIGINAL_TEXT";
    }
}
