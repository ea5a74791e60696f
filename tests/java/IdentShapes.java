/** The class whose shape the ident_classes test checks: static and instance fields in a
 *  known declaration order (CLASS_LOAD lists them reversed), methods with multi-line
 *  bodies, a switch, a native method and an abstract nested class (-1/-1 lines), an inner
 *  class (synthetic this$0 field), two direct interfaces. Ground truth: IdentClassFacts. */
public class IdentShapes extends IdentShapesBase implements IdentShapesIface, java.io.Serializable {
    static int sAlpha = 1;
    static String sBeta;
    private static final long[] sGamma = new long[3];
    int iAlpha;
    protected Object iBeta;
    double iGamma;
    IdentShapes iDelta;
    transient java.util.List<String> iEpsilon;

    public IdentShapes() {
        iAlpha = 7;
        iBeta = "beta";
    }

    public int compute(int x) {
        int y = x * 2;
        if (y > 10) {
            y -= 3;
        }
        return y;
    }

    static String multiLine(String a,
                            String b) {
        StringBuilder sb = new StringBuilder();
        sb.append(a);
        sb.append(b);
        return sb.toString();
    }

    public native void nat(int code);

    public void shape() { iGamma += 1.5; }

    protected int baseOp(int v) {
        return v * 3;
    }

    static int sw(int k) {
        switch (k) {
        case 1:
            return 10;
        case 2:
            return 20;
        case 3:
            return 30;
        default:
            return -1;
        }
    }

    static int lookup(int k) {
        switch (k) {
        case 100:
            return 1;
        case 5000:
            return 2;
        }
        return 0;
    }

    static long loop(int n) {
        long s = 0;
        for (int i = 0; i < n; i++)
            s += i;
        return s;
    }

    static abstract class Nested {
        static int nStatic;
        long nFirst;
        String nSecond;

        abstract void ab(int q);

        native int nat2();

        void conc() {
            nFirst++;
        }
    }

    class Inner {
        int q;

        int get() {
            return iAlpha + q;
        }
    }
}
