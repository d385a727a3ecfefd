/*
 * rank_identity.h - who a process is in a distributed job, as the recorder
 * writes it into the header (PI_HDR_IDENTITY: "KEY=value" lines) and the
 * analyzer reads it back. One list of the launchers' variables, one rule
 * for the rank, the number of ranks and the job, shared by both sides.
 */
#ifndef PROFINJECT_RANK_IDENTITY_H
#define PROFINJECT_RANK_IDENTITY_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The variables recorded when set: torchrun / torch.distributed, Slurm,
 * Open MPI, MPICH/PMI, and the user's own job id. */
#define PI_IDENTITY_KEYS                                                                           \
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",             \
        "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",        \
        "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS",          \
        "SLURM_NODEID", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",                            \
        "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMI_SIZE", "PROFINJECT_JOB_ID"

/* Where each launcher says the rank and the number of ranks, first found wins. */
#define PI_RANK_KEYS "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"
#define PI_WORLD_KEYS "WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"
#define PI_LOCAL_RANK_KEYS "LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"

/**
 * pi_identity_value - the value of @key in the "KEY=value" lines of
 * @text, copied into @out (NUL-terminated, cut to @size)
 * Return: 1 when the key is there, else 0 (and @out is "").
 */
static inline int pi_identity_value(const char *text, const char *key, char *out, size_t size)
{
    size_t key_len = strlen(key);
    if (size)
        out[0] = '\0';
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > key_len && line[key_len] == '=' && memcmp(line, key, key_len) == 0) {
            size_t value = len - key_len - 1;
            if (size) {
                if (value >= size)
                    value = size - 1;
                memcpy(out, line + key_len + 1, value);
                out[value] = '\0';
            }
            return 1;
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

/* pi_identity_whole - @value as a whole number ≥ 0, else -1 (empty, a sign, other text) */
static inline long pi_identity_whole(const char *value)
{
    if (!value || !value[0])
        return -1;
    char *end;
    long n = strtol(value, &end, 10);
    return *end == '\0' && n >= 0 ? n : -1;
}

/* pi_identity_number - the first of @keys (NULL-ended) that holds a whole
 * number ≥ 0, else -1 */
static inline long pi_identity_number(const char *text, const char *const *keys)
{
    char value[32];
    for (; *keys; keys++) {
        long n = pi_identity_value(text, *keys, value, sizeof(value)) ? pi_identity_whole(value) : -1;
        if (n >= 0)
            return n;
    }
    return -1;
}

/* pi_identity_rank - the process's global rank, -1 when no launcher said */
static inline long pi_identity_rank(const char *text)
{
    static const char *const keys[] = {PI_RANK_KEYS, NULL};
    return pi_identity_number(text, keys);
}

/* pi_identity_world - the number of ranks, -1 when no launcher said */
static inline long pi_identity_world(const char *text)
{
    static const char *const keys[] = {PI_WORLD_KEYS, NULL};
    return pi_identity_number(text, keys);
}

/* pi_identity_local_rank - the rank on its host, -1 when no launcher said */
static inline long pi_identity_local_rank(const char *text)
{
    static const char *const keys[] = {PI_LOCAL_RANK_KEYS, NULL};
    return pi_identity_number(text, keys);
}

/**
 * pi_identity_job - what groups the processes of one run into @out: the
 * user's PROFINJECT_JOB_ID, Slurm's job (and step), torchrun's run id (not
 * its default "none"), else the rendezvous address and port
 * Return: 1 when one of them was there, else 0 (@out is "").
 */
static inline int pi_identity_job(const char *text, char *out, size_t size)
{
    char a[128], b[128];
    if (pi_identity_value(text, "PROFINJECT_JOB_ID", a, sizeof(a)) && a[0])
        return snprintf(out, size, "%s", a), 1;
    if (pi_identity_value(text, "SLURM_JOB_ID", a, sizeof(a)) && a[0]) {
        if (pi_identity_value(text, "SLURM_STEP_ID", b, sizeof(b)) && b[0])
            snprintf(out, size, "slurm %s.%s", a, b);
        else
            snprintf(out, size, "slurm %s", a);
        return 1;
    }
    if (pi_identity_value(text, "TORCHELASTIC_RUN_ID", a, sizeof(a)) && a[0] &&
        strcmp(a, "none") != 0)
        return snprintf(out, size, "torchrun %s", a), 1;
    if (pi_identity_value(text, "MASTER_ADDR", a, sizeof(a)) && a[0]) {
        pi_identity_value(text, "MASTER_PORT", b, sizeof(b));
        snprintf(out, size, "%s:%s", a, b);
        return 1;
    }
    if (size)
        out[0] = '\0';
    return 0;
}

#endif
