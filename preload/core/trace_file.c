/* trace_file.c - trace file creation and header contents (see trace_file.h). */
#include "trace_file.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "profinject/rank_identity.h"
#include "profinject/record_codec.h"
#include "profinject/trace_format.h"
#include "config.h"
#include "diagnostics.h"
#include "raw_syscalls.h"

static int make_directories(const char *dir)
{
    char path[4096];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char saved = path[i];
        path[i] = '\0';
        if (syscall(SYS_mkdirat, AT_FDCWD, path, 0700) != 0 && errno != EEXIST)
            return -1;
        path[i] = saved;
    }
    return 0;
}

/* Keep the host name usable in a file name. */
static void sanitize(char *text)
{
    for (; *text; text++)
        if (!((*text >= 'a' && *text <= 'z') || (*text >= 'A' && *text <= 'Z') ||
              (*text >= '0' && *text <= '9') || *text == '-' || *text == '_'))
            *text = '_';
}

/* The name of the trace file of process @pid begun at @start_realtime_ns, without its
 * directory: unique without coordination. */
static void trace_file_name(char *name, size_t size, int pid, uint64_t start_realtime_ns)
{
    struct utsname uts;
    char host[65] = "host";
    if (uname(&uts) == 0)
        snprintf(host, sizeof(host), "%s", uts.nodename);
    sanitize(host);
    /* the rank in the name: every rank of every host writes into one shared
     * directory, and a listing sorts a host's ranks together */
    char rank[32] = "";
    const char *const rank_keys[] = {PI_RANK_KEYS, NULL};
    for (const char *const *key = rank_keys; *key && !rank[0]; key++) {
        const char *value = getenv(*key);
        if (pi_identity_whole(value) >= 0) /* the analyzer's rule (rank_identity.h) */
            snprintf(rank, sizeof(rank), ".rank%s", value);
    }
    snprintf(name, size, "%s%s.%d.%llu" PI_TRACE_SUFFIX, host, rank, pid,
             (unsigned long long)start_realtime_ns);
}

void pi_trace_file_parent_name(char *name, size_t size, const char *parent_path, int parent_pid,
                               uint64_t parent_start_realtime_ns)
{
    const char *slash = strrchr(parent_path, '/');
    if (parent_path[0])
        snprintf(name, size, "%s", slash ? slash + 1 : parent_path);
    else /* its file is not made yet: it will have this name (the environment is the same) */
        trace_file_name(name, size, parent_pid, parent_start_realtime_ns);
}

/* A new trace file in the directory @dir_fd: its descriptor, -1 with errno. */
static int create_in(int dir_fd, const char *dir, uint64_t start_realtime_ns, char *path,
                     size_t path_size)
{
    char name[256];
    trace_file_name(name, sizeof(name), (int)getpid(), start_realtime_ns);
    int n = snprintf(path, path_size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= path_size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    /* relative to the directory we checked, never through a link */
    return (int)syscall(SYS_openat, dir_fd, name,
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* Why @dir cannot hold trace files, for a message, from what it is: a name
 * that exists but is no directory (or is a link) says so; anything else is
 * errno's reason. */
static void describe_failure(const char *dir, int error, char *why, size_t size)
{
    /* the caller reads errno after: whether to fall back depends on it, not on these looks */
    int saved = errno;
    struct stat st;
    if (pi_sys_stat(dir, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        snprintf(why, size, "it is a symbolic link; set PROFINJECT_OUTPUT to a directory that "
                 "is not a link");
    else if (pi_sys_stat(dir, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
        snprintf(why, size, "it is %s, not a directory; set PROFINJECT_OUTPUT to a directory",
                 S_ISREG(st.st_mode) ? "a regular file" : "a special file");
    else
        snprintf(why, size, "%s; set PROFINJECT_OUTPUT to a writable directory", strerror(error));
    errno = saved;
}

/* A new trace file in @dir, made with its parents. With @private_only,
 * @dir must be this user's own (owner, no access for others), as the
 * control directory must: a directory in /tmp that someone else made, or
 * made open to all, is not written into. */
static int create_at_path(const char *dir, int private_only, uint64_t start_realtime_ns,
                          char *path, size_t path_size, char *why, size_t why_size)
{
    if (make_directories(dir) != 0) {
        describe_failure(dir, errno, why, why_size);
        return -1;
    }
    /* The directory itself must not be a symbolic link: in a shared place
     * (/tmp) someone else could have planted one pointing anywhere. */
    int dir_fd = pi_sys_open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (dir_fd < 0) {
        describe_failure(dir, errno, why, why_size);
        return -1;
    }
    struct stat st;
    memset(&st, 0, sizeof(st));
    if (private_only && (syscall(SYS_fstat, dir_fd, &st) != 0 || st.st_uid != geteuid() ||
                         (st.st_mode & 077) != 0)) {
        snprintf(why, why_size, "it is not a private directory of this user (owner uid %u, "
                 "mode %04o, where uid %u and mode 0700 are required); remove it, or set "
                 "PROFINJECT_OUTPUT to a writable directory", (unsigned)st.st_uid,
                 (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
        pi_sys_close(dir_fd);
        errno = EPERM;
        return -1;
    }
    int fd = create_in(dir_fd, dir, start_realtime_ns, path, path_size);
    int saved = errno;
    if (fd < 0)
        describe_failure(dir, saved, why, why_size);
    pi_sys_close(dir_fd);
    errno = saved;
    return fd;
}

int pi_trace_file_create(const struct pi_config *config, uint64_t start_realtime_ns, char *path,
                         size_t path_size)
{
    char why[400];
    int fd;
    if (config->output_dir_fd >= 0) { /* handed over by attach: the host's directory */
        fd = create_in(config->output_dir_fd, config->output_dir, start_realtime_ns, path,
                       path_size);
        if (fd < 0)
            pi_diag("cannot create a trace file in %s: %s; the program runs untraced",
                    config->output_dir, strerror(errno));
        return fd;
    }
    fd = create_at_path(config->output_dir, 0, start_realtime_ns, path, path_size, why,
                        sizeof(why));
    if (fd >= 0 || (errno != EROFS && errno != EACCES && errno != EPERM)) {
        if (fd < 0)
            pi_diag("cannot create a trace file in %s: %s. The program runs untraced",
                    config->output_dir, why);
        return fd;
    }
    /* a read-only root, a directory of another user (a container's non-root
     * user in its image's working directory): the traces go where this user
     * can write, and the user is told where */
    int saved = errno;
    const char *tmp = getenv("TMPDIR");
    char fallback[512], fallback_why[400];
    snprintf(fallback, sizeof(fallback), "%s/profinject-traces-%u",
             tmp && tmp[0] == '/' ? tmp : "/tmp", (unsigned)geteuid());
    if (strcmp(fallback, config->output_dir) == 0) {
        pi_diag("cannot create a trace file in %s: %s. The program runs untraced",
                config->output_dir, why);
        errno = saved;
        return -1;
    }
    fd = create_at_path(fallback, 1, start_realtime_ns, path, path_size, fallback_why,
                        sizeof(fallback_why));
    if (fd < 0) {
        pi_diag("cannot write traces in %s (%s), nor in %s: %s. The program runs untraced",
                config->output_dir, strerror(saved), fallback, fallback_why);
        errno = saved;
        return -1;
    }
    pi_diag("cannot write traces in %s (%s); they go to %s instead (set PROFINJECT_OUTPUT to a "
            "writable directory, e.g. a mounted volume)", config->output_dir, strerror(saved),
            fallback);
    return fd;
}

int pi_trace_file_removed(int fd)
{
    struct stat st;
    return syscall(SYS_fstat, fd, &st) == 0 && st.st_nlink == 0;
}

static uint64_t namespace_inode(const char *path)
{
    struct stat st;
    return pi_sys_stat(path, &st, 0) == 0 ? (uint64_t)st.st_ino : 0;
}

static size_t trim_newline(char *text, size_t len)
{
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\0'))
        text[--len] = '\0';
    return len;
}

/* The launchers' variables that are set, and the boot id, as "KEY=value" lines. */
static size_t identity(char *out, size_t capacity)
{
    static const char *const keys[] = {PI_IDENTITY_KEYS};
    size_t used = 0;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *value = getenv(keys[i]);
        if (!value)
            continue;
        int n = snprintf(out + used, capacity - used, "%s=%.200s\n", keys[i], value);
        if (n < 0 || (size_t)n >= capacity - used)
            break;
        used += (size_t)n;
    }
    char boot[64];
    size_t boot_len = pi_sys_read_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot));
    boot_len = trim_newline(boot, boot_len);
    if (boot_len > 0 && capacity - used > boot_len + 9) {
        memcpy(out + used, "boot_id=", 8);
        memcpy(out + used + 8, boot, boot_len);
        used += 8 + boot_len;
        out[used++] = '\n';
    }
    return used;
}

size_t pi_trace_header_build(uint8_t *out, size_t capacity, const struct pi_header_clock *clock)
{
    struct pi_file_header h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, PI_FILE_MAGIC, PI_FILE_MAGIC_LEN);
    h.version = PI_FORMAT_VERSION;
    h.endian = PI_ENDIAN_MARK;
    h.features = PI_CODEC_FEATURES;
    h.record_size = PI_RECORD_SIZE;
    h.clock_source = (uint16_t)clock->clock_source;
    h.pid = getpid();
    h.ppid = getppid();
    h.outer_pid = clock->host_pid ? clock->host_pid : pi_sys_proc_self_pid();
    h.pid_ns = namespace_inode("/proc/self/ns/pid");
    h.mnt_ns = namespace_inode("/proc/self/ns/mnt");
    h.start_realtime_ns = clock->start_realtime_ns;
    h.start_monotonic_ns = clock->start_monotonic_ns;
    h.start_ticks = clock->start_ticks;
    h.ticks_per_second = clock->ticks_per_second;
    h.flush_interval_ns = clock->flush_interval_ns;
    h.sample_interval_ns = clock->sample_interval_ns;

    static char strings[PI_HDR_STRING_COUNT][4096];
    size_t lengths[PI_HDR_STRING_COUNT];
    struct utsname uts;
    lengths[PI_HDR_HOSTNAME] = 0;
    if (uname(&uts) == 0)
        lengths[PI_HDR_HOSTNAME] = (size_t)snprintf(strings[PI_HDR_HOSTNAME], 4096, "%s",
                                                    uts.nodename);
    size_t cmdline = pi_sys_read_file("/proc/self/cmdline", strings[PI_HDR_CMDLINE], 4096);
    for (size_t i = 0; i + 1 < cmdline; i++)
        if (strings[PI_HDR_CMDLINE][i] == '\0')
            strings[PI_HDR_CMDLINE][i] = ' ';
    lengths[PI_HDR_CMDLINE] = trim_newline(strings[PI_HDR_CMDLINE], cmdline);
    ssize_t exe = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", strings[PI_HDR_EXE], 4095);
    lengths[PI_HDR_EXE] = exe > 0 ? (size_t)exe : 0;
    size_t cgroup = pi_sys_read_file("/proc/self/cgroup", strings[PI_HDR_CGROUP], 4096);
    lengths[PI_HDR_CGROUP] = trim_newline(strings[PI_HDR_CGROUP], cgroup);
    lengths[PI_HDR_IDENTITY] = identity(strings[PI_HDR_IDENTITY], 4096);
    lengths[PI_HDR_INHERITED] = 0;
    if (clock->inherited_below > 1 && clock->parent_file && clock->parent_file[0])
        lengths[PI_HDR_INHERITED] = (size_t)snprintf(strings[PI_HDR_INHERITED], 4096, "%u %s",
                                                     clock->inherited_below, clock->parent_file);

    size_t used = sizeof(h);
    for (int i = 0; i < PI_HDR_STRING_COUNT; i++) {
        size_t room = capacity > used ? capacity - used : 0;
        if (lengths[i] > room)
            lengths[i] = room;
        h.string_len[i] = (uint16_t)lengths[i];
        memcpy(out + used, strings[i], lengths[i]);
        used += lengths[i];
    }
    h.header_size = (uint16_t)used;
    memcpy(out, &h, sizeof(h));
    return used;
}
