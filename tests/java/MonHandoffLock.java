/** MonHandoffLock: the lock of the mon_events test's hand-off phase (tests/java/MonEvents.java);
 *  exactly one instance exists, MonEvents.HLOCK. */
public class MonHandoffLock {
}
