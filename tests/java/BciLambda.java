import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/** BciLambda: lambdas (their bodies are methods of this class: lambda$run$0, ...) and streams
 *  (JDK code loaded and rewritten while the workload runs). */
public class BciLambda {
    static int mapped, filtered;

    static long run(int n) {
        long s = IntStream.range(0, n).map(x -> {
            mapped++;
            return x * 2;
        }).filter(x -> {
            filtered++;
            return x % 3 == 0;
        }).asLongStream().sum();
        List<String> l = IntStream.range(0, 10).mapToObj(Integer::toString).collect(Collectors.toList());
        return s + String.join(",", l).length();
    }
}
