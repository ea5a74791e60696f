/** ExitCensus drops these before main returns, unreachable but not collected: serial,
 *  weight = serial + 0.25, tag = the String "dropped", next = the one made before. */
public class ExitCensusDropped {
    final int serial;
    final double weight;
    final String tag;
    final ExitCensusDropped next;

    ExitCensusDropped(int serial, ExitCensusDropped next) {
        this.serial = serial;
        this.weight = serial + 0.25;
        this.tag = "dropped";
        this.next = next;
    }
}
