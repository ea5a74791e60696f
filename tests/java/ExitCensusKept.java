/** ExitCensus keeps these reachable to the end: serial, stamp = 3*serial+1, next = the one
 *  made before (null for serial 0). */
public class ExitCensusKept {
    final int serial;
    final long stamp;
    final ExitCensusKept next;

    ExitCensusKept(int serial, ExitCensusKept next) {
        this.serial = serial;
        this.stamp = 3L * serial + 1;
        this.next = next;
    }
}
