/** DumpMarkerBase: superclass of DumpMarker (heap-dump tests), so that instance dumps carry
 *  a superclass's fields after the class's own. */
public class DumpMarkerBase {
    int base;       /* 1000 + k */
    Object bref;    /* DumpMarkers.class for k == 0, else null */

    DumpMarkerBase(int k) {
        base = 1000 + k;
        bref = k == 0 ? DumpMarkers.class : null;
    }
}
