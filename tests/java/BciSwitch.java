/** BciSwitch: tableswitch and lookupswitch at many offsets (0..7 bytes of code before them),
 *  so that after rewriting their padding is recomputed at every alignment. sw(n, k) must
 *  equal expect(n, k). */
public class BciSwitch {
    static int t0(int k) { switch (k) { case 0: return 10; case 1: return 11; case 2: return 12; default: return -1; } }
    static int t1(int k) { k++; switch (k) { case 1: return 10; case 2: return 11; case 3: return 12; default: return -1; } }
    static int t2(int k) { k += 200; switch (k) { case 200: return 10; case 201: return 11; case 202: return 12; default: return -1; } }
    static int t3(int k) { int a = 1; k += a; switch (k) { case 1: return 10; case 2: return 11; case 3: return 12; default: return -1; } }
    static int t4(int k) { int a = 1, b = 0; k += a - b; switch (k) { case 1: return 10; case 2: return 11; case 3: return 12; default: return -1; } }
    static int t5(int k) { k = k + 1000; switch (k) { case 1000: return 10; case 1001: return 11; case 1002: return 12; default: return -1; } }
    static int t6(int k) { long z = 3; k += (int) z - 3; switch (k) { case 0: return 10; case 1: return 11; case 2: return 12; default: return -1; } }
    static int t7(int k) { int a = 5; a *= 2; k += a - 10; switch (k) { case 0: return 10; case 1: return 11; case 2: return 12; default: return -1; } }
    static int l0(int k) { switch (k) { case 0: return 10; case 100: return 11; case 10000: return 12; default: return -1; } }
    static int l1(int k) { k++; switch (k) { case 1: return 10; case 101: return 11; case 10001: return 12; default: return -1; } }
    static int l2(int k) { k += 200; switch (k) { case 200: return 10; case 300: return 11; case 10200: return 12; default: return -1; } }
    static int l3(int k) { int a = 1; k += a; switch (k) { case 1: return 10; case 101: return 11; case 10001: return 12; default: return -1; } }
    static int l4(int k) { int a = 1, b = 0; k += a - b; switch (k) { case 1: return 10; case 101: return 11; case 10001: return 12; default: return -1; } }
    static int l5(int k) { k = k + 1000; switch (k) { case 1000: return 10; case 1100: return 11; case 11000: return 12; default: return -1; } }
    static int l6(int k) { long z = 3; k += (int) z - 3; switch (k) { case 0: return 10; case 100: return 11; case 10000: return 12; default: return -1; } }
    static int l7(int k) { int a = 5; a *= 2; k += a - 10; switch (k) { case 0: return 10; case 100: return 11; case 10000: return 12; default: return -1; } }

    static int sw(int n, int k) {
        switch (n) {
        case 0: return t0(k); case 1: return t1(k); case 2: return t2(k); case 3: return t3(k);
        case 4: return t4(k); case 5: return t5(k); case 6: return t6(k); case 7: return t7(k);
        case 8: return l0(k); case 9: return l1(k); case 10: return l2(k); case 11: return l3(k);
        case 12: return l4(k); case 13: return l5(k); case 14: return l6(k); default: return l7(k);
        }
    }
    /** The keys that hit a case: 0, 1, 2 for the tableswitches, 0, 100, 10000 for the others. */
    static int key(int n, int i) { return n < 8 ? i : i == 0 ? 0 : i == 1 ? 100 : 10000; }

    /** Returns the number of wrong results (0 expected) over 16 methods x 5 keys. */
    static int check() {
        int bad = 0;
        for (int n = 0; n < 16; n++) {
            for (int i = 0; i < 3; i++)
                if (sw(n, key(n, i)) != 10 + i)
                    bad++;
            if (sw(n, -7) != -1 || sw(n, 5) != -1)
                bad++;
        }
        return bad;
    }
}
