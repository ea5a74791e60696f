/** BciBranch: the method whose instruction probes tests/it/methods/bci_rewrite.sh records: every
 *  kind of conditional branch (if<cond>, if_icmp<cond>, ifnull/ifnonnull, if_acmp<cond>), a
 *  tableswitch and a lookupswitch, run on known inputs. The test interprets this method's
 *  bytecode (javap -c) for the same inputs and expects exactly that instruction sequence. */
public class BciBranch {
    static final Object MARK = new Object();

    static int classify(int x) {
        int r = 0;
        if (x < 0)
            r = -1;
        else if (x == 0)
            r = 100;
        switch (x) {
        case 1: r += 1; break;
        case 2: r += 2; break;
        case 3: r += 3; break;
        case 4: r += 4; break;
        default: r += 10;
        }
        switch (x) {
        case 7: r *= 2; break;
        case 42: r *= 3; break;
        case 1000: r -= 5; break;
        default: break;
        }
        for (int i = 0; i < 3 && x > i; i++)
            r += i;
        if (r > 50)
            r = 50;
        Object o = x == 42 ? null : "s";
        if (o == null)
            r++;
        if (o != MARK)
            r--;
        return r;
    }
}
