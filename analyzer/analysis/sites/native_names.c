/* native_names.c - short names for native functions (see native_names.h). */
#include "native_names.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define ANONYMOUS "(anonymous namespace)"
#define MAX_SCOPES 32
#define SCOPE_CHARS 160
#define ELLIPSIS "\xe2\x80\xa6" /* … */

/* The index just past the bracket that closes the one at @s[open] ('<', '(', '{'). */
static size_t closing(const char *s, size_t open, size_t end)
{
    int depth = 0;
    for (size_t i = open; i < end; i++) {
        depth += s[i] == '<' || s[i] == '(' || s[i] == '{' || s[i] == '[';
        depth -= s[i] == '>' || s[i] == ')' || s[i] == '}' || s[i] == ']';
        if (depth == 0)
            return i + 1;
    }
    return end;
}

/* The length of an operator's symbol after "operator" at @s (operator<<, operator(), ...). */
static size_t operator_symbol(const char *s)
{
    if (strncmp(s, "()", 2) == 0 || strncmp(s, "[]", 2) == 0)
        return 2;
    if (s[0] == '<' && s[1] == '<' && (isalpha((unsigned char)s[2]) || s[2] == '_'))
        return 1; /* operator< with its template arguments: "operator<<char, ...>" */
    size_t n = 0;
    while (s[n] && strchr("<>=!+-*/%&|^~,", s[n]))
        n++;
    return n;
}

/* One scope of the name, from @s[at] to the next "::" outside brackets or @end, written
 * short into @out; the index where the scope ends. */
static size_t short_scope(const char *s, size_t at, size_t end, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    while (at < end && !(s[at] == ':' && at + 1 < end && s[at + 1] == ':')) {
        char c = s[at];
        if (strncmp(s + at, "operator", 8) == 0 && (at == 0 || !isalnum((unsigned char)s[at - 1]))) {
            size_t n = 8 + operator_symbol(s + at + 8);
            if (used + n < size) {
                memcpy(out + used, s + at, n);
                used += n;
            }
            at += n;
            continue;
        }
        if (strncmp(s + at, "{lambda(", 8) == 0) { /* {lambda(long, long)#1} -> {lambda#1} */
            size_t close = closing(s, at, end);
            const char *hash = memchr(s + at, '#', close - at);
            used += (size_t)snprintf(out + used, size > used ? size - used : 0, "{lambda%.*s",
                                     hash ? (int)(s + close - hash) : 1, hash ? hash : "}");
            at = close;
            continue;
        }
        if (c == '<' || c == '(') { /* template arguments, parameters: elided */
            size_t close = closing(s, at, end);
            if (used + 2 < size) {
                out[used++] = c;
                out[used++] = c == '<' ? '>' : ')';
            }
            at = close;
            continue;
        }
        if (c == ' ' && strncmp(s + at, " const", 6) == 0 &&
            !isalnum((unsigned char)s[at + 6]) && s[at + 6] != '_') {
            at += 6; /* the cv-qualifier of a member function */
            continue;
        }
        if (c == ' ' && (s[at + 1] == '&' || s[at + 1] == '[')) { /* ref-qualifiers, [clone] */
            at = end;
            continue;
        }
        if (used + 1 < size)
            out[used++] = c;
        at++;
    }
    out[used < size ? used : size - 1] = '\0';
    return at;
}

/* Where the name starts after its return type: a function template's demangled name begins
 * with one ("void at::native::f<float>(...)"), a space outside brackets before its first
 * parameter list. */
static size_t after_return_type(const char *s, size_t end)
{
    size_t start = 0;
    for (size_t i = 0; i < end; i++) {
        if (strncmp(s + i, ANONYMOUS, strlen(ANONYMOUS)) == 0) {
            i += strlen(ANONYMOUS) - 1;
        } else if (strncmp(s + i, "operator", 8) == 0) {
            i += 8 + operator_symbol(s + i + 8) - 1;
        } else if (s[i] == '<' || s[i] == '{') {
            i = closing(s, i, end) - 1;
        } else if (s[i] == '(') {
            break;
        } else if (s[i] == ' ' && s[i + 1] != '<') { /* "operator<< <...>": no type ends there */
            start = i + 1;
        }
    }
    return start;
}

void pi_native_short_name(const char *full, char *out, size_t size)
{
    size_t end = strlen(full);
    if (size == 0)
        return;
    if (!strstr(full, "::") || (!strchr(full, '(') && !strchr(full, '<') &&
                                 end <= PI_NATIVE_SHORT_CHARS)) {
        if (end <= PI_NATIVE_SHORT_CHARS) {
            snprintf(out, size, "%s", full); /* no C++ to shorten: a C function, a label */
            return;
        }
        /* a long name of no scopes (a Rust symbol left mangled): its start, cut */
        snprintf(out, size, "%.*s%s", PI_NATIVE_SHORT_CHARS - 1, full, ELLIPSIS);
        return;
    }
    char scopes[MAX_SCOPES][SCOPE_CHARS];
    int count = 0;
    for (size_t at = after_return_type(full, end); at < end && count < MAX_SCOPES;) {
        if (strncmp(full + at, ANONYMOUS, strlen(ANONYMOUS)) == 0) {
            at += strlen(ANONYMOUS) + 2; /* and its "::" */
            continue;
        }
        at = short_scope(full, at, end, scopes[count], SCOPE_CHARS);
        /* a lambda's call operator is the lambda */
        if (count > 0 && strncmp(scopes[count], "operator()", 10) == 0 &&
            strncmp(scopes[count - 1], "{lambda", 7) == 0)
            ;
        else if (scopes[count][0])
            count++;
        at += 2; /* "::" */
    }
    /* the outer scopes go first while it is too long; the innermost stays */
    int first = 0;
    size_t length = 0;
    for (int k = 0; k < count; k++)
        length += strlen(scopes[k]) + (k ? 2 : 0);
    while (first < count - 1 && length > PI_NATIVE_SHORT_CHARS) {
        length -= strlen(scopes[first]) + 2;
        first++;
    }
    size_t used = (size_t)snprintf(out, size, "%s", first ? ELLIPSIS : "");
    for (int k = first; k < count && used < size; k++)
        used += (size_t)snprintf(out + used, size - used, "%s%s", k > first ? "::" : "", scopes[k]);
    if (count == 0)
        snprintf(out, size, "%.*s", PI_NATIVE_SHORT_CHARS, full);
}
