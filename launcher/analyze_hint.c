/* analyze_hint.c - see analyze_hint.h. */
#define _GNU_SOURCE
#include "analyze_hint.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "terminal_text.h"

static const char *invoked_as;
/* PROFINJECT_COMMAND: how the user ran the Python package's `profinject`,
 * which runs this program in its place (shell words, already quoted) */
static char given_command[PATH_MAX];

static int printable(const char *text)
{
    for (; *text; text++)
        if ((unsigned char)*text < 0x20 || (unsigned char)*text >= 0x7f)
            return 0;
    return 1;
}

void pi_set_invoked_as(const char *argv0)
{
    invoked_as = argv0;
    const char *command = getenv("PROFINJECT_COMMAND");
    if (command && *command && strlen(command) < sizeof(given_command) && printable(command))
        strcpy(given_command, command);
    /* the job and the analyzer run from here do not inherit it */
    unsetenv("PROFINJECT_COMMAND");
}

static int same_file(const char *path, const struct stat *self)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_dev == self->st_dev && st.st_ino == self->st_ino;
}

/* Whether the shell's search of PATH for @name (no slash) finds @self first. */
static int path_finds(const char *name, const struct stat *self)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    for (const char *entry = path;; entry++) {
        const char *end = strchr(entry, ':');
        size_t length = end ? (size_t)(end - entry) : strlen(entry);
        char candidate[PATH_MAX];
        /* an empty entry is the working directory */
        if (snprintf(candidate, sizeof(candidate), "%.*s%s%s", (int)length, entry,
                     length ? "/" : "", name) < (int)sizeof(candidate) &&
            access(candidate, X_OK) == 0)
            return same_file(candidate, self);
        if (!end)
            return 0;
        entry = end;
    }
}

/* A name of this program that works when pasted here: @out. */
static const char *launcher_path(char *out, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", out, size - 1);
    out[n > 0 ? n : 0] = '\0';
    struct stat self;
    if (!invoked_as || !*invoked_as || stat("/proc/self/exe", &self) != 0)
        return out;
    if (strchr(invoked_as, '/') ? same_file(invoked_as, &self) : path_finds(invoked_as, &self))
        return invoked_as;
    return out;
}

void pi_print_launcher_hint(FILE *out, const char *lead, const char *arguments,
                            const char *directory)
{
    char self[PATH_MAX];
    fputs(lead, out);
    if (given_command[0])
        fputs(given_command, out);
    else
        pi_put_shell_word(out, launcher_path(self, sizeof(self)), 0);
    fprintf(out, " %s", arguments);
    if (directory) {
        fputc(' ', out);
        pi_put_shell_word(out, directory, 1);
    }
    fputc('\n', out);
}
