/** ExecThrow: an exception thrown through three frames (thrower -> mid -> top) and caught in
 *  top's caller (ExecMethods.throwLoop). Each frame must still get its METHOD_EXIT (JVMTI
 *  MethodExit by exception), so entries == exits per method and the caller's depth is the
 *  same after every call. Used by tests/it/methods/exec_methods.sh. */
public class ExecThrow {
    static int depthGuard;

    static int top(int i) {
        return mid(i) + 1;
    }

    static int mid(int i) {
        return thrower(i) + 1;
    }

    static int thrower(int i) {
        if (i >= 0)
            throw new IllegalStateException("exec");
        return depthGuard;
    }
}
