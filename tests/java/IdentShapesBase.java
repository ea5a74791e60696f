/** Superclass of IdentShapes (ident_classes test): its fields and interfaces are not
 *  IdentShapes' own (CLASS_LOAD lists local members and direct interfaces only). */
public abstract class IdentShapesBase implements Cloneable {
    protected int baseField;
    static long baseStatic;

    protected abstract int baseOp(int v);

    int baseWork() {
        return baseOp(baseField) + 1;
    }
}
