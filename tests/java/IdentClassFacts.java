import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/** IdentClassFacts FILE.class...: ground truth for the ident_classes test, read straight from
 *  class files (no JVM reflection, no JVMTI); FILE may also be jrt:/MODULE/PATH.class (a JDK
 *  class as shipped in the runtime image). For each file prints, in the agent's format:
 *    CLASS <dotted name> src=<SourceFile|NULL> ifaces=<n> methods=<n> statics=<n> instances=<n>
 *    M <class> <method> <descriptor> <start> <end>   (class-file order; start = line of bci 0,
 *                                                     end = line of the last instruction;
 *                                                     -1 -1 without code or line table)
 *    S <class> <field> <descriptor>                  (static fields, reverse declaration order)
 *    I <class> <field> <descriptor>                  (instance fields, reverse order) */
public class IdentClassFacts {
    static String[] utf8;
    static int[] classIdx;

    public static void main(String[] args) throws IOException {
        for (String a : args)
            facts(a);
    }

    static void facts(String path) throws IOException {
        byte[] bytes = path.startsWith("jrt:/")
                ? Files.readAllBytes(FileSystems.getFileSystem(URI.create("jrt:/")).getPath("/modules/" + path.substring(5)))
                : Files.readAllBytes(Paths.get(path));
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            if (in.readInt() != 0xCAFEBABE)
                throw new IOException(path + ": not a class file");
            in.readUnsignedShort();
            in.readUnsignedShort();
            int n = in.readUnsignedShort();
            utf8 = new String[n];
            classIdx = new int[n];
            for (int i = 1; i < n; i++) {
                int tag = in.readUnsignedByte();
                switch (tag) {
                case 1: utf8[i] = in.readUTF(); break;
                case 3: case 4: in.readInt(); break;
                case 5: case 6: in.readLong(); i++; break;
                case 7: classIdx[i] = in.readUnsignedShort(); break;
                case 8: case 16: case 19: case 20: in.readUnsignedShort(); break;
                case 9: case 10: case 11: case 12: case 17: case 18: in.readInt(); break;
                case 15: in.readUnsignedByte(); in.readUnsignedShort(); break;
                default: throw new IOException(path + ": constant tag " + tag);
                }
            }
            in.readUnsignedShort();
            String name = utf8[classIdx[in.readUnsignedShort()]].replace('/', '.');
            in.readUnsignedShort();
            int ni = in.readUnsignedShort();
            for (int i = 0; i < ni; i++)
                in.readUnsignedShort();
            List<String> statics = new ArrayList<>(), instances = new ArrayList<>();
            int nf = in.readUnsignedShort();
            for (int i = 0; i < nf; i++) {
                int flags = in.readUnsignedShort();
                String f = utf8[in.readUnsignedShort()] + " " + utf8[in.readUnsignedShort()];
                skipAttributes(in);
                ((flags & 0x0008) != 0 ? statics : instances).add(0, f);
            }
            List<String> methods = new ArrayList<>();
            int nm = in.readUnsignedShort();
            for (int i = 0; i < nm; i++) {
                in.readUnsignedShort();
                String m = utf8[in.readUnsignedShort()] + " " + utf8[in.readUnsignedShort()];
                int start = -1, end = -1;
                int na = in.readUnsignedShort();
                for (int k = 0; k < na; k++) {
                    String an = utf8[in.readUnsignedShort()];
                    int len = in.readInt();
                    byte[] body = new byte[len];
                    in.readFully(body);
                    if (an.equals("Code")) {
                        int[] se = codeLines(body);
                        start = se[0];
                        end = se[1];
                    }
                }
                methods.add(m + " " + start + " " + end);
            }
            String src = null;
            int na = in.readUnsignedShort();
            for (int k = 0; k < na; k++) {
                String an = utf8[in.readUnsignedShort()];
                int len = in.readInt();
                byte[] body = new byte[len];
                in.readFully(body);
                if (an.equals("SourceFile"))
                    src = utf8[((body[0] & 0xff) << 8) | (body[1] & 0xff)];
            }
            System.out.println("CLASS " + name + " src=" + (src == null ? "NULL" : src) + " ifaces=" + ni
                    + " methods=" + nm + " statics=" + statics.size() + " instances=" + instances.size());
            for (String m : methods)
                System.out.println("M " + name + " " + m);
            for (String f : statics)
                System.out.println("S " + name + " " + f);
            for (String f : instances)
                System.out.println("I " + name + " " + f);
        }
    }

    static void skipAttributes(DataInputStream in) throws IOException {
        int na = in.readUnsignedShort();
        for (int k = 0; k < na; k++) {
            in.readUnsignedShort();
            in.skipBytes(in.readInt());
        }
    }

    static int u2(byte[] b, int p) { return ((b[p] & 0xff) << 8) | (b[p + 1] & 0xff); }
    static int s4(byte[] b, int p) { return (b[p] << 24) | ((b[p + 1] & 0xff) << 16) | ((b[p + 2] & 0xff) << 8) | (b[p + 3] & 0xff); }

    /** {line of bci 0, line of the last instruction} from a Code attribute body. */
    static int[] codeLines(byte[] c) {
        int codeLen = s4(c, 4);
        int code = 8;
        int last = 0;
        for (int pc = 0; pc < codeLen; ) {
            last = pc;
            pc += insnLength(c, code, pc);
        }
        int p = code + codeLen;
        p += 2 + 8 * u2(c, p);          // exception table
        int na = u2(c, p);
        p += 2;
        List<int[]> lines = new ArrayList<>();
        for (int k = 0; k < na; k++) {
            String an = utf8[u2(c, p)];
            int len = s4(c, p + 2);
            if (an.equals("LineNumberTable")) {
                int n = u2(c, p + 6);
                for (int i = 0; i < n; i++)
                    lines.add(new int[] {u2(c, p + 8 + 4 * i), u2(c, p + 10 + 4 * i)});
            }
            p += 6 + len;
        }
        if (lines.isEmpty())
            return new int[] {-1, -1};
        return new int[] {lineOf(lines, 0), lineOf(lines, last)};
    }

    static int lineOf(List<int[]> lines, int bci) {
        int best = -1, line = -1;
        for (int[] e : lines)
            if (e[0] <= bci && e[0] > best) {
                best = e[0];
                line = e[1];
            }
        return line;
    }

    static int insnLength(byte[] c, int code, int pc) {
        int op = c[code + pc] & 0xff;
        switch (op) {
        case 0x10: case 0x12: case 0x15: case 0x16: case 0x17: case 0x18: case 0x19:
        case 0x36: case 0x37: case 0x38: case 0x39: case 0x3a: case 0xa9: case 0xbc:
            return 2;
        case 0x11: case 0x13: case 0x14: case 0x84: case 0xa7: case 0xa8: case 0xbb: case 0xbd:
        case 0xc0: case 0xc1: case 0xc6: case 0xc7:
            return 3;
        case 0xc5:
            return 4;
        case 0xb9: case 0xba: case 0xc8: case 0xc9:
            return 5;
        case 0xc4:
            return (c[code + pc + 1] & 0xff) == 0x84 ? 6 : 4;
        case 0xaa: {
            int p = (pc + 4) & ~3;
            int lo = s4(c, code + p + 4), hi = s4(c, code + p + 8);
            return p + 12 + 4 * (hi - lo + 1) - pc;
        }
        case 0xab: {
            int p = (pc + 4) & ~3;
            int np = s4(c, code + p + 4);
            return p + 8 + 8 * np - pc;
        }
        default:
            if (op >= 0x99 && op <= 0xa6)
                return 3;
            if (op >= 0xb2 && op <= 0xb8)
                return 3;
            return 1;
        }
    }
}
