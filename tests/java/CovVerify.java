import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;

/* CovVerify — a class that fails verification still throws VerifyError at its first use,
 * although the shim links classes when they are defined (tests/it/classes/cov_pair.sh).
 * Defines CovVerifyBad (static Object m() { iconst_0; areturn; }) with defineClass, which
 * does not link it, then calls m() twice through reflection. Then defines CovVerify itself
 * again in a loader of its own, twice (the second definition fails: a duplicate), and uses
 * that class on another thread. Prints
 * "CovVerify: first=<exception class> second=<exception class>" and
 * "CovVerify: dup=<exception class> used=<ok|exception>". */
public class CovVerify {
    public static byte[] bad() throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        DataOutputStream o = new DataOutputStream(b);
        o.writeInt(0xCAFEBABE);
        o.writeShort(0);
        o.writeShort(52);
        o.writeShort(8);                                  // constant pool count
        o.writeByte(1); o.writeUTF("CovVerifyBad");       // #1
        o.writeByte(7); o.writeShort(1);                  // #2 class
        o.writeByte(1); o.writeUTF("java/lang/Object");   // #3
        o.writeByte(7); o.writeShort(3);                  // #4 class
        o.writeByte(1); o.writeUTF("m");                  // #5
        o.writeByte(1); o.writeUTF("()Ljava/lang/Object;"); // #6
        o.writeByte(1); o.writeUTF("Code");               // #7
        o.writeShort(0x21); o.writeShort(2); o.writeShort(4);
        o.writeShort(0);                                  // interfaces
        o.writeShort(0);                                  // fields
        o.writeShort(1);                                  // methods
        o.writeShort(0x9); o.writeShort(5); o.writeShort(6); o.writeShort(1);
        o.writeShort(7); o.writeInt(14);
        o.writeShort(1); o.writeShort(0); o.writeInt(2);
        o.writeByte(0x03); o.writeByte(0xb0);             // iconst_0; areturn
        o.writeShort(0); o.writeShort(0);
        o.writeShort(0);                                  // class attributes
        o.flush();
        return b.toByteArray();
    }

    static String call(Class<?> c) {
        try {
            c.getMethod("m").invoke(null);
            return "none";
        } catch (Throwable t) {
            return t.getClass().getName();
        }
    }

    public static void main(String[] args) throws Exception {
        final byte[] bytes = bad();
        ClassLoader l = new ClassLoader(CovVerify.class.getClassLoader()) {
            @Override
            protected Class<?> findClass(String name) throws ClassNotFoundException {
                if (!name.equals("CovVerifyBad"))
                    throw new ClassNotFoundException(name);
                return defineClass(name, bytes, 0, bytes.length);
            }
        };
        Class<?> c = Class.forName("CovVerifyBad", false, l);
        System.out.println("CovVerify: first=" + call(c) + " second=" + call(c));

        final byte[] self;
        try (java.io.InputStream in = CovVerify.class.getResourceAsStream("CovVerify.class")) {
            self = in.readAllBytes();
        }
        class Dup extends ClassLoader {
            Dup() { super(CovVerify.class.getClassLoader()); }
            Class<?> define() { return defineClass("CovVerify", self, 0, self.length); }
        }
        Dup d = new Dup();
        final Class<?> first = d.define();
        String dup = "none";
        try {
            d.define();
        } catch (Throwable t) {
            dup = t.getClass().getName();
        }
        final String[] used = {"not run"};
        Thread u = new Thread(() -> {
            try {
                used[0] = ((Object) first.getMethod("bad").invoke(null)) instanceof byte[] ? "ok" : "bad";
            } catch (Throwable t) {
                used[0] = t.toString();
            }
        }, "covverify-user");
        u.start();
        u.join();
        System.out.println("CovVerify: dup=" + dup + " used=" + used[0]);
    }
}
