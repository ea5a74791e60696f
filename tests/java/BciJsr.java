import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/** BciJsr: builds the bytes of BciJsrOld, a class file of version 49.0 (as JDK 1.4's javac
 *  wrote them: no StackMapTable) whose methods use jsr/ret subroutines, which no current
 *  javac emits. BciMain defines it with its own loader; the agent rewrites it like any class.
 *    static int f(int x) = 2x + 1, the + 1 in a subroutine
 *    static int g(int n) = n(n+1)/2, a loop calling a subroutine that adds i + 1 */
public class BciJsr {
    static final byte[] F = {
        0x1a, 0x05, 0x68, 0x3c,                 //  0 iload_0 iconst_2 imul istore_1
        (byte) 0xa8, 0x00, 0x05,                //  4 jsr 9
        0x1b, (byte) 0xac,                      //  7 iload_1 ireturn
        0x4d, (byte) 0x84, 0x01, 0x01,          //  9 astore_2 iinc 1 1
        (byte) 0xa9, 0x02};                     // 13 ret 2
    static final byte[] G = {
        0x03, 0x3c, 0x03, 0x3d,                 //  0 iconst_0 istore_1 iconst_0 istore_2
        0x1c, 0x1a, (byte) 0xa2, 0x00, 0x15,    //  4 iload_2 iload_0 if_icmpge 27
        (byte) 0xa8, 0x00, 0x09,                //  9 jsr 18
        (byte) 0x84, 0x02, 0x01,                // 12 iinc 2 1
        (byte) 0xa7, (byte) 0xff, (byte) 0xf5,  // 15 goto 4
        0x4e, 0x1b, 0x1c, 0x60, 0x04, 0x60, 0x3c, // 18 astore_3 iload_1 iload_2 iadd iconst_1 iadd istore_1
        (byte) 0xa9, 0x03,                      // 25 ret 3
        0x1b, (byte) 0xac};                     // 27 iload_1 ireturn

    static byte[] bytes() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        DataOutputStream d = new DataOutputStream(b);
        d.writeInt(0xCAFEBABE);
        d.writeShort(0);
        d.writeShort(49);
        d.writeShort(9);
        d.writeByte(1); d.writeUTF("BciJsrOld");        // 1
        d.writeByte(7); d.writeShort(1);                // 2
        d.writeByte(1); d.writeUTF("java/lang/Object"); // 3
        d.writeByte(7); d.writeShort(3);                // 4
        d.writeByte(1); d.writeUTF("f");                // 5
        d.writeByte(1); d.writeUTF("(I)I");             // 6
        d.writeByte(1); d.writeUTF("g");                // 7
        d.writeByte(1); d.writeUTF("Code");             // 8
        d.writeShort(0x21);
        d.writeShort(2);
        d.writeShort(4);
        d.writeShort(0);
        d.writeShort(0);
        d.writeShort(2);
        method(d, 5, 3, F);
        method(d, 7, 4, G);
        d.writeShort(0);
        return b.toByteArray();
    }

    static void method(DataOutputStream d, int name, int maxLocals, byte[] code) throws IOException {
        d.writeShort(0x0009); // public static
        d.writeShort(name);
        d.writeShort(6);
        d.writeShort(1);
        d.writeShort(8);
        d.writeInt(12 + code.length);
        d.writeShort(2);
        d.writeShort(maxLocals);
        d.writeInt(code.length);
        d.write(code);
        d.writeShort(0);
        d.writeShort(0);
    }
}
