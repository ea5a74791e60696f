/** Defined again by each fresh class loader of AllocSites: a new class (and Class object)
 *  at run time, whose instances name a class id nobody has announced yet. */
public class AllocSitesLoadee {
    public int v;

    public AllocSitesLoadee() {
        v = 7;
    }
}
