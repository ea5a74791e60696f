/** BciPoint: a record (accessors, toString/equals/hashCode through invokedynamic). */
public record BciPoint(int x, int y) {
    public BciPoint {
        if (x < 0)
            throw new IllegalArgumentException("x");
    }

    int sum() {
        return x + y;
    }
}
