/** A class the ident_classes test compiles again with javac -g:none: no SourceFile and no
 *  LineNumberTable, so CLASS_LOAD has source_name NULL and -1/-1 lines everywhere. */
public class IdentNoDebug {
    static int counter;
    String label = "nodebug";

    public IdentNoDebug() {
        counter++;
    }

    public int work(int n) {
        int s = 0;
        for (int i = 0; i < n; i++)
            s += i;
        return s;
    }

    native void nat();
}
