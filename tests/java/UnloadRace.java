import java.io.InputStream;

/** UnloadRace [ROUNDS]: workload of the unload_race test (legacy-agents/unload_race.c).
 *  Defines IdentUnloadee through ROUNDS (default 300) throw-away class loaders, using and
 *  dropping each, with a System.gc() every 10 rounds, so that classes unload while the
 *  agent's own thread keeps asking RequestEvent(CLASS_LOAD) for their ids. Then collects
 *  until the agent has reported most unloads (system property unload.race.unloads, set
 *  from its CLASS_UNLOAD handler) or 40 s pass (a loaded machine once took longer than 15 s
 *  to report 270). Prints
 *    UnloadRace: rounds=R */
public class UnloadRace {
    static int useOne() throws Exception {
        Class<?> c = new IdentUnload.Loader().loadClass("IdentUnloadee"); /* a throw-away loader */
        return c.getDeclaredConstructor().newInstance().hashCode() & 1;
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        try (InputStream in = UnloadRace.class.getResourceAsStream("/IdentUnloadee.class")) {
            IdentUnload.bytes = in.readAllBytes();
        }
        int x = 0;
        for (int i = 0; i < rounds; i++) {
            x += useOne();
            if (i % 10 == 9)
                System.gc();
        }
        long end = System.nanoTime() + 40_000_000_000L;
        while (System.nanoTime() < end) {
            System.gc();
            Thread.sleep(50);
            String s = System.getProperty("unload.race.unloads");
            if (s != null && Integer.parseInt(s) >= rounds * 9 / 10)
                break;
        }
        System.out.println("UnloadRace: rounds=" + rounds + " x=" + (x >= 0));
    }
}
