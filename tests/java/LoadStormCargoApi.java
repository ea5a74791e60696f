import java.util.function.IntUnaryOperator;

/** Defined again and again by the fresh class loaders of LoadStorm (with LoadStormCargo and
 *  LoadStormCargoSub): each definition is a new interface, announced by its own CLASS_LOAD. */
public interface LoadStormCargoApi extends IntUnaryOperator {
    int weight();
}
