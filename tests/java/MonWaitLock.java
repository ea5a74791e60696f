/** MonWaitLock: the object MonEvents waits on (Object.wait); exactly one instance exists. */
public class MonWaitLock {
}
