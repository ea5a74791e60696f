/** BciColor: an enum with a method and a constant-specific body. */
public enum BciColor {
    RED, GREEN, BLUE {
        @Override
        int code() {
            return 99;
        }
    };

    int code() {
        return ordinal() * 10;
    }
}
