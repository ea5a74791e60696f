/** MultiTarget: the object whose ids tests/it/lifecycle/multi_agent.sh compares across agents
 *  (allocated and marked by tests/java/MultiWork.java). mark() is the method whose
 *  METHOD_ENTRY2 receiver an agent reports. */
public class MultiTarget {
    final int value;
    int marks;

    MultiTarget(int value) {
        this.value = value;
    }

    void mark() {
        marks++;
    }
}
