/* autograd_nodes.c - autograd nodes by the symbols of native frames (see autograd_nodes.h). */
#include "autograd_nodes.h"

#include <stdio.h>
#include <string.h>

#define NAMESPACE "torch::autograd::"
#define GENERATED "generated::"
#define APPLY "::apply("

/* Whether the @length bytes at @text open and close as many '<' as '>': the "::apply(" that
 * ends them is the node's own, not one inside a template's arguments. */
static int balanced(const char *text, size_t length)
{
    int depth = 0;
    for (size_t i = 0; i < length; i++)
        depth += text[i] == '<' ? 1 : text[i] == '>' ? -1 : 0;
    return depth == 0;
}

/* The node whose apply demangled @symbol is, into @out; 1 when it is one. */
static int node_of_symbol(const char *symbol, char *out, size_t size)
{
    if (strncmp(symbol, NAMESPACE, strlen(NAMESPACE)) != 0)
        return 0;
    const char *node = symbol + strlen(NAMESPACE);
    const char *apply = strstr(node, APPLY);
    while (apply && !balanced(node, (size_t)(apply - node)))
        apply = strstr(apply + 1, APPLY);
    if (!apply || apply == node)
        return 0;
    if (strncmp(node, GENERATED, strlen(GENERATED)) == 0)
        node += strlen(GENERATED);
    int length = (int)(apply - node), written;
    if (length == 6 && strncmp(node, "PyNode", 6) == 0)
        written = snprintf(out, size, "PyNode (custom Python autograd Function)");
    else if (strncmp(node, "CppNode<", 8) == 0)
        written = snprintf(out, size, "%.*s (custom C++ autograd Function)", length, node);
    else
        written = snprintf(out, size, "%.*s", length, node);
    return written > 0;
}

int pi_autograd_node(const struct pi_call_site *site, char *out, size_t size)
{
    for (size_t i = site->python_count; i < site->count; i++)
        if (site->frames[i].symbol && node_of_symbol(site->frames[i].symbol, out, size))
            return 1;
    return 0;
}
