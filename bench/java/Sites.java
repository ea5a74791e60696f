/* Sites — an allocating program of about a second, for allocation-site profilers.
 *
 *   java Sites [ROUNDS [THREADS]]  (default 40 rounds on 1 thread)
 *
 * Each round does what ordinary code does: it parses generated "log lines" into records
 * (substring, Integer parsing, a small object per line), counts words in a HashMap
 * (String keys, boxed counts), sorts a list of the records and formats a report with a
 * StringBuilder. The allocations come from a dozen sites at several call depths, so a
 * profiler keyed by allocation site and a 4-frame trace sees a realistic spread. Results
 * are kept in a ring, so escape analysis removes little. With THREADS > 1, that many
 * threads each do ROUNDS rounds at once (a profiler that takes one lock per allocation then
 * has it contended). Prints
 *   BENCH Sites rounds=N threads=K elapsed_ms=T cpu_ms=C result=R
 * with T measured inside Java around the rounds (from the start of the threads to the end
 * of the last) and C the CPU time of the thread or threads that ran them.
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public class Sites {
    static final String[] WORDS = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta",
        "theta", "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi"};

    static final class Record implements Comparable<Record> {
        final String host;
        final int code;
        final long bytes;
        Record(String host, int code, long bytes) { this.host = host; this.code = code; this.bytes = bytes; }
        public int compareTo(Record o) { return Long.compare(bytes, o.bytes); }
    }

    static String line(int i) {
        return "host" + (i % 97) + " " + (200 + i % 5) + " " + (i * 31 % 10007) + " " + WORDS[i % WORDS.length];
    }

    static Record parse(String s) {
        int a = s.indexOf(' '), b = s.indexOf(' ', a + 1), c = s.indexOf(' ', b + 1);
        return new Record(s.substring(0, a), Integer.parseInt(s.substring(a + 1, b)),
                          Long.parseLong(s.substring(b + 1, c)));
    }

    static Map<String, Integer> count(List<String> lines) {
        Map<String, Integer> m = new HashMap<>();
        for (String s : lines) {
            String w = s.substring(s.lastIndexOf(' ') + 1);
            m.merge(w, 1, Integer::sum);
        }
        return m;
    }

    static String report(List<Record> rs, Map<String, Integer> words) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < rs.size(); i += 50)
            sb.append(rs.get(i).host).append(':').append(rs.get(i).bytes).append('\n');
        for (Map.Entry<String, Integer> e : words.entrySet())
            sb.append(e.getKey()).append('=').append(e.getValue()).append('\n');
        return sb.toString();
    }

    static String round(int r) {
        List<String> lines = new ArrayList<>();
        for (int i = 0; i < 5000; i++)
            lines.add(line(r * 5000 + i));
        List<Record> rs = new ArrayList<>(lines.size());
        for (String s : lines)
            rs.add(parse(s));
        rs.sort(null);
        return report(rs, count(lines));
    }

    /* ROUNDS rounds on the calling thread: {result, CPU ns}. */
    static long[] work(int rounds) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        String[] kept = new String[16];
        long sum = 0;
        long c0 = mx.getCurrentThreadCpuTime();
        for (int r = 0; r < rounds; r++) {
            String s = round(r);
            kept[r & 15] = s;
            sum += s.length();
        }
        return new long[] {sum + kept[3].length(), mx.getCurrentThreadCpuTime() - c0};
    }

    public static void main(String[] args) throws InterruptedException {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        int threads = Math.max(1, args.length > 1 ? Integer.parseInt(args[1]) : 1);
        long[][] out = new long[threads][];
        long t0 = System.nanoTime();
        if (threads == 1) {
            out[0] = work(rounds);
        } else {
            Thread[] ts = new Thread[threads];
            for (int k = 0; k < threads; k++) {
                final int kk = k;
                ts[k] = new Thread(() -> out[kk] = work(rounds), "sites-" + k);
                ts[k].start();
            }
            for (Thread t : ts)
                t.join();
        }
        long ms = (System.nanoTime() - t0) / 1_000_000L;
        long result = 0, cpu = 0;
        for (long[] o : out) {
            result += o[0];
            cpu += o[1];
        }
        System.out.println("BENCH Sites rounds=" + rounds + " threads=" + threads + " elapsed_ms=" + ms
                           + " cpu_ms=" + cpu / 1_000_000L + " result=" + result);
    }
}
