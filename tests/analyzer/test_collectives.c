/*
 * Unit: the collective table on hand-made traces, for the orders the
 * records of a real run may come in: GPU times before their launch, or
 * between the launch and its call; groups, nested groups and their even
 * split; NCCL kernels launched outside any call (NCCL linked statically);
 * other kernels inside a call; the launch ring running over; bytes of an
 * all-gather on a communicator of known and of unknown size.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "analysis/gpu/collectives.h"
#include "analysis/pass/analysis.h"
#include "synthetic_trace.h"

#define US 1000ull
#define MAX_RECORDS 1024
#define TID 4242
#define COMM 0xc0ffee
#define KERNEL_ID 7 /* "ncclDevKernel_AllReduce_Sum_f32_RING_LL" */
#define OTHER_ID 8  /* "_Z5otherv" */

static struct pi_record records[MAX_RECORDS];
static uint32_t used;
static struct pi_analysis analysis;

static void add(uint16_t kind, uint16_t flags, uint64_t ts, uint64_t dur, uint64_t a0, uint64_t a1,
                uint64_t a2)
{
    cr_assert(used < MAX_RECORDS);
    records[used++] = (struct pi_record){kind, flags, TID, ts, dur, {a0, a1, a2}};
}

static void begin(void)
{
    used = 0;
    const char *nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL", *other = "_Z5otherv";
    used += synthetic_definition(records, used, PI_REC_STRING, KERNEL_ID, nccl, strlen(nccl));
    used += synthetic_definition(records, used, PI_REC_STRING, OTHER_ID, other, strlen(other));
}

static void comm(uint64_t handle, int rank, int nranks)
{
    add(PI_REC_NCCL_COMM, PI_NCCL_COMM_FLAGS(PI_NCCL_COMM_INIT_RANK, 0), 1 * US, 1 * US, handle,
        0x1234, PI_NCCL_RANKS(rank, nranks));
}

static void launch(uint64_t at, uint64_t corr, uint64_t name)
{
    add(PI_REC_GPU_LAUNCH, PI_CUDA_FLAGS(PI_CUDA_API_cudaLaunchKernel, PI_GPU_KERNEL, 0), at, 1 * US,
        corr, name, 0);
}

static void gpu_time(uint64_t corr, uint64_t ns)
{
    add(PI_REC_GPU_TIME, 0, 500 * US, ns, corr, 1, 0);
}

static void call(unsigned func, unsigned bits, uint64_t at, uint64_t dur, uint64_t count,
                 uint64_t handle)
{
    add(PI_REC_COLLECTIVE, PI_NCCL_FLAGS(func, 7 /* float32 */, bits), at, dur, count, handle, 0);
}

static const struct pi_collectives *run(void)
{
    const char *path = synthetic_begin();
    uint8_t header[16384];
    synthetic_frame(header, synthetic_header(header, PI_FORMAT_VERSION));
    synthetic_records(records, used);
    synthetic_end();
    struct pi_analysis_options options = {0};
    char *paths[1] = {(char *)path};
    cr_assert_eq(pi_analysis_run(&analysis, &options, paths, 1), 0);
    cr_assert_not_null(analysis.processes[0].collectives);
    return analysis.processes[0].collectives;
}

static const struct pi_collective_row *row(const struct pi_collectives *c, unsigned func)
{
    for (size_t i = 0; i < c->row_count; i++)
        if (c->rows[i].func == func)
            return &c->rows[i];
    cr_assert_fail("no row for %u", func);
    return NULL;
}

Test(collectives, gpu_time_before_the_launch_or_between_launch_and_call)
{
    begin();
    comm(COMM, 0, 4);
    gpu_time(1, 300); /* before its launch */
    launch(10 * US, 1, KERNEL_ID);
    call(PI_NCCL_ALL_REDUCE, 0, 9 * US, 5 * US, 256, COMM);
    launch(20 * US, 2, KERNEL_ID);
    gpu_time(2, 500); /* before its call */
    launch(21 * US, 3, OTHER_ID); /* not NCCL's: not the call's */
    gpu_time(3, 9999);
    call(PI_NCCL_ALL_REDUCE, 0, 19 * US, 5 * US, 256, COMM);
    const struct pi_collectives *c = run();
    const struct pi_collective_row *r = row(c, PI_NCCL_ALL_REDUCE);
    cr_assert_eq(r->calls, 2);
    cr_assert_eq(r->kernels, 2);
    cr_assert_eq(r->gpu_ns, 800);
    cr_assert_eq(r->bytes, 2 * 1024);
    cr_assert_eq(r->bucket, 1024);
    cr_assert_float_eq(r->bus_bytes, 2 * 1024 * 2.0 * 3 / 4, 1e-9);
    cr_assert_eq(c->outside_count, 0);
    cr_assert_eq(c->comms[0].calls, 2);
    pi_analysis_free(&analysis);
}

Test(collectives, a_groups_kernels_are_split_evenly_by_its_outermost_end)
{
    begin();
    comm(COMM, 1, 2);
    call(PI_NCCL_GROUP_START, 0, 1 * US, 1, 0, 0);
    call(PI_NCCL_GROUP_START, PI_NCCL_GROUPED, 2 * US, 1, 0, 0);
    call(PI_NCCL_SEND, PI_NCCL_GROUPED, 3 * US, 1, 10, COMM);
    call(PI_NCCL_GROUP_END, PI_NCCL_GROUPED, 4 * US, 1, 0, 0); /* inner: launches nothing */
    call(PI_NCCL_RECV, PI_NCCL_GROUPED, 5 * US, 1, 10, COMM);
    call(PI_NCCL_ALL_REDUCE, PI_NCCL_GROUPED | PI_FLAG_FAILED, 6 * US, 1, 10, COMM);
    launch(8 * US, 1, KERNEL_ID);
    launch(9 * US, 2, KERNEL_ID);
    call(PI_NCCL_GROUP_END, 0, 7 * US, 5 * US, 0, 0);
    gpu_time(1, 1001);
    gpu_time(2, 2000);
    const struct pi_collectives *c = run();
    const struct pi_collective_row *send = row(c, PI_NCCL_SEND), *recv = row(c, PI_NCCL_RECV);
    /* 3001 over the two calls that worked; the odd nanosecond to the first */
    cr_assert_eq(send->gpu_ns + recv->gpu_ns, 3001);
    cr_assert_eq(send->gpu_ns, 1501);
    cr_assert_eq(send->kernels, 2); /* the group's two, for each of its calls */
    cr_assert_eq(recv->kernels, 2);
    cr_assert_eq(row(c, PI_NCCL_ALL_REDUCE)->failed, 1);
    cr_assert_eq(row(c, PI_NCCL_ALL_REDUCE)->gpu_ns, 0);
    cr_assert_eq(c->gpu_ns, 3001);
    pi_analysis_free(&analysis);
}

Test(collectives, nccl_kernels_outside_any_call_are_kept_by_name)
{
    begin();
    launch(1 * US, 1, KERNEL_ID); /* before any NCCL call: static NCCL */
    gpu_time(1, 700);
    for (uint64_t i = 0; i < 70; i++) /* more than the ring holds */
        launch((10 + i) * US, 10 + i, KERNEL_ID);
    for (uint64_t i = 0; i < 70; i++)
        gpu_time(10 + i, 10);
    call(PI_NCCL_ALL_GATHER, 0, 200 * US, 1 * US, 100, 0xbad); /* on no known communicator */
    const struct pi_collectives *c = run();
    cr_assert_eq(c->outside_count, 1);
    cr_assert_str_eq(c->outside[0].name, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    cr_assert_eq(c->outside[0].kernels, 71);
    cr_assert_eq(c->outside[0].gpu_ns, 700 + 70 * 10);
    cr_assert_eq(c->outside_gpu_ns, 1400);
    const struct pi_collective_row *r = row(c, PI_NCCL_ALL_GATHER);
    cr_assert_eq(r->bytes, 400); /* ranks unknown: count x size */
    cr_assert_float_eq(r->bus_bytes, 400.0, 1e-9);
    pi_analysis_free(&analysis);
}

Test(collectives, all_gather_bytes_are_the_whole_buffer_and_ends_are_kept)
{
    begin();
    comm(COMM, 2, 8);
    call(PI_NCCL_ALL_GATHER, 0, 10 * US, 1 * US, 100, COMM);
    add(PI_REC_NCCL_COMM, PI_NCCL_COMM_FLAGS(PI_NCCL_COMM_FINALIZE, 0), 20 * US, 1, COMM, 0x1234, 0);
    add(PI_REC_NCCL_COMM, PI_NCCL_COMM_FLAGS(PI_NCCL_COMM_DESTROY, 0), 21 * US, 1, COMM, 0x1234, 0);
    const struct pi_collectives *c = run();
    const struct pi_collective_row *r = row(c, PI_NCCL_ALL_GATHER);
    cr_assert_eq(r->bytes, 100 * 4 * 8);
    cr_assert_float_eq(r->bus_bytes, 3200.0 * 7 / 8, 1e-9);
    cr_assert_eq(c->comm_count, 1);
    cr_assert_eq(c->comms[0].nranks, 8);
    cr_assert_eq(c->comms[0].rank, 2);
    cr_assert_eq(c->comms[0].end_op, PI_NCCL_COMM_DESTROY);
    pi_analysis_free(&analysis);
}

Test(collectives, a_failed_init_alone_is_a_table_of_one_communicator)
{
    begin();
    add(PI_REC_NCCL_COMM, PI_NCCL_COMM_FLAGS(PI_NCCL_COMM_INIT_RANK, 1), 1 * US, 90 * US, 0,
        0x5569f14d74173baaull, PI_NCCL_RANKS(0, 1));
    const struct pi_collectives *c = run();
    cr_assert_eq(c->row_count, 0);
    cr_assert_eq(c->comm_count, 1);
    cr_assert(c->comms[0].failed);
    cr_assert_eq(c->comms[0].hash, 0x5569f14d74173baaull);
    cr_assert_eq(c->comms[0].init_ns, 90 * US);
    pi_analysis_free(&analysis);
}
