/** An object DumpAsk drops before the dump: serial, stamp = 3 * serial + 1, the one made before. */
public class DumpAskDropped {
    int serial;
    long stamp;
    DumpAskDropped next;
    DumpAskDropped(int s, DumpAskDropped n) { serial = s; stamp = 3L * s + 1; next = n; }
}
