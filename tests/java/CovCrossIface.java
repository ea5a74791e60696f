/* CovCrossIface — defined on one thread while CovCrossSub, which implements it, is defined
 * on another (tests/java/CovCross.java). */
public interface CovCrossIface {
    long work(int n);
}
