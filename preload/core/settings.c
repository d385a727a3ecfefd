/* settings.c - the PROFINJECT_* environment variables, one table (see settings.h). */
#include "settings.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "diagnostics.h"
#include "raw_syscalls.h"
#include "profinject/control_protocol.h"

enum kind { TEXT, NUMBER, CHOICE };

struct setting {
    const char *name;
    enum kind kind;
    uint64_t min, max, fallback; /* NUMBER */
    const char *choices;         /* CHOICE and flags: "a|b|c", the first the default */
    uint64_t summary_fallback;   /* NUMBER: the default in PROFINJECT_MODE=summary, if not 0 */
};

/*
 * Summary mode traces jobs all day, so some defaults are its own:
 * - flushes a second apart, not a tenth: each frame's compression starts afresh (a DataLoader
 *   job's further epoch: 20 KB written against 17);
 * - process samples 200 ms apart, not 50: a step's CPU is read as a sum over many steps, memory
 *   over minutes (15.5 KB an epoch against 13.7 KB);
 * - native stacks every 40 ms of a thread's CPU and Python frames every 40 ms, not 10: samples
 *   enough at a quarter of the rate, and each new call path is a stack defined in the trace
 *   (the job's main process: 24 new native stacks an epoch, 2.3 KB of its 6.6 KB; its imports'
 *   Python stacks, 47 KB for 2 epochs against 35 KB).
 */
#define SUMMARY_FLUSH_MS 1000
#define SUMMARY_SAMPLE_MS 200
#define SUMMARY_STACK_SAMPLE_MS 40

/* Documented in docs/settings.md; the launcher's and the tools' own too, so
 * that they are not taken for typos. */
static const struct setting settings[] = {
    {"PROFINJECT_OUTPUT", TEXT, 0, 0, 0, NULL, 0},
    {"PROFINJECT_OUTPUT_HANDOFF", TEXT, 0, 0, 0, NULL, 0},
    {"PROFINJECT_FLUSH_MS", NUMBER, 1, 3600000, 100, NULL, SUMMARY_FLUSH_MS},
    {"PROFINJECT_SAMPLE_MS", NUMBER, 0, 3600000, PI_DEFAULT_SAMPLE_MS, NULL, SUMMARY_SAMPLE_MS},
    {"PROFINJECT_WAIT_US", NUMBER, 0, 60000000, 20, NULL, 0},
    {"PROFINJECT_BUFFER_KB", NUMBER, 4, 65536, 64, NULL, 0},
    {"PROFINJECT_POOL_MB", NUMBER, 1, 65536, 16, NULL, 0},
    {"PROFINJECT_POOL_MAX_MB", NUMBER, 1, 65536, 256, NULL, 0},
    {"PROFINJECT_ZSTD_LEVEL", NUMBER, 1, 19, 3, NULL, 0},
    {"PROFINJECT_CLOCK", CHOICE, 0, 0, 0, "auto|tsc|monotonic", 0},
    {"PROFINJECT_GPU_TIMING", CHOICE, 0, 0, 0, "auto|events|off", 0},
    {"PROFINJECT_GPU_SAMPLE", NUMBER, 1, 1000000000, 1, NULL, 0},
    {"PROFINJECT_PY_SAMPLE", NUMBER, 0, 1000000000, 100, NULL, 0},
    {"PROFINJECT_PY_FRAMES", CHOICE, 0, 0, 0, "1|0", 0},
    {"PROFINJECT_PY_TIME_MS", NUMBER, 0, 60000, 10, NULL, SUMMARY_STACK_SAMPLE_MS},
    {"PROFINJECT_SPANS", TEXT, 0, 0, 0, NULL, 0},
    {"PROFINJECT_SPANS_BUILTIN", CHOICE, 0, 0, 0, "1|0", 0},
    {"PROFINJECT_NATIVE_CPU_MS", NUMBER, 0, 60000, 10, NULL, SUMMARY_STACK_SAMPLE_MS},
    {"PROFINJECT_STDERR_TAIL", CHOICE, 0, 0, 0, "1|0", 0},
    {"PROFINJECT_PAUSED", CHOICE, 0, 0, 0, "0|1", 0},
    {"PROFINJECT_DISABLE", CHOICE, 0, 0, 0, "0|1", 0},
    {"PROFINJECT_MODE", CHOICE, 0, 0, 0, "full|summary", 0},
    {"PROFINJECT_SUMMARY_INTERVAL_S", NUMBER, 1, 86400, 10, NULL, 0},
    {"PROFINJECT_SUMMARY_DETAIL_MS", NUMBER, 0, 3600000, 2000, NULL, 0},
    {"PROFINJECT_SUMMARY_TRIGGER_GAP_S", NUMBER, 0, 86400, 300, NULL, 0},
    {"PROFINJECT_CONTROL", CHOICE, 0, 0, 0, "1|0", 0},
    {"PROFINJECT_CONTROL_DIR", TEXT, 0, 0, 0, NULL, 0},
    {PI_RECORD_UNTIL_ENV, NUMBER, 0, UINT64_MAX / 2, 0, NULL, 0},
    {"PROFINJECT_ATTACHED", CHOICE, 0, 0, 0, "0|1", 0},
    {"PROFINJECT_JOB_ID", TEXT, 0, 0, 0, NULL, 0}, /* kept in the header: groups the ranks */
#ifdef PI_TEST_KNOBS /* fault injection: the tests' build only (preload/CMakeLists.txt) */
    {"PROFINJECT_TEST_WRITER_STALL_MS", NUMBER, 0, 600000, 0, NULL, 0},
    {"PROFINJECT_TEST_STOP_STALL_MS", NUMBER, 0, 600000, 0, NULL, 0},
    {"PROFINJECT_TEST_FAIL_WRITE_AFTER", NUMBER, 0, UINT64_MAX / 2, 0, NULL, 0},
    {"PROFINJECT_TEST_LAUNCH_DELAY_NS", NUMBER, 0, 1000000000, 0, NULL, 0},
    {"PROFINJECT_TEST_NO_LIBUNWIND", CHOICE, 0, 0, 0, "0|1", 0},
#endif
    {"PROFINJECT_LIB", TEXT, 0, 0, 0, NULL, 0},         /* the launcher's */
    {"PROFINJECT_PYTHON", TEXT, 0, 0, 0, NULL, 0},      /* the project's tools */
    {"PROFINJECT_CUDA_PYTHON", TEXT, 0, 0, 0, NULL, 0}, /* the project's tools */
};

#define SETTING_COUNT (sizeof(settings) / sizeof(settings[0]))
#define TEST_PREFIX "PROFINJECT_TEST_"

static int parent_traced(void);

/* Say what is wrong with a setting once per process image, and only in the
 * first process of a traced tree: the others inherited the same environment. */
static void tell_list(const struct setting *s, const char *format, va_list args)
    __attribute__((format(printf, 2, 0)));
static void tell_list(const struct setting *s, const char *format, va_list args)
{
    static unsigned char told[SETTING_COUNT + 1];
    static int quiet = -1;
    size_t index = s ? (size_t)(s - settings) : SETTING_COUNT;
    if (told[index] && s)
        return;
    told[index] = 1;
    if (quiet < 0)
        quiet = parent_traced();
    if (quiet)
        return;
    char message[300];
    vsnprintf(message, sizeof(message), format, args);
    pi_diag("%s", message);
}

static void tell(const struct setting *s, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static void tell(const struct setting *s, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    tell_list(s, format, args);
    va_end(args);
}

void pi_settings_tell(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    tell_list(NULL, format, args);
    va_end(args);
}

static const struct setting *find(const char *name, size_t length)
{
    for (size_t i = 0; i < SETTING_COUNT; i++)
        if (strlen(settings[i].name) == length && strncmp(settings[i].name, name, length) == 0)
            return &settings[i];
    return NULL;
}

uint64_t pi_setting_number(const char *name)
{
    const struct setting *s = find(name, strlen(name));
    const char *text = getenv(name);
    if (!s || s->kind != NUMBER)
        return 0;
    uint64_t fallback =
        s->summary_fallback && strcmp(pi_setting_choice("PROFINJECT_MODE"), "summary") == 0
            ? s->summary_fallback
            : s->fallback;
    if (!text || !*text)
        return fallback;
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (*end != '\0' || text[0] < '0' || text[0] > '9' || value < s->min || value > s->max) {
        tell(s, "%s=%s is not a number from %llu to %llu; using %llu", name, text,
                (unsigned long long)s->min, (unsigned long long)s->max,
                (unsigned long long)fallback);
        return fallback;
    }
    return value;
}

/* Whether @text is one of @choices ("a|b|c"). */
static int among(const char *text, const char *choices)
{
    size_t length = strlen(text);
    for (const char *c = choices; c && *c;) {
        const char *bar = strchr(c, '|');
        size_t n = bar ? (size_t)(bar - c) : strlen(c);
        if (n == length && strncmp(c, text, n) == 0)
            return 1;
        c = bar ? bar + 1 : NULL;
    }
    return 0;
}

const char *pi_setting_choice(const char *name)
{
    static char defaults[SETTING_COUNT][16];
    const struct setting *s = find(name, strlen(name));
    if (!s || s->kind != CHOICE)
        return "";
    char *fallback = defaults[s - settings];
    if (!fallback[0])
        snprintf(fallback, sizeof(defaults[0]), "%.*s", (int)strcspn(s->choices, "|"), s->choices);
    const char *text = getenv(name);
    if (!text || !*text)
        return fallback;
    if (among(text, s->choices))
        return text;
    tell(s, "%s=%s is not one of %s; using %s", name, text, s->choices, fallback);
    return fallback;
}

int pi_setting_flag(const char *name)
{
    return strcmp(pi_setting_choice(name), "1") == 0;
}

/* Whether the parent process runs the library: then it has told already.
 * Its maps are read in chunks, a match across two chunks kept by an overlap. */
static int parent_traced(void)
{
    static const char needle[] = "libprofinject.so"; /* a file, or the memfd of attach */
    char path[64], buf[4096 + sizeof(needle)];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)getppid());
    int fd = pi_sys_open(path, O_RDONLY | O_CLOEXEC, 0), found = 0;
    size_t kept = 0;
    ssize_t n;
    while (fd >= 0 && !found && (n = pi_sys_read(fd, buf + kept, sizeof(buf) - 1 - kept)) > 0) {
        buf[kept + (size_t)n] = '\0';
        found = strstr(buf, needle) != NULL;
        size_t total = kept + (size_t)n;
        kept = total < sizeof(needle) ? total : sizeof(needle) - 1;
        memmove(buf, buf + total - kept, kept);
    }
    if (fd >= 0)
        pi_sys_close(fd);
    return found;
}

void pi_settings_check_environment(void)
{
    extern char **environ;
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "PROFINJECT_", 11) != 0)
            continue;
        const char *equals = strchr(*e, '=');
        size_t length = equals ? (size_t)(equals - *e) : strlen(*e);
        if (find(*e, length))
            continue;
        if (strncmp(*e, TEST_PREFIX, sizeof(TEST_PREFIX) - 1) == 0)
            tell(NULL, "%.*s is a fault injection of the tests' build of the library; this "
                 "library ignores it", (int)length, *e);
        else
            tell(NULL, "%.*s is not a setting of profinject (a typo?); it is ignored",
                 (int)length, *e);
    }
    /* every value now, also of the settings a part reads only later (GPU timing at the
     * first launch) or never in this process */
    for (size_t i = 0; i < SETTING_COUNT; i++) {
        if (settings[i].kind == NUMBER)
            (void)pi_setting_number(settings[i].name);
        else if (settings[i].kind == CHOICE)
            (void)pi_setting_choice(settings[i].name);
    }
}
