/* hprof_opts.c — HPROF's option string and usage text.
 *
 * The options are those of the specification's usage text (section 7.1), comma-separated,
 * each NAME=VALUE except `help`. Parsing is strict: an unknown name, a bad value or a
 * repeated exclusive choice (file= with net=) is an error, reported with the offending
 * text, and JVM_OnLoad then refuses the start after printing the usage. When none of
 * heap=, cpu= and monitor= is given, heap=all is assumed (the usage's default); naming one
 * of them turns the others off unless they are named too, so that `cpu=samples` profiles
 * the CPU without paying for allocation tracking.
 */
#include "hprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct hprof_opts opt = {
    .depth = 4,
    .cutoff = 0.0001,
    .lineno = 1,
    .doe = 1,
};

void hprof_usage(FILE *f)
{
    fprintf(f,
            "HPROF usage: -Xrunhprof[:help]|[option=value, ...]\n"
            "\n"
            "Option Name and Value   Description             Default\n"
            "---------------------   -----------             -------\n"
            "heap=dump|sites|all     heap profiling          all\n"
            "cpu=samples|times|old   CPU usage               off\n"
            "monitor=y|n             monitor contention      n\n"
            "format=a|b              ascii or binary output  a\n"
            "file=name               write data to file      java.hprof(.txt for ascii)\n"
            "net=host:port           send data over a socket write to file\n"
            "depth=size              stack trace depth       4\n"
            "cutoff=value            output cutoff point     0.0001\n"
            "lineno=y|n              line number in traces?  y\n"
            "thread=y|n              thread in traces?       n\n"
            "doe=y|n                 dump on exit?           y\n"
            "\n"
            "Example: java -Xrunhprof:cpu=samples,file=log.txt,depth=3 FooClass\n"
            "Through jvmpishim: java -agentpath:/abs/libjvmpishim.so=legacy=/abs/libhprof.so:cpu=samples,depth=3 FooClass\n");
}

static int bad(const char *tok, const char *why)
{
    hprof_error("bad option '%s': %s", tok, why);
    return -1;
}

static int yes_no(const char *tok, const char *v, int *out)
{
    if (strcmp(v, "y") == 0)
        *out = 1;
    else if (strcmp(v, "n") == 0)
        *out = 0;
    else
        return bad(tok, "the value must be y or n");
    return 0;
}

int hprof_parse_options(const char *options)
{
    int heap_given = 0, cpu_given = 0, mon_given = 0;
    int rc = 0;
    char *copy = xstrdup(options != NULL ? options : "");
    if (copy == NULL)
        return bad("", "out of memory");
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (eq == NULL) {
            if (strcmp(tok, "help") == 0)
                opt.help = 1;
            else
                rc = bad(tok, "expected NAME=VALUE or help");
            continue;
        }
        *eq = '\0';
        const char *k = tok, *v = eq + 1;
        char whole[512];
        snprintf(whole, sizeof whole, "%s=%s", k, v);
        if (strcmp(k, "heap") == 0) {
            heap_given = 1;
            if (strcmp(v, "dump") == 0)
                opt.heap_dump = 1;
            else if (strcmp(v, "sites") == 0)
                opt.heap_sites = 1;
            else if (strcmp(v, "all") == 0)
                opt.heap_dump = opt.heap_sites = 1;
            else
                rc = bad(whole, "heap= takes dump, sites or all");
        } else if (strcmp(k, "cpu") == 0) {
            cpu_given = 1;
            if (strcmp(v, "samples") == 0)
                opt.cpu = CPU_SAMPLES;
            else if (strcmp(v, "times") == 0)
                opt.cpu = CPU_TIMES;
            else if (strcmp(v, "old") == 0)
                opt.cpu = CPU_OLD;
            else
                rc = bad(whole, "cpu= takes samples, times or old");
        } else if (strcmp(k, "monitor") == 0) {
            mon_given = 1;
            rc = yes_no(whole, v, &opt.monitor);
        } else if (strcmp(k, "format") == 0) {
            if (strcmp(v, "a") == 0)
                opt.binary = 0;
            else if (strcmp(v, "b") == 0)
                opt.binary = 1;
            else
                rc = bad(whole, "format= takes a or b");
        } else if (strcmp(k, "file") == 0) {
            if (*v == '\0')
                rc = bad(whole, "file= needs a name");
            else {
                free(opt.file);
                opt.file = xstrdup(v);
            }
        } else if (strcmp(k, "net") == 0) {
            const char *colon = strrchr(v, ':');
            char *end = NULL;
            long port = colon ? strtol(colon + 1, &end, 10) : -1;
            if (colon == NULL || colon == v || end == colon + 1 || *end != '\0' || port < 1 ||
                port > 65535) {
                rc = bad(whole, "net= takes host:port");
            } else {
                free(opt.net_host);
                opt.net_host = xstrdup(v);
                if (opt.net_host != NULL)
                    opt.net_host[colon - v] = '\0';
                opt.net_port = (int)port;
            }
        } else if (strcmp(k, "depth") == 0) {
            char *end = NULL;
            errno = 0;
            long d = strtol(v, &end, 10);
            if (*v == '\0' || *end != '\0' || errno != 0 || d < 0 || d > HPROF_MAX_DEPTH)
                rc = bad(whole, "depth= takes a number from 0 to 1024");
            else
                opt.depth = (int)d;
        } else if (strcmp(k, "cutoff") == 0) {
            char *end = NULL;
            errno = 0;
            double c = strtod(v, &end);
            if (*v == '\0' || *end != '\0' || errno != 0 || !(c >= 0.0 && c <= 1.0))
                rc = bad(whole, "cutoff= takes a fraction from 0 to 1");
            else
                opt.cutoff = c;
        } else if (strcmp(k, "lineno") == 0) {
            rc = yes_no(whole, v, &opt.lineno);
        } else if (strcmp(k, "thread") == 0) {
            rc = yes_no(whole, v, &opt.thread);
        } else if (strcmp(k, "doe") == 0) {
            rc = yes_no(whole, v, &opt.doe);
        } else {
            rc = bad(whole, "unknown option");
        }
    }
    free(copy);
    if (rc == 0 && opt.file != NULL && opt.net_host != NULL)
        rc = bad("net=", "file= and net= cannot both be given");
    if (rc == 0 && !heap_given && !cpu_given && !mon_given)
        opt.heap_dump = opt.heap_sites = 1;
    if (rc == 0 && opt.file == NULL && opt.net_host == NULL) {
        opt.file = xstrdup(opt.binary ? "java.hprof" : "java.hprof.txt");
        if (opt.file == NULL)
            rc = bad("file=", "out of memory");
    }
    return rc;
}
