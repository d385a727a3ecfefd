/*
 * report_text.c - the report for terminals: the run and its losses, the
 * verdict and key numbers first (the first screen), then each section in
 * turn; every section writes its own part (section_*.c).
 */
#include "report.h"
#include "section_phases.h"
#include "section_capture_windows.h"
#include "section_collectives.h"
#include "section_gemm.h"
#include "section_device_memory.h"
#include "section_gpu.h"
#include "section_gpu_modules.h"
#include "section_key_figures.h"
#include "section_latency.h"
#include "section_overview.h"
#include "section_processes.h"
#include "section_native_time.h"
#include "section_python_time.h"
#include "section_ranks.h"
#include "section_requests.h"
#include "section_sites.h"
#include "section_spans.h"
#include "section_steps.h"
#include "section_summary_mode.h"
#include "section_threads.h"
#include "section_verdict.h"

void pi_report_text(FILE *out, struct pi_analysis *a)
{
    pi_report_overview_text(out, a);
    pi_report_verdict_text(out, a);
    pi_report_key_figures_text(out, a);
    pi_report_capture_windows_text(out, a);
    pi_report_summary_mode_text(out, a);
    pi_report_steps_text(out, a);
    pi_report_requests_text(out, a);
    pi_report_ranks_text(out, a);
    pi_report_sites_text(out, a);
    pi_report_phases_text(out, a);
    pi_report_spans_text(out, a);
    pi_report_python_time_text(out, a);
    pi_report_native_time_text(out, a);
    pi_report_collectives_text(out, a);
    pi_report_gemm_text(out, a);
    pi_report_gpu_text(out, a);
    pi_report_gpu_modules_text(out, a);
    pi_report_device_memory_text(out, a);
    pi_report_threads_text(out, a);
    pi_report_latency_text(out, a);
    pi_report_processes_text(out, a);
}
