/** Exit N: prints "exiting N" and calls System.exit(N). */
public class Exit {
    public static void main(String[] args) {
        int code = Integer.parseInt(args[0]);
        System.out.println("exiting " + code);
        System.exit(code);
    }
}
