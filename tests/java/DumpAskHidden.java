/** Defined by DumpAsk as a hidden class: serial 4242, stamp 3 * 4242 + 1. */
public class DumpAskHidden {
    public int serial = 4242;
    public long stamp = 3L * 4242 + 1;
}
