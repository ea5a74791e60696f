/* CovPairShared — loaded by all CovPair threads at once through one shared loader. */
public class CovPairShared {
    static final long SEED = System.nanoTime() & 1;
    public long work(int n) {
        return SEED + n * 2L;
    }
}
