/** Loaded by IdentTrace at a known line (`new IdentTrigger()`); the ident_calltrace agent
 *  takes a trace of the loading thread inside this class's CLASS_LOAD handler. */
public class IdentTrigger {
    int x = 1;
}
