import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

/** IdentClasses: workload of the ident_classes test. Loads and uses IdentShapes (and its
 *  base, interface, nested and inner classes) and IdentNoDebug, prints what reflection says
 *  about each (direct interfaces, static/instance field counts, declared methods and
 *  constructors), then loads IdentClasses$Done, in whose CLASS_LOAD handler the agent runs
 *  its RequestEvent / id checks. */
public class IdentClasses {
    static class Done {}

    static void describe(Class<?> c) {
        int st = 0, in = 0;
        for (Field f : c.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()))
                st++;
            else
                in++;
        }
        System.out.println("IdentClasses: java " + c.getName() + " interfaces=" + c.getInterfaces().length
                + " statics=" + st + " instances=" + in + " methods=" + c.getDeclaredMethods().length
                + " ctors=" + c.getDeclaredConstructors().length);
    }

    public static void main(String[] args) throws Exception {
        IdentShapes s = new IdentShapes();
        int r = s.compute(7) + IdentShapes.sw(2) + IdentShapes.lookup(100) + (int) IdentShapes.loop(4)
                + s.twice(3) + IdentShapesIface.thrice(2) + s.baseWork();
        s.shape();
        String m = IdentShapes.multiLine("a", "b");
        Class<?> nested = Class.forName("IdentShapes$Nested");
        Class<?> inner = Class.forName("IdentShapes$Inner");
        java.util.zip.Adler32 adler = new java.util.zip.Adler32();
        adler.update(r);
        IdentNoDebug nd = new IdentNoDebug();
        r += nd.work(5);
        for (Class<?> c : new Class<?>[] {IdentShapes.class, IdentShapesBase.class, IdentShapesIface.class,
                nested, inner, IdentNoDebug.class})
            describe(c);
        System.out.println("IdentClasses: result=" + r + " " + m);
        Class.forName("IdentClasses$Done");
        System.out.println("IdentClasses: done");
    }
}
