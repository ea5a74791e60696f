/** An object DumpAsk drops before the dump: serial, stamp = 3 * serial + 1, the one made before. */
public class DumpAskDropped {
    int serial;
    long stamp;
    DumpAskDropped next;
    /* 8 more bytes: with next alone, a 32-bit JVM's layout (8-byte header, 4-byte references,
     * 8-byte alignment) makes both classes 24 bytes, and dump_ask.sh tells them by size. */
    long spare = -1;
    DumpAskDropped(int s, DumpAskDropped n) { serial = s; stamp = 3L * s + 1; next = n; }
}
