/** An object DumpAsk keeps reachable: serial and stamp = 3 * serial + 1. */
public class DumpAskKept {
    int serial;
    long stamp;
    DumpAskKept(int s) { serial = s; stamp = 3L * s + 1; }
}
