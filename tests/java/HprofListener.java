import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** HprofListener OUT PORTFILE: the other end of hprof's net=host:port, for
 * tests/it/hprof/hprof_output.sh. Listens on an ephemeral port of 127.0.0.1, writes the port number
 * to PORTFILE (atomically: a test polls for it), accepts one connection, copies every byte
 * it receives to OUT until the profiler closes the connection, prints
 * "HprofListener: N bytes" and exits. Gives up after 60 s without a connection.
 */
public class HprofListener {
    public static void main(String[] args) throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            server.setSoTimeout(60_000);
            Path tmp = Path.of(args[1] + ".tmp");
            Files.writeString(tmp, server.getLocalPort() + "\n");
            Files.move(tmp, Path.of(args[1]), StandardCopyOption.ATOMIC_MOVE);
            long n = 0;
            try (Socket s = server.accept(); InputStream in = s.getInputStream();
                 OutputStream out = new FileOutputStream(args[0])) {
                byte[] buf = new byte[1 << 16];
                for (int r; (r = in.read(buf)) > 0; n += r)
                    out.write(buf, 0, r);
            }
            System.out.println("HprofListener: " + n + " bytes");
        }
    }
}
