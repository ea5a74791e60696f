/** BciWork: the interface through which BciMain calls BciLoaded, which only a custom class
 *  loader defines. */
public interface BciWork {
    int work(int i);
}
