/* CovPairLate — defined on one thread (not linked), linked and used on another. */
public class CovPairLate {
    static int base = 5;
    public long work(int n) {
        return (long) base * n;
    }
}
