/** MonLock: the lock class of the mon_events test (tests/java/MonEvents.java); exactly one
 *  instance exists, MonEvents.LOCK. */
public class MonLock {
}
