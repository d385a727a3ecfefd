/*
 * html_flame.c - flame graphs on the HTML page (see html_flame.h): icicles,
 * the root on top, each call below its caller, as wide as what passed
 * through it. Clicking a frame zooms to it, clicking the root zooms out;
 * hovering gives its figures. Frames narrower than 2/1000 of the whole are
 * left out, and past MAX_FRAMES the lighter ones, so that the page stays
 * small.
 */
#include "html_flame.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "call_site_format.h"
#include "format.h"

#define FLAME_W 1000
#define ROW_H 18
#define MIN_SHARE 0.002  /* 2 px of the graph's width */
#define MAX_ROWS 64
#define MAX_FRAMES 3000  /* the heaviest first: what a page of any run holds at most */
#define LABEL_MIN_PX 40  /* narrower frames get their label when a zoom widens them */

static const struct pi_call_tree *sort_tree; /* for the children's order */

static int heavier_first(const void *a, const void *b)
{
    uint64_t x = sort_tree->nodes[*(const uint32_t *)a].weight;
    uint64_t y = sort_tree->nodes[*(const uint32_t *)b].weight;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void weight_text(char *out, size_t size, uint64_t weight, int bytes)
{
    snprintf(out, size, "%s", bytes ? pi_format_bytes((double)weight)
                                    : pi_format_ns((double)weight));
}

static int frames_drawn;

/* @node at @x (share of the root's width) and depth @depth, then its children. */
static void draw_node(FILE *out, const struct pi_call_tree *t, uint32_t node, double x, int depth,
                      int bytes)
{
    const struct pi_call_tree_node *n = &t->nodes[node];
    double w = (double)n->weight / (double)t->nodes[0].weight;
    if (w < MIN_SHARE || depth >= MAX_ROWS || frames_drawn >= MAX_FRAMES)
        return;
    frames_drawn++;
    char figure[64];
    weight_text(figure, sizeof(figure), n->weight, bytes);
    fprintf(out, "<g class=\"frame\" data-x=\"%.6f\" data-w=\"%.6f\"><title>", x, w);
    pi_html_text(out, n->label);
    fprintf(out, ": %s, %.1f%%</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                 "fill=\"hsl(%d,70%%,%d%%)\"/>",
            figure, 100 * w, x * FLAME_W, depth * ROW_H, w * FLAME_W > 1 ? w * FLAME_W - 1 : w * FLAME_W,
            ROW_H - 1, bytes ? 200 : 20 + (int)(strlen(n->label) * 7 % 40),
            bytes ? 60 + depth % 3 * 5 : 55 + depth % 3 * 5);
    if (w * FLAME_W >= LABEL_MIN_PX) {
        fprintf(out, "<svg x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"><text x=\"3\" y=\"13\" "
                     "font-size=\"11\">", x * FLAME_W, depth * ROW_H, w * FLAME_W, ROW_H - 1);
        pi_html_text(out, n->label);
        fputs("</text></svg>", out);
    }
    fputs("</g>\n", out);
    size_t count = 0;
    for (uint32_t c = n->first_child; c; c = t->nodes[c].next_sibling)
        count++;
    uint32_t *children = count ? malloc(count * sizeof(*children)) : NULL;
    if (!children)
        return;
    count = 0;
    for (uint32_t c = n->first_child; c; c = t->nodes[c].next_sibling)
        children[count++] = c;
    sort_tree = t;
    qsort(children, count, sizeof(*children), heavier_first);
    for (size_t i = 0; i < count; i++) {
        draw_node(out, t, children[i], x, depth + 1, bytes);
        x += (double)t->nodes[children[i]].weight / (double)t->nodes[0].weight;
    }
    free(children);
}

static int rows_of(const struct pi_call_tree *t, uint32_t node, int depth)
{
    int deepest = depth;
    for (uint32_t c = t->nodes[node].first_child; c; c = t->nodes[c].next_sibling)
        if ((double)t->nodes[c].weight / (double)t->nodes[0].weight >= MIN_SHARE) {
            int d = rows_of(t, c, depth + 1);
            deepest = d > deepest ? d : deepest;
        }
    return deepest < MAX_ROWS - 1 ? deepest : MAX_ROWS - 1;
}

/* Zoom: every frame of the clicked one's graph placed again relative to it. */
static const char zoom_script[] =
    "<script>\n"
    "document.addEventListener('click', function (e) {\n"
    "  var g = e.target.closest && e.target.closest('g.frame');\n"
    "  if (!g) return;\n"
    "  var svg = g.closest('svg.flame'), x = +g.dataset.x, w = +g.dataset.w;\n"
    "  var width = +svg.dataset.width;\n"
    "  svg.querySelectorAll('g.frame').forEach(function (f) {\n"
    "    var fx = (+f.dataset.x - x) / w, fw = +f.dataset.w / w;\n"
    "    var shown = fx + fw > 0.000001 && fx < 0.999999;\n"
    "    f.style.display = shown ? '' : 'none';\n"
    "    if (!shown) return;\n"
    "    var r = f.querySelector('rect'), s = f.querySelector('svg');\n"
    "    r.setAttribute('x', fx * width); r.setAttribute('width', Math.max(fw * width - 1, 0.5));\n"
    "    if (!s && fw * width >= 40) {\n"
    "      var ns = r.namespaceURI, t = f.querySelector('title').textContent;\n"
    "      s = document.createElementNS(ns, 'svg');\n"
    "      var text = document.createElementNS(ns, 'text');\n"
    "      text.setAttribute('x', 3); text.setAttribute('y', 13);\n"
    "      text.setAttribute('font-size', 11);\n"
    "      text.textContent = t.slice(0, t.lastIndexOf(': '));\n"
    "      s.setAttribute('y', r.getAttribute('y')); s.setAttribute('height', r.getAttribute('height'));\n"
    "      s.appendChild(text); f.appendChild(s);\n"
    "    }\n"
    "    if (s) { s.setAttribute('x', fx * width); s.setAttribute('width', fw * width); }\n"
    "  });\n"
    "});\n"
    "</script>\n";

void pi_html_flame(FILE *out, const char *id, const char *title, const struct pi_call_tree *t,
                  int bytes)
{
    fputs("<h2>", out);
    pi_html_text(out, title);
    fputs("</h2>\n", out);
    int rows = rows_of(t, 0, 0) + 1;
    fprintf(out, "<svg class=\"flame\" id=\"%s\" data-width=\"%d\" viewBox=\"0 0 %d %d\" "
                 "width=\"100%%\" xmlns=\"http://www.w3.org/2000/svg\">\n",
            id, FLAME_W, FLAME_W, rows * ROW_H);
    frames_drawn = 0;
    draw_node(out, t, 0, 0, 0, bytes);
    fputs("</svg>\n<p class=\"hint\">click a frame to zoom to it, the top one to zoom out</p>\n",
          out);
}

void pi_html_flame_script(FILE *out)
{
    fputs(zoom_script, out);
}
