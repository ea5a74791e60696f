/** An interface for the ident_classes test: a constant (static field), an abstract method
 *  (-1/-1 lines), a default method and a static method with line numbers. */
public interface IdentShapesIface {
    int K = 5;
    String NAME = "shapes";

    void shape();

    default int twice(int x) {
        return 2 * x;
    }

    static int thrice(int x) {
        int r = x;
        r += x;
        r += x;
        return r;
    }
}
