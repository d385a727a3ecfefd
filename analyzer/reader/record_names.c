/*
 * record_names.c - printable names of the record kinds and of the enums in
 * trace_format.h (see trace_reader.h), for reports and the dump command.
 */
#include "trace_reader.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

const char *pi_record_kind_name(unsigned kind)
{
    static const char *const names[PI_REC_KIND_COUNT] = {
        [PI_REC_INVALID] = "invalid",         [PI_REC_STRING] = "string",
        [PI_REC_LOST] = "lost",               [PI_REC_CLOCK_SYNC] = "clock_sync",
        [PI_REC_PROC_SAMPLE] = "proc_sample", [PI_REC_FORK] = "fork",
        [PI_REC_EXEC] = "exec",               [PI_REC_PROCESS_END] = "process_end",
        [PI_REC_MARK] = "mark",               [PI_REC_RANGE] = "range",
        [PI_REC_THREAD_START] = "thread_start", [PI_REC_THREAD_EXIT] = "thread_exit",
        [PI_REC_THREAD_NAME] = "thread_name", [PI_REC_IO] = "io",
        [PI_REC_WAIT] = "wait",               [PI_REC_GPU_ALLOC] = "gpu_alloc",
        [PI_REC_GPU_FREE] = "gpu_free",       [PI_REC_GPU_LAUNCH] = "gpu_launch",
        [PI_REC_GPU_COPY] = "gpu_copy",       [PI_REC_GPU_SYNC] = "gpu_sync",
        [PI_REC_GPU_TIME] = "gpu_time",       [PI_REC_GPU_TIMING] = "gpu_timing",
        [PI_REC_NVTX_RANGE] = "nvtx_range",   [PI_REC_CAPTURE] = "capture",
        [PI_REC_MODULE] = "module",           [PI_REC_STACK] = "stack",
        [PI_REC_CALL_SITE] = "call_site",     [PI_REC_PYTHON] = "python",
        [PI_REC_GPU_POOL] = "gpu_pool",       [PI_REC_PY_SAMPLE] = "py_sample",
        [PI_REC_WAKE] = "wake",               [PI_REC_NCCL_COMM] = "nccl_comm",
        [PI_REC_COLLECTIVE] = "collective",   [PI_REC_SUMMARY] = "summary",
        [PI_REC_DETAIL] = "detail",
        [PI_REC_THREAD_CPU] = "thread_cpu",   [PI_REC_PROC_PSS] = "proc_pss",
        [PI_REC_MEMORY_CGROUP] = "memory_cgroup", [PI_REC_STDERR_TAIL] = "stderr_tail",
        [PI_REC_FATAL_SIGNAL] = "fatal_signal",
        [PI_REC_DEVICE_MEMORY] = "device_memory", [PI_REC_CHILD_STATUS] = "child_status",
        [PI_REC_NATIVE_SAMPLE] = "native_sample",
        [PI_REC_GEMM] = "gemm",               [PI_REC_DEVICE] = "device",
        [PI_REC_SIGNAL_SENDER] = "signal_sender", [PI_REC_WAIT_IN_FLIGHT] = "wait_in_flight",
        [PI_REC_SPAN] = "span",
        [PI_REC_SPAN_HOST_MEMORY] = "span_host_memory",
        [PI_REC_SPAN_NOTE] = "span_note",
    };
    return kind < PI_REC_KIND_COUNT && names[kind] ? names[kind] : "unknown";
}

const char *pi_io_op_name(unsigned op)
{
    const char *name = pi_io_op_text(op);
    return name ? name : "unknown";
}

const char *pi_cuda_api_name(unsigned api)
{
    const char *name = pi_cuda_api_text(api);
    return name ? name : "unknown";
}

const char *pi_gpu_copy_kind_name(unsigned kind)
{
    static const char *const names[PI_GPU_COPY_KIND_COUNT] = {
        [PI_GPU_MEMSET] = "memset",  [PI_GPU_COPY_HTOD] = "HtoD", [PI_GPU_COPY_DTOH] = "DtoH",
        [PI_GPU_COPY_DTOD] = "DtoD", [PI_GPU_COPY_HTOH] = "HtoH", [PI_GPU_COPY_DEFAULT] = "default"};
    return kind < PI_GPU_COPY_KIND_COUNT ? names[kind] : "unknown";
}

const char *pi_gpu_alloc_kind_name(unsigned kind)
{
    static const char *const names[PI_GPU_ALLOC_KIND_COUNT] = {
        [PI_GPU_ALLOC_DEVICE] = "device",   [PI_GPU_ALLOC_POOL] = "pool",
        [PI_GPU_ALLOC_MANAGED] = "managed", [PI_GPU_ALLOC_PINNED] = "pinned host",
        [PI_GPU_ALLOC_REGISTERED] = "registered host", [PI_GPU_ALLOC_VMM] = "vmm"};
    return kind < PI_GPU_ALLOC_KIND_COUNT && names[kind] ? names[kind] : "unknown";
}

const char *pi_fd_class_name(unsigned fd_class)
{
    static const char *const names[PI_FD_CLASS_COUNT] = {
        [PI_FD_UNKNOWN] = "unknown", [PI_FD_FILE] = "file", [PI_FD_PIPE] = "pipe",
        [PI_FD_SOCKET] = "socket",   [PI_FD_DEVICE] = "device", [PI_FD_TTY] = "tty",
        [PI_FD_OTHER] = "other",
    };
    return fd_class < PI_FD_CLASS_COUNT ? names[fd_class] : "unknown";
}

const char *pi_wait_kind_name(unsigned kind)
{
    static const char *const names[PI_WAIT_KIND_COUNT] = {
        [PI_WAIT_MUTEX] = "mutex", [PI_WAIT_COND] = "cond", [PI_WAIT_SEM] = "sem",
        [PI_WAIT_SLEEP] = "sleep"};
    return kind < PI_WAIT_KIND_COUNT && names[kind] ? names[kind] : "unknown";
}

/* The errors an open, read or write reports; the reports name the rest by
 * number. Our own table: strerrorname_np needs glibc 2.32. */
const char *pi_errno_name(int64_t error, char buf[16])
{
#define PI_ERRNO(name) [name] = #name,
    static const char *const names[] = {
        PI_ERRNO(EPERM) PI_ERRNO(ENOENT) PI_ERRNO(ESRCH) PI_ERRNO(EINTR) PI_ERRNO(EIO)
        PI_ERRNO(ENXIO) PI_ERRNO(E2BIG) PI_ERRNO(ENOEXEC) PI_ERRNO(EBADF) PI_ERRNO(ECHILD)
        PI_ERRNO(EAGAIN) PI_ERRNO(ENOMEM) PI_ERRNO(EACCES) PI_ERRNO(EFAULT) PI_ERRNO(EBUSY)
        PI_ERRNO(EEXIST) PI_ERRNO(EXDEV) PI_ERRNO(ENODEV) PI_ERRNO(ENOTDIR) PI_ERRNO(EISDIR)
        PI_ERRNO(EINVAL) PI_ERRNO(ENFILE) PI_ERRNO(EMFILE) PI_ERRNO(ENOTTY) PI_ERRNO(ETXTBSY)
        PI_ERRNO(EFBIG) PI_ERRNO(ENOSPC) PI_ERRNO(ESPIPE) PI_ERRNO(EROFS) PI_ERRNO(EMLINK)
        PI_ERRNO(EPIPE) PI_ERRNO(ERANGE) PI_ERRNO(EDEADLK) PI_ERRNO(ENAMETOOLONG)
        PI_ERRNO(ENOLCK) PI_ERRNO(ENOSYS) PI_ERRNO(ENOTEMPTY) PI_ERRNO(ELOOP) PI_ERRNO(ENODATA)
        PI_ERRNO(ETIME) PI_ERRNO(EOVERFLOW) PI_ERRNO(EILSEQ) PI_ERRNO(ENOTSOCK)
        PI_ERRNO(EMSGSIZE) PI_ERRNO(EOPNOTSUPP) PI_ERRNO(EADDRINUSE) PI_ERRNO(ENETDOWN)
        PI_ERRNO(ENETUNREACH) PI_ERRNO(ECONNABORTED) PI_ERRNO(ECONNRESET) PI_ERRNO(ENOBUFS)
        PI_ERRNO(EISCONN) PI_ERRNO(ENOTCONN) PI_ERRNO(ETIMEDOUT) PI_ERRNO(ECONNREFUSED)
        PI_ERRNO(EHOSTUNREACH) PI_ERRNO(EALREADY) PI_ERRNO(EINPROGRESS) PI_ERRNO(ESTALE)
        PI_ERRNO(EDQUOT) PI_ERRNO(ECANCELED) PI_ERRNO(EOWNERDEAD)
    };
#undef PI_ERRNO
    if (error > 0 && error < (int64_t)(sizeof(names) / sizeof(names[0])) && names[error])
        return names[error];
    snprintf(buf, 16, "E%lld", (long long)error);
    return buf;
}
