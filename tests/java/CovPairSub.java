/* CovPairSub — loaded first; its parse loads CovPairBase and CovPairIface. */
public class CovPairSub extends CovPairBase implements CovPairIface {
    @Override
    public long work(int n) {
        return super.work(n) + make().getClass().getName().length();
    }
}
