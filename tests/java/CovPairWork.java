/* CovPairWork — a class each CovPair thread defines in its own loader. */
public class CovPairWork {
    private int calls;
    public long work(int n) {
        calls++;
        long h = 17;
        for (int i = 0; i < 100 + n; i++) h = h * 31 + i;
        return h + calls;
    }
}
