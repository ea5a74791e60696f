/* test_options.c — the option grammar of shim/core/options.c: options_parse(), options_free(),
 * options_help(). Pure C, no JVM.
 *
 * The grammar (docs/options.md): "[OPTION,...]legacy=AGENT[:AGENT_OPTIONS]". legacy= is
 * last and takes the rest of the text; everything after its first ':' reaches the agent's
 * JVM_OnLoad verbatim, and no ':' means NULL. Every error returns -1 with a message that
 * names the offending text, and leaves nothing allocated (checked under ASan/LSan).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/options.h"
#include "unit.h"

static char err[1024];

/* Parse text that must be accepted. */
static int ok_parse(const char *text, struct shim_options *o)
{
    memset(err, 0, sizeof err);
    int rc = options_parse(text, o, err, sizeof err);
    CHECK(rc == 0, "options_parse(\"%.80s\") = %d, err \"%s\"", text ? text : "(null)", rc, err);
    return rc;
}

/* Parse text that must be refused with a message containing each of the needles
 * (NULL-terminated); afterwards the options must hold nothing. */
static void bad_parse(const char *text, ...)
{
    struct shim_options o;
    memset(err, 0, sizeof err);
    memset(&o, 0x5a, sizeof o); /* garbage in: the parser must not read or free it */
    int rc = options_parse(text, &o, err, sizeof err);
    CHECK(rc == -1, "options_parse(\"%.80s\") = %d, expected -1", text ? text : "(null)", rc);
    CHECK(err[0] != '\0', "options_parse(\"%.80s\") failed with an empty message",
          text ? text : "(null)");
    va_list ap;
    va_start(ap, text);
    for (const char *needle; (needle = va_arg(ap, const char *)) != NULL;)
        CHECK(strstr(err, needle) != NULL, "error for \"%.80s\" is \"%s\": lacks \"%s\"",
              text ? text : "(null)", err, needle);
    va_end(ap);
    CHECK(o.legacy == NULL && o.agent_options == NULL && o.log_file == NULL && !o.help,
          "options not cleared after the failed parse of \"%.80s\"", text ? text : "(null)");
    options_free(&o); /* safe after a failed parse */
    options_free(&o); /* and again */
}

static void test_legacy_only(void)
{
    struct shim_options o;
    if (ok_parse("legacy=/opt/old/libprof.so", &o) == 0) {
        CHECK_STR(o.legacy, "/opt/old/libprof.so");
        CHECK(o.agent_options == NULL, "no ':' must give NULL agent options, got \"%s\"",
              o.agent_options);
        CHECK(!o.help, "help set");
        CHECK(!o.log_level_set, "log_level_set without log=");
        CHECK_EQ_INT(o.log_level, LOG_WARN);
        CHECK(o.log_file == NULL, "log_file set without logfile=");
    }
    options_free(&o);
    CHECK(o.legacy == NULL && o.agent_options == NULL && o.log_file == NULL,
          "options_free leaves pointers behind");
    options_free(&o); /* a second free is harmless */
}

static void test_legacy_empty_agent_options(void)
{
    struct shim_options o;
    if (ok_parse("legacy=/a/libx.so:", &o) == 0) {
        CHECK_STR(o.legacy, "/a/libx.so");
        CHECK_STR(o.agent_options, "");
    }
    options_free(&o);
}

static void test_agent_options_verbatim(void)
{
    static const struct { const char *text, *legacy, *agent; } cases[] = {
        {"legacy=/a/libx.so:heap=sites,file=x.txt", "/a/libx.so", "heap=sites,file=x.txt"},
        /* everything after the FIRST ':' after legacy=: ',', '=', ':', empty items, a
         * second "legacy=", spaces */
        {"legacy=/a/libx.so:a=1,b=x:y=z,,c,legacy=q:r, sp ace", "/a/libx.so",
         "a=1,b=x:y=z,,c,legacy=q:r, sp ace"},
        {"legacy=/a/libx.so::", "/a/libx.so", ":"},
        {"legacy=/a/libx.so:,", "/a/libx.so", ","},
        {"legacy=/a/libx.so: leading and trailing ", "/a/libx.so", " leading and trailing "},
        {"legacy=/a b/lib x.so:o", "/a b/lib x.so", "o"}, /* spaces in the path are kept */
        {"legacy=/a,b/libx.so:o", "/a,b/libx.so", "o"},   /* and commas */
        {"legacy=/a=b/libx.so", "/a=b/libx.so", NULL},     /* and '=' */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct shim_options o;
        if (ok_parse(cases[i].text, &o) == 0) {
            CHECK_STR(o.legacy, cases[i].legacy);
            CHECK_STR(o.agent_options, cases[i].agent);
        }
        options_free(&o);
    }
}

static void test_shim_options_before_legacy(void)
{
    struct shim_options o;
    if (ok_parse("log=debug,logfile=/x,help,legacy=/a/libx.so:k=v", &o) == 0) {
        CHECK(o.log_level_set, "log_level_set");
        CHECK_EQ_INT(o.log_level, LOG_DEBUG);
        CHECK_STR(o.log_file, "/x");
        CHECK(o.help, "help not set");
        CHECK_STR(o.legacy, "/a/libx.so");
        CHECK_STR(o.agent_options, "k=v");
    }
    options_free(&o);

    /* any order; the last log= and logfile= win (the earlier copy is freed: ASan) */
    if (ok_parse("logfile=/first,log=info,logfile=/second path,log=error,legacy=x", &o) == 0) {
        CHECK_EQ_INT(o.log_level, LOG_ERROR);
        CHECK_STR(o.log_file, "/second path");
        CHECK(!o.help, "help set");
        CHECK_STR(o.legacy, "x");
        CHECK(o.agent_options == NULL, "agent options not NULL");
    }
    options_free(&o);

    /* logfile keeps '=' and ':' of its value */
    if (ok_parse("logfile=/tmp/a=b:c,legacy=x", &o) == 0)
        CHECK_STR(o.log_file, "/tmp/a=b:c");
    options_free(&o);

    /* report=PATH; the last one wins; absent means NULL */
    if (ok_parse("report=/tmp/r1,report=/tmp/r 2,legacy=x:report=agent", &o) == 0) {
        CHECK_STR(o.report_file, "/tmp/r 2");
        CHECK_STR(o.agent_options, "report=agent");
    }
    options_free(&o);
    if (ok_parse("legacy=x", &o) == 0) {
        CHECK(o.report_file == NULL, "report_file set without report=");
        CHECK_EQ_INT(o.methods, METHODS_DEFAULT);
        CHECK_EQ_INT(o.vthreads, VTHREADS_DEFAULT);
    }
    options_free(&o);

    /* methods=bci|jvmti; the last one wins */
    if (ok_parse("methods=jvmti,legacy=x", &o) == 0)
        CHECK_EQ_INT(o.methods, METHODS_JVMTI);
    options_free(&o);
    if (ok_parse("methods=jvmti,methods=bci,legacy=x:methods=jvmti", &o) == 0)
        CHECK_EQ_INT(o.methods, METHODS_BCI);
    options_free(&o);

    /* vthreads=threads|carriers; the last one wins */
    if (ok_parse("vthreads=carriers,legacy=x", &o) == 0)
        CHECK_EQ_INT(o.vthreads, VTHREADS_CARRIERS);
    options_free(&o);
    if (ok_parse("vthreads=carriers,vthreads=threads,legacy=x:vthreads=carriers", &o) == 0) {
        CHECK_EQ_INT(o.vthreads, VTHREADS_THREADS);
        CHECK_STR(o.agent_options, "vthreads=carriers");
    }
    options_free(&o);
}

static void test_log_levels(void)
{
    static const struct { const char *text; int level; } cases[] = {
        {"log=quiet,legacy=x", LOG_QUIET}, {"log=error,legacy=x", LOG_ERROR},
        {"log=warn,legacy=x", LOG_WARN},   {"log=info,legacy=x", LOG_INFO},
        {"log=debug,legacy=x", LOG_DEBUG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct shim_options o;
        if (ok_parse(cases[i].text, &o) == 0) {
            CHECK(o.log_level_set, "%s: log_level_set", cases[i].text);
            CHECK_EQ_INT(o.log_level, cases[i].level);
            CHECK_STR(o.legacy, "x");
        }
        options_free(&o);
    }
}

static void test_help(void)
{
    struct shim_options o;
    if (ok_parse("help", &o) == 0) {
        CHECK(o.help, "help not set");
        CHECK(o.legacy == NULL, "legacy set by help alone");
        CHECK(o.agent_options == NULL, "agent options set by help alone");
    }
    options_free(&o);
    if (ok_parse("log=debug,help", &o) == 0) {
        CHECK(o.help, "help not set");
        CHECK_EQ_INT(o.log_level, LOG_DEBUG);
        CHECK(o.legacy == NULL, "legacy set");
    }
    options_free(&o);
}

static void test_bare_name(void)
{
    struct shim_options o;
    if (ok_parse("legacy=hprof", &o) == 0) {
        CHECK_STR(o.legacy, "hprof");
        CHECK(o.agent_options == NULL, "agent options not NULL");
    }
    options_free(&o);
    if (ok_parse("legacy=hprof:heap=sites", &o) == 0) {
        CHECK_STR(o.legacy, "hprof");
        CHECK_STR(o.agent_options, "heap=sites");
    }
    options_free(&o);
}

/* legacy= consumes the rest of the text, so it cannot be given twice: a second "legacy="
 * is part of the first one's path (or of its agent options). */
static void test_legacy_consumes_rest(void)
{
    struct shim_options o;
    if (ok_parse("legacy=a,legacy=b", &o) == 0) {
        CHECK_STR(o.legacy, "a,legacy=b");
        CHECK(o.agent_options == NULL, "agent options not NULL");
    }
    options_free(&o);
    if (ok_parse("legacy=a,log=debug", &o) == 0) {
        CHECK_STR(o.legacy, "a,log=debug"); /* not a shim option */
        CHECK(!o.log_level_set, "log= after legacy= taken as a shim option");
    }
    options_free(&o);
}

/* No legacy=: the shim serves the program's own libraries that ask for JVMPI (GetEnv). No
 * text at all, and shim options alone, are accepted. */
static void test_no_legacy(void)
{
    struct shim_options o;
    const char *texts[] = {NULL, "", "log=debug", "report=/r", "logfile=/x,log=info"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        if (ok_parse(texts[i], &o) == 0)
            CHECK(o.legacy == NULL && o.agent_options == NULL && !o.help,
                  "no legacy= parsed as an agent");
        options_free(&o);
    }
    if (ok_parse("report=/r", &o) == 0)
        CHECK_STR(o.report_file, "/r");
    options_free(&o);
}

static void test_errors(void)
{

    /* unknown options: the item is quoted */
    bad_parse("foo=1,legacy=x", "unknown option 'foo=1'", (char *)NULL);
    bad_parse("bogus", "unknown option 'bogus'", (char *)NULL);
    /* What jcmd leaves of an unquoted "legacy=/x.so:opts" (and of "report=/r,legacy=..."):
     * the name alone. Said so, with the quoted form that works. */
    bad_parse("legacy", "just 'legacy', without its value", "cut at '='",
              "jcmd PID JVMTI.agent_load /abs/libjvmpishim.so \"\\\"legacy=...\\\"\"", (char *)NULL);
    bad_parse("report", "just 'report', without its value", (char *)NULL);
    bad_parse("methods", "just 'methods', without its value", (char *)NULL);
    bad_parse("log=debug,frob,legacy=x", "'frob'", (char *)NULL);
    bad_parse("help=yes,legacy=x", "'help=yes'", (char *)NULL);
    bad_parse("LOG=debug,legacy=x", "'LOG=debug'", (char *)NULL);
    bad_parse("legacy,legacy=x", "'legacy'", (char *)NULL);
    bad_parse(" legacy=x", "' legacy=x'", (char *)NULL);

    /* bad log level, named */
    bad_parse("log=loud,legacy=x", "log=loud", (char *)NULL);
    bad_parse("log=DEBUG,legacy=x", "log=DEBUG", (char *)NULL);
    bad_parse("log=debugx,legacy=x", "log=debugx", (char *)NULL);
    bad_parse("log=,legacy=x", "'log='", (char *)NULL);
    /* log without '=' */
    bad_parse("log,legacy=x", "'log'", (char *)NULL);

    /* logfile= without a path */
    bad_parse("logfile=,legacy=x", "logfile=", "path", (char *)NULL);
    bad_parse("logfile,legacy=x", "'logfile'", (char *)NULL);
    /* methods= with a bad or missing value */
    bad_parse("methods=fast,legacy=x", "methods=fast", "bci", "jvmti", (char *)NULL);
    bad_parse("methods=,legacy=x", "'methods='", (char *)NULL);
    bad_parse("methods,legacy=x", "'methods'", (char *)NULL);
    bad_parse("methods=JVMTI,legacy=x", "methods=JVMTI", (char *)NULL);
    /* vthreads= with a bad or missing value */
    bad_parse("vthreads=virtual,legacy=x", "vthreads=virtual", "threads", "carriers", (char *)NULL);
    bad_parse("vthreads=,legacy=x", "'vthreads='", (char *)NULL);
    bad_parse("vthreads,legacy=x", "'vthreads'", (char *)NULL);
    bad_parse("vthreads", "just 'vthreads', without its value", (char *)NULL);
    /* report= without a path */
    bad_parse("report=,legacy=x", "report=", "path", (char *)NULL);
    bad_parse("report,legacy=x", "'report'", (char *)NULL);

    /* legacy= naming nothing */
    bad_parse("legacy=", "legacy=", "no agent", (char *)NULL);
    bad_parse("legacy=:opts", "legacy=:opts", (char *)NULL);
    bad_parse("log=info,legacy=", "log=info,legacy=", (char *)NULL);

    /* stray commas */
    bad_parse(",,legacy=x", ",,legacy=x", "stray", (char *)NULL);
    bad_parse("log=info,,legacy=x", "log=info,,legacy=x", "stray", (char *)NULL);
    bad_parse(",", "stray", (char *)NULL);
    bad_parse("help,", "'help,'", "stray", (char *)NULL);
}

/* A failure after a heap copy was made (logfile=) frees it: LSan reports a leak if not. */
static void test_failure_frees(void)
{
    bad_parse("logfile=/x,bogus,legacy=y", "'bogus'", (char *)NULL);
    bad_parse("logfile=/x,log=nope,legacy=y", "log=nope", (char *)NULL);
    bad_parse("logfile=/x,legacy=", "legacy=", (char *)NULL);
    bad_parse("logfile=/x,,legacy=y", "stray", (char *)NULL);
    bad_parse("logfile=/x,bogus", "'bogus'", (char *)NULL);
}

static void test_long_text(void)
{
    enum { N = 10 * 1024 };
    char *text = malloc(N + 64);
    char *expect = malloc(N + 1);
    CHECK(text != NULL && expect != NULL, "malloc");
    if (text == NULL || expect == NULL) {
        free(text);
        free(expect);
        return;
    }
    /* 10 KB of agent options, with the usual separators sprinkled in */
    for (size_t i = 0; i < N; i++)
        expect[i] = "abc,=:x y"[i % 9];
    expect[N] = '\0';
    snprintf(text, N + 64, "log=info,legacy=/a/libx.so:%s", expect);
    struct shim_options o;
    if (ok_parse(text, &o) == 0) {
        CHECK_STR(o.legacy, "/a/libx.so");
        CHECK(o.agent_options != NULL && strlen(o.agent_options) == N &&
                  strcmp(o.agent_options, expect) == 0,
              "10 KB agent options not passed verbatim");
    }
    options_free(&o);

    /* a 10 KB path */
    memset(expect, 'p', N);
    expect[0] = '/';
    expect[N] = '\0';
    snprintf(text, N + 64, "legacy=%s", expect);
    if (ok_parse(text, &o) == 0)
        CHECK(o.legacy != NULL && strcmp(o.legacy, expect) == 0, "10 KB path not kept");
    options_free(&o);

    /* a 10 KB unknown option: the message is cut to the buffer, still names the start */
    memset(expect, 'q', N);
    expect[N] = '\0';
    snprintf(text, N + 64, "%s,legacy=x", expect);
    bad_parse(text, "unknown option 'qqqq", (char *)NULL);
    CHECK(strlen(err) < sizeof err, "error message overflows its buffer");

    /* a small error buffer is respected */
    char small[16];
    memset(small, 'Z', sizeof small);
    CHECK_EQ_INT(options_parse(text, &o, small, 8), -1);
    CHECK(memchr(small, '\0', 8) != NULL && small[8] == 'Z',
          "options_parse wrote past errlen");
    options_free(&o);

    free(text);
    free(expect);
}

/* NAME:VALUE for every valued option; with no '=' anywhere (the spelling an unquoted jcmd
 * passes whole), %3D and %25 in the agent's options stand for '=' and '%'. */
static void test_colon_spelling(void)
{
    struct shim_options o;
    if (ok_parse("report:/tmp/r.txt,log:info,logfile:/tmp/l:x,methods:jvmti,"
                 "legacy:/opt/old/libprof.so:heap%3Dsites,cpu%3dtimes,pct%25", &o) == 0) {
        CHECK_STR(o.report_file, "/tmp/r.txt");
        CHECK_EQ_INT(o.log_level, LOG_INFO);
        CHECK_STR(o.log_file, "/tmp/l:x");
        CHECK_EQ_INT(o.methods, METHODS_JVMTI);
        CHECK_STR(o.legacy, "/opt/old/libprof.so");
        CHECK_STR(o.agent_options, "heap=sites,cpu=times,pct%");
        options_free(&o);
    }
    /* With an '=' anywhere, the agent's options stay verbatim, %3D included. */
    if (ok_parse("log=info,legacy:/a/libx.so:name%3Dv,k=w", &o) == 0) {
        CHECK_STR(o.legacy, "/a/libx.so");
        CHECK_STR(o.agent_options, "name%3Dv,k=w");
        options_free(&o);
    }
    if (ok_parse("legacy:hprof", &o) == 0) {
        CHECK_STR(o.legacy, "hprof");
        CHECK(o.agent_options == NULL, "no ':' after the path must give NULL agent options");
        options_free(&o);
    }
    bad_parse("log:loud,legacy:x", "bad log level", (char *)NULL);
    bad_parse("legacy:", "names no agent library", (char *)NULL);
    bad_parse("legacy", "write ':' for '='", "legacy:...", (char *)NULL);
}

static void test_help_text(void)
{
    const char *h = options_help();
    CHECK(h != NULL && *h != '\0', "no help text");
    if (h == NULL)
        return;
    static const char *const needles[] = {
        "-agentpath:", "-Xrunjvmpishim:", "legacy=AGENT", "AGENT_OPTIONS", "help",
        "log=LEVEL", "logfile=PATH", "quiet", "error", "warn", "info", "debug",
        "LD_LIBRARY_PATH", "libNAME.so", "NULL",
    };
    for (size_t i = 0; i < sizeof needles / sizeof needles[0]; i++)
        CHECK(strstr(h, needles[i]) != NULL, "help text lacks \"%s\"", needles[i]);
    CHECK(h[strlen(h) - 1] == '\n', "help text does not end with a newline");
    CHECK(options_help() == h, "options_help() not stable");
}

int main(void)
{
    test_legacy_only();
    test_legacy_empty_agent_options();
    test_agent_options_verbatim();
    test_shim_options_before_legacy();
    test_log_levels();
    test_help();
    test_bare_name();
    test_legacy_consumes_rest();
    test_no_legacy();
    test_errors();
    test_failure_frees();
    test_long_text();
    test_colon_spelling();
    test_help_text();
    return UNIT_END();
}
