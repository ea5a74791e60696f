/** Defined again and again by the fresh class loaders of LoadStorm: a new class each time,
 *  whose static initializer and methods run on the defining thread while a sampler walks
 *  its stack (so call traces name methods of classes defined a moment before). */
public class LoadStormCargo implements LoadStormCargoApi {
    static final int[] TABLE = new int[64];

    static {
        for (int i = 0; i < TABLE.length; i++)
            TABLE[i] = (i * 2654435761L) > 0 ? i * 7 + 1 : i;
    }

    public int weight() {
        return TABLE.length;
    }

    public int applyAsInt(int x) {
        int s = x;
        for (int i = 0; i < 4000; i++)
            s += TABLE[(s ^ i) & 63] ^ (s >>> 5);
        return s;
    }
}
