/*
 * control_directory.h - where a process's control socket goes: the
 * directory PROFINJECT_CONTROL_DIR names (read once at start), trusted
 * only when it is a private directory of this user, and kept free of the
 * sockets of this user's processes that have ended.
 */
#ifndef PI_CONTROL_DIRECTORY_H
#define PI_CONTROL_DIRECTORY_H

/**
 * pi_control_directory_choose - read PROFINJECT_CONTROL_DIR, at start
 *
 * Unset: /tmp/profinject-<uid>. Empty or relative (each process would read it
 * from its own working directory): said once for the traced tree, and the
 * default used, as `profinject ctl` does. Too long for a socket's path: said,
 * and no socket.
 *
 * Return: 0, or -1 when this process makes no control socket.
 */
int pi_control_directory_choose(void);

/**
 * pi_control_directory_open - the chosen directory, made 0700 if missing;
 * an abstract name ('@...') as it is
 *
 * Return: the directory, or NULL (said on stderr, with @otherwise: what the
 * process does without a socket) when it is not a real directory of this
 * user that no one else may enter.
 */
const char *pi_control_directory_open(const char *otherwise);

/**
 * pi_control_directory_sweep - remove from @dir the sockets of this user's
 * processes of PID namespace @pid_ns that have ended (SIGKILL leaves them):
 * a socket file of this uid, named for a pid that no longer exists, on which
 * no one listens
 */
void pi_control_directory_sweep(const char *dir, unsigned long long pid_ns);

#endif
