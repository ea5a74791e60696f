/** Marker of tests/java/InvisGc.java: its CLASS_LOAD makes legacy-agents/invis_gc.c call RunGC. */
public class InvisGcMark {
}
