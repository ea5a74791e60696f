/** BciLoaded: defined by BciMain's own class loader (never by the application loader), so it
 *  reaches the agent's ClassFileLoadHook with that loader. */
public class BciLoaded implements BciWork {
    static int calls;

    public int work(int i) {
        calls++;
        return i % 7 == 0 ? i / 7 : i + 1;
    }
}
