import java.net.InetAddress;
import java.net.ServerSocket;

/** MemRefs: workload of tests/it/memory/mem_jniref.sh. Uses the JDK's networking native library
 *  (libnet caches classes in JNI global references when it initialises), then prints
 *  "MemRefs: done". */
public class MemRefs {
    public static void main(String[] args) throws Exception {
        InetAddress lo = InetAddress.getByName("127.0.0.1");
        try (ServerSocket s = new ServerSocket(0, 1, lo)) {
            System.out.println("MemRefs: listening on " + lo.getHostAddress() + " port>0=" + (s.getLocalPort() > 0));
        }
        System.out.println("MemRefs: done");
    }
}
