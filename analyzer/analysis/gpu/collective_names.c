/*
 * collective_names.c - names of NCCL's functions, communicator operations,
 * datatypes and reductions as the reports and dump print them, and the
 * bus factors of nccl-tests (collectives.h).
 */
#include "collectives.h"

#include <string.h>

#include "profinject/trace_format.h"

const char *pi_nccl_func_name(unsigned func)
{
    static const char *const names[PI_NCCL_FUNC_COUNT] = {
        [PI_NCCL_ALL_REDUCE] = "all_reduce",         [PI_NCCL_BROADCAST] = "broadcast",
        [PI_NCCL_REDUCE] = "reduce",                 [PI_NCCL_ALL_GATHER] = "all_gather",
        [PI_NCCL_REDUCE_SCATTER] = "reduce_scatter", [PI_NCCL_ALL_TO_ALL] = "all_to_all",
        [PI_NCCL_SEND] = "send",                     [PI_NCCL_RECV] = "recv",
        [PI_NCCL_GROUP_START] = "group_start",       [PI_NCCL_GROUP_END] = "group_end"};
    return func < PI_NCCL_FUNC_COUNT && names[func] ? names[func] : "unknown";
}

const char *pi_nccl_comm_op_name(unsigned op)
{
    static const char *const names[PI_NCCL_COMM_OP_COUNT] = {
        [PI_NCCL_COMM_INIT_RANK] = "init_rank",   [PI_NCCL_COMM_INIT_CONFIG] = "init_config",
        [PI_NCCL_COMM_INIT_ALL] = "init_all",     [PI_NCCL_COMM_SPLIT] = "split",
        [PI_NCCL_COMM_FINALIZE] = "finalize",     [PI_NCCL_COMM_DESTROY] = "destroy",
        [PI_NCCL_COMM_ABORT] = "abort",           [PI_NCCL_COMM_INIT_SCALABLE] = "init_scalable"};
    return op < PI_NCCL_COMM_OP_COUNT && names[op] ? names[op] : "unknown";
}

/* ncclDataType_t of NCCL 2.30 (nccl.h): the value is the index */
static const struct {
    const char *name;
    unsigned size;
} datatypes[] = {{"int8", 1},    {"uint8", 1},   {"int32", 4},    {"uint32", 4},
                 {"int64", 8},   {"uint64", 8},  {"float16", 2},  {"float32", 4},
                 {"float64", 8}, {"bfloat16", 2}, {"float8e4m3", 1}, {"float8e5m2", 1}};

const char *pi_nccl_datatype_name(unsigned datatype)
{
    return datatype < sizeof(datatypes) / sizeof(datatypes[0]) ? datatypes[datatype].name
                                                               : "unknown";
}

unsigned pi_nccl_datatype_size(unsigned datatype)
{
    return datatype < sizeof(datatypes) / sizeof(datatypes[0]) ? datatypes[datatype].size : 0;
}

const char *pi_nccl_redop_name(unsigned redop)
{
    static const char *const names[] = {"sum", "prod", "max", "min", "avg"};
    if (redop == 0xff)
        return "custom";
    return redop < sizeof(names) / sizeof(names[0]) ? names[redop] : "unknown";
}

/* nccl-tests, doc/PERFORMANCE.md: busBw = algBw x factor, n ranks. */
double pi_collective_bus_factor(unsigned func, int nranks)
{
    if (nranks <= 0)
        return 1.0;
    double n = nranks;
    switch (func) {
    case PI_NCCL_ALL_REDUCE:
        return 2.0 * (n - 1) / n;
    case PI_NCCL_ALL_GATHER:
    case PI_NCCL_REDUCE_SCATTER:
    case PI_NCCL_ALL_TO_ALL:
        return (n - 1) / n;
    default:
        return 1.0; /* broadcast, reduce, send, receive */
    }
}

int pi_is_nccl_kernel(const char *name)
{
    return name && (strncmp(name, "ncclDevKernel", 13) == 0 || strncmp(name, "ncclKernel", 10) == 0);
}
