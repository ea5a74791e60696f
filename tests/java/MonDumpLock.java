/** MonDumpLock: the lock L of the mon_dump test (tests/java/MonDump.java). */
public class MonDumpLock {
}
