/* jvmpitrace — read what record=PATH wrote: print it, count it, check it against the JVMPI
 * contract, compare two recordings.
 *
 *   jvmpitrace print FILE [--event=NAMES] [--thread=PATTERN] [--class=PATTERN]
 *                         [--seq=FROM-TO] [--no-calls] [--no-own] [--full]
 *   jvmpitrace stats FILE
 *   jvmpitrace check FILE [--max=N] [--quiet]
 *   jvmpitrace diff A B [--ignore-jdk] [--ignore-events=NAMES] [--ignore-class=PATTERN]...
 *                       [--ignore-thread=PATTERN]... [--program] [--no-streams] [--max=N]
 *   jvmpitrace header FILE
 *
 * Exit status: print, stats and header 0, or 2 when the file is truncated, damaged or not
 * a recording (what could be read is printed first, and the message names the offset);
 * check 0 when the contract held, 1 on violations, 2 as above; diff 0 same, 1 different,
 * 2 as above. docs/recording.md describes the file, the checks and the diff.
 */
#include "core/recfmt.h"
#include "trace.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: jvmpitrace print FILE [--event=NAME,...] [--thread=PATTERN] [--class=PATTERN]\n"
    "                             [--seq=FROM-TO] [--no-calls] [--no-own] [--full]\n"
    "       jvmpitrace stats FILE\n"
    "       jvmpitrace check FILE [--max=N] [--quiet]\n"
    "       jvmpitrace diff A B [--ignore-jdk] [--ignore-events=NAME,...] [--program]\n"
    "                           [--ignore-class=PATTERN]... [--ignore-thread=PATTERN]...\n"
    "                           [--no-streams] [--max=N] [--context=N]\n"
    "       jvmpitrace header FILE\n"
    "NAMEs are event names without JVMPI_EVENT_ (METHOD_ENTRY), function names (EnableEvent)\n"
    "or the recorder's own (METHOD_NAME, LOST). PATTERNs are shell patterns (java.util.*).\n"
    "diff --ignore-jdk leaves out the JDK's classes, methods, objects and threads;\n"
    "--program also the events the VM decides on (GC_START, GC_FINISH, OBJECT_FREE,\n"
    "OBJECT_MOVE, COMPILED_METHOD_LOAD/UNLOAD, ARENA_*, DATA_*_REQUEST). Exit status: 0 ok or\n"
    "same, 1 violations or differences, 2 a file truncated, damaged or unreadable.\n";

static struct tr_file *open_or_die(const char *path)
{
    struct tr_file *f = tr_open(path);
    if (f == NULL) {
        fprintf(stderr, "jvmpitrace: %s: cannot read it\n", path);
        exit(2);
    }
    if (f->fatal[0] != '\0') {
        fprintf(stderr, "jvmpitrace: %s: %s\n", path, f->fatal);
        exit(2);
    }
    return f;
}

/* The file's state after reading it: 0 if whole, else a message and 2. */
static int file_status(const struct tr_file *f)
{
    if (f->status == TR_OK)
        return 0;
    fprintf(stderr, "jvmpitrace: %s: %s %s: records before it were read\n", f->path,
            f->status == TR_TRUNCATED ? "truncated:" : "damaged:", f->err);
    return 2;
}

/* Record codes named by a comma-separated list (event, function or record names). */
static bool parse_names(const struct tr_file *f, const char *list, bool *codes, bool calls_and_rets)
{
    char *copy = strdup(list), *save = NULL;
    bool ok = copy != NULL;
    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t != NULL; t = strtok_r(NULL, ",", &save)) {
        bool found = false;
        for (int c = 0; c < 256; c++) {
            const char *n = f != NULL ? tr_code_name(f, c) : NULL;
            const char *ev = rec_event_name(c & 63);
            bool match = false;
            if (n != NULL && strcmp(n, t) == 0)
                match = true;
            if (c < 128 && ev != NULL && strcmp(ev, t) == 0)
                match = true; /* METHOD_ENTRY also selects METHOD_ENTRY+REQUESTED */
            if (c >= 128 && c < 192 && rec_fn_name(tr_fn_of(c)) != NULL &&
                strcmp(rec_fn_name(tr_fn_of(c)), t) == 0 && (calls_and_rets || c < 160))
                match = true;
            if ((strcmp(t, "CALL") == 0 && c >= 128 && c < 160) || (strcmp(t, "RET") == 0 && c >= 160 && c < 192))
                match = true;
            if (match) {
                codes[c] = true;
                found = true;
            }
        }
        if (!found) {
            fprintf(stderr, "jvmpitrace: no event, function or record is called '%s'\n", t);
            ok = false;
        }
    }
    free(copy);
    return ok;
}

/* The class a record is about, for --class: its class, its method's class, or the class
 * CLASS_LOAD names. */
static const char *class_of(const struct tr_names *n, const struct tr_rec *r)
{
    const struct tr_val *v;
    if ((v = tr_get(r, F_CLASS_NAME)) != NULL && !v->null) {
        static char b[512];
        snprintf(b, sizeof b, "%.*s", (int)v->len, (const char *)v->s);
        return b;
    }
    if ((v = tr_get(r, F_METHOD)) != NULL) {
        const struct tr_method *m = tr_map_get(&n->methods, v->u);
        return m != NULL ? m->cls : NULL;
    }
    if ((v = tr_get(r, F_CLASS)) != NULL)
        return tr_map_get(&n->classes, v->u);
    if ((v = tr_get(r, F_RESULT)) != NULL && r->code == 160 + 23)
        return tr_map_get(&n->classes, v->u);
    return NULL;
}

static int cmd_print(int argc, char **argv)
{
    if (argc < 1 || strncmp(argv[0], "--", 2) == 0) {
        fputs(usage, stderr);
        return 2;
    }
    struct tr_file *f = open_or_die(argv[0]);
    bool codes[256], any_code = false, full = false, no_calls = false, no_own = false;
    memset(codes, 0, sizeof codes);
    const char *thread = NULL, *cls = NULL;
    unsigned long long from = 0, to = UINT64_MAX;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--event=", 8) == 0) {
            if (!parse_names(f, argv[i] + 8, codes, true))
                return 2;
            any_code = true;
        } else if (strncmp(argv[i], "--thread=", 9) == 0) {
            thread = argv[i] + 9;
        } else if (strncmp(argv[i], "--class=", 8) == 0) {
            cls = argv[i] + 8;
        } else if (strncmp(argv[i], "--seq=", 6) == 0) {
            if (sscanf(argv[i] + 6, "%llu-%llu", &from, &to) < 1) {
                fprintf(stderr, "jvmpitrace: --seq=FROM-TO\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--full") == 0) {
            full = true;
        } else if (strcmp(argv[i], "--no-calls") == 0) {
            no_calls = true;
        } else if (strcmp(argv[i], "--no-own") == 0) {
            no_own = true;
        } else {
            fprintf(stderr, "jvmpitrace: print: unknown option '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    struct tr_names n;
    tr_names_load(f, &n);
    struct tr_iter *it = tr_iter_new(f);
    struct tr_rec r;
    size_t cap = 1 << 20;
    char *line = malloc(cap);
    while (it != NULL && line != NULL && tr_next(it, &r)) {
        enum tr_kind k = tr_kind_of(r.code);
        if (r.seq < from || r.seq > to || (any_code && !codes[r.code]) ||
            (no_calls && (k == TK_CALL || k == TK_RET)) || (no_own && k == TK_OWN))
            continue;
        if (thread != NULL) {
            char b[256];
            if (fnmatch(thread, tr_stream_name(f, &n, r.stream, b, sizeof b), 0) != 0)
                continue;
        }
        if (cls != NULL) {
            const char *c = class_of(&n, &r);
            if (c == NULL || fnmatch(cls, c, 0) != 0)
                continue;
        }
        tr_format(f, &n, &r, full, line, cap);
        puts(line);
    }
    free(line);
    tr_iter_free(it);
    if (f->has_end)
        printf("# end: %s\n", tr_endval(f, "ended") ? tr_endval(f, "ended") : "?");
    else
        printf("# no end block: the run did not end normally (killed or crashed)\n");
    tr_names_free(&n);
    int rc = file_status(f);
    tr_close(f);
    return rc;
}

struct counts {
    uint64_t n, requested, bytes, items;
    struct tr_map streams;
    int64_t res[4];             /* calls: SUCCESS, FAIL, NOT_AVAILABLE, other */
};

static int cmd_stats(int argc, char **argv)
{
    if (argc != 1) {
        fputs(usage, stderr);
        return 2;
    }
    struct tr_file *f = open_or_die(argv[0]);
    static struct counts c[256];
    uint64_t total = 0, first = 0, last = 0, lost = 0;
    struct tr_iter *it = tr_iter_new(f);
    struct tr_rec r;
    while (it != NULL && tr_next(it, &r)) {
        int code = r.code;
        enum tr_kind k = tr_kind_of(code);
        int key = k == TK_EVENT ? tr_event_of(code) : code;
        struct counts *x = &c[key];
        x->n++;
        total++;
        if (first == 0)
            first = r.seq;
        last = r.seq;
        tr_map_put(&x->streams, r.stream + 1, (void *)1);
        if (k == TK_EVENT) {
            if (tr_requested(code))
                x->requested++;
            const struct tr_val *v;
            if ((v = tr_get(&r, F_SIZE)) != NULL)
                x->bytes += (uint64_t)v->i;
            if ((v = tr_get(&r, F_LENGTH)) != NULL)
                x->bytes += v->u;
            if ((v = tr_get(&r, F_CLASS_DATA)) != NULL)
                x->bytes += v->len;
            if ((v = tr_get(&r, F_METHODS)) != NULL)
                x->items += v->n;
            if ((v = tr_get(&r, F_LINES)) != NULL)
                x->items += v->n;
        } else if (k == TK_RET && code >= 160 && code <= 162) {
            int64_t res = tr_i(&r, F_RESULT);
            x->res[res == 0 ? 0 : res == -1 ? 1 : res == 1 ? 2 : 3]++;
        } else if (k == TK_RET && code == 160 + 3) {
            const struct tr_val *v = tr_get(&r, F_FRAMES);
            if (v != NULL)
                x->items += v->n;
        } else if (code == 195 || code == 199) { /* LOST, DROPPED */
            lost += tr_u(&r, F_COUNT);
        }
    }
    tr_iter_free(it);
    /* Events, in JVMPI order, then functions, then the recorder's own records. */
    for (int t = 0; t < 64; t++) {
        struct counts *x = &c[t];
        if (x->n == 0)
            continue;
        printf("%s %llu threads=%zu", rec_event_name(t) ? rec_event_name(t) : tr_code_name(f, t),
               (unsigned long long)x->n, x->streams.n);
        if (x->requested)
            printf(" requested=%llu", (unsigned long long)x->requested);
        if (x->bytes)
            printf(" bytes=%llu", (unsigned long long)x->bytes);
        if (x->items)
            printf(" %s=%llu", t == 42 ? "methods" : "line_entries", (unsigned long long)x->items);
        putchar('\n');
    }
    for (int fn = 0; fn < 32; fn++) {
        struct counts *x = &c[128 + fn], *y = &c[160 + fn];
        if (x->n == 0)
            continue;
        printf("%s %llu threads=%zu", rec_fn_name(fn) ? rec_fn_name(fn) : tr_code_name(f, 128 + fn),
               (unsigned long long)x->n, x->streams.n);
        if (y->n != x->n)
            printf(" returned=%llu", (unsigned long long)y->n);
        if (fn <= 2)
            printf(" SUCCESS=%lld FAIL=%lld NOT_AVAILABLE=%lld", (long long)y->res[0], (long long)y->res[1],
                   (long long)y->res[2]);
        if (y->items)
            printf(" frames=%llu", (unsigned long long)y->items);
        putchar('\n');
    }
    for (int code = 192; code < 256; code++)
        if (c[code].n > 0)
            printf("%s %llu (recorder)\n", tr_code_name(f, code), (unsigned long long)c[code].n);
    printf("records %llu seq %llu..%llu threads %zu lost %llu", (unsigned long long)total,
           (unsigned long long)first, (unsigned long long)last, f->nstreams, (unsigned long long)lost);
    const char *el = tr_endval(f, "lost");
    if (el != NULL && strcmp(el, "0") != 0)
        printf(" (dropped in all: %s, the end block says)", el);
    putchar('\n');
    if (f->has_end)
        printf("ended %s (normal: %s)\n", tr_endval(f, "ended") ? tr_endval(f, "ended") : "?",
               tr_endval(f, "normal") ? tr_endval(f, "normal") : "?");
    else
        printf("ended: no end block: the run did not end normally (killed or crashed)\n");
    for (int i = 0; i < 256; i++)
        tr_map_free(&c[i].streams, false);
    int rc = file_status(f);
    tr_close(f);
    return rc;
}

static int cmd_header(int argc, char **argv)
{
    if (argc != 1) {
        fputs(usage, stderr);
        return 2;
    }
    struct tr_file *f = open_or_die(argv[0]);
    for (size_t i = 0; i < f->nheader; i++)
        printf("%s %s\n", f->header[i].key, f->header[i].val);
    for (int c = 0; c < 256; c++)
        if (f->types[c] != NULL)
            printf("rec %d %s (%d fields)\n", c, f->types[c]->name, f->types[c]->nf);
    for (size_t i = 0; i < f->nend; i++)
        printf("end %s %s\n", f->end[i].key, f->end[i].val);
    printf("blocks: %zu chunks, %zu thread streams, %s\n", f->nchunks, f->nstreams,
           f->has_end ? "end block" : "no end block");
    int rc = file_status(f);
    tr_close(f);
    return rc;
}

static int cmd_check(int argc, char **argv)
{
    if (argc < 1 || strncmp(argv[0], "--", 2) == 0) {
        fputs(usage, stderr);
        return 2;
    }
    struct check_opts o = {.out = stdout, .max_per_rule = 20};
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--max=", 6) == 0)
            o.max_per_rule = atoi(argv[i] + 6);
        else if (strcmp(argv[i], "--quiet") == 0)
            o.quiet = true;
        else {
            fprintf(stderr, "jvmpitrace: check: unknown option '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    struct tr_file *f = open_or_die(argv[0]);
    int rc = tr_check(f, &o);
    if (file_status(f) != 0)
        rc = 2;
    tr_close(f);
    return rc;
}

static const char *const program_ignores =
    "GC_START,GC_FINISH,OBJECT_FREE,OBJECT_MOVE,COMPILED_METHOD_LOAD,COMPILED_METHOD_UNLOAD,"
    "ARENA_NEW,ARENA_DELETE,DATA_DUMP_REQUEST,DATA_RESET_REQUEST";

static int cmd_diff(int argc, char **argv)
{
    if (argc < 2 || strncmp(argv[1], "--", 2) == 0) {
        fputs(usage, stderr);
        return 2;
    }
    struct tr_file *a = open_or_die(argv[0]), *b = open_or_die(argv[1]);
    struct diff_opts o = {.out = stdout, .max_lines = 40, .context = 3};
    o.ignore_class = calloc((size_t)argc, sizeof(char *));
    o.ignore_thread = calloc((size_t)argc, sizeof(char *));
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--ignore-jdk") == 0) {
            o.ignore_jdk = true;
        } else if (strcmp(argv[i], "--program") == 0) {
            o.ignore_jdk = true;
            parse_names(a, program_ignores, o.ignore_event, false);
        } else if (strncmp(argv[i], "--ignore-events=", 16) == 0) {
            if (!parse_names(a, argv[i] + 16, o.ignore_event, false))
                return 2;
        } else if (strncmp(argv[i], "--ignore-class=", 15) == 0) {
            o.ignore_class[o.n_ignore_class++] = argv[i] + 15;
        } else if (strncmp(argv[i], "--ignore-thread=", 16) == 0) {
            o.ignore_thread[o.n_ignore_thread++] = argv[i] + 16;
        } else if (strcmp(argv[i], "--no-streams") == 0) {
            o.no_streams = true;
        } else if (strncmp(argv[i], "--max=", 6) == 0) {
            o.max_lines = atoi(argv[i] + 6);
        } else if (strncmp(argv[i], "--context=", 10) == 0) {
            o.context = atoi(argv[i] + 10);
        } else {
            fprintf(stderr, "jvmpitrace: diff: unknown option '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    /* A call ignored is ignored when it returns too. */
    for (int c = 128; c < 160; c++)
        if (o.ignore_event[c])
            o.ignore_event[c + 32] = true;
    int rc = tr_diff(a, b, &o);
    if (file_status(a) != 0 || file_status(b) != 0)
        rc = 2;
    free(o.ignore_class);
    free(o.ignore_thread);
    tr_close(a);
    tr_close(b);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    /* Files first, options after, whatever order they were given in. */
    char **sorted = calloc((size_t)argc + 1, sizeof *sorted);
    if (sorted == NULL)
        return 2;
    int k = 0;
    sorted[k++] = argv[0];
    sorted[k++] = argv[1];
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], "--", 2) != 0)
            sorted[k++] = argv[i];
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], "--", 2) == 0)
            sorted[k++] = argv[i];
    argv = sorted;
    const char *cmd = argv[1];
    if (strcmp(cmd, "print") == 0)
        return cmd_print(argc - 2, argv + 2);
    if (strcmp(cmd, "stats") == 0)
        return cmd_stats(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "diff") == 0)
        return cmd_diff(argc - 2, argv + 2);
    if (strcmp(cmd, "header") == 0)
        return cmd_header(argc - 2, argv + 2);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    fprintf(stderr, "jvmpitrace: unknown command '%s'\n%s", cmd, usage);
    return 2;
}
