import java.util.function.IntUnaryOperator;

/** Defined again and again by fresh class loaders in IdentStress (each definition is a new
 *  class with new method ids); recursion gives the sampler deep stacks through it. */
public class IdentStressLeaf implements IntUnaryOperator {
    public int applyAsInt(int x) {
        return deep(x, 24);
    }

    static int deep(int x, int d) {
        if (d == 0) {
            int s = 0;
            for (int i = 0; i < 20_000; i++)
                s += (i * x) ^ (s >>> 3);
            return s;
        }
        return deep(x + 1, d - 1) + 1;
    }
}
