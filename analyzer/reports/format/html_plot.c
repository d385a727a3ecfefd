/*
 * html_plot.c - what every SVG plot of the HTML page is drawn with: its
 * frame, and the line of a series over time.
 */
#include "html_plot.h"

#include "call_site_format.h"

const char *const pi_html_colors[PI_HTML_COLOR_COUNT] = {
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

const char *const pi_html_time_colors[PI_TIME_CLASS_COUNT] = {
    "#d62728", "#ff7f0e", "#bcbd22", "#9467bd", "#17becf", "#c7c7c7", "#2ca02c", "#8c564b"};

void pi_html_axis_frame(FILE *out, const char *id, const char *title, const char *x_label,
                        const char *y_label)
{
    /* titles carry names from the trace (ranges, calls): text, never markup */
    fputs("<h2>", out);
    pi_html_text(out, title);
    /* drawn in plot units, shown at the page's full width */
    fprintf(out, "</h2>\n<svg id=\"%s\" viewBox=\"0 0 %d %d\" width=\"100%%\" "
                 "xmlns=\"http://www.w3.org/2000/svg\">\n",
            id, PLOT_W + 2 * MARGIN + 80, PLOT_H + 2 * MARGIN);
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">0</text>\n",
            MARGIN - 4, MARGIN + PLOT_H);
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>\n",
            MARGIN, MARGIN, PLOT_W, PLOT_H);
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s</text>\n",
            MARGIN + PLOT_W / 2, PLOT_H + 2 * MARGIN - 8, x_label);
    fprintf(out, "<text x=\"12\" y=\"%d\" font-size=\"12\" transform=\"rotate(-90 12 %d)\" "
                 "text-anchor=\"middle\">%s</text>\n",
            MARGIN + PLOT_H / 2, MARGIN + PLOT_H / 2, y_label);
}

void pi_html_series_points(FILE *out, const struct pi_series *s, uint64_t base_ns, double span_ns,
                           double peak)
{
    for (uint32_t k = 0; k < s->count; k++)
        fprintf(out, "%.1f,%.1f ", MARGIN + PLOT_W * (double)(s->t[k] - base_ns) / span_ns,
                MARGIN + PLOT_H - PLOT_H * (double)s->v[k] / peak);
}

double pi_html_seconds(uint64_t base_ns, uint64_t ns)
{
    return ns > base_ns ? (double)(ns - base_ns) / 1e9 : 0;
}

void pi_html_axis_ends(FILE *out, double x_end, double y_end)
{
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.2f</text>\n",
            MARGIN + PLOT_W, MARGIN + PLOT_H + 14, x_end);
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%.3g</text>\n",
            MARGIN - 4, MARGIN + 4, y_end);
}
