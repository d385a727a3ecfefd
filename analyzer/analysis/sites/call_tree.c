/* call_tree.c - see call_tree.h. */
#include "call_tree.h"

#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#include "analysis/common/array_room.h"
#include "analysis/common/u64_map.h"

static uint64_t key_of(uint32_t parent, const char *label)
{
    uint64_t h = pi_text_hash_part(PI_TEXT_HASH_START ^ parent, label);
    return h ? h : 1;
}

/* The child @label of @parent, made when new and there is room; @parent when not. */
static uint32_t child_of(struct pi_call_tree *t, uint32_t parent, const char *label)
{
    for (uint64_t key = key_of(parent, label);; key = key + 1 ? key + 1 : 1) {
        struct pi_u64_entry *e = pi_u64_map_put(t->index, key);
        if (!e)
            return parent;
        if (e->value[0]) {
            const struct pi_call_tree_node *n = &t->nodes[e->value[0] - 1];
            if (n->parent == parent && strcmp(n->label, label) == 0)
                return (uint32_t)(e->value[0] - 1);
            continue; /* another (parent, label) of the same hash */
        }
        if (t->count >= PI_CALL_TREE_MAX_NODES ||
            pi_array_room(&t->nodes, &t->capacity, t->count, sizeof(*t->nodes), 256) != 0)
            return parent;
        char *copy = strdup(label);
        if (!copy)
            return parent;
        uint32_t id = (uint32_t)t->count++;
        t->nodes[id] = (struct pi_call_tree_node){copy, parent, 0, t->nodes[parent].first_child, 0};
        t->nodes[parent].first_child = id;
        e->value[0] = id + 1;
        return id;
    }
}

int pi_call_tree_add(struct pi_call_tree *t, const char *const *path, size_t depth,
                     uint64_t weight)
{
    if (!t->count) {
        if (!(t->index = pi_u64_map_new()) ||
            pi_array_room(&t->nodes, &t->capacity, 0, sizeof(*t->nodes), 256) != 0 ||
            !(t->nodes[0].label = strdup("all"))) {
            pi_call_tree_free(t);
            return -1;
        }
        t->nodes[0].parent = t->nodes[0].first_child = t->nodes[0].next_sibling = 0;
        t->nodes[0].weight = 0;
        t->count = 1;
    }
    uint32_t node = 0;
    t->nodes[0].weight += weight;
    for (size_t i = 0; i < depth; i++) {
        uint32_t child = child_of(t, node, path[i] ? path[i] : "?");
        if (child == node)
            break; /* no room: the weight stays with the deepest node the path shares */
        node = child;
        t->nodes[node].weight += weight;
    }
    return 0;
}

void pi_call_tree_free(struct pi_call_tree *t)
{
    for (size_t i = 0; i < t->count; i++)
        free(t->nodes[i].label);
    free(t->nodes);
    pi_u64_map_free(t->index);
    memset(t, 0, sizeof(*t));
}

/* The deepest call path a flame graph is drawn to. */
#define TREE_DEPTH_MAX 128

int pi_call_tree_add_site(struct pi_call_tree *tree, const struct pi_call_site *site,
                          const char *const *leaf, size_t leaf_count, uint64_t weight)
{
    size_t depth = site->python_count < TREE_DEPTH_MAX ? site->python_count : TREE_DEPTH_MAX;
    char labels[TREE_DEPTH_MAX][160]; /* on the stack: files are read by several threads */
    const char *path[TREE_DEPTH_MAX + 4];
    for (size_t i = 0; i < depth; i++) {
        const struct pi_site_frame *frame = &site->frames[site->python_count - 1 - i];
        const char *slash = strrchr(frame->file, '/');
        snprintf(labels[i], sizeof(labels[i]), "%s (%s)", frame->function,
                 slash ? slash + 1 : frame->file);
        path[i] = labels[i];
    }
    for (size_t i = 0; i < leaf_count && i < 4; i++)
        path[depth++] = leaf[i];
    return pi_call_tree_add(tree, path, depth, weight);
}
