/** Defined by DumpAsk in class loaders of its own: serial = the loader's number, stamp = 3 * serial + 1. */
public class DumpAskLoadee {
    public int serial;
    public long stamp;
    static int made;
    public DumpAskLoadee(int s) { serial = s; stamp = 3L * s + 1; made++; }
}
