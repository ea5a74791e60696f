import java.io.InputStream;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntUnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

/** IdentStress [THREADS] [PER_THREAD]: many classes and many threads for the sampling agent
 *  of the ident_classes test (legacy-agents/ident_sampler.c). THREADS (default 40) threads
 *  "ident-stress-NN" each define IdentStressLeaf PER_THREAD (default 8) times through fresh
 *  class loaders and run it, create a proxy class per loader, and use a different corner of
 *  the JDK each round (regex, streams and lambdas, java.time, BigDecimal, digests, zip,
 *  concurrent maps), so hundreds of classes load while the agent samples every thread's
 *  stack. Then main drops the loaders and collects (classes unload while sampling). */
public class IdentStress {
    public interface Api {
        int call(int x);
    }

    static byte[] leafBytes;
    static final AtomicInteger leaves = new AtomicInteger(), proxies = new AtomicInteger();
    static final Map<String, Integer> results = new ConcurrentHashMap<>();

    static class LeafLoader extends ClassLoader {
        LeafLoader() {
            super(IdentStress.class.getClassLoader());
        }

        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!name.equals("IdentStressLeaf"))
                return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null)
                    c = defineClass(name, leafBytes, 0, leafBytes.length);
                return c;
            }
        }
    }

    static int jdkCorner(int k) throws Exception {
        switch (k % 8) {
        case 0: {
            Matcher m = Pattern.compile("(\\w+)-(\\d+)").matcher(String.format("abc-%d xyz-%05d", k, k * 7));
            int n = 0;
            while (m.find())
                n += Integer.parseInt(m.group(2));
            return n;
        }
        case 1:
            return IntStream.range(0, 2000).filter(i -> i % 3 == k % 3).map(i -> i * 2).boxed()
                    .collect(Collectors.groupingBy(i -> i % 5, Collectors.counting())).size();
        case 2:
            return LocalDate.of(2004, 2, 29).plusDays(k).format(DateTimeFormatter.ISO_DATE).length()
                    + (int) Duration.ofMinutes(k).toSeconds();
        case 3:
            return new BigDecimal(BigInteger.valueOf(k).pow(40)).divide(new BigDecimal("7.3"), MathContext.DECIMAL64)
                    .toBigInteger().bitLength();
        case 4: {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            return Base64.getEncoder().encodeToString(md.digest(("k" + k).getBytes("UTF-8"))).length();
        }
        case 5: {
            byte[] in = new byte[4096];
            for (int i = 0; i < in.length; i++)
                in[i] = (byte) (i * k);
            Deflater d = new Deflater();
            d.setInput(in);
            d.finish();
            byte[] buf = new byte[8192];
            int n = d.deflate(buf);
            d.end();
            Inflater inf = new Inflater();
            inf.setInput(buf, 0, n);
            byte[] out = new byte[4096];
            int m = inf.inflate(out);
            inf.end();
            CRC32 crc = new CRC32();
            crc.update(out, 0, m);
            return (int) crc.getValue();
        }
        case 6: {
            List<String> l = new ArrayList<>();
            for (int i = 0; i < 200; i++)
                l.add(Integer.toHexString(i * k));
            return String.join(",", l).length();
        }
        default: {
            ConcurrentHashMap<Integer, String> m = new ConcurrentHashMap<>();
            for (int i = 0; i < 500; i++)
                m.merge(i % 37, "v" + i, String::concat);
            return m.reduceValuesToInt(4, String::length, 0, Integer::sum);
        }
        }
    }

    static void work(int id, int n) {
        try {
            int acc = 0;
            for (int j = 0; j < n; j++) {
                LeafLoader l = new LeafLoader();
                Class<?> c = l.loadClass("IdentStressLeaf");
                IntUnaryOperator op = (IntUnaryOperator) c.getDeclaredConstructor().newInstance();
                leaves.incrementAndGet();
                acc += op.applyAsInt(id + j);
                InvocationHandler h = (p, m, a) -> ((Integer) a[0]) + 1;
                Api api = (Api) Proxy.newProxyInstance(l, new Class<?>[] {Api.class}, h);
                proxies.incrementAndGet();
                acc += api.call(j);
                acc += jdkCorner(id + j);
                if (j % 3 == 0)
                    Thread.sleep(2);
            }
            results.put(Thread.currentThread().getName(), acc);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        int nt = args.length > 0 ? Integer.parseInt(args[0]) : 40;
        int per = args.length > 1 ? Integer.parseInt(args[1]) : 8;
        try (InputStream in = IdentStress.class.getResourceAsStream("/IdentStressLeaf.class")) {
            leafBytes = in.readAllBytes();
        }
        Thread[] ts = new Thread[nt];
        for (int i = 0; i < nt; i++) {
            final int id = i;
            ts[i] = new Thread(() -> work(id, per), String.format("ident-stress-%02d", i));
        }
        for (Thread t : ts)
            t.start();
        for (Thread t : ts)
            t.join();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        System.out.println("IdentStress: threads=" + nt + " finished=" + results.size() + " leaves=" + leaves.get()
                + " proxies=" + proxies.get());
    }
}
