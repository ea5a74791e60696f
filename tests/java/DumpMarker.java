/** DumpMarker k: one of the DumpMarkers.N instances the heap-dump tests look for. Field
 *  values are a function of k (see DumpMarkers). */
public class DumpMarker extends DumpMarkerBase {
    int i;          /* k */
    long l;         /* k * 1000 */
    double d;       /* k + 0.5 */
    boolean z;      /* k even */
    String s;       /* DumpMarkers.SS for odd k, else null */
    Object ref;     /* marker k+1, null for the last */

    DumpMarker(int k, DumpMarker next) {
        super(k);
        i = k;
        l = k * 1000L;
        d = k + 0.5;
        z = k % 2 == 0;
        s = k % 2 == 1 ? DumpMarkers.SS : null;
        ref = next;
    }
}
