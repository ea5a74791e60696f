// ExecInsn — workload of tests/it/methods/exec_insn.sh: branchy(x) has an if, a tableswitch and a
// lookupswitch; it runs once per input below, and prints the inputs as ground truth.
public class ExecInsn {
    static int branchy(int x) {
        int r = 0;
        if (x > 5) r += 1; else r -= 1;
        switch (x) {            // tableswitch 1..3
            case 1: r += 10; break;
            case 2: r += 20; break;
            case 3: r += 30; break;
            default: r += 99;
        }
        switch (x) {            // lookupswitch: sparse keys
            case -7: r += 3; break;
            case 10: r += 1; break;
            case 1000: r += 2; break;
            default: r += 4;
        }
        Object o = r > 50 ? null : "s";
        if (o == null) r++;
        return r;
    }

    public static void main(String[] args) {
        int[] inputs = {0, 2, 7, 1000, -7, 3};
        StringBuilder sb = new StringBuilder("ExecInsn: inputs");
        long s = 0;
        for (int x : inputs) {
            s += branchy(x);
            sb.append(' ').append(x);
        }
        System.out.println(sb);
        System.out.println("ExecInsn: sum " + s);
    }
}
