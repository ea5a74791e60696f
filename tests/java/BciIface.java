/** BciIface: an interface with a default and a static method. */
public interface BciIface {
    int base();

    default int twice(int x) {
        return 2 * x + base();
    }

    static int add(int a, int b) {
        return a + b;
    }
}
