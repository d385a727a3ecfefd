/* stacks_places.c - see stacks_places.h. */
#include "stacks_places.h"

#include <stdlib.h>
#include <string.h>

#define PLACES_MAX 4096
#define PIDS_SHOWN 16

struct place {
    int pid;
    char *frames;  /* the main thread's frames as answered, a line each */
    char *blocked; /* in what ("a condition wait"), NULL: not blocked */
    double blocked_s;
    int group;     /* its group's number, from 1; 0 while not grouped */
};

static struct place places[PLACES_MAX];
static size_t place_count;

/* The line after the one @line starts, or NULL at the end. */
static const char *next_line(const char *line)
{
    const char *end = strchr(line, '\n');
    return end ? end + 1 : NULL;
}

void pi_stacks_place_note(int pid, const char *reply)
{
    static const char header[] = "thread MainThread (tid ", blocked[] = "  blocked for ";
    const char *main = strstr(reply, header);
    while (main && main != reply && main[-1] != '\n') /* at a line's start */
        main = strstr(main + 1, header);
    const char *frames = main ? next_line(main) : NULL;
    if (!frames || place_count >= PLACES_MAX)
        return;
    const char *end = frames; /* the frames: the lines indented four */
    while (end && strncmp(end, "    ", 4) == 0)
        end = next_line(end);
    struct place *p = &places[place_count];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    p->frames = strndup(frames, end ? (size_t)(end - frames) : strlen(frames));
    if (end && strncmp(end, blocked, strlen(blocked)) == 0) {
        char *in = NULL;
        p->blocked_s = strtod(end + strlen(blocked), &in);
        const char *line_end = strchr(end, '\n');
        if (in && line_end && strncmp(in, " s in ", 6) == 0 && line_end > in + 6)
            p->blocked = strndup(in + 6, (size_t)(line_end - in - 6));
    }
    if (p->frames)
        place_count++;
}

static int same_place(const struct place *a, const struct place *b)
{
    return strcmp(a->frames, b->frames) == 0 &&
           (a->blocked && b->blocked ? strcmp(a->blocked, b->blocked) == 0
                                     : a->blocked == b->blocked);
}

/* Its innermost frame, without its indent: "train.py:48 in main". */
static void innermost(const struct place *p, char *out, size_t size)
{
    const char *frame = p->frames + strspn(p->frames, " ");
    size_t length = strcspn(frame, "\n");
    snprintf(out, size, "%.*s", (int)length, *frame ? frame : "no Python frames");
}

void pi_stacks_places_print(FILE *out)
{
    int groups = 0;
    for (size_t i = 0; i < place_count; i++) {
        if (places[i].group)
            continue;
        places[i].group = ++groups;
        for (size_t j = i + 1; j < place_count; j++)
            if (!places[j].group && same_place(&places[i], &places[j]))
                places[j].group = groups;
    }
    if (place_count >= 2) {
        fprintf(out, "\nmain threads by where they are, the fewest first (the odd ones out):\n");
        /* the smallest groups first, each in the order its first process answered */
        for (size_t size = 1; size <= place_count; size++) {
            for (int g = 1; g <= groups; g++) {
                size_t members = 0, first = 0;
                double least = -1;
                for (size_t i = 0; i < place_count; i++)
                    if (places[i].group == g) {
                        first = members++ ? first : i;
                        if (places[i].blocked && (least < 0 || places[i].blocked_s < least))
                            least = places[i].blocked_s;
                    }
                if (members != size)
                    continue;
                char frame[512];
                innermost(&places[first], frame, sizeof(frame));
                fprintf(out, "  %zu process%s, pid%s", members, members == 1 ? "" : "es",
                        members == 1 ? "" : "s");
                size_t shown = 0;
                for (size_t i = 0; i < place_count && shown < PIDS_SHOWN; i++)
                    if (places[i].group == g)
                        fprintf(out, "%s%d", shown++ ? ", " : " ", places[i].pid);
                if (members > shown)
                    fprintf(out, " and %zu more", members - shown);
                fprintf(out, ": %s", frame);
                if (places[first].blocked)
                    fprintf(out, ", blocked for %.2f s or more in %s", least,
                            places[first].blocked);
                fputc('\n', out);
            }
        }
    }
    for (size_t i = 0; i < place_count; i++) {
        free(places[i].frames);
        free(places[i].blocked);
    }
    place_count = 0;
}
