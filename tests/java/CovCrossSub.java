/* CovCrossSub — implements CovCrossIface, defined on another thread than the interface. */
public class CovCrossSub implements CovCrossIface {
    @Override
    public long work(int n) {
        return 7L * n;
    }
}
