/** ExecTarget: the counted methods of tests/it/methods/exec_methods.sh (workload ExecMethods.java).
 *  hit(int) is static, inst(int) is an instance method; neither calls anything, so each call
 *  is exactly one METHOD_ENTRY2, one METHOD_ENTRY and one METHOD_EXIT of that method.
 *  hashCode() is NOT overridden: target.hashCode() runs the native Object.hashCode(). */
public class ExecTarget {
    static long sacc;
    long acc;
    final int tag;

    ExecTarget(int tag) {
        this.tag = tag;
    }

    static void hit(int i) {
        sacc += i;
    }

    void inst(int i) {
        acc += i ^ tag;
    }
}
