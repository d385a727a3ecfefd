/*
 * report_html.c - one self-contained page for people, no network: the
 * run and the verdict, the key figures as cards, each step, the ranks, the
 * plots a GPU job is judged by (about the training process), then memory,
 * latency, threads, flame graphs (with the page's one script, to zoom
 * them) and the sections' tables. Every section draws its own part
 * (section_*.c); the page's frame and the order are set here.
 */
#include <stdio.h>

#include "report.h"
#include "reports/format/html_flame.h"
#include "reports/format/output_file.h"
#include "section_phases.h"
#include "section_collectives.h"
#include "section_gemm.h"
#include "section_device_memory.h"
#include "section_gpu.h"
#include "section_gpu_modules.h"
#include "section_key_figures.h"
#include "section_latency.h"
#include "section_overview.h"
#include "section_processes.h"
#include "section_python_time.h"
#include "section_ranks.h"
#include "section_requests.h"
#include "section_sites.h"
#include "section_spans.h"
#include "section_steps.h"
#include "section_summary_mode.h"
#include "section_threads.h"
#include "section_verdict.h"
#include "verdicts/verdict.h"

int pi_report_html(const char *path, struct pi_analysis *a)
{
    /* written as it is drawn, into the file that replaces @path at the end: the page of
     * 10,000 ranks is 6 MB, held whole in memory it was twice that at its peak */
    char temporary[4096];
    FILE *out = pi_create_temporary(path, temporary, sizeof(temporary));
    if (!out)
        return -1;
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>profinject report</title>\n"
          "<style>body{font-family:sans-serif;margin:2em;max-width:1400px}"
          "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px;"
          "text-align:right}td:first-child{text-align:left}"
          "details.site{margin:2px 0}details.native{margin-left:2em;color:#555}"
          "#cards{display:flex;flex-wrap:wrap;gap:8px;margin:1em 0}.card{border:1px solid #ccc;"
          "border-radius:4px;padding:6px 10px;min-width:130px}.card .label{font-size:12px;"
          "color:#555}.card .value{font-size:22px;font-weight:bold}.card .detail{font-size:11px;"
          "color:#777}</style></head><body>\n",
          out);
    pi_report_overview_html(out, a);
    pi_report_verdict_html(out, a);
    pi_report_key_figures_html(out, a);
    pi_report_phases_html(out, a);
    pi_report_steps_html(out, a);
    pi_report_requests_html(out, a);
    pi_report_ranks_html(out, a);
    const struct pi_process_info *training = pi_training_process(a);
    if (training) { /* the sections a GPU job is judged by */
        pi_report_step_time_html(out, a, training);
        pi_report_gpu_busy_html(out, a, training);
        pi_report_device_memory_html(out, a, training);
        pi_report_gpu_kernels_html(out, a);
    }
    pi_report_gpu_modules_html(out, a);
    pi_report_processes_memory_html(out, a);
    pi_report_latency_histograms_html(out, a);
    pi_report_threads_html(out, a);
    pi_report_threads_over_time_html(out, a);
    pi_html_flame_script(out);
    pi_report_python_time_flame(out, a, training);
    pi_report_gpu_modules_flame(out, a);
    if (training)
        pi_report_device_memory_flame(out, training);
    pi_report_sites_html(out, a);
    pi_report_python_time_html(out, a);
    pi_report_spans_html(out, a);
    pi_report_collectives_html(out, a);
    pi_report_gemm_html(out, a);
    pi_report_summary_mode_html(out, a);
    pi_report_latency_html(out, a);
    pi_report_processes_html(out, a);
    fputs("</body></html>\n", out);
    return pi_commit_temporary(out, temporary, path, !ferror(out));
}
