/* CovPairBase — superclass of CovPairSub that names its subclass: verifying make() needs
 * CovPairSub loaded, while CovPairSub's own definition is what loads this class. */
public class CovPairBase {
    public long work(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) s += i;
        return s;
    }
    public CovPairBase make() {
        return new CovPairSub();
    }
}
