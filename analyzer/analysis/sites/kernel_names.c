/* kernel_names.c - short names for kernels (see kernel_names.h). */
#include "kernel_names.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CANDIDATES 32
#define ANONYMOUS "(anonymous namespace)"

/* A name in the template arguments that may tell a kernel apart. */
struct candidate {
    const char *name;
    size_t length;
    int depth;
};

struct kernel_name {
    const char *base, *arguments; /* the function's name; its template arguments, or NULL */
    size_t base_length, arguments_length;
    struct candidate candidates[MAX_CANDIDATES];
    int count;
    struct candidate fallback; /* the first plain name among the arguments, where no candidate */
};

/* Names in template arguments that say nothing of what the kernel computes: PyTorch's
 * launch wrappers and argument types, lambdas, the C++ library's containers. */
static int generic(const char *name, size_t length)
{
    static const char *const names[] = {
        "gpu_kernel_impl", "gpu_kernel_impl_nocast", "operator", "lambda", "TensorListMetadata",
        "TensorListScalarListMetadata", "array", "ReduceOp", "func_wrapper_t", "TensorInfo",
        "TensorIteratorBase", "TensorIterator", "Tensor", "PhiloxCudaState", "Scalar", "Params",
        "complex", "tuple", "pair", "basic_string", "OffsetCalculator", "IntDivider"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == length && strncmp(names[i], name, length) == 0)
            return 1;
    return 0;
}

static int basic_type(const char *name, size_t length)
{
    static const char *const words[] = {"void", "bool", "char", "short", "int", "long", "float",
                                        "double", "unsigned", "signed", "const", "true", "false",
                                        "Half", "BFloat16", "std", "c10", "at", "native"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strlen(words[i]) == length && strncmp(words[i], name, length) == 0)
            return 1;
    return 0;
}

/* The index just past the bracket that closes the one at @s[open] ('<' or '('). */
static size_t closing(const char *s, size_t open, size_t end)
{
    int depth = 0;
    for (size_t i = open; i < end; i++) {
        if (s[i] == '(' && strncmp(s + i, ANONYMOUS, strlen(ANONYMOUS)) == 0) {
            i += strlen(ANONYMOUS) - 1;
            continue;
        }
        depth += s[i] == '<' || s[i] == '(';
        depth -= s[i] == '>' || s[i] == ')';
        if (depth == 0)
            return i + 1;
    }
    return end;
}

static void find_candidates(struct kernel_name *k)
{
    const char *s = k->arguments;
    size_t n = k->arguments_length;
    int depth = 0;
    for (size_t i = 0; i < n;) {
        if (s[i] == '(' && strncmp(s + i, ANONYMOUS, strlen(ANONYMOUS)) == 0) {
            i += strlen(ANONYMOUS);
            continue;
        }
        if (isdigit((unsigned char)s[i])) { /* a number, with its suffix (32u, 2ul) */
            while (i < n && isalnum((unsigned char)s[i]))
                i++;
            continue;
        }
        if (!(isalpha((unsigned char)s[i]) || s[i] == '_')) {
            depth += s[i] == '<' || s[i] == '(';
            depth -= s[i] == '>' || s[i] == ')';
            i++;
            continue;
        }
        size_t start = i;
        while (i < n && (isalnum((unsigned char)s[i]) || s[i] == '_'))
            i++;
        size_t length = i - start, next = i;
        while (next < n && s[next] == ' ')
            next++;
        int named_thing = next < n && (s[next] == '<' || s[next] == '('); /* a template, a function */
        int after_scope = i + 1 < n && s[i] == ':' && s[i + 1] == ':';
        if (named_thing && !generic(s + start, length) && k->count < MAX_CANDIDATES)
            k->candidates[k->count++] = (struct candidate){s + start, length, depth};
        else if (!k->fallback.name && !after_scope && depth == 0 && !basic_type(s + start, length))
            k->fallback = (struct candidate){s + start, length, depth};
    }
}

static void parse(const char *full, struct kernel_name *k)
{
    memset(k, 0, sizeof(*k));
    const char *s = strncmp(full, "void ", 5) == 0 ? full + 5 : full;
    size_t end = strlen(s), i = 0;
    while (i < end && s[i] != '<' &&
           !(s[i] == '(' && strncmp(s + i, ANONYMOUS, strlen(ANONYMOUS)) != 0))
        i += s[i] == '(' ? strlen(ANONYMOUS) : 1;
    /* the function's own name: after the last scope in front of its arguments */
    size_t base = 0;
    for (size_t j = 0; j + 1 < i; j++)
        if (s[j] == ':' && s[j + 1] == ':')
            base = j + 2;
    k->base = s + base;
    k->base_length = i - base;
    if (i < end && s[i] == '<') {
        size_t close = closing(s, i, end);
        k->arguments = s + i + 1;
        k->arguments_length = close > i + 1 ? close - i - 2 : 0;
        find_candidates(k);
    }
}

/* The innermost candidate (deepest; the last of those), or -1. */
static int innermost(const struct kernel_name *k)
{
    int best = -1;
    for (int i = 0; i < k->count; i++)
        if (best < 0 || k->candidates[i].depth >= k->candidates[best].depth)
            best = i;
    return best;
}

/* The candidate before @inner with another name, or -1. */
static int outer(const struct kernel_name *k, int inner)
{
    const struct candidate *c = &k->candidates[inner];
    for (int i = inner - 1; i >= 0; i--)
        if (k->candidates[i].length != c->length ||
            strncmp(k->candidates[i].name, c->name, c->length) != 0)
            return i;
    return -1;
}

/* The leading numbers of the template arguments: "128, 4". */
static size_t leading_numbers(const struct kernel_name *k, char *out, size_t size)
{
    size_t at = 0, i = 0;
    const char *s = k->arguments;
    while (s && i < k->arguments_length && isdigit((unsigned char)s[i])) {
        size_t start = i;
        while (i < k->arguments_length && isalnum((unsigned char)s[i]))
            i++;
        int n = snprintf(out + at, size - at, "%s%.*s", at ? ", " : "", (int)(i - start), s + start);
        if (n < 0 || (size_t)n >= size - at)
            break;
        at += (size_t)n;
        while (i < k->arguments_length && (s[i] == ',' || s[i] == ' '))
            i++;
    }
    return at;
}

/* @k at @level: 0 its innermost candidate, 1 with the one before, 2 with the leading numbers */
static void describe(const struct kernel_name *k, int level, char *out, size_t size)
{
    char numbers[64] = "";
    if (level >= 2 && leading_numbers(k, numbers, sizeof(numbers)) == 0)
        numbers[0] = '\0';
    int at = snprintf(out, size, "%.*s%s%s%s", (int)k->base_length, k->base, numbers[0] ? "<" : "",
                      numbers, numbers[0] ? ">" : "");
    if (at < 0 || (size_t)at >= size)
        return;
    int inner = innermost(k), before = inner >= 0 && level >= 1 ? outer(k, inner) : -1;
    const struct candidate *tell = inner >= 0 ? &k->candidates[inner] : &k->fallback;
    if (before >= 0)
        snprintf(out + at, size - (size_t)at, " (%.*s, %.*s)", (int)k->candidates[before].length,
                 k->candidates[before].name, (int)tell->length, tell->name);
    else if (tell->name)
        snprintf(out + at, size - (size_t)at, " (%.*s)", (int)tell->length, tell->name);
}

/* cuBLAS's own kernels are one long plain name: "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_
 * tilesize256x128x8_stage3_..._execute_split_k_kernel__5x_cublas". What tells them apart is
 * the layout and the tile, and whether the product is split along k. 1 when @full is one. */
static int cublas_gemm(const char *full, char *out, size_t size)
{
    const char *gemm = strstr(full, "_gemm_"), *tile = strstr(full, "_tilesize");
    if (!gemm || !tile || strchr(full, '(') || strchr(full, '<'))
        return 0;
    const char *layout = tile; /* the "_nn_n" before the tile: its first two letters */
    while (layout > gemm && layout[-1] != '_')
        layout--;
    while (layout > gemm + 1 && layout[-2] != '_')
        layout--;
    layout = layout > gemm + 1 ? layout - 1 : gemm;
    size_t tile_length = strcspn(tile + 9, "_");
    snprintf(out, size, "%.*s (%.2s, %.*s%s)", (int)(gemm + 5 - full), full,
             layout > gemm ? layout : "?", (int)tile_length, tile + 9,
             strstr(full, "split_k") ? ", split k" : "");
    return 1;
}

void pi_kernel_short_name(const char *full, char *out, size_t size)
{
    if (cublas_gemm(full, out, size))
        return;
    struct kernel_name k;
    parse(full, &k);
    if (k.base_length == 0) {
        snprintf(out, size, "%s", full);
        return;
    }
    describe(&k, 0, out, size);
}

static int same_as_another(char (*out)[PI_KERNEL_SHORT_NAME], size_t count, size_t i)
{
    for (size_t j = 0; j < count; j++)
        if (j != i && strcmp(out[i], out[j]) == 0)
            return 1;
    return 0;
}

void pi_kernel_short_names(const char *const *full, size_t count,
                           char (*out)[PI_KERNEL_SHORT_NAME])
{
    for (size_t i = 0; i < count; i++)
        pi_kernel_short_name(full[i], out[i], PI_KERNEL_SHORT_NAME);
    unsigned char *alike = calloc(count ? count : 1, 1);
    for (int level = 1; alike && level <= 2; level++) {
        for (size_t i = 0; i < count; i++)
            alike[i] = (unsigned char)same_as_another(out, count, i);
        for (size_t i = 0; i < count; i++) {
            struct kernel_name k;
            parse(full[i], &k);
            if (alike[i] && k.base_length)
                describe(&k, level, out[i], PI_KERNEL_SHORT_NAME);
        }
    }
    free(alike);
    /* still alike: numbered in the order given, the first as it is */
    for (size_t i = 0; i < count; i++) {
        int n = 1;
        for (size_t j = i + 1; j < count; j++)
            if (strcmp(out[i], out[j]) == 0) {
                size_t length = strlen(out[j]);
                snprintf(out[j] + length, PI_KERNEL_SHORT_NAME - length, " #%d", ++n);
            }
    }
}
