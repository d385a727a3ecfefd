/* training_process.c - which process runs the training loop (see training_process.h). */
#include "training_process.h"

#include <string.h>

#include "analysis/gpu/gemm.h"
#include "analysis/gpu/gpu_timeline.h"
#include "analysis/host/steps.h"

/* Programs that only start the job: never the subject, whatever their span. */
static int is_launcher(const struct pi_process_info *p)
{
    static const char *const launchers[] = {"sh", "bash", "dash", "zsh", "env", "timeout",
                                            "nohup", "time", "taskset", "numactl", "nice",
                                            "ionice", "stdbuf", "setsid", "sudo", "profinject"};
    const char *command = p->command ? p->command : "";
    size_t length = strcspn(command, " ");
    const char *name = command;
    for (const char *c = command; c < command + length; c++)
        if (*c == '/')
            name = c + 1;
    size_t name_length = (size_t)(command + length - name);
    for (size_t i = 0; i < sizeof(launchers) / sizeof(*launchers); i++)
        if (strlen(launchers[i]) == name_length && strncmp(name, launchers[i], name_length) == 0)
            return 1;
    return 0;
}

static uint64_t gpu_work(const struct pi_process_info *p)
{
    const struct pi_gpu_timeline *t = p->gpu_timeline;
    return p->gpu_busy_ns + (t ? t->launches : 0);
}

/* How much @p looks like the training process: steps, then GPU work, then
 * Python (the image a chain of shims ends in: pyenv's, env, conda run), then CPU time. */
int pi_more_like_training(const struct pi_process_info *p, const struct pi_process_info *best)
{
    if (is_launcher(p) != is_launcher(best))
        return !is_launcher(p);
    if (p->steps.count != best->steps.count)
        return p->steps.count > best->steps.count;
    if ((gpu_work(p) > 0) != (gpu_work(best) > 0))
        return gpu_work(p) > 0;
    if (p->python != best->python)
        return p->python;
    if (gpu_work(p) != gpu_work(best))
        return gpu_work(p) > gpu_work(best);
    return p->cpu_user_ns + p->cpu_sys_ns > best->cpu_user_ns + best->cpu_sys_ns;
}

const struct pi_process_info *pi_training_process(const struct pi_analysis *a)
{
    const struct pi_process_info *best = NULL;
    for (size_t i = 0; i < a->process_count; i++)
        if (!best || pi_more_like_training(&a->processes[i], best))
            best = &a->processes[i];
    return best;
}

static void release_figures(struct pi_process_info *p)
{
    pi_steps_release_figures(&p->steps);
    pi_steps_release_figures(&p->nvtx_steps);
    pi_gemm_release_moments(p);
}

void pi_training_keep_figures(struct pi_analysis *a, struct pi_process_info *rank)
{
    struct pi_process_info *kept = a->figures_rank;
    if (kept && !pi_more_like_training(rank, kept)) { /* ties: the first read, as below */
        release_figures(rank);
        return;
    }
    if (kept)
        release_figures(kept);
    a->figures_rank = rank;
}
