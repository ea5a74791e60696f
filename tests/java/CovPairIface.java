/* CovPairIface — an interface of CovPairSub (tests/java/CovPair.java). */
public interface CovPairIface {
    long work(int n);
}
