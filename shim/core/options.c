/* options.c — parse "opt,opt,...,legacy=PATH[:AGENT_OPTIONS]".
 *
 * Pure function of the text, unit-tested without a JVM. The legacy= item is
 * last and takes the rest of the string: everything after its first ':' is the legacy
 * agent's own option string, passed verbatim to its JVM_OnLoad (commas, '=' and further
 * ':' included), exactly what -Xrun<agent>:<options> handed it on JDK 1.2-1.4. Shim
 * options come before it, comma-separated. Anything unknown or malformed is an error that
 * quotes the offending item: the VM then refuses to start rather than run unprofiled.
 *
 * Every valued option may also be written NAME:VALUE (legacy:PATH[:OPTS], report:PATH,
 * ...): jcmd JVMTI.agent_load cuts an unquoted argument at its first '=' and keeps only
 * the name, so a string without any '=' is the one spelling that survives it. In such a
 * string (no '=' anywhere), "%3D" in the agent's options stands for '=' and "%25" for '%',
 * so that an agent whose options need '=' can be attached unquoted too.
 */
#include "core/log.h"
#include "core/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char help_text[] =
    "jvmpishim: run a JVMPI (JDK 1.2-1.4) profiler agent on this JVM through JVMTI\n"
    "\n"
    "usage: java -agentpath:/path/libjvmpishim.so=[OPTION,...]legacy=AGENT[:AGENT_OPTIONS] ...\n"
    "       java -Xrunjvmpishim:[OPTION,...]legacy=AGENT[:AGENT_OPTIONS] ...   (libjvmpishim.so on LD_LIBRARY_PATH)\n"
    "       java -agentpath:/path/libjvmpishim.so[=OPTION,...] ...   (no agent: JVMPI for the program's own libraries)\n"
    "\n"
    "  legacy=AGENT          the JVMPI agent: a path to its shared library, or a bare NAME\n"
    "                        found as libNAME.so the way -XrunNAME did (LD_LIBRARY_PATH, the\n"
    "                        system library paths, then the directory of libjvmpishim.so).\n"
    "                        Must come last: everything after the first ':' is passed\n"
    "                        verbatim to the agent's JVM_OnLoad (no ':' passes NULL).\n"
    "                        Optional: with or without it, every library of the program\n"
    "                        that asks the JavaVM for JVMPI (GetEnv(JVMPI_VERSION_1)) gets\n"
    "                        an interface of its own, as on JDK 1.2-1.4\n"
    "OPTIONs (comma-separated, before legacy=):\n"
    "  help                  print this text and exit\n"
    "  log=LEVEL             quiet | error | warn (default) | info | debug\n"
    "  logfile=PATH          append the shim's messages to PATH instead of stderr\n"
    "  checkdumps            decode every heap, object and monitor dump before the agent\n"
    "                        gets it and log the first malformed offset, if any\n"
    "  methods=bci|jvmti     how METHOD_ENTRY/ENTRY2/EXIT are made: bci (default)\n"
    "                        rewrites classes so compiled code stays compiled; jvmti\n"
    "                        uses JVMTI method events: slow (interpreter only), but\n"
    "                        also covers natives of classes loaded before the agent\n"
    "  vthreads=threads|carriers  what a virtual thread (JDK 21 and later) is to\n"
    "                        the agent: threads (default) makes each a JVMPI thread of\n"
    "                        its own, with its own env_id, THREAD_START and THREAD_END;\n"
    "                        carriers gives its events the env_id of the platform\n"
    "                        thread that carries it, for agents that cannot take a\n"
    "                        thread per task\n"
    "  report=PATH           write a migration report to PATH as the run goes: which\n"
    "                        JVMPI functions and events the agent used, how often,\n"
    "                        how faithfully this JVM served each, what went wrong,\n"
    "                        where the time went, and how the run ended (a crash or\n"
    "                        a signal included)\n"
    "  record=PATH           record every event the agent gets and every JVMPI call\n"
    "                        it makes, with arguments and results, to PATH (a binary\n"
    "                        file: see jvmpitrace print|stats|check|diff)\n"
    "\n"
    "Each NAME=VALUE may be written NAME:VALUE. Without any '=' in the text (and '=' in the\n"
    "agent's options written %3D), the options survive an unquoted jcmd:\n"
    "  jcmd PID JVMTI.agent_load /abs/libjvmpishim.so report:/tmp/r.txt,legacy:/opt/old/libprof.so:heap%3Dsites\n"
    "\n"
    "example: java -agentpath:$PWD/build/libjvmpishim.so=log=info,legacy=/opt/old/libprof.so:heap=sites,file=x.txt App\n";

const char *options_help(void) { return help_text; }

void options_free(struct shim_options *o)
{
    free(o->log_file);
    free(o->report_file);
    free(o->record_file);
    free(o->legacy);
    free(o->agent_options);
    memset(o, 0, sizeof *o);
}

static char *dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p != NULL) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

/* The agent's options in the jcmd-safe spelling: %3D is '=', %25 is '%'. */
static char *dup_decoded(const char *s)
{
    char *p = malloc(strlen(s) + 1), *o = p;
    if (p == NULL)
        return NULL;
    while (*s != '\0') {
        if (s[0] == '%' && s[1] == '3' && (s[2] == 'D' || s[2] == 'd')) {
            *o++ = '=';
            s += 3;
        } else if (s[0] == '%' && s[1] == '2' && s[2] == '5') {
            *o++ = '%';
            s += 3;
        } else {
            *o++ = *s++;
        }
    }
    *o = '\0';
    return p;
}

static int parse_level(const char *v, size_t n)
{
    static const struct { const char *name; int level; } levels[] = {
        {"quiet", LOG_QUIET}, {"error", LOG_ERROR}, {"warn", LOG_WARN},
        {"info", LOG_INFO},   {"debug", LOG_DEBUG},
    };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (strlen(levels[i].name) == n && memcmp(levels[i].name, v, n) == 0)
            return levels[i].level;
    return -1;
}

#define FAIL(...)                                                               \
    do {                                                                        \
        snprintf(err, errlen, __VA_ARGS__);                                     \
        options_free(o);                                                        \
        return -1;                                                              \
    } while (0)

int options_parse(const char *text, struct shim_options *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->log_level = LOG_WARN;
    /* No options: no legacy agent; the shim serves JVMPI to the program's own libraries
     * (GetEnv(JVMPI_VERSION_1) from any library, face/clients.c). */
    if (text == NULL || *text == '\0')
        return 0;

    /* The whole option string is the name of an option that takes a value, and nothing
     * else: it lost its value on the way. jcmd JVMTI.agent_load does that to an unquoted
     * argument: its parser cuts "legacy=/x/libold.so:opts" at '=' and passes "legacy". */
    static const char *const valued[] = {"legacy", "report", "record", "logfile", "log",
                                         "methods", "vthreads"};
    for (size_t i = 0; i < sizeof valued / sizeof valued[0]; i++)
        if (strcmp(text, valued[i]) == 0)
            FAIL("the options are just '%s', without its value: was the option string cut at "
                 "'='? jcmd does that to an unquoted argument; write ':' for '=' (%s:..., and "
                 "%%3D for an '=' in the agent's options), or quote it twice: "
                 "jcmd PID JVMTI.agent_load /abs/libjvmpishim.so \"\\\"%s=...\\\"\" "
                 "(with -agentpath: -agentpath:/abs/libjvmpishim.so=%s=...)",
                 text, text, text, text);
    bool jcmd_safe = strchr(text, '=') == NULL;

    const char *p = text;
    for (;;) {
        /* legacy= consumes the rest of the text, commas included. */
        if (strncmp(p, "legacy=", 7) == 0 || strncmp(p, "legacy:", 7) == 0) {
            const char *spec = p + 7;
            const char *colon = strchr(spec, ':');
            size_t plen = colon ? (size_t)(colon - spec) : strlen(spec);
            if (plen == 0)
                FAIL("legacy= names no agent library in '%s'", text);
            if (o->legacy != NULL)
                FAIL("legacy= given twice in '%s'", text);
            o->legacy = dup_n(spec, plen);
            if (colon != NULL)
                o->agent_options = jcmd_safe ? dup_decoded(colon + 1)
                                             : dup_n(colon + 1, strlen(colon + 1));
            if (o->legacy == NULL || (colon != NULL && o->agent_options == NULL))
                FAIL("out of memory parsing options");
            break;
        }
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (eq == NULL)
            eq = memchr(p, ':', n); /* NAME:VALUE */
        size_t klen = eq ? (size_t)(eq - p) : n;
        const char *v = eq ? eq + 1 : NULL;
        size_t vlen = eq ? n - klen - 1 : 0;

        if (n == 0)
            FAIL("empty option in '%s' (stray ',')", text);
        else if (klen == 4 && memcmp(p, "help", 4) == 0 && v == NULL)
            o->help = true;
        else if (klen == 10 && memcmp(p, "checkdumps", 10) == 0 && v == NULL)
            o->check_dumps = true;
        else if (klen == 3 && memcmp(p, "log", 3) == 0) {
            int lv = v ? parse_level(v, vlen) : -1;
            if (lv < 0)
                FAIL("bad log level in '%.*s': expected log=quiet|error|warn|info|debug", (int)n, p);
            o->log_level = lv;
            o->log_level_set = true;
        } else if (klen == 7 && memcmp(p, "logfile", 7) == 0) {
            if (v == NULL || vlen == 0)
                FAIL("logfile= needs a path in '%.*s'", (int)n, p);
            free(o->log_file);
            o->log_file = dup_n(v, vlen);
            if (o->log_file == NULL)
                FAIL("out of memory parsing options");
        } else if (klen == 7 && memcmp(p, "methods", 7) == 0) {
            if (v != NULL && vlen == 3 && memcmp(v, "bci", 3) == 0)
                o->methods = METHODS_BCI;
            else if (v != NULL && vlen == 5 && memcmp(v, "jvmti", 5) == 0)
                o->methods = METHODS_JVMTI;
            else
                FAIL("bad value in '%.*s': expected methods=bci or methods=jvmti", (int)n, p);
        } else if (klen == 8 && memcmp(p, "vthreads", 8) == 0) {
            if (v != NULL && vlen == 7 && memcmp(v, "threads", 7) == 0)
                o->vthreads = VTHREADS_THREADS;
            else if (v != NULL && vlen == 8 && memcmp(v, "carriers", 8) == 0)
                o->vthreads = VTHREADS_CARRIERS;
            else
                FAIL("bad value in '%.*s': expected vthreads=threads or vthreads=carriers",
                     (int)n, p);
        } else if (klen == 6 && memcmp(p, "report", 6) == 0) {
            if (v == NULL || vlen == 0)
                FAIL("report= needs a path in '%.*s'", (int)n, p);
            free(o->report_file);
            o->report_file = dup_n(v, vlen);
            if (o->report_file == NULL)
                FAIL("out of memory parsing options");
        } else if (klen == 6 && memcmp(p, "record", 6) == 0) {
            if (v == NULL || vlen == 0)
                FAIL("record= needs a path in '%.*s'", (int)n, p);
            free(o->record_file);
            o->record_file = dup_n(v, vlen);
            if (o->record_file == NULL)
                FAIL("out of memory parsing options");
        } else
            FAIL("unknown option '%.*s' in '%s' (try =help)", (int)n, p, text);

        if (end == NULL)
            break;
        p = end + 1;
    }
    return 0;
}
