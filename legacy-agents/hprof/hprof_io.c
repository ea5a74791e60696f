/* hprof_io.c — HPROF output: a file or a socket, ASCII or binary, and the exact formats.
 *
 * All output goes through one buffered stream (a file descriptor: the file, or a TCP
 * socket for net=host:port), written holding data_lock. A write error is reported once and
 * the rest of the output is dropped: the profiled program keeps running.
 *
 * ===== ASCII format (format=a, default file java.hprof.txt) =====
 * Numbers are decimal except object ids, which are hexadecimal without 0x. Class names are
 * the Java names ("java.lang.String", "DemoApp$Record", "int[]", "java.lang.Object[]").
 * The file starts with
 *     JAVA PROFILE 1.0.1, created <date>
 * a blank line, a header that explains the record kinds, and a line "--------". <date> is
 * as ctime(3) without the newline: "Wed Oct  7 11:38:10 1998". Then, as things happen:
 *     THREAD START (obj=<id>, id = <thread>, name="<name>", group="<group>")
 *     THREAD END (id = <thread>)
 * Threads are numbered from 1 in the order they start. At each dump (program exit unless
 * doe=n, and every DATA_DUMP_REQUEST: SIGQUIT), first the stack traces not yet written:
 *     TRACE <n>:                        (thread=n)
 *     TRACE <n>: (thread=<thread>)      (thread=y: traces are told apart by thread; a
 *                                        thread that has no id yet, such as one whose
 *                                        java.lang.Thread is being built, names none)
 *     \t<class>.<method>(<file>:<line>)  one line per frame, innermost first, at most depth=
 *     \t<empty>                          a trace with no Java frames
 * <file> is the source file or "Unknown source"; <line> is a number, "Unknown line" (no
 * line table, or lineno=n), "Native method" or "Compiled method". Traces are numbered
 * from 1 in the order they are first met. Then the sections the options ask for, in this
 * order; each row is one line, rows ranked by the first percentage, and a table stops at
 * the first row whose "self" share is below cutoff= (a fraction; 0 prints every row):
 *   heap=dump|all:
 *     HEAP DUMP BEGIN (<objects> objects, <bytes> bytes) <date>
 *     ROOT <id> (kind=<JNI global ref>, id=<handle>, trace=<n>)
 *     ROOT <id> (kind=<JNI local ref>, thread=<thread>, frame=<f>)
 *     ROOT <id> (kind=<Java stack>, thread=<thread>, frame=<f>)
 *     ROOT <id> (kind=<native stack>, thread=<thread>)
 *     ROOT <id> (kind=<system class>, name=<class>)
 *     ROOT <id> (kind=<thread block>, thread=<thread>)
 *     ROOT <id> (kind=<busy monitor>)
 *     ROOT <id> (kind=<thread>, id=<thread>, trace=<n>)
 *     ROOT <id> (kind=<unknown>)
 *     CLS <id> (name=<class>, trace=<n>)
 *     \tsuper\t\t<id>   \tloader\t\t<id>   \tsigners\t\t<id>   \tdomain\t\t<id>
 *     \tstatic <field>\t<id>               one per non-null reference static
 *     \tconstant[<index>]\t<id>            one per resolved constant-pool object
 *     OBJ <id> (sz=<bytes>, trace=<n>, class=<class>@<class id>)
 *     \t<field>\t<id>                      one per non-null reference field
 *     ARR <id> (sz=<bytes>, trace=<n>, nelems=<n>, elem type=<class>@<class id>)
 *     \t[<index>]\t\t<id>                  one per non-null element
 *     ARR <id> (sz=<bytes>, trace=<n>, nelems=<n>, elem type=<int|char|...>)
 *     HEAP DUMP END
 *     <f> is JVMPI's frame number (the innermost frame of N is N, the outermost 1; -1 for
 *     an empty stack). sz and trace come from OBJECT_ALLOC (trace of the allocating
 *     thread); objects allocated before HPROF could see them have the <empty> trace and a
 *     size computed from the dump. Line lengths are those of the objects' own order.
 *   heap=sites|all:
 *     SITES BEGIN (ordered by live bytes) <date>
 *             percent        live       alloc'ed    stack class
 *     rank  self  accum   bytes objs   bytes   objs trace name
 *     %4u %4.2f%% %5.2f%% %7lld %4ld %7lld %6ld %5u %s
 *     SITES END
 *     A site is a (class, trace) pair; self = live bytes / all live bytes.
 *   cpu=samples:
 *     CPU SAMPLES BEGIN (total = <samples>) <date>
 *     rank   self  accum   count trace method
 *     %4u %5.2f%% %5.2f%% %7ld %5u %s        method = class.method of the trace's top frame
 *     CPU SAMPLES END
 *   cpu=times:
 *     CPU TIME (ms) BEGIN (total = <ms>) <date>
 *     rank   self  accum   count trace method
 *     %4u %5.2f%% %5.2f%% %7ld %5u %s        count = calls; self = the trace's own CPU time
 *     CPU TIME (ms) END                       (callees excluded) / all such time
 *   cpu=old (the JDK 1.1 `java -prof` table, one row per caller/callee pair, by count):
 *     CPU TIME (ms) BEGIN (total = <ms>) <date>
 *     count callee caller time
 *     %ld %s %s %lld        class.method(signature) of callee and caller ("<root>" if none);
 *     CPU TIME (ms) END     time = the callee's CPU time in ms, callees included
 *   monitor=y:
 *     MONITOR DUMP BEGIN
 *         THREAD <thread>, trace <n>, status: <R|MW|CW>[,S][,I]
 *         MONITOR <class>(<id>)
 *     \towner: thread <thread>, entry count: <n>
 *     \twaiting to enter: thread <t>, thread <t>...
 *     \twaiting to be notified: thread <t>...
 *         RAW MONITOR "<name>"(<address>)
 *     \t(the same three lines)
 *     MONITOR DUMP END
 *     MONITOR TIME BEGIN (total = <ms> ms) <date>
 *     rank   self  accum   count trace monitor
 *     %4u %5.2f%% %5.2f%% %7ld %5u %s        count = contended entries at that trace,
 *     MONITOR TIME END                        monitor = "<class> (Java)" or "<name> (raw)"
 *     MONITOR WAIT TIME BEGIN (total = <ms> ms) <date>
 *     rank   self  accum   count trace monitor   (the same, for Object.wait: count = waits,
 *     MONITOR WAIT TIME END                       time = time waited)
 * Times are rounded down to whole ms in totals; percentages use the exact times.
 *
 * ===== Binary format (format=b, default file java.hprof) =====
 * The HPROF binary format read by today's heap analysers. Big-endian throughout.
 *     "JAVA PROFILE 1.0.2\0", u4 identifier size (8), u8 milliseconds since the epoch
 * then records: u1 tag, u4 microseconds since the header's time, u4 length of the body, body.
 *     0x01 UTF8          id, bytes (no terminator)
 *     0x02 LOAD CLASS    u4 class serial, id class object, u4 trace serial, id name (UTF8,
 *                        "java/lang/String", "[I", "[Ljava/lang/Object;")
 *     0x03 UNLOAD CLASS  u4 class serial
 *     0x04 FRAME         id frame, id method name, id signature, id source file (UTF8),
 *                        u4 class serial, u4 line (>0 line, -1 unknown, -2 compiled, -3 native)
 *     0x05 TRACE         u4 trace serial, u4 thread serial (0 unless thread=y), u4 n, id[n] frames
 *     0x06 ALLOC SITES   u2 flags (0), u4 cutoff (IEEE float), u4 live bytes, u4 live objects,
 *                        u8 allocated bytes, u8 allocated objects, u4 n, then per site: u1 kind
 *                        (0 object, 2 object array, 4..11 primitive array), u4 class serial
 *                        (element class for object arrays, 0 for primitive arrays), u4 trace
 *                        serial, u4 live bytes, u4 live objects, u4 allocated bytes, u4 allocated objects
 *     0x0A START THREAD  u4 thread serial, id thread object, u4 trace serial, id name,
 *                        id group name, id parent group name (UTF8; 0 for none)
 *     0x0B END THREAD    u4 thread serial
 *     0x0D CPU SAMPLES   u4 total, u4 n, then per trace: u4 count, u4 trace serial
 *                        (cpu=times and cpu=old: count = calls, total = all calls)
 *     0x0E CONTROL SETTINGS  u4 flags (0x1 allocation traces, 0x2 CPU sampling), u2 depth
 *     0x1C HEAP DUMP SEGMENT sub-records (none split across segments), 0x2C HEAP DUMP END
 * Heap dump sub-records (u1 tag):
 *     0xFF ROOT UNKNOWN id             0x01 ROOT JNI GLOBAL id, id handle (0: unknown)
 *     0x02 ROOT JNI LOCAL id, u4 thread serial, u4 frame
 *     0x03 ROOT JAVA FRAME id, u4 thread serial, u4 frame
 *     0x04 ROOT NATIVE STACK id, u4 thread serial      0x05 ROOT STICKY CLASS id
 *     0x06 ROOT THREAD BLOCK id, u4 thread serial      0x07 ROOT MONITOR USED id
 *     0x08 ROOT THREAD OBJECT id, u4 thread serial, u4 trace serial (the thread's whole stack)
 *     0x20 CLASS DUMP id, u4 trace, id super, id loader, id signers, id protection domain,
 *          id 0, id 0, u4 instance size, u2 n constants [u2 index, u1 type, value],
 *          u2 n statics [id name, u1 type, value], u2 n fields [id name, u1 type]
 *     0x21 INSTANCE DUMP id, u4 trace, id class, u4 n bytes, values (own fields first, then
 *          the superclass's, each class's in the order of its CLASS DUMP)
 *     0x22 OBJ ARRAY DUMP id, u4 trace, u4 n, id array class, id[n]
 *     0x23 PRIM ARRAY DUMP id, u4 trace, u4 n, u1 type, values
 * Types: 2 object, 4 boolean, 5 char, 6 float, 7 double, 8 byte, 9 short, 10 int, 11 long.
 * Object and class ids are the JVMPI object ids; UTF8 and frame ids are HPROF's own
 * counters. Frame numbers count from 0 at the innermost frame (JVMPI's N..1 converted).
 * JVMPI dumps no array classes at level 2, so HPROF writes a LOAD CLASS (if it was never
 * told of the class) and a CLASS DUMP (super java.lang.Object, no fields) for the array
 * class of each object array; an array class it was never told of gets an id with the top
 * bit set, which no object id has. Monitor sections have no binary form and are not written.
 */
#include "hprof.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int out_fd = -1;
static int out_failed;
static unsigned char obuf[1 << 16];
static size_t olen;
static struct timeval t0;

static void raw_write(const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n > 0 && !out_failed) {
        ssize_t w = write(out_fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            out_failed = 1;
            hprof_error("cannot write the profile: %s; the rest of the output is lost",
                        w < 0 ? strerror(errno) : "short write");
            return;
        }
        c += w;
        n -= (size_t)w;
    }
}

void io_flush(void)
{
    if (olen > 0 && out_fd >= 0)
        raw_write(obuf, olen);
    olen = 0;
}

void io_write(const void *p, size_t n)
{
    if (out_fd < 0 || out_failed)
        return;
    if (olen + n > sizeof obuf) {
        io_flush();
        if (n >= sizeof obuf) {
            raw_write(p, n);
            return;
        }
    }
    memcpy(obuf + olen, p, n);
    olen += n;
}

void io_printf(const char *fmt, ...)
{
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        io_write(small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (big == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    io_write(big, (size_t)n);
    free(big);
}

const char *io_date(void)
{
    static char d[64];
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(d, sizeof d, "%a %b %e %H:%M:%S %Y", &tm);
    return d;
}

static int open_socket(void)
{
    char port[16];
    snprintf(port, sizeof port, "%d", opt.net_port);
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(opt.net_host, port, &hints, &res);
    if (rc != 0) {
        hprof_error("net=%s:%d: cannot resolve %s: %s", opt.net_host, opt.net_port,
                    opt.net_host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        hprof_error("net=%s:%d: cannot connect: %s", opt.net_host, opt.net_port, strerror(err));
    return fd;
}

int io_open(void)
{
    gettimeofday(&t0, NULL);
    if (opt.net_host != NULL) {
        out_fd = open_socket();
    } else {
        out_fd = open(opt.file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (out_fd < 0)
            hprof_error("cannot open file=%s: %s", opt.file, strerror(errno));
    }
    return out_fd >= 0 ? 0 : -1;
}

void io_close(void)
{
    if (out_fd < 0)
        return;
    io_flush();
    close(out_fd);
    out_fd = -1;
}

/* ---- binary ---- */

static void buf_need(struct buf *b, size_t n)
{
    if (b->oom || b->len + n <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
        cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = 1;
        return;
    }
    b->p = p;
    b->cap = cap;
}

void buf_bytes(struct buf *b, const void *p, size_t n)
{
    buf_need(b, n);
    if (b->oom)
        return;
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void buf_u1(struct buf *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    buf_bytes(b, &c, 1);
}

void buf_u2(struct buf *b, unsigned v)
{
    unsigned char c[2] = {(unsigned char)(v >> 8), (unsigned char)v};
    buf_bytes(b, c, 2);
}

void buf_u4(struct buf *b, uint32_t v)
{
    unsigned char c[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    buf_bytes(b, c, 4);
}

void buf_u8(struct buf *b, uint64_t v)
{
    buf_u4(b, (uint32_t)(v >> 32));
    buf_u4(b, (uint32_t)v);
}

void buf_id(struct buf *b, uint64_t id)
{
    buf_u8(b, id);
}

void buf_free(struct buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}

void io_record(int tag, const struct buf *body)
{
    struct timeval now;
    gettimeofday(&now, NULL);
    long long us = (now.tv_sec - t0.tv_sec) * 1000000LL + (now.tv_usec - t0.tv_usec);
    unsigned char h[9];
    uint32_t dt = (uint32_t)(us < 0 ? 0 : us), len = (uint32_t)body->len;
    h[0] = (unsigned char)tag;
    h[1] = (unsigned char)(dt >> 24);
    h[2] = (unsigned char)(dt >> 16);
    h[3] = (unsigned char)(dt >> 8);
    h[4] = (unsigned char)dt;
    h[5] = (unsigned char)(len >> 24);
    h[6] = (unsigned char)(len >> 16);
    h[7] = (unsigned char)(len >> 8);
    h[8] = (unsigned char)len;
    io_write(h, sizeof h);
    io_write(body->p, body->len);
}

/* UTF8 records: one per distinct string, ids from 1. Chained hash under data_lock. */
struct ustr {
    struct ustr *next;
    unsigned hash;
    uint64_t id;
    char s[];
};
static struct ustr **ubuckets;
static size_t nubuckets, nustrs;
static uint64_t next_utf8_id = 1;

uint64_t io_utf8_id(const char *s)
{
    if (s == NULL)
        s = "";
    unsigned h = hash_str(s);
    if (nubuckets > 0)
        for (struct ustr *u = ubuckets[h & (nubuckets - 1)]; u != NULL; u = u->next)
            if (u->hash == h && strcmp(u->s, s) == 0)
                return u->id;
    if (nustrs >= nubuckets) {
        size_t nb = nubuckets ? nubuckets * 2 : 1024;
        struct ustr **b = calloc(nb, sizeof *b);
        if (b != NULL) {
            for (size_t i = 0; i < nubuckets; i++)
                for (struct ustr *u = ubuckets[i], *nx; u != NULL; u = nx) {
                    nx = u->next;
                    u->next = b[u->hash & (nb - 1)];
                    b[u->hash & (nb - 1)] = u;
                }
            free(ubuckets);
            ubuckets = b;
            nubuckets = nb;
        }
    }
    uint64_t id = next_utf8_id++;
    size_t n = strlen(s);
    struct ustr *u = nubuckets ? malloc(sizeof *u + n + 1) : NULL;
    if (u != NULL) {
        u->hash = h;
        u->id = id;
        memcpy(u->s, s, n + 1);
        u->next = ubuckets[h & (nubuckets - 1)];
        ubuckets[h & (nubuckets - 1)] = u;
        nustrs++;
    }
    struct buf b = {0};
    buf_id(&b, id);
    buf_bytes(&b, s, n);
    if (!b.oom)
        io_record(HPROF_UTF8, &b);
    buf_free(&b);
    return id;
}

/* ---- the file header ---- */

static const char explain[] =
    "HPROF: a JVMPI profiler agent (JDK 1.2-1.4 style), here running through jvmpishim.\n"
    "\n"
    "This file holds these kinds of records:\n"
    "\n"
    "THREAD START\n"
    "THREAD END      the life of each Java thread; threads are numbered from 1.\n"
    "\n"
    "TRACE           a Java stack trace, innermost frame first, at most depth= frames.\n"
    "                The other records name the traces where objects were allocated,\n"
    "                where CPU time was spent and where monitors were contended.\n"
    "\n"
    "HEAP DUMP       every live object in the Java heap: ROOT (the GC roots), CLS\n"
    "                (classes), OBJ (instances) and ARR (arrays), with their references.\n"
    "\n"
    "SITES           allocation sites ranked by live bytes: for each class and trace,\n"
    "                the bytes and objects still live and all ever allocated.\n"
    "\n"
    "CPU SAMPLES     the traces found running when the profiler sampled the running\n"
    "                threads (every 10 ms), ranked by how often each was found.\n"
    "\n"
    "CPU TIME        the CPU time spent in each method's own code (callees excluded),\n"
    "                by trace, and how many times each trace was called; with cpu=old,\n"
    "                the JDK 1.1 'count callee caller time' table.\n"
    "\n"
    "MONITOR TIME    time threads spent blocked entering contended monitors, by trace\n"
    "                and monitor; MONITOR WAIT TIME the same for Object.wait.\n"
    "\n"
    "MONITOR DUMP    every thread with its state, and every monitor that is owned or\n"
    "                waited on, with its owner and waiting threads.\n"
    "\n"
    "The tables are written when the program exits (unless doe=n) and whenever the VM\n"
    "asks for a dump (SIGQUIT, kill -QUIT <pid>). Rows below the cutoff= share are left out.\n"
    "\n"
    "--------\n"
    "\n";

void io_header(void)
{
    if (!opt.binary) {
        io_printf("JAVA PROFILE 1.0.1, created %s\n\n", io_date());
        io_write(explain, sizeof explain - 1);
        io_flush();
        return;
    }
    static const char magic[] = "JAVA PROFILE 1.0.2";
    io_write(magic, sizeof magic); /* with its terminating NUL */
    struct buf b = {0};
    buf_u4(&b, 8);
    uint64_t ms = (uint64_t)t0.tv_sec * 1000u + (uint64_t)t0.tv_usec / 1000u;
    buf_u8(&b, ms);
    io_write(b.p, b.len);
    buf_free(&b);
    buf_u4(&b, (opt.heap_sites || opt.heap_dump ? 0x1u : 0) | (opt.cpu == CPU_SAMPLES ? 0x2u : 0));
    buf_u2(&b, (unsigned)opt.depth);
    io_record(HPROF_CONTROL_SETTINGS, &b);
    buf_free(&b);
    io_flush();
}
