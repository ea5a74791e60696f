/** Loaded by the misuse agent through JNI FindClass after it enabled CLASS_LOAD_HOOK from a
 *  thread the VM does not know, to see that the event really comes
 *  (tests/it/lifecycle/bad_input.sh). */
public class MisuseHooked {
    static int value = 7;
}
