/** MemMarker: the object the memory tests (tests/it/memory/mem_*.sh) count. Nothing else allocates
 *  it. 24 bytes on a 64-bit JVM with compressed class pointers: 12-byte header, int, long. */
public class MemMarker {
    int a;
    long b;

    MemMarker(int a) {
        this.a = a;
        this.b = a;
    }
}
