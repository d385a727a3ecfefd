/*
 * call_tree.h - call paths merged into a tree, each node weighted by what
 * passed through it (time, bytes): what a flame graph draws. Bounded: past
 * PI_CALL_TREE_MAX_NODES new paths add their weight to the deepest node
 * they share with the tree, so memory does not grow with the trace.
 */
#ifndef PI_CALL_TREE_H
#define PI_CALL_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/sites/call_sites.h"

#define PI_CALL_TREE_MAX_NODES 20000

struct pi_call_tree_node {
    char *label;
    uint32_t parent;          /* node 0 is the root; its own parent is 0 */
    uint32_t first_child, next_sibling; /* 0: none */
    uint64_t weight;          /* of every path through it */
};

struct pi_call_tree {
    struct pi_call_tree_node *nodes; /* [0] the root, once anything was added */
    size_t count, capacity;
    void *index; /* (parent, label) -> node */
};

/**
 * pi_call_tree_add - add @weight along @path (@depth labels, outermost first)
 * Return: 0, or -1 when out of memory (the weight is then lost).
 */
int pi_call_tree_add(struct pi_call_tree *tree, const char *const *path, size_t depth,
                     uint64_t weight);

/**
 * pi_call_tree_add_site - add @weight along @site's Python frames, outermost first, each
 * labelled "function (file name)", then along @leaf (@leaf_count labels) below them
 * Return: as pi_call_tree_add.
 */
int pi_call_tree_add_site(struct pi_call_tree *tree, const struct pi_call_site *site,
                          const char *const *leaf, size_t leaf_count, uint64_t weight);

void pi_call_tree_free(struct pi_call_tree *tree);

#endif
