/** Loaded by the misuse agent through JNI FindClass while it has CLASS_LOAD enabled, so
 *  that its CLASS_LOAD handler runs RunGC (tests/it/lifecycle/bad_input.sh). Never used
 *  otherwise. */
public class MisuseLoadee {
    static int value = 42;
}
