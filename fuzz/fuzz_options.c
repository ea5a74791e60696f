/* fuzz_options.c — libFuzzer harness for the shim's option parser (shim/core/options.c).
 *
 * The input is the -agentpath option text as the JVM hands it to Agent_OnLoad: a C string,
 * so bytes after an embedded NUL are never seen (the JVM could not pass them either). Besides
 * ASan/UBSan catching memory errors, the harness checks what docs/options.md promises and
 * aborts on any violation, so a wrong answer counts as a finding, not only a crash:
 *   - a failure returns -1 with a non-empty, NUL-terminated message and leaves nothing set;
 *     the same text fails the same way with an error buffer of 1..8 bytes (truncation);
 *   - a success without legacy= has no agent options (no legacy= is allowed: the shim then
 *     serves the program's own libraries); legacy is non-empty and holds no ':'; the text ends
 *     with "legacy=" (or "legacy:") LEGACY [":" AGENT_OPTIONS] (legacy= takes the rest,
 *     verbatim, or with %3D and %25 decoded in a text without '='); a
 *     logfile or report file is non-empty and holds no ','; the level is one of the five;
 *   - round trip: the parsed options, written back in the grammar's canonical form,
 *     parse to the same options.
 * options_free() runs after every parse, so LeakSanitizer sees any leak.
 */
#include "core/log.h"
#include "core/options.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUIRE(cond, ...)                                                              \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            fprintf(stderr, "fuzz_options: %s: ", #cond);                               \
            fprintf(stderr, __VA_ARGS__);                                               \
            fputc('\n', stderr);                                                        \
            abort();                                                                    \
        }                                                                               \
    } while (0)

static bool same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static void check_empty(const struct shim_options *o, const char *text)
{
    REQUIRE(o->legacy == NULL && o->agent_options == NULL && o->log_file == NULL &&
                o->report_file == NULL && o->record_file == NULL && !o->help &&
                !o->check_dumps && !o->log_level_set &&
                o->methods == METHODS_DEFAULT,
            "options left set after the failed parse of '%s'", text ? text : "(null)");
}

/* Write o back as "[help,][log=L,][logfile=P,][checkdumps,][report=R,][record=F,][methods=M,]
 * legacy=A[:O]" (or without the legacy item when none was given). */
static char *canonical(const struct shim_options *o)
{
    static const char *const names[] = {"quiet", "error", "warn", "info", "debug"};
    size_t cap = 80 + (o->log_file ? strlen(o->log_file) : 0) + (o->legacy ? strlen(o->legacy) : 0) +
                 (o->report_file ? strlen(o->report_file) : 0) +
                 (o->record_file ? strlen(o->record_file) : 0) +
                 (o->agent_options ? strlen(o->agent_options) : 0);
    char *s = malloc(cap);
    REQUIRE(s != NULL, "malloc");
    size_t n = 0;
    s[0] = '\0';
#define ADD(...) (n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__))
    if (o->help)
        ADD("help,");
    if (o->log_level_set)
        ADD("log=%s,", names[o->log_level]);
    if (o->log_file)
        ADD("logfile=%s,", o->log_file);
    if (o->check_dumps)
        ADD("checkdumps,");
    if (o->report_file)
        ADD("report=%s,", o->report_file);
    if (o->record_file)
        ADD("record=%s,", o->record_file);
    if (o->methods != METHODS_DEFAULT)
        ADD("methods=%s,", o->methods == METHODS_BCI ? "bci" : "jvmti");
    if (o->legacy)
        ADD("legacy=%s%s%s", o->legacy, o->agent_options ? ":" : "",
            o->agent_options ? o->agent_options : "");
    else if (n > 0)
        s[--n] = '\0'; /* no legacy=: drop the trailing comma */
#undef ADD
    REQUIRE(n < cap, "canonical form overflow");
    return s;
}

static void check_ok(const struct shim_options *o, const char *text)
{
    REQUIRE(o->log_level >= LOG_QUIET && o->log_level <= LOG_DEBUG, "level %d", o->log_level);
    REQUIRE(o->log_level_set || o->log_level == LOG_WARN, "level %d without log=", o->log_level);
    REQUIRE(o->methods == METHODS_DEFAULT || o->methods == METHODS_BCI || o->methods == METHODS_JVMTI,
            "methods %d", o->methods);
    if (o->log_file != NULL)
        REQUIRE(o->log_file[0] != '\0' && strchr(o->log_file, ',') == NULL, "logfile '%s'",
                o->log_file);
    if (o->report_file != NULL)
        REQUIRE(o->report_file[0] != '\0' && strchr(o->report_file, ',') == NULL, "report '%s'",
                o->report_file);
    if (o->record_file != NULL)
        REQUIRE(o->record_file[0] != '\0' && strchr(o->record_file, ',') == NULL, "record '%s'",
                o->record_file);
    if (o->legacy == NULL) {
        REQUIRE(o->agent_options == NULL, "agent options without legacy= in '%s'", text);
        return;
    }
    REQUIRE(o->legacy[0] != '\0' && strchr(o->legacy, ':') == NULL, "legacy '%s'", o->legacy);
    /* legacy= (or legacy:, the NAME:VALUE spelling) is the first item that starts so, and
     * takes the rest of the text: it must hold exactly what was parsed. Agent options are
     * verbatim, except in a text without '=', where %3D and %25 are decoded (jcmd's
     * spelling of '=' and '%'). */
    const char *tail = text;
    while (!(strncmp(tail, "legacy", 6) == 0 && (tail[6] == '=' || tail[6] == ':'))) {
        tail = strchr(tail, ',');
        REQUIRE(tail != NULL, "'%s' accepted without a legacy item", text);
        tail++;
    }
    size_t ll = strlen(o->legacy);
    REQUIRE(strncmp(tail + 7, o->legacy, ll) == 0 && (tail[7 + ll] == '\0' || tail[7 + ll] == ':'),
            "legacy '%s' is not what '%s' names", o->legacy, text);
    if (tail[7 + ll] == '\0') {
        REQUIRE(o->agent_options == NULL, "agent options '%s' from '%s'", o->agent_options, text);
        return;
    }
    REQUIRE(o->agent_options != NULL, "no agent options from '%s'", text);
    const char *raw = tail + 8 + ll;
    if (strchr(text, '=') != NULL) {
        REQUIRE(strcmp(raw, o->agent_options) == 0, "agent options '%s', not verbatim '%s'",
                o->agent_options, raw);
        return;
    }
    const char *a = o->agent_options;
    while (*raw != '\0') {
        char want = *raw;
        if (raw[0] == '%' && raw[1] == '3' && (raw[2] == 'D' || raw[2] == 'd'))
            want = '=', raw += 3;
        else if (raw[0] == '%' && raw[1] == '2' && raw[2] == '5')
            want = '%', raw += 3;
        else
            raw++;
        REQUIRE(*a == want, "agent options '%s' are not the decoded '%s'", o->agent_options,
                tail + 8 + ll);
        a++;
    }
    REQUIRE(*a == '\0', "agent options '%s' longer than '%s'", o->agent_options, tail + 8 + ll);
}

static void parse_one(const char *text)
{
    struct shim_options o;
    char err[1024];
    memset(err, 0x5a, sizeof err);
    memset(&o, 0xa5, sizeof o); /* garbage in: the parser must not read or free it */
    int rc = options_parse(text, &o, err, sizeof err);
    REQUIRE(rc == 0 || rc == -1, "rc %d", rc);
    if (rc == -1) {
        REQUIRE(memchr(err, '\0', sizeof err) != NULL && err[0] != '\0', "bad error message");
        check_empty(&o, text);
    } else {
        /* No text (-agentpath with no '='): accepted, no agent, as "" is. */
        if (text == NULL)
            REQUIRE(o.legacy == NULL && !o.help && o.report_file == NULL, "NULL text set options");
        text = text != NULL ? text : "";
        check_ok(&o, text);
        char *again_text = canonical(&o);
        struct shim_options again;
        char err2[1024];
        int rc2 = options_parse(again_text, &again, err2, sizeof err2);
        REQUIRE(rc2 == 0, "canonical form '%s' of '%s' refused: %s", again_text, text, err2);
        REQUIRE(again.help == o.help && again.log_level_set == o.log_level_set &&
                    again.log_level == o.log_level && again.check_dumps == o.check_dumps &&
                    again.methods == o.methods &&
                    same_str(again.log_file, o.log_file) &&
                    same_str(again.report_file, o.report_file) &&
                    same_str(again.record_file, o.record_file) && same_str(again.legacy, o.legacy) &&
                    same_str(again.agent_options, o.agent_options),
                "'%s' and its canonical form '%s' parse differently", text, again_text);
        options_free(&again);
        free(again_text);
    }
    options_free(&o);
    check_empty(&o, text); /* options_free clears, and a second free is harmless */
    options_free(&o);

    /* A short error buffer: the same answer, the message cut and still terminated. The
     * buffer is exactly errlen bytes on the heap, so ASan sees any write past it. */
    size_t errlen = 1 + (text ? strlen(text) % 8 : 0);
    char *small = malloc(errlen);
    REQUIRE(small != NULL, "malloc");
    int rc3 = options_parse(text, &o, small, errlen);
    REQUIRE(rc3 == rc, "rc %d with a %zu-byte error buffer, %d with 1024", rc3, errlen, rc);
    if (rc3 == -1)
        REQUIRE(memchr(small, '\0', errlen) != NULL, "unterminated short error message");
    options_free(&o);
    free(small);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Exactly size+1 bytes, so a read past the terminator is an ASan error. */
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    parse_one(text);
    if (size == 0)
        parse_one(NULL); /* no options at all: the JVM passes NULL */
    free(text);
    return 0;
}
