/** BciNative: native methods implemented by the test agent (tests/tools/bcitest.c). The agent
 *  wraps them (CF_WRAP_NATIVES): twice and boom are bound by the JVM's automatic lookup of
 *  Java_BciNative_twice / _boom with the native prefix stripped; plus is bound with
 *  RegisterNatives under its original name at ClassPrepare. boom throws from native code. */
public class BciNative {
    static native int twice(int x);

    native int plus(int x);

    static native void boom(int x);
}
