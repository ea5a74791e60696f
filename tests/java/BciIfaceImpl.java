/** BciIfaceImpl: implements BciIface, uses its default method. */
public class BciIfaceImpl implements BciIface {
    public int base() {
        return 1;
    }
}
